package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.Durability;
import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.kafka.KitAccess;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import static dev.mirrorpid.judge.Replicated.*;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A replicated destination: the destination partition, {@code __mirror_state} and {@code
 * __mirror_paths} each of three replicas ({@link ReplicatedPartition}: Kafka {@code
 * UnifiedLog}s in directories of their own, followers appending with {@code appendAsFollower},
 * the high watermark the in-sync replicas' least log end, Kafka's leader-epoch truncation when a
 * replica follows a new leader), their leaders failing independently, at the worst moments, in
 * the scenarios of {@code docs/KAFKA.md}: fan-in, a chain, a diamond with its paths lagging, and
 * two regions mirroring each other.
 *
 * <p>The judge, once every broker is back: the destination's read_committed read, by Kafka's
 * aborted-transaction index, holds each source's committed records, each once and in order
 * (nothing lost, nothing never committed, nothing twice); every producer appears under one PID
 * and every PID is one producer's; and after every step, what a consumer can read (below the
 * high watermark, read_committed below the last stable offset) is, source by source, a prefix of
 * what the source committed. The same suite with the checkpoints at the destination's log end
 * (the kit's rule removed) must lose records: that is what shows the suite sees the failure.
 */
class ReplicatedDestinationTest {
    private static final Report REPORT = new Report("replicated");

    // The named faults.

    @Test
    void theDestinationsLeaderDiesAfterAppendingBeforeItsFollowersFetch() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-replicated").toFile();
        try (Logs t = fanIn()) {
            // The checkpoint not yet tried (the leader dies at APPENDED), and tried (the fetch
            // returned, its checkpoint stored as far as the high watermark): either way the new
            // leader lacks the batches, and the path must fetch them again.
            List<Step> notTried = List.of(fetch("A", 6), new Replicate(D), new Crash(MirrorLoop.Step.APPENDED),
                    fetch("A", 12));
            List<Step> tried = List.of(fetch("A", 6), new Replicate(D), fetch("A", 12), new Kill(D));
            List<Step> nothingReplicated = List.of(fetch("A", 6), fetch("B", 9), new Kill(D), fetch("B", 20),
                    new Kill(D));
            for (List<Step> schedule : List.of(notTried, tried, nothingReplicated)) {
                Outcome kept = run(t, dir, schedule, false);
                assertNull(kept.verdict(), schedule + " (" + kept.faults() + ")");
                assertTrue(kept.truncated()[0] > 0, "the old leader truncated what it appended: " + kept.faults());
                REPORT.judged("fan-in: " + schedule, "mirrorpid", kept.producers(), kept.refused(), kept.copies(), null);
                if (schedule == notTried) {
                    // Its leader died before the checkpoint was tried: there is nothing to remove.
                    continue;
                }
                Outcome lost = run(t, dir, schedule, true);
                assertNotNull(lost.verdict(), "with checkpoints at the log end, " + schedule + " must lose records");
                assertTrue(lost.verdict().contains("lost"), lost.verdict());
                REPORT.judged("fan-in: " + schedule, "mirrorpid, checkpoints at the log end", lost.producers(),
                        lost.refused(), lost.copies(), lost.verdict());
            }
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    @Test
    void theStateLeaderDiesAfterTheRecordsAppendBeforeTheirReplication() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-replicated").toFile();
        try (Logs t = fanIn()) {
            List<Step> schedule = List.of(fetch("A", 3), new DieBeforeReplication(STATE), fetch("B", 3),
                    fetch("B", 8), new DieBeforeReplication(STATE), fetch("A", 10), new Kill(D));
            Outcome o = run(t, dir, schedule, false);
            assertNull(o.verdict(), schedule.toString());
            assertTrue(o.elections()[1] >= 2 && o.truncated()[1] > 0,
                    "the state's leader died twice, and its records appended before were truncated: " + o.faults());
            REPORT.judged("fan-in: " + schedule, "mirrorpid", o.producers(), o.refused(), o.copies(), null);
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    @Test
    void thePathsLeaderDiesAfterACheckpointsAppendBeforeItsReplication() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-replicated").toFile();
        try (Logs t = diamond()) {
            List<Step> schedule = List.of(fetch("B", 4), new Replicate(D), new DieBeforeReplication(PATHS),
                    fetch("C", 2), fetch("B", 7), new Replicate(D), fetch("C", 9), new Kill(D));
            Outcome o = run(t, dir, schedule, false);
            assertNull(o.verdict(), schedule.toString());
            assertTrue(o.elections()[2] >= 1 && o.truncated()[2] > 0,
                    "the paths' leader died, and the checkpoint appended before was truncated: " + o.faults());
            REPORT.judged("diamond: " + schedule, "mirrorpid", o.producers(), o.refused(), o.copies(), null);
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    @Test
    void aFollowerFallsOutOfTheIsrAndComesBackAndTwoLeaderChangesInARow() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-replicated").toFile();
        try (Logs t = diamond()) {
            List<Step> lagging = List.of(fetch("B", 4), new Lag(D, 0), fetch("C", 6), new Replicate(D),
                    fetch("B", 9), new Kill(D), new Revive(), fetch("C", 14));
            List<Step> twice = List.of(fetch("B", 5), new Replicate(D), fetch("C", 8), new Kill(D), fetch("B", 11),
                    new Kill(D), fetch("C", 12), new Kill(STATE), new Kill(PATHS));
            for (List<Step> schedule : List.of(lagging, twice)) {
                Outcome o = run(t, dir, schedule, false);
                assertNull(o.verdict(), schedule.toString());
                REPORT.judged("diamond: " + schedule, "mirrorpid", o.producers(), o.refused(), o.copies(), null);
            }
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /**
     * A new leader on a broker without the previous leader's snapshot file replays every record
     * and maps every producer as the old leader did; one whose file is older than the latest
     * snapshot does not use it.
     */
    @Test
    void aNewLeaderWithoutThePreviousLeadersSnapshotRecoversExactly() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-replicated").toFile();
        try (Logs t = fanIn();
                ReplicatedLane d = new ReplicatedLane(D, new File(dir, "D"), new SimClock(PresetRun.START_MS),
                        World.EXPIRATION_MS)) {
            d.mirror(t.id("A"), t.upstream("A"), t.until("A", 8), b -> true);
            d.destination.moveLeader(2);
            d.lead();
            d.loop().snapshot();
            assertTrue(d.snapshotFile(2).exists(), "broker 2 took a snapshot");
            d.mirror(t.id("B"), t.upstream("B"), t.until("B", 8), b -> true);
            d.destination.replicate();
            d.loop().snapshot();
            d.mirror(t.id("B"), t.upstream("B"), t.until("B", 14), b -> true);
            Map<String, Long> before = mappings(d.loop().mapper(), t);

            // Broker 0 has no file; broker 1 none either; then a broker with the old file.
            for (int broker : new int[] {0, 1}) {
                d.settle();
                d.destination.moveLeader(broker);
                assertTrue(!d.snapshotFile(broker).exists(), "broker " + broker + " has no snapshot");
                int[] restored = {0};
                try (PidMapper recovered = recover(d, d.snapshotFile(broker), restored)) {
                    assertEquals(0, restored[0], "no snapshot to restore on broker " + broker);
                    assertEquals(before, mappings(recovered, t), "broker " + broker + " maps as the old leader did");
                }
            }
            // Broker 2's file is older than the latest snapshot once broker 0 takes one.
            d.destination.moveLeader(0);
            d.lead();
            d.loop().snapshot();
            File stale = d.snapshotFile(2);
            Files.copy(d.snapshotFile(0).toPath(), new File(dir, "latest").toPath());
            d.mirror(t.id("A"), t.upstream("A"), t.until("A", 20), b -> true);
            d.destination.replicate();
            d.loop().snapshot();
            byte[] older = Files.readAllBytes(new File(dir, "latest").toPath());
            Files.write(stale.toPath(), older);
            Map<String, Long> now = mappings(d.loop().mapper(), t);
            int[] restored = {0};
            try (PidMapper recovered = recover(d, stale, restored)) {
                assertEquals(0, restored[0], "a snapshot older than the latest is not restored");
                assertEquals(now, mappings(recovered, t));
            }
            // And the latest, on its own broker, is.
            restored[0] = 0;
            try (PidMapper recovered = recover(d, d.snapshotFile(0), restored)) {
                assertEquals(1, restored[0], "the latest snapshot is restored on the broker that took it");
                assertEquals(now, mappings(recovered, t));
            }
            d.finish();
            for (String path : t.paths()) {
                assertTrue(d.mirror(t.id(path), t.upstream(path), Long.MAX_VALUE, b -> true));
            }
            d.finish();
            assertNull(Judged.oracle(t.committed(), d.readCommitted()));
            assertNull(onePidPerProducer(d));
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /**
     * The mapper a leader recovers from {@code d}'s {@code __mirror_state} with {@code
     * snapshotFile} as its broker's, counting in {@code restored} the snapshots it restored.
     */
    private static PidMapper recover(ReplicatedLane d, File snapshotFile, int[] restored) {
        StateLog state = new StateLog(d.state.leaderLog(), d.state.epoch(), d, snapshotFile.toPath());
        return KitAccess.recover(state, b -> {
            restored[0]++;
            return Lane.MODULE.restore(b);
        }, () -> Lane.MODULE.newMapper(d.config()));
    }

    /**
     * What {@code mapper} maps each producer of the topology's sources to, by "cluster/PID"; a
     * producer not bound yet is bound pending, and taken back before returning.
     */
    private static Map<String, Long> mappings(PidMapper mapper, Logs t) {
        Map<String, Long> out = new TreeMap<>();
        for (World w : t.worlds) {
            for (World.Producer p : w.producers.values()) {
                out.put(w.cluster + "/" + p.pid, mapper.map(w.id(), p.pid, PresetRun.START_MS).mapped());
            }
        }
        mapper.abort();
        return out;
    }

    /**
     * {@code collisions} durability, where a binding at salt 0 has no record: a new leader on a
     * broker without the old leader's snapshot could give that slot to another source's producer
     * (source 1's PID 2 binds R|2 at salt 0, the leader dies before any snapshot, the next gives
     * R|2 to source 2's PID 2, and the copies judgement drops source 2's committed batch as
     * source 1's). The kit refuses it, with Kafka's own typed error, before anything is read.
     */
    @Test
    void collisionsDurabilityIsRefused() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-replicated").toFile();
        try (ReplicatedLane d = new ReplicatedLane(D, new File(dir, "D"), new SimClock(PresetRun.START_MS),
                World.EXPIRATION_MS)) {
            MapperConfig collisions = MapperConfig.builder(Lane.DESTINATION_TOPIC_ID, 0)
                    .durability(Durability.COLLISIONS).build();
            StateLog state = new StateLog(d.state.leaderLog(), d.state.epoch(), d, d.snapshotFile(0).toPath());
            PathLog paths = new PathLog(d.paths.leaderLog(), d.paths.epoch(), d);
            long stateEnd = d.state.leaderLog().logEndOffset();
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> MirrorLoop.lead(Lane.MODULE, collisions, d, d.destination.leaderLog(), d.destination.epoch(),
                            state, paths));
            assertTrue(e.getMessage().contains("durability BINDINGS, not COLLISIONS"), e.getMessage());
            assertEquals(stateEnd, d.state.leaderLog().logEndOffset(), "nothing was written");
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
