package dev.mirrorpid.judge;

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
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;

/**
 * A real single-node KRaft cluster on loopback: one Kafka broker process, broker and controller
 * in one node ({@code kafka.Kafka} after {@code kafka.tools.StorageTool format --standalone}),
 * listening on 127.0.0.1 only, in a temporary directory that {@link #close()} deletes with the
 * process. It runs on this JVM's own class path, which must hold the {@code kafka_2.13} jars:
 * the real-Kafka tests' source clusters and the end-to-end benchmark from a source fetch start
 * theirs here.
 */
public final class LocalBroker implements AutoCloseable {
    private final File dir;
    private final Process process;
    private final String bootstrapServers;
    private final String clusterId;
    private final Uuid topicId;

    private LocalBroker(File dir, Process process, String bootstrapServers, String clusterId, Uuid topicId) {
        this.dir = dir;
        this.process = process;
        this.bootstrapServers = bootstrapServers;
        this.clusterId = clusterId;
        this.topicId = topicId;
    }

    /**
     * Formats and starts a cluster whose Kafka cluster ID is {@code clusterId}, and creates
     * {@code topic} on it with one partition; {@code name} names it in errors and file names.
     * Waits up to 90 s for the broker to take the topic.
     *
     * @throws IllegalStateException formatting failed, or the broker did not start (with the end
     *     of its output)
     */
    public static LocalBroker start(String name, String clusterId, String topic) throws Exception {
        Objects.requireNonNull(topic, "topic");
        File dir = Files.createTempDirectory("mirrorpid-cluster-" + name).toFile();
        int[] ports = freePorts(2);
        int port = ports[0];
        int controller = ports[1];
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
            p.store(out, "mirrorpid: cluster " + name);
        }
        int formatted = java(dir, "format.log", "kafka.tools.StorageTool", "format", "--standalone", "-t", clusterId,
                "-c", config.getPath()).waitFor();
        if (formatted != 0) {
            String output = tail(new File(dir, "format.log"));
            KafkaLogs.delete(dir);
            throw new IllegalStateException("formatting cluster " + name + " failed:\n" + output);
        }
        Process broker = java(dir, "server.log", "kafka.Kafka", config.getPath());
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
                        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(10, TimeUnit.SECONDS);
                        topicId = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
                    } catch (ExecutionException | TimeoutException e) {
                        Thread.sleep(200);
                    }
                }
            }
            return new LocalBroker(dir, broker, bootstrap, clusterId, topicId);
        } catch (Exception e) {
            stop(broker);
            KafkaLogs.delete(dir);
            throw e;
        }
    }

    /** The cluster's directory: {@code data/} under it holds the log directories. */
    public File dir() {
        return dir;
    }

    /** {@code 127.0.0.1:<port>}, the broker's plaintext listener. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** Kafka's cluster ID, as the cluster was formatted with it. */
    public String clusterId() {
        return clusterId;
    }

    /** The topic ID Kafka gave the topic. */
    public Uuid topicId() {
        return topicId;
    }

    /** Stops the broker process (killing it after 30 s) and deletes its directory. */
    @Override
    public void close() throws IOException {
        try {
            stop(process);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while stopping the broker in " + dir, e);
        } finally {
            KafkaLogs.delete(dir);
        }
    }

    /** The last 40 lines of a process's output, for an error message. */
    private static String tail(File log) throws IOException {
        List<String> lines = Files.readAllLines(log.toPath());
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    /**
     * {@code n} ports free on loopback now, all different: each socket stays open until every
     * port is chosen, since one closed before the next is opened may be handed out again.
     */
    private static int[] freePorts(int n) throws IOException {
        List<ServerSocket> open = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                open.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : open) {
                s.close();
            }
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
}
