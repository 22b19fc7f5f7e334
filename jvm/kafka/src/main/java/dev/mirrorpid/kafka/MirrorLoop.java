package dev.mirrorpid.kafka;

import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import dev.mirrorpid.StateRecord;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * The mirror of one destination partition, run by the broker that leads it: fetched batches of
 * the partition's sources in, appended to its Kafka log, each producer under a PID of its own.
 *
 * <p>A leader {@linkplain #lead starts} it by recovering the mapper ({@link StateLog#recover})
 * and every path's checkpoint ({@link PathLog#read()}), then calls {@link #mirror} for each
 * fetch, which runs {@code docs/DESIGN.md}'s protocol in order:
 *
 * <ol>
 *   <li><b>rewrite</b> the fetched bytes in place: each batch's PID and CRC ({@link
 *       PidMapper#rewrite}); new bindings are pending;
 *   <li><b>persist</b> the {@code __mirror_state} records the rewrite returned ({@link
 *       StateLog#append}), and on failure {@link PidMapper#abort()} and give up this fetch;
 *   <li><b>confirm</b> ({@link PidMapper#confirm()}): the bindings are durable;
 *   <li><b>drop copies</b>: a batch the destination already holds, come by a second path or
 *       again after a crash, is left out ({@link Copies}), since Kafka would append it twice;
 *   <li><b>place</b> the batches: each batch's base offset becomes the destination's next
 *       offset (several sources share the partition) and its partition leader epoch the
 *       leader's. Both lie outside the CRC, so the rewrite's CRC patch stays valid;
 *   <li><b>append</b> with origin REPLICATION ({@link UnifiedLog#appendAsFollower}), which keeps
 *       those offsets and checks every CRC;
 *   <li><b>checkpoint</b> the paths, when the last checkpoint is {@linkplain
 *       Builder#checkpointIntervalMs older than the interval}: each path's next source offset
 *       and where it now stands in each producer's stream, every path that moved since, in one
 *       batch ({@link PathLog#store});
 *   <li><b>snapshot</b> the mapper when the rewrite asks for one ({@link
 *       RewriteResult#snapshotRequired()}: a collision under {@code collisions} durability needs
 *       it; {@link StateLog#storeSnapshot} keeps it with the {@code __mirror_state} offset it
 *       covers).
 * </ol>
 *
 * A crash anywhere is safe: before step 3 the new leader maps the same batches the same way
 * from the records; after the append and before the checkpoint that covers it, the new leader
 * fetches the batches again from each path's last checkpoint and drops them as copies, as it
 * would a lagging path's. The checkpoint is a Kafka append of its own, so it is taken once an
 * interval, as Kafka checkpoints its replicas' high watermarks: what a crash costs is the
 * interval's fetches, fetched and judged again. The class is single-threaded, as a partition's
 * fetcher is.
 */
public final class MirrorLoop {
    private final UnifiedLog destination;
    private final int leaderEpoch;
    private final StateLog state;
    private final PathLog paths;
    private final PidMapper mapper;
    private final Copies copies;
    private final Steps steps;
    private final long checkpointIntervalMs;
    /** What each path moved since the last checkpoint, by path: stored together at the next. */
    private final Map<String, Unstored> unstored = new TreeMap<>();
    /** The clock of the fetch that stored the last checkpoint (of the first fetch, before one). */
    private long storedMs = Long.MIN_VALUE;

    /**
     * How long a path's progress may go unstored by default: one second, so that a checkpoint
     * (a Kafka append of its own) costs a busy partition one append a second, and a new leader
     * fetches and judges again at most about a second of each path.
     */
    public static final long DEFAULT_CHECKPOINT_INTERVAL_MS = 1_000;

    /** One path's progress since its last stored checkpoint. */
    private static final class Unstored {
        long nextOffset;
        final Map<Long, PathCheckpoint.Position> moved = new HashMap<>();
    }

    /** The steps of {@link #mirror} after which its work is durable in part. */
    public enum Step {
        /** The records are in {@code __mirror_state}; nothing confirmed, nothing appended. */
        PERSISTED,
        /** Confirmed; the batches are not appended. */
        CONFIRMED,
        /** Appended; the path's checkpoint is not stored. */
        APPENDED
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

    private MirrorLoop(UnifiedLog destination, int leaderEpoch, StateLog state, PathLog paths, PidMapper mapper,
            Copies copies, Steps steps, long checkpointIntervalMs) {
        this.destination = Objects.requireNonNull(destination, "destination");
        this.leaderEpoch = leaderEpoch;
        this.state = Objects.requireNonNull(state, "state");
        this.paths = Objects.requireNonNull(paths, "paths");
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        this.copies = copies;
        this.steps = Objects.requireNonNull(steps, "steps");
        this.checkpointIntervalMs = checkpointIntervalMs;
    }

    /**
     * Becomes the mirror of {@code destination} as leader of {@code leaderEpoch}: the mapper
     * recovered from {@code state} (the latest snapshot and the records after it, or a mapper of
     * {@code config} and every record), and every path's checkpoint read from {@code paths}.
     * The caller closes the loop's mapper ({@link #mapper()}) when it stops leading.
     *
     * @throws CorruptStateException a stored snapshot or checkpoint cannot be read
     * @throws dev.mirrorpid.MirrorPidException the module refused the snapshot or a record
     */
    public static MirrorLoop lead(MirrorPid module, dev.mirrorpid.MapperConfig config, UnifiedLog destination,
            int leaderEpoch, StateLog state, PathLog paths) {
        return builder(destination, leaderEpoch, state, paths).recover(module, config).build();
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
        private long horizonMs = Copies.DEFAULT_HORIZON_MS;
        private long checkpointIntervalMs = DEFAULT_CHECKPOINT_INTERVAL_MS;
        private Steps steps = step -> {};

        private Builder(UnifiedLog destination, int leaderEpoch, StateLog state, PathLog paths) {
            this.destination = destination;
            this.leaderEpoch = leaderEpoch;
            this.state = state;
            this.paths = paths;
        }

        /** Recovers the mapper from the state log at {@link #build()}, fresh ones of {@code config}. */
        public Builder recover(MirrorPid module, dev.mirrorpid.MapperConfig config) {
            Objects.requireNonNull(module, "module");
            Objects.requireNonNull(config, "config");
            this.mapper = () -> state.recover(module::restore, () -> module.newMapper(config));
            return this;
        }

        /** Uses {@code mapper}, already recovered, instead. */
        public Builder mapper(PidMapper mapper) {
            Objects.requireNonNull(mapper, "mapper");
            this.mapper = () -> mapper;
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

        /** Who is told of each step ({@link Steps}). */
        public Builder steps(Steps steps) {
            this.steps = Objects.requireNonNull(steps, "steps");
            return this;
        }

        /**
         * The loop, with every path's checkpoint read from the path log, and the destination's
         * log end stored there as this leader's start.
         */
        public MirrorLoop build() {
            if (mapper == null) {
                throw new IllegalStateException("a mirror loop needs a mapper: recover(...) or mapper(...)");
            }
            PathLog.Resume resume = paths.read();
            Copies copies = Copies.restore(resume.paths().values(), resume.tail(), destination,
                    resume.destinationEnd(), horizonMs);
            PidMapper recovered = mapper.get();
            paths.leading(destination.logEndOffset(), copies.tail());
            return new MirrorLoop(destination, leaderEpoch, state, paths, recovered, copies, steps,
                    checkpointIntervalMs);
        }
    }

    /** The mapper. */
    public PidMapper mapper() {
        return mapper;
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
        Unstored moved = unstored.computeIfAbsent(path, p -> new Unstored());
        moved.nextOffset = nextSource;
        moved.moved.putAll(judgement.moved());
        if (storedMs == Long.MIN_VALUE) {
            storedMs = nowMs;
        }
        if (nowMs - storedMs >= checkpointIntervalMs || nowMs < storedMs) {
            checkpoint();
            storedMs = nowMs;
        }
        if (result.snapshotRequired()) {
            snapshot();
        }
        return new Appended(first, last, kept, judgement.copies(), nextSource);
    }

    /**
     * Stores the checkpoint of every path that moved since the last one, in one batch with the
     * destination's log end, now; a leader that stops leading calls it last, so that the next
     * one fetches nothing again. The loop stores one itself once an interval ({@link
     * Builder#checkpointIntervalMs}).
     */
    public void checkpoint() {
        if (unstored.isEmpty()) {
            return;
        }
        long end = destination.logEndOffset();
        List<PathCheckpoint> checkpoints = new ArrayList<>(unstored.size());
        for (Map.Entry<String, Unstored> e : unstored.entrySet()) {
            checkpoints.add(new PathCheckpoint(e.getKey(), e.getValue().nextOffset, end, e.getValue().moved));
        }
        paths.store(checkpoints);
        unstored.clear();
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
        // Stored first, so that no position forgotten below is stored again after its tombstone.
        checkpoint();
        paths.forget(copies.forget(destination, nowMs));
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
