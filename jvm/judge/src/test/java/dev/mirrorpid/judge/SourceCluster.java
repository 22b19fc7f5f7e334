package dev.mirrorpid.judge;

import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
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
 * A source cluster of the tests: a real single-node KRaft cluster ({@link LocalBroker}) with one
 * topic of one partition, its producers and its reads. A fresh cluster hands out producer IDs
 * from 0, so producers on two of them collide as they do in production.
 */
final class SourceCluster implements AutoCloseable {
    static final String TOPIC = "orders";
    static final TopicPartition PARTITION = new TopicPartition(TOPIC, 0);

    private final String name;
    private final LocalBroker broker;
    private final List<AutoCloseable> clients = new ArrayList<>();

    private SourceCluster(String name, LocalBroker broker) {
        this.name = name;
        this.broker = broker;
    }

    /**
     * Starts a cluster called {@code name} (in the tests' tables): a {@link LocalBroker} with
     * one topic of one partition, and waits until its partition answers fetches.
     */
    static SourceCluster start(String name) throws Exception {
        LocalBroker broker = LocalBroker.start(name, clusterIdOf(name), TOPIC);
        SourceCluster cluster = new SourceCluster(name, broker);
        try {
            cluster.settle();
            return cluster;
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
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
            return f.fetchRetrying(PARTITION, topicId(), offset, maxBytes, Duration.ofSeconds(30), Duration.ofMillis(50));
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
        ap.put("bootstrap.servers", bootstrapServers());
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
        return new File(new File(broker.dir(), "data"), TOPIC + "-0");
    }

    /** Kafka's cluster ID: the source cluster ID mirrorpid maps under. */
    String clusterId() {
        return broker.clusterId();
    }

    Uuid topicId() {
        return broker.topicId();
    }

    String bootstrapServers() {
        return broker.bootstrapServers();
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
            broker.close();
        } catch (IOException e) {
            first = first == null ? e : first;
        }
        if (first != null) {
            throw new IOException("stopping cluster " + name, first);
        }
    }
}
