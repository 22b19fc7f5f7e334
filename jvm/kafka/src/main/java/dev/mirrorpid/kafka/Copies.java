package dev.mirrorpid.kafka;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.storage.internals.log.BatchMetadata;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * Tells a mirrored batch that the destination already holds from one it does not: a copy that
 * came by a second path (a diamond) or again after a crash between the append and the host's
 * note of how far it mirrored. Kafka does not deduplicate follower appends, so a mirror that
 * does not drop copies writes them twice.
 *
 * <p>It works because mirrorpid maps every copy of a producer's batch to the same PID with the
 * same epoch and sequences, and it judges by Kafka's own producer state at the destination
 * (which a new leader rebuilds from the log, so the judgement survives a crash):
 *
 * <ul>
 *   <li>a data batch is a copy when Kafka's entry for its PID is past it: a higher epoch, or
 *       the same epoch and a last sequence at or beyond the batch's. A producer's own retries
 *       never reach a mirror twice (its source log deduplicated them), and an epoch bump starts
 *       above the entry, so neither is taken for a copy;
 *   <li>a COMMIT or ABORT marker is a copy when Kafka's entry is past the last data batch this
 *       path carried for the PID: the marker closed a transaction that another path already
 *       closed, and passing it could close a later one. A path's first marker for a PID after
 *       a leader change has no such position and passes.
 * </ul>
 *
 * Batches without a PID or a sequence are never copies. A PID's entry that Kafka expired makes
 * its next batch new again.
 */
public final class Copies {
    /** Per path (source cluster) and PID: the epoch and last sequence of its last data batch. */
    private final Map<String, Map<Long, long[]>> paths = new HashMap<>();

    /** Whether {@code batch}, arriving from {@code sourceClusterId}, is already in {@code log}. */
    public boolean isCopy(UnifiedLog log, String sourceClusterId, RecordBatch batch) {
        long pid = batch.producerId();
        if (pid < 0) {
            return false;
        }
        Map<Long, long[]> path = paths.computeIfAbsent(sourceClusterId, k -> new HashMap<>());
        Optional<ProducerStateEntry> entry = log.producerStateManager().lastEntry(pid);
        if (batch.isControlBatch()) {
            long[] position = path.get(pid);
            return position != null && entry.isPresent() && after(entry.get(), position[0], position[1]);
        }
        if (batch.baseSequence() < 0) {
            return false;
        }
        path.put(pid, new long[] {batch.producerEpoch(), batch.lastSequence()});
        if (entry.isEmpty()) {
            return false;
        }
        ProducerStateEntry e = entry.get();
        if (e.producerEpoch() != batch.producerEpoch()) {
            return e.producerEpoch() > batch.producerEpoch();
        }
        return lastSequence(e) >= batch.lastSequence();
    }

    /** Whether Kafka's entry is past (epoch, sequence). */
    private static boolean after(ProducerStateEntry entry, long epoch, long sequence) {
        if (entry.producerEpoch() != epoch) {
            return entry.producerEpoch() > epoch;
        }
        return lastSequence(entry) > sequence;
    }

    private static long lastSequence(ProducerStateEntry entry) {
        long last = -1;
        for (BatchMetadata b : entry.batchMetadata()) {
            last = b.lastSeq();
        }
        return last;
    }
}
