package dev.mirrorpid;

import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * The native runtime: wasmtime inside this JVM, through the JNI shim the jar carries for the
 * platforms it was built for ({@code jvm/native}), as {@code kafka-clients} carries zstd-jni. The
 * library is extracted to a temporary file and loaded once; where the jar has none for this
 * platform, or it cannot be loaded, {@link #available()} says so and {@link MirrorPid} runs the
 * module on Chicory.
 *
 * <p>Every {@code long} here is the address of a compiled module or an instance made by the shim,
 * freed once ({@link #freeModule}, {@link #free}) and never used after.
 */
final class Wasmtime {
    private Wasmtime() {}

    /**
     * Where the jar carries the library for this platform, or {@code null} for none: glibc Linux
     * on x86-64 and on arm64 (Graviton, Ampere). Elsewhere (macOS, Windows, musl) the module runs
     * on Chicory.
     */
    static String resource() {
        return resource(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    /** {@link #resource()} for the JVM's {@code os.name} and {@code os.arch}. */
    static String resource(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        if (!os.startsWith("linux")) {
            return null;
        }
        return switch (arch) {
            case "amd64", "x86_64" -> "native/linux-x86_64/libmirrorpid_jni.so";
            case "aarch64", "arm64" -> "native/linux-aarch64/libmirrorpid_jni.so";
            default -> null;
        };
    }

    /** Why the library did not load, or {@code null} once it has. */
    private static final String UNAVAILABLE = load();

    private static String load() {
        String resource = resource();
        if (resource == null) {
            return "no native library for " + System.getProperty("os.name") + " " + System.getProperty("os.arch");
        }
        try (InputStream in = Wasmtime.class.getResourceAsStream(resource)) {
            if (in == null) {
                return "the jar has no " + resource;
            }
            Path file = Files.createTempFile("mirrorpid-jni", ".so");
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            System.load(file.toAbsolutePath().toString());
            return null;
        } catch (IOException e) {
            return "could not extract " + resource + ": " + e;
        } catch (UnsatisfiedLinkError e) {
            return "could not load " + resource + ": " + e.getMessage();
        }
    }

    /** Whether the native runtime runs here. */
    static boolean available() {
        return UNAVAILABLE == null;
    }

    /** Why it does not, or {@code null} when it does. */
    static String unavailableBecause() {
        return UNAVAILABLE;
    }

    /**
     * The module in {@code wasm}, compiled, its memory accesses bounds-checked by guard pages and
     * wasmtime's signal handlers (which pass every other signal on to the JVM's), or with {@code
     * checked} by a check in the code and no handler; a {@link RuntimeException} if wasmtime
     * refuses it.
     */
    static native long compile(byte[] wasm, boolean checked);

    static native void freeModule(long module);

    /** A new instance, its memory capped at {@code maxMemoryBytes}. */
    static native long instantiate(long module, int maxMemoryBytes);

    static native void free(long instance);

    /** A direct buffer over the instance's whole linear memory as it is now. */
    static native ByteBuffer memory(long instance);

    /**
     * Export {@code export} (an {@link Export} ordinal) called with up to five arguments: its
     * result in the low 32 bits, the memory's size in 64 KiB pages in the high ones.
     */
    static native long call(long instance, int export, long a0, long a1, long a2, long a3, long a4);

    /**
     * {@code mp_rewrite_headers_from}: its status in the low 32 bits, the memory's size in 64 KiB
     * pages in the high ones.
     */
    static native long rewriteHeaders(long instance, int handle, int source, int slotsPtr, int count, int fetchLen,
            long nowMs, int flags);

    /** {@code mp_pending}, typed: the fixed cost of a call. */
    static native int pending(long instance, int handle);

    /**
     * The system property that, set to {@code true}, keeps wasmtime's signal handlers out of the
     * JVM: bounds are then checked in the module's compiled code, a little slower.
     */
    static final String CHECKED_PROPERTY = "mirrorpid.native.checkedMemory";

    /** Frees what the native runtime holds for an object once it is unreachable. */
    static final Cleaner CLEANER = Cleaner.create();

    /** A compiled module, freed once unreachable; instances keep what they need of it. */
    static final class Compiled {
        private final long module;

        Compiled(byte[] wasm) {
            if (!available()) {
                throw new IllegalStateException("the native runtime is not available: " + UNAVAILABLE);
            }
            long m = compile(wasm, Boolean.getBoolean(CHECKED_PROPERTY));
            this.module = m;
            CLEANER.register(this, () -> freeModule(m));
        }

        WasmtimeInstance instantiate(int maxMemoryBytes) {
            return new WasmtimeInstance(Wasmtime.instantiate(module, maxMemoryBytes));
        }
    }
}
