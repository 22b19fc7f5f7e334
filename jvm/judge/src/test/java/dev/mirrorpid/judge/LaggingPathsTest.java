package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.kafka.MirrorLoop;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.server.common.TransactionVersion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Two paths into one partition, one lagging the other, across leader changes and crashes: A's
 * producers are mirrored into B and into C, and B and C into D, all of them Kafka's own {@code
 * UnifiedLog}s. D fetches from each path only up to a chosen point of A's stream, so one path
 * is behind the other by a data batch, a COMMIT, an ABORT or several transactions, and D's
 * leader changes, or crashes at a step of the mirror protocol, while it is. Every COMMIT and
 * ABORT the lagging path brings late must be dropped as a copy, or it closes the transaction
 * the other path opened since; every marker the leading path brings must close its own.
 *
 * <p>The judge: D's read_committed read, by Kafka's own aborted-transaction index, equals A's;
 * Kafka's producer state at D holds one entry per producer of A with A's epoch and last
 * sequence. Each case runs under transaction versions 1 (a marker keeps its producer's epoch)
 * and 2 (Kafka 4's default: every marker bumps it), with a leader change between every two
 * fetches, and once more for each crash point of each fetch. The same cases with the paths'
 * positions lost at each leader change (only the offsets carried) must fail: that is what
 * shows the positions are what makes them pass.
 */
class LaggingPathsTest {
    private static final Report REPORT = new Report("lagging-paths");
    private static final int EXPIRATION_MS = World.EXPIRATION_MS;
    private static final String B_ID = SourceCluster.clusterIdOf("B");
    private static final String C_ID = SourceCluster.clusterIdOf("C");

    /** One step of a schedule at D. */
    private sealed interface Step permits Fetch, Elect, Crash, Expire, Store {}

    /** D fetches from a path (B or C) up to just after A's {@code items}-th batch. */
    private record Fetch(String path, int items) implements Step {
        @Override
        public String toString() {
            return path + " to " + items;
        }
    }

    /** D's leader changes. */
    private record Elect() implements Step {
        @Override
        public String toString() {
            return "leader change";
        }
    }

    /** D's next fetch crashes after {@code step}; the next leader takes over and fetches again. */
    private record Crash(MirrorLoop.Step step) implements Step {
        @Override
        public String toString() {
            return "crash after " + step;
        }
    }

    /**
     * D's producers go idle past the expiration: D's clock moves on, Kafka drops the idle
     * entries, and the loop expires the mapper's idle bindings (their tombstones persisted).
     */
    private record Expire() implements Step {
        @Override
        public String toString() {
            return "expiry";
        }
    }

    /** D stores its paths' checkpoints (a loop that defers them stores them only then). */
    private record Store() implements Step {
        @Override
        public String toString() {
            return "checkpoint";
        }
    }

    private static Fetch fetch(String path, int items) {
        return new Fetch(path, items);
    }

    private static final Elect ELECT = new Elect();
    private static final Expire EXPIRE = new Expire();
    private static final Store STORE = new Store();

    /** What one run left at D. */
    private record Outcome(String verdict, String producers, List<String> refused, int copies) {}

    /** A fetch to the end of A's stream. */
    private static final int END = Integer.MAX_VALUE;

    /** {@code schedule}, then both paths to the end of A's stream, {@code first}'s first. */
    private static List<Step> complete(List<Step> schedule, String first) {
        List<Step> all = new ArrayList<>(schedule);
        all.add(fetch(first, END));
        all.add(fetch(first.equals("B") ? "C" : "B", END));
        return all;
    }

    /** Runs {@code schedule} at a fresh D and judges what it left. */
    private static Outcome run(World w, List<Step> schedule, Lane.Carried carried) throws IOException {
        return run(w, schedule, carried, 0);
    }

    /**
     * As above, D's loop storing its checkpoint once {@code checkpointIntervalMs} passed on D's
     * clock ({@link Long#MAX_VALUE}: at a {@link Store} step or an expiry only).
     */
    private static Outcome run(World w, List<Step> schedule, Lane.Carried carried, long checkpointIntervalMs)
            throws IOException {
        try (Lane d = w.d(carried)) {
            if (checkpointIntervalMs != 0) {
                d.checkpointEvery(checkpointIntervalMs);
            }
            MirrorLoop.Step crash = null;
            boolean expired = false;
            for (Step s : schedule) {
                if (s instanceof Elect) {
                    d.elect();
                } else if (s instanceof Expire) {
                    SimClock clock = (SimClock) d.time();
                    clock.advance(EXPIRATION_MS + 1);
                    d.destination.log().producerStateManager().removeExpiredProducers(clock.milliseconds());
                    d.loop().expire(clock.milliseconds());
                    expired = true;
                } else if (s instanceof Store) {
                    d.loop().checkpoint();
                } else if (s instanceof Crash x) {
                    crash = x.step();
                } else {
                    Fetch f = (Fetch) s;
                    boolean fromB = f.path().equals("B");
                    long[] ends = fromB ? w.bEnds : w.cEnds;
                    int items = Math.min(f.items(), ends.length);
                    long until = items == 0 ? 0 : ends[items - 1];
                    Destination hop = (fromB ? w.b : w.c).destination;
                    String id = fromB ? B_ID : C_ID;
                    if (crash != null) {
                        d.crashAt(crash);
                        crash = null;
                        boolean done = d.mirror(f.path(), id, hop, until);
                        d.crashAt(null);
                        if (!done) {
                            if (!d.refusals.isEmpty()) {
                                break;
                            }
                            d.elect();
                        }
                    }
                    if (!d.mirror(f.path(), id, hop, until)) {
                        break;
                    }
                }
            }
            String verdict = Judged.oracle(Map.of("A", w.a.destination.readCommitted()), d.destination.readCommitted());
            String wrong = producers(w, d, expired);
            if (!d.refusals.isEmpty()) {
                verdict = "Kafka refused " + d.refusals + (verdict == null ? "" : "; " + verdict);
            }
            if (wrong != null) {
                verdict = verdict == null ? wrong : verdict + "; " + wrong;
            }
            return new Outcome(verdict, Judged.producers(d.destination.producers()), List.copyOf(d.refusals), d.copies);
        }
    }

    /**
     * Null when Kafka's producer state at D holds one entry per producer of A (or, after D
     * expired producers, at most one), each under one PID and with A's epoch and last sequence;
     * else what differs.
     */
    private static String producers(World w, Lane d, boolean expired) throws IOException {
        Map<String, Set<Long>> pids = new TreeMap<>();
        for (Destination.Batch b : d.destination.batches()) {
            pids.computeIfAbsent(b.producer(), k -> new TreeSet<>()).add(b.pid());
        }
        Map<Long, String> owner = new HashMap<>();
        for (Map.Entry<String, Set<Long>> e : pids.entrySet()) {
            if (e.getValue().size() != 1) {
                return e.getKey() + " under " + e.getValue();
            }
            owner.put(e.getValue().iterator().next(), e.getKey());
        }
        Map<String, List<Integer>> want = new TreeMap<>();
        Map<Long, String> source = new HashMap<>();
        for (Destination.Batch b : w.a.destination.batches()) {
            source.put(b.pid(), b.producer());
        }
        for (ProducerState s : w.a.destination.producers()) {
            want.put(source.get(s.producerId()), List.of(s.producerEpoch(), s.lastSequence(), (int) s.currentTxnStartOffset()));
        }
        Map<String, List<Integer>> got = new TreeMap<>();
        for (ProducerState s : d.destination.producers()) {
            String who = owner.get(s.producerId());
            if (who == null || got.containsKey(who)) {
                return "an entry at D for no producer, or a second: PID " + s.producerId();
            }
            got.put(who, List.of(s.producerEpoch(), s.lastSequence(), s.currentTxnStartOffset() < 0 ? -1 : 0));
        }
        // A's open-transaction column as D's: open or not, the offsets differ.
        want.replaceAll((k, v) -> List.of(v.get(0), v.get(1), v.get(2) < 0 ? -1 : 0));
        boolean right = expired ? want.entrySet().containsAll(got.entrySet()) : want.equals(got);
        return right ? null : "Kafka's producer state at D " + got + ", A's " + want;
    }

    /** A stream of one transactional producer: five transactions, committed and aborted in turn. */
    private static World transactions(TransactionVersion tv) throws IOException {
        World w = new World(tv);
        World.Producer t = w.producer("T", 4, true);
        w.data(t).data(t).end(t, ControlRecordType.COMMIT)                // 0 1 2
                .data(t).end(t, ControlRecordType.ABORT)                    // 3 4
                .data(t).end(t, ControlRecordType.COMMIT)                   // 5 6
                .data(t).data(t).end(t, ControlRecordType.ABORT)            // 7 8 9
                .data(t).end(t, ControlRecordType.COMMIT);                  // 10 11
        return w.hops();
    }

    /**
     * The named cases: the leading path's fetch, the lagging one's, then a leader change. In
     * each the leading path stops inside a transaction, so its next batch after the leader
     * change is the marker that closes it (which only its position can tell from a late one).
     */
    private static List<Case> cases(String lead, String lag) {
        String of = lag + " lags " + lead + " by ";
        return List.of(
                new Case(of + "a COMMIT", List.of(fetch(lead, 4), fetch(lag, 2), ELECT), true),
                new Case(of + "a data batch", List.of(fetch(lead, 4), fetch(lag, 3), ELECT), true),
                new Case(of + "an ABORT", List.of(fetch(lead, 6), fetch(lag, 4), ELECT), true),
                // Without positions the leading path's COMMIT is lost here too, but the lagging
                // path, which carries the whole transaction after the leader change, closes it.
                new Case(of + "several transactions", List.of(fetch(lead, 11), fetch(lag, 2), ELECT), false));
    }

    /** A named case; {@code needsPositions}: it fails when the positions are lost. */
    private record Case(String name, List<Step> steps, boolean needsPositions) {}

    /**
     * Each named case, with a leader change between every two fetches and once for every crash
     * point of every fetch, under both transaction versions; and the same with the positions
     * lost at each leader change, which must fail.
     */
    @Test
    void aLaggingPathsLateMarkersAreCopiesAcrossEveryLeaderChangeAndCrash() throws Exception {
        for (TransactionVersion tv : List.of(TransactionVersion.TV_1, TransactionVersion.TV_2)) {
            try (World w = transactions(tv)) {
                for (String[] roles : new String[][] {{"B", "C"}, {"C", "B"}}) {
                    for (Case c : cases(roles[0], roles[1])) {
                        int runs = 0;
                        for (String first : roles) {
                            for (List<Step> schedule : variants(complete(c.steps(), first))) {
                                Outcome o = run(w, schedule, Lane.Carried.ALL);
                                assertNull(o.verdict(), tv + ", " + c.name() + ", " + schedule);
                                runs++;
                            }
                        }
                        // The leading path on first after the leader change: its marker comes
                        // before the lagging path has carried the transaction again.
                        Outcome kept = run(w, complete(c.steps(), roles[0]), Lane.Carried.ALL);
                        Outcome lost = run(w, complete(c.steps(), roles[0]), Lane.Carried.OFFSETS);
                        if (c.needsPositions()) {
                            assertNotNull(lost.verdict(), tv + ", " + c.name() + ": without the positions it must fail");
                        } else {
                            assertNull(lost.verdict(), tv + ", " + c.name() + ": the lagging path closes it");
                        }
                        if (roles[0].equals("B")) {
                            String scenario = c.name() + ", then D's leader changes; transaction version "
                                    + tv.featureLevel() + " (" + runs + " runs: either path first after it, a "
                                    + "leader change between every two fetches, a crash at each step of each fetch)";
                            REPORT.judged(scenario, "mirrorpid", kept.producers(), kept.refused(), kept.copies(), null);
                            REPORT.judged(scenario, "mirrorpid, positions lost at the leader change", lost.producers(),
                                    lost.refused(), lost.copies(), lost.verdict());
                        }
                    }
                }
            }
        }
    }

    /**
     * {@code schedule}, then with a leader change between every two fetches, then once for each
     * crash point of each of its fetches.
     */
    private static List<List<Step>> variants(List<Step> schedule) {
        List<List<Step>> out = new ArrayList<>();
        out.add(schedule);
        List<Step> every = new ArrayList<>();
        for (Step s : schedule) {
            every.add(s);
            if (s instanceof Fetch) {
                every.add(ELECT);
            }
        }
        out.add(every);
        for (int i = 0; i < schedule.size(); i++) {
            if (!(schedule.get(i) instanceof Fetch)) {
                continue;
            }
            for (MirrorLoop.Step point : MirrorLoop.Step.values()) {
                List<Step> crashed = new ArrayList<>(schedule);
                crashed.add(i, new Crash(point));
                out.add(crashed);
            }
        }
        return out;
    }

    /**
     * Three producers (two transactional, restarted with and without a transaction open, and an
     * idempotent one) through random schedules: each path advanced to a random point, leader
     * changes, crashes at random steps, and D's producers expiring while a path lags (Kafka
     * then has no entry, and the paths' positions stand in for it). Each schedule ends with
     * both paths carried to the end, in a random order.
     */
    @Test
    void randomSchedulesOfThreeProducersWithRestartsAndExpiry() throws Exception {
        for (TransactionVersion tv : List.of(TransactionVersion.TV_1, TransactionVersion.TV_2)) {
            try (World w = producers(tv)) {
                int expiries = 0;
                for (int seed = 0; seed < SCHEDULES; seed++) {
                    Random random = new Random(seed);
                    // Every other schedule's checkpoints deferred: a leader change or a crash then
                    // loses several fetches of each path, whose paths fetch them again.
                    boolean deferred = seed % 2 == 1;
                    List<Step> schedule = new ArrayList<>();
                    Map<String, Integer> at = new HashMap<>(Map.of("B", 0, "C", 0));
                    int steps = 4 + random.nextInt(16);
                    for (int i = 0; i < steps; i++) {
                        int pick = random.nextInt(100);
                        if (pick < 45) {
                            String path = random.nextBoolean() ? "B" : "C";
                            int to = at.get(path) + random.nextInt(w.items.size() - at.get(path) + 1);
                            at.put(path, to);
                            schedule.add(fetch(path, to));
                        } else if (pick < 65) {
                            schedule.add(ELECT);
                        } else if (pick < 80) {
                            MirrorLoop.Step[] points = MirrorLoop.Step.values();
                            schedule.add(new Crash(points[random.nextInt(points.length)]));
                        } else if (pick < 88 && deferred) {
                            schedule.add(STORE);
                        } else {
                            schedule.add(EXPIRE);
                            expiries++;
                        }
                    }
                    List<Step> all = complete(schedule, random.nextBoolean() ? "B" : "C");
                    Outcome o = run(w, all, Lane.Carried.ALL, deferred ? Long.MAX_VALUE : 0);
                    assertNull(o.verdict(), tv + ", seed " + seed + (deferred ? ", checkpoints deferred" : "") + ": "
                            + all);
                }
                assertTrue(expiries > SCHEDULES / 4, "the schedules expire producers: " + expiries);
                REPORT.judged("three producers of A (two transactional, restarted with and without a transaction "
                        + "open; one idempotent) through " + SCHEDULES + " random schedules of lags, leader changes, "
                        + "crashes, checkpoints deferred (every other schedule) and expiry at D; transaction version " + tv.featureLevel(), "mirrorpid",
                        "one entry per producer not expired, with A's epoch and last sequence", List.of(), 0, null);
            }
        }
    }

    /** How many schedules each version runs ({@code -Dmirrorpid.schedules=N} for a longer hunt). */
    private static final int SCHEDULES = Integer.getInteger("mirrorpid.schedules", 40);

    /** A's three producers, interleaved, with restarts and aborted transactions, and B and C. */
    private static World producers(TransactionVersion tv) throws IOException {
        return World.threeProducers("A", tv).hops();
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
