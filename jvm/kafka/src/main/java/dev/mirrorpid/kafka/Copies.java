package dev.mirrorpid.kafka;

import dev.mirrorpid.kafka.PathCheckpoint.Position;
import java.time.Duration;
import java.util.BitSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.storage.internals.log.BatchMetadata;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * Tells a mirrored batch that the destination already holds from one it does not: a copy that
 * came by a second path (a diamond, a mesh) or again after a crash between the append and the
 * path's checkpoint. Kafka does not deduplicate follower appends, so a mirror that does not drop
 * copies writes them twice, and a copy of a COMMIT or ABORT marker closes whatever transaction
 * its PID has open, which may be a later one.
 *
 * <p>It works because mirrorpid maps every copy of a producer's batch to the same PID with the
 * same epoch and sequences, so every path into the partition carries one stream per producer,
 * in the producer's order, each path as far as it got. The destination holds the longest of
 * them. Copies judges each batch against Kafka's own producer state at the destination (which a
 * new leader rebuilds from the log) and against where the batch's path stands in that stream
 * (its {@link PathCheckpoint.Position}, which survives a leader change in the path's
 * checkpoint):
 *
 * <ul>
 *   <li>a <b>data batch</b> is a copy when the destination is past it: Kafka's entry for its PID
 *       has a higher epoch, or the same epoch and a last sequence at or beyond the batch's. A
 *       producer's own retries never reach a mirror twice (its source log deduplicated them),
 *       and an epoch bump, a restarted producer and a producer back after expiry all start
 *       above the entry, so none is taken for a copy. When Kafka has expired the PID, the
 *       furthest position any path holds for it stands in for the entry, so a path that lags
 *       by longer than the expiry still finds its copies;
 *   <li>a <b>COMMIT or ABORT marker</b> is new only when it closes the transaction its own path
 *       opened: Kafka's entry has a transaction open and ends at the very data batch the path
 *       carried last. Everywhere else it is a copy: the path is behind the destination (the
 *       marker closed a transaction another path already closed, and passing it would close a
 *       later one), or no transaction is open (the marker would change nothing a consumer
 *       reads), or the path never carried the transaction's data (another path did, and brings
 *       the marker).
 * </ul>
 *
 * Batches without a PID or a sequence are never copies. Within one fetch, each batch is judged
 * against the destination as the batches before it leave it. A path's position moves with every
 * batch it carries, copies included: a lagging path's marker is judged by where that path is,
 * not where the destination is.
 *
 * <p>{@link #judge} changes nothing; {@link #apply} records the judged fetch's positions once
 * its batches are in the log. The class is single-threaded, as a partition's mirror is.
 */
public final class Copies {
    /**
     * How long a path's position is kept for a PID that Kafka's producer state no longer holds:
     * seven days, Kafka's default {@code retention.ms}, beyond which a lagging path's source
     * has normally deleted what it could still bring.
     */
    public static final long DEFAULT_HORIZON_MS = Duration.ofDays(7).toMillis();

    private final Map<String, Map<Long, Position>> paths = new HashMap<>();
    /** Where each producer stands in the log beyond the latest checkpoint, at a leader's start. */
    private final Map<Long, Position> tail = new HashMap<>();
    private final long horizonMs;
    /** Counts applied judgements: a judgement made before another was applied is stale. */
    private long generation;

    /** No path carried anything yet; positions of PIDs Kafka expired are kept {@code horizonMs}. */
    public Copies(long horizonMs) {
        if (horizonMs < 0) {
            throw new IllegalArgumentException("negative horizon " + horizonMs);
        }
        this.horizonMs = horizonMs;
    }

    /**
     * The positions of {@code checkpoints}, as a new leader of {@code log} takes them over, with
     * the tail: the batches that no stored checkpoint covers, which a leader appended and died
     * (or stopped) before it checkpointed them. Their paths fetch them again, and when Kafka has
     * expired their producers meanwhile (a producer's entry ages by its batches' timestamps, so
     * a backlog mirrored late expires at once), only the tail says that they are copies. It is
     * {@code storedTail}, what earlier leaders read of it (by PID), and what the log holds from
     * offset {@code tail} on (-1: nothing), the log end when the latest checkpoint was stored or
     * the latest leader started; a leader stores the whole ({@link #tail()}) as it starts.
     */
    public static Copies restore(Collection<PathCheckpoint> checkpoints, Map<Long, Position> storedTail,
            UnifiedLog log, long tail, long horizonMs) {
        Copies copies = new Copies(horizonMs);
        for (PathCheckpoint c : checkpoints) {
            if (copies.paths.put(c.path(), new HashMap<>(c.positions())) != null) {
                throw new IllegalArgumentException("two checkpoints of path " + c.path());
            }
        }
        copies.tail.putAll(storedTail);
        if (tail >= 0) {
            copies.readTail(log, tail);
        }
        return copies;
    }

    /** Where each producer stands in the log beyond the checkpoints, by PID (read-only). */
    public Map<Long, Position> tail() {
        return java.util.Collections.unmodifiableMap(tail);
    }

    /**
     * Where each producer stands in {@code log} from offset {@code from} to its end, over what
     * the tail held: the log's later batches are further along each producer's stream.
     */
    private void readTail(UnifiedLog log, long from) {
        CompactedPartition.forEachBatch(log, from, Long.MAX_VALUE, (batch, offset) -> {
            long pid = batch.producerId();
            if (batch.lastOffset() < offset || pid < 0) {
                return;
            }
            short epoch = batch.producerEpoch();
            if (batch.isControlBatch()) {
                Position before = tail.get(pid);
                int sequence = before != null && before.epoch() == epoch ? before.lastSequence() : -1;
                tail.put(pid, new Position(epoch, sequence, true, 0));
            } else if (batch.baseSequence() >= 0) {
                tail.put(pid, new Position(epoch, batch.lastSequence(), false, 0));
            }
        });
    }

    /** Where {@code path} stands, by PID (read-only; empty for a path that carried nothing). */
    public Map<Long, Position> positions(String path) {
        Map<Long, Position> p = paths.get(path);
        return p == null ? Map.of() : java.util.Collections.unmodifiableMap(p);
    }

    /**
     * Judges {@code batches}, in order, arriving by {@code path} for {@code log}; changes
     * nothing. Apply the judgement ({@link #apply}) once the batches kept are in the log.
     */
    Judgement judge(UnifiedLog log, String path, Iterable<? extends RecordBatch> batches, long nowMs) {
        Judging judging = begin(log, path, nowMs);
        for (RecordBatch batch : batches) {
            judging.isCopy(batch);
        }
        return judging.end();
    }

    /**
     * {@link #judge}, a batch at a time: for a mirror that judges each batch as it places it,
     * in one pass over the fetch.
     */
    Judging begin(UnifiedLog log, String path, long nowMs) {
        return new Judging(Objects.requireNonNull(log, "log"), Objects.requireNonNull(path, "path"), nowMs);
    }

    /** A judgement being made, batch by batch, in the fetch's order. */
    final class Judging {
        private final UnifiedLog log;
        private final String path;
        private final long nowMs;
        private final Map<Long, Position> carried;
        private final Map<Long, Position> moved = new HashMap<>();
        private final Map<Long, Head> heads = new HashMap<>();
        private final BitSet copy = new BitSet();
        // A run of one producer's batches is judged against one head and one position held
        // here, and its position noted once, when the run ends.
        private Run run;
        private int index;

        private Judging(UnifiedLog log, String path, long nowMs) {
            this.log = log;
            this.path = path;
            this.nowMs = nowMs;
            this.carried = paths.getOrDefault(path, Map.of());
        }

        /** Whether {@code batch}, the fetch's next, is a copy. */
        boolean isCopy(RecordBatch batch) {
            long pid = batch.producerId();
            boolean control = batch.isControlBatch();
            int at = index++;
            if (pid < 0 || !(control || batch.baseSequence() >= 0)) {
                return false;
            }
            if (run == null || run.pid != pid) {
                if (run != null) {
                    moved.put(run.pid, run.position(nowMs));
                }
                Position before = moved.containsKey(pid) ? moved.get(pid) : carried.get(pid);
                run = new Run(pid, heads.computeIfAbsent(pid, p -> head(log, p)), before);
            }
            boolean isCopy = run.judge(batch, control);
            copy.set(at, isCopy);
            return isCopy;
        }

        /** The judgement of the batches seen, for {@link Copies#apply}. */
        Judgement end() {
            if (run != null) {
                moved.put(run.pid, run.position(nowMs));
                run = null;
            }
            return new Judgement(path, copy, index, moved, generation);
        }
    }

    /** One producer's batches in a row: where the path stands, as its batches move it. */
    private static final class Run {
        final long pid;
        final Head head;
        boolean known;
        short epoch;
        int lastSequence;
        boolean afterMarker;

        Run(long pid, Head head, Position before) {
            this.pid = pid;
            this.head = head;
            if (before != null) {
                known = true;
                epoch = before.epoch();
                lastSequence = before.lastSequence();
                afterMarker = before.afterMarker();
            }
        }

        /** Whether {@code batch} is a copy; moves the path past it, and the head if it is new. */
        boolean judge(RecordBatch batch, boolean control) {
            short e = batch.producerEpoch();
            boolean isCopy;
            if (control) {
                isCopy = !head.closedBy(known, afterMarker, epoch, lastSequence);
                if (!isCopy) {
                    head.close(e);
                }
                if (!known || epoch != e) {
                    lastSequence = -1;
                }
                afterMarker = true;
            } else {
                int last = batch.lastSequence();
                isCopy = head.holds(e, last);
                if (!isCopy) {
                    head.append(e, last, batch.isTransactional());
                }
                lastSequence = last;
                afterMarker = false;
            }
            known = true;
            epoch = e;
            return isCopy;
        }

        Position position(long nowMs) {
            return new Position(epoch, lastSequence, afterMarker, nowMs);
        }
    }

    /**
     * Records where {@code judgement}'s path now stands; call it once the judged batches that
     * were not copies are in the log.
     *
     * @throws IllegalStateException the judgement was applied already, or another one was
     *     applied after it was made (its view of the log is stale)
     */
    void apply(Judgement judgement) {
        if (judgement.generation != generation) {
            throw new IllegalStateException("a stale judgement of path " + judgement.path
                    + ": another was applied after it was made");
        }
        generation++;
        paths.computeIfAbsent(judgement.path, k -> new HashMap<>()).putAll(judgement.moved);
    }

    /**
     * What {@link #forget} forgot, and the tail positions it dated; a mirror stores both
     * ({@link PathLog#forget(Forgotten)}).
     *
     * @param paths the PIDs whose positions were forgotten, by path
     * @param tail the PIDs whose tail positions were forgotten
     * @param dated the tail positions that this call dated, by PID: each as it was, with the clock
     *     of this call as its {@code lastMs}
     */
    record Forgotten(Map<String, Set<Long>> paths, Set<Long> tail, Map<Long, Position> dated) {}

    /**
     * Forgets the positions of PIDs that Kafka's producer state no longer holds and that no
     * path carried for longer than the horizon, and the tail's positions that a path has
     * reached or that are older than the horizon for PIDs Kafka no longer holds. A tail
     * position is as old as the first call of this method after a leader read it: a leader
     * reads it undated ({@code lastMs} 0), and this call dates it with {@code nowMs}, so that
     * one whose path never comes back does not stay in the path log for ever.
     */
    Forgotten forget(UnifiedLog log, long nowMs) {
        Map<String, Set<Long>> forgotten = new HashMap<>();
        for (Map.Entry<String, Map<Long, Position>> path : paths.entrySet()) {
            Iterator<Map.Entry<Long, Position>> it = path.getValue().entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<Long, Position> e = it.next();
                if (aged(log, e.getKey(), e.getValue(), nowMs)) {
                    it.remove();
                    forgotten.computeIfAbsent(path.getKey(), k -> new HashSet<>()).add(e.getKey());
                }
            }
        }
        Set<Long> out = new HashSet<>();
        Map<Long, Position> dated = new HashMap<>();
        Iterator<Map.Entry<Long, Position>> it = tail.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Position> e = it.next();
            long pid = e.getKey();
            Position at = e.getValue();
            boolean reached = paths.values().stream()
                    .anyMatch(p -> p.containsKey(pid) && p.get(pid).atOrBeyond(at));
            if (reached || (at.lastMs() != 0 && aged(log, pid, at, nowMs))) {
                it.remove();
                out.add(pid);
            } else if (at.lastMs() == 0 && nowMs != 0) {
                Position now = new Position(at.epoch(), at.lastSequence(), at.afterMarker(), nowMs);
                e.setValue(now);
                dated.put(pid, now);
            }
        }
        generation++;
        return new Forgotten(forgotten, out, dated);
    }

    /**
     * Whether {@code at}, a position for {@code pid}, is older than the horizon and Kafka's
     * producer state no longer holds the PID.
     */
    private boolean aged(UnifiedLog log, long pid, Position at, long nowMs) {
        return nowMs - at.lastMs() > horizonMs && log.producerStateManager().lastEntry(pid).isEmpty();
    }

    /**
     * Where the destination stands for {@code pid}: Kafka's entry, else the furthest of the
     * paths' positions and the tail's.
     */
    private Head head(UnifiedLog log, long pid) {
        Optional<ProducerStateEntry> entry = log.producerStateManager().lastEntry(pid);
        if (entry.isPresent()) {
            ProducerStateEntry e = entry.get();
            int last = -1;
            for (BatchMetadata b : e.batchMetadata()) {
                last = b.lastSeq();
            }
            return new Head(true, e.producerEpoch(), last, e.currentTxnFirstOffset().isPresent());
        }
        Position furthest = tail.get(pid);
        for (Map<Long, Position> p : paths.values()) {
            Position at = p.get(pid);
            if (at != null && (furthest == null || at.atOrBeyond(furthest))) {
                furthest = at;
            }
        }
        return furthest == null ? new Head(false, (short) -1, -1, false)
                : new Head(true, furthest.epoch(), furthest.lastSequence(), false);
    }

    /** The destination's end of one producer's stream, as a judgement moves it along. */
    private static final class Head {
        boolean known;
        short epoch;
        int lastSequence;
        boolean open;

        Head(boolean known, short epoch, int lastSequence, boolean open) {
            this.known = known;
            this.epoch = epoch;
            this.lastSequence = lastSequence;
            this.open = open;
        }

        /** Whether the data batch ending at ({@code e}, {@code last}) is at or before this end. */
        boolean holds(short e, int last) {
            return known && (epoch != e ? epoch > e : lastSequence >= last);
        }

        /**
         * Whether a marker from a path standing at ({@code pathEpoch}, {@code pathSequence})
         * ({@code pathKnown}: it stands anywhere) closes the open transaction: the path's last
         * data batch is this end's, with no marker after it.
         */
        boolean closedBy(boolean pathKnown, boolean pathAfterMarker, short pathEpoch, int pathSequence) {
            return known && open && pathKnown && !pathAfterMarker && pathEpoch == epoch
                    && pathSequence == lastSequence;
        }

        void append(short e, int last, boolean transactional) {
            known = true;
            epoch = e;
            lastSequence = last;
            open |= transactional;
        }

        void close(short e) {
            open = false;
            if (e != epoch) {
                epoch = e;
                lastSequence = -1;
            }
        }
    }

    /** Which batches of one fetch are copies, and where the fetch leaves its path. */
    public static final class Judgement {
        private final String path;
        private final BitSet copy;
        private final int batches;
        private final Map<Long, Position> moved;
        private final long generation;

        Judgement(String path, BitSet copy, int batches, Map<Long, Position> moved, long generation) {
            this.path = path;
            this.copy = copy;
            this.batches = batches;
            this.moved = Map.copyOf(moved);
            this.generation = generation;
        }

        /** The path judged. */
        public String path() {
            return path;
        }

        /** Whether the batch at {@code index} (from 0, in the fetch's order) is a copy. */
        public boolean isCopy(int index) {
            return copy.get(index);
        }

        /** How many batches are copies. */
        public int copies() {
            return copy.cardinality();
        }

        /** How many batches were judged. */
        public int batches() {
            return batches;
        }

        /** Where the path stands after the fetch, for each PID the fetch carried. */
        public Map<Long, Position> moved() {
            return moved;
        }
    }
}
