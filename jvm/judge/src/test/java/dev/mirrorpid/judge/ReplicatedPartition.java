package dev.mirrorpid.judge;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * One partition of three replicas, each a Kafka {@code UnifiedLog} in a directory of its own on
 * a broker of its own, replicated as Kafka replicates: followers fetch from the leader and
 * append with {@code appendAsFollower}; the high watermark is the least log end of the in-sync
 * replicas ({@code replication.factor=3}, {@code min.insync.replicas=2}); a new leader is chosen
 * from the in-sync replicas that are alive (no unclean election) and keeps its log as it is; a
 * replica that follows a new leader truncates by Kafka's leader-epoch rule ({@code
 * endOffsetForEpoch}, {@code truncateTo}) before it fetches. A broker that dies loses its log's
 * unflushed state as a crash does: it is reopened from its directory, Kafka recovering it, when
 * the broker returns.
 */
final class ReplicatedPartition implements AutoCloseable {
    static final int REPLICAS = 3;
    static final int MIN_INSYNC = 2;

    /** One replica: its broker's directory and log (null while the broker is down). */
    private final class Replica {
        final int broker;
        final File dir;
        UnifiedLog log;
        /** The leader epoch this replica last followed or led (it truncates when it changes). */
        int epoch = -1;

        Replica(int broker, File dir) {
            this.broker = broker;
            this.dir = dir;
        }

        long end() {
            return log.logEndOffset();
        }
    }

    final String name;
    private final Properties config;
    private final int expirationMs;
    private final Time time;
    private final KafkaScheduler scheduler = new KafkaScheduler(1);
    private final Replica[] replicas = new Replica[REPLICAS];
    private final TreeSet<Integer> isr = new TreeSet<>();
    /** Followers that fell behind: they fetch nothing until the partition settles. */
    private final TreeSet<Integer> stalled = new TreeSet<>();
    private int leader;
    private int epoch = 1;
    private long highWatermark;
    /** How many leaders this partition has had beyond its first. */
    int elections;
    /** How many batches' worth of offsets followers truncated on a leader change. */
    long truncated;

    /**
     * Partition {@code topic}-0 with {@code config}'s topic settings, its replica on broker b in
     * {@code parent/broker-b}; broker 0 leads it first, in epoch 1.
     */
    ReplicatedPartition(File parent, String topic, Properties config, int expirationMs, Time time)
            throws IOException {
        this.name = topic;
        this.config = config;
        this.expirationMs = expirationMs;
        this.time = time;
        for (int b = 0; b < REPLICAS; b++) {
            replicas[b] = new Replica(b, new File(new File(parent, "broker-" + b), topic + "-0"));
            replicas[b].log = open(replicas[b], true);
            isr.add(b);
        }
        leader = 0;
        becomeLeader(replicas[0]);
    }

    private UnifiedLog open(Replica r, boolean cleanShutdown) throws IOException {
        return KafkaLogs.open(r.dir, config, scheduler, cleanShutdown, expirationMs, time);
    }

    private void becomeLeader(Replica r) {
        r.log.assignEpochStartOffset(epoch, r.end());
        r.epoch = epoch;
        setHighWatermark(r, Math.min(highWatermark, r.end()));
    }

