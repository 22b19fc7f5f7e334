package dev.mirrorpid.bench;

import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.ProcessMemory;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What a partition costs in memory, as a broker would measure it: {@code PartitionsBench}'s
 * partitions (a mapper of ten producers each, on one {@link MirrorPid} of two instances) made in
 * one JVM, the Java heap in use (after collection) and the process's resident and virtual sizes
 * ({@code /proc/self/status}) read before and after. Run with the heap committed and touched up
 * front ({@code -Xms} equal to {@code -Xmx}, {@code -XX:+AlwaysPreTouch}), so that the resident
 * size grows only by what lies outside the heap (the native runtime's linear memory). Prints one
 * JSON object: the mode, the partitions, and bytes per partition of heap, of resident memory
 * outside the heap and of address space.
 *
 * <p>Arguments: the mode ({@code NATIVE} or {@code COMPILER}) and how many partitions (1,000 are
 * made first and not counted, so that the instances exist and the code is warm).
 * {@code scripts/bench-jvm.sh partitions} runs it.
 */
public final class PartitionMemory {
    private PartitionMemory() {}

    public static void main(String[] args) throws IOException {
        MirrorPid.Mode mode = MirrorPid.Mode.valueOf(args[0]);
        int partitions = Integer.parseInt(args[1]);
        int warm = 1_000;
        MirrorPid module = MirrorPid.builder().mode(mode).instances(PartitionsBench.INSTANCES).build();
        BenchFetch fetch = BenchFetch.of(PartitionsBench.BATCH_BYTES, PartitionsBench.PRODUCERS, false);
        List<PidMapper> mappers = new ArrayList<>(partitions + warm);
        for (int p = 0; p < warm; p++) {
            mappers.add(PartitionsBench.lead(module, p, fetch));
        }
        long heap = ProcessMemory.heapUsed();
        long resident = ProcessMemory.status("VmRSS:");
        long virtual = ProcessMemory.status("VmSize:");
        for (int p = warm; p < warm + partitions; p++) {
            mappers.add(PartitionsBench.lead(module, p, fetch));
        }
        long heapGrown = ProcessMemory.heapUsed() - heap;
        long residentGrown = ProcessMemory.status("VmRSS:") - resident;
        long virtualGrown = ProcessMemory.status("VmSize:") - virtual;
        System.out.printf("{\"mode\": \"%s\", \"partitions\": %d, \"heapBytes\": %d, \"residentBytes\": %d, "
                + "\"addressBytes\": %d, \"jdk\": \"%s %s\"}%n", mode, partitions, heapGrown / partitions,
                residentGrown / partitions, virtualGrown / partitions, System.getProperty("java.vm.name"),
                System.getProperty("java.version"));
        mappers.forEach(PidMapper::close);
    }
}
