package dev.mirrorpid.kafka;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TransactionVersion;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.VerificationGuard;

/**
 * One strategy's destination partition in a judged run: its own Kafka log (and, for mirrorpid,
 * its own {@code __mirror_state} log and mapper), fed by a {@link MirrorLoop} from raw fetches
 * of the sources. The lanes of a run read the same source logs.
 */
final class Lane implements AutoCloseable {
    /** The destination topic's ID: the mapper's records name it. */
    static final Uuid DESTINATION_TOPIC_ID = Uuid.fromString("b2sGnXv0QmyCV7w0V0W8Hg");
    static final String DESTINATION_TOPIC = "orders-mirror";
    static final int LEADER_EPOCH = 1;
    static final MirrorPid MODULE = MirrorPid.load();

    final Strategy strategy;
    final Destination destination;
    final Destination stateLogDir;
    private final File snapshotFile;
    private int leaderEpoch = LEADER_EPOCH;
    StateLog state;
    MirrorLoop loop;
    /** Producers idle this long expire, in Kafka and in the mapper. */
    final int expirationMs;
    /** Whether mirrorpid's lane drops copies (the default). */
    final boolean dropCopies;
    /** How many batches were dropped as copies. */
    int copies;
    /** What Kafka refused, in order: "B: InvalidTxnStateException". */
    final List<String> refusals = new ArrayList<>();
    private final Map<String, Long> next = new HashMap<>();

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
        this.strategy = strategy;
        this.dropCopies = dropCopies && strategy == Strategy.MIRRORPID;
        this.expirationMs = expirationMs;
        this.destination = Destination.expiring(home, DESTINATION_TOPIC, 0, expirationMs, time);
        this.snapshotFile = new File(home, "mirror-state.snapshot");
        if (strategy == Strategy.MIRRORPID) {
            // The host's own topic, written on the host's clock (its records carry wall time).
            this.stateLogDir = Destination.compacted(home, "__mirror_state", 0);
            this.state = new StateLog(stateLogDir.log(), leaderEpoch, snapshotFile.toPath());
            PidMapper mapper = MODULE.newMapper(config());
            this.loop = new MirrorLoop(strategy, destination.log(), leaderEpoch, state, mapper, this.dropCopies);
        } else {
            this.stateLogDir = null;
            this.state = null;
            this.loop = new MirrorLoop(strategy, destination.log(), leaderEpoch, null, null);
        }
    }

    MapperConfig config() {
        return MapperConfig.builder(DESTINATION_TOPIC_ID, 0).producerExpirationMs(expirationMs).build();
    }

    /** The lane's name in the judge's tables. */
    String label() {
        return strategy == Strategy.MIRRORPID && !dropCopies ? "mirrorpid, copies appended" : strategy.label();
    }

    /**
     * A leader change (mirrorpid only): the old leader's mapper is gone, and the destination and
     * {@code __mirror_state} logs are closed and opened again from their directories, Kafka
     * rebuilding their producer state. The new leader, one epoch on, restores the latest
     * snapshot, replays the records after it, and mirrors on.
     */
    void elect() throws IOException {
        loop.mapper().close();
        destination.reopen();
        stateLogDir.reopen();
        leaderEpoch++;
        state = new StateLog(stateLogDir.log(), leaderEpoch, snapshotFile.toPath());
        PidMapper recovered = state.recover(MODULE::restore, () -> MODULE.newMapper(config()));
        loop = new MirrorLoop(strategy, destination.log(), leaderEpoch, state, recovered, dropCopies);
    }

    /**
     * Mirrors everything {@code source} has up to its high watermark; stops at the first append
     * Kafka refuses (recorded in {@link #refusals}), to retry from there next time, as a
     * replica fetcher retries a partition.
     */
    boolean mirror(SourceCluster source) throws IOException {
        long offset = next.getOrDefault(source.name(), 0L);
        try (SourceFetcher fetcher = source.fetcher()) {
            while (true) {
                SourceFetcher.Fetched fetched = source.fetch(fetcher, offset, 1 << 20);
                if (fetched.records().sizeInBytes() == 0) {
                    return true;
                }
                MemoryRecords copy = Destination.copy(fetched.records());
                MirrorLoop.Appended appended;
                try {
                    appended = loop.mirror(source.clusterId(), copy, System.currentTimeMillis());
                } catch (KafkaException e) {
                    refusals.add(source.name() + ": " + e.getClass().getSimpleName());
                    return false;
                } catch (Crash e) {
                    return false;
                }
                offset = appended.nextSourceOffset();
                copies += appended.copies();
                next.put(source.name(), offset);
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
        long offset = next.getOrDefault(name, 0L);
        while (offset < upstream.log().logEndOffset()) {
            MemoryRecords fetched = upstream.fetch(offset);
            if (fetched.sizeInBytes() == 0) {
                throw new IllegalStateException(name + ": the hop's log read nothing at offset " + offset);
            }
            try {
                MirrorLoop.Appended appended = loop.mirror(clusterId, fetched, System.currentTimeMillis());
                offset = appended.nextSourceOffset();
                copies += appended.copies();
            } catch (KafkaException e) {
                refusals.add(name + ": " + e.getClass().getSimpleName());
                return false;
            }
            next.put(name, offset);
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
        long offset = next.getOrDefault(local.name() + "-local", 0L);
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
                next.put(local.name() + "-local", offset);
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

    /** What a test's crash hook throws: the leader died at that point. */
    static final class Crash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Crash(MirrorLoop.Point point) {
            super("the leader crashed: " + point);
        }
    }

    /** Crashes this lane's loop the next time it reaches {@code point}. */
    void crashAt(MirrorLoop.Point point) {
        boolean[] armed = {true};
        loop.crashAt(reached -> {
            if (armed[0] && reached == point) {
                armed[0] = false;
                throw new Crash(point);
            }
        });
    }

    @Override
    public void close() throws IOException {
        destination.close();
        if (stateLogDir != null) {
            stateLogDir.close();
        }
        if (loop.mapper() != null) {
            loop.mapper().close();
        }
    }
}
