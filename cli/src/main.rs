//! `mirrorpid`: the operator's command line, next to Kafka's own tools.
//! Human tables by default, `--json` for scripts; errors are one line on
//! stderr and a non-zero exit.

mod segment;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use mirrorpid::batch::{BatchBuilder, RecordSpec};
use mirrorpid::pid::{self, Origin, PidSpace, MAX_PROBES};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions, StateRecord, TopicId};
use serde_json::{json, Value};

/// Producer IDs for Kafka cross-cluster mirroring, for operators.
#[derive(Parser)]
#[command(name = "mirrorpid", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode or compute producer IDs.
    #[command(subcommand)]
    Pid(PidCommand),
    /// Check a fleet's cluster IDs before turning mirroring on.
    #[command(subcommand)]
    Clusters(ClustersCommand),
    /// Read `__mirror_state` log segment files.
    #[command(subcommand)]
    State(StateCommand),
    /// Read mirrorpid snapshots.
    #[command(subcommand)]
    Snapshot(SnapshotCommand),
    /// Rewrite every batch of a segment file offline, as a leader would.
    Rewrite(RewriteArgs),
    /// Run a simulator scenario; exit 1 if mirrorpid leaves any corruption.
    Simulate(SimulateArgs),
}

#[derive(Subcommand)]
enum PidCommand {
    /// Space, region and pid40 of each PID, and with --clusters whose region it is.
    Decode {
        /// PIDs, decimal or 0x-hex.
        #[arg(required = true, value_name = "PID", allow_negative_numbers = true)]
        pids: Vec<String>,
        /// A file of known cluster IDs, one per line.
        #[arg(long, value_name = "FILE")]
        clusters: Option<PathBuf>,
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

#[derive(Subcommand)]
enum ClustersCommand {
    /// Each cluster's region, every pair sharing one, and the fleet's residual risk.
    Check {
        /// A file of cluster IDs, one per line (# starts a comment).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        out: Output,
    },
}

#[derive(Subcommand)]
enum StateCommand {
    /// Every record of `__mirror_state` segment files (any compression).
    Dump {
        /// Segment files (`00000000000000000000.log`, …), in log order.
        #[arg(required = true, value_name = "SEGMENT.log")]
        files: Vec<PathBuf>,
        /// Show what a new leader would load: the last record per key,
        /// tombstones applied, per (TopicId, Partition).
        #[arg(long)]
        compact: bool,
        #[command(flatten)]
        out: Output,
    },
}

#[derive(Subcommand)]
enum SnapshotCommand {
    /// Header, config, counts and bindings of a snapshot file.
    Inspect {
        /// The snapshot file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        out: Output,
    },
}

#[derive(Args)]
struct RewriteArgs {
    /// The direct source cluster the segment was mirrored from.
    #[arg(long, value_name = "CLUSTER")]
    source: String,
    /// The destination topic's ID (base64 or hex).
    #[arg(long, value_name = "ID")]
    topic_id: String,
    /// The destination partition.
    #[arg(long, value_name = "P")]
    partition: i32,
    /// Where to write the `__mirror_state` records (a segment file);
    /// default: OUT.log with `.mirror_state.log` appended.
    #[arg(long, value_name = "FILE")]
    records: Option<PathBuf>,
    /// Verify each batch's CRC first.
    #[arg(long)]
    strict_crc: bool,
    /// The segment to read.
    #[arg(value_name = "IN.log")]
    input: PathBuf,
    /// The rewritten segment to write.
    #[arg(value_name = "OUT.log")]
    output: PathBuf,
}

#[derive(Args)]
struct SimulateArgs {
    /// A scenario (the playground's JSON).
    #[arg(value_name = "SCENARIO.json")]
    scenario: PathBuf,
    #[command(flatten)]
    out: Output,
}

#[derive(Args, Clone, Copy)]
struct Output {
    /// JSON instead of a table.
    #[arg(long)]
    json: bool,
}

type Result<T> = std::result::Result<T, String>;

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn parse_pid(text: &str) -> Result<i64> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).map(|v| v as i64).ok(),
        None => t.parse::<i64>().ok(),
    };
    parsed.ok_or_else(|| format!("{text:?} is not a PID (a 64-bit integer, decimal or 0x-hex)"))
}

