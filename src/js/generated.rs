//! `src/js/layout.js`, written from the Rust definitions of everything the
//! JS half of the API reads by number: the batch header's offsets, a
//! header slot's layout, a noted outcome's and a write's, the words of a
//! rewrite's numbers, the rewrite options' bits and the fast path's
//! threshold. The builders (`builders.js`) use these names and no bare
//! offset, so a layout changed here reaches JavaScript through this file.
//!
//! The test compares the file with what it would write;
//! `scripts/generate.sh` (which `scripts/build.sh` runs outside CI) writes
//! it, as it writes the JVM library's `Abi.java` (`abi/src/generated.rs`).

use std::fmt::Write;

use super::build::Done;
use super::fast::WINDOWS_FROM;
use super::options::REWRITE_OPTIONS;
use crate::batch::{
    Noted, PidWrite, CRC_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD, PRODUCER_ID_OFFSET, SLOT_BYTES,
    SLOT_LEN_OFFSET, WINDOW,
};

/// The repository path of the generated file.
const PATH: &str = "src/js/layout.js";

/// The text of `layout.js`.
fn layout_js() -> String {
    let group = |doc: &str, consts: &[(&str, usize)]| {
        let mut text = comment(doc);
        for (name, value) in consts {
            let _ = writeln!(text, "const {name} = {value};");
        }
        text
    };
    let mut out = comment(
        "Generated from the Rust definitions by scripts/generate.sh \
         (src/js/generated.rs); do not edit: a test fails when it differs from \
         what they write.",
    );
    out.push('\n');
    out += &group(
        "The v2 batch header's fields the builders read (src/batch/mod.rs).",
        &[
            ("LENGTH_OFFSET", LENGTH_OFFSET),
            ("LOG_OVERHEAD", LOG_OVERHEAD),
            ("CRC_OFFSET", CRC_OFFSET),
            ("PRODUCER_ID_OFFSET", PRODUCER_ID_OFFSET),
        ],
    );
    out += &group(
        "A header slot: the window, then its length (src/batch/headers.rs).",
        &[
            ("WINDOW", WINDOW),
            ("SLOT_LEN_OFFSET", SLOT_LEN_OFFSET),
            ("SLOT_BYTES", SLOT_BYTES),
        ],
    );
    out += &group(
        "From this many bytes a batch on average, the fast path copies header \
         windows, not every byte (src/js/fast.rs).",
        &[("WINDOWS_FROM", WINDOWS_FROM)],
    );
    out += &group(
        "A batch's outcome as the walk notes it (src/batch/changes.rs, Noted): \
         bytes, and its flags' bits.",
        &[
            ("NOTED_BYTES", Noted::BYTES),
            ("NOTED_OFFSET", Noted::AT_OFFSET),
            ("NOTED_SALT", Noted::AT_SALT),
            ("NOTED_FLAGS", Noted::AT_FLAGS),
            ("NOTED_BASE_OFFSET", Noted::AT_BASE_OFFSET),
            ("NOTED_ORIGINAL_PID", Noted::AT_ORIGINAL_PID),
            ("NOTED_MAPPED_PID", Noted::AT_MAPPED_PID),
            ("NOTED_HAS_SALT", usize::from(Noted::HAS_SALT)),
            ("NOTED_TRANSACTIONAL", usize::from(Noted::TRANSACTIONAL)),
            ("NOTED_MARKER_SHIFT", usize::from(Noted::MARKER_SHIFT)),
        ],
    );
    out += &group(
        "A batch's write (src/batch/changes.rs, PidWrite), in 32-bit words.",
        &[
            ("WRITE_WORDS", PidWrite::BYTES / 4),
            ("WRITE_ENTRY", PidWrite::AT_ENTRY / 4),
            ("WRITE_OFFSET", PidWrite::AT_OFFSET / 4),
        ],
    );
    out += &group(
        "The words of a rewrite's numbers (src/js/build.rs, Done).",
        &[
            ("INFO_CONSUMED", Done::CONSUMED),
            ("INFO_SNAPSHOT_REQUIRED", Done::SNAPSHOT_REQUIRED),
            ("INFO_BATCHES", Done::BATCHES),
            ("INFO_NOTED", Done::NOTED),
            ("INFO_RECORDS", Done::RECORDS),
            ("INFO_WRITES", Done::WRITES),
            ("INFO_CHANGED", Done::CHANGED),
        ],
    );
    let bits = REWRITE_OPTIONS
        .iter()
        .map(|(key, bit)| format!("{key}: {bit}"))
        .collect::<Vec<_>>()
        .join(", ");
    let bit = |key: &str| {
        REWRITE_OPTIONS
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, b)| *b)
            .expect("a rewrite option")
    };
    out += &format!(
        "{}const OPTION_BITS = Object.assign(Object.create(null), {{ {bits} }});\n\
         const OUTCOMES = {};\nconst STRICT = {};\n",
        comment(
            "The rewrite options' bits by key (src/js/options.rs, REWRITE_OPTIONS), \
             in an object without a prototype; the one set by default, and the one \
             that needs the records."
        ),
        bit("outcomes"),
        bit("strictCrc")
    );
    out
}

/// `doc` as `//` lines of at most 80 columns.
fn comment(doc: &str) -> String {
    let mut text = String::new();
    let mut line = String::from("//");
    for word in doc.split(' ') {
        if line.len() + 1 + word.len() > 80 {
            text.push_str(&line);
            text.push('\n');
            line = String::from("//");
        }
        line.push(' ');
        line.push_str(word);
    }
    text + &line + "\n"
}

#[test]
fn layout_js_is_what_rust_defines() {
    let text = layout_js();
    // Each name is the builders' to read: none is written for nothing.
    let builders = include_str!("builders.js");
    for name in text.lines().filter_map(|l| l.strip_prefix("const ")) {
        let name = name.split(' ').next().unwrap_or_default();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let read = builders.match_indices(name).any(|(at, _)| {
            !word(builders[..at].chars().next_back())
                && !word(builders[at + name.len()..].chars().next())
        });
        assert!(
            read,
            "{name} is generated, and src/js/builders.js never reads it"
        );
    }
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PATH);
    mirrorpid_test_support::generated::write_or_check(&file, PATH, &text);
}
