package dev.mirrorpid.bench;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import dev.mirrorpid.judge.KafkaLogs;
import dev.mirrorpid.judge.LocalBroker;
import dev.mirrorpid.judge.NaiveLoop;
import dev.mirrorpid.judge.SourceFetcher;
import dev.mirrorpid.judge.Strategy;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * End-to-end mirror throughput, side by side in one run: a fetch of 1 MiB of batches arrives,
 * goes through mirrorpid-kafka's {@link MirrorLoop} (the rewrite, the copy check, the placing;
 * the paths' checkpoint, which the loop stores once a second by default, is in no invocation,
 * as it is in one fetch of hundreds of a running mirror), and is appended to a Kafka {@code
 * UnifiedLog} with {@code appendAsFollower}, which checks every batch's CRC and writes the
 * segment. {@code verbatim}
 * places and appends alike without the rewrite ({@link NaiveLoop});
 * {@code rewrite} is the arrival and mirrorpid's rewrite alone, {@code land} the arrival alone,
 * so that {@code rewrite - land} is mirrorpid's share of the whole.
 *
 * <p>How the fetch arrives ({@code from}): {@code landed}, batches built in this JVM are copied
 * into the mirror's buffer (the copy a network read makes); {@code source}, a real Fetch request
 * to a real broker ({@link LocalBroker} on loopback, {@link SourceFetcher}) reads them from its
 * log, where a real idempotent producer wrote them with {@code batch.size} the batch size: from
 * source fetch to destination append, as a mirror runs. The logs live on tmpfs ({@code
 * /dev/shm}) where there is one. Before each invocation the log is emptied (Kafka's producer
 * state with it) and the loop starts again from an empty path log, so the same fetch is never a
 * copy; the mapper keeps its bindings, the steady state of a running mirror.
 *
 * <p>{@link #paired} runs both paths in each invocation, one fetch each, the one first that was
 * second the time before, each into a log of its own: a slow moment of the machine falls on
 * both, which the separate forks of {@code mirror}'s two paths do not share (each fork starts
 * its own broker and JIT, and one fork's mean can sit further from another's than mirrorpid's
 * share). Its counters are each path's nanoseconds and the pairs, per iteration.
 *
 * <p>Results in {@code docs/PERFORMANCE.md}; {@code scripts/bench-jvm.sh mirror} runs it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 10, time = 2)
@Fork(1)
public class MirrorBench {
    /** Bytes of each batch in the fetch (about: the records are sized to it). */
    @Param({"1024", "16384", "1048576"})
    public int batchBytes;

    /**
     * verbatim, mirrorpid, rewrite (the landing copy and mirrorpid's rewrite alone), or land
     * (the landing copy alone: what rewrite adds to it is mirrorpid's own cost).
     */
    @Param({"land", "rewrite", "verbatim", "mirrorpid"})
    public String path;

    /** landed (batches built here, copied in) or source (a real fetch from a real broker). */
    @Param({"landed", "source"})
    public String from;

    private static final int FETCH_BYTES = 1 << 20;
    private static final int RECORD_BYTES = 100;
    private static final String TOPIC = "orders";

    /** The landed fetch's bytes and the buffer they land in (landed only). */
    private byte[] fetch;
    private ByteBuffer landed;
    /** Bytes of whole batches a fetch moves. */
    private int bytes;
    private File dir;
    private KafkaScheduler scheduler;
    private UnifiedLog log;
    /** Where {@link #paired}'s verbatim path appends, beside {@link #log}. */
    private UnifiedLog verbatimLog;
    private UnifiedLog stateLog;
    private UnifiedLog pathLog;
    private PidMapper mapper;
    private MirrorLoop loop;
    private NaiveLoop verbatim;
    private NaiveLoop pairedVerbatim;
    private StateLog state;
    private int records;
    private long pid;
    private LocalBroker source;
    private SourceFetcher fetcher;

    /** {@link #paired}'s two paths: the nanoseconds each took, and how many pairs ran. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Pair {
        /** Nanoseconds of the verbatim path, fetch included. */
        public long verbatimNs;
        /** Nanoseconds of mirrorpid's path, fetch included. */
        public long mirrorpidNs;
        /** Pairs run. */
        public long pairs;

