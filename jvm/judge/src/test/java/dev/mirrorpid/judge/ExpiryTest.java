package dev.mirrorpid.judge;

import dev.mirrorpid.kafka.KitAccess;
import dev.mirrorpid.kafka.MirrorLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.PidMapper;
import dev.mirrorpid.StateRecord;
import java.io.File;
import java.nio.file.Files;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Expiry and compaction against real logs: producers idle past {@code producer.id.expiration.ms}
 * dropped by Kafka (when it loads the destination log) and by the mapper (its tombstones in
 * {@code __mirror_state}), that topic compacted by Kafka's own log cleaner, a new leader that
 * replays the compacted log, and a producer that comes back afterwards.
 */
class ExpiryTest {
    private static final Report REPORT = new Report("expiry");
    private static final int EXPIRATION_MS = 3_000;

    @Test
    void expiredProducersTombstonesCompactionAndAProducerThatComesBack() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-expiry").toFile();
        try (SourceCluster a = SourceCluster.start("A");
                SourceCluster b = SourceCluster.start("B");
                Lane lane = new Lane(Strategy.MIRRORPID, dir, true, EXPIRATION_MS)) {
            KafkaProducer<String, String> pa = a.idempotent();
            KafkaProducer<String, String> pb = b.idempotent();
            a.send(pa, "A/pa/0", "v");
            b.send(pb, "B/pb/0", "v");
            assertTrue(lane.mirror(a));
            assertTrue(lane.mirror(b));
            Set<Long> mapped = pids(lane.destination.producers());
            assertEquals(2, mapped.size());

            // Both go idle past the expiration. The mapper drops its bindings and returns a
            // tombstone for each, which the host writes to __mirror_state.
            Thread.sleep(EXPIRATION_MS + 500);
            List<StateRecord> tombstones = lane.mapper().expire(System.currentTimeMillis());
            assertEquals(2, tombstones.size(), "one tombstone per expired binding");
            assertTrue(tombstones.stream().allMatch(StateRecord::isTombstone));
            lane.state.append(tombstones);
            assertEquals(0, lane.mapper().size());

            // Kafka's own log cleaner compacts __mirror_state: of each key only its last record
            // stays, here the tombstone.
            assertEquals(4, KitAccess.read(lane.state, 0).size(), "two bindings, two tombstones");
            compact(lane.stateLogDir.log());
            List<StateRecord> compacted = KitAccess.read(lane.state, 0);
            assertEquals(2, compacted.size(), "compacted: " + compacted);
            assertTrue(compacted.stream().allMatch(StateRecord::isTombstone));

            // A new leader: Kafka drops the producers idle past producer.id.expiration.ms as it
            // loads the log, and the mapper replays the compacted topic.
            lane.elect();
            assertTrue(lane.destination.producers().isEmpty(), "Kafka expired both producers on load");
            assertEquals(0, lane.mapper().size());

            // A's producer comes back: it maps to the PID it had (F, no collision), and Kafka
            // starts a new entry for it from the sequence it carries.
            a.send(pa, "A/pa/1", "v");
            assertTrue(lane.mirror(a));
            List<ProducerState> now = lane.destination.producers();
            assertEquals(1, now.size());
            assertTrue(mapped.contains(now.get(0).producerId()), "the same PID as before expiry");
            assertEquals(1, now.get(0).lastSequence());
            Map<String, Set<Long>> byProducer = new java.util.TreeMap<>();
            for (Destination.Batch batch : lane.destination.batches()) {
                byProducer.computeIfAbsent(batch.producer(), k -> new HashSet<>()).add(batch.pid());
            }
            assertEquals(Set.of("A/pa", "B/pb"), byProducer.keySet());
            for (Map.Entry<String, Set<Long>> e : byProducer.entrySet()) {
                assertEquals(1, e.getValue().size(), e.getKey() + " under one PID across expiry");
            }
            // And a leader that replays the compacted topic again maps it the same way.
            lane.elect();
            assertEquals(1, lane.mapper().size(), "the returning producer's new record");

            String verdict = Judged.oracle(Judged.readCommitted(List.of(a, b)), lane.destination.readCommitted());
            REPORT.row("both producers expire (3 s), __mirror_state compacted by Kafka's cleaner, A's comes back",
                    lane, Judged.producers(now).replaceAll("PID \\d+", "PID (A's, as before)"), lane.refusals,
                    verdict);
            assertNull(verdict);
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /**
     * The persistence faults of {@code docs/DESIGN.md}'s table with Kafka's cleaner compacting
     * {@code __mirror_state} between them: an expired producer's tombstone compacted over its
     * binding while the latest snapshot still holds it, a crash after the records were
     * persisted and before confirm, a crash after confirm and before the append (the expired
     * producer coming back), and a clean election, each recovering from the old snapshot and the
     * compacted records after it. Every producer stays under one PID and the oracle holds.
     */
    @Test
    void theFaultsWithStateCompactedBetweenThem() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-compacted-faults").toFile();
        try (SourceCluster a = SourceCluster.start("A");
                SourceCluster b = SourceCluster.start("B");
                Lane lane = new Lane(Strategy.MIRRORPID, dir, true, EXPIRATION_MS)) {
            KafkaProducer<String, String> pa = a.idempotent();
            KafkaProducer<String, String> pa2 = a.idempotent();
            KafkaProducer<String, String> pb = b.idempotent();
            a.send(pa, "A/pa/0", "v");
            a.send(pa2, "A/pa2/0", "v");
            b.send(pb, "B/pb/0", "v");
            assertTrue(lane.mirror(a));
            assertTrue(lane.mirror(b));
            // The snapshot every recovery below starts from: it holds all three bindings.
            lane.state.storeSnapshot(lane.mapper().snapshot());

            // pa goes idle past the expiration; the others write on. Its tombstone, compacted
            // over its binding record.
            Thread.sleep(EXPIRATION_MS + 500);
            a.send(pa2, "A/pa2/1", "v");
            b.send(pb, "B/pb/1", "v");
            assertTrue(lane.mirror(a));
            assertTrue(lane.mirror(b));
            List<StateRecord> tombstones = lane.mapper().expire(System.currentTimeMillis());
            assertEquals(1, tombstones.size(), "pa's binding expired, the others were active");
            lane.state.append(tombstones);
            int before = KitAccess.read(lane.state, 0).size();
            compact(lane.stateLogDir.log());
            assertEquals(before - 1, KitAccess.read(lane.state, 0).size(), "the cleaner dropped pa's binding, kept its tombstone");

            // A crash after the records were persisted, before confirm, with the state compacted
            // before the new leader replays it: the old snapshot's pa is removed by the
            // tombstone after it, pb2's persisted binding is loaded.
            KafkaProducer<String, String> pb2 = b.idempotent();
            b.send(pb2, "B/pb2/0", "v");
            lane.crashAt(MirrorLoop.Step.PERSISTED);
            assertTrue(!lane.mirror(b));
            compact(lane.stateLogDir.log());
            lane.elect();
            assertEquals(3, lane.mapper().size(), "pa2, pb and pb2 bound; pa expired");
            assertTrue(lane.mirror(b));

            // pa comes back, and the leader crashes after confirm, before the append: its new
            // binding record is compacted over its tombstone, and the next leader maps it so.
            a.send(pa, "A/pa/1", "v");
            lane.crashAt(MirrorLoop.Step.CONFIRMED);
            assertTrue(!lane.mirror(a));
            compact(lane.stateLogDir.log());
            lane.elect();
            assertEquals(4, lane.mapper().size(), "pa bound again");
            assertTrue(lane.mirror(a));

            // A clean election on the compacted log, then every producer writes once more (Kafka
            // expired the idle ones at the destination as it reopened the log).
            compact(lane.stateLogDir.log());
            lane.elect();
            a.send(pa, "A/pa/2", "v");
            a.send(pa2, "A/pa2/2", "v");
            b.send(pb, "B/pb/2", "v");
            b.send(pb2, "B/pb2/1", "v");
            assertTrue(lane.mirror(a));
            assertTrue(lane.mirror(b));

            String verdict = Judged.oracle(Judged.readCommitted(List.of(a, b)), lane.destination.readCommitted());
            REPORT.row("faults with __mirror_state compacted between them: a tombstone over a snapshot's binding, "
                    + "crashes before and after confirm, the expired producer back, a clean election", lane,
                    lane.destination.producers().size() + " entries, one per producer", lane.refusals, verdict);
            assertNull(verdict);
            assertTrue(lane.refusals.isEmpty(), "Kafka refused nothing: " + lane.refusals);
            ElectionTest.assertOneProducerOnePid(List.of(a, b), lane);
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /** Compacts {@code log} up to its active segment with Kafka's own {@code Cleaner}. */
    static void compact(UnifiedLog log) throws Exception {
        log.roll();
        Cleaner cleaner = new Cleaner(0, new SkimpyOffsetMap(1 << 20), 64 << 10, 1 << 20, 0.9,
                new Throttler(Double.MAX_VALUE, Long.MAX_VALUE, "cleaner-io", "bytes", Time.SYSTEM), Time.SYSTEM,
                (TopicPartition tp) -> { });
        cleaner.clean(new LogToClean(log, 0, log.activeSegment().baseOffset(), false));
    }

    private static Set<Long> pids(List<ProducerState> states) {
        Set<Long> out = new HashSet<>();
        for (ProducerState s : states) {
            out.add(s.producerId());
        }
        return out;
    }

    @AfterAll
    static void write() throws Exception {
        REPORT.write();
    }
}
