package dev.mirrorpid.judge;

import dev.mirrorpid.kafka.Copies;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A diamond: A mirrored into B and into C, both mirrored into D, with a local producer on B and
 * on C. Every batch of A reaches D twice, and Kafka appends both copies (REPLICATION appends
 * are not deduplicated). mirrorpid maps both copies to one PID, epoch and sequences, so its
 * loop can tell the second copy from a new batch ({@link Copies}); with copies dropped the
 * oracle must hold, with them appended it must not. Each path leads in turn, and A's
 * transactional producer commits, aborts, and is restarted (an epoch bump), so that neither a
 * marker copy nor an epoch bump is misjudged.
 */
class DiamondTest {
    private static final Report REPORT = new Report("diamond");

    /** One way of mirroring: three hops, B, C and D. */
    private static final class Hops {
        final Lane b;
        final Lane c;
        final Lane d;

        Hops(Strategy s, boolean dropCopies, File dir) throws Exception {
            String name = s.name() + (dropCopies ? "" : "-kept");
            b = new Lane(s, new File(dir, name + "-B"), dropCopies);
            c = new Lane(s, new File(dir, name + "-C"), dropCopies);
            d = new Lane(s, new File(dir, name + "-D"), dropCopies);
        }

        List<Lane> all() {
            return List.of(b, c, d);
        }
    }

    @Test
    void aDiamondsCopiesAreReportedAndDroppedSoTheOracleHolds() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-diamond").toFile();
        List<SourceCluster> clusters = new ArrayList<>();
        List<Hops> ways = new ArrayList<>();
        try {
            for (String name : List.of("A", "B", "C")) {
                clusters.add(SourceCluster.start(name));
            }
            SourceCluster a = clusters.get(0);
            SourceCluster b = clusters.get(1);
            SourceCluster c = clusters.get(2);
            for (Strategy s : Strategy.values()) {
                ways.add(new Hops(s, true, dir));
            }
            Hops kept = new Hops(Strategy.MIRRORPID, false, dir);
            ways.add(kept);

            KafkaProducer<String, String> pa = a.idempotent();
            a.send(pa, "A/pa/0", "v");
            a.send(pa, "A/pa/1", "v");
            KafkaProducer<String, String> ta = a.transactional("t");
            ta.beginTransaction();
            a.send(ta, "A/ta/0", "v");
            a.send(ta, "A/ta/1", "v");
            ta.commitTransaction();
            ta.beginTransaction();
            a.send(ta, "A/ta/2", "v");
            ta.abortTransaction();
            a.settle();
            b.send(b.idempotent(), "B/pb/0", "v");
            c.send(c.idempotent(), "C/pc/0", "v");
            for (Hops w : ways) {
                w.b.produceLocally(b);
                w.c.produceLocally(c);
                w.b.mirror(a);
                w.c.mirror(a);
                w.d.mirror(b.name(), b.clusterId(), w.b.destination);
                w.d.mirror(c.name(), c.clusterId(), w.c.destination);
            }
            // The other path leads now, after an epoch bump.
            ta.close();
            KafkaProducer<String, String> restarted = a.transactional("t");
            restarted.beginTransaction();
            a.send(restarted, "A/ta/3", "v");
            restarted.commitTransaction();
            a.settle(); // the COMMIT before the next batch, in every run
            a.send(pa, "A/pa/2", "v");
            a.settle();
            for (Hops w : ways) {
                w.c.mirror(a);
                w.d.mirror(c.name(), c.clusterId(), w.c.destination);
                w.b.mirror(a);
                w.d.mirror(b.name(), b.clusterId(), w.b.destination);
            }

            Map<String, List<Judged.Rec>> sources = Judged.readCommitted(clusters);
            Map<String, String> verdict = new LinkedHashMap<>();
            for (Hops w : ways) {
                String v = Judged.oracle(sources, w.d.destination.readCommitted());
                verdict.put(w.d.label(), v);
                List<String> refused = new ArrayList<>();
                for (Lane l : w.all()) {
                    refused.addAll(l.refusals);
                }
                REPORT.row("A->B->D and A->C->D, a local producer on B and on C", w.d,
                        "at D: " + Judged.producers(w.d.destination.producers()), refused, v);
            }
            Lane mirrorpid = ways.get(2).d;
            assertNull(verdict.get("mirrorpid"), "mirrorpid, copies dropped: the oracle holds");
            assertEquals(10, mirrorpid.copies,
                    "each of A's seven data batches and three markers came twice, and once was dropped");
            assertEquals(4, mirrorpid.destination.producers().size(),
                    "A's two producers, B's and C's: four entries at D");
            assertTrue(verdict.get("mirrorpid, copies appended").contains("a second time"),
                    "with copies appended, consumers read A's records twice: " + verdict);
            assertTrue(verdict.get("verbatim") != null, "verbatim: " + verdict);
        } finally {
            for (Hops w : ways) {
                for (Lane l : w.all()) {
                    l.close();
                }
            }
            for (SourceCluster cl : clusters) {
                cl.close();
            }
            KafkaLogs.delete(dir);
        }
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
