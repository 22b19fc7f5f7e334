package dev.mirrorpid.judge;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.MirrorPidException;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.kafka.KitAccess;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathCheckpoint;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TransactionVersion;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.VerificationGuard;

/**
 * One strategy's destination partition in a judged run: its own Kafka log (and, for mirrorpid,
 * its own {@code __mirror_state} and path-checkpoint logs and mapper), fed from raw fetches of
 * the sources by mirrorpid-kafka's {@link MirrorLoop}, or by a {@link NaiveLoop} for the peers
 * and for mirrorpid with its copies appended. The lanes of a run read the same source logs.
 */
final class Lane implements AutoCloseable {
    /** The destination topic's ID: the mapper's records name it. */
    static final Uuid DESTINATION_TOPIC_ID = Uuid.fromString("b2sGnXv0QmyCV7w0V0W8Hg");
    static final String DESTINATION_TOPIC = "orders-mirror";
    static final int LEADER_EPOCH = 1;
    static final MirrorPid MODULE = MirrorPid.load();

    /** What a new leader takes over of the paths' checkpoints. */
    enum Carried {
        /** Each path's offset and its positions, as mirrorpid-kafka stores them. */
        ALL,
        /**
         * Each path's offset only: the positions are lost at every leader change, so the copies
         * judgement starts again from Kafka's producer state alone (what the tests that show
         * the positions matter run).
         */
        OFFSETS
    }

    final Strategy strategy;
    final Destination destination;
    final Destination stateLogDir;
    final Destination pathLogDir;
    private final File snapshotFile;
    private int leaderEpoch = LEADER_EPOCH;
    StateLog state;
    private MirrorLoop loop;
    private NaiveLoop naive;
    /** Producers idle this long expire, in Kafka and in the mapper. */
    final int expirationMs;
    /** Whether mirrorpid's lane drops copies (the default). */
    final boolean dropCopies;
    /** What a leader change carries over. */
    Carried carried = Carried.ALL;
    /** How many batches were dropped as copies. */
    int copies;
    /** What Kafka refused, in order: "B: InvalidTxnStateException". */
    final List<String> refusals = new ArrayList<>();
    /** The next source offset of each path this leader mirrors, by source cluster ID. */
    private final Map<String, Long> next = new HashMap<>();
    /** The next offset of each cluster whose producers stand for this lane's own, by name. */
    private final Map<String, Long> local = new HashMap<>();
    /** The mapper's trust declaration, or null. */
    private final Map<String, List<String>> origins;
    /** The lane's clock: its destination log's, and the mirror's now. */
    private final Time time;
    /**
     * How long the loop's checkpoint may go unstored: 0, after every fetch, unless a test defers
     * it ({@link #checkpointEvery}), so that a leader change loses what the test arranges.
     */
    private long checkpointIntervalMs = 0;
    /** The crash a test armed, at the loop's next step of that kind. */
    private MirrorLoop.Step crashAt;

    /** A lane whose logs live under {@code home} (a chain has one lane per hop). */
    Lane(Strategy strategy, File home) throws IOException {
        this(strategy, home, true);
    }

    /** As above; mirrorpid's lane appends the copies it finds when not {@code dropCopies}. */
    Lane(Strategy strategy, File home, boolean dropCopies) throws IOException {
        this(strategy, home, dropCopies, Destination.PRODUCER_ID_EXPIRATION_MS);
    }

    /**
     * As above, with producers expiring after {@code expirationMs} idle: Kafka's {@code
     * producer.id.expiration.ms} at the destination, and the mapper's {@code
     * producerExpirationMs}, alike.
     */
    Lane(Strategy strategy, File home, boolean dropCopies, int expirationMs) throws IOException {
        this(strategy, home, dropCopies, expirationMs, Time.SYSTEM);
    }

    /** As above, the destination's log on {@code time}'s clock (a simulated scenario's replay). */
    Lane(Strategy strategy, File home, boolean dropCopies, int expirationMs, Time time) throws IOException {
        this(strategy, home, dropCopies, expirationMs, time, null);
    }

