package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.kafka.MirrorLoop;
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
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import static dev.mirrorpid.judge.Replicated.*;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The replicated-destination suite ({@link Replicated}) in bounded random schedules, scenario by
 * scenario: fan-in, a chain, a diamond with its paths lagging, and two regions mirroring each
 * other, each schedule a mix of fetches, replication, leaders of the three partitions dying at
 * the worst moments, followers falling out of sync and leadership moved. Each must hold; run
 * again with the checkpoints at the destination's log end (the kit's rule removed), some must
 * lose records, which shows the suite sees the failure.
 */
class ReplicatedScheduleTest {
    private static final Report REPORT = new Report("replicated-random");
    /** How many random schedules each scenario runs ({@code -Dmirrorpid.replicated.schedules=N} for more). */
    private static final int SCHEDULES = Integer.getInteger("mirrorpid.replicated.schedules", 12);

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
        randomly("fan-in (A and B, the same PIDs on each)", Replicated::fanIn);
    }

    @Test
    void aChainUnderRandomFaults() throws Exception {
        randomly("chain (A into B by mirrorpid, B into D)", Replicated::chain);
    }

    @Test
    void aDiamondWithLaggingPathsUnderRandomFaults() throws Exception {
        randomly("diamond (A into B and C, both into D), paths lagging", Replicated::diamond);
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
