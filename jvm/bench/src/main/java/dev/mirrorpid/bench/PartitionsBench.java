package dev.mirrorpid.bench;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.Uuid;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * A broker's worth of partitions in one JVM: {@code partitions} destination partitions' mappers
 * on one {@link MirrorPid} of two instances, ten producers bound in each (one source, PIDs 1000
 * to 1009). What a partition costs in time, where a broker feels it:
 *
 * <ul>
 *   <li>{@link #rewrite}: a fetch of ten 1 KiB batches (one of each producer) rewritten on each
 *       partition in turn, round-robin, so that over thousands of partitions each call finds its
 *       mapper's state out of the caches; with two threads ({@code -t 2}), each thread on the
 *       partitions of its own instance (a broker's fetcher threads each own theirs). Throughput,
 *       fetches per microsecond of all threads.
 *   <li>{@link #lead}: becoming the leader of one more partition with no state: a new mapper,
 *       its first fetch of ten batches rewritten, confirmed, and the mapper closed.
 *   <li>{@link #restore}: becoming its leader from a snapshot of ten producers instead.
 * </ul>
 *
 * Memory per partition is {@link PartitionMemory}'s. Results in {@code docs/PERFORMANCE.md};
 * {@code scripts/bench-jvm.sh partitions} runs both.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PartitionsBench {
    static final Uuid TOPIC = Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA");
    static final int PRODUCERS = 10;
    static final int BATCH_BYTES = 1024;
    static final int INSTANCES = 2;

    /** The broker: its module and its partitions' mappers. */
    @State(Scope.Benchmark)
    public static class Broker {
        /** NATIVE or COMPILER. */
        @Param({"NATIVE"})
        public String mode;

        /** How many partitions the broker leads. */
        @Param({"1"})
        public int partitions;

        MirrorPid module;
        PidMapper[] mappers;
        byte[] snapshot;

        @Setup(Level.Trial)
        public void setup() {
            module = MirrorPid.builder().mode(MirrorPid.Mode.valueOf(mode)).instances(INSTANCES).build();
            mappers = new PidMapper[partitions];
            BenchFetch fetch = BenchFetch.of(BATCH_BYTES, PRODUCERS, false);
            for (int p = 0; p < partitions; p++) {
                mappers[p] = lead(module, p, fetch);
            }
            snapshot = mappers[0].snapshot();
        }

        @TearDown(Level.Trial)
        public void close() {
            for (PidMapper m : mappers) {
                m.close();
            }
        }
    }

    /** One thread's fetch and its place in the round. */
    @State(Scope.Thread)
    public static class Fetcher {
        BenchFetch fetch;
        /** The next partition, and the step between this thread's partitions. */
        int next;
        int step;

        @Setup(Level.Trial)
        public void setup(Broker broker, ThreadParams threads) {
            fetch = BenchFetch.of(BATCH_BYTES, PRODUCERS, false);
            // Mappers are placed in the instances in turn, so partition p lives in instance p % 2:
            // two threads take one instance's partitions each.
            step = threads.getThreadCount() > 1 ? threads.getThreadCount() : 1;
            next = threads.getThreadCount() > 1 ? threads.getThreadIndex() % broker.partitions : 0;
        }
    }

    /** A partition's leader with no state: a new mapper, its first fetch rewritten and confirmed. */
    static PidMapper lead(MirrorPid module, int partition, BenchFetch fetch) {
        PidMapper m = module.newMapper(MapperConfig.builder(TOPIC, partition).build());
        fetch.restore();
        m.rewrite("A", fetch.buffer.duplicate(), 1);
        m.confirm();
        return m;
    }

    @Benchmark
    public int rewrite(Broker broker, Fetcher f) {
        PidMapper m = broker.mappers[f.next];
        f.next += f.step;
        if (f.next >= broker.partitions) {
            f.next -= broker.partitions;
        }
        f.fetch.restore();
        ByteBuffer b = f.fetch.buffer;
        return m.rewrite("A", b, 2).consumed();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int lead(Broker broker, Fetcher f) {
        PidMapper m = lead(broker.module, broker.partitions, f.fetch);
        int n = m.size();
        m.close();
        return n;
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int restore(Broker broker, Fetcher f) {
        PidMapper m = broker.module.restore(broker.snapshot);
        f.fetch.restore();
        m.rewrite("A", f.fetch.buffer, 2);
        int n = m.size();
        m.close();
        return n;
    }
}
