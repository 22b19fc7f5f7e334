package dev.mirrorpid;

import com.dylibso.chicory.compiler.MachineFactoryCompiler;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.wasm.Parser;
import com.dylibso.chicory.wasm.WasmModule;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import dev.mirrorpid.internal.BrokerModule;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Objects;
import java.util.function.Function;

/**
 * The mirrorpid broker module, loaded once: compiled at {@link #load} (to native code by
 * wasmtime, or to JVM bytecode by Chicory), and run in a few instances that every {@link
 * PidMapper} shares. A new or restored mapper is placed in the instance that holds the fewest
 * (a new instance is made only while fewer than {@link Builder#instances} exist): a partition
 * costs what its mapper holds, a few KiB, and becoming its leader compiles, instantiates and
 * reserves nothing. A call locks its mapper's instance, so calls on mappers of different
 * instances run in parallel: use about as many instances as threads call at once (a broker's
 * fetcher threads). An instance whose mappers all closed is retired, its memory freed. A trap,
 * which the module is built never to have, ends its instance and fails that instance's mappers
 * alone ({@link ModuleTrappedException}). Thread-safe.
 *
 * <p>Two runtimes run the same module with the same results ({@link Mode}): wasmtime inside this
 * JVM, through a native library the jar carries for glibc Linux on x86-64 and on arm64 ({@link
 * Mode#NATIVE}, what {@link #load()} picks where it loads), and Chicory, a WebAssembly runtime in
 * pure Java, everywhere else (macOS, Windows, musl). {@link #mode()} names the one in use.
 */
public final class MirrorPid {
    /** Which runtime runs the module, and how. */
    public enum Mode {
        /**
         * wasmtime in this process, through the jar's native library (glibc Linux on x86-64 and on
         * arm64): the module compiled to machine code when loaded, calls crossing through JNI, the
         * module's memory outside the Java heap. The fastest, and the default where it loads; elsewhere
         * {@link MirrorPid#load()} falls back to {@link #COMPILER}. The module's memory accesses are
         * bounds-checked by guard pages and wasmtime's signal handlers, which pass every signal that
         * does not come from the module on to the JVM's own; a JVM that must keep its signal
         * handlers to itself sets the system property {@code mirrorpid.native.checkedMemory} to
         * {@code true} before loading, and the checks are made in the compiled code instead, a
         * little slower.
         */
        NATIVE,
        /** Chicory's interpreter: no compilation, slowest; for environments that forbid it. */
        INTERPRETER,
        /**
         * Chicory, compiled to JVM bytecode when loaded (its run-time compiler; about a second at
         * {@link MirrorPid#load}): pure Java, and the default where {@link #NATIVE} is not
         * available.
         */
        COMPILER,
        /**
         * Chicory, compiled to JVM bytecode when this jar was built (its build-time compiler, its
         * classes in {@code dev.mirrorpid.internal}): nothing to compile at load and no bytecode
         * generated at run time, for a JVM that forbids defining classes; slower than {@link
         * #COMPILER} once warm (its code reaches memory and globals through helper methods;
         * {@code docs/PERFORMANCE.md}). Only for the jar's own module.
         */
        BUILD_TIME;

        /**
         * The fastest that runs here: {@link #NATIVE} where its library loads, else {@link
         * #COMPILER}.
         */
        public static Mode preferred() {
            return Wasmtime.available() ? NATIVE : COMPILER;
        }
    }

    /** The resource the jar carries the module as. */
    static final String RESOURCE = "mirrorpid_broker.wasm";

    private static final SecureRandom RANDOM = new SecureRandom();

    private final WasmModule module;
    private final Mode mode;
    private final Function<Instance, Machine> machines;
    private final Wasmtime.Compiled compiled;
    private final int maxPages;
    /** The instances mappers are placed in, by position; null where none is live. Guarded by this. */
    private final SharedInstance[] pool;

    private MirrorPid(WasmModule module, Mode mode, Function<Instance, Machine> machines,
            Wasmtime.Compiled compiled, Builder b) {
        this.module = module;
        this.mode = mode;
        this.machines = machines;
        this.compiled = compiled;
        this.maxPages = Math.max(1, b.maxMemoryBytes / 65536);
        this.pool = new SharedInstance[b.instances];
    }

