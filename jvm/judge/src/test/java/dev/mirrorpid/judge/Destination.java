package dev.mirrorpid.judge;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.common.message.FetchResponseData.AbortedTransaction;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * A destination partition: Kafka 4.4's own {@code UnifiedLog} on a directory of its own, with
 * Kafka's producer-state manager. Read back as Kafka sees it: its producer entries, and what a
 * read_committed consumer of it reads.
 */
public final class Destination implements AutoCloseable {
    static final int PRODUCER_ID_EXPIRATION_MS = KafkaLogs.PRODUCER_ID_EXPIRATION_MS;

    private final File dir;
    private final Properties config;
    private final int expirationMs;
    private final Time time;
    private final KafkaScheduler scheduler = new KafkaScheduler(1);
    private UnifiedLog log;

    private Destination(File dir, Properties config) throws IOException {
        this(dir, config, PRODUCER_ID_EXPIRATION_MS);
    }

    private Destination(File dir, Properties config, int expirationMs) throws IOException {
        this(dir, config, expirationMs, Time.SYSTEM);
    }

    private Destination(File dir, Properties config, int expirationMs, Time time) throws IOException {
        this.dir = dir;
        this.config = config;
        this.expirationMs = expirationMs;
        this.time = time;
        this.log = open(true);
    }

    /** A log for {@code topic}-{@code partition} under {@code parent}. */
    public static Destination create(File parent, String topic, int partition) throws IOException {
        return new Destination(new File(parent, topic + "-" + partition), new Properties());
    }

    /** As {@link #create}, with Kafka's {@code producer.id.expiration.ms} at {@code expirationMs}. */
    static Destination expiring(File parent, String topic, int partition, int expirationMs) throws IOException {
        return new Destination(new File(parent, topic + "-" + partition), new Properties(), expirationMs);
    }

    /** As {@link #expiring}, on {@code time}'s clock (Kafka's now), not the system's. */
    static Destination expiring(File parent, String topic, int partition, int expirationMs, Time time)
            throws IOException {
        return new Destination(new File(parent, topic + "-" + partition), new Properties(), expirationMs, time);
    }

    /** A compacted log ({@code cleanup.policy=compact}), as {@code __mirror_state} is. */
    public static Destination compacted(File parent, String topic, int partition) throws IOException {
        Properties p = new Properties();
        p.put("cleanup.policy", "compact");
        return new Destination(new File(parent, topic + "-" + partition), p);
    }

    private UnifiedLog open(boolean cleanShutdown) throws IOException {
        return KafkaLogs.open(dir, config, scheduler, cleanShutdown, expirationMs, time);
    }

    public UnifiedLog log() {
        return log;
    }

    /**
     * A leader change at the destination: the log is closed (Kafka writes its producer
     * snapshot) and opened again from the same directory, its producer state rebuilt by Kafka.
     */
    void reopen() throws IOException {
        log.close();
        log = open(true);
    }

    /**
     * What Kafka's fetch path reads from {@code offset} (up to 1 MiB, to the log end), copied to
     * the heap as a fetch response lands: the batches a mirror of this log receives.
     */
    MemoryRecords fetch(long offset) throws IOException {
        return fetch(offset, Long.MAX_VALUE);
    }

    /** As above, only the batches that end before offset {@code until}. */
    MemoryRecords fetch(long offset, long until) throws IOException {
        return fetch(log, offset, until);
    }

    /** What a fetch of {@code log} from {@code offset} reads, the batches that end before {@code until}. */
    static MemoryRecords fetch(UnifiedLog log, long offset, long until) throws IOException {
        Records read = log.read(offset, 1 << 20, FetchIsolation.LOG_END, true).records;
        ByteBuffer bytes = ByteBuffer.allocate(read.sizeInBytes());
        ((FileRecords) read).readInto(bytes, 0); // reads, then flips
        int keep = 0;
        for (RecordBatch batch : MemoryRecords.readableRecords(bytes.duplicate()).batches()) {
            if (batch.nextOffset() > until) {
                break;
            }
            keep += batch.sizeInBytes();
        }
        bytes.limit(keep);
        return MemoryRecords.readableRecords(bytes.slice());
    }

    /**
     * The batches of {@code fetched} that {@code carry} accepts, in a buffer of their own (a
     * mirror's cycle check leaves the others out before anything sees them), and the offset
     * after the last batch fetched, carried or not.
     */
    record Carried(MemoryRecords records, long end) {}

    static Carried carried(MemoryRecords fetched, long from, java.util.function.Predicate<RecordBatch> carry) {
        long end = from;
        ByteBuffer out = ByteBuffer.allocate(fetched.sizeInBytes());
        for (org.apache.kafka.common.record.internal.MutableRecordBatch batch : fetched.batches()) {
            end = batch.nextOffset();
            if (carry.test(batch)) {
                batch.writeTo(out);
            }
        }
        out.flip();
        return new Carried(MemoryRecords.readableRecords(out), end);
    }

