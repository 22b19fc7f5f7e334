package dev.mirrorpid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.dylibso.chicory.runtime.ByteArrayMemory;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.runtime.WasmRuntimeException;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link FlatMemory} against Chicory's own {@code ByteArrayMemory}, fed the same operations:
 * the same values, the same traps (out of bounds at the same addresses, before and after each
 * grow), the same refused grows and the same bytes at the end.
 */
class FlatMemoryTest {
    private static final int PAGE = Memory.PAGE_SIZE;

    /** What an operation gave: its value, or that it trapped. */
    private static Object outcome(Memory m, Function<Memory, Object> op) {
        try {
            return op.apply(m);
        } catch (WasmRuntimeException e) {
            return "trap";
        }
    }

    @Test
    void itIsChicorysByteArrayMemoryOnEveryOperation() {
        Random random = new Random(0x5eed);
        for (int run = 0; run < 40; run++) {
            MemoryLimits limits = new MemoryLimits(1 + random.nextInt(2), 3 + random.nextInt(4));
            Memory flat = new FlatMemory(limits);
            Memory reference = new ByteArrayMemory(limits);
            for (int i = 0; i < 2_000; i++) {
                int size = reference.pages() * PAGE;
                // Addresses around the end of memory, inside it, and wild.
                int addr;
                switch (random.nextInt(4)) {
                    case 0: addr = size - random.nextInt(12); break;
                    case 1: addr = random.nextInt(Math.max(1, size)); break;
                    case 2: addr = -1 - random.nextInt(16); break;
                    default: addr = random.nextInt(); break;
                }
                long value = random.nextLong();
                int n = random.nextInt(40) - 2;
                int other = random.nextInt(Math.max(1, size + 16));
                int delta = random.nextInt(3) == 0 ? 2 : random.nextInt(2);
                Function<Memory, Object> op;
                switch (random.nextInt(14)) {
                    case 0: op = m -> m.grow(delta); break;
                    case 1: op = m -> { m.writeI32(addr, (int) value); return null; }; break;
                    case 2: op = m -> m.readInt(addr); break;
                    case 3: op = m -> { m.writeLong(addr, value); return null; }; break;
                    case 4: op = m -> m.readLong(addr); break;
                    case 5: op = m -> { m.writeShort(addr, (short) value); return null; }; break;
                    case 6: op = m -> m.readShort(addr) + ":" + m.readU16(addr); break;
                    case 7: op = m -> { m.writeByte(addr, (byte) value); return null; }; break;
                    case 8: op = m -> m.read(addr); break;
                    case 9: op = m -> java.util.Arrays.toString(m.readBytes(addr, Math.max(0, n))); break;
                    case 10: op = m -> { m.write(addr, new byte[] {1, 2, 3, 4, 5, 6, 7}, 1, Math.max(0, Math.min(6, n))); return null; }; break;
                    case 11: op = m -> { m.fill((byte) value, other, other + Math.max(0, n)); return null; }; break;
                    case 12: op = m -> { m.copy(other, addr, Math.max(0, n)); return null; }; break;
                    default: op = m -> m.readDouble(addr) + ":" + m.readFloat(addr); break;
                }
                // Both get the same operation (every operand drawn above).
                Object expected = outcome(reference, op);
                Object got = outcome(flat, op);
                assertEquals(expected, got, "run " + run + " op " + i + " at " + addr);
                assertEquals(reference.pages(), flat.pages());
            }
            int end = reference.pages() * PAGE;
            assertArrayEquals(reference.readBytes(0, end), flat.readBytes(0, end), "run " + run);
        }
    }

    @Test
    void aGrowPastTheMaximumIsRefusedAndTheBytesPastTheEndStayUnreachable() {
        Memory m = new FlatMemory(new MemoryLimits(4, 8));
        assertEquals(4, m.grow(1));
        assertEquals(5, m.pages());
        assertEquals(-1, m.grow(4), "9 pages is past the maximum of 8");
        assertEquals(-1, m.grow(-1));
        assertEquals(5, m.pages());
        // Grown to half again, the array holds 6 pages: the sixth is still out of bounds.
        assertThrows(WasmRuntimeException.class, () -> m.readInt(5 * PAGE));
        assertThrows(WasmRuntimeException.class, () -> m.readInt(5 * PAGE - 3));
        assertThrows(WasmRuntimeException.class, () -> m.writeByte(5 * PAGE, (byte) 1));
        assertThrows(WasmRuntimeException.class, () -> m.fill((byte) 1, 5 * PAGE - 1, 5 * PAGE + 1));
        m.writeI32(5 * PAGE - 4, 0x01020304);
        assertEquals(0x01020304, m.readInt(5 * PAGE - 4));
        assertEquals(4, m.read(5 * PAGE - 4), "little-endian");
        assertEquals(5, m.grow(1));
        assertEquals(0, m.readInt(5 * PAGE), "a grown page reads zero");
        assertEquals(6, m.grow(2));
        assertEquals(8, m.pages());
        assertEquals(0, m.readLong(8 * PAGE - 8));
    }
}
