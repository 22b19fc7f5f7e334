package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.junit.jupiter.api.Test;

/**
 * Why the host places each batch ({@code docs/KAFKA.md}, "Who sets the base offset and the
 * partition leader epoch"), judged by Kafka's own {@code UnifiedLog}: a follower append skips a
 * batch whose partition leader epoch is above the appending leader's, and every batch after it
 * in the same append, without an error. A source's batches carry the source leader's epochs, so
 * a host that kept them would lose batches silently; {@link MirrorLoop} stamps the destination
 * leader's epoch and the destination's next offsets, and every batch lands.
 */
class PlacementTest {
    private static final int DESTINATION_EPOCH = 5;

    /** Three batches at offsets 0, 1, 2, from producers 1, 2 and 3; the second at {@code epoch}. */
    private static MemoryRecords fetch(int secondEpoch) {
        ByteBuffer all = ByteBuffer.allocate(1024);
        int[] epochs = {DESTINATION_EPOCH - 2, secondEpoch, DESTINATION_EPOCH - 2};
        for (int i = 0; i < 3; i++) {
            all.put(MemoryRecords.withIdempotentRecords(i, Compression.NONE, i + 1, (short) 0, 0, epochs[i],
                    new SimpleRecord(("k" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8), new byte[8])).buffer());
        }
        return MemoryRecords.readableRecords(all.flip());
    }

    private static List<long[]> landed(Destination d) throws Exception {
        List<long[]> out = new ArrayList<>();
        long end = d.log().logEndOffset();
        if (end == 0) {
            return out;
        }
        for (RecordBatch b : d.log().read(0, 1 << 20, FetchIsolation.LOG_END, true).records.batches()) {
            out.add(new long[] {b.baseOffset(), b.producerId(), b.partitionLeaderEpoch()});
        }
        return out;
    }

    @Test
    void aBatchAboveTheLeadersEpochIsSkippedWithTheRestOfTheAppendUnlessTheHostPlacesIt() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-placement").toFile();
        try {
            // Kept as the source wrote them: the second batch's epoch is above the destination
            // leader's. Kafka appends the first and skips the second and the third, silently.
            try (Destination d = Destination.create(dir, "kept", 0)) {
                d.log().appendAsFollower(fetch(DESTINATION_EPOCH + 4), DESTINATION_EPOCH);
                List<long[]> got = landed(d);
                assertEquals(1, got.size(), "only the batch before the higher epoch landed");
                assertEquals(1, got.get(0)[1]);
                assertEquals(1, d.log().logEndOffset());
            }
            // The same fetch with every epoch at or below the leader's: all three land, each
            // keeping the epoch it came with (Kafka does not restamp a follower's batches).
            try (Destination d = Destination.create(dir, "lower", 0)) {
                d.log().appendAsFollower(fetch(DESTINATION_EPOCH - 1), DESTINATION_EPOCH);
                List<long[]> got = landed(d);
                assertEquals(3, got.size());
                assertEquals(DESTINATION_EPOCH - 1, got.get(1)[2]);
            }
            // Placed by the host (NaiveLoop, verbatim here: MirrorLoop places alike) after a local
            // batch: the destination's next offsets, its leader's epoch.
            try (Destination d = Destination.create(dir, "placed", 0)) {
                d.log().appendAsLeader(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[4])), DESTINATION_EPOCH);
                NaiveLoop loop = new NaiveLoop(Strategy.VERBATIM, d.log(), DESTINATION_EPOCH);
                loop.mirror("A", fetch(DESTINATION_EPOCH + 4), System.currentTimeMillis());
                List<long[]> got = landed(d);
                assertEquals(4, got.size(), "the local batch and all three mirrored ones");
                for (int i = 1; i < 4; i++) {
                    assertEquals(i, got.get(i)[0], "placed at the destination's next offset");
                    assertEquals(i, got.get(i)[1], "producer " + i);
                    assertEquals(DESTINATION_EPOCH, got.get(i)[2], "stamped with the destination leader's epoch");
                }
            }
        } finally {
            KafkaLogs.delete(dir);
        }
    }
}
