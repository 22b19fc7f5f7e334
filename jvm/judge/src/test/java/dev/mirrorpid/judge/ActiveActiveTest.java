package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Two regions mirroring each other, both taking writes into one topic name (active-active): X
 * and Y are real clusters whose producers (an idempotent and a transactional one on each, so
 * PIDs 0 and 1 on both) stand for each region's own; each region's partition is a Kafka log
 * that takes its own region's produces as leader and mirrors the other's partition. The mirror
 * has the cycle check {@code docs/DESIGN.md} asks of it: it carries only the batches produced
 * in the region it fetches from, by their provenance (the records' {@code from} header; a
 * marker goes where its producer's last data batch came from), never one back into the region
 * it came from. Each region's read_committed read must hold both regions' records.
 *
 * <p>Then the same with mirrorpid's trust declaration ({@code {"Y": []}} at X: Y carries only
 * its own producers; alike at Y) and without the cycle check: the batches that come back carry
 * PIDs in the receiving region's own region, which the declaration refuses, loudly: the whole
 * fetch, and every fetch of that direction after it, until the mirror checks for cycles.
 */
class ActiveActiveTest {
    private static final Report REPORT = new Report("active-active");

    /** One way of mirroring: both regions' partitions. */
    private static final class Pair {
        final String name;
        final Lane x;
        final Lane y;
        final boolean cycleCheck;
        /** Per direction, which region each PID's last data batch was produced in. */
        final Map<Long, String> toX = new HashMap<>();
        final Map<Long, String> toY = new HashMap<>();

        Pair(String name, Lane x, Lane y, boolean cycleCheck) {
            this.name = name;
            this.x = x;
            this.y = y;
            this.cycleCheck = cycleCheck;
        }

        void round(SourceCluster cx, SourceCluster cy) throws Exception {
            x.produceLocally(cx);
            y.produceLocally(cy);
            x.mirror(cy.name(), cy.clusterId(), y.destination, Long.MAX_VALUE, carry(cy.name(), toX));
            y.mirror(cx.name(), cx.clusterId(), x.destination, Long.MAX_VALUE, carry(cx.name(), toY));
        }

        /** The cycle check: only what was produced in {@code region}, unless it is off. */
        private Predicate<RecordBatch> carry(String region, Map<Long, String> last) {
            return cycleCheck ? Judged.producedIn(region, last) : batch -> true;
        }
    }

