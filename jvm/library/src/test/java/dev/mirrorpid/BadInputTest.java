package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/** Every bad input is a clear exception, and leaves the mapper and the buffer unchanged. */
class BadInputTest {
    private static ByteBuffer batch(long pid) {
        MemoryRecords r = MemoryRecords.withIdempotentRecords(0L, Compression.NONE, pid, (short) 0, 0, 0,
                new SimpleRecord("k".getBytes(java.nio.charset.StandardCharsets.UTF_8), new byte[100]));
        return ByteBuffer.allocate(r.sizeInBytes()).put(r.buffer()).flip();
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    @Test
    void badOptionsAreRefusedByName() {
        MapperConfig.Builder ok = MapperConfig.builder(Repo.TOPIC, 0);
        for (MapperConfig bad : List.of(
                MapperConfig.builder(Repo.TOPIC, -1).build(),
                ok.producerExpirationMs(0).build(),
                MapperConfig.builder(Repo.TOPIC, 0).maxBindings(0).build(),
                MapperConfig.builder(Repo.TOPIC, 0).maxClusters(-5).build(),
                MapperConfig.builder(Repo.TOPIC, 0).origin("", "A").build())) {
            MirrorPidException e = assertThrows(MirrorPidException.class, () -> Repo.MODULE.newMapper(bad), bad.toString());
            assertEquals(Code.InvalidInput, e.code(), e.getMessage());
            assertTrue(e.getMessage().startsWith("InvalidInput: "), e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> MapperConfig.builder(null, 0));
        // A source cluster ID with quotes and controls is data, not JSON.
        try (PidMapper m = Repo.MODULE.newMapper(MapperConfig.builder(Repo.TOPIC, 0).origin("a\"b\\c\n", "A").build())) {
            assertEquals(0, m.size());
        }
    }

    @Test
    void theBuildTimeModeRunsTheJarsModuleOnly() throws Exception {
        byte[] wasm = java.nio.file.Files.readAllBytes(Repo.root().resolve("dist/mirrorpid_broker.wasm"));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> MirrorPid.builder().mode(MirrorPid.Mode.BUILD_TIME).module(wasm).build());
        assertTrue(e.getMessage().contains("Mode.COMPILER"), e.getMessage());
        // Another build of the module runs on the preferred runtime too: here, Linux on x86-64,
        // the jar's native one.
        assertEquals(MirrorPid.Mode.NATIVE, MirrorPid.Mode.preferred(), Wasmtime.unavailableBecause());
        assertEquals(MirrorPid.Mode.NATIVE, MirrorPid.builder().module(wasm).build().mode());
        assertEquals(MirrorPid.Mode.NATIVE, MirrorPid.load().mode());
    }

    @Test
    void nullReadOnlyAndClosedAreRefusedBeforeAnything() {
        PidMapper m = Repo.mapper();
        ByteBuffer fetch = batch(3);
        byte[] before = bytes(fetch);
        assertThrows(NullPointerException.class, () -> m.rewrite("A", (ByteBuffer) null, 1));
        assertThrows(NullPointerException.class, () -> m.rewrite(null, fetch, 1));
        IllegalArgumentException ro = assertThrows(IllegalArgumentException.class,
                () -> m.rewrite("A", fetch.asReadOnlyBuffer(), 1));
        assertTrue(ro.getMessage().contains("read-only"), ro.getMessage());
        assertArrayEquals(before, bytes(fetch));
        assertEquals(0, m.size());
        m.close();
        m.close();
        assertTrue(m.isClosed());
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> m.rewrite("A", fetch, 1));
        assertTrue(closed.getMessage().contains("closed"));
        assertThrows(IllegalStateException.class, m::snapshot);
        assertThrows(IllegalStateException.class, () -> m.map("A", 1, 1));
        assertArrayEquals(before, bytes(fetch));
    }

