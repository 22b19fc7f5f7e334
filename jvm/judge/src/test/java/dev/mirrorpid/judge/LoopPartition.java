package dev.mirrorpid.judge;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.kafka.MirrorLoop;
import dev.mirrorpid.kafka.PathLog;
import dev.mirrorpid.kafka.StateLog;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;

/**
 * A destination partition with its two logs ({@code __mirror_state} and {@code __mirror_paths}),
 * in a directory of its own deleted on close, and the {@link MirrorLoop} of its leader.
 */
final class LoopPartition implements AutoCloseable {
    final File dir;
    final Destination destination;
    final Destination state;
    final Destination pathLog;
    final PathLog paths;
    private final MirrorPid module;
    private final int partition;

    LoopPartition(String name, MirrorPid module, int partition) throws IOException {
        this.module = module;
        this.partition = partition;
        dir = Files.createTempDirectory(name).toFile();
        destination = Destination.create(dir, "orders", partition);
        state = Destination.compacted(dir, "__mirror_state", partition);
        pathLog = Destination.compacted(dir, "__mirror_paths", partition);
        paths = new PathLog(pathLog.log(), 1);
    }

    /** A builder of its loop, as leader of epoch 1. */
    MirrorLoop.Builder builder() {
        return MirrorLoop.builder(destination.log(), 1,
                new StateLog(state.log(), 1, new File(dir, "snapshot").toPath()), paths);
    }

    /** Its loop, recovered from its logs, storing its checkpoint once {@code intervalMs} passed. */
    MirrorLoop loop(long intervalMs) {
        return builder().recover(module, MapperConfig.builder(Lane.DESTINATION_TOPIC_ID, partition).build())
                .checkpointIntervalMs(intervalMs).build();
    }

    @Override
    public void close() throws IOException {
        try {
            destination.close();
            state.close();
            pathLog.close();
        } finally {
            KafkaLogs.delete(dir);
        }
    }
}
