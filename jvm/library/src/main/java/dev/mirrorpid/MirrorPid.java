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
import java.security.SecureRandom;
import java.util.Objects;
import java.util.function.Function;

/**
 * The mirrorpid broker module, loaded once: parsed (and, in {@link Mode#COMPILER}, compiled to
 * JVM bytecode) at {@link #load}, then instantiated for each {@link PidMapper}. Each mapper has
 * an instance, and so a linear memory, of its own: a mapper's failure or memory limit never
 * touches another's, and closing a mapper frees its memory. Thread-safe.
 */
public final class MirrorPid {
    /** How Chicory runs the module. */
    public enum Mode {
        /** Chicory's interpreter: no compilation, slowest; for environments that forbid it. */
        INTERPRETER,
        /**
         * Compiled to JVM bytecode when loaded (Chicory's run-time compiler; about a second at
         * {@link MirrorPid#load}): the fastest once warm, and the default.
         */
        COMPILER,
        /**
         * Compiled to JVM bytecode when this jar was built (Chicory's build-time compiler, its
         * classes in {@code dev.mirrorpid.internal}): nothing to compile at load and no bytecode
         * generated at run time, for a JVM that forbids defining classes; slower than {@link
         * #COMPILER} once warm (its code reaches memory and globals through helper methods;
         * {@code docs/PERFORMANCE.md}). Only for the jar's own module.
         */
        BUILD_TIME
    }

    /** The resource the jar carries the module as. */
    static final String RESOURCE = "mirrorpid_broker.wasm";

    private static final SecureRandom RANDOM = new SecureRandom();

    private final WasmModule module;
    private final Mode mode;
    private final Function<Instance, Machine> machines;
    private final int maxPages;

    private MirrorPid(WasmModule module, Mode mode, Function<Instance, Machine> machines, int maxMemoryBytes) {
        this.module = module;
        this.mode = mode;
        this.machines = machines;
        this.maxPages = Math.max(1, maxMemoryBytes / 65536);
    }

    /** The module in this jar, compiled ({@link Mode#COMPILER}), each mapper's memory up to 2 GiB. */
    public static MirrorPid load() {
        return load(Mode.COMPILER);
    }

    /** The module in this jar, run in {@code mode}. */
    public static MirrorPid load(Mode mode) {
        return builder().mode(mode).build();
    }

    /** A builder, for the mode and a memory cap per mapper. */
    public static Builder builder() {
        return new Builder();
    }

    /** The mode it runs in. */
    public Mode mode() {
        return mode;
    }

    /** A mapper for a new destination partition leader with no state yet. */
    public PidMapper newMapper(MapperConfig config) {
        Objects.requireNonNull(config, "config");
        return PidMapper.create(this, config.toJson());
    }

    /** A mapper restored from {@link PidMapper#snapshot()} bytes (its config included). */
    public PidMapper restore(byte[] snapshot) {
        Objects.requireNonNull(snapshot, "snapshot");
        return PidMapper.restore(this, snapshot);
    }

    /** A new instance of the module, its hash keys seeded from {@link SecureRandom}. */
    Instance instantiate() {
        MemoryLimits declared = module.memorySection().orElseThrow().getMemory(0).limits();
        int pages = Math.max(declared.initialPages(), Math.min(maxPages, declared.maximumPages()));
        // Linear memory in one byte[] (FlatMemory: a load or store is one comparison and one
        // VarHandle access), not Chicory's default ByteBuffer nor its paged ByteArrayMemory
        // (docs/PERFORMANCE.md, "On the JVM").
        Instance.Builder b = Instance.builder(module)
                .withMemoryLimits(new MemoryLimits(declared.initialPages(), pages))
                .withMemoryFactory(FlatMemory::new);
        if (machines != null) {
            b.withMachineFactory(machines);
        }
        Instance instance = b.build();
        int version = (int) instance.export("mp_abi_version").apply()[0];
        if (version != Abi.VERSION) {
            throw new IllegalStateException("the module speaks ABI " + version + ", this library " + Abi.VERSION);
        }
        long seed;
        synchronized (RANDOM) {
            seed = RANDOM.nextLong();
        }
        instance.export("mp_hash_seed").apply(seed);
        return instance;
    }

    /** Builds a {@link MirrorPid}. */
    public static final class Builder {
        private Mode mode = Mode.COMPILER;
        private int maxMemoryBytes = Integer.MAX_VALUE;
        private byte[] wasm;

        private Builder() {}

        /** How Chicory runs the module (default {@link Mode#COMPILER}). */
        public Builder mode(Mode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * The most linear memory one mapper may use (rounded down to 64 KiB pages; default
         * 2 GiB). A call that would need more fails with {@link Code#OutOfMemory} and changes
         * nothing.
         */
        public Builder maxMemoryBytes(int bytes) {
            if (bytes < 65536) {
                throw new IllegalArgumentException("maxMemoryBytes " + bytes + " is below one 64 KiB page");
            }
            this.maxMemoryBytes = bytes;
            return this;
        }

        /** Another build of the module than the jar's (tests, or a pinned release artifact). */
        public Builder module(byte[] wasm) {
            this.wasm = Objects.requireNonNull(wasm, "wasm").clone();
            return this;
        }

        /**
         * Parses (and, in {@link Mode#COMPILER}, compiles) the module.
         *
         * @throws IllegalStateException {@link Mode#BUILD_TIME} with a module of one's own: only
         *     the jar's module was compiled when the jar was built
         */
        public MirrorPid build() {
            if (mode == Mode.BUILD_TIME) {
                if (wasm != null) {
                    throw new IllegalStateException(
                            "Mode.BUILD_TIME runs the jar's own module, compiled when the jar was built: "
                                    + "use Mode.COMPILER for another module");
                }
                return new MirrorPid(BrokerModule.load(), mode, BrokerModule::create, maxMemoryBytes);
            }
            WasmModule module;
            if (wasm != null) {
                module = Parser.parse(wasm);
            } else {
                try (InputStream in = MirrorPid.class.getResourceAsStream(RESOURCE)) {
                    if (in == null) {
                        throw new IllegalStateException("the jar has no " + RESOURCE + " (scripts/build.sh builds it)");
                    }
                    module = Parser.parse(in);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            Function<Instance, Machine> machines = mode == Mode.COMPILER ? MachineFactoryCompiler.compile(module) : null;
            return new MirrorPid(module, mode, machines, maxMemoryBytes);
        }
    }
}
