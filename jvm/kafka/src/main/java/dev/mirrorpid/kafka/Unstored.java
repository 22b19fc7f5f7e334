package dev.mirrorpid.kafka;

import dev.mirrorpid.kafka.PathCheckpoint.Position;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What a mirror's paths moved since their last stored checkpoint, held by the rule of a
 * replicated destination: a checkpoint covers only fetches whose batches all lie below the
 * destination's high watermark, since the next leader may lack anything beyond it. A fetch's
 * progress is merged, by path, as soon as the high watermark passes the log end after it; the
 * fetches beyond it are kept apart, in log order, so that a second of fetches between
 * checkpoints is one map a path, not a list.
 */
final class Unstored {
    /** One fetch's progress: its path's next source offset, the positions it moved, and the log end after it. */
    private record Fetch(String path, long nextOffset, Map<Long, Position> moved, long destinationEnd) {}

    /** One path's progress below the high watermark. */
    private static final class Progress {
        long nextOffset;
        final Map<Long, Position> moved = new HashMap<>();
    }

    private final Map<String, Progress> committed = new TreeMap<>();
    /** The destination's log end after the last fetch merged into {@link #committed}. */
    private long committedEnd = -1;
    private final ArrayDeque<Fetch> beyond = new ArrayDeque<>();

    /**
     * Adds a fetch of {@code path}, which leaves it at source offset {@code nextOffset} with
     * {@code moved}, its batches ending at destination offset {@code destinationEnd}; and merges
     * every fetch below {@code highWatermark}.
     */
    void add(String path, long nextOffset, Map<Long, Position> moved, long destinationEnd, long highWatermark) {
        beyond.add(new Fetch(path, nextOffset, moved, destinationEnd));
        merge(highWatermark);
    }

    /** Whether some fetch is not yet below the high watermark as last seen. */
    boolean hasBeyond() {
        return !beyond.isEmpty();
    }

    /**
     * The checkpoints of every path that moved below {@code highWatermark}, in one list at one
     * destination log end (empty if none); {@link #stored()} once they are stored.
     */
    List<PathCheckpoint> checkpoints(long highWatermark) {
        merge(highWatermark);
        List<PathCheckpoint> out = new ArrayList<>(committed.size());
        for (Map.Entry<String, Progress> e : committed.entrySet()) {
            out.add(new PathCheckpoint(e.getKey(), e.getValue().nextOffset, committedEnd, e.getValue().moved));
        }
        return out;
    }

    /** The checkpoints {@link #checkpoints} returned are stored. */
    void stored() {
        committed.clear();
    }

    /** Forgets the positions of {@code forgotten} (PIDs by path), stored or not. */
    void forget(Map<String, Set<Long>> forgotten) {
        for (Map.Entry<String, Set<Long>> gone : forgotten.entrySet()) {
            Progress p = committed.get(gone.getKey());
            if (p != null) {
                p.moved.keySet().removeAll(gone.getValue());
            }
        }
        for (int i = beyond.size(); i > 0; i--) {
            Fetch f = beyond.poll();
            Set<Long> gone = forgotten.getOrDefault(f.path, Set.of());
            if (!gone.isEmpty()) {
                Map<Long, Position> kept = new HashMap<>(f.moved);
                kept.keySet().removeAll(gone);
                f = new Fetch(f.path, f.nextOffset, kept, f.destinationEnd);
            }
            beyond.add(f);
        }
    }

    private void merge(long highWatermark) {
        while (!beyond.isEmpty() && beyond.peek().destinationEnd <= highWatermark) {
            Fetch f = beyond.poll();
            Progress p = committed.computeIfAbsent(f.path, k -> new Progress());
            p.nextOffset = f.nextOffset;
            p.moved.putAll(f.moved);
            committedEnd = f.destinationEnd;
        }
    }
}