    @Test
    void twoRegionsMirroringEachOtherKeepEveryProducerApart() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-active-active").toFile();
        List<Pair> pairs = new ArrayList<>();
        try (SourceCluster cx = SourceCluster.start("X"); SourceCluster cy = SourceCluster.start("Y")) {
            for (Strategy s : Strategy.values()) {
                pairs.add(new Pair(s.label(), new Lane(s, new File(dir, s.name() + "-X")),
                        new Lane(s, new File(dir, s.name() + "-Y")), true));
            }
            Map<String, List<String>> xTrusts = Map.of(cy.clusterId(), List.of());
            Map<String, List<String>> yTrusts = Map.of(cx.clusterId(), List.of());
            int expiration = Destination.PRODUCER_ID_EXPIRATION_MS;
            pairs.add(new Pair("mirrorpid, declared, no cycle check",
                    new Lane(Strategy.MIRRORPID, new File(dir, "declared-X"), true, expiration,
                            org.apache.kafka.common.utils.Time.SYSTEM, xTrusts),
                    new Lane(Strategy.MIRRORPID, new File(dir, "declared-Y"), true, expiration,
                            org.apache.kafka.common.utils.Time.SYSTEM, yTrusts), false));

            KafkaProducer<String, String> px = cx.idempotent();
            KafkaProducer<String, String> tx = cx.transactional("t");
            KafkaProducer<String, String> py = cy.idempotent();
            KafkaProducer<String, String> ty = cy.transactional("t");
            cx.send(px, "X/px/0", "v");
            tx.beginTransaction();
            cx.send(tx, "X/tx/0", "v");
            cx.send(tx, "X/tx/1", "v");
            tx.commitTransaction();
            cy.send(py, "Y/py/0", "v");
            ty.beginTransaction();
            cy.send(ty, "Y/ty/0", "v");
            ty.abortTransaction();
            cx.settle();
            cy.settle();
            for (Pair p : pairs) {
                p.round(cx, cy);
            }
            // Both regions write on while the mirror runs: Y's transaction reaches X open, and
            // X's producer restarts (an epoch bump) and commits there meanwhile.
            ty.beginTransaction();
            cy.send(ty, "Y/ty/1", "v");
            for (Pair p : pairs) {
                p.y.produceLocally(cy);
                p.x.mirror(cy.name(), cy.clusterId(), p.y.destination, Long.MAX_VALUE, p.carry(cy.name(), p.toX));
            }
            tx.close();
            KafkaProducer<String, String> restarted = cx.transactional("t");
            restarted.beginTransaction();
            cx.send(restarted, "X/tx/2", "v");
            restarted.commitTransaction();
            // The coordinator writes a COMMIT after commitTransaction returns: settled first, it
            // stands before the next batch in the log, and every run sees one order.
            cx.settle();
            cx.send(px, "X/px/1", "v");
            cx.settle();
            for (Pair p : pairs) {
                p.x.produceLocally(cx);
                p.y.mirror(cx.name(), cx.clusterId(), p.x.destination, Long.MAX_VALUE, p.carry(cx.name(), p.toY));
            }
            ty.commitTransaction();
            cy.settle();
            cy.send(py, "Y/py/1", "v");
            cy.settle();
            for (Pair p : pairs) {
                p.round(cx, cy);
            }

            Map<String, List<Judged.Rec>> sources = Judged.readCommitted(List.of(cx, cy));
            Map<String, String> verdicts = new LinkedHashMap<>();
            for (Pair p : pairs) {
                for (Lane side : List.of(p.x, p.y)) {
                    String at = side == p.x ? "X" : "Y";
                    String v = Judged.oracle(sources, side.destination.readCommitted());
                    verdicts.put(p.name + " at " + at, v);
                    REPORT.row("X <-> Y, an idempotent and a transactional producer on each (PIDs 0 and 1 on "
                            + "both), Y's transaction open while X's commits and restarts: at " + at, p.name, side,
                            Judged.producers(side.destination.producers()), side.refusals, v);
                }
            }
            assertNull(verdicts.get("mirrorpid at X"), verdicts.toString());
            assertNull(verdicts.get("mirrorpid at Y"), verdicts.toString());
            Pair mirrorpid = pairs.get(Strategy.MIRRORPID.ordinal());
            assertEquals(4, mirrorpid.x.destination.producers().size(), "four producers, four entries at X");
            assertEquals(4, mirrorpid.y.destination.producers().size(), "four producers, four entries at Y");
            assertTrue(mirrorpid.x.refusals.isEmpty() && mirrorpid.y.refusals.isEmpty());
            for (Lane side : List.of(mirrorpid.x, mirrorpid.y)) {
                assertOneProducerPerPid(side.destination.log(), side);
            }
            assertNotNull(verdicts.get("verbatim at X"), "verbatim shares PIDs 0 and 1 between the regions");
            // X's partition holds Y's producers before Y fetches from it, so Y is the first to
            // meet its own producers come back: it refuses that whole fetch, and every one after.
            Pair declared = pairs.get(pairs.size() - 1);
            assertTrue(!declared.y.refusals.isEmpty()
                    && declared.y.refusals.stream().allMatch(r -> r.equals("X: UndeclaredOrigin")),
                    "Y refuses its own producers come back from X: " + declared.y.refusals);
            assertNotNull(verdicts.get("mirrorpid, declared, no cycle check at Y"));
            assertTrue(declared.x.refusals.isEmpty(), "nothing came back to X: " + declared.x.refusals);
        } finally {
            for (Pair p : pairs) {
                p.x.close();
                p.y.close();
            }
            KafkaLogs.delete(dir);
        }
    }

    /** Every producer's batches under one PID at {@code side}, no PID shared by two. */
    private static void assertOneProducerPerPid(UnifiedLog log, Lane side) throws Exception {
        Map<String, Long> pidOf = new HashMap<>();
        Map<Long, String> ownerOf = new HashMap<>();
        for (Destination.Batch b : side.destination.batches()) {
            Long before = pidOf.putIfAbsent(b.producer(), b.pid());
            assertTrue(before == null || before == b.pid(), b.producer() + " under two PIDs at " + log.name());
            String owner = ownerOf.putIfAbsent(b.pid(), b.producer());
            assertTrue(owner == null || owner.equals(b.producer()), "PID " + b.pid() + " carries " + owner + " and "
                    + b.producer());
        }
        assertEquals(4, pidOf.size(), "four producers at " + log.name() + ": " + pidOf);
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
