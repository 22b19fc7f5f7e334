//! `clusters check`: the regions of a fleet's cluster IDs before mirroring
//! is turned on. Exit 1 when two IDs share a region, so CI can gate on it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::json;

use crate::out::{cluster_file, region_hex, table, Output, Result};

#[derive(Subcommand)]
pub enum ClustersCommand {
    /// Each cluster's region, every pair sharing one (exit 1), repeated IDs,
    /// and the fleet's residual risk.
    Check {
        /// A file of cluster IDs, one per line (# starts a comment).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        out: Output,
    },
}

pub fn run(command: ClustersCommand) -> Result<(String, bool)> {
    match command {
        ClustersCommand::Check { file, out } => check(&file, out),
    }
}

fn check(file: &Path, out: Output) -> Result<(String, bool)> {
    let ids = cluster_file(file)?;
    if ids.is_empty() {
        return Err(format!("{}: no cluster IDs", file.display()));
    }
    // A repeated ID is one cluster; say where, since it is often a typo
    // for another.
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut repeats = Vec::new();
    for (line, id) in &ids {
        if let Some(&at) = first.get(id.as_str()) {
            repeats.push((id.as_str(), *line, at));
        } else {
            first.insert(id, *line);
        }
    }
    let plan = mirrorpid::plan::plan(ids.iter().map(|(_, id)| id.as_str())).map_err(|e| {
        let line = ids
            .iter()
            .find(|(_, id)| mirrorpid::SourceCluster::new(id).is_err());
        match line {
            Some((n, _)) => format!("{}: line {n}: {e}", file.display()),
            None => format!("{}: {e}", file.display()),
        }
    })?;
    let shared = !plan.shared_regions.is_empty();
    if out.json {
        let mut doc = json!(plan);
        doc["repeated"] = repeats
            .iter()
            .map(|(id, line, at)| json!({"id": id, "line": line, "firstLine": at}))
            .collect();
        return Ok((format!("{doc}\n"), shared));
    }
    let rows: Vec<Vec<String>> = plan
        .clusters
        .iter()
        .map(|c| vec![c.id.clone(), region_hex(c.region)])
        .collect();
    let mut text = table(&["CLUSTER", "REGION"], &rows);
    for (id, line, at) in &repeats {
        let _ = writeln!(
            text,
            "\nREPEATED ID {id}: line {line} repeats line {at}, counted once"
        );
    }
    if shared {
        for s in &plan.shared_regions {
            let _ = writeln!(
                text,
                "\nSHARED REGION {}: {} (rename one, or keep their producers from meeting by two paths)",
                region_hex(s.region),
                s.clusters.join(", ")
            );
        }
    } else {
        text.push_str("\nNo two clusters share a region at salt 0.\n");
    }
    let _ = writeln!(
        text,
        "Chance that some two of {} random cluster IDs share a region: {:.2e}",
        plan.clusters.len(),
        plan.shared_region_probability
    );
    Ok((text, shared))
}