/// Cluster IDs from a file: one per line, blank lines and `#` comments skipped.
fn cluster_file(path: &Path) -> Result<Vec<String>> {
    let bytes = read(path)?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", path.display()))?;
    Ok(mirrorpid::plan::cluster_ids(&text)
        .map(str::to_owned)
        .collect())
}

/// Left-aligned columns with a header line.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
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

fn region_hex(region: u32) -> String {
    format!("0x{region:06x}")
}

fn pid_decode(pids: &[String], clusters: Option<&Path>, out: Output) -> Result<String> {
    // Region -> (cluster, salt, how) for every known cluster at every salt:
    // its own producers (region of the ID), and producers mirrored from it
    // and salted downstream (region of its region).
    let mut known: HashMap<u32, Vec<(String, u8, &str)>> = HashMap::new();
    if let Some(path) = clusters {
        for c in cluster_file(path)? {
            let r0 = pid::region(Origin::Cluster(&c), 0);
            for salt in 0..MAX_PROBES {
                let s = u64::from(salt);
                known
                    .entry(pid::region(Origin::Cluster(&c), s))
                    .or_default()
                    .push((c.clone(), salt, "local"));
                if salt > 0 {
                    known
                        .entry(pid::region(Origin::Region(r0), s))
                        .or_default()
                        .push((c.clone(), salt, "mirrored"));
                }
            }
        }
    }
    let mut rows = Vec::new();
    let mut docs = Vec::new();
    for text in pids {
        let p = parse_pid(text)?;
        let info = mirrorpid::decode_pid(p);
        let owners: Vec<&(String, u8, &str)> = info
            .region
            .and_then(|r| known.get(&r))
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        let space = match info.space {
            PidSpace::NoProducer => "no producer",
            PidSpace::Local => "local",
            PidSpace::OutOfRange => "out of range",
            PidSpace::Mirrored => "mirrored",
        };
        let origin = owners
            .iter()
            .map(|(c, s, how)| {
                if *how == "local" {
                    format!("{c} (salt {s})")
                } else {
                    format!("{c} (re-salted {s})")
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        rows.push(vec![
            p.to_string(),
            format!("{:#018x}", p),
            space.into(),
            info.region.map(region_hex).unwrap_or_else(|| "-".into()),
            info.pid40
                .map(|v| v.to_string())
                .unwrap_or_else(|| "-".into()),
            if clusters.is_some() && info.region.is_some() && origin.is_empty() {
                "unknown".into()
            } else {
                origin
            },
        ]);
        docs.push(json!({
            "pid": p.to_string(), "space": info.space, "region": info.region,
            "pid40": info.pid40.map(|v| v.to_string()),
            "origins": owners.iter().map(|(c, s, how)| json!({"cluster": c, "salt": s, "via": how})).collect::<Vec<_>>(),
        }));
    }
    Ok(if out.json {
        lines(docs)
    } else {
        table(&["PID", "HEX", "SPACE", "REGION", "PID40", "ORIGIN"], &rows)
    })
}

fn lines(docs: Vec<Value>) -> String {
    docs.iter().map(|d| format!("{d}\n")).collect()
}

fn pid_map(source: &str, pid: &str, salt: u8, out: Output) -> Result<String> {
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
                info.region.map(region_hex).unwrap_or_else(|| "-".into()),
                info.pid40
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "-".into()),
            ]],
        )
    })
}

