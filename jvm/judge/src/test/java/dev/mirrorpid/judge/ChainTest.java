package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The seeds' chain A->B->C->D with a local producer on every cluster: A is a real cluster;
 * B, C and D are each a Kafka log (the mirrored partition on that cluster) that mirrors the
 * hop before it and takes its own cluster's local produces as leader (origin CLIENT). The
 * local producers are real producers on real clusters B, C and D, so every cluster's first
 * producer is PID 0, as in the seeds' scenario. D's read_committed read is judged against all
 * four producers'.
 */
class ChainTest {
    private static final Report REPORT = new Report("chain");

    @Test
    void theSeedsChainWithLocalProducersOnEveryHop() throws Exception {
        try (Chain chain = new Chain("mirrorpid-chain")) {
            Map<Strategy, List<Lane>> hops = chain.hops;
            SourceCluster a = chain.a;
            SourceCluster b = chain.b;
            SourceCluster c = chain.c;
            SourceCluster d = chain.d;
            // The seeds' order: C's and D's local producers first, then A's reaches every hop,
            // then B's own.
            KafkaProducer<String, String> pc = c.idempotent();
            for (int i = 0; i < 3; i++) {
                c.send(pc, "C/pc/" + i, "v");
            }
            KafkaProducer<String, String> pd = d.idempotent();
            for (int i = 0; i < 2; i++) {
                d.send(pd, "D/pd/" + i, "v");
            }
            // Mirroring runs all along: C's batches reach D before D's own are written.
            for (Strategy s : Strategy.values()) {
                hops.get(s).get(1).produceLocally(c);
                hops.get(s).get(2).mirror(c.name(), c.clusterId(), hops.get(s).get(1).destination);
                hops.get(s).get(2).produceLocally(d);
            }
            KafkaProducer<String, String> pa = a.idempotent();
            for (int i = 0; i < 2; i++) {
                a.send(pa, "A/pa/" + i, "v");
            }
            chain.mirrorAlong();
            KafkaProducer<String, String> pb = b.idempotent();
            for (int i = 0; i < 2; i++) {
                b.send(pb, "B/pb/" + i, "v");
            }
            for (Strategy s : Strategy.values()) {
                hops.get(s).get(0).produceLocally(b);
            }
            chain.mirrorAlong();

            Map<Strategy, String> verdict =
                    chain.judge("A->B->C->D, one local producer on each (every one PID 0 on its cluster)");
            assertNull(verdict.get(Strategy.MIRRORPID), "mirrorpid: every record of every producer reaches D");
            for (Lane hop : hops.get(Strategy.MIRRORPID)) {
                assertTrue(hop.refusals.isEmpty(), "mirrorpid: Kafka refused nothing at any hop: " + hop.refusals);
            }
            assertEquals(4, hops.get(Strategy.MIRRORPID).get(2).destination.producers().size(),
                    "mirrorpid: four producers, four entries at D");
            assertEquals("B: committed [B/pb/0, B/pb/1] lost; D: committed [D/pd/0, D/pd/1] lost",
                    verdict.get(Strategy.VERBATIM),
                    "verbatim: B's and D's own producers, PID 0 with the sequences a mirrored producer's "
                    + "batches already used, are taken by Kafka's CLIENT-origin duplicate check for "
                    + "retries: acknowledged, never written");
            // The simulator's model of the same scenario (tests/fixtures/judge/chain.json), hop by hop.
            chain.assertSameAsSimulator("chain");
            List<org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState> atC =
                    hops.get(Strategy.NEGATED).get(1).destination.producers();
            assertEquals(1, atC.size(), "-(pid+2): at C, A's PID comes back as 0");
            assertEquals(0, atC.get(0).producerId());
            assertEquals(1, atC.get(0).lastSequence(), "-(pid+2): A's sequence 1 after C's own 2, one entry");
        }
    }

