package dev.mirrorpid;

import dev.mirrorpid.bench.BenchFetch;
import dev.mirrorpid.bench.FetchBench;
import io.github.kawamuray.wasmtime.Engine;
import io.github.kawamuray.wasmtime.Func;
import io.github.kawamuray.wasmtime.Instance;
import io.github.kawamuray.wasmtime.Memory;
import io.github.kawamuray.wasmtime.Store;
import io.github.kawamuray.wasmtime.WasmFunctions;
import io.github.kawamuray.wasmtime.WasmValType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.Uuid;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The same header rewrite as {@code RewriteBench.mirrorpid}, with the module on wasmtime through
 * wasmtime-java's JNI binding instead of Chicory: the other WebAssembly runtime from Maven
 * Central that runs in a stock JDK, measured beside Chicory in one JMH run ({@code
 * scripts/bench-jvm.sh jni}; figures in {@code docs/PERFORMANCE.md}).
 *
 * <p>Not a mode of the library: a benchmark host only, doing what {@link PidMapper#rewrite}
 * does (gather each batch's header window into its slot in linear memory, one {@code
 * mp_rewrite_headers}, the output found through {@code mp_output_info}, the 12 changed bytes
 * written back), so the two differ in the runtime alone. It lives in the library's package for
 * {@link Abi}'s offsets (one definition), and {@link #setup} refuses to measure unless its
 * rewrite is byte-identical to {@link PidMapper}'s on the same fetch.
 */
public class WasmtimeJniBench extends FetchBench {
    private static final Uuid TOPIC = Uuid.fromString("bxw7Kp1OS3-KHC0-T1prfA");
    private static final byte[] SOURCE = "A".getBytes(StandardCharsets.UTF_8);

    private Engine engine;
    private Store<Void> store;
    private io.github.kawamuray.wasmtime.Module module;
    private Instance instance;
    private Memory memory;
    /** Linear memory as a direct buffer; valid while memory does not grow ({@link #close}). */
    private ByteBuffer linear;
    private WasmFunctions.Function8<Integer, Integer, Integer, Integer, Integer, Integer, Long, Integer, Integer> rewriteHeaders;
    private WasmFunctions.Function1<Integer, Integer> pending;
    private int handle;
    private int sourcePtr;
    private int slotsPtr;
    private int info;
    private int[] offsets;

    private BenchFetch built;
    private ByteBuffer fetch;

    @Setup(Level.Trial)
    public void setup() {
        built = BenchFetch.of(batchBytes, batches, false);
        fetch = built.buffer;
        offsets = new int[batches];

        engine = new Engine();
        store = new Store<>(null, engine);
        module = io.github.kawamuray.wasmtime.Module.fromBinary(engine, shippedModule());
        instance = new Instance(store, module, List.of());
        memory = instance.getMemory(store, "memory").orElseThrow();
        if (call("mp_abi_version") != Abi.VERSION) {
            throw new IllegalStateException("the module's ABI is not " + Abi.VERSION);
        }
        Func rewrite = instance.getFunc(store, "mp_rewrite_headers").orElseThrow();
        rewriteHeaders = WasmFunctions.func(store, rewrite, WasmValType.I32, WasmValType.I32, WasmValType.I32,
                WasmValType.I32, WasmValType.I32, WasmValType.I32, WasmValType.I64, WasmValType.I32, WasmValType.I32);
        pending = WasmFunctions.func(store, instance.getFunc(store, "mp_pending").orElseThrow(),
                WasmValType.I32, WasmValType.I32);
        byte[] config = MapperConfig.builder(TOPIC, 0).build().toJson().getBytes(StandardCharsets.UTF_8);
        handle = status(call("mp_mapper_new", put(config), config.length));
        sourcePtr = put(SOURCE);
        slotsPtr = call("mp_alloc", batches * Abi.SLOT_BYTES);
        info = call("mp_output_info");
        // Bind every producer once (the steady state), as RewriteBench does.
        WasmFunctions.Function5<Integer, Integer, Integer, Long, Long, Integer> map = WasmFunctions.func(store,
                instance.getFunc(store, "mp_map").orElseThrow(),
                WasmValType.I32, WasmValType.I32, WasmValType.I32, WasmValType.I64, WasmValType.I64, WasmValType.I32);
        for (int i = 0; i < batches; i++) {
            status(map.call(handle, sourcePtr, SOURCE.length, built.pids[i], 1L));
        }
        status(call("mp_confirm", handle));
        linear = memory.buffer(store).order(ByteOrder.LITTLE_ENDIAN);

        // The same rewrite as the library's, byte for byte, or no measurement.
        ByteBuffer mine = copy(fetch);
        ByteBuffer theirs = copy(fetch);
        rewrite(mine);
        try (PidMapper reference = MirrorPid.load().newMapper(MapperConfig.builder(TOPIC, 0).build())) {
            reference.rewrite("A", theirs, 2);
        }
        if (!mine.equals(theirs) || mine.equals(fetch)) {
            throw new IllegalStateException("wasmtime-java's rewrite differs from the library's");
        }
    }