fn clusters_check(file: &Path, out: Output) -> Result<String> {
    let ids = cluster_file(file)?;
    if ids.is_empty() {
        return Err(format!("{}: no cluster IDs", file.display()));
    }
    let plan = mirrorpid::plan::plan(ids.iter().map(String::as_str))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    if out.json {
        return Ok(format!("{}\n", json!(plan)));
    }
    let rows: Vec<Vec<String>> = plan
        .clusters
        .iter()
        .map(|c| vec![c.id.clone(), region_hex(c.region)])
        .collect();
    let mut text = table(&["CLUSTER", "REGION"], &rows);
    if plan.shared_regions.is_empty() {
        text.push_str("\nNo two clusters share a region at salt 0.\n");
    } else {
        for shared in &plan.shared_regions {
            let _ = writeln!(
                text,
                "\nSHARED REGION {}: {} (rename one, or keep their producers from meeting by two paths)",
                region_hex(shared.region),
                shared.clusters.join(", ")
            );
        }
    }
    let _ = writeln!(
        text,
        "Chance that some two of {} random cluster IDs share a region: {:.2e}",
        plan.clusters.len(),
        plan.shared_region_probability
    );
    Ok(text)
}

fn state_dump(files: &[PathBuf], compact: bool, out: Output) -> Result<(String, bool)> {
    let mut text = String::new();
    let mut problems = false;
    let mut docs = Vec::new();
    let mut rows = Vec::new();
    // Last record per key bytes, in log order (compaction).
    let mut last: Vec<(Vec<u8>, StateRecord)> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    for file in files {
        let bytes = read(file)?;
        let (records, issues) = segment::read(&bytes);
        for p in issues {
            problems = true;
            eprintln!(
                "mirrorpid: {}: byte {}: {}",
                file.display(),
                p.position,
                p.message
            );
        }
        for r in records {
            let key = r.key.as_deref().unwrap_or_default();
            let decoded = match StateRecord::decode(key, r.value.as_deref()) {
                Ok(d) => d,
                Err(e) => {
                    problems = true;
                    eprintln!(
                        "mirrorpid: {}: byte {}: record at offset {}: {e}",
                        file.display(),
                        r.batch_position,
                        r.offset
                    );
                    continue;
                }
            };
            if compact {
                if let Some(&i) = index.get(key) {
                    last[i].0.clear(); // superseded by this record
                }
                index.insert(key.to_vec(), last.len());
                last.push((key.to_vec(), decoded));
                continue;
            }
            let mut doc = decoded.to_json();
            doc["file"] = json!(file.display().to_string());
            doc["offset"] = json!(r.offset);
            docs.push(doc);
            rows.push(record_row(r.offset.to_string(), &decoded));
        }
    }
    if !compact {
        text = if out.json {
            lines(docs)
        } else {
            table(
                &[
                    "OFFSET",
                    "TOPIC",
                    "PART",
                    "SOURCE",
                    "PID",
                    "SALT",
                    "COLLIDING",
                    "TIMESTAMP",
                ],
                &rows,
            )
        };
        return Ok((text, problems));
    }
    // What survives compaction: the last record of each key, in log order,
    // tombstones removing their key.
    let mut partitions: BTreeMap<(String, i32), Vec<StateRecord>> = BTreeMap::new();
    for (key, r) in last {
        if key.is_empty() || r.value.is_none() {
            continue;
        }
        partitions
            .entry((r.key.topic_id.to_string(), r.key.partition))
            .or_default()
            .push(r);
    }
    if out.json {
        let docs = partitions
            .iter()
            .map(|((t, p), recs)| {
                json!({"topicId": t, "partition": p, "records": recs.iter().map(StateRecord::to_json).collect::<Vec<_>>()})
            })
            .collect();
        return Ok((lines(docs), problems));
    }
    for ((t, p), recs) in &partitions {
        let _ = writeln!(text, "{t} partition {p}: {} binding(s)", recs.len());
        let rows: Vec<Vec<String>> = recs
            .iter()
            .map(|r| {
                let v = r.value.as_ref().expect("kept values only");
                let mapped =
                    mirrorpid::map_pid(&r.key.source_cluster_id, r.key.original_pid, v.salt as u64)
                        .map(|m| m.to_string())
                        .unwrap_or_else(|e| e.to_string());
                vec![
                    r.key.source_cluster_id.clone(),
                    r.key.original_pid.to_string(),
                    v.salt.to_string(),
                    mapped,
                ]
            })
            .collect();
        text.push_str(&table(&["SOURCE", "PID", "SALT", "MAPPED"], &rows));
        text.push('\n');
    }
    Ok((text, problems))
}