    /**
     * As above, mirrorpid's mapper with the trust declaration {@code origins} (each direct
     * source's origin clusters, by cluster ID; null: none).
     */
    Lane(Strategy strategy, File home, boolean dropCopies, int expirationMs, Time time,
            Map<String, List<String>> origins) throws IOException {
        this.strategy = strategy;
        this.time = time;
        this.origins = origins;
        this.dropCopies = dropCopies && strategy == Strategy.MIRRORPID;
        this.expirationMs = expirationMs;
        this.destination = Destination.expiring(home, DESTINATION_TOPIC, 0, expirationMs, time);
        this.snapshotFile = new File(home, "mirror-state.snapshot");
        if (strategy == Strategy.MIRRORPID) {
            // The host's own topics, written on the host's clock (their records carry wall time).
            this.stateLogDir = Destination.compacted(home, "__mirror_state", 0);
            this.pathLogDir = Destination.compacted(home, "__mirror_paths", 0);
            lead();
        } else {
            this.stateLogDir = null;
            this.pathLogDir = null;
            this.naive = new NaiveLoop(strategy, destination.log(), leaderEpoch);
        }
    }

    /** Becomes the partition's leader: the mapper and the paths recovered from their logs. */
    private void lead() {
        state = new StateLog(stateLogDir.log(), leaderEpoch, snapshotFile.toPath());
        PathLog paths = new PathLog(pathLogDir.log(), leaderEpoch);
        if (carried == Carried.OFFSETS) {
            Map<String, Set<Long>> positions = new HashMap<>();
            for (PathCheckpoint c : paths.read().paths().values()) {
                positions.put(c.path(), c.positions().keySet());
            }
            KitAccess.forget(paths, positions);
        }
        MirrorLoop.Steps steps = step -> {
            if (step == crashAt) {
                crashAt = null;
                throw new Crash(step);
            }
        };
        if (dropCopies) {
            loop = MirrorLoop.builder(destination.log(), leaderEpoch, state, paths)
                    .recover(MODULE, config()).steps(steps).checkpointIntervalMs(checkpointIntervalMs).build();
            next.clear();
            for (PathCheckpoint c : paths.read().paths().values()) {
                next.put(c.path(), c.nextOffset());
            }
        } else {
            PidMapper mapper = KitAccess.recover(state, MODULE::restore, () -> MODULE.newMapper(config()));
            naive = new NaiveLoop(destination.log(), leaderEpoch, state, mapper, steps);
        }
    }

    /**
     * Makes the loop store its checkpoint once {@code ms} passed on the lane's clock ({@link
     * Long#MAX_VALUE}: only when a test calls {@link MirrorLoop#checkpoint()} or expires); a
     * lane that mirrored nothing yet leads again to take it.
     */
    void checkpointEvery(long ms) {
        if (!next.isEmpty() || copies > 0) {
            throw new IllegalStateException("set the checkpoint interval before the lane mirrors");
        }
        checkpointIntervalMs = ms;
        loop().mapper().close();
        lead();
    }

    MapperConfig config() {
        MapperConfig.Builder b = MapperConfig.builder(DESTINATION_TOPIC_ID, 0).producerExpirationMs(expirationMs);
        if (origins != null) {
            b.origins(origins);
        }
        return b.build();
    }

    /** The lane's clock. */
    Time time() {
        return time;
    }

    /** The lane's mapper (null unless mirrorpid). */
    PidMapper mapper() {
        return loop != null ? loop.mapper() : naive.mapper();
    }

    /** The mirror loop (mirrorpid with copies dropped only). */
    MirrorLoop loop() {
        if (loop == null) {
            throw new IllegalStateException(label() + " has no MirrorLoop");
        }
        return loop;
    }

    /** Mirrors one fetch {@code fetched} of {@code path}, as this lane's loop does. */
    MirrorLoop.Appended mirror(String path, MemoryRecords fetched, long nowMs) {
        return loop != null ? loop.mirror(path, fetched, nowMs) : naive.mirror(path, fetched, nowMs);
    }

