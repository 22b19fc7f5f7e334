//! `pid decode` and `pid map`: a PID's parts, and F v1 by hand.

use std::path::Path;

use clap::Subcommand;
use mirrorpid::pid::{PidSpace, Via, MAX_PROBES};
use serde_json::json;

use crate::out::{cluster_file, lines, or_dash, parse_pid, region_hex, table, Output, Result};

#[derive(Subcommand)]
pub enum PidCommand {
    /// Space, region and pid40 of each PID, and with --clusters whose region it is.
    Decode {
        /// PIDs, decimal or 0x-hex.
        #[arg(required = true, value_name = "PID", allow_negative_numbers = true)]
        pids: Vec<String>,
        /// A file of known cluster IDs, one per line.
        #[arg(long, value_name = "FILE")]
        clusters: Option<std::path::PathBuf>,
        #[command(flatten)]
        out: Output,
    },
    /// The mapped PID of a producer of a source cluster (F v1).
    Map {
        /// The direct source cluster's ID.
        #[arg(long, value_name = "CLUSTER")]
        source: String,
        /// The PID as it arrives from the source.
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        pid: String,
        /// The salt (0 to 63).
        #[arg(long, value_name = "S", default_value_t = 0)]
        salt: u8,
        #[command(flatten)]
        out: Output,
    },
}

pub fn run(command: PidCommand) -> Result<String> {
    match command {
        PidCommand::Decode {
            pids,
            clusters,
            out,
        } => decode(&pids, clusters.as_deref(), out),
        PidCommand::Map {
            source,
            pid,
            salt,
            out,
        } => map(&source, &pid, salt, out),
    }
}

fn decode(pids: &[String], clusters: Option<&Path>, out: Output) -> Result<String> {
    let known: Vec<String> = match clusters {
        Some(file) => cluster_file(file)?.into_iter().map(|(_, c)| c).collect(),
        None => Vec::new(),
    };
    let mut rows = Vec::new();
    let mut docs = Vec::new();
    for text in pids {
        let p = parse_pid(text)?;
        let info = mirrorpid::decode_pid(p);
        let found = info.region.map_or_else(Vec::new, |r| {
            mirrorpid::pid::owners(r, known.iter().map(String::as_str))
        });
        let space = match info.space {
            PidSpace::NoProducer => "no producer",
            PidSpace::Local => "local",
            PidSpace::OutOfRange => "out of range",
            PidSpace::Mirrored => "mirrored",
        };
        let origin = found
            .iter()
            .map(|o| match o.via {
                Via::Local => format!("{} (salt {})", o.cluster, o.salt),
                Via::Mirrored => format!("{} (re-salted {})", o.cluster, o.salt),
            })
            .collect::<Vec<_>>()
            .join(", ");
        rows.push(vec![
            p.to_string(),
            format!("{p:#018x}"),
            space.into(),
            or_dash(info.region.map(region_hex)),
            or_dash(info.pid40),
            if clusters.is_some() && info.region.is_some() && origin.is_empty() {
                "unknown".into()
            } else {
                origin
            },
        ]);
        docs.push(json!({
            "pid": p.to_string(), "space": info.space, "region": info.region,
            "pid40": info.pid40.map(|v| v.to_string()),
            "origins": found,
        }));
    }
    Ok(if out.json {
        lines(docs)
    } else {
        table(&["PID", "HEX", "SPACE", "REGION", "PID40", "ORIGIN"], &rows)
    })
}

fn map(source: &str, pid: &str, salt: u8, out: Output) -> Result<String> {
    if salt >= MAX_PROBES {
        return Err(format!("salt {salt} is outside 0 to {}", MAX_PROBES - 1));
    }
    mirrorpid::SourceCluster::new(source).map_err(|e| e.to_string())?;
    let p = parse_pid(pid)?;
    let mapped = mirrorpid::map_pid(source, p, u64::from(salt)).map_err(|e| e.to_string())?;
    let info = mirrorpid::decode_pid(mapped);
    Ok(if out.json {
        lines(vec![
            json!({"source": source, "pid": p.to_string(), "salt": salt, "mapped": mapped.to_string(),
            "hex": format!("{mapped:#018x}"), "region": info.region, "pid40": info.pid40.map(|v| v.to_string())}),
        ])
    } else {
        table(
            &["SOURCE", "PID", "SALT", "MAPPED", "HEX", "REGION", "PID40"],
            &[vec![
                source.into(),
                p.to_string(),
                salt.to_string(),
                mapped.to_string(),
                format!("{mapped:#018x}"),
                or_dash(info.region.map(region_hex)),
                or_dash(info.pid40),
            ]],
        )
    })
}
