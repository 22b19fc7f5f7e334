package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;

import java.util.ArrayList;


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

    @Test
    void idempotentProducersOfTwoClustersShareOneEntryVerbatim() throws Exception {
        try (JudgedRun run = new JudgedRun(REPORT)) {
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
                // The simulator's model of it (tests/fixtures/judge/fan-in-idempotent.json).
                SimFixture.assertSame("fan-in-idempotent", s, "dest", run.lane(s).destination.producers(),
                        run.lane(s).refusals);
            }
        }
    }

    @Test
    void aLowerEpochFromTheOtherClusterIsAcceptedVerbatim() throws Exception {
        try (JudgedRun run = new JudgedRun(REPORT)) {
            KafkaProducer<String, String> first = run.a.transactional("t");
            commit(run.a, first, "a0");
            first.close();
            KafkaProducer<String, String> restarted = run.a.transactional("t");
            commit(run.a, restarted, "a1");
            commit(run.b, run.b.transactional("t"), "b0");
            run.a.settle();
            run.b.settle();
            run.mirror(run.a);
            run.mirror(run.b);
            Map<Strategy, String> verdict = run.judge("a restarted transactional producer on A, a new one on B");

            List<ProducerState> verbatim = run.lane(Strategy.VERBATIM).destination.producers();
            assertEquals(1, verbatim.size(), "verbatim: one entry for both");
            List<ProducerState> mapped = run.lane(Strategy.MIRRORPID).destination.producers();
            assertEquals(2, mapped.size(), "mirrorpid: one entry per producer");
            int aEpoch = Math.max(mapped.get(0).producerEpoch(), mapped.get(1).producerEpoch());
            int bEpoch = Math.min(mapped.get(0).producerEpoch(), mapped.get(1).producerEpoch());
            assertTrue(aEpoch > bEpoch, "A's producer was restarted: its epoch is the higher");
            assertEquals(bEpoch, verbatim.get(0).producerEpoch(),
                    "verbatim: B's lower epoch replaced A's, accepted by Kafka on a follower append");
            assertTrue(run.lane(Strategy.NEGATED).destination.producers().isEmpty());
            for (Strategy s : Strategy.values()) {
                assertNull(verdict.get(s), s + ": every transaction committed, in order");
            }
        }
    }

    @Test
    void oneClustersAbortClosesTheOthersOpenTransactionVerbatim() throws Exception {
        try (JudgedRun run = new JudgedRun(REPORT)) {
            KafkaProducer<String, String> ta = run.a.transactional("t");
            ta.beginTransaction();
            run.a.send(ta, "a0", "v");
            run.a.send(ta, "a1", "v");
            KafkaProducer<String, String> tb = run.b.transactional("t");
            tb.beginTransaction();
            run.b.send(tb, "b0", "v");
            tb.abortTransaction();
            run.b.settle();
            run.mirror(run.a);
            run.mirror(run.b);
            ta.commitTransaction();
            run.a.settle();
            run.mirror(run.a);
            Map<Strategy, String> verdict = run.judge("B aborts while A's transaction is open");

            assertEquals("A: committed [a0, a1] lost", verdict.get(Strategy.VERBATIM),
                    "verbatim: B's ABORT closed A's transaction, and A's COMMIT found none open");
            assertEquals("B: [b0] visible but never committed", verdict.get(Strategy.NEGATED),
                    "-(pid+2): Kafka tracks no negative PID, so no transaction is aborted");
            assertNull(verdict.get(Strategy.MIRRORPID));
            assertEquals(2, run.lane(Strategy.MIRRORPID).destination.producers().size());
            for (ProducerState s : run.lane(Strategy.MIRRORPID).destination.producers()) {
                assertEquals(-1, s.currentTxnStartOffset(), "mirrorpid: each marker closed its own transaction");
            }
        }
    }

    @Test
    void anIdempotentBatchUnderAnOpenTransactionsPidStallsTheMirrorVerbatim() throws Exception {
        try (JudgedRun run = new JudgedRun(REPORT)) {
            KafkaProducer<String, String> ta = run.a.transactional("t");
            ta.beginTransaction();
            run.a.send(ta, "a0", "v");
            run.b.send(run.b.idempotent(), "b0", "v");
            run.mirror(run.a);
            run.mirror(run.b);
            assertEquals(List.of("B: InvalidTxnStateException"), run.lane(Strategy.VERBATIM).refusals,
                    "verbatim: Kafka refuses B's batch while A's transaction is open under PID 0");
            ta.commitTransaction();
            run.a.settle();
            run.mirror(run.a);
            run.mirror(run.b);
            Map<Strategy, String> verdict = run.judge("B's idempotent producer while A's transaction is open");

            assertTrue(run.lane(Strategy.NEGATED).refusals.isEmpty());
            assertTrue(run.lane(Strategy.MIRRORPID).refusals.isEmpty());
            assertEquals(List.of("B: InvalidTxnStateException"), run.lane(Strategy.VERBATIM).refusals,
                    "verbatim: the retry after A's commit is accepted: B's mirror stalled until then");
            for (Strategy s : Strategy.values()) {
                assertNull(verdict.get(s), s + ": every record arrives in the end");
            }
        }
    }

    /** One committed transaction of one record on {@code cluster}. */
    private static void commit(SourceCluster cluster, KafkaProducer<String, String> producer, String key) throws Exception {
        producer.beginTransaction();
        cluster.send(producer, key, "v");
        producer.commitTransaction();
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
