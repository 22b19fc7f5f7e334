package dev.mirrorpid.judge;

import java.io.File;
import java.io.IOException;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Opens a Kafka {@code UnifiedLog} outside a broker, as Kafka's own log tests do: the one
 * recipe the judge's destinations and the benchmarks share.
 */
public final class KafkaLogs {
    /** Kafka's default {@code producer.id.expiration.ms}. */
    public static final int PRODUCER_ID_EXPIRATION_MS = 86_400_000;

    private KafkaLogs() {}

    /**
     * The log in {@code dir} (named {@code <topic>-<partition>}, made if missing) with {@code
     * config}'s topic settings; {@code cleanShutdown} loads the producer snapshot Kafka wrote
     * at close instead of rebuilding the producer state from the segments.
     */
    public static UnifiedLog open(File dir, Properties config, Scheduler scheduler, boolean cleanShutdown)
            throws IOException {
        return open(dir, config, scheduler, cleanShutdown, PRODUCER_ID_EXPIRATION_MS);
    }

    /**
     * As above, with {@code producer.id.expiration.ms} at {@code producerIdExpirationMs}: Kafka
     * drops producers idle that long when it loads the log.
     */
    public static UnifiedLog open(File dir, Properties config, Scheduler scheduler, boolean cleanShutdown,
            int producerIdExpirationMs) throws IOException {
        return open(dir, config, scheduler, cleanShutdown, producerIdExpirationMs, Time.SYSTEM);
    }

    /**
     * As above, on {@code time}'s clock: what Kafka takes for now when it validates timestamps,
     * rolls segments and expires producers (a replay of a simulated scenario runs on its clock).
     */
    public static UnifiedLog open(File dir, Properties config, Scheduler scheduler, boolean cleanShutdown,
            int producerIdExpirationMs, Time time) throws IOException {
        if (!dir.isDirectory() && !dir.mkdirs()) {
            throw new IOException("cannot make " + dir);
        }
        return UnifiedLog.create(dir, new LogConfig(config), 0L, 0L, scheduler, new BrokerTopicStats(false),
                time, 900_000, new ProducerStateManagerConfig(producerIdExpirationMs, false), 600_000,
                new LogDirFailureChannel(10), cleanShutdown, Optional.empty());
    }

    /** Deletes {@code dir} and everything under it: a log directory a test or benchmark made. */
    public static void delete(File dir) {
        File[] children = dir.listFiles();
        if (children != null) {
            for (File c : children) {
                delete(c);
            }
        }
        if (!dir.delete() && dir.exists()) {
            throw new IllegalStateException("cannot delete " + dir);
        }
    }
}
