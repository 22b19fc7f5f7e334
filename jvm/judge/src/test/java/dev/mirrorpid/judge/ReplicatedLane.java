package dev.mirrorpid.judge;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPidException;
import dev.mirrorpid.kafka.Broker;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathCheckpoint;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Predicate;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.server.common.TransactionVersion;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.log.VerificationGuard;

/**
 * A replicated destination partition and its mirror: the destination, {@code __mirror_state}
 * and {@code __mirror_paths}, each a {@link ReplicatedPartition} of three replicas whose leaders
 * fail independently, and mirrorpid-kafka's {@link MirrorLoop} on the destination's leader,
 * told what is committed by this lane, the {@link Broker} it runs on. The mirror's snapshot
 * file is the destination leader's broker's own: a new leader on another broker has another
 * file, or none.
 *
 * <p>Faults are armed and happen at the worst moments: the destination's leader dies at a step
 * of the next fetch ({@link #crashAt}), the leader of {@code __mirror_state} or {@code
 * __mirror_paths} dies after an append and before any follower fetched it ({@link
 * #dieBeforeReplication}). When any of the three leaders changes, the mirror leads anew with
 * the new leaders' logs, as the kit's docs ask of a broker.
 */
final class ReplicatedLane implements AutoCloseable, Broker {
    final String name;
    final ReplicatedPartition destination;
    final ReplicatedPartition state;
    final ReplicatedPartition paths;
    private final File home;
    private final SimClock clock;
    private final int expirationMs;
    private MirrorLoop loop;
    /** The next source offset of each path, by source cluster ID. */
    private final Map<String, Long> next = new HashMap<>();
    /** What Kafka or the mapper refused, in order. */
    final List<String> refusals = new ArrayList<>();
    /** How many batches were dropped as copies. */
    int copies;
    /** How many times the mirror became leader. */
    int leads;
    /** The mutation: the destination's high watermark answered as its log end. */
    boolean checkpointAtLogEnd;
    private MirrorLoop.Step crashAt;
    private ReplicatedPartition dieBeforeReplication;

    /** The three partitions of {@code name} under {@code home}, on {@code clock}; the mirror leads. */
    ReplicatedLane(String name, File home, SimClock clock, int expirationMs) throws IOException {
        this.name = name;
        this.home = home;
        this.clock = clock;
        this.expirationMs = expirationMs;
        this.destination = new ReplicatedPartition(home, Lane.DESTINATION_TOPIC, new Properties(), expirationMs, clock);
        Properties compact = new Properties();
        compact.put("cleanup.policy", "compact");
        this.state = new ReplicatedPartition(home, "__mirror_state", compact, expirationMs, clock);
        this.paths = new ReplicatedPartition(home, "__mirror_paths", compact, expirationMs, clock);
        lead();
    }

    MapperConfig config() {
        return MapperConfig.builder(Lane.DESTINATION_TOPIC_ID, 0).producerExpirationMs(expirationMs).build();
    }

    /** The snapshot file of {@code broker}. */
    File snapshotFile(int broker) {
        return new File(new File(home, "broker-" + broker), "mirror-state.snapshot");
    }

    /**
     * The mirror leads anew on the destination's leader, over the three leaders' logs; when a
     * partition has too few replicas in sync to commit, the missing brokers return first.
     */
    void lead() throws IOException {
        if (loop != null) {
            loop.mapper().close();
            loop = null;
        }
        for (int attempt = 0;; attempt++) {
            try {
                StateLog st = new StateLog(state.leaderLog(), state.epoch(), this,
                        snapshotFile(destination.leader()).toPath());
                PathLog pl = new PathLog(paths.leaderLog(), paths.epoch(), this);
                loop = MirrorLoop.builder(destination.leaderLog(), destination.epoch(), st, pl).broker(this)
                        .recover(Lane.MODULE, config()).checkpointIntervalMs(0).steps(this::step).build();
                next.clear();
                for (PathCheckpoint c : pl.read().paths().values()) {
                    next.put(c.path(), c.nextOffset());
                }
                leads++;
                return;
            } catch (NotEnoughReplicasException | NotLeaderOrFollowerException e) {
                if (loop != null) {
                    loop.mapper().close();
                    loop = null;
                }
                if (attempt == 3) {
                    throw e;
                }
                settle();
            }
        }
    }

