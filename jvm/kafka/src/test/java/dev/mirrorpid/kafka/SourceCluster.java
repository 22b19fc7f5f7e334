package dev.mirrorpid.kafka;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A real single-node KRaft cluster: one Kafka 4.4 broker process, broker and controller in one
 * node, on loopback. A fresh cluster hands out producer IDs
 * from 0, so producers on two of them collide as they do in production.
 */
final class SourceCluster implements AutoCloseable {
    static final String TOPIC = "orders";
    static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);

    private final String name;
    private final File dir;
    private final Process broker;
    private final String bootstrapServers;
    private final String clusterId;
    private final Uuid topicId;
    private final List<AutoCloseable> clients = new ArrayList<>();

    private SourceCluster(String name, File dir, Process broker, String bootstrapServers, String clusterId, Uuid topicId) {
        this.name = name;
        this.dir = dir;
        this.broker = broker;
        this.bootstrapServers = bootstrapServers;
        this.clusterId = clusterId;
        this.topicId = topicId;
    }

    /**
     * Starts a cluster called {@code name} (in the tests' tables): one combined KRaft node, a
     * broker process of its own ({@code kafka.Kafka} from the {@code kafka_2.13} jars, after
     * {@code kafka.tools.StorageTool format --standalone}), listening on 127.0.0.1 only, with
     * one topic of one partition.
     */
    static SourceCluster start(String name) throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-cluster-" + name).toFile();
        int port = freePort();
        int controller = freePort();
        File config = new File(dir, "server.properties");
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controller);
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controller);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controller);
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("log.dirs", new File(dir, "data").getPath());
        p.put("num.partitions", "1");
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        try (OutputStream out = new FileOutputStream(config)) {
            p.store(out, "mirrorpid judge: cluster " + name);
        }
        String clusterId = clusterIdOf(name);
        int formatted = java(dir, "format.log", "kafka.tools.StorageTool", "format", "--standalone", "-t", clusterId,
                "-c", config.getPath()).waitFor();
        if (formatted != 0) {
            String output = tail(new File(dir, "format.log"));
            KafkaLogs.delete(dir);
            throw new IllegalStateException("formatting cluster " + name + " failed:\n" + output);
        }
        Process broker = java(dir, "server.log", "kafka.Kafka", config.getPath());
        SourceCluster cluster = null;
        try {
            String bootstrap = "127.0.0.1:" + port;
            Uuid topicId = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            Properties ap = new Properties();
            ap.put("bootstrap.servers", bootstrap);
            try (Admin admin = Admin.create(ap)) {
                while (topicId == null) {
                    if (!broker.isAlive() || System.nanoTime() > deadline) {
                        throw new IllegalStateException("cluster " + name + " did not start; its output ends:\n"
                                + tail(new File(dir, "server.log")));
                    }
                    try {
                        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(10, TimeUnit.SECONDS);
                        topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
                    } catch (ExecutionException | TimeoutException e) {
                        Thread.sleep(200);
                    }
                }
            }
            cluster = new SourceCluster(name, dir, broker, bootstrap, clusterId, topicId);
            cluster.settle();
            return cluster;
        } catch (Exception e) {
            if (cluster != null) {
                cluster.close();
            } else {
                stop(broker);
                KafkaLogs.delete(dir);
            }
            throw e;
        }
    }

    /** The last 40 lines of a process's output, for an error message. */
    private static String tail(File log) throws IOException {
        List<String> lines = Files.readAllLines(log.toPath());
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Runs {@code mainClass} in a JVM of its own on this JVM's class path, output to {@code log}. */
    private static Process java(File dir, String log, String mainClass, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        Process process = new ProcessBuilder(cmd)
                .directory(dir)
                .redirectErrorStream(true)
                .redirectOutput(new File(dir, log))
                .start();
        LIVE.add(process);
        return process;
    }

    /** Every broker process started and not yet stopped: a shutdown hook kills them. */
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly)));
    }

    private static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        LIVE.remove(process);
    }

    /**
     * A fixed cluster ID for {@code name}, so that mirrorpid's mapped PIDs, and so the tables of
     * {@code docs/KAFKA.md}, are the same in every run.
     */
    static String clusterIdOf(String name) {
        return new Uuid(0x6d6972726f727069L, name.hashCode()).toString();
    }

    /** Waits until no transaction is open on the partition (its LSO is its high watermark). */
    void settle() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        try (SourceFetcher f = fetcher()) {
            while (true) {
                SourceFetcher.Fetched fetched = fetch(f, 0, 1);
                if (fetched.lastStableOffset() == fetched.highWatermark()) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + ": a transaction stayed open");
                }
                Thread.sleep(20);
            }
        }
    }

    /**
     * One fetch of this cluster's partition through {@code f}, retried for up to 30 s while its
     * leader answers with a retriable error (leadership settling after the cluster started).
     */
    SourceFetcher.Fetched fetch(SourceFetcher f, long offset, int maxBytes) throws IOException {
        try {
            return f.fetchRetrying(PARTITION, topicId, offset, maxBytes, Duration.ofSeconds(30), Duration.ofMillis(50));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while fetching from " + name, e);
        }
    }

    /** Sends one record with the {@link Judged#FROM} header, and waits for it: one batch each. */
    void send(KafkaProducer<String, String> producer, String key, String value) throws Exception {
        org.apache.kafka.clients.producer.ProducerRecord<String, String> r =
                new org.apache.kafka.clients.producer.ProducerRecord<>(TOPIC, 0, key, value);
        r.headers().add(Judged.FROM, name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        producer.send(r).get();
    }

    /** Kafka's producer entries on the source partition: PID to {epoch, last sequence}. */
    Map<Long, List<Integer>> producers() throws Exception {
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrapServers);
        Map<Long, List<Integer>> out = new TreeMap<>();
        try (Admin admin = Admin.create(ap)) {
            for (org.apache.kafka.clients.admin.ProducerState s
                    : admin.describeProducers(List.of(PARTITION)).partitionResult(PARTITION).get().activeProducers()) {
                out.put(s.producerId(), List.of(s.producerEpoch(), s.lastSequence()));
            }
        }
        return out;
    }

    /** The source log's data batches: what the judge attributes destination batches by. */
    List<Destination.Batch> batches() throws IOException {
        List<Destination.Batch> out = new ArrayList<>();
        try (SourceFetcher f = fetcher()) {
            long offset = 0;
            while (true) {
                SourceFetcher.Fetched fetched = fetch(f, offset, 1 << 20);
                if (fetched.records().sizeInBytes() == 0) {
                    return out;
                }
                for (org.apache.kafka.common.record.internal.RecordBatch batch : fetched.records().batches()) {
                    Destination.Batch.of(batch).ifPresent(out::add);
                    offset = batch.nextOffset();
                }
            }
        }
    }

    String name() {
        return name;
    }

    /** The partition's log directory on disk, where its segment files are. */
    File partitionDir() {
        return new File(new File(dir, "data"), TOPIC + "-0");
    }

    /** Kafka's cluster ID: the source cluster ID mirrorpid maps under. */
    String clusterId() {
        return clusterId;
    }

    Uuid topicId() {
        return topicId;
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    /** An idempotent producer (every producer of Kafka 3+ is, by default). */
    KafkaProducer<String, String> idempotent() {
        return producer(new Properties());
    }

    /** A transactional producer, initialised: a restart with the same ID bumps its epoch. */
    KafkaProducer<String, String> transactional(String transactionalId) {
        Properties p = new Properties();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        KafkaProducer<String, String> producer = producer(p);
        producer.initTransactions();
        return producer;
    }

    /** A producer with {@code extra} settings over the defaults (idempotent, acks all, no linger). */
    KafkaProducer<String, String> producer(Properties extra) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.putAll(extra);
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        clients.add(producer);
        return producer;
    }

    /** A raw fetcher of the topic's partition. */
    SourceFetcher fetcher() throws IOException {
        return SourceFetcher.connect(bootstrapServers());
    }

    /**
     * What a read_committed consumer of the partition reads, by Kafka's own consumer, up to the
     * last stable offset.
     */
    List<Judged.Rec> readCommitted() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<Judged.Rec> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(Set.of(PARTITION));
            consumer.seekToBeginning(Set.of(PARTITION));
            long end = consumer.endOffsets(Set.of(PARTITION)).get(PARTITION);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (consumer.position(PARTITION) < end) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + ": read_committed did not reach " + end);
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    out.add(Judged.Rec.of(r.key(), r.value(), r.headers()));
                }
            }
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        Exception first = null;
        for (AutoCloseable c : clients) {
            try {
                c.close();
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        try {
            stop(broker);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            first = first == null ? e : first;
        }
        KafkaLogs.delete(dir);
        if (first != null) {
            throw new IOException("stopping cluster " + name, first);
        }
    }
}
