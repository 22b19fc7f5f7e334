package dev.mirrorpid.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * One partition of a compacted topic the mirror keeps its own state in, written as its leader:
 * keyed records, appended a call's worth in one batch (all of them or none) and returned once
 * committed ({@link Broker#awaitCommitted}), read back in log order by a new leader, committed
 * records only.
 */
final class CompactedPartition {
    /** One record: its key, and its value ({@code null}: a tombstone). */
    record Entry(byte[] key, byte[] value) {}

    private final UnifiedLog log;
    private final int leaderEpoch;
    private final Broker broker;

    CompactedPartition(UnifiedLog log, int leaderEpoch, Broker broker) {
        this.log = Objects.requireNonNull(log, "log");
        this.leaderEpoch = leaderEpoch;
        this.broker = Objects.requireNonNull(broker, "broker");
    }

    UnifiedLog log() {
        return log;
    }

    Broker broker() {
        return broker;
    }

    /**
     * Appends {@code entries} in one batch, stamped with the broker's clock, and returns once
     * it is committed.
     *
     * @throws org.apache.kafka.common.KafkaException Kafka refused the append, or it is not
     *     known to be committed ({@link Broker#awaitCommitted})
     */
    void append(List<Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        SimpleRecord[] records = new SimpleRecord[entries.size()];
        long now = broker.time().milliseconds();
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(now, entries.get(i).key(), entries.get(i).value());
        }
        try {
            log.appendAsLeader(MemoryRecords.withRecords(Compression.NONE, records), leaderEpoch);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        broker.awaitCommitted(log, log.logEndOffset());
    }

    /**
     * Waits until everything the leader's log holds is committed, and returns its end: what a
     * new leader reads up to, so that it builds on nothing a leader change could truncate.
     */
    long committedEnd() {
        long end = log.logEndOffset();
        broker.awaitCommitted(log, end);
        return end;
    }

    /** Every record from {@code from} to offset {@code until}, in log order. */
    List<Entry> read(long from, long until) {
        List<Entry> out = new ArrayList<>();
        forEachBatch(log, from, until, (batch, offset) -> {
            for (Record r : batch) {
                if (r.offset() >= offset && r.offset() < until) {
                    out.add(new Entry(bytes(r.key()), r.hasValue() ? bytes(r.value()) : null));
                }
            }
        });
        return out;
    }

    /** What {@link #forEachBatch} hands each batch to. */
    @FunctionalInterface
    interface BatchVisitor {
        /**
         * Sees {@code batch}, read from offset {@code from}: a read returns whole batches, so
         * the first may begin before it.
         */
        void visit(RecordBatch batch, long from);
    }

    /**
     * Hands every batch of {@code log} from offset {@code from} (or its start, if later) to
     * offset {@code until} (or its end, if sooner) to {@code visitor}, in log order, reading a
     * megabyte at a time; the last may end beyond {@code until}.
     */
    static void forEachBatch(UnifiedLog log, long from, long until, BatchVisitor visitor) {
        long offset = Math.max(from, log.logStartOffset());
        try {
            while (offset < Math.min(until, log.logEndOffset())) {
                FetchDataInfo info = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true);
                long next = offset;
                for (RecordBatch batch : info.records.batches()) {
                    if (batch.baseOffset() >= until) {
                        return;
                    }
                    visitor.visit(batch, offset);
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
    }

    private static byte[] bytes(ByteBuffer b) {
        if (b == null) {
            return new byte[0];
        }
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
