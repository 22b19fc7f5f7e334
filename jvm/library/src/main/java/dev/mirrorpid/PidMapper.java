package dev.mirrorpid;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * The producer-ID mapper of one destination partition: what its leader uses to give every
 * mirrored producer a PID of its own ({@code docs/DESIGN.md}).
 *
 * <p>A fetch from a source cluster is rewritten <b>in place</b> in the caller's buffer: the
 * module is given each batch's first 112 bytes (its header, and a control batch's marker) and
 * gives back the 12 bytes that change (the producer ID and the CRC, patched without reading the
 * records), so the cost does not depend on the batches' size and the records are never copied.
 *
 * <p>The persistence protocol, for every fetch: {@link #rewrite}, then produce every returned
 * record to {@code __mirror_state} and wait for it ({@code acks=all}), then {@link #confirm()},
 * then append the batches. A failed call ({@link MirrorPidException}) changed nothing, the
 * caller's buffer included.
 *
 * <p>Calls on one mapper are serialised (its methods are {@code synchronized}; a WebAssembly
 * instance is single-threaded). {@link #close()} frees the module's memory; a closed mapper
 * refuses every call with {@link IllegalStateException}.
 */
public final class PidMapper implements AutoCloseable {
    private ModuleInstance instance;
    private final int handle;
    /**
     * Where {@code mp_output_info}'s 12 bytes are (fixed for the instance's life): every output
     * is found there after its call, without the up to three calls that would ask for it.
     */
    private final int info;

    /** The source cluster ID the module holds at {@link #sourcePtr}, and as a string. */
    private byte[] source = new byte[0];
    private String sourceString = "";
    private int sourcePtr, sourceCap;
    /** The source tokens the module gave this mapper, by source cluster ID. */
    private final Map<String, Integer> tokens = new HashMap<>();
    /** The slots block in the module, and its capacity in slots. */
    private int slotsPtr, slotsCap;
    /** The offset in the fetch of each slot's entry. */
    private int[] offsets = new int[0];

    private PidMapper(ModuleInstance instance, int handle) {
        this.instance = instance;
        this.handle = handle;
        this.info = instance.call(Export.OUTPUT_INFO);
    }

    static PidMapper create(MirrorPid module, String configJson) {
        ModuleInstance instance = module.instantiate();
        byte[] config = configJson.getBytes(StandardCharsets.UTF_8);
        int h = Call.made(instance, Export.MAPPER_NEW, config);
        return new PidMapper(instance, h);
    }

    static PidMapper restore(MirrorPid module, byte[] snapshot) {
        ModuleInstance instance = module.instantiate();
        int h = Call.made(instance, Export.RESTORE, snapshot);
        return new PidMapper(instance, h);
    }

    /** The instance's linear memory as the last call left it. */
    private LinearMemory memory() {
        return instance.memory();
    }

    /**
     * Maps one producer ID from a source cluster, as a rewrite maps a batch's. A new binding is
     * pending until {@link #confirm()}: persist {@link MapResult#records()} first.
     */
    public synchronized MapResult map(String sourceClusterId, long pid, long nowMs) {
        int srcPtr = putSource(sourceClusterId);
        int salt = status(Export.MAP, () -> instance.call(Export.MAP, handle, srcPtr, source.length, pid, nowMs));
        byte[] out = output();
        List<StateRecord> records = records(out, out.length - 8);
        long mapped = Abi.getLong(out, out.length - 8);
        boolean collision = !records.isEmpty() && flag();
        return new MapResult(mapped, salt == Abi.MAP_NOT_A_PRODUCER ? OptionalInt.empty() : OptionalInt.of(salt),
                records, collision);
    }

    /**
     * Rewrites, in place, every mirrored batch of the fetch in {@code fetch}'s remaining bytes
     * (its position and limit are not changed) that arrived from {@code sourceClusterId}: a
     * batch's producer ID and CRC, 12 bytes of it. A truncated last batch is left untouched and
     * not counted in {@link RewriteResult#consumed()}: pass it again with the next fetch.
     *
     * @throws MirrorPidException the fetch was refused (a malformed batch, an undeclared origin,
     *     a capacity limit): nothing changed
     * @throws IllegalArgumentException the buffer is read-only
     */
    public RewriteResult rewrite(String sourceClusterId, ByteBuffer fetch, long nowMs) {
        return rewrite(sourceClusterId, fetch, nowMs, false);
    }

    /**
     * {@link #rewrite(String, ByteBuffer, long)}; with {@code complete}, the buffer must end on a
     * batch boundary (a produce request, a file): a truncated tail is {@link Code#BatchOverrun}.
     */
    public synchronized RewriteResult rewrite(String sourceClusterId, ByteBuffer fetch, long nowMs, boolean complete) {
        Objects.requireNonNull(fetch, "fetch");
        if (fetch.isReadOnly()) {
            throw new IllegalArgumentException("the fetch buffer is read-only: a rewrite writes 12 bytes of each batch into it");
        }
        ensureOpen();
        int base = fetch.position();
        int length = fetch.remaining();
        int count = gather(fetch, base, length);
        int token = sourceToken(sourceClusterId);
        ensureSlots(count);
        // Each entry's window straight from the caller's buffer into its slot in linear memory,
        // with its length (big-endian, as the module reads it).
        LinearMemory memory = memory();
        for (int i = 0; i < count; i++) {
            int slot = slotsPtr + i * Abi.SLOT_BYTES;
            int n = Math.min(Abi.WINDOW, length - offsets[i]);
            memory.write(slot, fetch, base + offsets[i], n);
            memory.writeI32(slot + Abi.SLOT_LEN_OFFSET, Integer.reverseBytes(n));
        }
        int flags = complete ? Abi.FLAG_COMPLETE : 0;
        int consumed;
        try {
            consumed = instance.rewriteHeaders(handle, token, slotsPtr, count, length, nowMs, flags);
        } catch (RuntimeException e) {
            // A trap or a runtime failure: the instance cannot be trusted any more.
            close();
            throw new ModuleTrappedException(Export.REWRITE_HEADERS_FROM.wasmName, e);
        }
        if (consumed < 0) {
            throw error(consumed);
        }
        memory = memory();
        // Success: nothing can fail from here on. The changed slots' 12 bytes go back, read
        // from linear memory where they are (WebAssembly's loads are little-endian, the bytes
        // are in the batch's order: written in that order whatever the buffer's byte order).
        boolean big = fetch.order() == ByteOrder.BIG_ENDIAN;
        for (int i = 0; i < count; i++) {
            int slot = slotsPtr + i * Abi.SLOT_BYTES;
            if (memory.readInt(slot + Abi.SLOT_CHANGED_OFFSET) == Abi.SLOT_CHANGED_LE) {
                int at = base + offsets[i];
                int crc = memory.readInt(slot + Abi.CRC_OFFSET);
                long pid = memory.readLong(slot + Abi.PRODUCER_ID_OFFSET);
                fetch.putInt(at + Abi.CRC_OFFSET, big ? Integer.reverseBytes(crc) : crc);
                fetch.putLong(at + Abi.PRODUCER_ID_OFFSET, big ? Long.reverseBytes(pid) : pid);
            }
        }
        byte[] out = outputIfAny();
        List<StateRecord> records = out == null ? List.of() : records(out, out.length);
        return new RewriteResult(consumed, records, !records.isEmpty() && flag());
    }

    /** {@link #rewrite(String, ByteBuffer, long)} on Kafka's {@code MemoryRecords}, in place. */
    public RewriteResult rewrite(String sourceClusterId, MemoryRecords records, long nowMs) {
        Objects.requireNonNull(records, "records");
        return rewrite(sourceClusterId, records.buffer(), nowMs, false);
    }

    /**
     * Finds the entries of the fetch at {@code base}, {@code length} bytes, as {@code
     * docs/ABI.md}'s gathering loop does: their offsets into {@link #offsets}; returns how many.
     * Only each entry's batchLength is read here, the windows are copied into the slots after.
     */
    private int gather(ByteBuffer fetch, int base, int length) {
        boolean big = fetch.order() == ByteOrder.BIG_ENDIAN;
        int count = 0;
        long pos = 0;
        while (pos < length) {
            if (count == offsets.length) {
                offsets = Arrays.copyOf(offsets, Math.max(16, count * 2));
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

    /**
     * Applies one {@code __mirror_state} record ({@code value} null: a tombstone), as a new
     * leader does while replaying the topic in log order.
     */
    public synchronized LoadResult loadRecord(byte[] key, byte[] value) {
        Objects.requireNonNull(key, "key");
        ensureOpen();
        int[] blocks = new int[2];
        try {
            blocks[0] = put(key);
            blocks[1] = value == null ? 0 : put(value);
            int kp = blocks[0], vp = blocks[1];
            int status = status(Export.LOAD_RECORD, () -> instance.call(Export.LOAD_RECORD,
                    handle, kp, key.length, vp, value == null ? -1 : value.length));
            LoadResult.Outcome outcome;
            switch (status & ~Abi.LOAD_UNDECLARED) {
                case Abi.LOAD_SKIPPED: outcome = LoadResult.Outcome.SKIPPED; break;
                case Abi.LOAD_BOUND: outcome = LoadResult.Outcome.BOUND; break;
                case Abi.LOAD_DELETED: outcome = LoadResult.Outcome.DELETED; break;
                case Abi.LOAD_BOUND_EVICTING: outcome = LoadResult.Outcome.BOUND_EVICTING; break;
                default: throw new IllegalStateException("mp_load_record returned " + status);
            }
            return new LoadResult(outcome, (status & Abi.LOAD_UNDECLARED) != 0);
        } finally {
            release(blocks);
        }
    }

    /** Confirms every pending binding once its records are durable; returns how many. */
    public synchronized int confirm() {
        return status(Export.CONFIRM, () -> instance.call(Export.CONFIRM, handle));
    }

    /** Takes back every pending binding and every change since the last confirm; how many. */
    public synchronized int abort() {
        return status(Export.ABORT, () -> instance.call(Export.ABORT, handle));
    }

    /** How many bindings await {@link #confirm()}. */
    public synchronized int pending() {
        return status(Export.PENDING, () -> instance.call(Export.PENDING, handle));
    }

    /** How many identities are bound, pending ones included. */
    public synchronized int size() {
        return status(Export.MAPPER_LEN, () -> instance.call(Export.MAPPER_LEN, handle));
    }

    /** The confirmed state as snapshot bytes, for {@link MirrorPid#restore}. */
    public synchronized byte[] snapshot() {
        int n = status(Export.SNAPSHOT, () -> instance.call(Export.SNAPSHOT, handle));
        return memory().readBytes(infoWord(Abi.INFO_PTR_OFFSET), n);
    }

    /** Drops bindings idle for {@code producerExpirationMs}; returns their tombstones. */
    public synchronized List<StateRecord> expire(long nowMs) {
        status(Export.EXPIRE, () -> instance.call(Export.EXPIRE, handle, nowMs));
        byte[] out = output();
        return records(out, out.length);
    }

    /** Drops every binding of one mapped PID (the producer state expired it); tombstones. */
    public synchronized List<StateRecord> expirePid(long mapped) {
        status(Export.EXPIRE_PID, () -> instance.call(Export.EXPIRE_PID, handle, mapped));
        byte[] out = output();
        return records(out, out.length);
    }

    /** Frees the module's memory. Idempotent. */
    @Override
    public synchronized void close() {
        if (instance != null) {
            instance.close();
            instance = null;
        }
    }

    /** Whether {@link #close()} was called (or a trap closed it). */
    public synchronized boolean isClosed() {
        return instance == null;
    }

    // ---- the ABI's conventions -------------------------------------------------------------

    private void ensureOpen() {
        if (instance == null) {
            throw new IllegalStateException("this PidMapper is closed");
        }
    }

    /** Runs an export returning a status: the value, or the error it names. */
    private int status(Export export, java.util.function.IntSupplier call) {
        ensureOpen();
        int status;
        try {
            status = call.getAsInt();
        } catch (RuntimeException e) {
            // A trap or a runtime failure: the instance cannot be trusted any more.
            close();
            throw new ModuleTrappedException(export.wasmName, e);
        }
        if (status < 0) {
            throw error(status);
        }
        return status;
    }

    private MirrorPidException error(int status) {
        return Call.failure(instance, status);
    }

    // The last successful call's output, read where mp_output_info says it is. Each of these runs
    // right after a successful call that wrote an output, before any other call.

    /** A big-endian word of the output info. */
    private int infoWord(int offset) {
        return Integer.reverseBytes(memory().readInt(info + offset));
    }

    private boolean flag() {
        return infoWord(Abi.INFO_FLAG_OFFSET) == 1;
    }

    private byte[] output() {
        return memory().readBytes(infoWord(Abi.INFO_PTR_OFFSET), infoWord(Abi.INFO_LEN_OFFSET));
    }

    /** The output unless it is the empty record list (one read, in the common case). */
    private byte[] outputIfAny() {
        int n = infoWord(Abi.INFO_LEN_OFFSET);
        if (n == Abi.EMPTY_RECORDS_BYTES) {
            return null;
        }
        return memory().readBytes(infoWord(Abi.INFO_PTR_OFFSET), n);
    }

    /** The record-list layout in {@code out[0, end)}. */
    private static List<StateRecord> records(byte[] out, int end) {
        int n = Abi.getInt(out, 0);
        List<StateRecord> list = new ArrayList<>(n);
        int at = 4;
        for (int i = 0; i < n; i++) {
            int kl = Abi.getInt(out, at);
            byte[] key = Arrays.copyOfRange(out, at + 4, at + 4 + kl);
            at += 4 + kl;
            int vl = Abi.getInt(out, at);
            at += 4;
            byte[] value = null;
            if (vl >= 0) {
                value = Arrays.copyOfRange(out, at, at + vl);
                at += vl;
            }
            list.add(new StateRecord(key, value));
        }
        if (at != end) {
            throw new IllegalStateException("malformed record list from the module");
        }
        return list;
    }

    /**
     * The module's token for source cluster {@code sourceClusterId} ({@code mp_source}, asked once
     * per ID): a rewrite names its source by it, so that the module compares no ID.
     */
    private int sourceToken(String sourceClusterId) {
        Objects.requireNonNull(sourceClusterId, "sourceClusterId");
        Integer known = tokens.get(sourceClusterId);
        if (known != null) {
            return known;
        }
        int ptr = putSource(sourceClusterId);
        int len = source.length;
        int token = status(Export.SOURCE, () -> instance.call(Export.SOURCE, handle, ptr, len, 0, 0));
        tokens.put(sourceClusterId, token);
        return token;
    }

    /** The source ID in its block, kept between calls (copied only when it changes). */
    private int putSource(String sourceClusterId) {
        Objects.requireNonNull(sourceClusterId, "sourceClusterId");
        ensureOpen();
        // The ID in the module already (an empty one needs no block): where it is.
        boolean held = source.length == 0 || sourcePtr != 0;
        int at = source.length == 0 ? 0 : sourcePtr;
        if (held && sourceClusterId.equals(sourceString)) {
            return at;
        }
        byte[] id = sourceClusterId.getBytes(StandardCharsets.UTF_8);
        if (held && Arrays.equals(id, source)) {
            sourceString = sourceClusterId;
            return at;
        }
        if (id.length > sourceCap) {
            if (sourcePtr != 0) {
                int p = sourcePtr;
                status(Export.FREE, () -> instance.call(Export.FREE, p));
            }
            sourcePtr = 0;
            sourceCap = 0;
            int cap = Math.max(64, id.length);
            sourcePtr = status(Export.ALLOC, () -> instance.call(Export.ALLOC, cap));
            sourceCap = cap;
        }
        if (id.length > 0) {
            memory().write(sourcePtr, id);
        }
        source = id;
        sourceString = sourceClusterId;
        return id.length == 0 ? 0 : sourcePtr;
    }

    private void ensureSlots(int count) {
        if (count <= slotsCap) {
            return;
        }
        if (slotsPtr != 0) {
            int p = slotsPtr;
            status(Export.FREE, () -> instance.call(Export.FREE, p));
            slotsPtr = 0;
            slotsCap = 0;
        }
        int cap = Math.max(16, Integer.highestOneBit(count - 1) << 1);
        slotsPtr = status(Export.ALLOC, () -> instance.call(Export.ALLOC, (long) cap * Abi.SLOT_BYTES));
        slotsCap = cap;
    }

    private int put(byte[] bytes) {
        if (bytes.length == 0) {
            return 0;
        }
        int p = status(Export.ALLOC, () -> instance.call(Export.ALLOC, bytes.length));
        memory().write(p, bytes);
        return p;
    }

    private void release(int[] blocks) {
        for (int p : blocks) {
            if (p != 0 && instance != null) {
                instance.call(Export.FREE, p);
            }
        }
    }

    /** Calls made before a mapper exists. */
    private static final class Call {
        static int made(ModuleInstance instance, Export export, byte[] input) {
            int p = 0;
            if (input.length > 0) {
                p = instance.call(Export.ALLOC, input.length);
                if (p < 0) {
                    throw failure(instance, p);
                }
                instance.memory().write(p, input);
            }
            int h = instance.call(export, p, input.length);
            if (h < 0) {
                throw failure(instance, h);
            }
            return h;
        }

        /** The failure a status names, with the module's message (read before any other call). */
        static MirrorPidException failure(ModuleInstance instance, int status) {
            int p = instance.call(Export.LAST_ERROR_PTR);
            int n = instance.call(Export.LAST_ERROR_LEN);
            String message = new String(instance.memory().readBytes(p, n), StandardCharsets.UTF_8);
            Code code = Code.ofStatus(status);
            if (code == null) {
                throw new IllegalStateException("the module returned the unknown status " + status + ": " + message);
            }
            return new MirrorPidException(code, message);
        }
    }
}