    /**
     * The module in this jar, each instance's memory up to 2 GiB, on the fastest runtime that runs
     * here ({@link Mode#preferred()}).
     */
    public static MirrorPid load() {
        return load(Mode.preferred());
    }

    /** The module in this jar, run in {@code mode}. */
    public static MirrorPid load(Mode mode) {
        return builder().mode(mode).build();
    }

    /** A builder, for the mode, the number of instances and a memory cap per instance. */
    public static Builder builder() {
        return new Builder();
    }

    /** The runtime it runs on. */
    public Mode mode() {
        return mode;
    }

    /** A mapper for a new destination partition leader with no state yet. */
    public PidMapper newMapper(MapperConfig config) {
        Objects.requireNonNull(config, "config");
        return placed(Export.MAPPER_NEW, config.toJson().getBytes(StandardCharsets.UTF_8));
    }

    /** A mapper restored from {@link PidMapper#snapshot()} bytes (its config included). */
    public PidMapper restore(byte[] snapshot) {
        Objects.requireNonNull(snapshot, "snapshot");
        return placed(Export.RESTORE, snapshot);
    }

    /** How many module instances hold mappers now (at most {@link Builder#instances}). */
    public synchronized int liveInstances() {
        int n = 0;
        for (SharedInstance s : pool) {
            n += s == null ? 0 : 1;
        }
        return n;
    }

    /** The linear memory of the live instances, in bytes (tests weigh a partition by it). */
    long linearMemoryBytes() {
        SharedInstance[] live;
        synchronized (this) {
            live = pool.clone();
        }
        long n = 0;
        for (SharedInstance s : live) {
            if (s != null) {
                synchronized (s) {
                    n += s.memoryBytes();
                }
            }
        }
        return n;
    }

    /**
     * A mapper made by {@code export} from {@code input} in the instance that holds the fewest.
     * Placed in an instance that another call's trap closed before this mapper was made there,
     * it is placed again (the trapped instance has left the pool); a trap of its own call is
     * thrown, as any other call's.
     */
    private PidMapper placed(Export export, byte[] input) {
        while (true) {
            SharedInstance home = place();
            PidMapper made;
            try {
                made = PidMapper.made(home, export, input);
            } catch (RuntimeException e) {
                released(home);
                throw e;
            }
            if (made != null) {
                return made;
            }
            released(home);
        }
    }

    /** The instance with the fewest mappers (made if its place is empty), counting one more. */
    private synchronized SharedInstance place() {
        int best = 0;
        for (int i = 1; i < pool.length && pool[best] != null; i++) {
            if (pool[i] == null || pool[i].mappers < pool[best].mappers) {
                best = i;
            }
        }
        if (pool[best] == null) {
            pool[best] = new SharedInstance(this, best, instantiate());
        }
        pool[best].mappers++;
        return pool[best];
    }

    /** A mapper of {@code home} closed (or was never made): the last one retires it. */
    void released(SharedInstance home) {
        synchronized (this) {
            if (--home.mappers > 0 || pool[home.index] != home) {
                return;
            }
            pool[home.index] = null;
        }
        synchronized (home) {
            home.retire();
        }
    }

    /** {@code home} trapped: no mapper is placed in it again. */
    synchronized void failed(SharedInstance home) {
        if (pool[home.index] == home) {
            pool[home.index] = null;
        }
    }

