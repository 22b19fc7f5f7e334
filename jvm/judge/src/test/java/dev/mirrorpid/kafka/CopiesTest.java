package dev.mirrorpid.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mirrorpid.judge.Destination;
import dev.mirrorpid.judge.KafkaLogs;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.DescribeProducersResponseData.ProducerState;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * {@link Copies} judged batch by batch against Kafka's own producer state, without clusters:
 * two paths carry the same producer's batches (as a diamond's do, already mapped alike) into one
 * {@code UnifiedLog}, placed and appended as {@code MirrorLoop} does with what the log holds
 * left out. Each fetch mixes runs of one producer, epoch bumps and another producer; a
 * judgement never carries over from one fetch of a path to its next, since the other path may
 * have appended the same batches in between.
 */
class CopiesTest {
    private static final long P = 7_000_000_000_001L;
    private static final long Q = 7_000_000_000_002L;
    private static final int LEADER_EPOCH = 3;

    /** One batch of one record: producer {@code pid} at {@code epoch}, sequence {@code seq}. */
    private record B(long pid, int epoch, int seq) {}

    /** Shorthand for the fetches below, which list many batches on one line. */
    private static B b(long pid, int epoch, int seq) {
        return new B(pid, epoch, seq);
    }

    /** The batches one after another at source offsets from 0, as a fetch returns them. */
    private static MemoryRecords fetch(B... batches) {
        ByteBuffer all = ByteBuffer.allocate(256 * batches.length);
        for (int i = 0; i < batches.length; i++) {
            B x = batches[i];
            byte[] key = (x.pid + "/" + x.epoch + "/" + x.seq).getBytes(StandardCharsets.UTF_8);
            all.put(MemoryRecords.withIdempotentRecords(i, Compression.NONE, x.pid, (short) x.epoch, x.seq, 0,
                    new SimpleRecord(key, new byte[8])).buffer());
        }
        return MemoryRecords.readableRecords(all.flip());
    }

    /** What one fetch did: how many batches were appended, how many were copies. */
    private record Appended(int batches, int copies) {}

    /** Judges {@code fetched}, appends what is not a copy as the mirror loop places it, applies. */
    private static Appended mirror(Copies copies, Destination d, String path, MemoryRecords fetched, long now)
            throws Exception {
        Copies.Judgement j = copies.judge(d.log(), path, fetched.batches(), now);
        ByteBuffer kept = ByteBuffer.allocate(fetched.sizeInBytes());
        long next = d.log().logEndOffset();
        int index = 0;
        int appended = 0;
        for (MutableRecordBatch batch : fetched.batches()) {
            if (j.isCopy(index++)) {
                continue;
            }
            batch.setLastOffset(next + batch.lastOffset() - batch.baseOffset());
            batch.setPartitionLeaderEpoch(LEADER_EPOCH);
            next = batch.nextOffset();
            batch.writeTo(kept);
            appended++;
        }
        if (appended > 0) {
            d.log().appendAsFollower(MemoryRecords.readableRecords(kept.flip()), LEADER_EPOCH);
        }
        copies.apply(j);
        return new Appended(appended, j.copies());
    }

    private static ProducerState entry(Destination d, long pid) {
        List<ProducerState> all = d.producers();
        for (ProducerState s : all) {
            if (s.producerId() == pid) {
                return s;
            }
        }
        throw new AssertionError("no entry for " + pid + " in " + all);
    }

    @Test
    void everyBatchOfEitherPathIsJudgedByKafkasStateAtItsFetch() throws Exception {
        File dir = Files.createTempDirectory("mirrorpid-copies").toFile();
        try (Destination d = Destination.create(dir, "copies", 0)) {
            // The batches stand for mirrorpid's output, whose copies carry one PID, epoch and
            // sequences whichever path brought them.
            Copies loop = new Copies(Copies.DEFAULT_HORIZON_MS);
            long now = System.currentTimeMillis();

            // Path A first: nothing is in the log, nothing is a copy.
            Appended a1 = mirror(loop, d, "A", fetch(b(P, 0, 0), b(P, 0, 1), b(P, 0, 2)), now);
            assertEquals(0, a1.copies());
            assertEquals(3, a1.batches());

            // Path B brings the same three and three more, with Q between: the three are copies,
            // the run that follows them (3, 4, 5 after Q) is new.
            Appended b1 = mirror(loop, d, "B",
                    fetch(b(P, 0, 0), b(P, 0, 1), b(P, 0, 2), b(P, 0, 3), b(Q, 0, 0), b(P, 0, 4), b(P, 0, 5)), now);
            assertEquals(3, b1.copies(), "P's 0, 1 and 2 came by A");
            assertEquals(4, b1.batches(), "P's 3, 4, 5 and Q's 0");
            assertEquals(5, entry(d, P).lastSequence());

            // Path A again, with what B already brought: all copies. A's last fetch ended on a
            // new batch at sequence 2; a run remembered across fetches would take 3 for new.
            Appended a2 = mirror(loop, d, "A", fetch(b(P, 0, 3), b(P, 0, 4), b(P, 0, 5)), now);
            assertEquals(3, a2.copies(), "B brought them between A's two fetches");
            assertEquals(0, a2.batches());

            // A runs on, and the producer is restarted mid-fetch (an epoch bump: its sequence
            // starts again at 0, below the entry's, and is new).
            Appended a3 = mirror(loop, d, "A",
                    fetch(b(P, 0, 6), b(P, 0, 7), b(P, 1, 0), b(P, 1, 1), b(Q, 0, 1)), now);
            assertEquals(0, a3.copies());
            assertEquals(5, a3.batches());
            assertEquals(1, entry(d, P).producerEpoch());
            assertEquals(1, entry(d, P).lastSequence());

            // B catches up: everything up to the bump and after it is a copy (the entry's
            // epoch is above the old epoch's batches), then new batches at the new epoch.
            Appended b2 = mirror(loop, d, "B",
                    fetch(b(P, 0, 6), b(P, 0, 7), b(P, 1, 0), b(P, 1, 1), b(P, 1, 2), b(Q, 0, 1), b(Q, 0, 2)), now);
            assertEquals(5, b2.copies(), "P's 6, 7, (1) 0, (1) 1 and Q's 1 came by A");
            assertEquals(2, b2.batches(), "P's (1) 2 and Q's 2");
            assertEquals(2, entry(d, P).lastSequence());
            assertEquals(2, entry(d, Q).lastSequence());
            assertEquals(2, d.producers().size(), "one entry per producer");
        } finally {
            KafkaLogs.delete(dir);
        }
    }
}