fn record_row(offset: String, r: &StateRecord) -> Vec<String> {
    let (salt, colliding, ts) = match &r.value {
        Some(v) => (
            v.salt.to_string(),
            v.colliding_cluster_id.clone(),
            v.timestamp_ms.to_string(),
        ),
        None => ("tombstone".into(), String::new(), String::new()),
    };
    vec![
        offset,
        r.key.topic_id.to_string(),
        r.key.partition.to_string(),
        r.key.source_cluster_id.clone(),
        r.key.original_pid.to_string(),
        salt,
        colliding,
        ts,
    ]
}

fn snapshot_inspect(file: &Path, out: Output) -> Result<String> {
    let bytes = read(file)?;
    let m = Mapper::restore(&bytes).map_err(|e| format!("{}: {e}", file.display()))?;
    let c = m.config();
    let format = u16::from_be_bytes([bytes[8], bytes[9]]);
    let f_version = bytes[10];
    let bindings: Vec<_> = m.bindings().collect();
    let salted = bindings.iter().filter(|b| b.salt > 0).count();
    if out.json {
        return Ok(format!(
            "{}\n",
            json!({"format": format, "fVersion": f_version, "bytes": bytes.len(),
                "config": {"topicId": c.topic_id.to_string(), "partition": c.partition,
                    "durability": c.durability, "producerExpirationMs": c.producer_expiration_ms.to_string(),
                    "maxBindings": c.max_bindings, "maxClusters": c.max_clusters,
                    "maxClusterIdBytes": c.max_cluster_id_bytes},
                "bindings": bindings.len(), "salted": salted, "identities": bindings})
        ));
    }
    let mut text = String::new();
    let _ = writeln!(
        text,
        "mirrorpid snapshot: format {format}, F v{f_version}, {} bytes",
        bytes.len()
    );
    let _ = writeln!(
        text,
        "topic {} ({}) partition {}, durability {}, producer expiration {} ms",
        c.topic_id,
        c.topic_id.to_hex(),
        c.partition,
        serde_json::to_value(c.durability)
            .map_err(|e| e.to_string())?
            .as_str()
            .unwrap_or("?"),
        c.producer_expiration_ms
    );
    let _ = writeln!(
        text,
        "limits: {} bindings, {} source clusters, {} bytes of cluster IDs",
        c.max_bindings, c.max_clusters, c.max_cluster_id_bytes
    );
    let _ = writeln!(text, "{} binding(s), {salted} salted\n", bindings.len());
    let rows: Vec<Vec<String>> = bindings
        .iter()
        .map(|b| {
            vec![
                b.source_cluster_id.into(),
                b.pid.to_string(),
                b.mapped.to_string(),
                b.salt.to_string(),
                b.last_seen_ms
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "-".into()),
                if b.transaction_open { "open" } else { "" }.into(),
            ]
        })
        .collect();
    text.push_str(&table(
        &["SOURCE", "PID", "MAPPED", "SALT", "LAST SEEN", "TXN"],
        &rows,
    ));
    Ok(text)
}

