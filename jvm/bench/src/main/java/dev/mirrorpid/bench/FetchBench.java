package dev.mirrorpid.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the rewrite benchmarks share, so that the runtimes they compare are measured alike: the
 * fetch's shape ({@link BenchFetch}: {@code batches} batches of about {@code batchBytes} bytes)
 * and JMH's settings, which each subclass inherits.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
// Ten seconds of warm-up: HotSpot compiles the module's code in several tiers, and a fetch's
// time keeps falling until the last of them is in.
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public abstract class FetchBench {
    /** Bytes of each batch (about: the records' payload is sized to it). */
    @Param({"256", "1024", "16384", "1048576"})
    public int batchBytes;

    /** Batches in the fetch. */
    @Param({"1"})
    public int batches;
}
