package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.PidMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.record.internal.FileLogInputStream;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

/**
 * The command line on a segment file a real Kafka 4.4 broker wrote: real producers with every
 * compression, a transaction committed and one aborted (their markers), and a producer without
 * idempotence (PID -1). {@code mirrorpid rewrite} rewrites a copy, and Kafka's own
 * {@link FileRecords} judges the result: every CRC valid, every record as it was, every PID as
 * mirrorpid-jvm maps it. A damaged copy is refused at the offset Kafka gives the batch, and the
 * {@code __mirror_state} records it writes replay ({@code snapshot make}) into the mapping made.
 */
class SegmentCliTest {
    private static final File ROOT = new File(System.getProperty("mirrorpid.root", "../..")).getAbsoluteFile();

    @Test
    void aRealSegmentRewrittenByTheCommandLineIsValidToKafka() throws Exception {
        Path work = Files.createTempDirectory("mirrorpid-segment");
        try (SourceCluster cluster = SourceCluster.start("segments")) {
            produce(cluster);
            cluster.settle();
            File segment = new File(cluster.partitionDir(), "00000000000000000000.log");
            Path in = work.resolve("orders-0.log");
            Files.copy(segment.toPath(), in);
            String topicId = cluster.topicId().toString();
            Path out = work.resolve("orders-0.mirrored.log");

            Run rewrite = cli("rewrite", "--source", cluster.clusterId(), "--topic-id", topicId, "--partition", "0",
                    "--json", in.toString(), out.toString());
            assertEquals(0, rewrite.code, rewrite.stderr);
            List<RecordBatch> before = batches(in);
            List<RecordBatch> after = batches(out);
            assertEquals(before.size(), after.size());
            assertTrue(rewrite.stdout.contains("\"batches\":" + before.size()), rewrite.stdout);

            Set<Long> pids = new TreeSet<>();
            Set<String> codecs = new TreeSet<>();
            boolean commit = false, abort = false, none = false;
            try (PidMapper mapper = Lane.MODULE.newMapper(MapperConfig.builder(cluster.topicId(), 0).build())) {
                for (int i = 0; i < before.size(); i++) {
                    RecordBatch a = before.get(i), b = after.get(i);
                    b.ensureValid(); // Kafka's CRC-32C check of the rewritten batch
                    long want = a.producerId() < 0 ? a.producerId()
                            : mapper.map(cluster.clusterId(), a.producerId(), 0).mapped();
                    mapper.confirm();
                    assertEquals(want, b.producerId(), "batch " + i);
                    assertEquals(a.producerEpoch(), b.producerEpoch());
                    assertEquals(a.baseSequence(), b.baseSequence());
                    assertEquals(a.isTransactional(), b.isTransactional());
                    assertEquals(a.isControlBatch(), b.isControlBatch());
                    assertEquals(a.compressionType(), b.compressionType());
                    assertEquals(records(a), records(b), "batch " + i + ": the records are untouched");
                    if (a.producerId() >= 0) {
                        pids.add(a.producerId());
                    } else {
                        none = true;
                    }
                    codecs.add(a.compressionType().name);
                    if (a.isControlBatch()) {
                        String marker = org.apache.kafka.common.record.internal.ControlRecordType
                                .parse(a.iterator().next().key()).name();
                        commit |= marker.equals("COMMIT");
                        abort |= marker.equals("ABORT");
                    }
                }
            }
            // The segment holds what it was made to hold.
            assertEquals(Set.of("gzip", "lz4", "none", "snappy", "zstd"), codecs);
            assertTrue(commit && abort && none, "markers and a PID -1 batch: " + commit + abort + none);
            // Only the 12 bytes of PID and CRC per changed batch differ.
            byte[] x = Files.readAllBytes(in), y = Files.readAllBytes(out);
            assertEquals(x.length, y.length);
            int changed = 0;
            for (int i = 0; i < x.length; i++) {
                changed += x[i] != y[i] ? 1 : 0;
            }
            assertTrue(changed > 0 && changed <= 12 * before.size(), changed + " bytes changed");

            // The records it wrote replay into the same mapping.
            Path records = work.resolve("orders-0.mirrored.log.mirror_state.log");
            Path snapshot = work.resolve("orders-0.snapshot");
            Run make = cli("snapshot", "make", "-o", snapshot.toString(), records.toString());
            assertEquals(0, make.code, make.stderr);
            try (PidMapper restored = Lane.MODULE.restore(Files.readAllBytes(snapshot))) {
                assertEquals(pids.size(), restored.size());
                for (long pid : pids) {
                    assertTrue(restored.map(cluster.clusterId(), pid, 0).records().isEmpty(), "bound already: " + pid);
                }
            }
            // The data segment is not a __mirror_state segment, said once.
            Run dump = cli("state", "dump", in.toString());
            assertEquals(1, dump.code);
            assertEquals(1, dump.stderr.lines().count(), dump.stderr);
            assertTrue(dump.stderr.contains("not a __mirror_state segment"), dump.stderr);

            // A flipped record byte in the third batch: refused at Kafka's position of that batch.
            FileLogInputStream.FileChannelRecordBatch third = fileBatches(in).get(2);
            byte[] damaged = x.clone();
            damaged[third.position() + third.sizeInBytes() - 2] ^= 1;
            Path bad = work.resolve("damaged.log");
            Files.write(bad, damaged);
            Run refused = cli("rewrite", "--source", cluster.clusterId(), "--topic-id", topicId, "--partition", "0",
                    bad.toString(), work.resolve("damaged.out.log").toString());
            assertEquals(2, refused.code);
            assertTrue(refused.stderr.contains("batch at byte " + third.position() + " stores CRC"), refused.stderr);
            assertFalse(Files.exists(work.resolve("damaged.out.log")));
        } finally {
            KafkaLogs.delete(work.toFile());
        }
    }

