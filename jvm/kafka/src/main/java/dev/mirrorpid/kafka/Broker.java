package dev.mirrorpid.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Objects;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * What the mirror needs from the broker it runs on: when what it appended to a partition's
 * leader is committed, and the broker's clock.
 *
 * <p>Kafka's guarantee is about what lies below a partition's high watermark, the least log end
 * of its in-sync replicas: a new leader, chosen from them, holds every offset below it and
 * nothing more is promised. So the mirror uses its three partitions by that rule:
 *
 * <ul>
 *   <li>a path's checkpoint covers only batches below the destination's {@linkplain
 *       #highWatermark high watermark}: a checkpoint beyond it could name batches the next leader
 *       lacks, and the path would resume after records the destination lost;
 *   <li>a {@code __mirror_state} or {@code __mirror_paths} append returns only once it is
 *       {@linkplain #awaitCommitted committed}, as a produce with {@code acks=all} does: a
 *       binding is confirmed, and used, only once its record survives any leader change;
 *   <li>a new leader of the mirror waits until each of the three partitions has committed what
 *       its leader holds before it reads them, so that it never builds on what may be
 *       truncated.
 * </ul>
 *
 * A broker implements it over its {@code Partition} (whose leader advances the high watermark as
 * followers fetch) and its delayed produce; {@link #singleReplica} is the in-process one, for
 * partitions of one replica and for tests. Implementations are called by the one thread that
 * runs a partition's mirror.
 */
public interface Broker {
    /** The broker's clock: the timestamps of the mirror's own records, and the log's now. */
    Time time();

    /**
     * The high watermark of {@code log}, a partition this broker leads: every offset below it is
     * held by every in-sync replica and survives a leader change.
     *
     * @throws NotLeaderOrFollowerException this broker no longer leads the partition (the mirror
     *     is then done with: a new one leads from the logs)
     */
    long highWatermark(UnifiedLog log);

    /**
     * Returns once the high watermark of {@code log}, a partition this broker leads, is at or
     * beyond {@code offset}: everything appended below it is committed.
     *
     * @throws org.apache.kafka.common.KafkaException it will not be, or not known to be: the
     *     broker lost the partition's leadership ({@link NotLeaderOrFollowerException}), too few
     *     replicas are in sync, or the wait timed out. What was appended may be lost, or may
     *     survive; the caller treats it as not written.
     */
    void awaitCommitted(UnifiedLog log, long offset);

    /**
     * A broker whose partitions have one replica each: the leader's log end is the high
     * watermark, moved there whenever the mirror asks, as Kafka's leader moves it after each
     * append when it is the only in-sync replica. On {@code time}'s clock.
     */
    static Broker singleReplica(Time time) {
        Objects.requireNonNull(time, "time");
        return new Broker() {
            @Override
            public Time time() {
                return time;
            }

            @Override
            public long highWatermark(UnifiedLog log) {
                try {
                    return log.updateHighWatermark(log.logEndOffset());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public void awaitCommitted(UnifiedLog log, long offset) {
                if (highWatermark(log) < offset) {
                    throw new NotLeaderOrFollowerException("offset " + offset + " is beyond the log's end "
                            + log.logEndOffset() + ": it was truncated");
                }
            }
        };
    }
}
