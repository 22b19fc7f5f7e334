package dev.mirrorpid.bench;

import com.dylibso.chicory.runtime.ExportFunction;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.wasm.Parser;
import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.ExternalType;
import com.dylibso.chicory.wasm.types.Instruction;
import com.dylibso.chicory.wasm.types.NameCustomSection;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * How many WebAssembly instructions one header rewrite runs, by function: the measure the JVM
 * figures of {@code docs/PERFORMANCE.md} are explained by, exact where a timing is noisy.
 * Chicory's interpreter reports every instruction it executes to an execution listener; this
 * drives the ABI as {@code PidMapper.rewrite} does for a fetch of bound producers (one {@code
 * mp_rewrite_headers_from}, its source named once by {@code mp_source}; the output is found
 * through {@code mp_output_info}, read without a call) and counts that call only; with {@code
 * --bytes}, as a host with the fetch in linear memory does ({@code mp_rewrite} on its bytes).
 *
 * <p>{@code scripts/bench-jvm.sh count} runs it on the module with its function names kept
 * ({@code dist/named/}, optimised as the shipped one is). Arguments: the module, optionally
 * {@code --one-producer} (every batch of one producer, sequences running on; by default each
 * batch has a producer of its own) and {@code --bytes}, then the fetches' batch counts
 * (default 1 and 100; the difference is the cost of a batch).
 */
public final class InstructionCount {
    private InstructionCount() {}

    /** Runs the count for each batch count in {@code args[1..]}. */
    public static void main(String[] args) throws IOException {
        WasmModule module = Parser.parse(Files.readAllBytes(Path.of(args[0])));
        boolean one = false;
        boolean bytes = false;
        int first = 1;
        for (; first < args.length && args[first].startsWith("--"); first++) {
            switch (args[first]) {
                case "--one-producer": one = true; break;
                case "--bytes": bytes = true; break;
                default: throw new IllegalArgumentException("unknown option " + args[first]);
            }
        }
        System.out.println((one ? "every batch of one producer" : "each batch of a producer of its own")
                + (bytes ? ", mp_rewrite on the fetch's bytes" : ", mp_rewrite_headers_from on its header slots"));
        long previous = -1;
        int previousBatches = 0;
        for (int a = first; a < Math.max(args.length, first + 2); a++) {
            int batches = a < args.length ? Integer.parseInt(args[a]) : (a == first ? 1 : 100);
            long[] perFunction = count(module, batches, one, bytes);
            long total = 0;
            for (long c : perFunction) {
                total += c;
            }
            System.out.printf("%d batch(es): %,d instructions%s%n", batches, total,
                    previous < 0 ? "" : String.format(", %,d a batch more than %d", (total - previous) / Math.max(1, batches - previousBatches), previousBatches));
            print(module, perFunction, 12);
            previous = total;
            previousBatches = batches;
        }
    }

