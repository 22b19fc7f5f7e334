package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;

/**
 * The two runtimes a broker gets, against each other: wasmtime through the jar's native library
 * ({@link MirrorPid.Mode#NATIVE}) and Chicory compiled at load ({@link MirrorPid.Mode#COMPILER})
 * rewrite every fetch of {@code tests/fixtures/jvm-rewrites.json}, and seeded corruptions of each
 * (a byte flipped, a fetch cut short, a length or a CRC broken), byte for byte alike: the same
 * bytes, records, flags and consumed length, or the same error (a refusal changes no byte),
 * and the same snapshot at the end. The test command runs it here and, under qemu-user with Debian's arm64 JRE, on
 * arm64 ({@code scripts/test-arm64.sh}), where the native library must load from the jar.
 */
class RuntimesAgreeTest {
    /** How many corruptions of each fetch ({@code -Dmirrorpid.corruptions=N} for more). */
    private static final int CORRUPTIONS = Integer.getInteger("mirrorpid.corruptions", 12);

    @Test
    void theNativeRuntimeLoadsFromTheJarOnThisPlatform() {
        String resource = Wasmtime.resource();
        assertTrue(resource != null, "no native library for " + System.getProperty("os.name") + " "
                + System.getProperty("os.arch") + ": this test runs where the jar carries one");
        assertNull(Wasmtime.unavailableBecause(), "the jar's " + resource + " loads");
        assertEquals(MirrorPid.Mode.NATIVE, MirrorPid.load().mode());
    }

    @Test
    void eachPlatformHasItsLibraryOrChicory() {
        assertEquals("native/linux-x86_64/libmirrorpid_jni.so", Wasmtime.resource("Linux", "amd64"));
        assertEquals("native/linux-aarch64/libmirrorpid_jni.so", Wasmtime.resource("Linux", "aarch64"));
        assertNull(Wasmtime.resource("Mac OS X", "aarch64"));
        assertNull(Wasmtime.resource("Windows 11", "amd64"));
        assertNull(Wasmtime.resource("Linux", "riscv64"));
    }

    @Test
    void nativeAndCompilerRewriteEveryFetchAlikeErrorsIncluded() {
        MirrorPid nat = MirrorPid.load(MirrorPid.Mode.NATIVE);
        MirrorPid compiler = MirrorPid.load(MirrorPid.Mode.COMPILER);
        JsonNode fixture = Repo.json("tests/fixtures/jvm-rewrites.json");
        Uuid topic = Uuid.fromString(fixture.get("config").get("topicId").asText());
        MapperConfig config = MapperConfig.builder(topic, 0).build();
        Random random = new Random(7);
        int errors = 0;
        int rewrites = 0;
        try (PidMapper a = nat.newMapper(config); PidMapper b = compiler.newMapper(config)) {
            for (JsonNode step : fixture.get("steps")) {
                byte[] input = Repo.hex(step.get("input").asText());
                String source = step.get("source").asText();
                long nowMs = step.get("nowMs").asLong();
                List<byte[]> fetches = new ArrayList<>();
                for (int i = 0; i < CORRUPTIONS; i++) {
                    fetches.add(corrupt(input, random));
                }
                fetches.add(input);
                for (byte[] fetch : fetches) {
                    String x = outcome(a, source, fetch, nowMs);
                    String y = outcome(b, source, fetch, nowMs);
                    assertEquals(x, y, "NATIVE and COMPILER differ on " + Repo.hex(fetch));
                    if (x.startsWith("error")) {
                        errors++;
                    } else {
                        rewrites++;
                    }
                }
            }
            assertArrayEquals(a.snapshot(), b.snapshot(), "the same state at the end");
        }
        assertTrue(errors > 0 && rewrites > 0, "both kinds of outcome: " + errors + " errors, " + rewrites
                + " rewrites");
    }

    /** What a rewrite of {@code fetch} by {@code m} did, as text; its bindings confirmed. */
    private static String outcome(PidMapper m, String source, byte[] fetch, long nowMs) {
        ByteBuffer buffer = ByteBuffer.wrap(fetch.clone());
        try {
            RewriteResult r = m.rewrite(source, buffer, nowMs);
            StringBuilder s = new StringBuilder("rewrote ").append(Repo.hex(buffer.array())).append(" consumed ")
                    .append(r.consumed()).append(" snapshot ").append(r.snapshotRequired()).append(" records");
            for (StateRecord rec : r.records()) {
                s.append(' ').append(Repo.hex(rec.key())).append('=')
                        .append(rec.value() == null ? "null" : Repo.hex(rec.value()));
            }
            m.confirm();
            return s.toString();
        } catch (MirrorPidException e) {
            return "error " + e.code() + " " + Repo.hex(buffer.array());
        } catch (RuntimeException e) {
            return "error " + e.getClass().getName() + " " + Repo.hex(buffer.array());
        }
    }

    /** {@code input} corrupted one way, chosen by {@code random}. */
    private static byte[] corrupt(byte[] input, Random random) {
        byte[] out = input.clone();
        switch (random.nextInt(4)) {
            case 0 -> out[random.nextInt(out.length)] ^= (byte) (1 << random.nextInt(8));
            case 1 -> out = java.util.Arrays.copyOf(out, random.nextInt(out.length));
            case 2 -> out[8 + random.nextInt(4)] = (byte) random.nextInt(256); // the first batch's length
            default -> out[17 + random.nextInt(4)] ^= (byte) 0x5a; // the first batch's CRC
        }
        return out;
    }
}
