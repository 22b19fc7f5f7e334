package dev.mirrorpid.kafka;

import dev.mirrorpid.PidMapper;
import dev.mirrorpid.StateRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * One partition of {@code __mirror_state}: a compacted Kafka log of the mapper's records, and
 * the latest mapper snapshot with the log offset it covers.
 *
 * <p>A host writes the records a rewrite returned here, and confirms only after this append
 * returned ({@code docs/DESIGN.md}'s persistence protocol). A new leader restores {@link
 * #latestSnapshot()} and replays the records from its offset on ({@link #recover}).
 */
public final class StateLog {
    private final UnifiedLog log;
    private final int leaderEpoch;
    private byte[] snapshot;
    private long snapshotOffset;

    /** Writes to {@code log} (configured with {@code cleanup.policy=compact}) as leader. */
    public StateLog(UnifiedLog log, int leaderEpoch) {
        this.log = Objects.requireNonNull(log, "log");
        this.leaderEpoch = leaderEpoch;
    }

    /** The Kafka log behind this partition. */
    public UnifiedLog log() {
        return log;
    }

    /**
     * Appends {@code records} (a tombstone's value is null) in one batch and returns once Kafka's
     * log holds them.
     */
    public void append(List<StateRecord> records) {
        if (records.isEmpty()) {
            return;
        }
        SimpleRecord[] simple = new SimpleRecord[records.size()];
        long now = System.currentTimeMillis();
        for (int i = 0; i < simple.length; i++) {
            StateRecord r = records.get(i);
            simple[i] = new SimpleRecord(now, r.key(), r.value());
        }
        try {
            log.appendAsLeader(MemoryRecords.withRecords(Compression.NONE, simple), leaderEpoch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Keeps {@code snapshot} as the latest, covering every record before the log end now. */
    public void storeSnapshot(byte[] snapshot) {
        this.snapshot = snapshot.clone();
        this.snapshotOffset = log.logEndOffset();
    }

    /** The latest stored snapshot, or null. */
    public byte[] latestSnapshot() {
        return snapshot == null ? null : snapshot.clone();
    }

    /** Every record from {@code from} to the log end, in log order (what a new leader replays). */
    public List<StateRecord> read(long from) {
        List<StateRecord> out = new ArrayList<>();
        long offset = Math.max(from, log.logStartOffset());
        try {
            while (offset < log.logEndOffset()) {
                FetchDataInfo info = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true);
                long next = offset;
                for (RecordBatch batch : info.records.batches()) {
                    for (Record r : batch) {
                        if (r.offset() >= offset) {
                            out.add(new StateRecord(bytes(r.key()), r.hasValue() ? bytes(r.value()) : null));
                        }
                    }
                    next = batch.nextOffset();
                }
                if (next == offset) {
                    break;
                }
                offset = next;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * What a new leader does: a mapper restored from the latest snapshot (or {@code fresh} when
     * there is none), with every record written after the snapshot replayed into it.
     */
    public PidMapper recover(Function<byte[], PidMapper> restore, Supplier<PidMapper> fresh) {
        PidMapper mapper = snapshot == null ? fresh.get() : restore.apply(snapshot.clone());
        for (StateRecord r : read(snapshot == null ? 0 : snapshotOffset)) {
            mapper.loadRecord(r.key(), r.value());
        }
        return mapper;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
