package example;

import dev.mirrorpid.MapperConfig;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.RewriteResult;
import dev.mirrorpid.StateRecord;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;

/** The README's Java example, whole: one fetch from "east" rewritten in place. */
public final class Example {
    private Example() {}

    public static void main(String[] args) {
        Uuid topicId = Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA");
        long nowMs = System.currentTimeMillis();
        List<StateRecord> mirrorStateInLogOrder = List.of(); // a new partition: nothing to replay
        // A fetch from east: one idempotent batch of producer 5.
        ByteBuffer fetchBuffer = MemoryRecords.withIdempotentRecords(Compression.NONE, 5L, (short) 0, 0,
                new SimpleRecord("k".getBytes(), "v".getBytes())).buffer();
        List<StateRecord> persisted = new ArrayList<>();

        MirrorPid mirrorpid = MirrorPid.load(); // once per broker: parses and compiles the module
        try (PidMapper mapper = mirrorpid.newMapper(MapperConfig.builder(topicId, 0).build())) {
            for (StateRecord r : mirrorStateInLogOrder) {
                mapper.loadRecord(r.key(), r.value()); // becoming leader
            }
            RewriteResult result = mapper.rewrite("east", fetchBuffer, nowMs); // in place
            persisted.addAll(result.records()); // produceAndWait: to __mirror_state, acks=all
            mapper.confirm(); // then append the first result.consumed() bytes
            MutableRecordBatch batch = MemoryRecords.readableRecords(fetchBuffer).batches().iterator().next();
            if (!batch.isValid() || batch.producerId() == 5L || persisted.size() != 1
                    || result.consumed() != fetchBuffer.remaining()) {
                throw new IllegalStateException("the rewrite did not do what the README says: " + batch);
            }
            System.out.println("east's producer 5 is " + batch.producerId() + " here; CRC valid; "
                    + persisted.size() + " __mirror_state record");
        }
    }
}