    private void step(MirrorLoop.Step step) {
        if (step == crashAt) {
            crashAt = null;
            throw new Lane.Crash(step);
        }
    }

    /** The mirror's loop. */
    MirrorLoop loop() {
        return loop;
    }

    /** The destination's leader dies the next time the mirror reaches {@code step}. */
    void crashAt(MirrorLoop.Step step) {
        crashAt = step;
    }

    /** {@code partition}'s leader dies after its next append, before any follower fetches it. */
    void dieBeforeReplication(ReplicatedPartition partition) {
        dieBeforeReplication = partition;
    }

    /** Every broker of the three partitions back, fetched up and in sync. */
    void settle() throws IOException {
        for (ReplicatedPartition p : partitions()) {
            p.settle();
        }
    }

    List<ReplicatedPartition> partitions() {
        return List.of(destination, state, paths);
    }

    /** {@code p}'s leader dies; the mirror leads anew over the new leader. */
    void kill(ReplicatedPartition p) throws IOException {
        p.killLeader();
        lead();
    }

    // The broker the mirror runs on.

    @Override
    public Time time() {
        return clock;
    }

    private ReplicatedPartition owner(UnifiedLog log) {
        for (ReplicatedPartition p : partitions()) {
            if (p.isLeaderLog(log)) {
                return p;
            }
        }
        throw new NotLeaderOrFollowerException("this broker no longer leads the log's partition");
    }

    @Override
    public long highWatermark(UnifiedLog log) {
        ReplicatedPartition p = owner(log);
        return checkpointAtLogEnd && p == destination ? log.logEndOffset() : p.highWatermark();
    }

    @Override
    public void awaitCommitted(UnifiedLog log, long offset) {
        ReplicatedPartition p = owner(log);
        // A leader with no in-sync replica to take over is not lost (no unclean election).
        if (p == dieBeforeReplication && p.canLoseLeader()) {
            dieBeforeReplication = null;
            try {
                p.killLeader();
            } catch (IOException e) {
                throw new KafkaException(e);
            }
            throw new NotLeaderOrFollowerException(p.name + "'s leader died before its followers fetched");
        }
        p.replicate();
        if (p.inSync() < ReplicatedPartition.MIN_INSYNC) {
            throw new NotEnoughReplicasException(p.name + " has " + p.inSync() + " replicas in sync");
        }
        if (p.highWatermark() < offset) {
            throw new NotEnoughReplicasException(p.name + "'s high watermark " + p.highWatermark()
                    + " is below " + offset);
        }
    }

    // Mirroring.

    /** Where a path fetches from: a log, and how far a consumer of it may read. */
    interface Upstream {
        /** The offset a fetch may read up to: the log end of one replica, the high watermark of several. */
        long end();

        /** The batches from {@code offset} that end before {@code until}. */
        MemoryRecords fetch(long offset, long until) throws IOException;
    }

    /** A single-replica log as an upstream. */
    static Upstream of(Destination log) {
        return new Upstream() {
            @Override
            public long end() {
                return log.log().logEndOffset();
            }

            @Override
            public MemoryRecords fetch(long offset, long until) throws IOException {
                return log.fetch(offset, until);
            }
        };
    }

    /** This lane's destination as another's upstream: its leader, below its high watermark. */
    Upstream asUpstream() {
        return new Upstream() {
            @Override
            public long end() {
                return destination.highWatermark();
            }

            @Override
            public MemoryRecords fetch(long offset, long until) throws IOException {
                return Destination.fetch(destination.leaderLog(), offset, until);
            }
        };
    }