    /** Batches with every compression, a committed and an aborted transaction, PID -1. */
    private static void produce(SourceCluster cluster) throws Exception {
        for (String codec : List.of("none", "gzip", "lz4", "zstd", "snappy")) {
            Properties p = new Properties();
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
            KafkaProducer<String, String> producer = cluster.producer(p);
            for (int i = 0; i < 3; i++) {
                cluster.send(producer, codec + "-" + i, "a value that compresses, " + codec + " " + i);
            }
        }
        KafkaProducer<String, String> txn = cluster.transactional("segment-tx");
        txn.beginTransaction();
        cluster.send(txn, "tx-1", "committed");
        txn.commitTransaction();
        txn.beginTransaction();
        cluster.send(txn, "tx-2", "aborted");
        txn.abortTransaction();
        Properties plain = new Properties();
        plain.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        plain.put(ProducerConfig.ACKS_CONFIG, "1");
        cluster.send(cluster.producer(plain), "plain", "no producer ID");
    }

    private static List<FileLogInputStream.FileChannelRecordBatch> fileBatches(Path file) throws IOException {
        List<FileLogInputStream.FileChannelRecordBatch> out = new ArrayList<>();
        try (FileRecords records = FileRecords.open(file.toFile(), false)) {
            records.batches().forEach(out::add);
        }
        return out;
    }

    /** The batches of a segment file, loaded into memory (Kafka's reading of it). */
    private static List<RecordBatch> batches(Path file) throws IOException {
        List<RecordBatch> out = new ArrayList<>();
        org.apache.kafka.common.record.internal.MemoryRecords.readableRecords(
                java.nio.ByteBuffer.wrap(Files.readAllBytes(file))).batches().forEach(out::add);
        return out;
    }

    /** Each record's offset, timestamp, key, value and headers, as text. */
    private static List<String> records(RecordBatch batch) {
        List<String> out = new ArrayList<>();
        for (Record r : batch) {
            StringBuilder s = new StringBuilder().append(r.offset()).append('@').append(r.timestamp()).append(' ');
            s.append(text(r.key())).append('=').append(text(r.value()));
            for (org.apache.kafka.common.header.Header h : r.headers()) {
                s.append(' ').append(h.key()).append(':').append(new String(h.value(), StandardCharsets.UTF_8));
            }
            out.add(s.toString());
        }
        assertNotEquals(0, out.size());
        return out;
    }

    private static String text(java.nio.ByteBuffer b) {
        if (b == null) {
            return "null";
        }
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** A finished run of the command line. */
    private record Run(int code, String stdout, String stderr) {}

    /** Whether this run built the command line (cargo does nothing when it is current). */
    private static boolean built;

    /** Runs the {@code mirrorpid} command line of this checkout, built first by cargo. */
    private static Run cli(String... args) throws Exception {
        File bin = new File(ROOT, "target/debug/mirrorpid");
        if (!built) {
            Process build = new ProcessBuilder("cargo", "build", "-q", "-p", "mirrorpid-cli")
                    .directory(ROOT).inheritIO().start();
            assertEquals(0, build.waitFor(), "cargo build -p mirrorpid-cli");
            built = true;
        }
        List<String> command = new ArrayList<>(List.of(bin.getPath()));
        command.addAll(List.of(args));
        Path err = Files.createTempFile("mirrorpid-cli", ".err");
        Path outFile = Files.createTempFile("mirrorpid-cli", ".out");
        try {
            Process p = new ProcessBuilder(command).redirectOutput(outFile.toFile()).redirectError(err.toFile()).start();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "mirrorpid " + String.join(" ", args));
            return new Run(p.exitValue(), Files.readString(outFile), Files.readString(err));
        } finally {
            Files.deleteIfExists(err);
            Files.deleteIfExists(outFile);
        }
    }
}
