package dev.mirrorpid.judge;

import java.nio.ByteBuffer;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.Crc32C;

/**
 * What a mirror does with a mirrored batch's producer ID before the destination appends it.
 *
 * <p>{@link #VERBATIM} and {@link #NEGATED} are the peers the judge measures mirrorpid against;
 * their rewrite is here ({@link NaiveLoop}). {@link #MIRRORPID}'s is the mapper's (mirrorpid-kafka's {@code MirrorLoop}).
 */
public enum Strategy {
    /** The batch as the source wrote it: every cluster's PIDs from 0, in one partition. */
    VERBATIM("verbatim"),
    /**
     * Every PID {@code p} becomes {@code -(p+2)} at every hop, as KIP-1279's first proposal
     * has it: apart from the local producers, but Kafka never tracks a negative PID, and the
     * rewrite is its own inverse, so a second hop hands a PID back ({@code -1}, no producer,
     * stays {@code -1}).
     */
    NEGATED("-(pid+2)"),
    /** mirrorpid's mapper, through mirrorpid-jvm. */
    MIRRORPID("mirrorpid");

    private static final int LENGTH_OFFSET = 8;
    private static final int MAGIC_OFFSET = 16;
    private static final int CRC_OFFSET = 17;
    private static final int ATTRIBUTES_OFFSET = 21;
    private static final int PRODUCER_ID_OFFSET = 43;
    private static final int LOG_OVERHEAD = 12;
    private static final int V2_HEADER = 61;

    private final String label;

    Strategy(String label) {
        this.label = label;
    }

    /** The name the judge's tables use. */
    public String label() {
        return label;
    }

    /**
     * {@link #NEGATED}'s rewrite of the whole batches in {@code buffer}'s remaining bytes, in
     * place: the PID, and the CRC-32C over everything after the CRC, recomputed.
     */
    static void negate(ByteBuffer buffer) {
        int pos = buffer.position();
        int end = buffer.limit();
        while (end - pos >= V2_HEADER) {
            int size = LOG_OVERHEAD + buffer.getInt(pos + LENGTH_OFFSET);
            if (size > end - pos) {
                break;
            }
            if (buffer.get(pos + MAGIC_OFFSET) == RecordBatch.MAGIC_VALUE_V2) {
                long pid = buffer.getLong(pos + PRODUCER_ID_OFFSET);
                buffer.putLong(pos + PRODUCER_ID_OFFSET, -(pid + 2));
                long crc = Crc32C.compute(buffer, pos + ATTRIBUTES_OFFSET, size - ATTRIBUTES_OFFSET);
                buffer.putInt(pos + CRC_OFFSET, (int) crc);
            }
            pos += size;
        }
    }

    @Override
    public String toString() {
        return label;
    }
}
