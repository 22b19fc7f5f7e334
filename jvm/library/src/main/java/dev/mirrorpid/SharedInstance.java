package dev.mirrorpid;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One module instance and the mappers {@link MirrorPid} placed in it ({@code docs/ABI.md}, "Many
 * mappers"): a partition costs what its mapper holds, not an instance. Every call on one of its
 * mappers holds this object's lock, so the blocks a call passes its input in (the source
 * cluster ID, the header slots) are the instance's, one of each for all its mappers, sized by
 * the largest call since it was made.
 *
 * <p>A trap (a fault of the module, which it is built never to have) ends the instance: every
 * one of its mappers then throws {@link ModuleTrappedException} naming the export and the cause,
 * and only those; the others' instances never see it. Not thread-safe on its own: callers hold
 * its lock.
 */
final class SharedInstance {
    private final MirrorPid pool;
    /** Its position in the pool. */
    final int index;
    private ModuleInstance instance;
    /** Where {@code mp_output_info}'s 12 bytes are (fixed for the instance's life). */
    final int info;
    /** Its mappers not closed, guarded by the pool's lock. */
    int mappers;
    /** The export that trapped and the trap, once one did. */
    private String trappedIn;
    private RuntimeException trap;

    /** The source cluster ID held at {@link #sourcePtr}, as bytes and as a string. */
    private byte[] source = new byte[0];
    private String sourceString = "";
    private int sourcePtr, sourceCap;
    /** The slots block, and its capacity in slots. */
    int slotsPtr;
    private int slotsCap;
    /** The offset in the fetch of each slot's entry. */
    int[] offsets = new int[16];

    SharedInstance(MirrorPid pool, int index, ModuleInstance instance) {
        this.pool = pool;
        this.index = index;
        this.instance = instance;
        this.info = instance.call(Export.OUTPUT_INFO);
    }

    /**
     * The instance, for a call of one of its mappers.
     *
     * @throws ModuleTrappedException a call on it trapped: it is gone, with its mappers
     */
    ModuleInstance live() {
        if (trap != null) {
            throw new ModuleTrappedException(trappedIn, trap);
        }
        return instance;
    }

    /** Whether a call on it trapped (it is closed, and out of the pool). */
    boolean isTrapped() {
        return trap != null;
    }

    /** The trap a call of {@code export} met: the instance is closed and leaves the pool. */
    ModuleTrappedException trapped(String export, RuntimeException e) {
        if (trap == null) {
            trappedIn = export;
            trap = e;
            instance.close();
            pool.failed(this);
        }
        return new ModuleTrappedException(trappedIn, trap);
    }

    /** Its linear memory's size in bytes; 0 once gone. */
    long memoryBytes() {
        return trap != null || instance == null ? 0 : instance.memory().sizeInBytes();
    }

    /** One of its mappers closed. */
    void released() {
        pool.released(this);
    }

    /** Closes the instance once its last mapper closed and the pool let it go. */
    void retire() {
        if (trap == null && instance != null) {
            instance.close();
            instance = null;
        }
    }

    /** Replaces the instance's calls with {@code faulty}'s (a test's injected fault). */
    void inject(java.util.function.UnaryOperator<ModuleInstance> faulty) {
        instance = faulty.apply(live());
    }

    /** Runs {@code export} returning a status: the value, or the error it names. */
    int status(Export export, java.util.function.IntSupplier call) {
        live();
        int status;
        try {
            status = call.getAsInt();
        } catch (RuntimeException e) {
            throw trapped(export.wasmName, e);
        }
        if (status < 0) {
            throw failure(status);
        }
        return status;
    }

    /** The failure a status names, with the module's message (read before any other call). */
    MirrorPidException failure(int status) {
        int p = instance.call(Export.LAST_ERROR_PTR);
        int n = instance.call(Export.LAST_ERROR_LEN);
        String message = new String(instance.memory().readBytes(p, n), StandardCharsets.UTF_8);
        Code code = Code.ofStatus(status);
        if (code == null) {
            throw new IllegalStateException("the module returned the unknown status " + status + ": " + message);
        }
        return new MirrorPidException(code, message);
    }

    /** A block holding {@code bytes} (0 for none), for the caller to {@link #free}. */
    int put(byte[] bytes) {
        if (bytes.length == 0) {
            return 0;
        }
        int p = status(Export.ALLOC, () -> instance.call(Export.ALLOC, bytes.length));
        instance.memory().write(p, bytes);
        return p;
    }

    /** Frees blocks from {@link #put} (0s skipped). */
    void free(int... blocks) {
        for (int p : blocks) {
            if (p != 0 && trap == null) {
                status(Export.FREE, () -> instance.call(Export.FREE, p));
            }
        }
    }

    /**
     * The source cluster ID in its block, kept between calls (copied only when it changes); where
     * it is, 0 for an empty one.
     */
    int putSource(String sourceClusterId) {
        Objects.requireNonNull(sourceClusterId, "sourceClusterId");
        if (sourceClusterId.equals(sourceString)) {
            return source.length == 0 ? 0 : sourcePtr;
        }
        byte[] id = sourceClusterId.getBytes(StandardCharsets.UTF_8);
        if (!Arrays.equals(id, source)) {
            if (id.length > sourceCap) {
                int old = sourcePtr;
                sourcePtr = 0;
                sourceCap = 0;
                source = new byte[0];
                sourceString = "";
                free(old);
                int cap = Math.max(64, id.length);
                sourcePtr = status(Export.ALLOC, () -> instance.call(Export.ALLOC, cap));
                sourceCap = cap;
            }
            if (id.length > 0) {
                instance.memory().write(sourcePtr, id);
            }
            source = id;
        }
        sourceString = sourceClusterId;
        return id.length == 0 ? 0 : sourcePtr;
    }

    /** The length in bytes of the source ID {@link #putSource} holds. */
    int sourceLength() {
        return source.length;
    }

    /** Room for {@code count} header slots at {@link #slotsPtr}. */
    void ensureSlots(int count) {
        if (count <= slotsCap) {
            return;
        }
        int old = slotsPtr;
        slotsPtr = 0;
        slotsCap = 0;
        free(old);
        int cap = Math.max(16, Integer.highestOneBit(count - 1) << 1);
        slotsPtr = status(Export.ALLOC, () -> instance.call(Export.ALLOC, (long) cap * Abi.SLOT_BYTES));
        slotsCap = cap;
    }

    /**
     * Finds the entries of the fetch at {@code base}, {@code length} bytes, as {@code
     * docs/ABI.md}'s gathering loop does: their offsets into {@link #offsets}; returns how many.
     * Only each entry's batchLength is read here, the windows are copied into the slots after.
     */
    int gather(ByteBuffer fetch, int base, int length) {
        boolean big = fetch.order() == ByteOrder.BIG_ENDIAN;
        int count = 0;
        long pos = 0;
        while (pos < length) {
            if (count == offsets.length) {
                offsets = Arrays.copyOf(offsets, count * 2);
            }
            int at = (int) pos;
            offsets[count++] = at;
            if (length - at < Abi.LOG_OVERHEAD) {
                break;
            }
            int raw = fetch.getInt(base + at + Abi.LENGTH_OFFSET);
            int batchLength = big ? raw : Integer.reverseBytes(raw);
            if (batchLength < 0) {
                break;
            }
            pos += Abi.LOG_OVERHEAD + (long) batchLength;
        }
        return count;
    }
}
