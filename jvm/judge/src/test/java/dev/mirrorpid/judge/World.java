package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.common.TransactionVersion;

/**
 * A source cluster's partition as a Kafka log (one replica) with its producers' stream, written
 * batch by batch so that a test can stop a path at any of them; and, for a diamond, B and C,
 * each a mirrorpid hop that has carried all of it. D's runs share them; each run has a D of its
 * own.
 */
final class World implements AutoCloseable {
    static final int EXPIRATION_MS = 60_000;

    /** A producer of a world's cluster: its PID, epoch and next sequence, as its leader and coordinator see it. */
    static final class Producer {
        final String name;
        final long pid;
        final boolean transactional;
        short epoch;
        int sequence;
        int records;
        boolean open;

        Producer(String name, long pid, boolean transactional) {
            this.name = name;
            this.pid = pid;
            this.transactional = transactional;
        }
    }

    /** The cluster's name: its records' keys begin with it, and their {@code from} header names it. */
    final String cluster;

    final TransactionVersion tv;
    final File dir;
    final SimClock clock = new SimClock(PresetRun.START_MS);
    final Lane a;
    Lane b;
    Lane c;
    final Map<String, Producer> producers = new HashMap<>();
    /** What each batch of the cluster's log is, in order: "T data", "T COMMIT". */
    final List<String> items = new ArrayList<>();
    /** The offset after the k-th batch in B's log and in C's (one batch there per batch of A). */
    long[] bEnds;
    long[] cEnds;
    private int runs;

    /** Cluster A's log, under transaction version {@code tv}. */
    World(TransactionVersion tv) throws IOException {
        this("A", tv);
    }

    /** Cluster {@code cluster}'s log, under transaction version {@code tv}. */
    World(String cluster, TransactionVersion tv) throws IOException {
        this.cluster = cluster;
        this.tv = tv;
        this.dir = Files.createTempDirectory("mirrorpid-world").toFile();
        this.a = new Lane(Strategy.VERBATIM, new File(dir, cluster), true, Integer.MAX_VALUE, clock);
    }

    /**
     * Cluster {@code cluster}'s stream of three producers, interleaved: two transactional ones
     * (T, PID 4, and U, PID 5: committing and aborting, restarted with and without a
     * transaction open) and an idempotent one (I, PID 6), as fresh clusters hand the PIDs out.
     */
    static World threeProducers(String cluster, TransactionVersion tv) throws IOException {
        World w = new World(cluster, tv);
        Producer t = w.producer("T", 4, true);
        Producer u = w.producer("U", 5, true);
        Producer i = w.producer("I", 6, false);
        w.data(i).data(t).data(u).data(t).end(t, ControlRecordType.COMMIT)
                .data(u).data(i).data(t).end(u, ControlRecordType.ABORT).end(t, ControlRecordType.ABORT)
                .restart(t).data(t).data(i).data(t).data(u)
                .restart(t).data(t).end(t, ControlRecordType.COMMIT).end(u, ControlRecordType.COMMIT)
                .data(i).data(t).data(u).end(u, ControlRecordType.COMMIT).data(i).end(t, ControlRecordType.ABORT)
                .restart(u).data(u).end(u, ControlRecordType.COMMIT);
        return w;
    }

    /** The cluster's ID: the path a mirror of it names. */
    String id() {
        return SourceCluster.clusterIdOf(cluster);
    }

    Producer producer(String name, long pid, boolean transactional) {
        Producer p = new Producer(name, pid, transactional);
        producers.put(name, p);
        return p;
    }

    /** One data batch of {@code p}, of one record keyed {@code <cluster>/<name>/<n>}. */
    World data(Producer p) throws IOException {
        clock.advance(1);
        Header[] from = {new RecordHeader(Judged.FROM, cluster.getBytes(StandardCharsets.UTF_8))};
        SimpleRecord r = new SimpleRecord(clock.milliseconds(),
                (cluster + "/" + p.name + "/" + p.records++).getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8),
                from);
        append(MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, 0L, Compression.NONE,
                TimestampType.CREATE_TIME, p.pid, p.epoch, p.sequence, RecordBatch.NO_PARTITION_LEADER_EPOCH,
                p.transactional, r), p.name + " data");
        p.sequence++;
        p.open |= p.transactional;
        return this;
    }

    /** {@code p}'s COMMIT or ABORT, as its coordinator writes it under this world's version. */
    World end(Producer p, ControlRecordType type) throws IOException {
        short epoch = tv.featureLevel() >= 2 ? (short) (p.epoch + 1) : p.epoch;
        marker(p, type, epoch);
        if (epoch != p.epoch) {
            p.epoch = epoch;
            p.sequence = 0;
        }
        return this;
    }

    /**
     * {@code p} restarted (its transactional ID initialised again): the coordinator bumps its
     * epoch, and aborts the transaction it had open with an ABORT of the new epoch.
     */
    World restart(Producer p) throws IOException {
        short epoch = (short) (p.epoch + 1);
        if (p.open) {
            marker(p, ControlRecordType.ABORT, epoch);
        }
        p.epoch = epoch;
        p.sequence = 0;
        return this;
    }

    private void marker(Producer p, ControlRecordType type, short epoch) throws IOException {
        clock.advance(1);
        append(MemoryRecords.withEndTransactionMarker(0L, clock.milliseconds(), RecordBatch.NO_PARTITION_LEADER_EPOCH,
                p.pid, epoch, new EndTransactionMarker(type, 0)), p.name + " " + type);
        p.open = false;
    }

    private void append(MemoryRecords batch, String item) throws IOException {
        long offset = a.appendLocally(batch, cluster, tv);
        assertNotEquals(-1, offset, cluster + "'s own log refused its producer's " + item + ": " + a.refusals);
        items.add(item);
    }

    /** B and C carry all of A's stream, each into its own log. */
    World hops() throws IOException {
        b = new Lane(Strategy.MIRRORPID, new File(dir, "B"), true, EXPIRATION_MS, clock);
        c = new Lane(Strategy.MIRRORPID, new File(dir, "C"), true, EXPIRATION_MS, clock);
        assertTrue(b.mirror(cluster, id(), a.destination));
        assertTrue(c.mirror(cluster, id(), a.destination));
        bEnds = ends(b.destination);
        cEnds = ends(c.destination);
        assertEquals(items.size(), bEnds.length, "one batch at B for each of A's");
        assertEquals(items.size(), cEnds.length, "one batch at C for each of A's");
        return this;
    }

    static long[] ends(Destination hop) throws IOException {
        List<Long> out = new ArrayList<>();
        for (RecordBatch batch : hop.fetch(0).batches()) {
            out.add(batch.nextOffset());
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    /** A fresh D for one run. */
    Lane d(Lane.Carried carried) throws IOException {
        Lane d = new Lane(Strategy.MIRRORPID, new File(dir, "D-" + runs++), true, EXPIRATION_MS,
                new SimClock(PresetRun.START_MS));
        d.carried = carried;
        return d;
    }

    @Override
    public void close() throws IOException {
        for (Lane l : new Lane[] {a, b, c}) {
            if (l != null) {
                l.close();
            }
        }
        KafkaLogs.delete(dir);
    }
}
