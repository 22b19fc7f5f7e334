package dev.mirrorpid.judge;

import dev.mirrorpid.kafka.MirrorLoop;
import java.io.File;
import java.io.IOException;
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
import org.apache.kafka.server.common.TransactionVersion;

/**
 * What the replicated-destination suites share ({@link ReplicatedDestinationTest}, {@link
 * ReplicatedScheduleTest}): the topologies that feed a destination (fan-in, a chain, a diamond),
 * the steps of a schedule (fetches, replication, leaders dying at the worst moments, followers
 * falling out of sync), and the judge of a run.
 */
final class Replicated {
    static final TransactionVersion TV = TransactionVersion.TV_2;

    private Replicated() {}

    /** What feeds a destination: its paths, where each fetches from, and what was committed. */
    interface Topology extends AutoCloseable {
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
    static final class Logs implements Topology {
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
    static World stream(String cluster) throws IOException {
        return World.threeProducers(cluster, TV);
    }

    /** Fan-in: clusters A and B, the same PIDs on each, straight into D. */
    static Logs fanIn() throws IOException {
        World a = stream("A");
        World b = stream("B");
        Logs t = new Logs(List.of(a, b));
        t.path("A", a.id(), a.a.destination);
        t.path("B", b.id(), b.a.destination);
        return t;
    }

    /** A chain: A mirrored into B by mirrorpid, B into D. */
    static Logs chain() throws IOException {
        World a = stream("A").hops();
        Logs t = new Logs(List.of(a));
        t.path("B", SourceCluster.clusterIdOf("B"), a.b.destination);
        return t;
    }

    /** A diamond: A into B and into C, both into D, each path lagging as a schedule has it. */
    static Logs diamond() throws IOException {
        World a = stream("A").hops();
        Logs t = new Logs(List.of(a));
        t.path("B", SourceCluster.clusterIdOf("B"), a.b.destination);
        t.path("C", SourceCluster.clusterIdOf("C"), a.c.destination);
        return t;
    }

    // One step of a schedule.

    sealed interface Step permits Fetch, Replicate, Kill, Crash, DieBeforeReplication, Lag, Revive, Move, Produce {}

    /** A region's local producers write their next {@code batches} batches (two-way only). */
    record Produce(int batches) implements Step {
        @Override
        public String toString() {
            return batches + " local batches";
        }
    }

    /** D fetches {@code path} up to its {@code items}-th batch. */
    record Fetch(String path, int items) implements Step {
        @Override
        public String toString() {
            return path + " to " + items;
        }
    }

    /** {@code partition}'s live followers fetch, but those that fell out of sync ({@link Lag}). */
    record Replicate(String partition) implements Step {
        @Override
        public String toString() {
            return partition + " replicates";
        }
    }

    /** {@code partition}'s leader dies. */
    record Kill(String partition) implements Step {
        @Override
        public String toString() {
            return partition + "'s leader dies";
        }
    }

    /** D's leader dies at {@code step} of the next fetch. */
    record Crash(MirrorLoop.Step step) implements Step {
        @Override
        public String toString() {
            return "D's leader dies after " + step;
        }
    }

    /** {@code partition}'s leader dies after its next append, before a follower fetches it. */
    record DieBeforeReplication(String partition) implements Step {
        @Override
        public String toString() {
            return partition + "'s leader dies before replicating its next append";
        }
    }

    /** A follower of {@code partition} ({@code pick} chooses which) falls out of the in-sync replicas. */
    record Lag(String partition, int pick) implements Step {
        @Override
        public String toString() {
            return "a follower of " + partition + " falls out of sync";
        }
    }

    /** Every broker of every partition returns and catches up. */
    record Revive() implements Step {
        @Override
        public String toString() {
            return "every broker back";
        }
    }

    /** {@code partition}'s leadership moves (a controlled move: the old leader follows). */
    record Move(String partition, int pick) implements Step {
        @Override
        public String toString() {
            return partition + "'s leadership moves";
        }
    }

    static final String D = "D";
    static final String STATE = "__mirror_state";
    static final String PATHS = "__mirror_paths";

    static ReplicatedPartition partition(ReplicatedLane d, String name) {
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
    record Outcome(String verdict, String producers, List<String> refused, int copies, int[] elections,
            long[] truncated) {
        String faults() {
            return "leader changes " + java.util.Arrays.toString(elections) + ", offsets truncated "
                    + java.util.Arrays.toString(truncated);
        }
    }

    /** Runs {@code schedule} against a fresh D fed by {@code topology}, then every path to its end. */
    static Outcome run(Topology topology, File dir, List<Step> schedule, boolean checkpointAtLogEnd)
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

    static void apply(ReplicatedLane d, Topology topology, Step s) throws IOException {
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
    static String prefixes(Map<String, List<Judged.Rec>> committed, List<Judged.Rec> read) {
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
    static String onePidPerProducer(ReplicatedLane d) throws IOException {
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

    static Fetch fetch(String path, int items) {
        return new Fetch(path, items);
    }

    // Random schedules, scenario by scenario.

    /** A random schedule over {@code topology}'s paths: fetches, replication and every fault. */
    static List<Step> schedule(Topology topology, Random random) {
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

}
