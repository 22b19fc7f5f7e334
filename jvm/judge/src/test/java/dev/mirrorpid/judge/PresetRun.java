package dev.mirrorpid.judge;

import dev.mirrorpid.kafka.MirrorLoop;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.common.TransactionVersion;

/**
 * A simulator scenario (a playground preset, {@code www/presets/*.json}) replayed batch for
 * batch into Kafka's own logs, as the simulator plays it ({@code src/sim/}): every cluster of
 * the topology is, for each strategy, a Kafka {@code UnifiedLog} (a {@link Lane}). A producer's
 * batch is appended at its own cluster as the leader takes a produce (origin CLIENT; a marker
 * as its coordinator writes it), then read back from that log and mirrored along every link out
 * of the cluster, depth first in the links' order, never into a cluster it has been in, each
 * hop through a {@link MirrorLoop} (origin REPLICATION). A mirrored batch Kafka refuses because
 * its PID has a transaction open is held and retried after every event, as a stalled fetcher
 * retries. The logs run on the scenario's clock ({@link SimClock}), one millisecond an event.
 *
 * <p>The presets' producers have PIDs such as 5 and epochs such as 2 that a real {@code
 * KafkaProducer} cannot be made to hold (an idempotent producer's epoch is 0 unless an error
 * bumps it, and a cluster hands out PIDs in order), so the batches are built with Kafka's own
 * {@code MemoryRecords} builders, with the preset's PID, epoch and sequence. Markers are
 * written under the scenario's {@code transactionVersion}, as the simulator models it: up to 1
 * a marker carries its producer's epoch; from 2 (Kafka 4's default) the next one, which the
 * producer then goes on with, its sequences from 0.
 */
final class PresetRun implements AutoCloseable {
    /** The simulator's clock at the start of every scenario ({@code sim::START_MS}). */
    static final long START_MS = 1_764_403_200_000L;

    private final SimClock clock = new SimClock(START_MS);
    private final File dir;
    private final List<String> clusters = new ArrayList<>();
    private final Map<String, Integer> index = new HashMap<>();
    private final boolean[] writable;
    /** Links as (from, to) cluster indices, in the simulator's order: by from, then to. */
    private final TreeSet<List<Integer>> links = new TreeSet<>((x, y) ->
            x.get(0).equals(y.get(0)) ? Integer.compare(x.get(1), y.get(1)) : Integer.compare(x.get(0), y.get(0)));
    private final Map<String, Producer> producers = new HashMap<>();
    private final Map<Strategy, Lane[]> lanes = new EnumMap<>(Strategy.class);
    private final Map<Strategy, List<Held>> held = new EnumMap<>(Strategy.class);
    /** The scenario's {@code transactionVersion}: from 2, every marker bumps its producer's epoch. */
    private final TransactionVersion transactionVersion;

    /** A producer of the scenario: its cluster, PID, epoch and next sequence. */
    private static final class Producer {
        final String id;
        final int cluster;
        final long pid;
        short epoch;
        int sequence;

        Producer(String id, int cluster, long pid, short epoch) {
            this.id = id;
            this.cluster = cluster;
            this.pid = pid;
            this.epoch = epoch;
        }
    }

    /** A mirrored batch Kafka refused while its PID's transaction is open, to retry. */
    private record Held(int cluster, int from, MemoryRecords batch, List<Integer> been) {}

