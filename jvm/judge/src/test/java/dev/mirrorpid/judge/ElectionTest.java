package dev.mirrorpid.judge;

import dev.mirrorpid.kafka.MirrorLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Leader changes and the faults of {@code docs/DESIGN.md}'s table, against real logs: the
 * destination and {@code __mirror_state} logs closed and reopened (Kafka rebuilds their
 * producer state), the mapper restored from its snapshot and the records after it replayed.
 * Across all of it every true producer must appear under exactly one PID, Kafka's producer
 * state must hold one entry per producer with the source's own epoch and last sequence, and
 * the oracle must hold.
 */
class ElectionTest {
    private static final Report REPORT = new Report("election");

    @Test
    void everyFaultOfThePersistenceProtocolKeepsOneProducerUnderOnePid() throws Exception {
        try (JudgedRun run = new JudgedRun(REPORT, Strategy.MIRRORPID)) {
            Lane lane = run.lane(Strategy.MIRRORPID);
            // The same producers, created in the same order, on both clusters: PIDs 0 and 1 on each.
            KafkaProducer<String, String> pa = run.a.idempotent();
            run.a.send(pa, "A/pa/0", "v");
            KafkaProducer<String, String> ta = run.a.transactional("t");
            KafkaProducer<String, String> pb = run.b.idempotent();
            run.b.send(pb, "B/pb/0", "v");
            KafkaProducer<String, String> tb = run.b.transactional("t");
            ta.beginTransaction();
            run.a.send(ta, "A/ta/0", "v");
            run.a.send(ta, "A/ta/1", "v");
            ta.commitTransaction();
            tb.beginTransaction();
            run.b.send(tb, "B/tb/0", "v");
            tb.abortTransaction();
            run.a.settle();
            run.b.settle();
            run.mirror(run.a);
            run.mirror(run.b);
            lane.state.storeSnapshot(lane.mapper().snapshot());

            // A failed __mirror_state append (Kafka's own refusal: the batch is over the log's
            // max.message.bytes), then the retry.
            KafkaProducer<String, String> pa2 = run.a.idempotent();
            run.a.send(pa2, "A/pa2/0", "v");
            run.a.send(pa, "A/pa/1", "v");
            LogConfig normal = lane.stateLogDir.log().config();
            Properties tiny = new Properties();
            tiny.put("cleanup.policy", "compact");
            tiny.put("max.message.bytes", "16");
            lane.stateLogDir.log().updateConfig(new LogConfig(tiny));
            assertTrue(!lane.mirror(run.a), "the state append was refused");
            assertEquals(List.of("A: RecordTooLargeException"), lane.refusals);
            assertEquals(0, lane.mapper().pending(), "the loop aborted the pending bindings");
            lane.stateLogDir.log().updateConfig(normal);
            assertTrue(lane.mirror(run.a), "the retry went through");

            // A crash after the records were persisted, before confirm; and before any newer
            // snapshot: the new leader restores the old snapshot and replays.
            KafkaProducer<String, String> pb2 = run.b.idempotent();
            run.b.send(pb2, "B/pb2/0", "v");
            lane.crashAt(MirrorLoop.Step.PERSISTED);
            assertTrue(!lane.mirror(run.b));
            lane.elect();
            assertTrue(lane.mirror(run.b));

            // A crash after confirm, before the append.
            ta.beginTransaction();
            run.a.send(ta, "A/ta/2", "v");
            ta.commitTransaction();
            run.a.settle(); // the COMMIT before the next batch, in every run
            run.a.send(pa2, "A/pa2/1", "v");
            run.a.settle();
            lane.crashAt(MirrorLoop.Step.CONFIRMED);
            assertTrue(!lane.mirror(run.a));
            lane.elect();
            assertTrue(lane.mirror(run.a));

            // A clean election.
            tb.beginTransaction();
            run.b.send(tb, "B/tb/1", "v");
            tb.commitTransaction();
            run.b.settle();
            run.b.send(pb, "B/pb/1", "v");
            run.b.settle();
            lane.elect();
            assertTrue(lane.mirror(run.b));
            run.a.send(pa, "A/pa/2", "v");
            run.b.send(pb2, "B/pb2/1", "v");
            run.mirror(run.a);
            run.mirror(run.b);

            Map<Strategy, String> verdict = run.judge("faults of the persistence protocol, four leader changes");
            assertNull(verdict.get(Strategy.MIRRORPID));
            assertOneProducerOnePid(run, lane);
        }
    }

