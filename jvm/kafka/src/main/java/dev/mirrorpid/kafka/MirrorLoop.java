package dev.mirrorpid.kafka;

import dev.mirrorpid.Durability;
import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import dev.mirrorpid.StateRecord;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * The mirror of one destination partition, run by the broker that leads it: fetched batches of
 * the partition's sources in, appended to its Kafka log, each producer under a PID of its own.
 *
 * <p>What it needs from the broker is a {@link Broker}: the destination's high watermark, and
 * {@code __mirror_state} and {@code __mirror_paths} appends that return once committed. A leader
 * {@linkplain #lead starts} it once each of the three partitions has committed what its leader
 * holds: the mapper recovered from the committed records ({@link StateLog#recover}) and every
 * path's checkpoint ({@link PathLog#read()}). Then it calls {@link #mirror} for each fetch, which
 * runs {@code docs/DESIGN.md}'s protocol in order:
 *
 * <ol>
 *   <li><b>rewrite</b> the fetched bytes in place: each batch's PID and CRC ({@link
 *       PidMapper#rewrite}); new bindings are pending ({@link Step#REWRITTEN});
 *   <li><b>persist</b> the {@code __mirror_state} records the rewrite returned and wait until
 *       they are committed ({@link StateLog#append}, {@link Broker#awaitCommitted}: replicated to
 *       the in-sync replicas, as {@code acks=all}); on failure {@link PidMapper#abort()} and give
 *       up this fetch ({@link Step#PERSISTED});
 *   <li><b>confirm</b> ({@link PidMapper#confirm()}): the bindings are durable ({@link
 *       Step#CONFIRMED});
 *   <li><b>drop copies</b>: a batch the destination already holds, come by a second path or
 *       again after a crash, is left out ({@link Copies}), since Kafka would append it twice;
 *   <li><b>place</b> the batches: each batch's base offset becomes the destination's next
 *       offset (several sources share the partition) and its partition leader epoch the
 *       leader's. Both lie outside the CRC, so the rewrite's CRC patch stays valid;
 *   <li><b>append</b> with origin REPLICATION ({@link UnifiedLog#appendAsFollower}), which keeps
 *       those offsets and checks every CRC ({@link Step#APPENDED}). The followers fetch them
 *       from here; the loop does not wait for them;
 *   <li><b>checkpoint</b> the paths, when the last checkpoint is {@linkplain
 *       Builder#checkpointIntervalMs older than the interval}: each path's next source offset
 *       and where it now stands in each producer's stream, every path that moved since, in one
 *       batch ({@link PathLog#store}), <b>as far as the destination's high watermark</b>: a
 *       fetch whose batches are not all below it stays unstored until they are ({@link
 *       Step#CHECKPOINTED});
 *   <li><b>snapshot</b> the mapper when the rewrite asks for one ({@link
 *       RewriteResult#snapshotRequired()}; {@link StateLog#storeSnapshot}).
 * </ol>
 *
 * <p>A crash of any of the three partitions' leaders, at any point, loses no committed record
 * and makes none visible twice from an idempotent or transactional producer: before step 2
 * returns the new leader maps the same batches the same way, from the records or afresh; a
 * batch appended and not checkpointed is fetched again from the path's last checkpoint and
 * dropped as a copy when the destination kept it, appended again when the destination's new
 * leader lacks it (it was never below the high watermark, so no consumer read it). A batch
 * without a producer ID cannot be told from its copy: after a crash between its append and the
 * checkpoint that covers it, it is appended again (at-least-once, as Kafka's own producer without
 * idempotence is). When any of the three
 * leaders moves, the broker stops this loop (its calls then throw) and leads anew with the new
 * leaders' logs. If the mapper's module instance fails, a loop that {@linkplain Builder#recover
 * recovered} its mapper recovers another from the state log and carries on, mapping as before.
 *
 * <p>The checkpoint is a Kafka append of its own, so it is taken once an interval, as Kafka
 * checkpoints its replicas' high watermarks: what a crash costs is the interval's fetches,
 * fetched and judged again. The class is single-threaded, as a partition's fetcher is.
 */
public final class MirrorLoop {
    private final UnifiedLog destination;
    private final int leaderEpoch;
    private final StateLog state;
    private final PathLog paths;
    private final RecoveringMapper mapper;
    private final Copies copies;
    private final Steps steps;
    private final Broker broker;
    private final long checkpointIntervalMs;
    /** What the paths moved since the last checkpoint, stored as far as the high watermark. */
    private final Unstored unstored = new Unstored();
    /** The clock of the fetch that stored the last checkpoint (of the first fetch, before one). */
    private long storedMs = Long.MIN_VALUE;

    /**
     * How long a path's progress may go unstored by default: one second, so that a checkpoint
     * (a Kafka append of its own) costs a busy partition one append a second, and a new leader
     * fetches and judges again at most about a second of each path.
     */
    public static final long DEFAULT_CHECKPOINT_INTERVAL_MS = 1_000;

    /** The steps of {@link #mirror}, each reached once its work is done. */
    public enum Step {
        /** Rewritten; the bindings are pending, nothing is persisted. */
        REWRITTEN,
        /** The records are committed in {@code __mirror_state}; nothing confirmed, nothing appended. */
        PERSISTED,
        /** Confirmed; the batches are not appended. */
        CONFIRMED,
        /** Appended to the leader's log; the path's checkpoint is not stored. */
        APPENDED,
        /** A checkpoint was stored (only in a call that stores one). */
        CHECKPOINTED
    }

    /**
     * Told of each {@link Step} as {@link #mirror} reaches it, for metrics or tests. An exception
     * it throws leaves the call there, as a crash at that point would (the loop is then done
     * with: the next leader recovers).
     */
    @FunctionalInterface
    public interface Steps {
        /** {@code step} is done. */
        void reached(Step step);
    }

    /**
     * What one call did.
     *
     * @param firstOffset the destination offset of the first appended record; -1 if nothing was
     *     appended
     * @param lastOffset the destination offset of the last appended record; -1 if nothing was
     *     appended
     * @param batches how many whole batches were appended
     * @param copies how many batches were copies the destination already held, and were left out
     * @param nextSourceOffset the source offset to fetch from next; -1 when the fetch held no
     *     whole batch (fetch again from where it started)
     */
    public record Appended(long firstOffset, long lastOffset, int batches, int copies, long nextSourceOffset) {}

    private MirrorLoop(Builder b, RecoveringMapper mapper, Copies copies) {
        this.destination = Objects.requireNonNull(b.destination, "destination");
        this.leaderEpoch = b.leaderEpoch;
        this.state = Objects.requireNonNull(b.state, "state");
        this.paths = Objects.requireNonNull(b.paths, "paths");
        this.mapper = mapper;
        this.copies = copies;
        this.steps = b.steps;
        this.broker = b.broker;
        this.checkpointIntervalMs = b.checkpointIntervalMs;
    }

    /**
     * Becomes the mirror of {@code destination} as its leader in {@code leaderEpoch} on {@code
     * broker}: once each of the three partitions has committed what its leader holds, the
     * mapper recovered from {@code state} (this broker's snapshot when it is the latest and the
     * records after it, or a mapper of {@code config} and every record), and every path's
     * checkpoint read from {@code paths}. The caller closes the loop's mapper ({@link #mapper()})
     * when it stops leading.
     *
     * @throws CorruptStateException a stored snapshot or checkpoint cannot be read
     * @throws dev.mirrorpid.MirrorPidException the module refused the snapshot or a record
     * @throws InvalidConfigurationException {@code config}'s durability is not {@link
     *     Durability#BINDINGS}
     * @throws org.apache.kafka.common.KafkaException a partition's log is not known to be
     *     committed ({@link Broker#awaitCommitted}): lead again once its leader settles
     */
    public static MirrorLoop lead(MirrorPid module, MapperConfig config, Broker broker, UnifiedLog destination,
            int leaderEpoch, StateLog state, PathLog paths) {
        return builder(destination, leaderEpoch, state, paths).broker(broker).recover(module, config).build();
    }

    /** A builder of a loop over the given logs; see {@link #lead} for the usual one. */
    public static Builder builder(UnifiedLog destination, int leaderEpoch, StateLog state, PathLog paths) {
        return new Builder(destination, leaderEpoch, state, paths);
    }

    /** Builds a {@link MirrorLoop}; a mapper is required (given, or recovered). */
    public static final class Builder {
        private final UnifiedLog destination;
        private final int leaderEpoch;
        private final StateLog state;
        private final PathLog paths;
        private Supplier<PidMapper> mapper;
        /** Whether the mapper is recovered here (closed here if the loop is not built), not given. */
        private boolean recovers;
        private long horizonMs = Copies.DEFAULT_HORIZON_MS;
        private long checkpointIntervalMs = DEFAULT_CHECKPOINT_INTERVAL_MS;
        private Steps steps = step -> {};
        private Broker broker = Broker.singleReplica(Time.SYSTEM);

        private Builder(UnifiedLog destination, int leaderEpoch, StateLog state, PathLog paths) {
            this.destination = destination;
            this.leaderEpoch = leaderEpoch;
            this.state = state;
            this.paths = paths;
        }

        /**
         * Recovers the mapper from the state log at {@link #build()}, fresh ones of {@code
         * config}.
         *
         * @throws InvalidConfigurationException {@code config}'s durability is {@link
         *     Durability#COLLISIONS}: a binding at salt 0 then has no record, and a new leader on
         *     a broker without the old leader's snapshot could give its slot to another source's
         *     producer, whose committed batches {@link Copies} would drop as the first one's
         */
        public Builder recover(MirrorPid module, MapperConfig config) {
            Objects.requireNonNull(module, "module");
            Objects.requireNonNull(config, "config");
            if (config.durability() != Durability.BINDINGS) {
                throw new InvalidConfigurationException("a mirror loop needs durability " + Durability.BINDINGS
                        + ", not " + config.durability() + ": a binding without a record cannot be replayed "
                        + "exactly by a new leader on another broker, which has not the old leader's snapshot");
            }
            this.mapper = () -> state.recover(module::restore, () -> module.newMapper(config));
            this.recovers = true;
            return this;
        }

        /** Uses {@code mapper}, already recovered, instead. */
        public Builder mapper(PidMapper mapper) {
            Objects.requireNonNull(mapper, "mapper");
            this.mapper = () -> mapper;
            this.recovers = false;
            return this;
        }

        /** How long positions of PIDs Kafka expired are kept ({@link Copies#DEFAULT_HORIZON_MS}). */
        public Builder copiesHorizonMs(long ms) {
            this.horizonMs = ms;
            return this;
        }

        /**
         * How long, on the clock {@link #mirror} is given, the paths' progress may go unstored
         * ({@link #DEFAULT_CHECKPOINT_INTERVAL_MS}): a fetch stores the checkpoint when the last
         * one is older, or the clock went back. 0 stores it after every fetch; {@link
         * Long#MAX_VALUE} only when {@link #checkpoint()} or {@link #expire} is called.
         *
         * @throws IllegalArgumentException a negative interval
         */
        public Builder checkpointIntervalMs(long ms) {
            if (ms < 0) {
                throw new IllegalArgumentException("negative checkpoint interval " + ms);
            }
            this.checkpointIntervalMs = ms;
            return this;
        }

        /**
         * The broker the loop runs on ({@link Broker}); {@link Broker#singleReplica} on the
         * system's clock by default.
         */
        public Builder broker(Broker broker) {
            this.broker = Objects.requireNonNull(broker, "broker");
            return this;
        }

        /** Who is told of each step ({@link Steps}). */
        public Builder steps(Steps steps) {
            this.steps = Objects.requireNonNull(steps, "steps");
            return this;
        }

        /**
         * The loop, once what the destination's leader holds is committed: every path's
         * checkpoint read from the path log, and the destination's log end stored there as
         * this leader's start.
         *
         * @throws org.apache.kafka.common.KafkaException a partition's log is not known to be
         *     committed ({@link Broker#awaitCommitted})
         */
        public MirrorLoop build() {
            if (mapper == null) {
                throw new IllegalStateException("a mirror loop needs a mapper: recover(...) or mapper(...)");
            }
            // A new leader keeps what it holds, and its followers take it once they fetch; until
            // then its tail could still be lost, and nothing may be built on it.
            broker.awaitCommitted(destination, destination.logEndOffset());
            PathLog.Resume resume = paths.read();
            Copies copies = Copies.restore(resume.paths().values(), resume.tail(), destination,
                    resume.destinationEnd(), horizonMs);
            PidMapper recovered = mapper.get();
            try {
                paths.leading(destination.logEndOffset(), copies.tail());
            } catch (RuntimeException e) {
                if (recovers) {
                    recovered.close();
                }
                throw e;
            }
            return new MirrorLoop(this, new RecoveringMapper(recovered, recovers ? mapper : null), copies);
        }
    }

    /** The mapper (another after its module instance failed and the loop recovered one). */
    public PidMapper mapper() {
        return mapper.get();
    }

    /** Where {@code path} stands in each producer's stream, by PID, as this loop last stored it. */
    public Map<Long, PathCheckpoint.Position> positions(String path) {
        return copies.positions(path);
    }

    /**
     * Mirrors the whole batches of {@code fetched}, one fetch of the source partition that
     * {@code path} (its source cluster ID) names, rewriting them in place. A truncated last
     * batch is left for the next fetch, as Kafka's own iterator leaves it.
     *
     * @throws org.apache.kafka.common.KafkaException Kafka refused an append (nothing of this
     *     call was appended; its bindings may be durable already, which is safe: the same
     *     batches map the same next time)
     * @throws dev.mirrorpid.MirrorPidException the mapper refused the fetch (nothing changed)
     */
    public Appended mirror(String path, MemoryRecords fetched, long nowMs) {
        // The rewrite walks every header of the fetch and stops before a truncated last batch,
        // as Kafka's own iterator does, so what it consumed is the whole batches: they need no
        // pass of their own. Having consumed none, it rewrote and bound nothing.
        ByteBuffer buffer = fetched.buffer();
        RewriteResult result = mapper.rewrite(path, buffer, nowMs);
        if (result.consumed() == 0) {
            return new Appended(-1, -1, 0, 0, -1);
        }
        MemoryRecords batches = MemoryRecords.readableRecords(buffer.slice(buffer.position(), result.consumed()));
        steps.reached(Step.REWRITTEN);
        try {
            state.append(result.records());
        } catch (RuntimeException e) {
            mapper.abort();
            throw e;
        }
        steps.reached(Step.PERSISTED);
        mapper.confirm();
        steps.reached(Step.CONFIRMED);

        Copies.Judging judging = copies.begin(destination, path, nowMs);
        long next = destination.logEndOffset();
        long nextSource = -1;
        int kept = 0;
        for (MutableRecordBatch batch : batches.batches()) {
            nextSource = batch.nextOffset();
            if (judging.isCopy(batch)) {
                continue;
            }
            long delta = batch.lastOffset() - batch.baseOffset();
            batch.setLastOffset(next + delta);
            batch.setPartitionLeaderEpoch(leaderEpoch);
            kept++;
            next += delta + 1;
        }
        Copies.Judgement judgement = judging.end();
        long first = -1;
        long last = -1;
        if (kept > 0) {
            MemoryRecords placed = judgement.copies() == 0 ? batches : kept(batches, judgement);
            LogAppendInfo info = destination.appendAsFollower(placed, leaderEpoch);
            first = info.firstOffset();
            last = info.lastOffset();
        }
        steps.reached(Step.APPENDED);
        copies.apply(judgement);
        unstored.add(path, nextSource, judgement.moved(), destination.logEndOffset(),
                broker.highWatermark(destination));
        if (storedMs == Long.MIN_VALUE) {
            storedMs = nowMs;
        }
        if (nowMs - storedMs >= checkpointIntervalMs || nowMs < storedMs) {
            if (checkpoint()) {
                steps.reached(Step.CHECKPOINTED);
            }
            storedMs = nowMs;
        }
        if (result.snapshotRequired()) {
            snapshot();
        }
        return new Appended(first, last, kept, judgement.copies(), nextSource);
    }

    /**
     * Stores the checkpoint of every path that moved since the last one, as far as the
     * destination's high watermark: the fetches whose batches all lie below it, in one batch
     * with the log end after the last of them; the rest wait for the next checkpoint. A leader
     * that stops leading calls it last, so that the next one fetches as little as possible
     * again. The loop stores one itself once an interval ({@link
     * Builder#checkpointIntervalMs}). Returns whether it stored one.
     *
     * @throws org.apache.kafka.common.KafkaException the checkpoint is not known to be
     *     committed (it is then kept, to be stored by the next checkpoint)
     */
    public boolean checkpoint() {
        List<PathCheckpoint> checkpoints = unstored.checkpoints(
                unstored.hasBeyond() ? broker.highWatermark(destination) : Long.MIN_VALUE);
        if (checkpoints.isEmpty()) {
            return false;
        }
        paths.store(checkpoints);
        unstored.stored();
        return true;
    }

    /**
     * Stores the mapper's snapshot with the {@code __mirror_state} offset it covers, so that a
     * new leader replays only the records after it. The loop takes one when a rewrite asks;
     * take one as well every so many records or minutes, so that a new leader's replay stays
     * short.
     */
    public void snapshot() {
        state.storeSnapshot(mapper.snapshot());
    }

    /**
     * Expires what idled: the mapper's bindings idle for its {@code producerExpirationMs}, their
     * tombstones persisted to {@code __mirror_state}, and the positions of PIDs that Kafka no
     * longer holds and no path carried within the copies' horizon, with the tail's positions
     * that a path reached or that aged past the horizon ({@link Copies#forget}), their
     * tombstones persisted to the path log with the tail positions this call dated. Call it
     * every so often (Kafka's own producer expiry checks every ten minutes); returns the
     * mapper's tombstones.
     */
    public List<StateRecord> expire(long nowMs) {
        List<StateRecord> tombstones = mapper.expire(nowMs);
        state.append(tombstones);
        // Stored first, so that no position forgotten below is stored again after its tombstone;
        // what the high watermark keeps unstored forgets them too.
        checkpoint();
        Copies.Forgotten forgotten = copies.forget(destination, nowMs);
        unstored.forget(forgotten.paths());
        paths.forget(forgotten);
        return tombstones;
    }

    /** The batches of {@code batches} that {@code judgement} did not find copies, in one new buffer. */
    private static MemoryRecords kept(MemoryRecords batches, Copies.Judgement judgement) {
        List<MutableRecordBatch> kept = new ArrayList<>();
        int size = 0;
        int index = 0;
        for (MutableRecordBatch b : batches.batches()) {
            if (!judgement.isCopy(index++)) {
                kept.add(b);
                size += b.sizeInBytes();
            }
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (MutableRecordBatch b : kept) {
            b.writeTo(out);
        }
        out.flip();
        return MemoryRecords.readableRecords(out);
    }
}
