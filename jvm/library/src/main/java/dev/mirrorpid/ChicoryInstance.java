package dev.mirrorpid;

import com.dylibso.chicory.runtime.ExportFunction;
import com.dylibso.chicory.runtime.Instance;

/** A {@link ModuleInstance} on Chicory, in one of its modes; its memory a {@link FlatMemory}. */
final class ChicoryInstance extends ModuleInstance {
    private final Instance instance;
    private final FlatMemory memory;
    private final ExportFunction[] exports = new ExportFunction[Export.values().length];
    private final ExportFunction rewriteHeaders;

    ChicoryInstance(Instance instance) {
        this.instance = instance;
        this.memory = (FlatMemory) instance.memory();
        this.rewriteHeaders = export(Export.REWRITE_HEADERS_FROM);
    }

    private ExportFunction export(Export export) {
        ExportFunction f = exports[export.ordinal()];
        if (f == null) {
            f = instance.export(export.wasmName);
            exports[export.ordinal()] = f;
        }
        return f;
    }

    @Override
    int call(Export export, long a0, long a1, long a2, long a3, long a4) {
        ExportFunction f = export(export);
        long[] args;
        switch (export.params) {
            case 0: args = new long[0]; break;
            case 1: args = new long[] {a0}; break;
            case 2: args = new long[] {a0, a1}; break;
            default: args = java.util.Arrays.copyOf(new long[] {a0, a1, a2, a3, a4}, export.params); break;
        }
        long[] out = f.apply(args);
        return out.length == 0 ? 0 : (int) out[0];
    }

    @Override
    int rewriteHeaders(int handle, int source, int slotsPtr, int count, int fetchLen, long nowMs, int flags) {
        return (int) rewriteHeaders.apply(handle, source, slotsPtr, count, fetchLen, nowMs, flags)[0];
    }

    @Override
    LinearMemory memory() {
        return memory;
    }

    @Override
    void close() {
        // Garbage, once the mapper lets go of it.
    }
}
