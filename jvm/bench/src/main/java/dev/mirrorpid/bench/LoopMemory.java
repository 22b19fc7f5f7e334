package dev.mirrorpid.bench;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.ProcessMemory;
import dev.mirrorpid.judge.KafkaLogs;
import dev.mirrorpid.judge.NaiveLoop;
import dev.mirrorpid.judge.Strategy;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * What the mirror kit costs a destination partition in memory, as a broker would measure it:
 * partitions mirrored through mirrorpid-kafka's {@link MirrorLoop} (a mapper of ten producers on
 * one {@link MirrorPid} of two instances, the partition's {@code __mirror_state} and {@code
 * __mirror_paths} partitions as Kafka {@code UnifiedLog}s, what the loop keeps of its paths and
 * copies), each having mirrored a fetch of ten batches, one a producer, beside as many partitions
 * that mirrored the same fetch verbatim (the judge's {@link NaiveLoop}). The Java heap in use
 * (after collection) and the resident size outside it ({@code /proc/self/status}) are read before
 * and after each; the difference between the two is what mirrorpid adds a partition, Kafka's own
 * objects for its two compacted partitions included.
 *
 * <p>Run with the heap committed and touched up front ({@code -Xms} equal to {@code -Xmx},
 * {@code -XX:+AlwaysPreTouch}). Arguments: the mode ({@code NATIVE} or {@code COMPILER}) and how
 * many partitions of each kind (twenty of each are made first and not counted). The logs live
 * under a temporary directory (on {@code /dev/shm} where there is one), deleted at the end. Prints
 * one JSON object; {@code scripts/bench-jvm.sh partitions} runs it.
 */
public final class LoopMemory {
    private static final int WARM = 20;

    /** What a run holds open, closed at its end. */
    private final List<UnifiedLog> logs = new ArrayList<>();
    private final List<PidMapper> mappers = new ArrayList<>();
    /** The loops themselves, kept reachable while the heap is read. */
    private final List<Object> loops = new ArrayList<>();
    private final File dir;
    private final KafkaScheduler scheduler;
    private final MirrorPid module;
    private int made;

    private LoopMemory(File dir, KafkaScheduler scheduler, MirrorPid module) {
        this.dir = dir;
        this.scheduler = scheduler;
        this.module = module;
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        MirrorPid.Mode mode = MirrorPid.Mode.valueOf(args[0]);
        int partitions = Integer.parseInt(args[1]);
        File shm = new File("/dev/shm");
        File dir = (shm.isDirectory() && shm.canWrite()
                ? Files.createTempDirectory(shm.toPath(), "mirrorpid-loops")
                : Files.createTempDirectory("mirrorpid-loops")).toFile();
        KafkaScheduler scheduler = new KafkaScheduler(1);
        scheduler.startup();
        MirrorPid module = MirrorPid.builder().mode(mode).instances(PartitionsBench.INSTANCES).build();
        LoopMemory run = new LoopMemory(dir, scheduler, module);
        try {
            run.verbatim(WARM);
            run.mirrored(WARM);
            long[] verbatim = run.grown(() -> run.verbatim(partitions));
            long[] mirrored = run.grown(() -> run.mirrored(partitions));
            System.out.printf("{\"mode\": \"%s\", \"loopPartitions\": %d, \"loopHeapBytes\": %d, "
                    + "\"loopResidentBytes\": %d, \"verbatimHeapBytes\": %d, \"verbatimResidentBytes\": %d}%n",
                    mode, partitions, mirrored[0] / partitions, mirrored[1] / partitions,
                    verbatim[0] / partitions, verbatim[1] / partitions);
        } finally {
            run.close();
            KafkaLogs.delete(dir);
        }
    }

    /** Work that may fail on its files. */
    private interface Step {
        void run() throws IOException;
    }

    /** The heap and the resident size outside it that {@code step} added. */
    private long[] grown(Step step) throws IOException {
        long heap = ProcessMemory.heapUsed();
        long resident = ProcessMemory.status("VmRSS:");
        step.run();
        return new long[] {ProcessMemory.heapUsed() - heap, ProcessMemory.status("VmRSS:") - resident};
    }

    private UnifiedLog open(String name, boolean compacted) throws IOException {
        Properties config = new Properties();
        if (compacted) {
            config.put("cleanup.policy", "compact");
        }
        UnifiedLog log = KafkaLogs.open(new File(dir, name), config, scheduler, true);
        logs.add(log);
        return log;
    }

    /** A fetch of ten batches of 1 KiB, one a producer, of its own: a rewrite changes it in place. */
    private static MemoryRecords fetched() {
        return MemoryRecords.readableRecords(BenchFetch.of(PartitionsBench.BATCH_BYTES, PartitionsBench.PRODUCERS, false).buffer);
    }

    /** {@code n} partitions mirroring the fetch verbatim. */
    private void verbatim(int n) throws IOException {
        for (int i = 0; i < n; i++) {
            NaiveLoop loop = new NaiveLoop(Strategy.VERBATIM, open("verbatim-" + made++, false), 0);
            loop.mirror("east", fetched(), System.currentTimeMillis());
            loops.add(loop);
        }
    }

    /** {@code n} partitions mirroring the fetch through the kit. */
    private void mirrored(int n) throws IOException {
        for (int i = 0; i < n; i++) {
            int p = made++;
            StateLog state = new StateLog(open("__mirror_state-" + p, true), 0, new File(dir, "snapshot-" + p).toPath());
            PathLog paths = new PathLog(open("__mirror_paths-" + p, true), 0);
            PidMapper mapper = module.newMapper(MapperConfig.builder(PartitionsBench.TOPIC, p).build());
            mappers.add(mapper);
            MirrorLoop loop = MirrorLoop.builder(open("orders-" + p, false), 0, state, paths).mapper(mapper).build();
            loop.mirror("east", fetched(), System.currentTimeMillis());
            loops.add(loop);
        }
    }

    private void close() throws InterruptedException {
        loops.clear();
        mappers.forEach(PidMapper::close);
        for (UnifiedLog log : logs) {
            log.close();
        }
        scheduler.shutdown();
    }
}
