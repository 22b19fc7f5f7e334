//! `simulate`: a playground scenario run under every strategy; exit 1 if
//! mirrorpid leaves any corruption or refusal, so CI can gate a topology.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use crate::out::{read_text, table, Output, Result};

#[derive(Args)]
pub struct SimulateArgs {
    /// A scenario (the playground's JSON).
    #[arg(value_name = "SCENARIO.json")]
    scenario: PathBuf,
    #[command(flatten)]
    out: Output,
}

/// A table of counts per strategy: one row per `(key, label)` of `kinds`,
/// read from `counts` as the report serialises it.
fn per_strategy(
    title: &str,
    kinds: &[(&str, &str)],
    counts: std::result::Result<serde_json::Value, serde_json::Error>,
) -> Result<String> {
    let counts = counts.map_err(|e| e.to_string())?;
    let rows: Vec<Vec<String>> = kinds
        .iter()
        .map(|(key, label)| {
            let mut row = vec![(*label).to_owned()];
            row.extend(["verbatim", "kip", "mirrorpid"].map(|s| counts[s][key].to_string()));
            row
        })
        .collect();
    Ok(table(&[title, "VERBATIM", "-(PID+2)", "MIRRORPID"], &rows))
}

pub fn run(args: &SimulateArgs) -> Result<(String, bool)> {
    let text = read_text(&args.scenario)?;
    let report = mirrorpid::sim::simulate_json(&text)
        .map_err(|e| format!("{}: {e}", args.scenario.display()))?;
    let corrupt = report.totals.mirrorpid.total() > 0 || report.refused.mirrorpid.total() > 0;
    if args.out.json {
        let doc = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        return Ok((format!("{doc}\n"), corrupt));
    }
    let mut out = String::new();
    let name = if report.name.is_empty() {
        "scenario"
    } else {
        &report.name
    };
    let _ = writeln!(out, "{name}\n");
    // The report's own serialised counts (with their total), by kind.
    let kinds = [
        ("sharedPids", "PIDs shared by different producers"),
        ("wrongSequenceAccepted", "wrong sequence accepted"),
        ("lowerEpochAccepted", "lower epoch accepted"),
        (
            "foreignMarker",
            "COMMIT/ABORT closing another's transaction",
        ),
        ("psmBypass", "batches bypassing producer state"),
        ("lostAsDuplicate", "local writes taken for retries, lost"),
        ("writtenTwice", "copies by a second path written again"),
        ("total", "total"),
    ];
    out.push_str(&per_strategy(
        "SILENT CORRUPTION",
        &kinds,
        serde_json::to_value(&report.totals),
    )?);
    let refusals = [
        ("outOfOrderSequence", "OutOfOrderSequenceException"),
        ("invalidProducerEpoch", "InvalidProducerEpochException"),
        ("invalidTxnState", "InvalidTxnStateException (stall)"),
        ("total", "total"),
    ];
    out.push('\n');
    out.push_str(&per_strategy(
        "REFUSED BY KAFKA (LOUD)",
        &refusals,
        serde_json::to_value(&report.refused),
    )?);
    let _ = writeln!(
        out,
        "\n{}",
        if corrupt {
            "mirrorpid leaves corruption or refused appends in this topology (exit 1)"
        } else {
            "mirrorpid: no corruption, nothing refused"
        }
    );
    Ok((out, corrupt))
}
