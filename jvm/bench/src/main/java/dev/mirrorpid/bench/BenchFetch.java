package dev.mirrorpid.bench;

import java.nio.ByteBuffer;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * The fetch the rewrite benchmarks measure, built with Kafka's own builders: {@code batches}
 * idempotent batches of about {@code batchBytes} bytes each (one record, its payload sized to
 * it), of a producer each (PIDs 1000, 1001, ...) or all of one (PID 1000, its sequences running
 * on). Every benchmark that rewrites it puts the original PIDs back first ({@link #restore}), so
 * each call rewrites the same fetch.
 */
public final class BenchFetch {
    /** The fetch, position 0 to its end. */
    public final ByteBuffer buffer;
    /** Where each batch starts. */
    public final int[] offsets;
    /** Each batch's producer ID as built. */
    public final long[] pids;

    private BenchFetch(ByteBuffer buffer, int[] offsets, long[] pids) {
        this.buffer = buffer;
        this.offsets = offsets;
        this.pids = pids;
    }

    /** {@code batches} batches of about {@code batchBytes} bytes, of {@code oneProducer} or a producer each. */
    public static BenchFetch of(int batchBytes, int batches, boolean oneProducer) {
        int payload = Math.max(1, batchBytes - 61 - 20);
        ByteBuffer all = ByteBuffer.allocate((batchBytes + 64) * batches);
        int[] offsets = new int[batches];
        long[] pids = new long[batches];
        for (int i = 0; i < batches; i++) {
            pids[i] = oneProducer ? 1000L : 1000L + i;
            offsets[i] = all.position();
            all.put(MemoryRecords.withIdempotentRecords(Compression.NONE, pids[i], (short) 0, oneProducer ? i : 0,
                    new SimpleRecord(new byte[payload])).buffer());
        }
        return new BenchFetch(all.flip(), offsets, pids);
    }

    /** Puts every batch's original producer ID back (its CRC is left as the last rewrite made it). */
    public void restore() {
        for (int i = 0; i < offsets.length; i++) {
            buffer.putLong(offsets[i] + 43, pids[i]);
        }
    }
}