    /**
     * Mirrors what {@code upstream} holds for path {@code clusterId} up to offset {@code until},
     * the batches {@code carry} accepts, from where the mirror left off. A crash or a lost
     * leader ends the call (false) with the mirror leading anew; a refusal too (recorded).
     */
    boolean mirror(String clusterId, Upstream upstream, long until, Predicate<RecordBatch> carry) throws IOException {
        long offset = next.getOrDefault(clusterId, 0L);
        while (offset < Math.min(until, upstream.end())) {
            MemoryRecords fetched = upstream.fetch(offset, Math.min(until, upstream.end()));
            if (fetched.sizeInBytes() == 0) {
                throw new IllegalStateException(name + ": the upstream read nothing at offset " + offset);
            }
            Destination.Carried carried = Destination.carried(fetched, offset, carry);
            long end = carried.end();
            if (carried.records().sizeInBytes() > 0) {
                try {
                    MirrorLoop.Appended appended = loop.mirror(clusterId, carried.records(), clock.milliseconds());
                    end = Math.max(appended.nextSourceOffset(), end);
                    copies += appended.copies();
                } catch (Lane.Crash e) {
                    if (!destination.canLoseLeader()) {
                        destination.settle();
                    }
                    kill(destination);
                    return false;
                } catch (MirrorPidException e) {
                    refusals.add(clusterId + ": " + e.code().name());
                    return false;
                } catch (NotLeaderOrFollowerException | NotEnoughReplicasException e) {
                    lead();
                    return false;
                } catch (KafkaException e) {
                    refusals.add(clusterId + ": " + e.getClass().getSimpleName());
                    return false;
                }
            }
            offset = end;
            next.put(clusterId, offset);
        }
        return true;
    }

    /**
     * A local producer's batch, as the leader takes a produce with {@code acks=all}: appended as
     * leader (origin CLIENT; a marker as its coordinator writes it), then committed. When the
     * leader dies before that (a fault armed with {@link #dieBeforeReplication} on the
     * destination) the producer retries on the new leader, which Kafka deduplicates if the batch
     * survived. Returns false when Kafka refused it.
     */
    boolean produce(MemoryRecords batch, TransactionVersion tv) throws IOException {
        boolean control = batch.batches().iterator().next().isControlBatch();
        for (int attempt = 0; attempt < 3; attempt++) {
            UnifiedLog log = destination.leaderLog();
            try {
                MemoryRecords copy = Destination.copy(batch);
                if (control) {
                    log.appendAsLeader(copy, destination.epoch(), AppendOrigin.COORDINATOR, RequestLocal.noCaching(),
                            VerificationGuard.SENTINEL, tv.featureLevel());
                } else {
                    log.appendAsLeader(copy, destination.epoch());
                }
                awaitCommitted(log, log.logEndOffset());
                return true;
            } catch (NotLeaderOrFollowerException e) {
                lead();
            } catch (NotEnoughReplicasException e) {
                destination.settle();
                return true;
            } catch (KafkaException e) {
                refusals.add(name + " local: " + e.getClass().getSimpleName());
                return false;
            }
        }
        throw new IllegalStateException(name + ": a local produce failed three times");
    }

    /**
     * Everything settled: every broker back and in sync, the mirror leading anew; what a
     * consumer then reads is what the run committed.
     */
    void finish() throws IOException {
        crashAt = null;
        dieBeforeReplication = null;
        settle();
        lead();
        settle();
    }

    /** What a read_committed consumer of the destination reads now, from its leader. */
    List<Judged.Rec> readCommitted() throws IOException {
        return Destination.readCommitted(destination.leaderLog());
    }

    @Override
    public void close() throws IOException {
        if (loop != null) {
            loop.mapper().close();
        }
        for (ReplicatedPartition p : partitions()) {
            p.close();
        }
    }
}
