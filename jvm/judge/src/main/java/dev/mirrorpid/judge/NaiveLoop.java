package dev.mirrorpid.judge;

import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.StateLog;
import java.nio.ByteBuffer;
import java.util.Objects;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * A mirror that appends every batch it fetches, copies included: the peers the judge measures
 * mirrorpid's {@link MirrorLoop} against. It rewrites each PID as its {@link Strategy} does
 * (verbatim, negated), or by mirrorpid's mapper with its records persisted and confirmed but
 * no copy dropped (to show what the copies do); then places and appends the batches as {@link
 * MirrorLoop} does.
 */
public final class NaiveLoop {
    private final Strategy strategy;
    private final UnifiedLog destination;
    private final int leaderEpoch;
    private final StateLog state;
    private final PidMapper mapper;
    private final MirrorLoop.Steps steps;

    /** A verbatim or negated mirror into {@code destination} as leader of {@code leaderEpoch}. */
    public NaiveLoop(Strategy strategy, UnifiedLog destination, int leaderEpoch) {
        this(strategy, destination, leaderEpoch, null, null, step -> {});
        if (strategy == Strategy.MIRRORPID) {
            throw new IllegalArgumentException("mirrorpid needs a state log and a mapper");
        }
    }

    /** mirrorpid's rewrite and persistence, with every copy appended. */
    public NaiveLoop(UnifiedLog destination, int leaderEpoch, StateLog state, PidMapper mapper, MirrorLoop.Steps steps) {
        this(Strategy.MIRRORPID, destination, leaderEpoch, Objects.requireNonNull(state, "state"),
                Objects.requireNonNull(mapper, "mapper"), steps);
    }

    private NaiveLoop(Strategy strategy, UnifiedLog destination, int leaderEpoch, StateLog state, PidMapper mapper,
            MirrorLoop.Steps steps) {
        this.strategy = Objects.requireNonNull(strategy, "strategy");
        this.destination = Objects.requireNonNull(destination, "destination");
        this.leaderEpoch = leaderEpoch;
        this.state = state;
        this.mapper = mapper;
        this.steps = steps;
    }

    /** The mapper (null unless mirrorpid). */
    public PidMapper mapper() {
        return mapper;
    }

    /** Mirrors the whole batches of {@code fetched}, from {@code path}, all of them appended. */
    public MirrorLoop.Appended mirror(String path, MemoryRecords fetched, long nowMs) {
        int bytes = 0;
        for (MutableRecordBatch batch : fetched.batches()) {
            bytes += batch.sizeInBytes();
        }
        if (bytes == 0) {
            return new MirrorLoop.Appended(-1, -1, 0, 0, -1);
        }
        ByteBuffer whole = fetched.buffer().duplicate();
        whole.limit(whole.position() + bytes);
        whole = whole.slice();
        MemoryRecords batches = MemoryRecords.readableRecords(whole);
        if (strategy == Strategy.MIRRORPID) {
            RewriteResult result = mapper.rewrite(path, batches, nowMs);
            try {
                state.append(result.records());
            } catch (RuntimeException e) {
                mapper.abort();
                throw e;
            }
            steps.reached(MirrorLoop.Step.PERSISTED);
            mapper.confirm();
            steps.reached(MirrorLoop.Step.CONFIRMED);
        } else if (strategy == Strategy.NEGATED) {
            Strategy.negate(whole);
        }
        long next = destination.logEndOffset();
        long nextSource = -1;
        int count = 0;
        for (MutableRecordBatch batch : batches.batches()) {
            nextSource = batch.nextOffset();
            long delta = batch.lastOffset() - batch.baseOffset();
            batch.setLastOffset(next + delta);
            batch.setPartitionLeaderEpoch(leaderEpoch);
            next += delta + 1;
            count++;
        }
        LogAppendInfo info = destination.appendAsFollower(batches, leaderEpoch);
        steps.reached(MirrorLoop.Step.APPENDED);
        return new MirrorLoop.Appended(info.firstOffset(), info.lastOffset(), count, 0, nextSource);
    }
}
