package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Mappers share a few module instances ({@link MirrorPid}): where they are placed, that the last
 * to close retires its instance, that a trap in one instance fails its mappers alone with a typed
 * error while a restored mapper maps as before, and what a broker's worth of partitions costs:
 * 10,000 partitions of ten producers each at most 16 KiB a partition, in an address space that
 * does not grow with them, on the native runtime and on Chicory.
 */
class SharedInstancesTest {
    /** The most a partition of ten producers may cost: a broker leads thousands in a few GiB. */
    static final long PARTITION_LIMIT_BYTES = 16 << 10;
    static final int PARTITIONS = 10_000;
    static final int PRODUCERS = 10;

    /** One batch for each of {@code producers} PIDs from {@code firstPid}. */
    static ByteBuffer fetch(long firstPid, int producers) {
        List<MemoryRecords> batches = new ArrayList<>();
        int size = 0;
        for (int i = 0; i < producers; i++) {
            MemoryRecords r = MemoryRecords.withIdempotentRecords(i, Compression.NONE, firstPid + i, (short) 0, 0, 0,
                    new SimpleRecord(new byte[16]));
            batches.add(r);
            size += r.sizeInBytes();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        batches.forEach(b -> out.put(b.buffer()));
        return out.flip();
    }

    private static MapperConfig config(int partition) {
        return MapperConfig.builder(Repo.TOPIC, partition).build();
    }

    /** A partition's leader: a new mapper, its first fetch rewritten and confirmed. */
    private static PidMapper lead(MirrorPid module, int partition, ByteBuffer fetch) {
        PidMapper m = module.newMapper(config(partition));
        RewriteResult r = m.rewrite("A", fetch.duplicate(), 1_000);
        assertEquals(PRODUCERS, r.records().size());
        assertEquals(PRODUCERS, m.confirm());
        return m;
    }

    @Test
    void mappersAreSpreadOverTheInstancesAndTheLastToCloseRetiresOne() {
        MirrorPid module = MirrorPid.builder().instances(3).build();
        assertThrows(IllegalArgumentException.class, () -> MirrorPid.builder().instances(0));
        List<PidMapper> mappers = new ArrayList<>();
        for (int p = 0; p < 9; p++) {
            mappers.add(module.newMapper(config(p)));
        }
        assertEquals(3, module.liveInstances());
        for (int p = 0; p < 9; p++) {
            assertEquals(p % 3 == 0, Faults.shareAnInstance(mappers.get(0), mappers.get(p)), "partition " + p);
        }
        // A mapper that cannot be made (an invalid snapshot) counts in no instance.
        assertThrows(MirrorPidException.class, () -> module.restore(new byte[] {1, 2, 3}));
        for (int p = 0; p < 9; p += 3) {
            mappers.get(p).close();
        }
        assertEquals(2, module.liveInstances(), "the instance whose mappers all closed is retired");
        PidMapper next = module.newMapper(config(9));
        assertEquals(3, module.liveInstances(), "a new one takes the empty place");
        next.close();
        mappers.forEach(PidMapper::close);
        assertEquals(0, module.liveInstances());
    }

    @Test
    void aTrapFailsTheMappersOfItsInstanceAloneAndARestoredOneMapsAsBefore() {
        MirrorPid module = MirrorPid.builder().instances(2).build();
        ByteBuffer fetch = fetch(0, PRODUCERS);
        List<PidMapper> mappers = new ArrayList<>();
        List<byte[]> rewritten = new ArrayList<>();
        List<byte[]> snapshots = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            PidMapper m = lead(module, p, fetch);
            mappers.add(m);
            snapshots.add(m.snapshot());
            ByteBuffer again = copy(fetch);
            m.rewrite("A", again, 2_000);
            rewritten.add(again.array());
        }
        PidMapper failing = mappers.get(0);
        assertTrue(Faults.shareAnInstance(failing, mappers.get(2)));
        assertFalse(Faults.shareAnInstance(failing, mappers.get(1)));

        Faults.trapNextCall(failing);
        ByteBuffer untouched = copy(fetch);
        ModuleTrappedException trap = assertThrows(ModuleTrappedException.class,
                () -> failing.rewrite("A", untouched, 3_000));
        assertTrue(trap.getMessage().contains("mp_rewrite_headers_from"), trap.getMessage());
        assertArrayEquals(fetch.array(), untouched.array(), "nothing of the caller's buffer was written");
        // Its neighbour in the instance fails on its next call, naming the same cause.
        ModuleTrappedException second = assertThrows(ModuleTrappedException.class, () -> mappers.get(2).size());
        assertSame(trap.getCause(), second.getCause());
        assertTrue(failing.isClosed() && mappers.get(2).isClosed());
        assertEquals(1, module.liveInstances());
        // The other instance's mappers see nothing.
        for (int p : new int[] {1, 3}) {
            ByteBuffer again = copy(fetch);
            assertEquals(0, mappers.get(p).rewrite("A", again, 3_000).records().size());
            assertArrayEquals(rewritten.get(p), again.array());
            assertFalse(mappers.get(p).isClosed());
        }
        // Restored, the failed partitions map every producer as before, in a new instance.
        for (int p : new int[] {0, 2}) {
            try (PidMapper restored = module.restore(snapshots.get(p))) {
                assertNotSame(mappers.get(p), restored);
                ByteBuffer again = copy(fetch);
                restored.rewrite("A", again, 3_000);
                assertArrayEquals(rewritten.get(p), again.array(), "partition " + p);
            }
        }
        mappers.forEach(PidMapper::close);
        assertEquals(0, module.liveInstances());
    }

