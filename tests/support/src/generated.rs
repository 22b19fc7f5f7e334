//! The files generated from Rust definitions (`scripts/generate.sh`): each
//! generator's test compares its file with what it would write, or writes
//! it when `MIRRORPID_WRITE_GENERATED` is set.

use std::path::Path;

/// Writes `text` to `file` (named `name` in messages) when
/// `MIRRORPID_WRITE_GENERATED` is set; otherwise fails unless the file
/// holds exactly `text`.
pub fn write_or_check(file: &Path, name: &str, text: &str) {
    if std::env::var_os("MIRRORPID_WRITE_GENERATED").is_some() {
        std::fs::write(file, text).unwrap_or_else(|e| panic!("{name} is not written: {e}"));
        return;
    }
    let held = std::fs::read_to_string(file).unwrap_or_default();
    assert!(
        held == text,
        "{name} differs from what the Rust definitions write: run scripts/generate.sh"
    );
}
