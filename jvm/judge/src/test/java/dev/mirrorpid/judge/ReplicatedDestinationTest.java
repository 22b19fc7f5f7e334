package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.Durability;
import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.server.common.TransactionVersion;
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
    private static final TransactionVersion TV = TransactionVersion.TV_2;
    /** How many random schedules each scenario runs ({@code -Dmirrorpid.replicated.schedules=N} for more). */
    private static final int SCHEDULES = Integer.getInteger("mirrorpid.replicated.schedules", 12);

    /** What feeds a destination: its paths, where each fetches from, and what was committed. */
    private interface Topology extends AutoCloseable {
        /** The paths into the destination, by the name a schedule uses. */
        List<String> paths();

        /** The path's source cluster ID (the mapper's path). */
        String id(String path);

        /** Where the path fetches from. */
        ReplicatedLane.Upstream upstream(String path);

        /** The upstream offset after the path's first {@code items} batches. */
        long until(String path, int items);

        /** How many batches the path carries in all. */
        int length(String path);

        /** Each source cluster's read_committed records, by cluster name. */
        Map<String, List<Judged.Rec>> committed() throws IOException;

        @Override
        void close() throws IOException;
    }

    /** Paths straight from source logs, or from mirrorpid hops of one: fan-in, a chain, a diamond. */
    private static final class Logs implements Topology {
        final List<World> worlds;
        final Map<String, Destination> upstreams = new LinkedHashMap<>();
        final Map<String, String> ids = new HashMap<>();
        final Map<String, long[]> ends = new HashMap<>();

        Logs(List<World> worlds) {
            this.worlds = worlds;
        }

        void path(String name, String id, Destination upstream) throws IOException {
            upstreams.put(name, upstream);
            ids.put(name, id);
            ends.put(name, World.ends(upstream));
        }

        @Override
        public List<String> paths() {
            return List.copyOf(upstreams.keySet());
        }

        @Override
        public String id(String path) {
            return ids.get(path);
        }

        @Override
        public ReplicatedLane.Upstream upstream(String path) {
            return ReplicatedLane.of(upstreams.get(path));
        }

        @Override
        public long until(String path, int items) {
            long[] e = ends.get(path);
            int n = Math.min(items, e.length);
            return n == 0 ? 0 : e[n - 1];
        }

        @Override
        public int length(String path) {
            return ends.get(path).length;
        }

        @Override
        public Map<String, List<Judged.Rec>> committed() throws IOException {
            Map<String, List<Judged.Rec>> out = new LinkedHashMap<>();
            for (World w : worlds) {
                out.put(w.cluster, w.a.destination.readCommitted());
            }
            return out;
        }

        @Override
        public void close() throws IOException {
            for (World w : worlds) {
                w.close();
            }
        }
    }

    /** Cluster {@code cluster}'s three producers ({@link World#threeProducers}), PIDs 4, 5 and 6 on every cluster. */
    private static World stream(String cluster) throws IOException {
        return World.threeProducers(cluster, TV);
    }

    /** Fan-in: clusters A and B, the same PIDs on each, straight into D. */
    private static Logs fanIn() throws IOException {
        World a = stream("A");
        World b = stream("B");
        Logs t = new Logs(List.of(a, b));
        t.path("A", a.id(), a.a.destination);
        t.path("B", b.id(), b.a.destination);
        return t;
    }

    /** A chain: A mirrored into B by mirrorpid, B into D. */
    private static Logs chain() throws IOException {
        World a = stream("A").hops();
        Logs t = new Logs(List.of(a));
        t.path("B", SourceCluster.clusterIdOf("B"), a.b.destination);
        return t;
    }

    /** A diamond: A into B and into C, both into D, each path lagging as a schedule has it. */
    private static Logs diamond() throws IOException {
        World a = stream("A").hops();
        Logs t = new Logs(List.of(a));
        t.path("B", SourceCluster.clusterIdOf("B"), a.b.destination);
        t.path("C", SourceCluster.clusterIdOf("C"), a.c.destination);
        return t;
    }

    // One step of a schedule.

    private sealed interface Step permits Fetch, Replicate, Kill, Crash, DieBeforeReplication, Lag, Revive, Move, Produce {}

    /** A region's local producers write their next {@code batches} batches (two-way only). */
    private record Produce(int batches) implements Step {
        @Override
        public String toString() {
            return batches + " local batches";
        }
    }

    /** D fetches {@code path} up to its {@code items}-th batch. */
    private record Fetch(String path, int items) implements Step {
        @Override
        public String toString() {
            return path + " to " + items;
        }
    }

    /** {@code partition}'s followers fetch (those out of the in-sync replicas too). */
    private record Replicate(String partition) implements Step {
        @Override
        public String toString() {
            return partition + " replicates";
        }
    }

    /** {@code partition}'s leader dies. */
    private record Kill(String partition) implements Step {
        @Override
        public String toString() {
            return partition + "'s leader dies";
        }
    }

    /** D's leader dies at {@code step} of the next fetch. */
    private record Crash(MirrorLoop.Step step) implements Step {
        @Override
        public String toString() {
            return "D's leader dies after " + step;
        }
    }

    /** {@code partition}'s leader dies after its next append, before a follower fetches it. */
    private record DieBeforeReplication(String partition) implements Step {
        @Override
        public String toString() {
            return partition + "'s leader dies before replicating its next append";
        }
    }

    /** A follower of {@code partition} ({@code pick} chooses which) falls out of the in-sync replicas. */
    private record Lag(String partition, int pick) implements Step {
        @Override
        public String toString() {
            return "a follower of " + partition + " falls out of sync";
        }
    }

    /** Every broker of every partition returns and catches up. */
    private record Revive() implements Step {
        @Override
        public String toString() {
            return "every broker back";
        }
    }

    /** {@code partition}'s leadership moves (a controlled move: the old leader follows). */
    private record Move(String partition, int pick) implements Step {
        @Override
        public String toString() {
            return partition + "'s leadership moves";
        }
    }

    private static final String D = "D";
    private static final String STATE = "__mirror_state";
    private static final String PATHS = "__mirror_paths";

    private static ReplicatedPartition partition(ReplicatedLane d, String name) {
        return switch (name) {
            case D -> d.destination;
            case STATE -> d.state;
            default -> d.paths;
        };
    }

    /**
     * What one run left: the verdict (null: it holds), Kafka's producer entries at D, what was
     * refused, the copies dropped, and for D, {@code __mirror_state} and {@code __mirror_paths}
     * in that order, how often the leader changed and how many offsets returning replicas
     * truncated.
     */
    private record Outcome(String verdict, String producers, List<String> refused, int copies, int[] elections,
            long[] truncated) {
        String faults() {
            return "leader changes " + java.util.Arrays.toString(elections) + ", offsets truncated "
                    + java.util.Arrays.toString(truncated);
        }
    }

    /** Runs {@code schedule} against a fresh D fed by {@code topology}, then every path to its end. */
    private static Outcome run(Topology topology, File dir, List<Step> schedule, boolean checkpointAtLogEnd)
            throws IOException {
        File home = Files.createTempDirectory(dir.toPath(), "D").toFile();
        try (ReplicatedLane d = new ReplicatedLane(D, home, new SimClock(PresetRun.START_MS), World.EXPIRATION_MS)) {
            d.checkpointAtLogEnd = checkpointAtLogEnd;
            Map<String, List<Judged.Rec>> committed = topology.committed();
            List<String> visible = new ArrayList<>();
            for (Step s : schedule) {
                apply(d, topology, s);
                String v = prefixes(committed, d.readCommitted());
                if (v != null && visible.isEmpty()) {
                    visible.add("after " + s + ": " + v);
                }
            }
            d.finish();
            for (String path : topology.paths()) {
                for (int tries = 0; tries < 4 && !d.mirror(topology.id(path), topology.upstream(path),
                        Long.MAX_VALUE, b -> true); tries++) {
                    d.settle();
                }
            }
            d.finish();
            String verdict = Judged.oracle(committed, d.readCommitted());
            String one = onePidPerProducer(d);
            List<String> faults = new ArrayList<>(visible);
            if (verdict != null) {
                faults.add(verdict);
            }
            if (one != null) {
                faults.add(one);
            }
            if (!d.refusals.isEmpty()) {
                faults.add("Kafka refused " + d.refusals);
            }
            return new Outcome(faults.isEmpty() ? null : String.join("; ", faults),
                    Judged.producers(Destination.producers(d.destination.leaderLog())), List.copyOf(d.refusals),
                    d.copies, new int[] {d.destination.elections, d.state.elections, d.paths.elections},
                    new long[] {d.destination.truncated, d.state.truncated, d.paths.truncated});
        }
    }

    private static void apply(ReplicatedLane d, Topology topology, Step s) throws IOException {
        if (s instanceof Fetch f) {
            d.mirror(topology.id(f.path()), topology.upstream(f.path()), topology.until(f.path(), f.items()),
                    b -> true);
        } else if (s instanceof Replicate r) {
            partition(d, r.partition()).replicate();
        } else if (s instanceof Kill k) {
            ReplicatedPartition p = partition(d, k.partition());
            if (!p.canLoseLeader()) {
                p.settle();
            }
            d.kill(p);
        } else if (s instanceof Crash c) {
            if (!d.destination.canLoseLeader()) {
                d.destination.settle();
            }
            d.crashAt(c.step());
        } else if (s instanceof DieBeforeReplication x) {
            ReplicatedPartition p = partition(d, x.partition());
            if (!p.canLoseLeader()) {
                p.settle();
            }
            d.dieBeforeReplication(p);
        } else if (s instanceof Lag l) {
            ReplicatedPartition p = partition(d, l.partition());
            int f = p.follower(l.pick());
            if (f >= 0 && p.inSync() > ReplicatedPartition.MIN_INSYNC) {
                p.dropFromIsr(f);
            }
        } else if (s instanceof Revive) {
            d.settle();
        } else if (s instanceof Move m) {
            ReplicatedPartition p = partition(d, m.partition());
            p.settle();
            p.moveLeader(p.follower(m.pick()));
            d.lead();
        }
    }

    /**
     * Null when, source by source, what the destination's consumers read is a prefix of what the
     * source committed; else what is not.
     */
    private static String prefixes(Map<String, List<Judged.Rec>> committed, List<Judged.Rec> read) {
        Map<String, List<Judged.Rec>> got = new LinkedHashMap<>();
        for (Judged.Rec r : read) {
            got.computeIfAbsent(r.from(), k -> new ArrayList<>()).add(r);
        }
        for (Map.Entry<String, List<Judged.Rec>> e : got.entrySet()) {
            List<Judged.Rec> want = committed.getOrDefault(e.getKey(), List.of());
            List<Judged.Rec> have = e.getValue();
            if (have.size() > want.size() || !want.subList(0, have.size()).equals(have)) {
                return e.getKey() + "'s records read as " + have + ", not a prefix of " + want;
            }
        }
        return null;
    }

    /** Null when every producer is under one PID and every PID is one producer's; else who is not. */
    private static String onePidPerProducer(ReplicatedLane d) throws IOException {
        Map<String, Set<Long>> pids = new TreeMap<>();
        Map<Long, Set<String>> owners = new TreeMap<>();
        for (Destination.Batch b : Destination.batches(d.destination.leaderLog())) {
            pids.computeIfAbsent(b.producer(), k -> new TreeSet<>()).add(b.pid());
            owners.computeIfAbsent(b.pid(), k -> new TreeSet<>()).add(b.producer());
        }
        for (Map.Entry<String, Set<Long>> e : pids.entrySet()) {
            if (e.getValue().size() != 1) {
                return e.getKey() + " under PIDs " + e.getValue();
            }
        }
        for (Map.Entry<Long, Set<String>> e : owners.entrySet()) {
            if (e.getValue().size() != 1) {
                return "PID " + e.getKey() + " carries " + e.getValue();
            }
        }
        return null;
    }

    private static Fetch fetch(String path, int items) {
        return new Fetch(path, items);
    }

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
        return state.recover(b -> {
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

    // Random schedules, scenario by scenario.

    /** A random schedule over {@code topology}'s paths: fetches, replication and every fault. */
    private static List<Step> schedule(Topology topology, Random random) {
        List<Step> out = new ArrayList<>();
        Map<String, Integer> at = new HashMap<>();
        String[] partitions = {D, D, D, STATE, PATHS};
        int steps = 8 + random.nextInt(16);
        for (int i = 0; i < steps; i++) {
            int pick = random.nextInt(100);
            String p = partitions[random.nextInt(partitions.length)];
            if (pick < 40) {
                List<String> paths = topology.paths();
                String path = paths.get(random.nextInt(paths.size()));
                int from = at.getOrDefault(path, 0);
                int to = from + random.nextInt(topology.length(path) - from + 1);
                at.put(path, to);
                out.add(fetch(path, to));
            } else if (pick < 58) {
                out.add(new Replicate(p));
            } else if (pick < 66) {
                out.add(new Kill(p));
            } else if (pick < 76) {
                MirrorLoop.Step[] points = MirrorLoop.Step.values();
                out.add(new Crash(points[random.nextInt(points.length)]));
            } else if (pick < 82) {
                out.add(new DieBeforeReplication(random.nextBoolean() ? STATE : PATHS));
            } else if (pick < 89) {
                out.add(new Lag(p, random.nextInt(2)));
            } else if (pick < 94) {
                out.add(new Move(p, random.nextInt(2)));
            } else {
                out.add(new Revive());
            }
        }
        return out;
    }

    private interface Scenario {
        Topology make() throws IOException;
    }

    /**
     * Runs {@link #SCHEDULES} random schedules of {@code scenario}; each must hold. Each runs again
     * with the checkpoints at the log end, and some of those must lose records.
     */
    private static void randomly(String name, Scenario scenario) throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-replicated").toFile();
        try (Topology t = scenario.make()) {
            int copies = 0;
            int lost = 0;
            String example = null;
            for (int seed = 0; seed < SCHEDULES; seed++) {
                List<Step> schedule = schedule(t, new Random(seed));
                Outcome o = run(t, dir, schedule, false);
                assertNull(o.verdict(), name + ", seed " + seed + ": " + schedule + " (" + o.faults() + ")");
                copies += o.copies();
                Outcome mutated = run(t, dir, schedule, true);
                if (mutated.verdict() != null && mutated.verdict().contains("lost")) {
                    lost++;
                    example = example == null ? "seed " + seed + ": " + mutated.verdict() : example;
                }
            }
            assertTrue(lost > 0, name + ": with checkpoints at the log end, some schedule must lose records");
            String scenarioName = name + ": " + SCHEDULES + " random schedules of fetches, replication, leaders "
                    + "dying (D's at every step of a fetch; __mirror_state's and __mirror_paths' before replicating), "
                    + "followers falling out of sync, leadership moved";
            REPORT.judged(scenarioName, "mirrorpid", "one PID per producer, every PID one producer's", List.of(),
                    copies, null);
            REPORT.judged(scenarioName, "mirrorpid, checkpoints at the log end", lost + " of " + SCHEDULES
                    + " schedules lost committed records", List.of(), 0, example);
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    @Test
    void fanInUnderRandomFaults() throws Exception {
        randomly("fan-in (A and B, the same PIDs on each)", ReplicatedDestinationTest::fanIn);
    }

    @Test
    void aChainUnderRandomFaults() throws Exception {
        randomly("chain (A into B by mirrorpid, B into D)", ReplicatedDestinationTest::chain);
    }

    @Test
    void aDiamondWithLaggingPathsUnderRandomFaults() throws Exception {
        randomly("diamond (A into B and C, both into D), paths lagging", ReplicatedDestinationTest::diamond);
    }

    // Two regions mirroring each other.

    /**
     * Regions X and Y, each a replicated partition taking its own producers' writes ({@code
     * acks=all}, retried on a new leader as an idempotent producer retries) and mirroring the
     * other's with the cycle check {@code docs/DESIGN.md} asks of a mirror: only the batches
     * produced in the region it fetches from (by the records' {@code from} header; a marker goes
     * where its producer's last data batch came from), read below that region's high watermark.
     * Each region's producers are PIDs 4, 5 and 6. What each region's producers wrote is a
     * single-replica log of its own ({@link World}), the truth both regions are judged against.
     */
    private static final class TwoWay implements AutoCloseable {
        final World[] worlds = new World[2];
        final List<List<MemoryRecords>> produced = new ArrayList<>();
        final int[] at = new int[2];
        final ReplicatedLane[] regions = new ReplicatedLane[2];
        final List<Map<Long, String>> provenance = List.of(new HashMap<>(), new HashMap<>());
        static final String[] NAMES = {"X", "Y"};

        TwoWay(File dir) throws IOException {
            for (int r = 0; r < 2; r++) {
                worlds[r] = stream(NAMES[r]);
                List<MemoryRecords> batches = new ArrayList<>();
                for (MutableRecordBatch b : worlds[r].a.destination.fetch(0).batches()) {
                    ByteBuffer one = ByteBuffer.allocate(b.sizeInBytes());
                    b.writeTo(one);
                    one.flip();
                    MemoryRecords batch = MemoryRecords.readableRecords(one);
                    // As the producer sent it: a produce request's batches start at offset 0.
                    batch.batches().iterator().next().setLastOffset(b.lastOffset() - b.baseOffset());
                    batches.add(batch);
                }
                produced.add(batches);
                regions[r] = new ReplicatedLane(NAMES[r], new File(dir, NAMES[r]), new SimClock(PresetRun.START_MS),
                        World.EXPIRATION_MS);
            }
        }

        /** Region {@code r}'s producers write their next {@code n} batches. */
        void produce(int r, int n) throws IOException {
            for (int i = 0; i < n && at[r] < produced.get(r).size(); i++) {
                assertTrue(regions[r].produce(produced.get(r).get(at[r]++), TV), NAMES[r] + "'s produce refused: "
                        + regions[r].refusals);
            }
        }

        /** Region {@code r} mirrors what the other region's producers wrote, below its high watermark. */
        boolean mirror(int r) throws IOException {
            int o = 1 - r;
            return regions[r].mirror(worlds[o].id(), regions[o].asUpstream(), Long.MAX_VALUE,
                    Judged.producedIn(NAMES[o], provenance.get(r)));
        }

        Map<String, List<Judged.Rec>> committed() throws IOException {
            Map<String, List<Judged.Rec>> out = new LinkedHashMap<>();
            for (int r = 0; r < 2; r++) {
                out.put(NAMES[r], worlds[r].a.destination.readCommitted());
            }
            return out;
        }

        @Override
        public void close() throws IOException {
            for (int r = 0; r < 2; r++) {
                if (regions[r] != null) {
                    regions[r].close();
                }
                worlds[r].close();
            }
        }
    }

    /** A random two-way schedule: each step a region's, its local writes among the others. */
    private static List<Map.Entry<Integer, Step>> twoWaySchedule(Random random) {
        List<Map.Entry<Integer, Step>> out = new ArrayList<>();
        int steps = 10 + random.nextInt(16);
        String[] partitions = {D, D, D, STATE, PATHS};
        for (int i = 0; i < steps; i++) {
            int region = random.nextInt(2);
            int pick = random.nextInt(100);
            String p = partitions[random.nextInt(partitions.length)];
            Step s;
            if (pick < 25) {
                s = new Produce(1 + random.nextInt(6));
            } else if (pick < 45) {
                s = fetch("other", Integer.MAX_VALUE);
            } else if (pick < 60) {
                s = new Replicate(p);
            } else if (pick < 67) {
                s = new Kill(p);
            } else if (pick < 77) {
                MirrorLoop.Step[] points = MirrorLoop.Step.values();
                s = new Crash(points[random.nextInt(points.length)]);
            } else if (pick < 84) {
                s = new DieBeforeReplication(random.nextInt(3) == 0 ? D : random.nextBoolean() ? STATE : PATHS);
            } else if (pick < 92) {
                s = new Lag(p, random.nextInt(2));
            } else {
                s = new Revive();
            }
            out.add(Map.entry(region, s));
        }
        return out;
    }

    @Test
    void twoRegionsMirroringEachOtherUnderRandomFaults() throws Exception {
        int copies = 0;
        for (int seed = 0; seed < SCHEDULES; seed++) {
            File dir = Files.createTempDirectory("mirrorpid-two-way").toFile();
            List<Map.Entry<Integer, Step>> schedule = twoWaySchedule(new Random(seed));
            try (TwoWay w = new TwoWay(dir)) {
                Map<String, List<Judged.Rec>> committed = w.committed();
                for (Map.Entry<Integer, Step> e : schedule) {
                    int r = e.getKey();
                    if (e.getValue() instanceof Produce p) {
                        w.produce(r, p.batches());
                    } else if (e.getValue() instanceof Fetch) {
                        w.mirror(r);
                    } else {
                        apply(w.regions[r], null, e.getValue());
                    }
                    for (ReplicatedLane region : w.regions) {
                        String v = prefixes(committed, region.readCommitted());
                        assertNull(v, "seed " + seed + ", at " + region.name + " after " + e + ": " + schedule);
                    }
                }
                for (int r = 0; r < 2; r++) {
                    w.regions[r].settle();
                    w.produce(r, Integer.MAX_VALUE);
                }
                for (int round = 0; round < 3; round++) {
                    for (int r = 0; r < 2; r++) {
                        w.regions[r].finish();
                        w.mirror(r);
                    }
                }
                for (ReplicatedLane region : w.regions) {
                    region.finish();
                    String verdict = Judged.oracle(committed, region.readCommitted());
                    assertNull(verdict, "seed " + seed + ", at " + region.name + ": " + schedule);
                    assertNull(onePidPerProducer(region), "seed " + seed + ", at " + region.name);
                    assertTrue(region.refusals.isEmpty(), region.refusals.toString());
                    copies += region.copies;
                }
            } finally {
                KafkaLogs.delete(dir);
            }
        }
        REPORT.judged("two-way (X and Y each take their own producers' writes and mirror the other's, "
                + "cycle-checked): " + SCHEDULES + " random schedules of local writes, fetches, replication, "
                + "leaders dying (at every step of a fetch, before replicating an append), followers falling out "
                + "of sync", "mirrorpid", "one PID per producer at X and at Y, every PID one producer's", List.of(),
                copies, null);
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
