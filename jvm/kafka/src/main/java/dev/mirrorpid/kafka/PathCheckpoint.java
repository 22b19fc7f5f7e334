package dev.mirrorpid.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How far one path into a destination partition has mirrored: the source offset to fetch from
 * next, and, for each producer the path carried, where in that producer's stream it stands.
 *
 * <p>A path is one source partition mirrored into the destination partition, named by its
 * source cluster ID. The offset alone would let a new leader resume the path; the positions
 * let it judge that path's COMMIT and ABORT markers ({@link Copies}): a marker closes whatever
 * transaction its PID has open in Kafka's log, so a new leader must know whether the path's
 * last data batch is the destination's, or the marker closes a transaction it never carried.
 * {@link MirrorLoop} writes what changed of it after each append, in one batch (so the
 * offset and the positions never disagree), to a {@link PathLog}, where the next leader reads
 * it back.
 */
public final class PathCheckpoint {
    /**
     * Where a path stands in one producer's stream: the epoch and last sequence of the last data
     * batch it carried, and whether a COMMIT or ABORT marker came after that batch (a marker of
     * a higher epoch, as transaction version 2 writes, leaves its epoch here and sequence -1).
     *
     * @param epoch the producer epoch
     * @param lastSequence the last sequence of the last data batch at {@code epoch}, -1 if none
     * @param afterMarker whether the last thing the path carried for the producer is a marker
     * @param lastMs the mirror's clock when the path last carried the producer
     */
    public record Position(short epoch, int lastSequence, boolean afterMarker, long lastMs) {
        /** Whether this position is beyond {@code other} in the producer's stream, or equal to it. */
        boolean atOrBeyond(Position other) {
            if (epoch != other.epoch) {
                return epoch > other.epoch;
            }
            if (lastSequence != other.lastSequence) {
                return lastSequence > other.lastSequence;
            }
            return afterMarker || !other.afterMarker;
        }
    }

    private final String path;
    private final long nextOffset;
    private final long destinationEnd;
    private final Map<Long, Position> positions;

    /**
     * A checkpoint of {@code path} resuming at source offset {@code nextOffset}, stored when the
     * destination's log ended at {@code destinationEnd}, with {@code positions} by PID (copied).
     *
     * @throws IllegalArgumentException a negative offset or PID, or a path whose UTF-8 form is
     *     empty or longer than 32767 bytes
     */
    public PathCheckpoint(String path, long nextOffset, long destinationEnd, Map<Long, Position> positions) {
        this.path = Objects.requireNonNull(path, "path");
        int pathBytes = path.getBytes(StandardCharsets.UTF_8).length;
        if (pathBytes == 0 || pathBytes > Short.MAX_VALUE) {
            throw new IllegalArgumentException("a path's name is 1 to 32767 UTF-8 bytes, not " + pathBytes);
        }
        if (nextOffset < 0) {
            throw new IllegalArgumentException("negative next offset " + nextOffset + " for path " + path);
        }
        this.nextOffset = nextOffset;
        if (destinationEnd < 0) {
            throw new IllegalArgumentException("negative destination end " + destinationEnd + " for path " + path);
        }
        this.destinationEnd = destinationEnd;
        TreeMap<Long, Position> copy = new TreeMap<>();
        for (Map.Entry<Long, Position> e : positions.entrySet()) {
            if (e.getKey() < 0) {
                throw new IllegalArgumentException("negative PID " + e.getKey() + " in the checkpoint of " + path);
            }
            copy.put(e.getKey(), Objects.requireNonNull(e.getValue(), "position"));
        }
        this.positions = Collections.unmodifiableMap(copy);
    }

    /** The path: the source cluster ID its batches are mirrored under. */
    public String path() {
        return path;
    }

    /** The source offset to fetch from next. */
    public long nextOffset() {
        return nextOffset;
    }

    /**
     * The destination's log end offset when the checkpoint was stored: a batch of the path
     * appended after it, by a leader that died before its next checkpoint, lies beyond it.
     */
    public long destinationEnd() {
        return destinationEnd;
    }

    /** Where the path stands in each producer's stream, by PID as mirrored (read-only). */
    public Map<Long, Position> positions() {
        return positions;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PathCheckpoint c && c.path.equals(path) && c.nextOffset == nextOffset
                && c.destinationEnd == destinationEnd && c.positions.equals(positions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(path, nextOffset, destinationEnd, positions);
    }

    @Override
    public String toString() {
        return "PathCheckpoint(" + path + ", next offset " + nextOffset + ", destination end " + destinationEnd + ", "
                + positions.size() + " producers)";
    }
}
