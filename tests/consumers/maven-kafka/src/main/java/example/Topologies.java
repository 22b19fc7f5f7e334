package example;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.kafka.Broker;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathCheckpoint;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData.AbortedTransaction;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TransactionVersion;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Every topology mirrorpid-kafka's guide (its package Javadoc) names, through the published
 * artifacts alone: a fan-in, a chain with a local producer on every hop, a diamond whose paths
 * lag each other across a leader change, and two regions mirroring each other. Each cluster's partition is a Kafka log that
 * takes its own producers' batches as leader (every cluster's first producer is PID 0) and
 * mirrors its sources through a {@link MirrorLoop}. What a read_committed consumer of each
 * partition reads, by Kafka's aborted-transaction index, must be every committed record of
 * every producer that reaches it, once, and Kafka must hold one entry per producer.
 */
public final class Topologies {
    private static final MirrorPid MODULE = MirrorPid.load();
    private static final Uuid TOPIC = Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA");
    private static final long LOCAL_PID_LIMIT = 1L << 40;

    private final Path dir;
    private final KafkaScheduler scheduler;
    private final List<Cluster> clusters = new ArrayList<>();

    private Topologies(Path dir, KafkaScheduler scheduler) {
        this.dir = dir;
        this.scheduler = scheduler;
    }

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("mirrorpid-topologies");
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        Topologies t = new Topologies(dir, scheduler);
        try {
            t.fanIn();
            t.chain();
            t.diamond();
            t.twoWay();
            System.out.println("fan-in, chain, diamond with a leader change, two-way: every read_committed read right");
        } finally {
            for (Cluster c : t.clusters) {
                c.close();
            }
            scheduler.shutdown();
            try (Stream<Path> all = Files.walk(dir)) {
                all.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    /** A and B, both with a producer of PID 0 (A's transactional), into D. */
    private void fanIn() throws IOException {
        Cluster a = cluster("fan-A", Map.of());
        Cluster b = cluster("fan-B", Map.of());
        Cluster d = cluster("fan-D", Map.of(a.id, List.of(), b.id, List.of()));
        a.data(0, true, "a0").data(0, true, "a1").end(0, ControlRecordType.COMMIT);
        b.data(0, false, "b0").data(0, true, "b-aborted").end(0, ControlRecordType.ABORT);
        d.mirror(a);
        d.mirror(b);
        d.expect(Set.of("a0", "a1", "b0"), 2);
    }

    /** A -> B -> C, a producer of PID 0 on each. */
    private void chain() throws IOException {
        Cluster a = cluster("chain-A", Map.of());
        Cluster b = cluster("chain-B", Map.of());
        Cluster c = cluster("chain-C", Map.of());
        b.declare(Map.of(a.id, List.of()));
        c.declare(Map.of(b.id, List.of(a.id)));
        a.data(0, true, "a0").end(0, ControlRecordType.COMMIT);
        b.data(0, false, "b0");
        c.data(0, false, "c0");
        b.mirror(a);
        c.mirror(b);
        a.data(0, true, "a1").end(0, ControlRecordType.ABORT);
        b.mirror(a);
        c.mirror(b);
        b.expect(Set.of("a0", "b0"), 2);
        c.expect(Set.of("a0", "b0", "c0"), 3);
    }

    /**
     * A -> B -> D and A -> C -> D: C lags B by a COMMIT when D's leader changes, and B's data of
     * the next transaction is open at D. C's late COMMIT must not close it.
     */
    private void diamond() throws IOException {
        Cluster a = cluster("dia-A", Map.of());
        Cluster b = cluster("dia-B", Map.of());
        Cluster c = cluster("dia-C", Map.of());
        b.declare(Map.of(a.id, List.of()));
        c.declare(Map.of(a.id, List.of()));
        Cluster d = cluster("dia-D", Map.of(b.id, List.of(a.id), c.id, List.of(a.id)));
        a.data(0, true, "t1").end(0, ControlRecordType.COMMIT).data(0, true, "t2").end(0, ControlRecordType.ABORT);
        b.mirror(a);
        c.mirror(a);
        d.mirror(b, 3); // t1, its COMMIT, t2: t2 is open at D
        d.mirror(c, 1); // t1 only
        d.lead(2);
        d.mirror(c); // COMMIT of t1 (a copy), t2 (a copy), ABORT of t2 (closes t2)
        d.mirror(b);
        d.expect(Set.of("t1"), 1);
    }

    /** X <-> Y, a producer of PID 0 on each, the mirror carrying only the other's own producers. */
    private void twoWay() throws IOException {
        Cluster x = cluster("two-X", Map.of());
        Cluster y = cluster("two-Y", Map.of());
        x.declare(Map.of(y.id, List.of()));
        y.declare(Map.of(x.id, List.of()));
        x.data(0, true, "x0").end(0, ControlRecordType.COMMIT);
        y.data(0, true, "y0").end(0, ControlRecordType.COMMIT);
        // The cycle check, for a pair: only the source's own producers (local PIDs) cross.
        Predicate<RecordBatch> own = batch -> batch.producerId() < LOCAL_PID_LIMIT;
        x.mirror(y, Long.MAX_VALUE, own);
        y.mirror(x, Long.MAX_VALUE, own);
        x.data(0, true, "x1").end(0, ControlRecordType.ABORT);
        y.data(0, false, "y1");
        x.mirror(y, Long.MAX_VALUE, own);
        y.mirror(x, Long.MAX_VALUE, own);
        x.expect(Set.of("x0", "y0", "y1"), 2);
        y.expect(Set.of("x0", "y0", "y1"), 2);
    }

    private Cluster cluster(String name, Map<String, List<String>> origins) throws IOException {
        Cluster c = new Cluster(name, origins);
        clusters.add(c);
        return c;
    }

    /** One cluster's partition: its own producers' log, and its mirror of other clusters. */
    private final class Cluster {
        final String id;
        final UnifiedLog log;
        final UnifiedLog stateLog;
        final UnifiedLog pathsLog;
        final Path snapshot;
        Map<String, List<String>> origins;
        MirrorLoop loop;
        final Map<String, Long> next = new HashMap<>();
        final Map<Long, short[]> producers = new HashMap<>();

        Cluster(String name, Map<String, List<String>> origins) throws IOException {
            this.id = Uuid.randomUuid().toString();
            this.log = open(name + "-0", new Properties());
            Properties compacted = new Properties();
            compacted.put("cleanup.policy", "compact");
            this.stateLog = open(name + "-state-0", compacted);
            this.pathsLog = open(name + "-paths-0", compacted);
            this.snapshot = dir.resolve(name + ".snapshot");
            this.origins = origins;
            lead(1);
        }

        private UnifiedLog open(String name, Properties config) throws IOException {
            Path d = dir.resolve(name);
            Files.createDirectories(d);
            return UnifiedLog.create(d.toFile(), new LogConfig(config), 0L, 0L, scheduler, new BrokerTopicStats(false),
                    Time.SYSTEM, 900_000, new ProducerStateManagerConfig(86_400_000, false), 600_000,
                    new LogDirFailureChannel(10), true, Optional.empty());
        }

        /** The partition's trust declaration, taken by a new leader. */
        void declare(Map<String, List<String>> declared) {
            this.origins = declared;
            lead(1);
        }

        /** Becomes the partition's leader of {@code epoch}, as the README shows. */
        void lead(int epoch) {
            if (loop != null) {
                loop.checkpoint();
                loop.mapper().close();
            }
            MapperConfig config = MapperConfig.builder(TOPIC, 0).origins(origins).build();
            Broker broker = Broker.singleReplica(Time.SYSTEM);
            StateLog state = new StateLog(stateLog, epoch, broker, snapshot);
            PathLog paths = new PathLog(pathsLog, epoch, broker);
            loop = MirrorLoop.lead(MODULE, config, broker, log, epoch, state, paths);
            next.clear();
            for (PathCheckpoint c : paths.read().paths().values()) {
                next.put(c.path(), c.nextOffset());
            }
        }

        /** One data batch of this cluster's own producer {@code pid}, appended as its leader does. */
        Cluster data(long pid, boolean transactional, String key) throws IOException {
            short[] p = producers.computeIfAbsent(pid, k -> new short[2]); // epoch, sequence
            SimpleRecord r = new SimpleRecord(key.getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
            MemoryRecords batch = transactional
                    ? MemoryRecords.withTransactionalRecords(Compression.NONE, pid, p[0], p[1], r)
                    : MemoryRecords.withIdempotentRecords(Compression.NONE, pid, p[0], p[1], r);
            p[1]++;
            log.appendAsLeader(batch, 1);
            return this;
        }

        /** That producer's COMMIT or ABORT, as its coordinator writes it (transaction version 2). */
        Cluster end(long pid, ControlRecordType type) throws IOException {
            short[] p = producers.get(pid);
            p[0]++;
            p[1] = 0;
            log.appendAsLeader(MemoryRecords.withEndTransactionMarker(System.currentTimeMillis(), pid, p[0],
                    new EndTransactionMarker(type, 0)), 1, AppendOrigin.COORDINATOR, RequestLocal.noCaching(),
                    VerificationGuard.SENTINEL, TransactionVersion.TV_2.featureLevel());
            return this;
        }

        void mirror(Cluster from) throws IOException {
            mirror(from, Integer.MAX_VALUE);
        }

        /** Mirrors {@code from}'s partition up to its {@code batches}-th batch from the start. */
        void mirror(Cluster from, int batches) throws IOException {
            long until = from.log.logEndOffset();
            int n = 0;
            for (RecordBatch b : read(from.log, 0)) {
                if (++n == batches) {
                    until = b.nextOffset();
                }
            }
            mirror(from, until, batch -> true);
        }

        /** Mirrors {@code from}'s partition up to offset {@code until}, the batches {@code carry} accepts. */
        void mirror(Cluster from, long until, Predicate<RecordBatch> carry) throws IOException {
            long offset = next.getOrDefault(from.id, 0L);
            ByteBuffer fetched = ByteBuffer.allocate(1 << 20);
            long end = offset;
            for (RecordBatch b : read(from.log, offset)) {
                if (b.nextOffset() > until) {
                    break;
                }
                end = b.nextOffset();
                if (carry.test(b)) {
                    b.writeTo(fetched);
                }
            }
            fetched.flip();
            if (fetched.hasRemaining()) {
                loop.mirror(from.id, MemoryRecords.readableRecords(fetched), System.currentTimeMillis());
            }
            next.put(from.id, end);
        }

        /**
         * Checks what a read_committed consumer reads here (records up to the last stable offset,
         * Kafka's aborted transactions left out) and how many producer entries Kafka holds.
         */
        void expect(Set<String> committed, int entries) throws IOException {
            log.updateHighWatermark(log.logEndOffset());
            check(log.lastStableOffset() == log.logEndOffset(), "a transaction left open at " + this);
            FetchDataInfo info = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, true);
            Set<Long> abortedFirst = new HashSet<>();
            Map<Long, Long> abortedFrom = new HashMap<>();
            for (AbortedTransaction t : info.abortedTransactions.orElse(List.of())) {
                abortedFirst.add(t.firstOffset());
            }
            List<String> read = new ArrayList<>();
            for (RecordBatch b : info.records.batches()) {
                if (abortedFirst.contains(b.baseOffset())) {
                    abortedFrom.put(b.producerId(), b.baseOffset());
                }
                if (b.isControlBatch()) {
                    abortedFrom.remove(b.producerId());
                    continue;
                }
                if (b.isTransactional() && abortedFrom.containsKey(b.producerId())) {
                    continue;
                }
                for (Record r : b) {
                    read.add(StandardCharsets.UTF_8.decode(r.key()).toString());
                }
            }
            check(read.size() == committed.size() && new HashSet<>(read).equals(committed),
                    "read_committed at " + this + ": " + read + ", expected " + committed);
            check(log.activeProducers().size() == entries, "Kafka's entries at " + this + ": " + log.activeProducers());
        }

        @Override
        public String toString() {
            return log.name();
        }

        void close() {
            loop.mapper().close();
            log.close();
            stateLog.close();
            pathsLog.close();
        }
    }

    private static Iterable<? extends RecordBatch> read(UnifiedLog log, long from) throws IOException {
        if (from >= log.logEndOffset()) {
            return List.of();
        }
        return log.read(from, 1 << 20, FetchIsolation.LOG_END, true).records.batches();
    }

    private static void check(boolean holds, String what) {
        if (!holds) {
            throw new IllegalStateException("a topology did not mirror right: " + what);
        }
    }
}
