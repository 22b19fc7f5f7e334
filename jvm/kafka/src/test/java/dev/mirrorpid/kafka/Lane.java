package dev.mirrorpid.kafka;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * One strategy's destination partition in a judged run: its own Kafka log (and, for mirrorpid,
 * its own {@code __mirror_state} log and mapper), fed by a {@link MirrorLoop} from raw fetches
 * of the sources. The lanes of a run read the same source logs.
 */
final class Lane implements AutoCloseable {
    /** The destination topic's ID: the mapper's records name it. */
    static final Uuid DESTINATION_TOPIC_ID = Uuid.fromString("b2sGnXv0QmyCV7w0V0W8Hg");
    static final String DESTINATION_TOPIC = "orders-mirror";
    static final int LEADER_EPOCH = 1;
    static final MirrorPid MODULE = MirrorPid.load();

    final Strategy strategy;
    final Destination destination;
    private final Destination stateLogDir;
    final StateLog state;
    final MirrorLoop loop;
    /** What Kafka refused, in order: "B: InvalidTxnStateException". */
    final List<String> refusals = new ArrayList<>();
    private final Map<String, Long> next = new HashMap<>();

    Lane(Strategy strategy, File dir) throws IOException {
        this.strategy = strategy;
        this.destination = Destination.create(new File(dir, strategy.name()), DESTINATION_TOPIC, 0);
        if (strategy == Strategy.MIRRORPID) {
            this.stateLogDir = Destination.compacted(new File(dir, strategy.name()), "__mirror_state", 0);
            this.state = new StateLog(stateLogDir.log(), LEADER_EPOCH);
            PidMapper mapper = MODULE.newMapper(MapperConfig.builder(DESTINATION_TOPIC_ID, 0).build());
            this.loop = new MirrorLoop(strategy, destination.log(), LEADER_EPOCH, state, mapper);
        } else {
            this.stateLogDir = null;
            this.state = null;
            this.loop = new MirrorLoop(strategy, destination.log(), LEADER_EPOCH, null, null);
        }
    }

    /**
     * Mirrors everything {@code source} has up to its high watermark; stops at the first append
     * Kafka refuses (recorded in {@link #refusals}), to retry from there next time, as a
     * replica fetcher retries a partition.
     */
    boolean mirror(SourceCluster source) throws IOException {
        long offset = next.getOrDefault(source.name(), 0L);
        try (SourceFetcher fetcher = source.fetcher()) {
            while (true) {
                SourceFetcher.Fetched fetched = fetcher.fetch(SourceCluster.PARTITION, source.topicId(), offset, 1 << 20);
                if (fetched.records().sizeInBytes() == 0) {
                    return true;
                }
                MemoryRecords copy = copy(fetched.records());
                MirrorLoop.Appended appended;
                try {
                    appended = loop.mirror(source.clusterId(), copy, System.currentTimeMillis());
                } catch (KafkaException e) {
                    refusals.add(source.name() + ": " + e.getClass().getSimpleName());
                    return false;
                }
                offset = appended.nextSourceOffset();
                next.put(source.name(), offset);
                if (offset >= fetched.highWatermark()) {
                    return true;
                }
            }
        }
    }

    /** The fetched bytes, copied: each lane rewrites its own. */
    private static MemoryRecords copy(MemoryRecords fetched) {
        ByteBuffer src = fetched.buffer().duplicate();
        ByteBuffer dst = ByteBuffer.allocate(src.remaining());
        dst.put(src).flip();
        return MemoryRecords.readableRecords(dst);
    }

    @Override
    public void close() throws IOException {
        destination.close();
        if (stateLogDir != null) {
            stateLogDir.close();
        }
        if (loop.mapper() != null) {
            loop.mapper().close();
        }
    }
}
