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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * The README's mirror of one destination partition, whole: two sources whose producers both
 * have PID 0 (east's transactional, west's idempotent), a leader change while east's
 * transaction is open, east's COMMIT through the next leader, expiry and a snapshot. The three
 * logs are what a broker's log manager would hand the leader; here they are made by hand.
 */
public final class Mirror {
    private static final String EAST = "east-cluster-id";
    private static final String WEST = "west-cluster-id";

    private Mirror() {}

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("mirrorpid-example");
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        try (Logs logs = new Logs(dir, scheduler)) {
            run(logs.destination, logs.mirrorState, logs.mirrorPaths, dir.resolve("mirror-state.snapshot"));
        } finally {
            scheduler.shutdown();
            try (Stream<Path> all = Files.walk(dir)) {
                all.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    static void run(UnifiedLog destination, UnifiedLog mirrorStateLog, UnifiedLog mirrorPathsLog, Path snapshotFile)
            throws IOException {
        Uuid topicId = Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA");
        long nowMs = System.currentTimeMillis();

        // Once per broker: the module. Per destination partition: its config, with the trust
        // declaration (east and west each carry only their own producers).
        MirrorPid module = MirrorPid.load();
        MapperConfig config = MapperConfig.builder(topicId, 0).origin(EAST).origin(WEST).build();

        // What the broker tells the mirror: the high watermark, and when an append is committed
        // (yours over Partition and ReplicaManager; singleReplica where partitions have one replica).
        Broker broker = Broker.singleReplica(Time.SYSTEM);

        // Becoming leader of the partition: recover, then fetch each path from where it stopped.
        int leaderEpoch = 1;
        StateLog state = new StateLog(mirrorStateLog, leaderEpoch, broker, snapshotFile);
        PathLog paths = new PathLog(mirrorPathsLog, leaderEpoch, broker);
        MirrorLoop loop = MirrorLoop.lead(module, config, broker, destination, leaderEpoch, state, paths);
        Map<String, PathCheckpoint> resume = paths.read().paths();
        check(resume.isEmpty(), "a new partition resumes nothing");

        // Each fetch of a source partition: rewrite, persist, confirm, drop copies, place,
        // append; the paths' checkpoints once a second.
        MemoryRecords fetched = MemoryRecords.withTransactionalRecords(0L, Compression.NONE, 0L, (short) 0, 0, 0,
                new SimpleRecord("e0".getBytes(), "v".getBytes())); // east's transaction, left open
        MirrorLoop.Appended east = loop.mirror(EAST, fetched, nowMs); // then fetch from east.nextSourceOffset()
        fetched = MemoryRecords.withIdempotentRecords(0L, Compression.NONE, 0L, (short) 0, 0, 0,
                new SimpleRecord("w0".getBytes(), "v".getBytes()), new SimpleRecord("w1".getBytes(), "v".getBytes()));
        MirrorLoop.Appended west = loop.mirror(WEST, fetched, nowMs);
        check(east.batches() == 1 && west.batches() == 1 && east.nextSourceOffset() == 1
                && west.nextSourceOffset() == 2, "both fetches appended: " + east + ", " + west);

        // Losing leadership: the paths' checkpoints stored, so that the next leader fetches
        // nothing again; the mapper's memory goes with it.
        loop.checkpoint();
        loop.mapper().close();

        // The next leader: the same three logs, one epoch on.
        leaderEpoch = 2;
        state = new StateLog(mirrorStateLog, leaderEpoch, broker, snapshotFile);
        paths = new PathLog(mirrorPathsLog, leaderEpoch, broker);
        loop = MirrorLoop.lead(module, config, broker, destination, leaderEpoch, state, paths);
        resume = paths.read().paths();
        check(resume.get(EAST).nextOffset() == 1 && resume.get(WEST).nextOffset() == 2, "resumed: " + resume);

        // East's COMMIT, fetched from offset 1: it closes the transaction its own path opened.
        fetched = MemoryRecords.withEndTransactionMarker(1L, nowMs, 0, 0L, (short) 0,
                new EndTransactionMarker(ControlRecordType.COMMIT, 0));
        MirrorLoop.Appended commit = loop.mirror(EAST, fetched, nowMs);
        check(commit.batches() == 1 && commit.copies() == 0, "the COMMIT appended: " + commit);

        // Every few minutes: expire idle producers, and snapshot so that a new leader replays
        // only the records after it.
        loop.expire(nowMs);
        loop.snapshot();

        destination.updateHighWatermark(destination.logEndOffset());
        check(destination.lastStableOffset() == destination.logEndOffset(), "no transaction left open");
        check(destination.activeProducers().size() == 2, "two producers with PID 0 at their sources, two here");
        long[] pids = new long[2];
        int i = 0;
        for (RecordBatch b : destination.read(0, 1 << 20,
                org.apache.kafka.server.storage.log.FetchIsolation.LOG_END, true).records.batches()) {
            if (!b.isControlBatch()) {
                pids[i++] = b.producerId();
            }
        }
        check(pids[0] != pids[1] && pids[0] > 0 && pids[1] > 0, "each producer its own PID: " + pids[0] + ", "
                + pids[1]);
        // Losing leadership: the paths' checkpoints stored, so that the next leader fetches
        // nothing again; the mapper's memory goes with it.
        loop.checkpoint();
        loop.mapper().close();
        System.out.println("east's and west's producer 0 are " + pids[0] + " and " + pids[1]
                + " here; east's transaction committed through a leader change");
    }

    private static void check(boolean holds, String what) {
        if (!holds) {
            throw new IllegalStateException("the mirror did not do what the README says: " + what);
        }
    }

    /** The three logs of one destination partition, as a broker's log manager would open them. */
    private static final class Logs implements AutoCloseable {
        final UnifiedLog destination;
        final UnifiedLog mirrorState;
        final UnifiedLog mirrorPaths;

        Logs(Path dir, KafkaScheduler scheduler) throws IOException {
            Properties compacted = new Properties();
            compacted.put("cleanup.policy", "compact");
            destination = open(dir.resolve("orders-0"), new Properties(), scheduler);
            mirrorState = open(dir.resolve("__mirror_state-0"), compacted, scheduler);
            mirrorPaths = open(dir.resolve("__mirror_paths-0"), compacted, scheduler);
        }

        private static UnifiedLog open(Path dir, Properties config, KafkaScheduler scheduler) throws IOException {
            Files.createDirectories(dir);
            return UnifiedLog.create(dir.toFile(), new LogConfig(config), 0L, 0L, scheduler, new BrokerTopicStats(false),
                    Time.SYSTEM, 900_000, new ProducerStateManagerConfig(86_400_000, false), 600_000,
                    new LogDirFailureChannel(10), true, Optional.empty());
        }

        @Override
        public void close() {
            destination.close();
            mirrorState.close();
            mirrorPaths.close();
        }
    }
}
