package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * The Java example of {@code docs/ABI.md} and the README: the page's block is this file's, to
 * the character, and it runs.
 */
class WorkedExampleTest {
    // BEGIN java example
    /** One partition leader's life: replay __mirror_state, then serve one fetch from "east". */
    static void serveOneFetch(List<StateRecord> stateTopic, ByteBuffer fetch, List<ByteBuffer> partitionLog)
            throws Exception {
        MirrorPid mirrorpid = MirrorPid.load(); // once per broker: parses and compiles the module
        MapperConfig config = MapperConfig.builder(Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA"), 0).build();
        try (PidMapper mapper = mirrorpid.newMapper(config)) {
            // Becoming leader of orders-0: replay the compacted __mirror_state, in log order.
            for (StateRecord r : stateTopic) {
                mapper.loadRecord(r.key(), r.value());
            }
            // Each fetch: rewrite in place, make the records durable, confirm, append.
            RewriteResult result = mapper.rewrite("east", fetch, System.currentTimeMillis());
            stateTopic.addAll(result.records()); // a real broker: produce with acks=all, and wait
            mapper.confirm(); // only now are the new bindings permanent
            if (result.snapshotRequired()) {
                // a collision: take a producer-state snapshot
            }
            ByteBuffer complete = fetch.duplicate();
            complete.limit(complete.position() + result.consumed());
            partitionLog.add(complete); // the rewritten batches; a truncated tail waits
        }
    }
    // END java example

    @Test
    void theExampleRunsAndThePageShowsIt() throws Exception {
        List<StateRecord> topic = new ArrayList<>();
        List<ByteBuffer> log = new ArrayList<>();
        MemoryRecords one = MemoryRecords.withIdempotentRecords(Compression.NONE, 5L, (short) 0, 0,
                new SimpleRecord("v".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        serveOneFetch(topic, one.buffer(), log);
        assertEquals(1, topic.size(), "the new producer's record");
        MutableRecordBatch b = MemoryRecords.readableRecords(log.get(0)).batches().iterator().next();
        assertTrue(b.isValid());
        // A second leader replays the record and maps the producer as the first did.
        MemoryRecords again = MemoryRecords.withIdempotentRecords(Compression.NONE, 5L, (short) 0, 1,
                new SimpleRecord("w".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        serveOneFetch(topic, again.buffer(), log);
        assertEquals(1, topic.size(), "a confirmed producer writes no record");
        assertEquals(b.producerId(), MemoryRecords.readableRecords(log.get(1)).batches().iterator().next().producerId());

        String source = Repo.text("jvm/library/src/test/java/dev/mirrorpid/WorkedExampleTest.java");
        String block = between(source, "    // BEGIN java example\n", "    // END java example\n");
        String page = between(Repo.text("docs/ABI.md"), "```java\n", "```\n");
        assertEquals(block.replaceAll("(?m)^    ", ""), page, "docs/ABI.md shows this file's example");
    }

    private static String between(String text, String start, String end) {
        int a = text.indexOf(start);
        int b = text.indexOf(end, a);
        assertTrue(a >= 0 && b > a, "markers " + start.strip());
        return text.substring(a + start.length(), b);
    }
}
