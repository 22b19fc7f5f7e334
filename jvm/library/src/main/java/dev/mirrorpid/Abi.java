// Generated from the Rust definitions by scripts/generate.sh (abi/src/generated.rs);
// do not edit: a test fails when it differs from what they write.
package dev.mirrorpid;

/**
 * The broker module's ABI facts this library relies on, written from their Rust definitions
 * (the crate {@code mirrorpid-abi} and the header slots of {@code mirrorpid::batch}) and
 * documented in {@code docs/ABI.md}: the version, flags, return values, the header-slot
 * layout of {@code mp_rewrite_headers} and the output info's. Nothing here decides anything
 * about batches: the module does.
 */
final class Abi {
    private Abi() {}

    /** What {@code mp_abi_version} returns for the module this library speaks to. */
    static final int VERSION = 5;

    /** {@code mp_rewrite} flag: the buffer must end on a batch boundary. */
    static final int FLAG_COMPLETE = 2;

    /** {@code mp_load_record}: skipped, bound, deleted, bound evicting; plus the undeclared bit. */
    static final int LOAD_SKIPPED = 0;
    static final int LOAD_BOUND = 1;
    static final int LOAD_DELETED = 2;
    static final int LOAD_BOUND_EVICTING = 3;
    static final int LOAD_UNDECLARED = 4;

    /** {@code mp_output_info}: the output's pointer, its length, the snapshot flag (big-endian). */
    static final int INFO_PTR_OFFSET = 0;
    static final int INFO_LEN_OFFSET = 4;
    static final int INFO_FLAG_OFFSET = 8;
    static final int INFO_BYTES = 12;

    /** The record-list layout of no records: a count of 0. */
    static final int EMPTY_RECORDS_BYTES = 4;

    /** {@code mp_map}: the PID is no producer's (below 0). */
    static final int MAP_NOT_A_PRODUCER = 255;

    /** A header slot: the window, then its length (host's), then the changed flag (module's). */
    static final int WINDOW = 112;
    static final int SLOT_LEN_OFFSET = 112;
    static final int SLOT_CHANGED_OFFSET = 116;
    static final int SLOT_BYTES = 120;

    /** What a changed slot gives back: the CRC and the producer ID, at these batch offsets. */
    static final int CRC_OFFSET = 17;
    static final int CRC_BYTES = 4;
    static final int PRODUCER_ID_OFFSET = 43;
    static final int PRODUCER_ID_BYTES = 8;

    /** The batch header's batchLength, read to find the next entry while gathering. */
    static final int LENGTH_OFFSET = 8;
    static final int LOG_OVERHEAD = 12;

    /** The changed flag's value (1, big-endian) read by a WebAssembly (little-endian) load. */
    static final int SLOT_CHANGED_LE = Integer.reverseBytes(1);
}