fn rewrite(a: &RewriteArgs) -> Result<String> {
    let topic: TopicId = a
        .topic_id
        .parse()
        .map_err(|e: mirrorpid::Error| e.to_string())?;
    let mut config = MapperConfig::new(topic, a.partition);
    config.validate().map_err(|e| e.to_string())?;
    config.producer_expiration_ms = i64::MAX;
    let mut mapper = Mapper::new(config).map_err(|e| e.to_string())?;
    let mut bytes = read(&a.input)?;
    let options = RewriteOptions {
        strict_crc: a.strict_crc,
        complete: true,
    };
    // Batch by batch, so a long file shows progress.
    let total = bytes.len() as u64;
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg}")
            .expect("a valid template"),
    );
    let mut pos = 0;
    let mut records = Vec::new();
    let mut batches = 0;
    while pos < bytes.len() {
        let (size, now) = next_entry(&bytes[pos..])
            .map_err(|e| format!("{}: byte {pos}: {e}", a.input.display()))?;
        let out = mapper
            .rewrite(&a.source, &mut bytes[pos..pos + size], now, options)
            .map_err(|e| format!("{}: byte {pos}: {e}", a.input.display()))?;
        batches += out.batches.len();
        records.extend(out.records);
        mapper.confirm();
        pos += size;
        bar.set_position(pos as u64);
    }
    bar.finish_and_clear();
    write(&a.output, &bytes)?;
    let records_path = a.records.clone().unwrap_or_else(|| {
        let mut p = a.output.clone().into_os_string();
        p.push(".mirror_state.log");
        PathBuf::from(p)
    });
    let mut state = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let (key, value) = r.encode().map_err(|e| e.to_string())?;
        state.extend(
            BatchBuilder {
                base_offset: i as i64,
                timestamp: r.value.as_ref().map_or(0, |v| v.timestamp_ms),
                records: vec![RecordSpec {
                    key: Some(key),
                    value,
                }],
                ..BatchBuilder::default()
            }
            .encode(),
        );
    }
    write(&records_path, &state)?;
    Ok(format!(
        "{batches} batch(es) rewritten into {}; {} __mirror_state record(s) in {}; {} producer(s) bound, {} salted\n",
        a.output.display(),
        records.len(),
        records_path.display(),
        mapper.len(),
        mapper.bindings().filter(|b| b.salt > 0).count(),
    ))
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

/// The size of the complete entry at the start of `bytes`, and its time
/// (a v2 batch's maxTimestamp), which the rewrite takes as "now".
fn next_entry(bytes: &[u8]) -> std::result::Result<(usize, i64), String> {
    use mirrorpid::batch::{Batches, Entry};
    match Batches::complete(bytes).next() {
        Some(Ok(Entry::Batch { batch, .. })) => Ok((batch.bytes().len(), batch.max_timestamp())),
        Some(Ok(Entry::Legacy { len, .. })) => Ok((len, 0)),
        Some(Err(e)) => Err(e.to_string()),
        None => Ok((bytes.len(), 0)),
    }
}

fn simulate(args: &SimulateArgs) -> Result<(String, bool)> {
    let bytes = read(&args.scenario)?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", args.scenario.display()))?;
    let report = mirrorpid::sim::simulate_json(&text)
        .map_err(|e| format!("{}: {e}", args.scenario.display()))?;
    let corrupt = report.totals.mirrorpid.total() > 0 || report.refused.mirrorpid.total() > 0;
    if args.out.json {
        let doc = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        return Ok((format!("{doc}\n"), corrupt));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}\n",
        if report.name.is_empty() {
            "scenario"
        } else {
            &report.name
        }
    );
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

fn run(cli: Cli) -> Result<(String, bool)> {
    let ok = |s: String| (s, false);
    match cli.command {
        Command::Pid(PidCommand::Decode {
            pids,
            clusters,
            out,
        }) => pid_decode(&pids, clusters.as_deref(), out).map(ok),
        Command::Pid(PidCommand::Map {
            source,
            pid,
            salt,
            out,
        }) => pid_map(&source, &pid, salt, out).map(ok),
        Command::Clusters(ClustersCommand::Check { file, out }) => {
            clusters_check(&file, out).map(ok)
        }
        Command::State(StateCommand::Dump {
            files,
            compact,
            out,
        }) => state_dump(&files, compact, out),
        Command::Snapshot(SnapshotCommand::Inspect { file, out }) => {
            snapshot_inspect(&file, out).map(ok)
        }
        Command::Rewrite(args) => rewrite(&args).map(ok),
        Command::Simulate(args) => simulate(&args),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok((text, failed)) => {
            print!("{text}");
            if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(message) => {
            eprintln!("mirrorpid: error: {message}");
            ExitCode::from(2)
        }
    }
}
