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
import java.util.function.IntSupplier;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * The producer-ID mapper of one destination partition: what its leader uses to give every
 * mirrored producer a PID of its own ({@code docs/DESIGN.md}).
 *
 * <p>A fetch from a source cluster is rewritten <b>in place</b> in the caller's buffer: the
 * module is given each batch's header window (its header, and a control batch's marker) and
 * gives back the 12 bytes that change (the producer ID and the CRC, patched without reading the
 * records), so the cost does not depend on the batches' size and the records are never copied.
 *
 * <p>The persistence protocol, for every fetch: {@link #rewrite}, then produce every returned
 * record to {@code __mirror_state} and wait for it ({@code acks=all}), then {@link #confirm()},
 * then append the batches. A failed call ({@link MirrorPidException}) changed nothing, the
 * caller's buffer included.
 *
 * <p>A mapper lives in one of its {@link MirrorPid}'s module instances, beside other partitions'
 * mappers: a call holds that instance's lock (a WebAssembly instance is single-threaded), so calls
 * on mappers of different instances run in parallel. {@link #close()} frees what the mapper holds
 * in the instance; a closed mapper refuses every call with {@link IllegalStateException}. If the
 * instance fails ({@link ModuleTrappedException}), every call of each of its mappers throws that.
 */
public final class PidMapper implements AutoCloseable {
    private final SharedInstance home;
    private final int handle;
    private boolean closed;
    /**
     * The source token of the last rewrite, and its source cluster ID: a partition's fetches come
     * from few paths, often one, and a broker's thousands of partitions keep this in the mapper's
     * own object, beside its handle, not behind a map.
     */
    private String lastSource;
    private int lastToken;
    /** Every source token the module gave this mapper, by source cluster ID; null until a second. */
    private Map<String, Integer> tokens;

    private PidMapper(SharedInstance home, int handle) {
        this.home = home;
        this.handle = handle;
    }

    /**
     * A mapper made in {@code home} by {@code export} ({@code mp_mapper_new} or {@code
     * mp_restore}) from {@code input}, or null if a trap closed {@code home} before the call; the
     * caller gives {@code home} back to its pool unless a mapper is returned.
     */
    static PidMapper made(SharedInstance home, Export export, byte[] input) {
        synchronized (home) {
            if (home.isTrapped()) {
                // Another mapper's call trapped it after this one was placed there: this mapper
                // was never made, and belongs in another instance.
                return null;
            }
            ModuleInstance instance = home.live();
            int p = home.put(input);
            int h;
            try {
                h = home.status(export, () -> instance.call(export, p, input.length));
            } finally {
                home.free(p);
            }
            return new PidMapper(home, h);
        }
    }

    /** The instance's linear memory as the last call left it. */
    private LinearMemory memory() {
        return home.live().memory();
    }

    /**
     * Maps one producer ID from a source cluster, as a rewrite maps a batch's. A new binding is
     * pending until {@link #confirm()}: persist {@link MapResult#records()} first.
     */
    public MapResult map(String sourceClusterId, long pid, long nowMs) {
        synchronized (home) {
            ModuleInstance instance = open();
            int srcPtr = home.putSource(sourceClusterId);
            int srcLen = home.sourceLength();
            int salt = status(Export.MAP, () -> instance.call(Export.MAP, handle, srcPtr, srcLen, pid, nowMs));
            byte[] out = output();
            List<StateRecord> records = records(out, out.length - 8);
            long mapped = ByteBuffer.wrap(out).getLong(out.length - 8);
            boolean collision = !records.isEmpty() && flag();
            return new MapResult(mapped, salt == Abi.MAP_NOT_A_PRODUCER ? OptionalInt.empty() : OptionalInt.of(salt),
                    records, collision);
        }
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
    public RewriteResult rewrite(String sourceClusterId, ByteBuffer fetch, long nowMs, boolean complete) {
        Objects.requireNonNull(fetch, "fetch");
        if (fetch.isReadOnly()) {
            throw new IllegalArgumentException("the fetch buffer is read-only: a rewrite writes 12 bytes of each batch into it");
        }
        synchronized (home) {
            ModuleInstance instance = open();
            int base = fetch.position();
            int length = fetch.remaining();
            int count = home.gather(fetch, base, length);
            int[] offsets = home.offsets;
            int token = sourceToken(sourceClusterId);
            home.ensureSlots(count);
            int slotsPtr = home.slotsPtr;
            // Each entry's window straight from the caller's buffer into its slot in linear memory,
            // with its length (big-endian, as the module reads it).
            LinearMemory memory = instance.memory();
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
                throw home.trapped(Export.REWRITE_HEADERS_FROM.wasmName, e);
            }
            if (consumed < 0) {
                throw home.failure(consumed);
            }
            memory = instance.memory();
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
    }

    /** {@link #rewrite(String, ByteBuffer, long)} on Kafka's {@code MemoryRecords}, in place. */
    public RewriteResult rewrite(String sourceClusterId, MemoryRecords records, long nowMs) {
        Objects.requireNonNull(records, "records");
        return rewrite(sourceClusterId, records.buffer(), nowMs, false);
    }

    /**
     * Applies one {@code __mirror_state} record ({@code value} null: a tombstone), as a new
     * leader does while replaying the topic in log order.
     */
    public LoadResult loadRecord(byte[] key, byte[] value) {
        Objects.requireNonNull(key, "key");
        synchronized (home) {
            ModuleInstance instance = open();
            int kp = 0, vp = 0;
            try {
                kp = home.put(key);
                vp = value == null ? 0 : home.put(value);
                int k = kp, v = vp;
                int status = status(Export.LOAD_RECORD, () -> instance.call(Export.LOAD_RECORD,
                        handle, k, key.length, v, value == null ? -1 : value.length));
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
                home.free(kp, vp);
            }
        }
    }

    /** Confirms every pending binding once its records are durable; returns how many. */
    public int confirm() {
        return onHandle(Export.CONFIRM);
    }

    /** Takes back every pending binding and every change since the last confirm; how many. */
    public int abort() {
        return onHandle(Export.ABORT);
    }

    /** How many bindings await {@link #confirm()}. */
    public int pending() {
        return onHandle(Export.PENDING);
    }

    /** How many identities are bound, pending ones included. */
    public int size() {
        return onHandle(Export.MAPPER_LEN);
    }

    /** The confirmed state as snapshot bytes, for {@link MirrorPid#restore}. */
    public byte[] snapshot() {
        synchronized (home) {
            int n = onHandle(Export.SNAPSHOT);
            return memory().readBytes(infoWord(Abi.INFO_PTR_OFFSET), n);
        }
    }

    /** Drops bindings idle for {@code producerExpirationMs}; returns their tombstones. */
    public List<StateRecord> expire(long nowMs) {
        return expiring(Export.EXPIRE, nowMs);
    }

    /** Drops every binding of one mapped PID (the producer state expired it); tombstones. */
    public List<StateRecord> expirePid(long mapped) {
        return expiring(Export.EXPIRE_PID, mapped);
    }

    private List<StateRecord> expiring(Export export, long arg) {
        synchronized (home) {
            ModuleInstance instance = open();
            status(export, () -> instance.call(export, handle, arg));
            byte[] out = output();
            return records(out, out.length);
        }
    }

    /**
     * Frees what the mapper holds in its instance, for the instance's next mappers; the last
     * mapper of an instance to close retires it (its linear memory, which never shrinks, is
     * freed). Idempotent.
     */
    @Override
    public void close() {
        synchronized (home) {
            if (closed) {
                return;
            }
            closed = true;
            try {
                ModuleInstance instance = home.live();
                home.status(Export.MAPPER_FREE, () -> instance.call(Export.MAPPER_FREE, handle));
            } catch (ModuleTrappedException e) {
                // The instance is gone, and the mapper's memory with it.
            }
        }
        home.released();
    }

    /** Whether {@link #close()} was called, or its instance failed. */
    public boolean isClosed() {
        synchronized (home) {
            if (closed) {
                return true;
            }
            try {
                home.live();
                return false;
            } catch (ModuleTrappedException e) {
                return true;
            }
        }
    }

    // ---- the ABI's conventions -------------------------------------------------------------

    /** The instance, for a call: the mapper is open and its instance did not fail. */
    private ModuleInstance open() {
        if (closed) {
            throw new IllegalStateException("this PidMapper is closed");
        }
        return home.live();
    }

    /** Runs {@code export} on the handle alone: its status. */
    private int onHandle(Export export) {
        synchronized (home) {
            ModuleInstance instance = open();
            return status(export, () -> instance.call(export, handle));
        }
    }

    /** Runs an export returning a status: the value, or the error it names. */
    private int status(Export export, IntSupplier call) {
        open();
        return home.status(export, call);
    }

    // The last successful call's output, read where mp_output_info says it is. Each of these runs
    // right after a successful call that wrote an output, before any other call.

    /** A big-endian word of the output info. */
    private int infoWord(int offset) {
        return Integer.reverseBytes(memory().readInt(home.info + offset));
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
        ByteBuffer bytes = ByteBuffer.wrap(out);
        int n = bytes.getInt(0);
        List<StateRecord> list = new ArrayList<>(n);
        int at = 4;
        for (int i = 0; i < n; i++) {
            int kl = bytes.getInt(at);
            byte[] key = Arrays.copyOfRange(out, at + 4, at + 4 + kl);
            at += 4 + kl;
            int vl = bytes.getInt(at);
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
        if (sourceClusterId.equals(lastSource)) {
            return lastToken;
        }
        Integer known = tokens == null ? null : tokens.get(sourceClusterId);
        int token;
        if (known != null) {
            token = known;
        } else {
            ModuleInstance instance = open();
            int ptr = home.putSource(sourceClusterId);
            int len = home.sourceLength();
            token = status(Export.SOURCE, () -> instance.call(Export.SOURCE, handle, ptr, len, 0, 0));
            if (lastSource != null) {
                if (tokens == null) {
                    tokens = new HashMap<>(4);
                    tokens.put(lastSource, lastToken);
                }
                tokens.put(sourceClusterId, token);
            }
        }
        lastSource = sourceClusterId;
        lastToken = token;
        return token;
    }

    /** This mapper's instance (tests inject faults through it). */
    SharedInstance home() {
        return home;
    }
}