    /** The lane's name in the judge's tables. */
    String label() {
        return strategy == Strategy.MIRRORPID && !dropCopies ? "mirrorpid, copies appended" : strategy.label();
    }

    /**
     * A leader change (mirrorpid only): the old leader's mapper is gone, and the destination,
     * {@code __mirror_state} and path logs are closed and opened again from their directories,
     * Kafka rebuilding their producer state. The new leader, one epoch on, restores the latest
     * snapshot, replays the records after it, reads the paths' checkpoints ({@link #carried}
     * says what of them), and mirrors on from each path's checkpointed offset.
     */
    void elect() throws IOException {
        mapper().close();
        destination.reopen();
        stateLogDir.reopen();
        pathLogDir.reopen();
        leaderEpoch++;
        lead();
    }

    /**
     * Mirrors everything {@code source} has up to its high watermark; stops at the first append
     * Kafka refuses (recorded in {@link #refusals}), to retry from there next time, as a
     * replica fetcher retries a partition.
     */
    boolean mirror(SourceCluster source) throws IOException {
        long offset = next.getOrDefault(source.clusterId(), 0L);
        try (SourceFetcher fetcher = source.fetcher()) {
            while (true) {
                SourceFetcher.Fetched fetched = source.fetch(fetcher, offset, 1 << 20);
                if (fetched.records().sizeInBytes() == 0) {
                    return true;
                }
                MemoryRecords copy = Destination.copy(fetched.records());
                MirrorLoop.Appended appended;
                try {
                    appended = mirror(source.clusterId(), copy, time.milliseconds());
                } catch (KafkaException e) {
                    refusals.add(source.name() + ": " + refusal(e));
                    return false;
                } catch (Crash e) {
                    return false;
                }
                offset = appended.nextSourceOffset();
                copies += appended.copies();
                next.put(source.clusterId(), offset);
                if (offset >= fetched.highWatermark()) {
                    return true;
                }
            }
        }
    }

    /**
     * Mirrors what the hop log {@code upstream} (cluster {@code name}, ID {@code clusterId}) holds
     * from where this lane left off: a chain's next hop. The bytes are what Kafka's fetch path
     * reads from the log ({@code UnifiedLog.read}), since the upstream hop is a log, not a broker.
     */
    boolean mirror(String name, String clusterId, Destination upstream) throws IOException {
        return mirror(name, clusterId, upstream, Long.MAX_VALUE);
    }

    /**
     * As above, up to the batch that ends before upstream offset {@code until}: a path that lags.
     * Returns false when Kafka refused an append (recorded in {@link #refusals}) or the leader
     * crashed (a {@link #crashAt} armed).
     */
    boolean mirror(String name, String clusterId, Destination upstream, long until) throws IOException {
        return mirror(name, clusterId, upstream, until, batch -> true);
    }

    /**
     * As above, carrying only the batches {@code carry} accepts (a mirror's cycle check: the
     * others are left out of the fetch before anything sees it).
     */
    boolean mirror(String name, String clusterId, Destination upstream, long until, Predicate<RecordBatch> carry)
            throws IOException {
        long offset = next.getOrDefault(clusterId, 0L);
        while (offset < Math.min(until, upstream.log().logEndOffset())) {
            MemoryRecords fetched = upstream.fetch(offset, until);
            if (fetched.sizeInBytes() == 0) {
                throw new IllegalStateException(name + ": the hop's log read nothing at offset " + offset);
            }
            Destination.Carried carried = Destination.carried(fetched, offset, carry);
            long end = carried.end();
            if (carried.records().sizeInBytes() == 0) {
                offset = end;
                next.put(clusterId, offset);
                continue;
            }
            try {
                MirrorLoop.Appended appended = mirror(clusterId, carried.records(), time.milliseconds());
                offset = Math.max(appended.nextSourceOffset(), end);
                copies += appended.copies();
            } catch (KafkaException e) {
                refusals.add(name + ": " + refusal(e));
                return false;
            } catch (Crash e) {
                return false;
            }
            next.put(clusterId, offset);
        }
        return true;
    }

