package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Every kind of batch, built with Kafka's own {@code MemoryRecords} builders, rewritten through
 * the module on Chicory and then judged by Kafka's own classes: the CRC valid ({@code
 * isValid()}), the producer ID the one F gives (from the reference vectors), and every record,
 * decompressed, equal to what was written.
 */
class BatchKindsTest {
    /** F("A", pid, 0) for a local pid is A's salt-0 region with the pid's 40 bits. */
    private static final long REGION_A = regionOfA();

    private static long regionOfA() {
        for (JsonNode v : Repo.json("tests/vectors/mapping.json").get("f")) {
            if (v.get("source").asText().equals("A") && v.get("salt").asInt() == 0) {
                long pid = Long.parseLong(v.get("pid").asText());
                long mapped = Long.parseLong(v.get("mapped").asText());
                if (pid >= 0 && pid < (1L << 40)) {
                    assertEquals(pid, mapped & ((1L << 40) - 1), "a mapped PID keeps pid40");
                    return mapped - pid;
                }
            }
        }
        throw new AssertionError("no salt-0 vector of A");
    }

    private static SimpleRecord[] records(int n) {
        SimpleRecord[] out = new SimpleRecord[n];
        for (int i = 0; i < n; i++) {
            Header[] headers = {new RecordHeader("h", ("header-" + i).getBytes(StandardCharsets.UTF_8))};
            out[i] = new SimpleRecord(1_764_403_200_000L + i, ("key-" + i).getBytes(StandardCharsets.UTF_8),
                    ("value " + i + " ").repeat(40).getBytes(StandardCharsets.UTF_8), headers);
        }
        return out;
    }

