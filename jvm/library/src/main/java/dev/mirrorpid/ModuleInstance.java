package dev.mirrorpid;

/**
 * One instance of the broker module, on whichever runtime runs it ({@link MirrorPid.Mode}): the
 * exports a {@link PidMapper} calls and the instance's linear memory. Not thread-safe: its mapper
 * serialises calls.
 */
abstract class ModuleInstance {
    /**
     * Calls {@code export} with up to five arguments, each passed as its parameter's type (i32 or
     * i64); returns its result (every export this library calls returns an i32). A trap is a
     * {@link RuntimeException}.
     */
    abstract int call(Export export, long a0, long a1, long a2, long a3, long a4);

    /**
     * {@code mp_rewrite_headers_from}, the batch path's one call, from the source of token
     * {@code source} ({@code mp_source}): its status.
     */
    abstract int rewriteHeaders(int handle, int source, int slotsPtr, int count, int fetchLen, long nowMs,
            int flags);

    /**
     * The linear memory as it is after the last call (a call may have grown it: ask again after
     * each).
     */
    abstract LinearMemory memory();

    /** Frees the instance; it is never called again. */
    abstract void close();

    final int call(Export export) {
        return call(export, 0, 0, 0, 0, 0);
    }

    final int call(Export export, long a0) {
        return call(export, a0, 0, 0, 0, 0);
    }

    final int call(Export export, long a0, long a1) {
        return call(export, a0, a1, 0, 0, 0);
    }
}