    /**
     * A mapper placed in an instance that another thread's trap closes before the mapper is made
     * there is not made there: the making reports it (null), and placing again finds a live
     * instance, so that a new partition never fails for another partition's fault.
     */
    @Test
    void aMapperPlacedInAnInstanceATrapClosedIsPlacedAgain() {
        MirrorPid module = MirrorPid.builder().instances(1).build();
        PidMapper failing = lead(module, 0, fetch(0, PRODUCERS));
        SharedInstance home = failing.home();
        Faults.trapNextCall(failing);
        assertThrows(ModuleTrappedException.class, () -> failing.size());
        byte[] config = config(1).toJson().getBytes(StandardCharsets.UTF_8);
        assertNull(PidMapper.made(home, Export.MAPPER_NEW, config), "nothing is made in a trapped instance");
        try (PidMapper next = module.newMapper(config(1))) {
            assertNotSame(home, next.home());
            assertEquals(0, next.size());
        }
        failing.close();
        assertEquals(0, module.liveInstances());
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining());
        return c.put(b.duplicate()).flip();
    }

    /**
     * 10,000 partitions' leaders in one JVM, each a mapper of ten producers: each costs at most
     * {@link #PARTITION_LIMIT_BYTES}, counting the Java heap it holds and the linear memory its
     * instance grew for it (on Chicory the linear memory is on the heap; natively it is outside,
     * and resident at most as much as it is large), and the address space grows by less than one
     * instance's reservation.
     */
    @ParameterizedTest
    @EnumSource(value = MirrorPid.Mode.class, names = {"NATIVE", "COMPILER"})
    void tenThousandPartitionsOfTenProducersCostAtMostSixteenKiBEach(MirrorPid.Mode mode) throws IOException {
        MirrorPid module = MirrorPid.builder().mode(mode).instances(2).build();
        ByteBuffer fetch = fetch(0, PRODUCERS);
        List<PidMapper> mappers = new ArrayList<>(PARTITIONS);
        int warm = 1_000;
        for (int p = 0; p < warm; p++) {
            mappers.add(lead(module, p, fetch));
        }
        long heap = ProcessMemory.heapUsed();
        long linear = module.linearMemoryBytes();
        long address = ProcessMemory.status("VmSize:");
        for (int p = warm; p < PARTITIONS; p++) {
            mappers.add(lead(module, p, fetch));
        }
        long heapGrown = ProcessMemory.heapUsed() - heap;
        long linearGrown = module.linearMemoryBytes() - linear;
        long addressGrown = ProcessMemory.status("VmSize:") - address;
        int added = PARTITIONS - warm;
        long perPartition = (mode == MirrorPid.Mode.NATIVE ? heapGrown + linearGrown : heapGrown) / added;
        System.out.printf("%s: %d partitions, %d B a partition (heap %d B, linear memory %d B), "
                + "address space +%d KiB, resident %d MiB%n", mode, PARTITIONS, perPartition, heapGrown / added,
                linearGrown / added, addressGrown >> 10, ProcessMemory.status("VmRSS:") >> 20);
        assertTrue(perPartition <= PARTITION_LIMIT_BYTES, mode + ": " + perPartition + " bytes a partition");
        assertTrue(addressGrown < 1L << 30, mode + ": the address space grew by " + (addressGrown >> 20) + " MiB");
        assertEquals(2, module.liveInstances());
        mappers.forEach(PidMapper::close);
        assertEquals(0, module.liveInstances());
    }
}