    /** {@code records}' bytes in a buffer of their own: each lane rewrites its own copy. */
    static MemoryRecords copy(MemoryRecords records) {
        ByteBuffer src = records.buffer().duplicate();
        ByteBuffer dst = ByteBuffer.allocate(src.remaining());
        dst.put(src).flip();
        return MemoryRecords.readableRecords(dst);
    }

    /** Kafka's producer entries for the partition, by PID. */
    public List<ProducerState> producers() {
        return producers(log);
    }

    /** Kafka's producer entries for {@code log}, by PID. */
    static List<ProducerState> producers(UnifiedLog log) {
        List<ProducerState> out = new ArrayList<>(log.activeProducers());
        out.sort(Comparator.comparingLong(ProducerState::producerId));
        return out;
    }

    /**
     * What a read_committed consumer reads, up to the last stable offset: Kafka's aborted
     * transactions for the range applied as Kafka's consumer applies them (a PID's
     * transactional batches from the aborted transaction's first offset up to its ABORT marker
     * dropped; control batches never returned).
     */
    List<Judged.Rec> readCommitted() throws IOException {
        log.updateHighWatermark(log.logEndOffset());
        return readCommitted(log);
    }

    /**
     * What a read_committed consumer of {@code log} reads as its high watermark stands: up to
     * the last stable offset, which the high watermark caps.
     */
    static List<Judged.Rec> readCommitted(UnifiedLog log) throws IOException {
        long stable = log.lastStableOffset();
        List<Judged.Rec> out = new ArrayList<>();
        PriorityQueue<AbortedTransaction> aborted = new PriorityQueue<>(Comparator.comparingLong(AbortedTransaction::firstOffset));
        Set<String> queued = new HashSet<>();
        Set<Long> abortedPids = new HashSet<>();
        long offset = 0;
        while (offset < stable) {
            FetchDataInfo info = log.read(offset, 8 << 20, FetchIsolation.TXN_COMMITTED, true);
            for (AbortedTransaction t : info.abortedTransactions.orElse(List.of())) {
                if (queued.add(t.producerId() + "@" + t.firstOffset())) {
                    aborted.add(t);
                }
            }
            long next = offset;
            for (RecordBatch batch : info.records.batches()) {
                next = batch.nextOffset();
                if (batch.lastOffset() < offset) {
                    continue;
                }
                if (batch.hasProducerId()) {
                    while (!aborted.isEmpty() && aborted.peek().firstOffset() <= batch.lastOffset()) {
                        abortedPids.add(aborted.poll().producerId());
                    }
                    if (batch.isControlBatch()) {
                        if (isAbort(batch)) {
                            abortedPids.remove(batch.producerId());
                        }
                        continue;
                    }
                    if (batch.isTransactional() && abortedPids.contains(batch.producerId())) {
                        continue;
                    }
                }
                if (batch.isControlBatch()) {
                    continue;
                }
                for (Record r : batch) {
                    if (r.offset() >= offset && r.offset() < stable) {
                        out.add(Judged.Rec.of(r));
                    }
                }
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
        return out;
    }

    /**
     * A data batch: its PID, epoch and first sequence, and the true producer its records name
     * ({@code producer}: the label of its first key, {@code "A/pa"} of {@code "A/pa/3"}).
     */
    public record Batch(long pid, short epoch, int baseSequence, String producer) {

        static Optional<Batch> of(RecordBatch batch) {
            if (batch.isControlBatch()) {
                return Optional.empty();
            }
            for (Record r : batch) {
                String key = java.nio.charset.StandardCharsets.UTF_8.decode(r.key().duplicate()).toString();
                int cut = key.lastIndexOf('/');
                return Optional.of(new Batch(batch.producerId(), batch.producerEpoch(), batch.baseSequence(), cut < 0 ? key : key.substring(0, cut)));
            }
            return Optional.empty();
        }
    }

    /** Every data batch in the log, in order. */
    public List<Batch> batches() throws IOException {
        return batches(log);
    }

    /** Every data batch in {@code log}, in order. */
    static List<Batch> batches(UnifiedLog log) throws IOException {
        List<Batch> out = new ArrayList<>();
        long offset = 0;
        while (offset < log.logEndOffset()) {
            FetchDataInfo info = log.read(offset, 8 << 20, FetchIsolation.LOG_END, true);
            long next = offset;
            for (RecordBatch batch : info.records.batches()) {
                if (batch.lastOffset() >= offset) {
                    Batch.of(batch).ifPresent(out::add);
                }
                next = batch.nextOffset();
            }
            if (next == offset) {
                break;
            }
            offset = next;
        }
        return out;
    }

    private static boolean isAbort(RecordBatch batch) {
        for (Record r : batch) {
            return ControlRecordType.parse(r.key()) == ControlRecordType.ABORT;
        }
        return false;
    }

    @Override
    public void close() throws IOException {
        log.close();
        try {
            scheduler.shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while stopping the log's scheduler");
        }
    }
}
