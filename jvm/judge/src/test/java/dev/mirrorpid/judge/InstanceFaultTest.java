package dev.mirrorpid.judge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mirrorpid.Faults;
import dev.mirrorpid.MirrorPid;
import dev.mirrorpid.ModuleTrappedException;
import dev.mirrorpid.PidMapper;
import dev.mirrorpid.kafka.MirrorLoop;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;

/**
 * A fault in one module instance, on Kafka's own logs: four destination partitions' loops share
 * one {@link MirrorPid} of two instances; a trap is forced in one instance (the library's test
 * hook, {@link Faults}: the shipped module cannot be made to trap). Its two partitions' loops
 * recover their mappers from their state logs and mirror on, and every partition's log ends byte
 * for byte as a run without the fault leaves it; the other instance's partitions keep their
 * mappers and see nothing. A loop given its mapper cannot recover, and the typed error reaches
 * its caller.
 */
class InstanceFaultTest {
    static final int PARTITIONS = 4;
    static final int ROUNDS = 6;
    static final String[] SOURCES = {"east", "west"};

    /** Round {@code round}'s fetch of {@code source}: one batch of each of its five producers. */
    private static MemoryRecords fetch(int source, int round) {
        List<MemoryRecords> batches = new ArrayList<>();
        int size = 0;
        for (int producer = 0; producer < 5; producer++) {
            MemoryRecords b = MemoryRecords.withIdempotentRecords(5L * round + producer, Compression.NONE,
                    producer + 1L, (short) 0, round, -1,
                    new SimpleRecord(1_000L * round, ("s" + source + "p" + producer).getBytes()));
            batches.add(b);
            size += b.sizeInBytes();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        batches.forEach(b -> out.put(b.buffer()));
        return MemoryRecords.readableRecords(out.flip());
    }

    /**
     * What a run leaves: each partition's log, its {@code __mirror_state} log end, and its loop's
     * mapper before the fault and at the end, with the producers it bound.
     */
    private record Run(List<byte[]> logs, long[] stateEnds, int[] bound, PidMapper[] before, PidMapper[] after) {}

    /** The rounds, the fault forced in partition 0's instance before round {@code faultAt}. */
    private static Run run(int faultAt) throws Exception {
        MirrorPid module = MirrorPid.builder().instances(2).build();
        List<LoopPartition> partitions = new ArrayList<>();
        List<MirrorLoop> loops = new ArrayList<>();
        PidMapper[] before = new PidMapper[PARTITIONS];
        try {
            for (int p = 0; p < PARTITIONS; p++) {
                partitions.add(new LoopPartition("mirrorpid-fault-" + p, module, p));
                loops.add(partitions.get(p).loop(MirrorLoop.DEFAULT_CHECKPOINT_INTERVAL_MS));
            }
            for (int round = 0; round < ROUNDS; round++) {
                if (round == faultAt) {
                    for (int p = 0; p < PARTITIONS; p++) {
                        before[p] = loops.get(p).mapper();
                    }
                    assertTrue(Faults.shareAnInstance(before[0], before[2]));
                    assertFalse(Faults.shareAnInstance(before[0], before[1]));
                    Faults.trapNextCall(before[0]);
                }
                for (int p = 0; p < PARTITIONS; p++) {
                    for (int s = 0; s < SOURCES.length; s++) {
                        MirrorLoop.Appended a = loops.get(p).mirror(SOURCES[s], fetch(s, round), 10_000L + round);
                        assertEquals(5, a.batches(), "partition " + p + ", round " + round);
                    }
                }
            }
            PidMapper[] after = new PidMapper[PARTITIONS];
            long[] stateEnds = new long[PARTITIONS];
            int[] bound = new int[PARTITIONS];
            List<byte[]> logs = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++) {
                after[p] = loops.get(p).mapper();
                stateEnds[p] = partitions.get(p).state.log().logEndOffset();
                bound[p] = after[p].size();
                ByteBuffer b = partitions.get(p).destination.fetch(0).buffer();
                byte[] bytes = new byte[b.remaining()];
                b.get(bytes);
                logs.add(bytes);
            }
            return new Run(logs, stateEnds, bound, before, after);
        } finally {
            for (MirrorLoop loop : loops) {
                loop.mapper().close();
            }
            for (LoopPartition p : partitions) {
                p.close();
            }
        }
    }

    @Test
    void aTrapInOneInstanceIsRecoveredByItsPartitionsAloneWithTheSameLogs() throws Exception {
        Run clean = run(-1);
        Run faulted = run(3);
        for (int p = 0; p < PARTITIONS; p++) {
            assertArrayEquals(clean.logs().get(p), faulted.logs().get(p), "partition " + p + "'s log");
            // The recovered mapper held every binding from the state log: it persisted none again.
            assertEquals(clean.stateEnds()[p], faulted.stateEnds()[p], "partition " + p + "'s __mirror_state");
            if (p % 2 == 0) {
                assertNotSame(faulted.before()[p], faulted.after()[p], "partition " + p + " recovered its mapper");
                assertTrue(faulted.before()[p].isClosed());
            } else {
                assertSame(faulted.before()[p], faulted.after()[p], "partition " + p + " saw nothing");
            }
            assertEquals(2 * 5, faulted.bound()[p], "partition " + p + "'s producers bound");
        }
        assertTrue(clean.logs().get(0).length > 0);
    }

    @Test
    void aLoopGivenItsMapperPassesTheTrapOn() throws Exception {
        MirrorPid module = MirrorPid.builder().instances(1).build();
        try (LoopPartition p = new LoopPartition("mirrorpid-fault-given", module, 0);
                PidMapper mapper = module.newMapper(
                        dev.mirrorpid.MapperConfig.builder(Lane.DESTINATION_TOPIC_ID, 0).build())) {
            MirrorLoop loop = p.builder().mapper(mapper).build();
            loop.mirror("east", fetch(0, 0), 10_000);
            Faults.trapNextCall(mapper);
            long end = p.destination.log().logEndOffset();
            assertThrows(ModuleTrappedException.class, () -> loop.mirror("east", fetch(0, 1), 10_001));
            assertEquals(end, p.destination.log().logEndOffset(), "nothing appended");
        }
    }
}
