package dev.mirrorpid.bench;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.internals.Crc32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The JVM rewrite side by side with the naive one, in one run: mirrorpid's header rewrite
 * through the module on Chicory (each mode) against what the KIP prototype describes (write
 * the mapped PID at offset 43, recompute the CRC with Kafka's {@code Crc32C} over the rest).
 *
 * <p>{@code fetch}: one fetch of {@code batches} batches of {@code batchBytes} bytes each, its
 * producers already bound (the steady state). Every invocation first puts the original
 * producer IDs back (the same 12-byte copy per batch for both sides), so each call rewrites
 * the same fetch. Results in {@code docs/PERFORMANCE.md}; {@code scripts/bench-jvm.sh} runs it.
 */
public class RewriteBench extends FetchBench {
    /**
     * Whose batches: {@code each} batch a producer of its own, or all of {@code one} producer,
     * its sequences running on (a partition that one producer writes to).
     */
    @Param({"each"})
    public String producers;

    /** BUILD_TIME, COMPILER or INTERPRETER (mirrorpid only). */
    @Param({"COMPILER"})
    public String mode;

    /**
     * A module file to run instead of the jar's (empty: the jar's), to measure two builds side
     * by side in one run; not with BUILD_TIME, which runs the jar's own.
     */
    @Param({""})
    public String module;

    private ByteBuffer fetch;
    private int[] offsets;
    private long[] original;
    private long[] mapped;
    private PidMapper mapper;
    private BenchFetch built;

    @Setup(Level.Trial)
    public void setup() {
        boolean one = switch (producers) {
            case "one" -> true;
            case "each" -> false;
            default -> throw new IllegalArgumentException("producers: one or each, not " + producers);
        };
        built = BenchFetch.of(batchBytes, batches, one);
        fetch = built.buffer;
        offsets = built.offsets;
        original = built.pids;
        MirrorPid.Builder builder = MirrorPid.builder().mode(MirrorPid.Mode.valueOf(mode));
        if (!module.isEmpty()) {
            try {
                builder.module(Files.readAllBytes(Path.of(module)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        mapper = builder.build()
                .newMapper(MapperConfig.builder(Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA"), 0).build());
        // Bind every producer once (the steady state), and learn their mapped PIDs.
        mapped = new long[batches];
        for (int i = 0; i < batches; i++) {
            mapped[i] = mapper.map("A", original[i], 1).mapped();
        }
        mapper.confirm();
    }

    @TearDown(Level.Trial)
    public void close() {
        mapper.close();
    }

    @Benchmark
    public int mirrorpid() {
        built.restore();
        RewriteResult r = mapper.rewrite("A", fetch, 2);
        return r.consumed();
    }

    @Benchmark
    public long naive() {
        built.restore();
        long crc = 0;
        for (int i = 0; i < offsets.length; i++) {
            int at = offsets[i];
            int size = 12 + fetch.getInt(at + 8);
            fetch.putLong(at + 43, mapped[i]);
            crc = Crc32C.compute(fetch, at + 21, size - 21);
            fetch.putInt(at + 17, (int) crc);
        }
        return crc;
    }

    /**
     * One crossing into the module and back with no work in it ({@code mp_pending}): the fixed
     * cost of any call through the library and Chicory, beside the rewrite's.
     */
    @Benchmark
    public int crossing() {
        return mapper.pending();
    }
}
