package dev.mirrorpid.kafka;

import dev.mirrorpid.kafka.PathCheckpoint.Position;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * One partition of the mirror's path checkpoints: a compacted Kafka log, beside {@code
 * __mirror_state}, of how far each path into the destination partition has mirrored ({@link
 * PathCheckpoint}). It is what a mirror persists to resume a path, with the positions that
 * {@link Copies} needs to judge the path's markers after a leader change.
 *
 * <p>Each record is keyed by what it says, so compaction keeps the latest of each: a path's
 * next offset, a path's position for one PID (a tombstone when the position was forgotten),
 * the destination's log end when the latest leader started, or where a producer stands in the
 * destination's log beyond the checkpoints (the tail, {@link Copies#restore}), as the latest
 * leader found it. {@link #store} writes a checkpoint's changes in one batch, so a new leader
 * reads a path's offset and positions as of the same append; {@link #leading} writes the tail
 * and the leader's log end in one, so that the tail a leader read is not lost when the next
 * one reads the log only from that end. The format, version 1, all big-endian: the key is
 * {@code int16} version, {@code int8} kind (0 next offset, 1 position, 2 leader, 3 tail), then
 * for an offset or a position the {@code int16} length and the path's UTF-8 bytes, and for a
 * position or a tail the {@code int64} PID; an offset's value is the {@code int64} next source
 * offset and the {@code int64} destination log end, a leader's that log end, a position's or a
 * tail's is {@code int16} epoch, {@code int32} last sequence, {@code int8} flags (1: a marker
 * came after that batch) and the {@code int64} clock when the path last carried the producer
 * (in a tail, the clock of the first expiry after a leader read it, 0 until then: {@link
 * Copies#forget}).
 */
public final class PathLog {
    /** The only record version this library writes and reads. */
    public static final short VERSION = 1;
    private static final byte KIND_OFFSET = 0;
    private static final byte KIND_POSITION = 1;
    private static final byte KIND_LEADER = 2;
    private static final byte KIND_TAIL = 3;
    private static final int POSITION_VALUE_BYTES = Short.BYTES + Integer.BYTES + 1 + Long.BYTES;
    private static final int FLAG_MARKER = 1;

    private final CompactedPartition partition;

    /**
     * Writes to {@code log} (configured with {@code cleanup.policy=compact}), a partition of one
     * replica, as leader of {@code leaderEpoch}, on the system's clock.
     */
    public PathLog(UnifiedLog log, int leaderEpoch) {
        this(log, leaderEpoch, Broker.singleReplica(Time.SYSTEM));
    }

    /**
     * Writes to {@code log} (configured with {@code cleanup.policy=compact}), which {@code
     * broker} leads in {@code leaderEpoch}: each store returns once it is committed, and a read
     * waits until what the log holds is.
     */
    public PathLog(UnifiedLog log, int leaderEpoch, Broker broker) {
        this.partition = new CompactedPartition(log, leaderEpoch, broker);
    }

    /**
     * Stores, in one batch, that {@code path} resumes at {@code nextOffset} and stands at {@code
     * moved} for the PIDs there, as of the destination's log end {@code destinationEnd}; returns
     * once it is committed.
     *
     * @throws IllegalArgumentException what {@link PathCheckpoint}'s constructor refuses
     */
    public void store(String path, long nextOffset, long destinationEnd, Map<Long, Position> moved) {
        store(List.of(new PathCheckpoint(path, nextOffset, destinationEnd, moved)));
    }

    /**
     * Stores {@code checkpoints}, each with the positions that moved since its path's last one,
     * in one batch; returns once it is committed. A mirror that checkpoints several paths at once
     * stores them together, at one destination log end, so that every batch no stored
     * checkpoint covers lies beyond the latest log end stored here; and it stores no log end
     * above the destination's high watermark ({@link Broker}), so that the next leader holds
     * every batch a checkpoint covers.
     */
    public void store(List<PathCheckpoint> checkpoints) {
        List<CompactedPartition.Entry> entries = new ArrayList<>();
        for (PathCheckpoint c : checkpoints) {
            for (Map.Entry<Long, Position> e : c.positions().entrySet()) {
                entries.add(new CompactedPartition.Entry(key(KIND_POSITION, c.path(), e.getKey()), value(e.getValue())));
            }
            entries.add(new CompactedPartition.Entry(key(KIND_OFFSET, c.path(), -1),
                    ByteBuffer.allocate(2 * Long.BYTES).putLong(c.nextOffset()).putLong(c.destinationEnd()).array()));
        }
        partition.append(entries);
    }

    /**
     * Stores that a leader starts mirroring with the destination's log ending at {@code
     * destinationEnd}; a leader stores it before its first append, so that whatever it appends
     * lies beyond a log end stored here.
     */
    void leading(long destinationEnd) {
        leading(destinationEnd, Map.of());
    }

    /**
     * Stores, in one batch, that a leader starts with the destination's log ending at {@code
     * destinationEnd} and with {@code tail}, by PID: where each producer stands in the log
     * beyond the checkpoints, as this leader read it ({@link Copies#tail()}). The next leader
     * reads the log only from {@code destinationEnd}, so the tail below it is kept here.
     *
     * @throws IllegalArgumentException a negative log end or PID
     */
    void leading(long destinationEnd, Map<Long, Position> tail) {
        if (destinationEnd < 0) {
            throw new IllegalArgumentException("negative destination end " + destinationEnd);
        }
        List<CompactedPartition.Entry> entries = tailEntries(tail);
        byte[] key = ByteBuffer.allocate(Short.BYTES + 1).putShort(VERSION).put(KIND_LEADER).array();
        entries.add(new CompactedPartition.Entry(key, ByteBuffer.allocate(Long.BYTES).putLong(destinationEnd).array()));
        partition.append(entries);
    }

    /**
     * What a new leader resumes from: each path's latest checkpoint, by path, and the
     * destination's log end as of the latest record (-1 when there is none). A path with
     * positions and no offset record (which {@link #store} never writes) is left out.
     *
     * @param paths each path's latest checkpoint
     * @param tail where each producer stands in the log beyond the checkpoints, as the latest
     *     leaders read it, by PID
     * @param destinationEnd the destination's log end when the latest checkpoint was stored or
     *     the latest leader started, whichever came later; a batch appended beyond it was
     *     appended by a leader that died before checkpointing it
     */
    public record Resume(Map<String, PathCheckpoint> paths, Map<Long, Position> tail, long destinationEnd) {}

    /** Stores, in one batch, that the positions {@code forgotten} (PIDs by path) are gone. */
    void forget(Map<String, Set<Long>> forgotten) {
        forget(new Copies.Forgotten(forgotten, Set.of(), Map.of()));
    }

    /**
     * Stores, in one batch, what {@link Copies#forget} decided: that the positions and tail
     * positions it forgot are gone, and the tail positions it dated, so that the next leader
     * ages them from the same clock.
     *
     * @throws IllegalArgumentException a negative PID among the dated ones
     */
    void forget(Copies.Forgotten forgotten) {
        List<CompactedPartition.Entry> entries = new ArrayList<>();
        for (Map.Entry<String, Set<Long>> path : new TreeMap<>(forgotten.paths()).entrySet()) {
            for (long pid : new TreeSet<>(path.getValue())) {
                entries.add(new CompactedPartition.Entry(key(KIND_POSITION, path.getKey(), pid), null));
            }
        }
        for (long pid : new TreeSet<>(forgotten.tail())) {
            entries.add(new CompactedPartition.Entry(tailKey(pid), null));
        }
        entries.addAll(tailEntries(forgotten.dated()));
        partition.append(entries);
    }

    /**
     * What a new leader resumes from, read from the whole log once everything it holds is
     * committed.
     *
     * @throws CorruptStateException a record is not one this library wrote
     * @throws org.apache.kafka.common.KafkaException the log's end is not known to be committed
     */
    public Resume read() {
        long leader = -1;
        Map<String, long[]> offsets = new HashMap<>();
        Map<String, Map<Long, Position>> positions = new HashMap<>();
        Map<Long, Position> tail = new TreeMap<>();
        for (CompactedPartition.Entry e : partition.read(0, partition.committedEnd())) {
            ByteBuffer key = ByteBuffer.wrap(e.key());
            short version = need(key, Short.BYTES, "the key's version").getShort();
            if (version != VERSION) {
                throw new CorruptStateException("a path record of version " + version + " (this library reads "
                        + VERSION + ")");
            }
            byte kind = need(key, 1, "the key's kind").get();
            if (kind == KIND_LEADER) {
                end(key, "a leader's key");
                if (e.value() != null) {
                    ByteBuffer value = ByteBuffer.wrap(e.value());
                    leader = need(value, Long.BYTES, "the leader's log end").getLong();
                    end(value, "a leader's log end");
                }
                continue;
            }
            if (kind == KIND_TAIL) {
                long pid = need(key, Long.BYTES, "the PID").getLong();
                end(key, "a tail's key");
                if (pid < 0) {
                    throw new CorruptStateException("the tail has a position for PID " + pid);
                }
                if (e.value() == null) {
                    tail.remove(pid);
                } else {
                    tail.put(pid, position(e.value(), "the tail", pid));
                }
                continue;
            }
            int length = need(key, Short.BYTES, "the path's length").getShort();
            if (length <= 0) {
                throw new CorruptStateException("a path record's path is " + length + " bytes");
            }
            byte[] name = new byte[length];
            need(key, length, "the path").get(name);
            String path = new String(name, StandardCharsets.UTF_8);
            ByteBuffer value = e.value() == null ? null : ByteBuffer.wrap(e.value());
            if (kind == KIND_OFFSET) {
                end(key, "an offset's key");
                if (value == null) {
                    offsets.remove(path);
                    continue;
                }
                need(value, 2 * Long.BYTES, "the offsets");
                long next = value.getLong();
                long destinationEnd = value.getLong();
                end(value, "an offset");
                if (next < 0 || destinationEnd < 0) {
                    throw new CorruptStateException("path " + path + " resumes at offset " + next
                            + " with the destination ending at " + destinationEnd);
                }
                offsets.put(path, new long[] {next, destinationEnd});
            } else if (kind == KIND_POSITION) {
                long pid = need(key, Long.BYTES, "the PID").getLong();
                end(key, "a position's key");
                if (pid < 0) {
                    throw new CorruptStateException("path " + path + " has a position for PID " + pid);
                }
                Map<Long, Position> of = positions.computeIfAbsent(path, k -> new HashMap<>());
                if (value == null) {
                    of.remove(pid);
                    continue;
                }
                of.put(pid, position(e.value(), "path " + path, pid));
            } else {
                throw new CorruptStateException("a path record of unknown kind " + kind);
            }
        }
        Map<String, PathCheckpoint> out = new TreeMap<>();
        long end = leader;
        for (Map.Entry<String, long[]> e : offsets.entrySet()) {
            out.put(e.getKey(), new PathCheckpoint(e.getKey(), e.getValue()[0], e.getValue()[1],
                    positions.getOrDefault(e.getKey(), Map.of())));
            end = Math.max(end, e.getValue()[1]);
        }
        return new Resume(Collections.unmodifiableMap(out), Collections.unmodifiableMap(tail), end);
    }

    /**
     * The records of {@code tail}'s positions, by PID in order.
     *
     * @throws IllegalArgumentException a negative PID
     */
    private static List<CompactedPartition.Entry> tailEntries(Map<Long, Position> tail) {
        List<CompactedPartition.Entry> entries = new ArrayList<>(tail.size() + 1);
        for (Map.Entry<Long, Position> e : new TreeMap<>(tail).entrySet()) {
            if (e.getKey() < 0) {
                throw new IllegalArgumentException("negative PID " + e.getKey() + " in the tail");
            }
            entries.add(new CompactedPartition.Entry(tailKey(e.getKey()), value(e.getValue())));
        }
        return entries;
    }

    /** A position's or a tail's value. */
    private static byte[] value(Position p) {
        return ByteBuffer.allocate(POSITION_VALUE_BYTES).putShort(p.epoch()).putInt(p.lastSequence())
                .put((byte) (p.afterMarker() ? FLAG_MARKER : 0)).putLong(p.lastMs()).array();
    }

    /** The position stored in {@code bytes}, {@code whose} for {@code pid}. */
    private static Position position(byte[] bytes, String whose, long pid) {
        ByteBuffer value = need(ByteBuffer.wrap(bytes), POSITION_VALUE_BYTES, "the position");
        Position p = new Position(value.getShort(), value.getInt(), flag(value.get(), whose, pid), value.getLong());
        end(value, "a position");
        return p;
    }

    private static byte[] tailKey(long pid) {
        return ByteBuffer.allocate(Short.BYTES + 1 + Long.BYTES).putShort(VERSION).put(KIND_TAIL).putLong(pid).array();
    }

    private static byte[] key(byte kind, String path, long pid) {
        byte[] name = path.getBytes(StandardCharsets.UTF_8);
        ByteBuffer key = ByteBuffer.allocate(Short.BYTES + 1 + Short.BYTES + name.length
                + (kind == KIND_POSITION ? Long.BYTES : 0));
        key.putShort(VERSION).put(kind).putShort((short) name.length).put(name);
        if (kind == KIND_POSITION) {
            key.putLong(pid);
        }
        return key.array();
    }

    private static boolean flag(byte flags, String whose, long pid) {
        if ((flags & ~FLAG_MARKER) != 0) {
            throw new CorruptStateException("unknown flags " + flags + " in " + whose + "'s position for PID " + pid);
        }
        return flags == FLAG_MARKER;
    }

    private static ByteBuffer need(ByteBuffer in, int bytes, String what) {
        if (in.remaining() < bytes) {
            throw new CorruptStateException("a path record ends before " + what + " (" + in.remaining() + " of "
                    + bytes + " bytes)");
        }
        return in;
    }

    private static void end(ByteBuffer in, String what) {
        if (in.hasRemaining()) {
            throw new CorruptStateException(what + " has " + in.remaining() + " bytes too many");
        }
    }
}