    @Test
    void hostileBytesGetTheirErrorAndChangeNothing() {
        Random random = new Random(22);
        try (PidMapper m = Repo.mapper()) {
            m.rewrite("A", batch(1), 1);
            m.confirm();
            byte[] snapshot = m.snapshot();
            int errors = 0;
            for (int i = 0; i < 400; i++) {
                byte[] junk = new byte[random.nextInt(300)];
                random.nextBytes(junk);
                if (i % 2 == 0 && junk.length > 17) {
                    junk[16] = 2; // past the magic check
                }
                ByteBuffer fetch = ByteBuffer.wrap(junk.clone());
                MemoryRecords hostile = MemoryRecords.readableRecords(ByteBuffer.wrap(junk.clone()));
                try {
                    m.rewrite("A", fetch, 2, true);
                } catch (MirrorPidException e) {
                    errors++;
                    assertTrue(e.getMessage().startsWith(e.code().name() + ": "), e.getMessage());
                    assertArrayEquals(junk, fetch.array(), "a refused rewrite writes nothing");
                }
                try {
                    m.rewrite("A", hostile, 2);
                } catch (MirrorPidException e) {
                    assertArrayEquals(junk, bytes(hostile.buffer()));
                }
                MirrorPidException e = assertThrows(MirrorPidException.class, () -> m.loadRecord(junk, junk));
                assertTrue(e.code().value() < 100, e.getMessage());
                assertThrows(MirrorPidException.class, () -> Repo.MODULE.restore(junk));
            }
            assertTrue(errors > 300, errors + " refusals");
            m.abort();
            assertArrayEquals(snapshot, m.snapshot(), "garbage changed nothing");
        }
    }

    @Test
    void aMemoryCapIsOutOfMemoryWithTheMapperUnchanged() {
        MirrorPid small = MirrorPid.builder().maxMemoryBytes(8 << 20).build();
        try (PidMapper m = small.newMapper(MapperConfig.builder(Repo.TOPIC, 0).build())) {
            // One fetch of many new producers: its slots fit in 8 MiB, its bindings and records not.
            List<MemoryRecords> parts = new ArrayList<>();
            int size = 0;
            for (int pid = 0; pid < 40_000; pid++) {
                MemoryRecords r = MemoryRecords.withIdempotentRecords(Compression.NONE, pid, (short) 0, 0, new SimpleRecord(new byte[0]));
                parts.add(r);
                size += r.sizeInBytes();
            }
            ByteBuffer fetch = ByteBuffer.allocate(size);
            parts.forEach(p -> fetch.put(p.buffer()));
            fetch.flip();
            byte[] before = bytes(fetch);
            byte[] snapshot = m.snapshot();
            MirrorPidException e = assertThrows(MirrorPidException.class, () -> m.rewrite("A", fetch, 1));
            assertEquals(Code.OutOfMemory, e.code(), e.getMessage());
            assertArrayEquals(before, bytes(fetch));
            assertArrayEquals(snapshot, m.snapshot());
            assertEquals(0, m.size());
            // Still serving: a small fetch goes through.
            assertEquals(1, m.rewrite("A", batch(7), 1).records().size());
        }
    }

    @Test
    void concurrentCallsOnOneMapperAreSerialised() throws Exception {
        try (PidMapper m = Repo.mapper()) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<Long>> mapped = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long base = t * 1000L;
                mapped.add(pool.submit(() -> {
                    long sum = 0;
                    for (long pid = base; pid < base + 200; pid++) {
                        sum += m.map("A", pid, 1).mapped() & 0xffffffffffL;
                        m.rewrite("A", batch(pid), 1);
                        m.confirm();
                    }
                    return sum;
                }));
            }
            long total = 0;
            for (Future<Long> f : mapped) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertEquals(800, m.size());
            assertEquals(0, m.pending());
            long want = 0;
            for (int t = 0; t < 4; t++) {
                for (long pid = t * 1000L; pid < t * 1000L + 200; pid++) {
                    want += pid;
                }
            }
            assertEquals(want, total, "every PID kept its 40 bits");
        }
    }
}
