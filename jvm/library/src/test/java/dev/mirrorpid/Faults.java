package dev.mirrorpid;

/**
 * Faults a test injects into a module instance, through the library's own seam ({@link
 * SharedInstance#inject}): the shipped module is built never to trap, so a test that shows what a
 * trap does makes the runtime's call fail as a trap does (a {@link RuntimeException} out of the
 * call). Published in the library's test jar, for the mirror kit's tests.
 */
public final class Faults {
    private Faults() {}

    /**
     * Makes the next call that reaches {@code mapper}'s instance, from any of its mappers, trap:
     * the runtime's call throws, as a WebAssembly trap makes wasmtime's and Chicory's do.
     */
    public static void trapNextCall(PidMapper mapper) {
        SharedInstance home = mapper.home();
        synchronized (home) {
            home.inject(Trapping::new);
        }
    }

    /** Whether {@code a} and {@code b} share one module instance. */
    public static boolean shareAnInstance(PidMapper a, PidMapper b) {
        return a.home() == b.home();
    }

    /** An instance whose every call traps, its memory and close its own. */
    private static final class Trapping extends ModuleInstance {
        private final ModuleInstance real;

        Trapping(ModuleInstance real) {
            this.real = real;
        }

        private static RuntimeException trap() {
            return new IllegalStateException("wasm trap: unreachable (injected by a test)");
        }

        @Override
        int call(Export export, long a0, long a1, long a2, long a3, long a4) {
            throw trap();
        }

        @Override
        int rewriteHeaders(int handle, int source, int slotsPtr, int count, int fetchLen, long nowMs, int flags) {
            throw trap();
        }

        @Override
        LinearMemory memory() {
            return real.memory();
        }

        @Override
        void close() {
            real.close();
        }
    }
}
