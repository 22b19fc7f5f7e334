package dev.mirrorpid;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What this process holds, as a broker's operator reads it: the Java heap in use once garbage
 * is collected, and a size from Linux's {@code /proc/self/status} ({@code VmRSS:} resident,
 * {@code VmSize:} address space). Published in the library's test jar, for the benchmark that
 * weighs a partition ({@code jvm/bench}'s {@code PartitionMemory}) as the tests do.
 */
public final class ProcessMemory {
    private ProcessMemory() {}

    /** The Java heap in use once garbage is collected. */
    public static long heapUsed() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** A size from {@code /proc/self/status} ({@code field} with its colon), in bytes. */
    public static long status(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]) << 10;
            }
        }
        throw new IllegalStateException("no " + field + " in /proc/self/status");
    }
}