    /** Fails the trial if linear memory grew while it ran (the direct buffer would be stale). */
    @TearDown(Level.Trial)
    public void close() {
        long size = memory.dataSize(store);
        instance.dispose();
        module.dispose();
        store.dispose();
        engine.dispose();
        if (size != linear.capacity()) {
            throw new IllegalStateException("linear memory grew during the run: " + linear.capacity() + " -> " + size);
        }
    }

    @Benchmark
    public int mirrorpid() {
        built.restore();
        return rewrite(fetch);
    }

    /** One crossing into the module and back with no work in it ({@code mp_pending}). */
    @Benchmark
    public int crossing() {
        return pending.call(handle);
    }

    /** {@link PidMapper#rewrite}'s steps on this runtime; returns the bytes consumed. */
    private int rewrite(ByteBuffer f) {
        int base = f.position();
        int length = f.remaining();
        int count = 0;
        for (int pos = 0; pos + 12 <= length && count < offsets.length; count++) {
            offsets[count] = pos;
            pos += 12 + f.getInt(base + pos + 8);
        }
        for (int i = 0; i < count; i++) {
            int slot = slotsPtr + i * Abi.SLOT_BYTES;
            int n = Math.min(Abi.WINDOW, length - offsets[i]);
            linear.put(slot, f, base + offsets[i], n);
            linear.putInt(slot + Abi.SLOT_LEN_OFFSET, Integer.reverseBytes(n));
        }
        int consumed = status(rewriteHeaders.call(handle, sourcePtr, SOURCE.length, slotsPtr, count, length, 2L, 0));
        for (int i = 0; i < count; i++) {
            int slot = slotsPtr + i * Abi.SLOT_BYTES;
            if (linear.getInt(slot + Abi.SLOT_CHANGED_OFFSET) == Abi.SLOT_CHANGED_LE) {
                int b = base + offsets[i];
                f.putInt(b + Abi.CRC_OFFSET, Integer.reverseBytes(linear.getInt(slot + Abi.CRC_OFFSET)));
                f.putLong(b + Abi.PRODUCER_ID_OFFSET, Long.reverseBytes(linear.getLong(slot + Abi.PRODUCER_ID_OFFSET)));
            }
        }
        // The output (the empty record list of bound producers): its length, as the library reads it.
        int outLen = Integer.reverseBytes(linear.getInt(info + Abi.INFO_LEN_OFFSET));
        if (outLen != 4) {
            throw new IllegalStateException("a rewrite of bound producers returned records");
        }
        return consumed;
    }

    private int call(String export, int... args) {
        Func f = instance.getFunc(store, export).orElseThrow();
        io.github.kawamuray.wasmtime.Val[] vals = new io.github.kawamuray.wasmtime.Val[args.length];
        for (int i = 0; i < args.length; i++) {
            vals[i] = io.github.kawamuray.wasmtime.Val.fromI32(args[i]);
        }
        return f.call(store, vals)[0].i32();
    }

    private int put(byte[] bytes) {
        int p = call("mp_alloc", bytes.length);
        memory.buffer(store).put(p, bytes);
        return p;
    }

    private static int status(int s) {
        if (s < 0) {
            throw new IllegalStateException("the module returned " + s + " (" + Code.ofStatus(s) + ")");
        }
        return s;
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining());
        c.put(b.duplicate()).flip();
        return c;
    }

    private static byte[] shippedModule() {
        try (InputStream in = MirrorPid.class.getResourceAsStream(MirrorPid.RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("no " + MirrorPid.RESOURCE + " in the library's jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