    /** Records without headers, for the legacy formats (which have none). */
    private static SimpleRecord[] plain(int n) {
        SimpleRecord[] out = new SimpleRecord[n];
        for (int i = 0; i < n; i++) {
            out[i] = new SimpleRecord(1_764_403_200_000L + i, ("key-" + i).getBytes(StandardCharsets.UTF_8),
                    ("value " + i).getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    private static Compression compression(String name) {
        switch (name) {
            case "none": return Compression.NONE;
            case "gzip": return Compression.gzip().build();
            case "snappy": return Compression.snappy().build();
            case "lz4": return Compression.lz4().build();
            case "zstd": return Compression.zstd().build();
            default: throw new IllegalArgumentException(name);
        }
    }

    private static ByteBuffer concat(MemoryRecords... parts) {
        int n = 0;
        for (MemoryRecords p : parts) {
            n += p.sizeInBytes();
        }
        ByteBuffer out = ByteBuffer.allocate(n);
        for (MemoryRecords p : parts) {
            out.put(p.buffer());
        }
        return out.flip();
    }

    /** Kafka's view of a fetch: (producer ID, valid, records) per batch. */
    private static List<Object> view(ByteBuffer fetch, boolean withPid) {
        List<Object> out = new ArrayList<>();
        for (MutableRecordBatch b : MemoryRecords.readableRecords(fetch.duplicate()).batches()) {
            List<String> recs = new ArrayList<>();
            for (Record r : b) {
                recs.add(r.offset() + "/" + r.timestamp() + "/" + StandardCharsets.UTF_8.decode(r.key()) + "/"
                        + StandardCharsets.UTF_8.decode(r.value()) + "/" + r.headers().length);
            }
            out.add(List.of(withPid ? b.producerId() : 0L, b.magic(), b.isTransactional(), b.isControlBatch(), recs));
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "gzip", "snappy", "lz4", "zstd"})
    void idempotentAndTransactionalBatchesOfEveryCompression(String codec) {
        Compression c = compression(codec);
        ByteBuffer fetch = concat(
                MemoryRecords.withIdempotentRecords(0L, c, 7L, (short) 2, 10, 0, records(5)),
                MemoryRecords.withTransactionalRecords(5L, c, 8L, (short) 1, 0, 0, records(3)),
                MemoryRecords.withEndTransactionMarker(8L, 8L, (short) 1, new EndTransactionMarker(ControlRecordType.COMMIT, 4)),
                MemoryRecords.withEndTransactionMarker(9L, 8L, (short) 1, new EndTransactionMarker(ControlRecordType.ABORT, 4)));
        List<Object> before = view(fetch, false);
        try (PidMapper m = Repo.mapper()) {
            RewriteResult r = m.rewrite("A", fetch, 1_000);
            assertEquals(fetch.remaining(), r.consumed());
            assertEquals(2, r.records().size(), "two new producers, two records");
            List<Long> pids = new ArrayList<>();
            for (MutableRecordBatch b : MemoryRecords.readableRecords(fetch.duplicate()).batches()) {
                assertTrue(b.isValid(), "Kafka accepts the patched CRC of " + b);
                b.ensureValid();
                pids.add(b.producerId());
            }
            assertEquals(List.of(REGION_A | 7, REGION_A | 8, REGION_A | 8, REGION_A | 8), pids);
            assertEquals(before, view(fetch, false), "records, order, flags as written");
        }
    }

    @Test
    void legacyMessageSetsPassUntouched() {
        ByteBuffer fetch = concat(
                MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V0, Compression.NONE, plain(2)),
                MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, Compression.gzip().build(), plain(2)),
                MemoryRecords.withIdempotentRecords(0L, Compression.NONE, 3L, (short) 0, 0, 0, records(1)));
        byte[] original = new byte[fetch.remaining()];
        fetch.duplicate().get(original);
        int legacy = original.length - MemoryRecords.withIdempotentRecords(0L, Compression.NONE, 3L, (short) 0, 0, 0, records(1)).sizeInBytes();
        try (PidMapper m = Repo.mapper()) {
            RewriteResult r = m.rewrite("A", fetch, 1_000);
            assertEquals(original.length, r.consumed());
            byte[] after = new byte[original.length];
            fetch.duplicate().get(after);
            for (int i = 0; i < legacy; i++) {
                assertEquals(original[i], after[i], "legacy byte " + i);
            }
            List<Long> pids = new ArrayList<>();
            for (MutableRecordBatch b : MemoryRecords.readableRecords(fetch.duplicate()).batches()) {
                assertTrue(b.isValid());
                pids.add(b.producerId());
            }
            // Magic 0 uncompressed is one entry a message; magic 1 gzip one wrapper.
            assertEquals(List.of(-1L, -1L, -1L, REGION_A | 3), pids);
        }
    }

    @Test
    void aTruncatedTailIsLeftForTheNextFetch() {
        MemoryRecords whole = MemoryRecords.withIdempotentRecords(0L, Compression.lz4().build(), 4L, (short) 0, 0, 0, records(3));
        MemoryRecords next = MemoryRecords.withIdempotentRecords(3L, Compression.lz4().build(), 4L, (short) 0, 3, 0, records(3));
        ByteBuffer fetch = ByteBuffer.allocate(whole.sizeInBytes() + next.sizeInBytes() / 2);
        fetch.put(whole.buffer());
        ByteBuffer half = next.buffer();
        half.limit(next.sizeInBytes() / 2);
        fetch.put(half).flip();
        byte[] tail = new byte[next.sizeInBytes() / 2];
        fetch.duplicate().position(whole.sizeInBytes()).get(tail);
        try (PidMapper m = Repo.mapper()) {
            RewriteResult r = m.rewrite("A", fetch, 1_000);
            assertEquals(whole.sizeInBytes(), r.consumed());
            byte[] after = new byte[tail.length];
            fetch.duplicate().position(whole.sizeInBytes()).get(after);
            assertArrayEquals(tail, after, "the tail is not written");
            MutableRecordBatch first = MemoryRecords.readableRecords(fetch.duplicate().limit(r.consumed())).batches().iterator().next();
            assertTrue(first.isValid());
            assertEquals(REGION_A | 4, first.producerId());
            MirrorPidException e = org.junit.jupiter.api.Assertions.assertThrows(MirrorPidException.class,
                    () -> m.rewrite("A", fetch, 1_000, true));
            assertEquals(Code.BatchOverrun, e.code());
            assertTrue(e.getMessage().startsWith("BatchOverrun: "), e.getMessage());
        }
    }

    @Test
    void aBadCrcStaysBadAndThePidIsStillMapped() {
        MemoryRecords batch = MemoryRecords.withIdempotentRecords(0L, Compression.NONE, 6L, (short) 0, 0, 0, records(2));
        ByteBuffer fetch = ByteBuffer.allocate(batch.sizeInBytes()).put(batch.buffer()).flip();
        fetch.put(fetch.limit() - 3, (byte) (fetch.get(fetch.limit() - 3) ^ 0x40));
        assertFalse(MemoryRecords.readableRecords(fetch.duplicate()).batches().iterator().next().isValid());
        try (PidMapper m = Repo.mapper()) {
            m.rewrite("A", fetch, 1_000);
            MutableRecordBatch b = MemoryRecords.readableRecords(fetch.duplicate()).batches().iterator().next();
            assertFalse(b.isValid(), "a corrupt batch stays detectably corrupt");
            assertEquals(REGION_A | 6, b.producerId());
            // Flip the damage back: the patched CRC is right for the intact bytes.
            fetch.put(fetch.limit() - 3, (byte) (fetch.get(fetch.limit() - 3) ^ 0x40));
            assertTrue(MemoryRecords.readableRecords(fetch.duplicate()).batches().iterator().next().isValid());
        }
    }

    @Test
    void memoryRecordsAreRewrittenInPlace() {
        MemoryRecords records = MemoryRecords.withIdempotentRecords(0L, Compression.zstd().build(), 2L, (short) 0, 0, 0, records(4));
        try (PidMapper m = Repo.mapper()) {
            RewriteResult r = m.rewrite("A", records, 1_000);
            assertEquals(records.sizeInBytes(), r.consumed());
            MutableRecordBatch b = records.batches().iterator().next();
            assertTrue(b.isValid());
            assertEquals(REGION_A | 2, b.producerId());
        }
    }
}
