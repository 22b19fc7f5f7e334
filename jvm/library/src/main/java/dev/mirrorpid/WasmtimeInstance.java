package dev.mirrorpid;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A {@link ModuleInstance} on wasmtime ({@link Wasmtime}). Its linear memory is read and written
 * in place through a direct {@code ByteBuffer} over it: the memory never moves, and when a call
 * grows it the buffer is made again, of the new size.
 */
final class WasmtimeInstance extends ModuleInstance {
    private final long instance;
    private final Cleaner.Cleanable freed;
    private final NativeMemory memory = new NativeMemory();

    WasmtimeInstance(long instance) {
        this.instance = instance;
        // Freed by close(), or once unreachable if a mapper was never closed.
        this.freed = Wasmtime.CLEANER.register(this, () -> Wasmtime.free(instance));
        memory.refresh(Wasmtime.memory(instance));
    }

    @Override
    int call(Export export, long a0, long a1, long a2, long a3, long a4) {
        if (export == Export.PENDING) {
            return Wasmtime.pending(instance, (int) a0);
        }
        return grown(Wasmtime.call(instance, export.ordinal(), a0, a1, a2, a3, a4));
    }

    @Override
    int rewriteHeaders(int handle, int source, int slotsPtr, int count, int fetchLen, long nowMs, int flags) {
        return grown(Wasmtime.rewriteHeaders(instance, handle, source, slotsPtr, count, fetchLen, nowMs, flags));
    }

    /**
     * The status in the low half of {@code r}; the buffer made again if the memory's size in
     * pages, in the high half, says the call grew it.
     */
    private int grown(long r) {
        if ((r >>> 32) << 16 != memory.sizeInBytes()) {
            memory.refresh(Wasmtime.memory(instance));
        }
        return (int) r;
    }

    @Override
    LinearMemory memory() {
        return memory;
    }

    @Override
    void close() {
        freed.clean();
    }

    /** The memory through a direct buffer, little-endian. */
    static final class NativeMemory implements LinearMemory {
        private ByteBuffer buffer;

        void refresh(ByteBuffer all) {
            buffer = all.order(ByteOrder.LITTLE_ENDIAN);
        }

        @Override
        public long sizeInBytes() {
            return buffer.capacity();
        }

        @Override
        public void write(int addr, byte[] data) {
            buffer.put(addr, data);
        }

        @Override
        public void write(int addr, ByteBuffer src, int from, int n) {
            buffer.put(addr, src, from, n);
        }

        @Override
        public void writeI32(int addr, int v) {
            buffer.putInt(addr, v);
        }

        @Override
        public int readInt(int addr) {
            return buffer.getInt(addr);
        }

        @Override
        public long readLong(int addr) {
            return buffer.getLong(addr);
        }

        @Override
        public byte[] readBytes(int addr, int n) {
            byte[] out = new byte[n];
            buffer.get(addr, out);
            return out;
        }
    }
}
