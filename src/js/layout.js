// Generated from the Rust definitions by scripts/generate.sh
// (src/js/generated.rs); do not edit: a test fails when it differs from what
// they write.

// The v2 batch header's fields the builders read (src/batch/mod.rs).
const LENGTH_OFFSET = 8;
const LOG_OVERHEAD = 12;
const CRC_OFFSET = 17;
const PRODUCER_ID_OFFSET = 43;
// A header slot: the window, then its length (src/batch/headers.rs).
const WINDOW = 112;
const SLOT_LEN_OFFSET = 112;
const SLOT_BYTES = 120;
// From this many bytes a batch on average, the fast path copies header windows,
// not every byte (src/js/fast.rs).
const WINDOWS_FROM = 8192;
// A batch's outcome as the walk notes it (src/batch/changes.rs, Noted): bytes,
// and its flags' bits.
const NOTED_BYTES = 32;
const NOTED_OFFSET = 0;
const NOTED_SALT = 4;
const NOTED_FLAGS = 5;
const NOTED_BASE_OFFSET = 8;
const NOTED_ORIGINAL_PID = 16;
const NOTED_MAPPED_PID = 24;
const NOTED_HAS_SALT = 1;
const NOTED_TRANSACTIONAL = 2;
const NOTED_MARKER_SHIFT = 2;
// A batch's write (src/batch/changes.rs, PidWrite), in 32-bit words.
const WRITE_WORDS = 5;
const WRITE_ENTRY = 0;
const WRITE_OFFSET = 1;
// The words of a rewrite's numbers (src/js/build.rs, Done).
const INFO_CONSUMED = 0;
const INFO_SNAPSHOT_REQUIRED = 1;
const INFO_BATCHES = 2;
const INFO_NOTED = 3;
const INFO_RECORDS = 4;
const INFO_WRITES = 5;
const INFO_CHANGED = 6;
// The rewrite options' bits by key (src/js/options.rs, REWRITE_OPTIONS), in an
// object without a prototype; the one set by default, and the one that needs
// the records.
const OPTION_BITS = Object.assign(Object.create(null), { strictCrc: 1, complete: 2, outcomes: 4 });
const OUTCOMES = 4;
const STRICT = 1;
