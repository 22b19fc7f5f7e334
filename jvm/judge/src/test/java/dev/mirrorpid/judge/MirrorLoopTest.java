package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathLog;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * {@link MirrorLoop} on Kafka's own logs, one path's fetches at a time: when it stores its paths'
 * checkpoints (once the interval passed on the clock the loop is given, or the clock went back,
 * every path that moved since in one batch at one log end; on {@link MirrorLoop#checkpoint()};
 * and not otherwise), and a fetch that ends inside a batch, as a Fetch response cut at its byte
 * limit does. That every lag of the checkpoint behind the appends is safe, crashes and leader
 * changes included, is {@code LaggingPathsTest}'s random schedules with the checkpoints
 * deferred.
 */
class MirrorLoopTest {
    /** Source offset {@code offset} of producer 7, sequence {@code offset}: one record. */
    private static MemoryRecords batch(long offset) {
        return MemoryRecords.withIdempotentRecords(offset, Compression.NONE, 7L, (short) 0, (int) offset, -1,
                new SimpleRecord(new byte[8]));
    }

    @Test
    void aLoopStoresEveryPathThatMovedOnceAnIntervalInOneBatch() throws Exception {
        try (LoopPartition p = new LoopPartition("mirrorpid-checkpoints", Lane.MODULE, 0)) {
            assertThrows(IllegalArgumentException.class, () -> p.builder().checkpointIntervalMs(-1));
            PathLog paths = p.paths;
            Destination destination = p.destination;
            Destination pathLog = p.pathLog;
            MirrorLoop loop = p.loop(1_000);
            try {
                long stores = pathLog.log().logEndOffset();
                loop.mirror("east", batch(0), 10_000);
                loop.mirror("west", batch(0), 10_500);
                loop.mirror("east", batch(1), 10_999);
                assertEquals(stores, pathLog.log().logEndOffset(), "within the interval: nothing stored");
                assertEquals(0, paths.read().paths().size());

                loop.mirror("east", batch(2), 11_000);
                assertEquals(stores + 4, pathLog.log().logEndOffset(),
                        "both paths, an offset and a position each, in one batch");
                PathLog.Resume resume = paths.read();
                assertEquals(3, resume.paths().get("east").nextOffset());
                assertEquals(1, resume.paths().get("west").nextOffset());
                assertEquals(destination.log().logEndOffset(), resume.paths().get("west").destinationEnd(),
                        "both at the log end when stored");
                assertEquals(destination.log().logEndOffset(), resume.destinationEnd());

                loop.mirror("west", batch(1), 11_500);
                stores = pathLog.log().logEndOffset();
                loop.mirror("west", batch(2), 9_000);
                assertEquals(stores + 2, pathLog.log().logEndOffset(), "the clock went back: stored");
                assertEquals(3, paths.read().paths().get("west").nextOffset());

                loop.mirror("east", batch(3), 9_001);
                stores = pathLog.log().logEndOffset();
                loop.checkpoint();
                assertEquals(stores + 2, pathLog.log().logEndOffset(), "stored when asked");
                assertEquals(4, paths.read().paths().get("east").nextOffset());
                loop.checkpoint();
                assertEquals(stores + 2, pathLog.log().logEndOffset(), "nothing moved: nothing stored");
            } finally {
                loop.mapper().close();
            }
        }
    }

    /**
     * The whole batches before a truncated last one are mirrored, and the truncated one left,
     * bytes untouched, for the next fetch; a fetch of nothing but a truncated batch mirrors
     * nothing.
     */
    @Test
    void theWholeBatchesAreMirroredAndATruncatedLastOneLeft() throws Exception {
        try (LoopPartition p = new LoopPartition("mirrorpid-truncated", Lane.MODULE, 0)) {
            Destination destination = p.destination;
            MirrorLoop loop = p.loop(MirrorLoop.DEFAULT_CHECKPOINT_INTERVAL_MS);
            try {
                ByteBuffer third = batch(2).buffer();
                byte[] cut = new byte[30];
                third.get(cut);
                ByteBuffer fetch = ByteBuffer.allocate(200);
                fetch.put(batch(0).buffer()).put(batch(1).buffer()).put(cut).flip();
                MirrorLoop.Appended appended = loop.mirror("east", MemoryRecords.readableRecords(fetch), 1_000);
                assertEquals(2, appended.batches());
                assertEquals(2, appended.nextSourceOffset(), "fetch again from the truncated batch");
                assertEquals(2, destination.log().logEndOffset());
                byte[] tail = Arrays.copyOfRange(fetch.array(), fetch.limit() - cut.length, fetch.limit());
                assertArrayEquals(cut, tail, "the truncated batch's bytes are untouched");

                MirrorLoop.Appended none = loop.mirror("east", MemoryRecords.readableRecords(ByteBuffer.wrap(cut)), 1_000);
                assertEquals(new MirrorLoop.Appended(-1, -1, 0, 0, -1), none);
                assertEquals(2, destination.log().logEndOffset(), "nothing appended");
            } finally {
                loop.mapper().close();
            }
        }
    }
}