        /** Counts each iteration afresh. */
        @Setup(Level.Iteration)
        public void reset() {
            verbatimNs = 0;
            mirrorpidNs = 0;
            pairs = 0;
        }
    }

    /** Records and bytes per operation, for records/s and MB/s. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Moved {
        /** Records mirrored. */
        public long records;
        /** Bytes mirrored. */
        public long bytes;
    }

    @Setup(Level.Trial)
    public void setup() throws Exception {
        switch (from) {
            case "landed" -> build();
            case "source" -> produce();
            default -> throw new IllegalArgumentException("from: landed or source, not " + from);
        }

        // On tmpfs where there is one: the disk's noise would drown the differences.
        File shm = new File("/dev/shm");
        dir = (shm.isDirectory() && shm.canWrite()
                ? Files.createTempDirectory(shm.toPath(), "mirrorpid-bench")
                : Files.createTempDirectory("mirrorpid-bench")).toFile();
        scheduler = new KafkaScheduler(1);
        log = KafkaLogs.open(new File(dir, "orders-0"), new Properties(), scheduler, true);
        verbatimLog = KafkaLogs.open(new File(dir, "orders-verbatim-0"), new Properties(), scheduler, true);
        Properties compact = new Properties();
        compact.put("cleanup.policy", "compact");
        stateLog = KafkaLogs.open(new File(dir, "__mirror_state-0"), compact, scheduler, true);
        pathLog = KafkaLogs.open(new File(dir, "__mirror_paths-0"), compact, scheduler, true);
        Uuid topic = Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA");
        mapper = MirrorPid.load().newMapper(MapperConfig.builder(topic, 0).build());
        verbatim = new NaiveLoop(Strategy.VERBATIM, log, 0);
        pairedVerbatim = new NaiveLoop(Strategy.VERBATIM, verbatimLog, 0);
        state = new StateLog(stateLog, 0, new File(dir, "snapshot").toPath());
        // Bind the producer once: the steady state.
        mapper.map("east", pid, System.currentTimeMillis());
        mapper.confirm();
    }

    /** One idempotent producer's batches built here, sequences in order, about FETCH_BYTES in all. */
    private void build() {
        ByteBuffer all = ByteBuffer.allocate(FETCH_BYTES + batchBytes + 4096);
        int perBatch = Math.max(1, (batchBytes - 61) / (RECORD_BYTES + 12));
        long offset = 0;
        int sequence = 0;
        while (all.position() + batchBytes <= FETCH_BYTES || offset == 0) {
            MemoryRecordsBuilder b = MemoryRecords.builder(ByteBuffer.allocate(batchBytes + 1024), RecordBatch.MAGIC_VALUE_V2,
                    Compression.NONE, TimestampType.CREATE_TIME, offset, System.currentTimeMillis(), 7L, (short) 0,
                    sequence, false, 0);
            for (int i = 0; i < perBatch; i++) {
                b.append(System.currentTimeMillis(), null, new byte[RECORD_BYTES]);
            }
            all.put(b.build().buffer());
            offset += perBatch;
            sequence += perBatch;
            records += perBatch;
        }
        all.flip();
        fetch = new byte[all.remaining()];
        all.get(fetch);
        landed = ByteBuffer.allocate(fetch.length);
        bytes = fetch.length;
        pid = 7L;
    }

    /**
     * A real broker, and a real idempotent producer writing about FETCH_BYTES of records to it in
     * batches of {@code batchBytes}; what one fetch of FETCH_BYTES returns, whole batches only, is
     * what every invocation fetches again.
     */
    private void produce() throws Exception {
        source = LocalBroker.start("bench", Uuid.randomUuid().toString(), TOPIC);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(Math.min(batchBytes, 1_000_000)));
        p.put(ProducerConfig.LINGER_MS_CONFIG, "1000");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(2 << 20));
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < FETCH_BYTES / (RECORD_BYTES + 12); i++) {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, new byte[RECORD_BYTES]));
            }
            producer.flush();
        }
        fetcher = SourceFetcher.connect(source.bootstrapServers());
        for (RecordBatch batch : fetchFromSource().batches()) {
            bytes += batch.sizeInBytes();
            records += batch.countOrNull();
            pid = batch.producerId();
        }
    }

    private MemoryRecords fetchFromSource() {
        try {
            return fetcher.fetchRetrying(new TopicPartition(TOPIC, 0), source.topicId(), 0, FETCH_BYTES,
                    Duration.ofSeconds(30), Duration.ofMillis(50)).records();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Setup(Level.Invocation)
    public void empty() throws IOException {
        log.truncateFullyAndStartAt(0, Optional.empty());
        verbatimLog.truncateFullyAndStartAt(0, Optional.empty());
        // A mirror that never carried the fetch: its path's positions would take it for a copy.
        pathLog.truncateFullyAndStartAt(0, Optional.empty());
        loop = MirrorLoop.builder(log, 0, state, new PathLog(pathLog, 0)).mapper(mapper).build();
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        mapper.close();
        log.close();
        verbatimLog.close();
        stateLog.close();
        pathLog.close();
        scheduler.shutdown();
        KafkaLogs.delete(dir);
        if (fetcher != null) {
            fetcher.close();
        }
        if (source != null) {
            source.close();
        }
    }

    /** The fetch, as it arrives: from the source broker, or copied into the landing buffer. */
    private MemoryRecords arrive() {
        if (fetcher != null) {
            return fetchFromSource();
        }
        landed.clear();
        landed.put(fetch).flip();
        return MemoryRecords.readableRecords(landed);
    }

    @Benchmark
    public long mirror(Moved moved) {
        MemoryRecords fetched = arrive();
        moved.records += records;
        moved.bytes += bytes;
        if (path.equals("land")) {
            return fetched.sizeInBytes();
        }
        if (path.equals("rewrite")) {
            RewriteResult r = mapper.rewrite("east", fetched, System.currentTimeMillis());
            return r.consumed();
        }
        if (path.equals("verbatim")) {
            return verbatim.mirror("east", fetched, System.currentTimeMillis()).lastOffset();
        }
        return loop.mirror("east", fetched, System.currentTimeMillis()).lastOffset();
    }

    /** A fetch through each path, verbatim and mirrorpid, each timed from its arrival on. */
    @Benchmark
    public long paired(Pair pair) {
        boolean verbatimFirst = (pair.pairs & 1) == 0;
        long last = 0;
        for (int k = 0; k < 2; k++) {
            boolean isVerbatim = (k == 0) == verbatimFirst;
            long start = System.nanoTime();
            MemoryRecords fetched = arrive();
            long nowMs = System.currentTimeMillis();
            last += isVerbatim ? pairedVerbatim.mirror("east", fetched, nowMs).lastOffset()
                    : loop.mirror("east", fetched, nowMs).lastOffset();
            long took = System.nanoTime() - start;
            if (isVerbatim) {
                pair.verbatimNs += took;
            } else {
                pair.mirrorpidNs += took;
            }
        }
        pair.pairs++;
        return last;
    }
}
