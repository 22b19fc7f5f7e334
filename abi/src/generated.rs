//! The JVM library's `Abi.java`, written from the Rust definitions of the
//! ABI facts it relies on: this crate's version, flag, statuses and output
//! layouts, and the header slot and batch offsets of `mirrorpid::batch`.
//! The library decides nothing about batches with them: it finds entries,
//! copies windows and writes back what the module changed.
//!
//! The test compares the file with what it would write;
//! `scripts/generate.sh` (which `scripts/build.sh` runs outside CI) writes
//! it, as it writes the JS API's `src/js/layout.js`.

use std::fmt::Write;

use mirrorpid::batch::{
    ATTRIBUTES_OFFSET, CRC_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD, PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET, SLOT_BYTES, SLOT_CHANGED_OFFSET, SLOT_LEN_OFFSET, WINDOW,
};

use crate::{
    OutputInfo, ABI_VERSION, EMPTY_RECORDS, FLAG_COMPLETE, LOAD_BOUND, LOAD_BOUND_EVICTING,
    LOAD_DELETED, LOAD_SKIPPED, LOAD_UNDECLARED, MAP_NOT_A_PRODUCER,
};

/// The repository path of the generated file, from this crate.
const PATH: &str = "../jvm/library/src/main/java/dev/mirrorpid/Abi.java";

/// The text of `Abi.java`.
fn abi_java() -> String {
    let groups: [(&str, &[(&str, String)]); 9] = [
        (
            "What {@code mp_abi_version} returns for the module this library speaks to.",
            &[("VERSION", ABI_VERSION.to_string())],
        ),
        (
            "{@code mp_rewrite} flag: the buffer must end on a batch boundary.",
            &[("FLAG_COMPLETE", FLAG_COMPLETE.to_string())],
        ),
        (
            "{@code mp_load_record}: skipped, bound, deleted, bound evicting; plus the undeclared bit.",
            &[
                ("LOAD_SKIPPED", LOAD_SKIPPED.to_string()),
                ("LOAD_BOUND", LOAD_BOUND.to_string()),
                ("LOAD_DELETED", LOAD_DELETED.to_string()),
                ("LOAD_BOUND_EVICTING", LOAD_BOUND_EVICTING.to_string()),
                ("LOAD_UNDECLARED", LOAD_UNDECLARED.to_string()),
            ],
        ),
        (
            "{@code mp_output_info}: the output's pointer, its length, the snapshot flag (big-endian).",
            &[
                ("INFO_PTR_OFFSET", OutputInfo::PTR_OFFSET.to_string()),
                ("INFO_LEN_OFFSET", OutputInfo::LEN_OFFSET.to_string()),
                ("INFO_FLAG_OFFSET", OutputInfo::FLAG_OFFSET.to_string()),
                ("INFO_BYTES", OutputInfo::BYTES.to_string()),
            ],
        ),
        (
            "The record-list layout of no records: a count of 0.",
            &[("EMPTY_RECORDS_BYTES", EMPTY_RECORDS.len().to_string())],
        ),
        (
            "{@code mp_map}: the PID is no producer's (below 0).",
            &[("MAP_NOT_A_PRODUCER", MAP_NOT_A_PRODUCER.to_string())],
        ),
        (
            "A header slot: the window, then its length (host's), then the changed flag (module's).",
            &[
                ("WINDOW", WINDOW.to_string()),
                ("SLOT_LEN_OFFSET", SLOT_LEN_OFFSET.to_string()),
                ("SLOT_CHANGED_OFFSET", SLOT_CHANGED_OFFSET.to_string()),
                ("SLOT_BYTES", SLOT_BYTES.to_string()),
            ],
        ),
        (
            "What a changed slot gives back: the CRC and the producer ID, at these batch offsets.",
            &[
                ("CRC_OFFSET", CRC_OFFSET.to_string()),
                ("CRC_BYTES", (ATTRIBUTES_OFFSET - CRC_OFFSET).to_string()),
                ("PRODUCER_ID_OFFSET", PRODUCER_ID_OFFSET.to_string()),
                (
                    "PRODUCER_ID_BYTES",
                    (PRODUCER_EPOCH_OFFSET - PRODUCER_ID_OFFSET).to_string(),
                ),
            ],
        ),
        (
            "The batch header's batchLength, read to find the next entry while gathering.",
            &[
                ("LENGTH_OFFSET", LENGTH_OFFSET.to_string()),
                ("LOG_OVERHEAD", LOG_OVERHEAD.to_string()),
            ],
        ),
    ];
    let mut out = String::from(
        "// Generated from the Rust definitions by scripts/generate.sh (abi/src/generated.rs);\n\
         // do not edit: a test fails when it differs from what they write.\n\
         package dev.mirrorpid;\n\n\
         /**\n \
         * The broker module's ABI facts this library relies on, written from their Rust definitions\n \
         * (the crate {@code mirrorpid-abi} and the header slots of {@code mirrorpid::batch}) and\n \
         * documented in {@code docs/ABI.md}: the version, flags, return values, the header-slot\n \
         * layout of {@code mp_rewrite_headers} and the output info's. Nothing here decides anything\n \
         * about batches: the module does.\n \
         */\n\
         final class Abi {\n    private Abi() {}\n",
    );
    for (doc, consts) in groups {
        let _ = write!(out, "\n    /** {doc} */\n");
        for (name, value) in consts {
            let _ = writeln!(out, "    static final int {name} = {value};");
        }
    }
    out.push_str(
        "\n    /** The changed flag's value (1, big-endian) read by a WebAssembly (little-endian) load. */\n    \
         static final int SLOT_CHANGED_LE = Integer.reverseBytes(1);\n}\n",
    );
    out
}

#[test]
fn abi_java_is_what_rust_defines() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PATH);
    mirrorpid_test_support::generated::write_or_check(
        &file,
        PATH.trim_start_matches("../"),
        &abi_java(),
    );
}
