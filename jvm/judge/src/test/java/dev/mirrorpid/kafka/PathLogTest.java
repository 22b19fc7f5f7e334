package dev.mirrorpid.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.judge.Destination;
import dev.mirrorpid.judge.KafkaLogs;
import dev.mirrorpid.kafka.PathCheckpoint.Position;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * The path log and the state log against real compacted {@code UnifiedLog}s: what is stored is
 * what a new leader reads, compaction keeps the latest of each key, and bytes the library did
 * not write (a record someone else produced to the topic, a truncated snapshot file) are
 * refused with {@link CorruptStateException} naming what is wrong, before anything is taken
 * from them.
 */
class PathLogTest {
    private static final Position AT_3 = new Position((short) 0, 3, false, 1_000);
    private static final Position MARKER = new Position((short) 1, -1, true, 2_000);

    @Test
    void aPathsOffsetAndPositionsAreReadBackAsOfTheirLatestRecords() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-paths").toFile();
        try (Destination d = Destination.compacted(dir, "__mirror_paths", 0)) {
            PathLog paths = new PathLog(d.log(), 1);
            assertEquals(new PathLog.Resume(Map.of(), Map.of(), -1), paths.read(), "an empty log: nothing to resume");
            paths.leading(7);
            paths.store("east", 10, 12, Map.of(5L, AT_3, 9L, AT_3));
            paths.store("west", 4, 13, Map.of(5L, AT_3));
            paths.store("east", 20, 15, Map.of(5L, MARKER));
            paths.forget(Map.of("east", Set.of(9L)));
            PathLog.Resume resume = paths.read();
            assertEquals(15, resume.destinationEnd(), "the latest checkpoint's log end");
            assertEquals(new PathCheckpoint("east", 20, 15, Map.of(5L, MARKER)), resume.paths().get("east"));
            assertEquals(new PathCheckpoint("west", 4, 13, Map.of(5L, AT_3)), resume.paths().get("west"));
            paths.leading(30);
            assertEquals(30, paths.read().destinationEnd(), "a leader started after the checkpoints");

            assertEquals(Map.of(), paths.read().tail(), "no leader stored a tail");

            assertThrows(IllegalArgumentException.class, () -> paths.store("", 1, 1, Map.of()));
            assertThrows(IllegalArgumentException.class, () -> paths.store("east", -1, 1, Map.of()));
            assertThrows(IllegalArgumentException.class, () -> paths.store("east", 1, 1, Map.of(-5L, AT_3)));
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /**
     * Several paths' checkpoints stored at once are one batch, at one log end; a leader's tail is
     * stored with its log end, read back until a later leader's replaces it or it is forgotten.
     */
    @Test
    void checkpointsStoredTogetherAndTheTailAreOneBatchEach() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-paths-tail").toFile();
        try (Destination d = Destination.compacted(dir, "__mirror_paths", 0)) {
            PathLog paths = new PathLog(d.log(), 1);
            paths.store(List.of(new PathCheckpoint("east", 10, 40, Map.of(5L, AT_3)),
                    new PathCheckpoint("west", 4, 40, Map.of(5L, MARKER, 9L, AT_3))));
            assertEquals(1, d.batches().size(), "two paths' checkpoints in one batch");
            paths.leading(50, Map.of(5L, MARKER, 9L, AT_3));
            assertEquals(2, d.batches().size(), "the tail and the leader's log end in one batch");
            PathLog.Resume resume = paths.read();
            assertEquals(50, resume.destinationEnd());
            assertEquals(Map.of(5L, MARKER, 9L, AT_3), resume.tail());
            assertEquals(new PathCheckpoint("west", 4, 40, Map.of(5L, MARKER, 9L, AT_3)), resume.paths().get("west"));
            paths.leading(60, Map.of(9L, MARKER));
            paths.forget(new Copies.Forgotten(Map.of(), Set.of(5L), Map.of()));
            assertEquals(Map.of(9L, MARKER), paths.read().tail(), "the later tail's position, 5 forgotten");
            assertThrows(IllegalArgumentException.class, () -> paths.leading(-1, Map.of()));
            long end = d.log().logEndOffset();
            assertThrows(IllegalArgumentException.class, () -> paths.leading(70, Map.of(9L, AT_3, -3L, AT_3)));
            assertEquals(end, d.log().logEndOffset(), "a tail with a negative PID stores nothing");
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /**
     * A tail position whose path never comes back is forgotten once it is older than the
     * horizon and Kafka no longer holds its PID: it is dated by the first expiry after a leader
     * read it, the date is stored, and a later leader ages it from the same date. One that
     * Kafka still holds stays.
     */
    @Test
    void theTailAgesFromTheFirstExpiryAfterALeaderReadIt() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-paths-tail-age").toFile();
        long horizon = 1_000;
        long t = 50_000;
        Position undated = new Position((short) 0, 3, false, 0);
        try (Destination d = Destination.create(dir, "destination", 0);
                Destination p = Destination.compacted(dir, "__mirror_paths", 0)) {
            // Kafka holds PID 7 (a batch of it in the destination's log), not PID 5.
            d.log().appendAsLeader(MemoryRecords.withIdempotentRecords(Compression.NONE, 7L, (short) 0, 0,
                    new SimpleRecord(new byte[1])), 1);
            PathLog paths = new PathLog(p.log(), 1);
            paths.leading(d.log().logEndOffset(), Map.of(5L, undated, 7L, undated));
            PathLog.Resume resume = paths.read();
            Copies first = Copies.restore(List.of(), resume.tail(), d.log(), -1, horizon);

            Copies.Forgotten dated = first.forget(d.log(), t);
            Position atT = new Position((short) 0, 3, false, t);
            assertEquals(Set.of(), dated.tail(), "nothing is old yet");
            assertEquals(Map.of(5L, atT, 7L, atT), dated.dated(), "both dated by the first expiry");
            assertEquals(Map.of(5L, atT, 7L, atT), first.tail());
            paths.forget(dated);
            assertEquals(Map.of(5L, atT, 7L, atT), paths.read().tail(), "the dates stored");
            Copies.Forgotten atHorizon = first.forget(d.log(), t + horizon);
            assertEquals(Set.of(), atHorizon.tail(), "as old as the horizon, not older");
            assertEquals(Map.of(), atHorizon.dated(), "dated once");

            // A later leader ages them from the stored date, not from its own first expiry.
            Copies next = Copies.restore(List.of(), paths.read().tail(), d.log(), -1, horizon);
            Copies.Forgotten old = next.forget(d.log(), t + horizon + 1);
            assertEquals(Set.of(5L), old.tail(), "5 is older than the horizon and Kafka has no entry for it");
            assertEquals(Map.of(7L, atT), next.tail(), "Kafka still holds 7");
            paths.forget(old);
            assertEquals(Map.of(7L, atT), paths.read().tail(), "5's tombstone stored");
            assertEquals(Set.of(), next.forget(d.log(), t + 100 * horizon).tail(), "7 stays while Kafka holds it");
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /** Each a record the library never writes, and the start of the message it must give. */
    private static final List<Object[]> FOREIGN = List.of(
            new Object[] {key(), null, "a path record ends before the key's version"},
            new Object[] {key(2, 0), offsets(1, 1), "a path record of version 2"},
            new Object[] {key(1, 9, "east"), offsets(1, 1), "a path record of unknown kind 9"},
            new Object[] {key(1, 0), offsets(1, 1), "a path record ends before the path's length"},
            new Object[] {key(1, 0, ""), offsets(1, 1), "a path record's path is 0 bytes"},
            new Object[] {ByteBuffer.allocate(5).putShort((short) 1).put((byte) 0).putShort((short) 9).array(),
                offsets(1, 1), "a path record ends before the path"},
            new Object[] {key(1, 0, "east"), new byte[7], "a path record ends before the offsets"},
            new Object[] {key(1, 0, "east"), new byte[17], "an offset has 1 bytes too many"},
            new Object[] {key(1, 0, "east"), offsets(-1, 1), "path east resumes at offset -1"},
            new Object[] {key(1, 1, "east"), new byte[15], "a path record ends before the PID"},
            new Object[] {pid(key(1, 1, "east"), -3), new byte[15], "path east has a position for PID -3"},
            new Object[] {pid(key(1, 1, "east"), 3), new byte[14], "a path record ends before the position"},
            new Object[] {pid(key(1, 1, "east"), 3), flags(4), "unknown flags 4 in path east's position for PID 3"},
            new Object[] {key(1, 3), new byte[15], "a path record ends before the PID"},
            new Object[] {pid(key(1, 3), -3), new byte[15], "the tail has a position for PID -3"},
            new Object[] {pid(pid(key(1, 3), 3), 0), new byte[15], "a tail's key has 8 bytes too many"},
            new Object[] {pid(key(1, 3), 3), new byte[16], "a position has 1 bytes too many"},
            new Object[] {pid(key(1, 3), 3), flags(4), "unknown flags 4 in the tail's position for PID 3"});

    @Test
    void recordsTheLibraryNeverWroteAreRefusedByName() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-paths-foreign").toFile();
        try {
            int i = 0;
            for (Object[] f : FOREIGN) {
                try (Destination d = Destination.compacted(dir, "__mirror_paths" + i++, 0)) {
                    PathLog paths = new PathLog(d.log(), 1);
                    paths.store("east", 1, 1, Map.of(5L, AT_3));
                    d.log().appendAsLeader(MemoryRecords.withRecords(Compression.NONE,
                            new SimpleRecord((byte[]) f[0], (byte[]) f[1])), 1);
                    CorruptStateException e = assertThrows(CorruptStateException.class, paths::read);
                    assertTrue(e.getMessage().startsWith((String) f[2]), e.getMessage() + " / " + f[2]);
                }
            }
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    @Test
    void aSnapshotFileTooShortForItsOffsetIsRefused() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-state").toFile();
        try (Destination d = Destination.compacted(dir, "__mirror_state", 0)) {
            File snapshot = new File(dir, "snapshot");
            Files.write(snapshot.toPath(), new byte[5]);
            StateLog state = new StateLog(d.log(), 1, snapshot.toPath());
            CorruptStateException e = assertThrows(CorruptStateException.class,
                    () -> state.recover(b -> null, () -> null));
            assertTrue(e.getMessage().contains("holds 5 bytes, fewer than the offset it starts with"), e.getMessage());
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    @Test
    void aJudgementMadeBeforeAnotherWasAppliedIsStale() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-stale").toFile();
        try (Destination d = Destination.create(dir, "stale", 0)) {
            Copies copies = new Copies(Copies.DEFAULT_HORIZON_MS);
            MemoryRecords one = MemoryRecords.withIdempotentRecords(Compression.NONE, 7L, (short) 0, 0,
                    new SimpleRecord(new byte[1]));
            Copies.Judgement first = copies.judge(d.log(), "east", one.batches(), 0);
            Copies.Judgement second = copies.judge(d.log(), "west", one.batches(), 0);
            copies.apply(first);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> copies.apply(second));
            assertTrue(e.getMessage().contains("stale judgement of path west"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> copies.apply(first), "applied twice");
            assertEquals(Map.of(7L, new Position((short) 0, 0, false, 0)), copies.positions("east"));
            assertEquals(Map.of(), copies.positions("west"), "the stale one changed nothing");
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /** A key of one byte (no args), or of a version and a kind alone. */
    private static byte[] key(int... versionAndKind) {
        if (versionAndKind.length == 0) {
            return new byte[1];
        }
        return ByteBuffer.allocate(3).putShort((short) versionAndKind[0]).put((byte) versionAndKind[1]).array();
    }

    private static byte[] key(int version, int kind, String path) {
        byte[] name = path.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + name.length).putShort((short) version).put((byte) kind)
                .putShort((short) name.length).put(name).array();
    }

    private static byte[] pid(byte[] key, long pid) {
        return ByteBuffer.allocate(key.length + 8).put(key).putLong(pid).array();
    }

    private static byte[] offsets(long next, long end) {
        return ByteBuffer.allocate(16).putLong(next).putLong(end).array();
    }

    private static byte[] flags(int flags) {
        return ByteBuffer.allocate(15).putShort((short) 0).putInt(3).put((byte) flags).putLong(0).array();
    }
}
