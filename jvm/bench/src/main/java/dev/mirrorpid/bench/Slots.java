// Generated from the Rust definitions by scripts/generate.sh (abi/src/generated.rs);
// do not edit: a test fails when it differs from what they write.
package dev.mirrorpid.bench;

/**
 * The header slot of {@code mp_rewrite_headers} ({@code docs/ABI.md}), written from its Rust
 * definition, for the benchmarks that gather slots themselves.
 */
final class Slots {
    private Slots() {}

    /** A header slot: the window, then its length (host's), then the changed flag (module's). */
    static final int WINDOW = 112;
    static final int SLOT_LEN_OFFSET = 112;
    static final int SLOT_CHANGED_OFFSET = 116;
    static final int SLOT_BYTES = 120;

    /** The batch header's batchLength, read to find the next entry while gathering. */
    static final int LENGTH_OFFSET = 8;
    static final int LOG_OVERHEAD = 12;
}