    /**
     * Appends the batches a local producer of this lane's own cluster wrote (read from {@code
     * local}, a cluster that stands for this hop's own producers) as the leader appends a
     * produce: origin CLIENT, offsets assigned by Kafka, epochs and sequences checked (a COMMIT or
     * ABORT marker as its transaction coordinator writes it, origin COORDINATOR). A batch
     * Kafka refuses is a write lost to its producer's application (recorded in {@link
     * #refusals}); one Kafka takes for a duplicate is acknowledged and not written.
     */
    void produceLocally(SourceCluster local) throws IOException {
        long offset = this.local.getOrDefault(local.name(), 0L);
        try (SourceFetcher fetcher = local.fetcher()) {
            while (true) {
                SourceFetcher.Fetched fetched = local.fetch(fetcher, offset, 1 << 20);
                if (fetched.records().sizeInBytes() == 0) {
                    return;
                }
                for (MutableRecordBatch batch : Destination.copy(fetched.records()).batches()) {
                    offset = batch.nextOffset();
                    ByteBuffer one = ByteBuffer.allocate(batch.sizeInBytes());
                    batch.writeTo(one);
                    one.flip();
                    // As the producer sent it: a produce request's batches start at offset 0.
                    MemoryRecords produced = MemoryRecords.readableRecords(one);
                    produced.batches().iterator().next().setLastOffset(batch.lastOffset() - batch.baseOffset());
                    appendLocally(produced, local.name(), TransactionVersion.TV_2);
                }
                this.local.put(local.name(), offset);
                if (offset >= fetched.highWatermark()) {
                    return;
                }
            }
        }
    }

    /**
     * Appends {@code produced}, one batch of this cluster's own producer {@code who}, as the
     * leader takes a produce (origin CLIENT; a COMMIT or ABORT marker as its transaction
     * coordinator writes it, origin COORDINATOR, under transaction version {@code tv}: from 2 on,
     * Kafka's default, a marker must carry an epoch above the producer's, the coordinator having
     * bumped it); returns the offset Kafka gave it, or -1 when Kafka refused it or took it for a
     * duplicate (recorded in {@link #refusals}).
     */
    long appendLocally(MemoryRecords produced, String who, TransactionVersion tv) throws IOException {
        boolean control = produced.batches().iterator().next().isControlBatch();
        try {
            long before = destination.log().logEndOffset();
            if (control) {
                destination.log().appendAsLeader(produced, leaderEpoch, AppendOrigin.COORDINATOR,
                        RequestLocal.noCaching(), VerificationGuard.SENTINEL, tv.featureLevel());
            } else {
                destination.log().appendAsLeader(produced, leaderEpoch);
            }
            if (destination.log().logEndOffset() == before) {
                if (!control) {
                    refusals.add(who + " local: duplicate, acknowledged and not written");
                }
                return -1;
            }
            return before;
        } catch (KafkaException e) {
            refusals.add(who + " local: " + e.getClass().getSimpleName());
            return -1;
        }
    }

    /** What Kafka or the mapper refused: the exception's class, and the mapper's code. */
    private static String refusal(KafkaException e) {
        return e instanceof MirrorPidException m ? m.code().name() : e.getClass().getSimpleName();
    }

    /** What a test's crash hook throws: the leader died at that point. */
    static final class Crash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Crash(MirrorLoop.Step step) {
            super("the leader crashed after " + step);
        }
    }

    /** Crashes this lane's loop the next time it reaches {@code step} (null: never). */
    void crashAt(MirrorLoop.Step step) {
        crashAt = step;
    }

    @Override
    public void close() throws IOException {
        destination.close();
        if (stateLogDir != null) {
            stateLogDir.close();
            pathLogDir.close();
        }
        if (mapper() != null) {
            mapper().close();
        }
    }
}
