package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.nio.file.Files;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * When {@link MirrorLoop} stores its paths' checkpoints, on Kafka's own logs: once the interval
 * passed on the clock the loop is given (or the clock went back), every path that moved since
 * in one batch at one log end; on {@link MirrorLoop#checkpoint()}; and not otherwise. That every
 * lag of the checkpoint behind the appends is safe, crashes and leader changes included, is
 * {@code LaggingPathsTest}'s random schedules with the checkpoints deferred.
 */
class CheckpointIntervalTest {
    /** Source offset {@code offset} of producer 7, sequence {@code offset}: one record. */
    private static MemoryRecords batch(long offset) {
        return MemoryRecords.withIdempotentRecords(offset, Compression.NONE, 7L, (short) 0, (int) offset, -1,
                new SimpleRecord(new byte[8]));
    }

    @Test
    void aLoopStoresEveryPathThatMovedOnceAnIntervalInOneBatch() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-checkpoints").toFile();
        try (Destination destination = Destination.create(dir, "orders", 0);
                Destination state = Destination.compacted(dir, "__mirror_state", 0);
                Destination pathLog = Destination.compacted(dir, "__mirror_paths", 0)) {
            PathLog paths = new PathLog(pathLog.log(), 1);
            MapperConfig config = MapperConfig.builder(Lane.DESTINATION_TOPIC_ID, 0).build();
            MirrorLoop.Builder builder = MirrorLoop.builder(destination.log(), 1,
                    new StateLog(state.log(), 1, new File(dir, "snapshot").toPath()), paths);
            assertThrows(IllegalArgumentException.class, () -> builder.checkpointIntervalMs(-1));
            MirrorLoop loop = builder.recover(Lane.MODULE, config).checkpointIntervalMs(1_000).build();
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
        } finally {
            KafkaLogs.delete(dir);
        }
    }
}