    /**
     * Instructions run by one rewrite of {@code batches} bound batches (with {@code one}, all
     * of one producer; with {@code bytes}, of the fetch's bytes), by function index.
     */
    static long[] count(WasmModule module, int batches, boolean one, boolean bytes) {
        int bodies = module.codeSection().functionBodyCount();
        Map<Instruction, Integer> owner = new IdentityHashMap<>();
        for (int i = 0; i < bodies; i++) {
            for (Instruction ins : module.codeSection().getFunctionBody(i).instructions()) {
                owner.put(ins, i);
            }
        }
        long[] counts = new long[bodies];
        boolean[] on = {false};
        Instance instance = Instance.builder(module)
                .withUnsafeExecutionListener((ins, stack) -> {
                    if (on[0]) {
                        Integer f = owner.get(ins);
                        if (f != null) {
                            counts[f]++;
                        }
                    }
                })
                .build();
        Memory memory = instance.memory();
        instance.export("mp_hash_seed").apply(42);
        int handle = (int) call(instance, "mp_mapper_new", put(instance,
                "{\"topicId\": \"6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c\", \"partition\": 0}".getBytes(StandardCharsets.UTF_8)));
        byte[] source = "east".getBytes(StandardCharsets.UTF_8);
        int sourcePtr = put(instance, source)[0];
        ByteBuffer fetch = fetch(batches, one);
        int fetchLength = fetch.remaining();
        // The fetch's bytes, or its header slots: what the rewrite reads.
        byte[] input;
        if (bytes) {
            input = new byte[fetchLength];
            fetch.get(0, input);
        } else {
            input = slots(fetch, batches);
        }
        int inputPtr = put(instance, input)[0];
        ExportFunction rewrite = instance.export(bytes ? "mp_rewrite" : "mp_rewrite_headers_from");
        int token = (int) instance.export("mp_source").apply(handle, sourcePtr, source.length)[0];
        for (int round = 0; round < 3; round++) {
            memory.write(inputPtr, input);
            on[0] = round == 2;
            long consumed = bytes
                    ? rewrite.apply(handle, sourcePtr, source.length, inputPtr, fetchLength, 1_700_000_000_000L, 0)[0]
                    : rewrite.apply(handle, token, inputPtr, batches, fetchLength, 1_700_000_000_000L, 0)[0];
            on[0] = false;
            if (consumed != fetchLength) {
                throw new IllegalStateException("the rewrite returned " + consumed + " of " + fetchLength);
            }
            if (round == 0) {
                // Bound and confirmed: the steady state the benchmark measures.
                instance.export("mp_confirm").apply(handle);
            }
        }
        return counts;
    }

    private static long call(Instance instance, String export, int[] block) {
        long r = instance.export(export).apply(block[0], block[1])[0];
        if (r < 0) {
            throw new IllegalStateException(export + " returned " + r);
        }
        return r;
    }

    /** {@code bytes} in a block of the module's: its address and length. */
    private static int[] put(Instance instance, byte[] bytes) {
        int p = (int) instance.export("mp_alloc").apply(bytes.length)[0];
        instance.memory().write(p, bytes);
        return new int[] {p, bytes.length};
    }

    private static ByteBuffer fetch(int batches, boolean one) {
        ByteBuffer all = ByteBuffer.allocate(400 * batches);
        for (int i = 0; i < batches; i++) {
            long pid = one ? 1000L : 1000L + i;
            int sequence = one ? i : 0;
            all.put(MemoryRecords.withIdempotentRecords(Compression.NONE, pid, (short) 0, sequence,
                    new SimpleRecord(new byte[200])).buffer());
        }
        return all.flip();
    }

    /** The header slots of {@code fetch}'s {@code batches} batches, as {@code docs/ABI.md}'s gathering loop makes them. */
    private static byte[] slots(ByteBuffer fetch, int batches) {
        ByteBuffer slots = ByteBuffer.allocate(batches * Slots.SLOT_BYTES);
        int pos = 0;
        for (int i = 0; i < batches; i++) {
            int n = Math.min(Slots.WINDOW, fetch.limit() - pos);
            slots.put(i * Slots.SLOT_BYTES, fetch, pos, n);
            slots.putInt(i * Slots.SLOT_BYTES + Slots.SLOT_LEN_OFFSET, n);
            pos += Slots.LOG_OVERHEAD + fetch.getInt(pos + Slots.LENGTH_OFFSET);
        }
        return slots.array();
    }

    private static void print(WasmModule module, long[] counts, int top) {
        int imports = module.importSection().count(ExternalType.FUNCTION);
        NameCustomSection names = module.nameSection();
        Integer[] order = new Integer[counts.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (x, y) -> Long.compare(counts[y], counts[x]));
        for (int k = 0; k < Math.min(top, order.length) && counts[order[k]] > 0; k++) {
            String name = names == null ? null : names.nameOfFunction(order[k] + imports);
            // Rust's symbols without their hash suffix.
            String shown = name == null ? "func " + (order[k] + imports) : name.replaceAll("17h[0-9a-f]{16}E$", "");
            System.out.printf("  %,8d  %s%n", counts[order[k]], shown);
        }
    }
}