    /**
     * The same chain with transactions all along it, and epoch bumps: A's transactional producer
     * commits, aborts, is restarted (its epoch bumped) and commits again, while C's transactional
     * producer has a transaction open, D's commits one and later aborts one, and B's idempotent
     * producer writes between them. Every cluster's producer is PID 0 on its cluster.
     */
    @Test
    void transactionsAndEpochBumpsAlongTheChain() throws Exception {
        try (Chain chain = new Chain("mirrorpid-chain-txn")) {
            Map<Strategy, List<Lane>> hops = chain.hops;
            SourceCluster a = chain.a;
            SourceCluster b = chain.b;
            SourceCluster c = chain.c;
            SourceCluster d = chain.d;
            // C opens a transaction and keeps it open while A's transactions pass through C.
            KafkaProducer<String, String> tc = c.transactional("tc");
            tc.beginTransaction();
            c.send(tc, "C/tc/0", "v");
            KafkaProducer<String, String> td = d.transactional("td");
            td.beginTransaction();
            d.send(td, "D/td/0", "v");
            td.commitTransaction();
            d.settle();
            for (Strategy s : Strategy.values()) {
                hops.get(s).get(1).produceLocally(c);
                hops.get(s).get(2).produceLocally(d);
            }
            KafkaProducer<String, String> ta = a.transactional("ta");
            ta.beginTransaction();
            a.send(ta, "A/ta/0", "v");
            ta.commitTransaction();
            ta.beginTransaction();
            a.send(ta, "A/ta/1", "v");
            ta.abortTransaction();
            a.settle();
            chain.mirrorAlong();
            // A's producer restarts: the same PID at a higher epoch.
            ta.close();
            KafkaProducer<String, String> restarted = a.transactional("ta");
            restarted.beginTransaction();
            a.send(restarted, "A/ta/2", "v");
            restarted.commitTransaction();
            a.settle();
            KafkaProducer<String, String> pb = b.idempotent();
            for (int i = 0; i < 2; i++) {
                b.send(pb, "B/pb/" + i, "v");
            }
            tc.commitTransaction();
            c.settle();
            td.beginTransaction();
            d.send(td, "D/td/1", "v");
            td.abortTransaction();
            d.settle();
            for (Strategy s : Strategy.values()) {
                hops.get(s).get(0).produceLocally(b);
                hops.get(s).get(1).produceLocally(c);
                hops.get(s).get(2).produceLocally(d);
            }
            chain.mirrorAlong();
            // A stalled hop retries once everything upstream is in.
            chain.mirrorAlong();

            Map<Strategy, String> verdict = chain.judge("A->B->C->D with transactions: A commits, aborts, restarts and commits; C's "
                        + "transaction open meanwhile; D commits, later aborts; B idempotent");
            assertNull(verdict.get(Strategy.MIRRORPID), "mirrorpid: every committed record of every producer reaches D");
            for (Lane hop : hops.get(Strategy.MIRRORPID)) {
                assertTrue(hop.refusals.isEmpty(), "mirrorpid: Kafka refused nothing at any hop: " + hop.refusals);
            }
            List<org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState> atD =
                    hops.get(Strategy.MIRRORPID).get(2).destination.producers();
            assertEquals(4, atD.size(), "mirrorpid: four producers, four entries at D (A's restart keeps its PID)");
            for (org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState st : atD) {
                assertEquals(-1, st.currentTxnStartOffset(), "mirrorpid: every transaction closed by its own marker");
            }
            // Each entry at D is one source producer's own: its epoch (A's bumped by the restart)
            // and its last sequence, as Kafka holds them on the producer's own cluster.
            List<List<Integer>> expected = new ArrayList<>();
            for (SourceCluster cl : chain.clusters) {
                expected.addAll(cl.producers().values());
            }
            List<List<Integer>> got = new ArrayList<>();
            for (org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState st : atD) {
                got.add(List.of(st.producerEpoch(), st.lastSequence()));
            }
            Comparator<List<Integer>> order = Comparator.<List<Integer>>comparingInt(l -> l.get(0)).thenComparingInt(l -> l.get(1));
            expected.sort(order);
            got.sort(order);
            assertEquals(expected, got, "mirrorpid: D's entries are the four producers' own (epoch, last sequence)");
            assertEquals("B: committed [B/pb/0, B/pb/1] lost", verdict.get(Strategy.VERBATIM),
                    "verbatim: at B, A's restarted producer holds PID 0 at a higher epoch, so B's own PID 0 is fenced");
            assertEquals(List.of("B local: InvalidProducerEpochException", "B local: InvalidProducerEpochException",
                    "C local: InvalidProducerEpochException", "D local: InvalidProducerEpochException"),
                    refusals(hops.get(Strategy.VERBATIM)),
                    "verbatim: every hop's own producer is refused for A's epoch under the shared PID 0 (C's COMMIT, "
                    + "after A's COMMIT had already closed C's transaction)");
            assertEquals("A: [A/ta/1] visible but never committed", verdict.get(Strategy.NEGATED),
                    "-(pid+2): B tracks no negative PID, so A's ABORT aborts nothing");
            assertEquals(List.of("C local: InvalidProducerEpochException"), refusals(hops.get(Strategy.NEGATED)),
                    "-(pid+2): negated twice, A's PID is 0 again at C, and fences C's own producer there");
            // The simulator's model of the same run (tests/fixtures/judge/chain-txn.json, under
            // transaction version 2), hop by hop.
            chain.assertSameAsSimulator("chain-txn");
        }
    }

