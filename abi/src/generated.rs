//! The JVM library's `Abi.java`, written from the Rust definitions of the
//! ABI facts it relies on: this crate's version, flag, statuses and output
//! layouts, and the header slot and batch offsets of `mirrorpid::batch`.
//! The library decides nothing about batches with them: it finds entries,
//! copies windows and writes back what the module changed. The JVM
//! benchmarks' `Slots.java` gets the header slot alone, for the gathering
//! their instruction count does without the library.
//!
//! The tests compare each file with what they would write;
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
/// The benchmarks' copy of the header slot.
const SLOTS_PATH: &str = "../jvm/bench/src/main/java/dev/mirrorpid/bench/Slots.java";

/// A group of constants: its Javadoc and each name with its value.
type Group<'a> = (&'a str, &'a [(&'a str, String)]);

/// The header slot's group, in both files.
fn slot_group() -> [(&'static str, String); 4] {
    [
        ("WINDOW", WINDOW.to_string()),
        ("SLOT_LEN_OFFSET", SLOT_LEN_OFFSET.to_string()),
        ("SLOT_CHANGED_OFFSET", SLOT_CHANGED_OFFSET.to_string()),
        ("SLOT_BYTES", SLOT_BYTES.to_string()),
    ]
}

/// The batchLength group, in both files.
fn length_group() -> [(&'static str, String); 2] {
    [
        ("LENGTH_OFFSET", LENGTH_OFFSET.to_string()),
        ("LOG_OVERHEAD", LOG_OVERHEAD.to_string()),
    ]
}

const SLOT_DOC: &str =
    "A header slot: the window, then its length (host's), then the changed flag (module's).";
const LENGTH_DOC: &str =
    "The batch header's batchLength, read to find the next entry while gathering.";

/// A final class of `static final int`s in `package`, `class_doc` its
/// Javadoc's lines; `extra` ends the class.
fn java_class(
    package: &str,
    class: &str,
    class_doc: &str,
    groups: &[Group],
    extra: &str,
) -> String {
    let mut out = format!(
        "// Generated from the Rust definitions by scripts/generate.sh (abi/src/generated.rs);\n\
         // do not edit: a test fails when it differs from what they write.\n\
         package {package};\n\n/**\n"
    );
    for line in class_doc.lines() {
        let _ = writeln!(out, " * {line}");
    }
    let _ = write!(
        out,
        " */\nfinal class {class} {{\n    private {class}() {{}}\n"
    );
    for (doc, consts) in groups {
        let _ = write!(out, "\n    /** {doc} */\n");
        for (name, value) in consts.iter() {
            let _ = writeln!(out, "    static final int {name} = {value};");
        }
    }
    out.push_str(extra);
    out.push_str("}\n");
    out
}

/// The text of `Slots.java`.
fn slots_java() -> String {
    let (slot, length) = (slot_group(), length_group());
    java_class(
        "dev.mirrorpid.bench",
        "Slots",
        "The header slot of {@code mp_rewrite_headers} ({@code docs/ABI.md}), written from its Rust\n\
         definition, for the benchmarks that gather slots themselves.",
        &[(SLOT_DOC, &slot), (LENGTH_DOC, &length)],
        "",
    )
}

/// The text of `Abi.java`.
fn abi_java() -> String {
    let (slot, length) = (slot_group(), length_group());
    let groups: [Group; 9] = [
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
        (SLOT_DOC, &slot),
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
        (LENGTH_DOC, &length),
    ];
    java_class(
        "dev.mirrorpid",
        "Abi",
        "The broker module's ABI facts this library relies on, written from their Rust definitions\n\
         (the crate {@code mirrorpid-abi} and the header slots of {@code mirrorpid::batch}) and\n\
         documented in {@code docs/ABI.md}: the version, flags, return values, the header-slot\n\
         layout of {@code mp_rewrite_headers} and the output info's. Nothing here decides anything\n\
         about batches: the module does.",
        &groups,
        "\n    /** The changed flag's value (1, big-endian) read by a WebAssembly (little-endian) load. */\n    \
         static final int SLOT_CHANGED_LE = Integer.reverseBytes(1);\n",
    )
}

/// Each generated file is what its Rust definitions write.
#[test]
fn the_java_files_are_what_rust_defines() {
    for (path, text) in [(PATH, abi_java()), (SLOTS_PATH, slots_java())] {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        mirrorpid_test_support::generated::write_or_check(
            &file,
            path.trim_start_matches("../"),
            &text,
        );
    }
}
