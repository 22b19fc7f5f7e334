//! What every subcommand shares: reading and writing files, PIDs and
//! cluster files as text, and the two output forms (aligned tables for
//! people, one JSON document per line for scripts).

use std::fmt::Write as _;
use std::path::Path;

use clap::Args;
use serde_json::Value;

/// An error as the command line prints it: one line, naming the file and,
/// where there is one, the byte offset in it.
pub type Result<T> = std::result::Result<T, String>;

/// The `--json` flag every subcommand takes.
#[derive(Args, Clone, Copy)]
pub struct Output {
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// A file as UTF-8 text; the error names the first line that is not.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..bad].iter().filter(|&&b| b == b'\n').count();
        format!("{}: line {line}: not UTF-8", path.display())
    })
}

/// A PID as an operator types it: decimal (negative too) or `0x` hex of
/// its 64 bits.
pub fn parse_pid(text: &str) -> Result<i64> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).map(|v| v as i64).ok(),
        None => t.parse::<i64>().ok(),
    };
    parsed.ok_or_else(|| format!("{text:?} is not a PID (a 64-bit integer, decimal or 0x-hex)"))
}

/// A cluster file: IDs one per line, blank lines and `#` comments
/// skipped, with the 1-based line of each.
pub fn cluster_file(path: &Path) -> Result<Vec<(usize, String)>> {
    let text = read_text(path)?;
    Ok(text
        .lines()
        .enumerate()
        .flat_map(|(i, line)| {
            mirrorpid::plan::cluster_ids(line).map(move |id| (i + 1, id.to_owned()))
        })
        .collect())
}

/// Left-aligned columns under a header line.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: Vec<&str>| {
        let text: Vec<String> = cells
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", text.join("  ").trim_end());
    };
    line(&mut out, header.to_vec());
    for row in rows {
        line(&mut out, row.iter().map(String::as_str).collect());
    }
    out
}

/// One JSON document per line.
pub fn lines(docs: Vec<Value>) -> String {
    docs.iter().map(|d| format!("{d}\n")).collect()
}

pub fn region_hex(region: u32) -> String {
    format!("0x{region:06x}")
}

/// `-` for what a PID does not have (a region, a pid40).
pub fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

/// Refuses to write `output` over `input`: a tool that reads one file and
/// writes another must not destroy what it reads.
pub fn refuse_same_file(input: &Path, output: &Path) -> Result<()> {
    if same_file(input, output) {
        return Err(format!(
            "{} is both the input and the output; write to another file",
            output.display()
        ));
    }
    Ok(())
}

/// Whether two paths name one file (through links too).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
