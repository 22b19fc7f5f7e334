package dev.mirrorpid.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Fan-in: two real clusters, A and B, mirrored into one destination partition, whose log is
 * Kafka's own. Each scenario mirrors the same source logs three ways, verbatim, {@code
 * -(pid+2)} and mirrorpid, and reads Kafka's verdict back: its producer entries, the appends it
 * refused, and the oracle (a read_committed read of the destination against those of the
 * sources).
 */
class FanInTest {
    private static final Report REPORT = new Report("fan-in");

    /** One judged run: fresh clusters A and B, three lanes. */
    private static final class Run implements AutoCloseable {
        final SourceCluster a;
        final SourceCluster b;
        final Map<Strategy, Lane> lanes = new EnumMap<>(Strategy.class);
        final File dir;

        Run() throws Exception {
            dir = Files.createTempDirectory("mirrorpid-judge").toFile();
            a = SourceCluster.start("A");
            b = SourceCluster.start("B");
            for (Strategy s : Strategy.values()) {
                lanes.put(s, new Lane(s, dir));
            }
        }

        void mirror(SourceCluster source) throws Exception {
            for (Lane lane : lanes.values()) {
                lane.mirror(source);
            }
        }

        Lane lane(Strategy s) {
            return lanes.get(s);
        }

        /** Judges every lane and reports it; returns each lane's oracle verdict (null: holds). */
        Map<Strategy, String> judge(String scenario) throws Exception {
            Map<String, List<Judged.Rec>> sources = new LinkedHashMap<>();
            sources.put(a.name(), a.readCommitted());
            sources.put(b.name(), b.readCommitted());
            Map<Strategy, String> verdicts = new EnumMap<>(Strategy.class);
            for (Lane lane : lanes.values()) {
                String verdict = Judged.oracle(sources, lane.destination.readCommitted());
                verdicts.put(lane.strategy, verdict);
                REPORT.row(scenario, lane.strategy, Judged.producers(lane.destination.producers()),
                        lane.refusals, verdict);
            }
            return verdicts;
        }

        @Override
        public void close() throws IOException {
            for (Lane lane : lanes.values()) {
                lane.close();
            }
            a.close();
            b.close();
            deleteTree(dir);
        }
    }

    static void deleteTree(File f) {
        File[] children = f.listFiles();
        if (children != null) {
            for (File c : children) {
                deleteTree(c);
            }
        }
        if (!f.delete() && f.exists()) {
            throw new IllegalStateException("cannot delete " + f);
        }
    }


    @Test
    void idempotentProducersOfTwoClustersShareOneEntryVerbatim() throws Exception {
        try (Run run = new Run()) {
            KafkaProducer<String, String> pa = run.a.idempotent();
            for (int i = 0; i < 3; i++) {
                run.a.send(pa, "a" + i, "v");
            }
            KafkaProducer<String, String> pb = run.b.idempotent();
            for (int i = 0; i < 2; i++) {
                run.b.send(pb, "b" + i, "v");
            }
            run.mirror(run.a);
            run.mirror(run.b);
            Map<Strategy, String> verdict = run.judge("two idempotent producers, PID 0 on each cluster");

            List<ProducerState> verbatim = run.lane(Strategy.VERBATIM).destination.producers();
            assertEquals(1, verbatim.size(), "verbatim: both producers are Kafka's PID 0");
            assertEquals(0, verbatim.get(0).producerId());
            assertEquals(1, verbatim.get(0).lastSequence(), "B's sequence 0 after A's 2 was accepted");
            assertTrue(run.lane(Strategy.NEGATED).destination.producers().isEmpty(),
                    "-(pid+2): Kafka tracks no negative PID");
            List<ProducerState> mapped = run.lane(Strategy.MIRRORPID).destination.producers();
            assertEquals(2, mapped.size(), "mirrorpid: one entry per producer");
            assertEquals(List.of(1, 2), sequences(mapped));
            for (Strategy s : Strategy.values()) {
                assertNull(verdict.get(s), s + ": no transaction, so consumers see no difference");
            }
        }
    }

    private static List<Integer> sequences(List<ProducerState> states) {
        List<Integer> out = new ArrayList<>();
        for (ProducerState s : states) {
            out.add(s.lastSequence());
        }
        out.sort(null);
        return out;
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