    PresetRun(JsonNode scenario) throws IOException {
        transactionVersion = TransactionVersion.fromFeatureLevel((short) scenario.path("transactionVersion").asInt(0));
        dir = Files.createTempDirectory("mirrorpid-preset").toFile();
        for (JsonNode c : scenario.path("clusters")) {
            index.put(c.path("id").asText(), clusters.size());
            clusters.add(c.path("id").asText());
        }
        writable = new boolean[clusters.size()];
        int i = 0;
        for (JsonNode c : scenario.path("clusters")) {
            writable[i++] = c.path("writable").asBoolean(true);
        }
        for (JsonNode l : scenario.path("links")) {
            links.add(List.of(cluster(l.path("from")), cluster(l.path("to"))));
        }
        for (JsonNode p : scenario.path("producers")) {
            String id = p.path("id").asText();
            producers.put(id, new Producer(id, cluster(p.path("cluster")), Long.parseLong(p.path("pid").asText()),
                    (short) p.path("epoch").asInt(0)));
        }
        try {
            for (Strategy s : Strategy.values()) {
                Lane[] at = new Lane[clusters.size()];
                lanes.put(s, at);
                held.put(s, new ArrayList<>());
                for (int c = 0; c < at.length; c++) {
                    at[c] = new Lane(s, new File(dir, s.name() + "-" + c), true, Destination.PRODUCER_ID_EXPIRATION_MS,
                            clock);
                }
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    private int cluster(JsonNode name) {
        Integer c = index.get(name.asText());
        if (c == null) {
            throw new IllegalArgumentException("no cluster " + name);
        }
        return c;
    }

    /** Plays every event of {@code scenario}, one millisecond apart, retrying held batches after each. */
    void run(JsonNode scenario) throws IOException {
        for (JsonNode e : scenario.path("events")) {
            clock.advance(1);
            event(e);
            for (Strategy s : Strategy.values()) {
                retryHeld(s);
            }
        }
    }

    private void event(JsonNode e) throws IOException {
        String type = e.path("type").asText();
        switch (type) {
            case "produce": {
                Producer p = producer(e);
                for (int i = 0; i < e.path("count").asInt(); i++) {
                    produce(p, e.path("transactional").asBoolean(false), null);
                }
                break;
            }
            case "commit":
                produce(producer(e), true, ControlRecordType.COMMIT);
                break;
            case "abort":
                produce(producer(e), true, ControlRecordType.ABORT);
                break;
            case "restart": {
                // initTransactions again: the same PID at the next epoch, sequences from 0.
                Producer p = producer(e);
                p.epoch = (short) Math.addExact(p.epoch, 1);
                p.sequence = 0;
                break;
            }
            case "failover": {
                int c = cluster(e.path("cluster"));
                writable[c] = true;
                links.removeIf(l -> l.get(1) == c);
                break;
            }
            case "addLink":
                links.add(List.of(cluster(e.path("from")), cluster(e.path("to"))));
                break;
            case "removeLink":
                links.remove(List.of(cluster(e.path("from")), cluster(e.path("to"))));
                break;
            case "election":
                elect(cluster(e.path("cluster")), e.path("snapshot").asBoolean(false));
                break;
            case "advance":
                clock.advance(Long.parseLong(e.path("ms").asText()));
                break;
            case "expire":
                clock.advance(Long.parseLong(e.path("advanceMs").asText()));
                expire();
                break;
            default:
                throw new IllegalArgumentException("an event the replay does not know: " + type);
        }
    }

    private Producer producer(JsonNode e) {
        Producer p = producers.get(e.path("producer").asText());
        if (p == null) {
            throw new IllegalArgumentException("no producer " + e.path("producer"));
        }
        return p;
    }

    /** One batch of {@code p} (a marker when {@code marker} is set), written and mirrored in every strategy. */
    private void produce(Producer p, boolean transactional, ControlRecordType marker) throws IOException {
        if (!writable[p.cluster]) {
            throw new IllegalArgumentException(clusters.get(p.cluster) + " is a read-only mirror");
        }
        long now = clock.milliseconds();
        // From transaction version 2 the coordinator bumps the epoch and writes the marker with it.
        short epoch = marker != null && transactionVersion.featureLevel() >= 2 ? (short) (p.epoch + 1) : p.epoch;
        for (Strategy s : Strategy.values()) {
            MemoryRecords batch;
            if (marker != null) {
                batch = MemoryRecords.withEndTransactionMarker(0L, now, RecordBatch.NO_PARTITION_LEADER_EPOCH, p.pid,
                        epoch, new EndTransactionMarker(marker, 0));
            } else {
                SimpleRecord r = new SimpleRecord(now, p.id.getBytes(StandardCharsets.UTF_8),
                        ("seq " + p.sequence).getBytes(StandardCharsets.UTF_8));
                boolean idempotent = p.pid >= 0;
                batch = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, 0L, Compression.NONE,
                        TimestampType.CREATE_TIME, p.pid, idempotent ? p.epoch : RecordBatch.NO_PRODUCER_EPOCH,
                        idempotent ? p.sequence : RecordBatch.NO_SEQUENCE, RecordBatch.NO_PARTITION_LEADER_EPOCH,
                        transactional, r);
            }
            deliver(s, p.cluster, -1, batch, List.of(), false, p.id);
        }
        if (marker == null && p.pid >= 0) {
            p.sequence++;
        }
        if (epoch != p.epoch) {
            p.epoch = epoch;
            p.sequence = 0;
        }
    }

    /**
     * Appends {@code batch} at {@code cluster} (from {@code from}, or -1 for its own producer
     * {@code who}), then mirrors what was appended along every link out of it that leads to a
     * cluster not in {@code been}, depth first in link order. A {@code retry} of a held batch
     * is not counted again if Kafka refuses it again.
     */
    private void deliver(Strategy s, int cluster, int from, MemoryRecords batch, List<Integer> been, boolean retry,
            String who) throws IOException {
        record Work(int cluster, int from, MemoryRecords batch, List<Integer> been, boolean retry) {}
        List<Work> work = new ArrayList<>();
        work.add(new Work(cluster, from, batch, been, retry));
        while (!work.isEmpty()) {
            Work w = work.remove(work.size() - 1);
            MemoryRecords appended = appendAt(s, w.cluster, w.from, w.batch, w.been, w.retry, who);
            if (appended == null) {
                continue; // refused, held, or a copy mirrorpid's host dropped: it goes no further
            }
            List<Integer> now = new ArrayList<>(w.been);
            now.add(w.cluster);
            List<Integer> next = new ArrayList<>();
            for (List<Integer> l : links) {
                if (l.get(0) == w.cluster && !now.contains(l.get(1))) {
                    next.add(l.get(1));
                }
            }
            for (int k = next.size() - 1; k >= 0; k--) {
                work.add(new Work(next.get(k), w.cluster, appended, now, false));
            }
        }
    }

    /** The batch as {@code cluster}'s log holds it, or null when it was not written there. */
    private MemoryRecords appendAt(Strategy s, int cluster, int from, MemoryRecords batch, List<Integer> been,
            boolean retry, String who) throws IOException {
        Lane lane = lanes.get(s)[cluster];
        long offset;
        if (from < 0) {
            offset = lane.appendLocally(Destination.copy(batch), who, transactionVersion);
        } else {
            try {
                MirrorLoop.Appended a = lane.mirror(clusters.get(from), Destination.copy(batch), clock.milliseconds());
                lane.copies += a.copies();
                offset = a.batches() == 0 ? -1 : a.firstOffset();
            } catch (InvalidTxnStateException e) {
                if (!retry) {
                    lane.refusals.add(clusters.get(from) + ": " + e.getClass().getSimpleName());
                }
                held.get(s).add(new Held(cluster, from, batch, been));
                return null;
            } catch (KafkaException e) {
                lane.refusals.add(clusters.get(from) + ": " + e.getClass().getSimpleName());
                return null;
            }
        }
        return offset < 0 ? null : read(lane, offset);
    }

    /** Retries, in order, every batch held in {@code s}; one still refused stays held. */
    private void retryHeld(Strategy s) throws IOException {
        List<Held> waiting = new ArrayList<>(held.get(s));
        held.get(s).clear();
        for (Held h : waiting) {
            deliver(s, h.cluster(), h.from(), h.batch(), h.been(), true, null);
        }
    }

    /**
     * A leader change at {@code cluster}: under mirrorpid the new leader restores the snapshot
     * (one stored now when {@code snapshot}) and replays {@code __mirror_state}; Kafka rebuilds
     * the log's producer state as it opens it again. The other strategies keep no state.
     */
    private void elect(int cluster, boolean snapshot) throws IOException {
        Lane lane = lanes.get(Strategy.MIRRORPID)[cluster];
        if (snapshot) {
            lane.state.storeSnapshot(lane.mapper().snapshot());
        }
        lane.elect();
    }

    /**
     * Producer expiry on the clock: Kafka's periodic check ({@code removeExpiredProducers}) on
     * every log, and mirrorpid's {@code expire}, whose tombstones go to {@code __mirror_state}.
     */
    private void expire() {
        long now = clock.milliseconds();
        for (Lane[] at : lanes.values()) {
            for (Lane lane : at) {
                lane.destination.log().removeExpiredProducers(now);
                if (lane.strategy == Strategy.MIRRORPID) {
                    lane.state.append(lane.mapper().expire(now));
                }
            }
        }
    }

    /** The one batch at {@code offset} in the lane's log, as Kafka's fetch path reads it. */
    private static MemoryRecords read(Lane lane, long offset) throws IOException {
        MutableRecordBatch first = lane.destination.fetch(offset).batches().iterator().next();
        if (first.baseOffset() != offset) {
            throw new IllegalStateException("the log read offset " + first.baseOffset() + " for " + offset);
        }
        ByteBuffer one = ByteBuffer.allocate(first.sizeInBytes());
        first.writeTo(one);
        return MemoryRecords.readableRecords(one.flip());
    }

    /** The clusters, in the scenario's order. */
    List<String> clusters() {
        return clusters;
    }

    /** Strategy {@code s}'s log at {@code cluster}. */
    Lane lane(Strategy s, int cluster) {
        return lanes.get(s)[cluster];
    }

    /**
     * What Kafka holds and did at each cluster under {@code s}, in the simulator fixture's
     * terms: producer entries (epoch, last sequence) sorted, refusals by kind, the local writes
     * Kafka took for duplicates, and the copies by a second path mirrorpid's host dropped.
     */
    Map<String, String> verdict(Strategy s) {
        Map<String, String> out = new TreeMap<>();
        for (int c = 0; c < clusters.size(); c++) {
            Lane lane = lanes.get(s)[c];
            List<List<Integer>> entries = new ArrayList<>();
            for (ProducerState p : lane.destination.producers()) {
                entries.add(List.of(p.producerEpoch(), p.lastSequence()));
            }
            entries.sort((x, y) -> x.get(0).equals(y.get(0)) ? x.get(1) - y.get(1) : x.get(0) - y.get(0));
            Map<String, Integer> kinds = kinds(lane.refusals);
            kinds.put("copiesDropped", lane.copies);
            out.put(clusters.get(c), describe(entries, kinds));
        }
        return out;
    }

    /** The same line for the simulator's prediction, {@code node} of {@code judge-sim.json}. */
    static String describe(JsonNode node) {
        List<List<Integer>> entries = new ArrayList<>();
        for (JsonNode e : node.path("entries")) {
            entries.add(List.of(e.get(0).asInt(), e.get(1).asInt()));
        }
        Map<String, Integer> kinds = new TreeMap<>();
        for (String k : List.of("invalidProducerEpoch", "invalidTxnState", "outOfOrderSequence")) {
            kinds.put(k, node.path("refused").path(k).asInt());
        }
        kinds.put("lostAsDuplicate", node.path("lostAsDuplicate").asInt());
        kinds.put("copiesDropped", node.path("copiesDropped").asInt());
        return describe(entries, kinds);
    }

    private static String describe(List<List<Integer>> entries, Map<String, Integer> kinds) {
        return "entries " + entries + ", " + kinds;
    }

    /** Refusals by the fixture's kinds; any other kind by its exception's name. */
    private static Map<String, Integer> kinds(List<String> refusals) {
        Map<String, Integer> out = new TreeMap<>();
        for (String k : List.of("invalidProducerEpoch", "invalidTxnState", "outOfOrderSequence", "lostAsDuplicate")) {
            out.put(k, 0);
        }
        for (String r : refusals) {
            String kind;
            if (r.contains("duplicate")) {
                kind = "lostAsDuplicate";
            } else if (r.endsWith("InvalidProducerEpochException")) {
                kind = "invalidProducerEpoch";
            } else if (r.endsWith("InvalidTxnStateException")) {
                kind = "invalidTxnState";
            } else if (r.endsWith("OutOfOrderSequenceException")) {
                kind = "outOfOrderSequence";
            } else {
                kind = r;
            }
            out.merge(kind, 1, Integer::sum);
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        for (Lane[] at : lanes.values()) {
            for (Lane lane : at) {
                if (lane != null) {
                    lane.close();
                }
            }
        }
        KafkaLogs.delete(dir);
    }
}
