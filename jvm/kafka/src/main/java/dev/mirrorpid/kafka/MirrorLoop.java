package dev.mirrorpid.kafka;

import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * The mirror of one destination partition, as a broker that leads it would run it: fetched
 * batches of a source partition in, appended to the destination's Kafka log.
 *
 * <p>For {@link Strategy#MIRRORPID} each call runs {@code docs/DESIGN.md}'s protocol in order:
 *
 * <ol>
 *   <li><b>rewrite</b> the fetched bytes in place: each batch's PID and CRC ({@link
 *       PidMapper#rewrite}); new bindings are pending;
 *   <li><b>persist</b> the {@code __mirror_state} records the rewrite returned ({@link
 *       StateLog#append}), and on failure {@link PidMapper#abort()} and give up this fetch;
 *   <li><b>confirm</b> ({@link PidMapper#confirm()}): the bindings are durable;
 *   <li><b>drop copies</b>: a batch the destination already holds, come by a second path or
 *       again after a crash, is left out ({@link Copies}), since Kafka would append it twice;
 *   <li><b>place</b> the batches: the host, not the rewrite, sets each batch's base offset (the
 *       destination's next offset, since several sources share the partition) and its
 *       partition leader epoch (the destination leader's). Both lie outside the CRC, so the
 *       rewrite's CRC patch stays valid;
 *   <li><b>append</b> with origin REPLICATION ({@link UnifiedLog#appendAsFollower}), which keeps
 *       those offsets and checks every CRC;
 *   <li><b>snapshot</b> when the rewrite asks for one.
 * </ol>
 *
 * <p>The other strategies skip 2, 3, 4 and 7. The class is single-threaded, as a partition's
 * fetcher is.
 */
public final class MirrorLoop {
    private final Strategy strategy;
    private final UnifiedLog destination;
    private final int leaderEpoch;
    private final StateLog state;
    private final Copies copies;
    private PidMapper mapper;
    private Step crash = step -> {};

    /**
     * The steps of {@link #mirror} after which a test may crash the loop: the fault table of
     * {@code docs/DESIGN.md}, against real logs.
     */
    enum Point {
        /** The records are in {@code __mirror_state}; nothing confirmed, nothing appended. */
        PERSISTED,
        /** Confirmed; the batches are not appended. */
        CONFIRMED,
        /** Appended; no snapshot stored for this call. */
        APPENDED
    }

    /** A test's hook, called at each {@link Point}; it crashes the loop by throwing. */
    interface Step {
        void reached(Point point);
    }

    /**
     * What one call appended.
     *
     * @param firstOffset the destination offset of the first appended record; -1 if nothing was
     *     appended
     * @param lastOffset the destination offset of the last appended record; -1 if nothing was
     *     appended
     * @param batches how many whole batches were appended
     * @param nextSourceOffset the source offset to fetch from next
     * @param copies how many batches were copies the destination already held, and were not
     *     appended
     */
    public record Appended(long firstOffset, long lastOffset, int batches, long nextSourceOffset, int copies) {}

    /**
     * A mirror that appends to {@code destination} as the leader of {@code leaderEpoch}. {@code
     * state} and {@code mapper} are those of {@link Strategy#MIRRORPID} and null otherwise.
     */
    public MirrorLoop(Strategy strategy, UnifiedLog destination, int leaderEpoch, StateLog state, PidMapper mapper) {
        this(strategy, destination, leaderEpoch, state, mapper, strategy == Strategy.MIRRORPID);
    }

    /**
     * As above; {@code dropCopies} says whether batches the destination already holds ({@link
     * Copies}) are left out of the append. It is meaningful only for mirrorpid, which maps every
     * copy of a batch alike; the judge turns it off to show what the copies do.
     */
    public MirrorLoop(Strategy strategy, UnifiedLog destination, int leaderEpoch, StateLog state, PidMapper mapper,
            boolean dropCopies) {
        this.strategy = Objects.requireNonNull(strategy, "strategy");
        this.destination = Objects.requireNonNull(destination, "destination");
        this.leaderEpoch = leaderEpoch;
        if ((strategy == Strategy.MIRRORPID) != (mapper != null && state != null)) {
            throw new IllegalArgumentException("a state log and a mapper are for mirrorpid, and only it: " + strategy);
        }
        this.state = state;
        this.mapper = mapper;
        this.copies = dropCopies ? new Copies() : null;
    }

    /** Sets the crash hook (tests only). */
    void crashAt(Step hook) {
        this.crash = Objects.requireNonNull(hook, "hook");
    }

    /** The strategy. */
    public Strategy strategy() {
        return strategy;
    }

    /** The mapper now in use (null unless mirrorpid). */
    public PidMapper mapper() {
        return mapper;
    }

    /** Replaces the mapper, as a new leader does after {@link StateLog#recover}. */
    public void mapper(PidMapper recovered) {
        if (strategy != Strategy.MIRRORPID) {
            throw new IllegalStateException("only mirrorpid has a mapper");
        }
        this.mapper = Objects.requireNonNull(recovered, "recovered");
    }

    /**
     * Mirrors the whole batches of {@code fetched}, one source partition's fetch from {@code
     * sourceClusterId}, rewriting them in place. A truncated last batch is left for the next
     * fetch, as Kafka's own iterator leaves it.
     *
     * @throws org.apache.kafka.common.KafkaException Kafka refused the append (nothing of this
     *     call was appended; its bindings are already durable, which is safe: the same batches
     *     map the same next time)
     * @throws dev.mirrorpid.MirrorPidException the mapper refused the fetch (nothing changed)
     */
    public Appended mirror(String sourceClusterId, MemoryRecords fetched, long nowMs) {
        ByteBuffer whole = wholeBatches(fetched);
        if (!whole.hasRemaining()) {
            return new Appended(-1, -1, 0, -1, 0);
        }
        MemoryRecords batches = MemoryRecords.readableRecords(whole);
        boolean snapshot = false;
        if (strategy == Strategy.MIRRORPID) {
            RewriteResult result = mapper.rewrite(sourceClusterId, batches, nowMs);
            if (result.consumed() != whole.remaining()) {
                throw new IllegalStateException("the mapper consumed " + result.consumed() + " of "
                        + whole.remaining() + " bytes of whole batches");
            }
            try {
                state.append(result.records());
            } catch (RuntimeException e) {
                mapper.abort();
                throw e;
            }
            crash.reached(Point.PERSISTED);
            mapper.confirm();
            crash.reached(Point.CONFIRMED);
            snapshot = result.snapshotRequired();
        } else if (strategy == Strategy.NEGATED) {
            Strategy.negate(whole);
        }
        long next = destination.logEndOffset();
        long nextSource = -1;
        int count = 0;
        int dropped = 0;
        List<MutableRecordBatch> kept = new ArrayList<>();
        for (MutableRecordBatch batch : batches.batches()) {
            nextSource = batch.nextOffset();
            if (copies != null && copies.isCopy(destination, sourceClusterId, batch)) {
                dropped++;
                continue;
            }
            long delta = batch.lastOffset() - batch.baseOffset();
            batch.setLastOffset(next + delta);
            batch.setPartitionLeaderEpoch(leaderEpoch);
            kept.add(batch);
            next += delta + 1;
            count++;
        }
        if (count == 0) {
            return new Appended(-1, -1, 0, nextSource, dropped);
        }
        LogAppendInfo info = destination.appendAsFollower(dropped == 0 ? batches : concatenate(kept), leaderEpoch);
        if (strategy == Strategy.MIRRORPID) {
            crash.reached(Point.APPENDED);
            if (snapshot) {
                state.storeSnapshot(mapper.snapshot());
            }
        }
        return new Appended(info.firstOffset(), info.lastOffset(), count, nextSource, dropped);
    }

    /** The batches in one new buffer, in order. */
    private static MemoryRecords concatenate(List<MutableRecordBatch> batches) {
        int size = 0;
        for (MutableRecordBatch b : batches) {
            size += b.sizeInBytes();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (MutableRecordBatch b : batches) {
            b.writeTo(out);
        }
        out.flip();
        return MemoryRecords.readableRecords(out);
    }

    /** The prefix of {@code fetched}'s buffer that holds whole batches, as a slice of it. */
    private static ByteBuffer wholeBatches(MemoryRecords fetched) {
        int bytes = 0;
        for (MutableRecordBatch batch : fetched.batches()) {
            bytes += batch.sizeInBytes();
        }
        ByteBuffer buffer = fetched.buffer().duplicate();
        buffer.limit(buffer.position() + bytes);
        return buffer.slice();
    }
}
