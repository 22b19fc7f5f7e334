package dev.mirrorpid.judge;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * Reads one source partition's raw batches over the Kafka protocol: a Fetch request, built and
 * parsed by Kafka's own request classes, on a plain socket to the partition's leader.
 *
 * <p>What comes back is what a mirror fetcher receives: the batches exactly as the source log
 * holds them (data and control batches, committed or aborted, compressed or not), in the
 * response's own buffer. Nothing is decoded or copied. The fetch reads uncommitted, as a
 * replica fetcher does, so that markers and aborted data are mirrored too; a consumer
 * isolation level is used because a non-broker may not send a replica's fetch.
 */
public final class SourceFetcher implements AutoCloseable {
    private static final short VERSION = ApiKeys.FETCH.latestVersion();

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private int correlationId;

    /**
     * What one fetch of one partition returned.
     *
     * @param records the raw batches, backed by the response buffer; possibly empty
     * @param highWatermark the source partition's high watermark when it answered
     * @param lastStableOffset the source partition's last stable offset: below it no
     *     transaction is open
     */
    public record Fetched(MemoryRecords records, long highWatermark, long lastStableOffset) {}

    /** Connects to the partition leader at {@code host:port}. */
    public SourceFetcher(String host, int port) throws IOException {
        this.socket = new Socket();
        // As Kafka's own clients: no Nagle delay, so that a small request written in parts never
        // waits for the broker's delayed ACK.
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress(host, port), 10_000);
        socket.setSoTimeout(30_000);
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 << 10));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    /** Connects to the first broker of a bootstrap list such as {@code 127.0.0.1:9092,...}. */
    public static SourceFetcher connect(String bootstrapServers) throws IOException {
        String first = bootstrapServers.split(",")[0].trim();
        int colon = first.lastIndexOf(':');
        return new SourceFetcher(first.substring(0, colon), Integer.parseInt(first.substring(colon + 1)));
    }

    /**
     * Fetches from {@code offset} up to {@code maxBytes} of {@code partition} (whose topic ID is
     * {@code topicId}).
     *
     * @throws RetriableException the leader answered with a retriable error
     * @throws org.apache.kafka.common.KafkaException any other error code
     */
    public Fetched fetch(TopicPartition partition, Uuid topicId, long offset, int maxBytes) throws IOException {
        Objects.requireNonNull(partition, "partition");
        Map<TopicPartition, FetchRequest.PartitionData> wanted = Map.of(partition,
                new FetchRequest.PartitionData(topicId, offset, -1L, maxBytes, Optional.empty()));
        FetchRequest request = FetchRequest.Builder.forConsumer(VERSION, 100, 1, wanted)
                .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
                .setMaxBytes(maxBytes)
                .build(VERSION);
        RequestHeader header = new RequestHeader(ApiKeys.FETCH, VERSION, "mirrorpid-judge", ++correlationId);
        ByteBuffer bytes = request.serializeWithHeader(header);
        out.writeInt(bytes.remaining());
        out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
        out.flush();
        byte[] response = new byte[in.readInt()];
        in.readFully(response);
        FetchResponse parsed = (FetchResponse) AbstractResponse.parseResponse(ByteBuffer.wrap(response), header);
        Errors top = Errors.forCode(parsed.data().errorCode());
        if (top != Errors.NONE) {
            throw top.exception("fetch of " + partition);
        }
        FetchResponseData.PartitionData data = parsed.responseData(Map.of(topicId, partition.topic()), VERSION).get(partition);
        if (data == null) {
            throw new IllegalStateException("the fetch response has no data for " + partition);
        }
        Errors error = Errors.forCode(data.errorCode());
        if (error != Errors.NONE) {
            throw error.exception("fetch of " + partition + " at offset " + offset);
        }
        Records records = FetchResponse.recordsOrFail(data);
        MemoryRecords memory = records instanceof MemoryRecords
                ? (MemoryRecords) records
                : MemoryRecords.EMPTY;
        return new Fetched(memory, data.highWatermark(), data.lastStableOffset());
    }

    /**
     * {@link #fetch}, retried while the leader answers with a retriable error (a partition whose
     * leadership is still settling answers {@code NOT_LEADER_OR_FOLLOWER} for a moment after the
     * cluster starts), as Kafka's replica fetcher backs off and retries a partition: every {@code
     * backoff} until {@code patience} has passed, then the last error is thrown.
     *
     * @throws RetriableException the leader kept answering with a retriable error
     */
    public Fetched fetchRetrying(TopicPartition partition, Uuid topicId, long offset, int maxBytes,
            Duration patience, Duration backoff) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            try {
                return fetch(partition, topicId, offset, maxBytes);
            } catch (RetriableException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                Thread.sleep(backoff.toMillis());
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