    /** A new instance of the module, its hash keys seeded from {@link SecureRandom}. */
    ModuleInstance instantiate() {
        ModuleInstance instance;
        if (compiled != null) {
            instance = compiled.instantiate((int) Math.min((long) maxPages * 65536, Integer.MAX_VALUE));
        } else {
            MemoryLimits declared = module.memorySection().orElseThrow().getMemory(0).limits();
            int pages = Math.max(declared.initialPages(), Math.min(maxPages, declared.maximumPages()));
            // Linear memory in one byte[] (FlatMemory: a load or store is one comparison and one
            // VarHandle access), not Chicory's default ByteBuffer nor its paged ByteArrayMemory.
            Instance.Builder b = Instance.builder(module)
                    .withMemoryLimits(new MemoryLimits(declared.initialPages(), pages))
                    .withMemoryFactory(FlatMemory::new);
            if (machines != null) {
                b.withMachineFactory(machines);
            }
            instance = new ChicoryInstance(b.build());
        }
        int version = instance.call(Export.ABI_VERSION);
        if (version != Abi.VERSION) {
            throw new IllegalStateException("the module speaks ABI " + version + ", this library " + Abi.VERSION);
        }
        long seed;
        synchronized (RANDOM) {
            seed = RANDOM.nextLong();
        }
        instance.call(Export.HASH_SEED, seed);
        return instance;
    }

    /** Builds a {@link MirrorPid}. */
    public static final class Builder {
        private Mode mode = Mode.preferred();
        private int maxMemoryBytes = Integer.MAX_VALUE;
        private int instances = Runtime.getRuntime().availableProcessors();
        private byte[] wasm;

        private Builder() {}

        /** The runtime that runs the module (default {@link Mode#preferred()}). */
        public Builder mode(Mode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * The most linear memory one instance, and so all the mappers placed in it, may use
         * (rounded down to 64 KiB pages; default 2 GiB). A call that would need more fails with
         * {@link Code#OutOfMemory} and changes nothing, and the instance's other mappers keep
         * working. An instance holds the module's 1 MiB reserve and its blocks; each mapper about
         * 4 KiB with ten producers and a few hundred bytes for each further producer ({@code
         * docs/PERFORMANCE.md}): size it for the partitions of one instance.
         */
        public Builder maxMemoryBytes(int bytes) {
            if (bytes < 65536) {
                throw new IllegalArgumentException("maxMemoryBytes " + bytes + " is below one 64 KiB page");
            }
            this.maxMemoryBytes = bytes;
            return this;
        }

        /**
         * How many module instances mappers are spread over (default: the number of processors).
         * Calls on mappers of one instance take turns, calls on different instances run in
         * parallel, so use about as many as threads call at once, as a broker sizes its fetcher
         * threads; more costs each one its own linear memory and, on {@link Mode#NATIVE}, its own
         * address-space reservation.
         */
        public Builder instances(int instances) {
            if (instances < 1) {
                throw new IllegalArgumentException("instances " + instances + " is below 1");
            }
            this.instances = instances;
            return this;
        }

        /** Another build of the module than the jar's (tests, or a pinned release artifact). */
        public Builder module(byte[] wasm) {
            this.wasm = Objects.requireNonNull(wasm, "wasm").clone();
            return this;
        }

        /**
         * Loads the module: compiles it for {@link Mode#NATIVE} or {@link Mode#COMPILER}, parses it
         * for {@link Mode#INTERPRETER}.
         *
         * @throws IllegalStateException {@link Mode#BUILD_TIME} with a module of one's own (only
         *     the jar's module was compiled when the jar was built), or {@link Mode#NATIVE} where
         *     its library does not load (the message says why)
         */
        public MirrorPid build() {
            if (mode == Mode.BUILD_TIME) {
                if (wasm != null) {
                    throw new IllegalStateException(
                            "Mode.BUILD_TIME runs the jar's own module, compiled when the jar was built: "
                                    + "use Mode.COMPILER for another module");
                }
                return new MirrorPid(BrokerModule.load(), mode, BrokerModule::create, null, this);
            }
            byte[] bytes = wasm != null ? wasm : jarModule();
            if (mode == Mode.NATIVE) {
                return new MirrorPid(null, mode, null, new Wasmtime.Compiled(bytes), this);
            }
            WasmModule module = Parser.parse(bytes);
            Function<Instance, Machine> machines = mode == Mode.COMPILER ? MachineFactoryCompiler.compile(module) : null;
            return new MirrorPid(module, mode, machines, null, this);
        }

        private static byte[] jarModule() {
            try (InputStream in = MirrorPid.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException("the jar has no " + RESOURCE + " (scripts/build.sh builds it)");
                }
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