    /** What Kafka refused at the hops, hop by hop. */
    private static List<String> refusals(List<Lane> hops) {
        List<String> out = new ArrayList<>();
        for (Lane hop : hops) {
            out.addAll(hop.refusals);
        }
        return out;
    }

    /**
     * One run's chain: real clusters A, B, C and D, and for each strategy the lanes of hops B, C
     * and D under a temporary directory; closing stops and deletes all of it.
     */
    private static final class Chain implements AutoCloseable {
        final File dir;
        final List<SourceCluster> clusters = new ArrayList<>();
        final Map<Strategy, List<Lane>> hops = new EnumMap<>(Strategy.class);
        final SourceCluster a;
        final SourceCluster b;
        final SourceCluster c;
        final SourceCluster d;

        Chain(String prefix) throws Exception {
            dir = Files.createTempDirectory(prefix).toFile();
            try {
                for (String name : List.of("A", "B", "C", "D")) {
                    clusters.add(SourceCluster.start(name));
                }
                for (Strategy s : Strategy.values()) {
                    List<Lane> lanes = new ArrayList<>();
                    hops.put(s, lanes);
                    for (String hop : List.of("B", "C", "D")) {
                        lanes.add(new Lane(s, new File(dir, s.name() + "-" + hop)));
                    }
                }
            } catch (Exception e) {
                close();
                throw e;
            }
            a = clusters.get(0);
            b = clusters.get(1);
            c = clusters.get(2);
            d = clusters.get(3);
        }

        /** A's log to B, B's to C, C's to D, for each strategy. */
        void mirrorAlong() throws IOException {
            for (List<Lane> lanes : hops.values()) {
                lanes.get(0).mirror(a);
                lanes.get(1).mirror(b.name(), b.clusterId(), lanes.get(0).destination);
                lanes.get(2).mirror(c.name(), c.clusterId(), lanes.get(1).destination);
            }
        }

        /**
         * The run's verdict at D for each strategy (the oracle against the sources'
         * read_committed reads; null when it holds), with each strategy's row in the report: the
         * producer entries hop by hop and every refusal.
         */
        Map<Strategy, String> judge(String scenario) throws Exception {
            Map<String, List<Judged.Rec>> sources = Judged.readCommitted(clusters);
            Map<Strategy, String> verdict = new EnumMap<>(Strategy.class);
            for (Strategy s : Strategy.values()) {
                Lane atD = hops.get(s).get(2);
                String v = Judged.oracle(sources, atD.destination.readCommitted());
                verdict.put(s, v);
                List<String> states = new ArrayList<>();
                for (int h = 0; h < 3; h++) {
                    states.add("at " + "BCD".charAt(h) + ": "
                            + Judged.producers(hops.get(s).get(h).destination.producers()));
                }
                REPORT.row(scenario, atD, String.join(" / ", states), refusals(hops.get(s)), v);
            }
            return verdict;
        }

        /** Each hop's producer entries and local refusals are the simulator's for {@code scenario}. */
        void assertSameAsSimulator(String scenario) {
            for (Strategy s : Strategy.values()) {
                for (int h = 0; h < 3; h++) {
                    Lane hop = hops.get(s).get(h);
                    String name = String.valueOf("BCD".charAt(h));
                    List<String> local = new ArrayList<>();
                    for (String r : hop.refusals) {
                        if (r.startsWith(name + " local")) {
                            local.add(r);
                        }
                    }
                    SimFixture.assertSame(scenario, s, name, hop.destination.producers(), local);
                }
            }
        }

        @Override
        public void close() throws IOException {
            for (List<Lane> lanes : hops.values()) {
                for (Lane l : lanes) {
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
