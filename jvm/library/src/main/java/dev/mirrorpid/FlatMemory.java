package dev.mirrorpid;

import com.dylibso.chicory.runtime.ConstantEvaluators;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.runtime.WasmRuntimeException;
import com.dylibso.chicory.wasm.ChicoryException;
import com.dylibso.chicory.wasm.UninstantiableException;
import com.dylibso.chicory.wasm.types.ActiveDataSegment;
import com.dylibso.chicory.wasm.types.DataSegment;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import com.dylibso.chicory.wasm.types.PassiveDataSegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A module's linear memory in one {@code byte[]}: every load and store is one comparison with
 * the memory's size and one access to the array. Chicory's own {@code ByteArrayMemory} keeps
 * 64 KiB pages and so reaches a byte through the page table first; a rewrite's time on Chicory
 * is mostly these accesses.
 *
 * <p>The array grows by half again (or to what a grow needs, if more), up to the memory's
 * maximum, so a module that grows its memory a page at a time copies it O(log n) times, not n;
 * the cost is up to half as much heap again as the module uses, and a copy while it grows (a
 * grow the JVM's heap cannot hold fails as WebAssembly's {@code memory.grow} does, and the
 * module answers {@link Code#OutOfMemory}). Bytes past {@link #pages()} are never reachable:
 * the comparison traps first, as WebAssembly requires. Not shared: the module declares no
 * shared memory and its {@link PidMapper} serialises calls, so there are no atomics to honour
 * beyond the interface's own.
 */
final class FlatMemory implements Memory, LinearMemory {
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final MemoryLimits limits;
    private final int maxPages;
    private byte[] bytes;
    /** Bytes in use: {@code pages() * PAGE_SIZE}, at most {@code bytes.length}. */
    private int size;

    private DataSegment[] segments = new DataSegment[0];

    FlatMemory(MemoryLimits limits) {
        if (limits.shared()) {
            throw new ChicoryException("a shared memory needs Chicory's own memory, not FlatMemory");
        }
        this.limits = limits;
        // A Java array holds fewer than 2^31 bytes: one page short of the 4 GiB WebAssembly allows.
        this.maxPages = Math.min(Math.min(limits.maximumPages(), RUNTIME_MAX_PAGES), Integer.MAX_VALUE / PAGE_SIZE);
        if (limits.initialPages() > maxPages) {
            throw new UninstantiableException("memory of " + limits.initialPages() + " pages is more than a Java array holds");
        }
        this.size = limits.initialPages() * PAGE_SIZE;
        this.bytes = new byte[size];
    }

    private WasmRuntimeException outOfBounds(long addr, long n) {
        return new WasmRuntimeException("out of bounds memory access: " + n + " bytes at " + (addr & 0xFFFF_FFFFL)
                + ", memory is " + size + " bytes");
    }

    /**
     * Checks that {@code n} bytes from {@code addr} (an unsigned 32-bit address) lie in memory;
     * returns {@code addr} as an index. (For the loads and stores {@code n} is a constant, so
     * the JIT keeps one comparison.)
     */
    private int range(int addr, long n) {
        if (n < 0 || (addr & 0xFFFF_FFFFL) + n > size) {
            throw outOfBounds(addr, n);
        }
        return addr;
    }

    @Override
    public long sizeInBytes() {
        return size;
    }

    @Override
    public int pages() {
        return size / PAGE_SIZE;
    }

    @Override
    public int grow(int delta) {
        int before = pages();
        long after = (long) before + delta;
        if (delta < 0 || after > maxPages) {
            return -1;
        }
        int newSize = (int) (after * PAGE_SIZE);
        if (newSize > bytes.length) {
            long grown = Math.max((long) bytes.length + bytes.length / 2, newSize);
            int capacity = (int) Math.min(grown, (long) maxPages * PAGE_SIZE);
            try {
                bytes = Arrays.copyOf(bytes, capacity);
            } catch (OutOfMemoryError e) {
                // The JVM's heap is full: the module sees a failed grow, as it would in any host.
                return -1;
            }
        }
        size = newSize;
        return before;
    }

    @Override
    public int initialPages() {
        return limits.initialPages();
    }

    @Override
    public int maximumPages() {
        return maxPages;
    }

    @Override
    public boolean shared() {
        return false;
    }

    // The four below are deprecated for removal in Chicory, yet abstract: implemented, refused.
    @Override
    @Deprecated
    @SuppressWarnings("removal")
    public Object lock(int address) {
        throw new UnsupportedOperationException("FlatMemory is not shared");
    }

    @Override
    @Deprecated
    @SuppressWarnings("removal")
    public int waitOn(int address, int expected, long timeout) {
        throw new ChicoryException("wait on a memory that is not shared");
    }

    @Override
    @Deprecated
    @SuppressWarnings("removal")
    public int waitOn(int address, long expected, long timeout) {
        throw new ChicoryException("wait on a memory that is not shared");
    }

    @Override
    @Deprecated
    @SuppressWarnings("removal")
    public int notify(int address, int count) {
        return 0;
    }

    @Override
    public void initialize(Instance instance, DataSegment[] dataSegments) {
        if (dataSegments == null) {
            return;
        }
        segments = dataSegments.clone();
        for (DataSegment s : dataSegments) {
            if (s instanceof ActiveDataSegment) {
                ActiveDataSegment active = (ActiveDataSegment) s;
                int offset = (int) ConstantEvaluators.computeConstantValue(instance, active.offsetInstructions())[0];
                byte[] data = active.data();
                if ((offset & 0xFFFF_FFFFL) + data.length > size) {
                    throw new UninstantiableException("data segment of " + data.length + " bytes at " + offset
                            + " is out of bounds of a memory of " + size + " bytes");
                }
                System.arraycopy(data, 0, bytes, offset, data.length);
            } else if (!(s instanceof PassiveDataSegment)) {
                throw new ChicoryException("a data segment neither active nor passive: " + s);
            }
        }
    }

    @Override
    public void initPassiveSegment(int segment, int dest, int offset, int n) {
        write(dest, segments[segment].data(), offset, n);
    }

    @Override
    public void drop(int segment) {
        segments[segment] = PassiveDataSegment.EMPTY;
    }

    @Override
    public void write(int addr, byte[] data, int offset, int n) {
        if (offset < 0 || n < 0 || (long) offset + n > data.length) {
            throw new WasmRuntimeException("out of bounds memory access: " + n + " bytes from " + offset
                    + " of " + data.length);
        }
        System.arraycopy(data, offset, bytes, range(addr, n), n);
    }

    /**
     * Copies {@code n} bytes of {@code src} from its index {@code from} (its position and limit
     * unchanged) to {@code addr}: how a rewrite's header windows come in from the caller's buffer
     * with no copy between.
     */
    @Override
    public void write(int addr, ByteBuffer src, int from, int n) {
        src.get(from, bytes, range(addr, n), n);
    }

    @Override
    public void write(int addr, byte[] data) {
        write(addr, data, 0, data.length);
    }

    @Override
    public byte read(int addr) {
        return bytes[range(addr, 1)];
    }

    @Override
    public byte[] readBytes(int addr, int n) {
        int from = range(addr, n);
        return Arrays.copyOfRange(bytes, from, from + n);
    }

    @Override
    public void writeI32(int addr, int v) {
        INT.set(bytes, range(addr, 4), v);
    }

    @Override
    public int readInt(int addr) {
        return (int) INT.get(bytes, range(addr, 4));
    }

    @Override
    public void writeLong(int addr, long v) {
        LONG.set(bytes, range(addr, 8), v);
    }

    @Override
    public long readLong(int addr) {
        return (long) LONG.get(bytes, range(addr, 8));
    }

    @Override
    public void writeShort(int addr, short v) {
        SHORT.set(bytes, range(addr, 2), v);
    }

    @Override
    public short readShort(int addr) {
        return (short) SHORT.get(bytes, range(addr, 2));
    }

    @Override
    public long readU16(int addr) {
        return readShort(addr) & 0xFFFFL;
    }

    @Override
    public void writeByte(int addr, byte v) {
        bytes[range(addr, 1)] = v;
    }

    @Override
    public void writeF32(int addr, float v) {
        writeI32(addr, Float.floatToRawIntBits(v));
    }

    @Override
    public long readF32(int addr) {
        return readInt(addr);
    }

    @Override
    public float readFloat(int addr) {
        return Float.intBitsToFloat(readInt(addr));
    }

    @Override
    public void writeF64(int addr, double v) {
        writeLong(addr, Double.doubleToRawLongBits(v));
    }

    @Override
    public double readDouble(int addr) {
        return Double.longBitsToDouble(readLong(addr));
    }

    @Override
    public long readF64(int addr) {
        return readLong(addr);
    }

    @Override
    public void zero() {
        Arrays.fill(bytes, 0, size, (byte) 0);
    }

    @Override
    public void fill(byte value, int from, int to) {
        int start = range(from, (long) to - from);
        Arrays.fill(bytes, start, to, value);
    }

    @Override
    public void copy(int dest, int src, int n) {
        System.arraycopy(bytes, range(src, n), bytes, range(dest, n), n);
    }
}