    private static void setHighWatermark(Replica r, long offset) {
        try {
            r.log.updateHighWatermark(offset);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The leader's log: where the leader appends, and whose high watermark consumers read below. */
    UnifiedLog leaderLog() {
        return replicas[leader].log;
    }

    /** The broker that leads. */
    int leader() {
        return leader;
    }

    /** The leader epoch. */
    int epoch() {
        return epoch;
    }

    /** The high watermark: every in-sync replica holds what lies below it. */
    long highWatermark() {
        return highWatermark;
    }

    /** Whether {@code log} is this partition's leader's log. */
    boolean isLeaderLog(UnifiedLog log) {
        return replicas[leader].log == log;
    }

    /** Whether another replica than the leader is alive and in sync: the leader can be lost. */
    boolean canLoseLeader() {
        return isr.stream().anyMatch(b -> b != leader && replicas[b].log != null);
    }

    /** How many replicas are in sync. */
    int inSync() {
        return isr.size();
    }

    /**
     * Every live follower that is not stalled fetches what the leader holds beyond its own end,
     * truncating first if the leader changed since it last fetched; one that caught up joins
     * the in-sync replicas; the high watermark moves to their least log end.
     */
    void replicate() {
        for (Replica f : replicas) {
            if (f.broker == leader || f.log == null || stalled.contains(f.broker)) {
                continue;
            }
            fetch(f);
        }
        advance();
    }

    private void fetch(Replica f) {
        Replica l = replicas[leader];
        if (f.epoch != epoch) {
            truncate(f, l);
            f.epoch = epoch;
        }
        try {
            while (f.end() < l.end()) {
                Records read = l.log.read(f.end(), 1 << 20, FetchIsolation.LOG_END, true).records;
                ByteBuffer bytes = ByteBuffer.allocate(read.sizeInBytes());
                if (read instanceof FileRecords file) {
                    file.readInto(bytes, 0);
                } else {
                    bytes.put(((MemoryRecords) read).buffer().duplicate()).flip();
                }
                if (!bytes.hasRemaining()) {
                    break;
                }
                f.log.appendAsFollower(MemoryRecords.readableRecords(bytes), epoch);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        setHighWatermark(f, Math.min(highWatermark, f.end()));
        if (f.end() >= highWatermark) {
            isr.add(f.broker);
        }
    }

    /**
     * Kafka's leader-epoch truncation (KIP-101, KIP-279): the follower asks the leader where its
     * own latest epoch ends in the leader's log, and truncates to that, or to where the epoch the
     * leader names ends in its own log, whichever is less.
     */
    private void truncate(Replica f, Replica l) {
        Optional<Integer> latest = f.log.latestEpoch();
        if (latest.isEmpty()) {
            return;
        }
        Optional<OffsetAndEpoch> at = l.log.endOffsetForEpoch(latest.get());
        long to;
        if (at.isEmpty()) {
            to = 0;
        } else if (at.get().epoch() == latest.get()) {
            to = Math.min(at.get().offset(), f.end());
        } else {
            long own = f.log.endOffsetForEpoch(at.get().epoch()).map(OffsetAndEpoch::offset).orElse(0L);
            to = Math.min(at.get().offset(), own);
        }
        if (to < f.end()) {
            truncated += f.end() - to;
            f.log.truncateTo(to);
        }
    }

    private void advance() {
        long least = Long.MAX_VALUE;
        for (int b : isr) {
            least = Math.min(least, replicas[b].end());
        }
        if (least > highWatermark) {
            highWatermark = least;
        }
        setHighWatermark(replicas[leader], highWatermark);
    }

    /**
     * {@code broker}, a follower, falls behind: it leaves the in-sync replicas, and fetches
     * again only once the partition {@linkplain #settle settles}.
     */
    void dropFromIsr(int broker) {
        if (broker == leader) {
            throw new IllegalArgumentException("the leader stays in sync");
        }
        isr.remove(broker);
        stalled.add(broker);
        advance();
    }

    /** A follower that is alive, not the leader, chosen by {@code pick} among them; -1 if none. */
    int follower(int pick) {
        List<Integer> out = new ArrayList<>();
        for (Replica r : replicas) {
            if (r.broker != leader && r.log != null) {
                out.add(r.broker);
            }
        }
        return out.isEmpty() ? -1 : out.get(Math.floorMod(pick, out.size()));
    }

    /**
     * The leader's broker dies: its log is gone until it returns ({@link #revive}); the next in
     * sync replica alive leads in the next epoch, with its log as it is.
     *
     * @throws IllegalStateException no other in-sync replica is alive (the partition would go
     *     offline: the tests never ask for that)
     */
    void killLeader() throws IOException {
        int next = -1;
        for (int b : isr) {
            if (b != leader && replicas[b].log != null) {
                next = b;
                break;
            }
        }
        if (next < 0) {
            throw new IllegalStateException(name + ": no in-sync replica to take over from broker " + leader);
        }
        Replica dead = replicas[leader];
        dead.log.close();
        dead.log = null;
        isr.remove(dead.broker);
        leader = next;
        epoch++;
        elections++;
        becomeLeader(replicas[leader]);
    }

    /**
     * Leadership moves to {@code broker} (in sync and alive) as a controlled move does: the old
     * leader stays, a follower now.
     */
    void moveLeader(int broker) {
        if (!isr.contains(broker) || replicas[broker].log == null) {
            throw new IllegalArgumentException(name + ": broker " + broker + " is not an in-sync replica");
        }
        if (broker == leader) {
            return;
        }
        leader = broker;
        epoch++;
        elections++;
        becomeLeader(replicas[leader]);
    }

    /** Every dead broker returns, its log recovered from its directory as after a crash. */
    void revive() throws IOException {
        for (Replica r : replicas) {
            if (r.log == null) {
                r.log = open(r, false);
            }
        }
    }

    /** Every replica alive, fetched up and in sync. */
    void settle() throws IOException {
        stalled.clear();
        revive();
        replicate();
        replicate();
    }

    /** The brokers whose replica is alive. */
    List<Integer> alive() {
        List<Integer> out = new ArrayList<>();
        for (Replica r : replicas) {
            if (r.log != null) {
                out.add(r.broker);
            }
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        for (Replica r : replicas) {
            if (r.log != null) {
                r.log.close();
                r.log = null;
            }
        }
        try {
            scheduler.shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while stopping the logs' scheduler");
        }
    }
}