    /**
     * A crash after the append and before the host recorded how far it mirrored: the new leader
     * fetches those batches again. Kafka would append them a second time (REPLICATION appends
     * are not deduplicated); the copies carry the same mapped PID, epoch and sequences, and the
     * loop, judging by the producer state Kafka rebuilt, leaves them out. With copies appended
     * the oracle sees them twice.
     */
    @Test
    void aCrashAfterTheAppendFetchesTheBatchesAgainAndTheCopiesAreDropped() throws Exception {
        for (boolean drop : new boolean[] {true, false}) {
            try (JudgedRun run = new JudgedRun(REPORT, drop, Strategy.MIRRORPID)) {
                Lane lane = run.lane(Strategy.MIRRORPID);
                KafkaProducer<String, String> pa = run.a.idempotent();
                run.a.send(pa, "A/pa/0", "v");
                assertTrue(lane.mirror(run.a));
                run.a.send(pa, "A/pa/1", "v");
                lane.crashAt(MirrorLoop.Step.APPENDED);
                assertTrue(!lane.mirror(run.a));
                lane.elect();
                assertTrue(lane.mirror(run.a));
                Map<Strategy, String> verdict = run.judge("a crash after the append, before the fetch position was kept");
                List<Destination.Batch> batches = lane.destination.batches();
                if (drop) {
                    assertNull(verdict.get(Strategy.MIRRORPID));
                    assertEquals(1, lane.copies, "the re-fetched batch was reported as a copy");
                    assertEquals(2, batches.size());
                    assertOneProducerOnePid(run, lane);
                } else {
                    assertEquals("A: [A/pa/1] visible but a second time", verdict.get(Strategy.MIRRORPID));
                    assertEquals(3, batches.size());
                    Destination.Batch first = batches.get(1);
                    Destination.Batch copy = batches.get(2);
                    assertEquals(List.of(first.pid(), (long) first.epoch(), (long) first.baseSequence()),
                            List.of(copy.pid(), (long) copy.epoch(), (long) copy.baseSequence()),
                            "the copy is the same batch to Kafka");
                }
            }
        }
    }

    /**
     * Every true producer under exactly one PID, no PID for two producers, and Kafka's entry for
     * each mapped PID holds the source entry's epoch and last sequence.
     */
    static void assertOneProducerOnePid(JudgedRun run, Lane lane) throws Exception {
        assertOneProducerOnePid(List.of(run.a, run.b), lane);
    }

    /** As above, for the producers of {@code clusters}. */
    static void assertOneProducerOnePid(List<SourceCluster> clusters, Lane lane) throws Exception {
        Map<String, Set<Long>> pids = new TreeMap<>();
        for (Destination.Batch b : lane.destination.batches()) {
            pids.computeIfAbsent(b.producer(), k -> new TreeSet<>()).add(b.pid());
        }
        Map<Long, String> owner = new HashMap<>();
        for (Map.Entry<String, Set<Long>> e : pids.entrySet()) {
            assertEquals(1, e.getValue().size(), e.getKey() + " appears under " + e.getValue());
            long pid = e.getValue().iterator().next();
            String before = owner.put(pid, e.getKey());
            assertNull(before, "PID " + pid + " carries both " + before + " and " + e.getKey());
        }
        Map<String, List<Integer>> source = new TreeMap<>();
        for (SourceCluster c : clusters) {
            Map<Long, List<Integer>> entries = c.producers();
            for (Destination.Batch b : c.batches()) {
                source.put(b.producer(), entries.get(b.pid()));
            }
        }
        Map<String, List<Integer>> destination = new TreeMap<>();
        for (ProducerState s : lane.destination.producers()) {
            destination.put(owner.get(s.producerId()), List.of(s.producerEpoch(), s.lastSequence()));
        }
        assertEquals(source, destination, "Kafka's producer state at the destination: one entry per "
                + "source producer, with its epoch and last sequence");
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
