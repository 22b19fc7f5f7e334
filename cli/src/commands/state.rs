//! `state dump`: the records of `__mirror_state` segment files, as written
//! or as compaction leaves them (what a new leader loads).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Subcommand;
use mirrorpid::StateRecord;
use serde_json::json;

use crate::out::{lines, read, table, Output, Result};
use crate::segment;

#[derive(Subcommand)]
pub enum StateCommand {
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

pub fn run(command: StateCommand) -> Result<(String, bool)> {
    match command {
        StateCommand::Dump {
            files,
            compact,
            out,
        } => dump(&files, compact, out),
    }
}

/// A decoded record and where it was read.
pub struct Read {
    pub file: String,
    /// The key bytes, which compaction goes by.
    pub key: Vec<u8>,
    pub offset: i64,
    pub record: StateRecord,
}

/// Every `__mirror_state` record of `files` in log order, each problem
/// reported on stderr with its file and byte offset; `true` with them if
/// there was any. A file none of whose records is a `__mirror_state`
/// record is reported once, as the wrong kind of segment.
pub fn read_records(files: &[PathBuf]) -> Result<(Vec<Read>, bool)> {
    let mut out = Vec::new();
    let mut problems = false;
    for file in files {
        let name = file.display().to_string();
        let (records, issues) = segment::read(&read(file)?);
        for p in issues {
            problems = true;
            eprintln!("mirrorpid: {name}: {p}");
        }
        let mut bad = Vec::new();
        let before = out.len();
        for r in &records {
            let key = r.key.as_deref().unwrap_or_default();
            match StateRecord::decode(key, r.value.as_deref()) {
                Ok(record) => out.push(Read {
                    file: name.clone(),
                    key: key.to_vec(),
                    offset: r.offset,
                    record,
                }),
                Err(e) => bad.push(format!(
                    "record at offset {} (batch at byte {}): {e}",
                    r.offset, r.batch_position
                )),
            }
        }
        problems |= !bad.is_empty();
        if out.len() == before && !bad.is_empty() {
            eprintln!(
                "mirrorpid: {name}: not a __mirror_state segment: none of its {} record(s) \
                 is a MirrorPidCollisionKey record (the first: {})",
                bad.len(),
                bad[0]
            );
        } else {
            for b in bad {
                eprintln!("mirrorpid: {name}: {b}");
            }
        }
    }
    Ok((out, problems))
}

/// What survives compaction: the last record of each key, in log order,
/// tombstones removing their key; per (TopicId, Partition).
pub fn compacted(records: Vec<Read>) -> BTreeMap<(String, i32), Vec<StateRecord>> {
    let mut last: Vec<Option<StateRecord>> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    for r in records {
        if let Some(&i) = index.get(&r.key) {
            last[i] = None; // superseded by this record
        }
        index.insert(r.key, last.len());
        last.push(Some(r.record));
    }
    let mut partitions: BTreeMap<(String, i32), Vec<StateRecord>> = BTreeMap::new();
    for r in last.into_iter().flatten().filter(|r| r.value.is_some()) {
        partitions
            .entry((r.key.topic_id.to_string(), r.key.partition))
            .or_default()
            .push(r);
    }
    partitions
}

fn dump(files: &[PathBuf], compact: bool, out: Output) -> Result<(String, bool)> {
    let (records, problems) = read_records(files)?;
    if records.is_empty() && problems {
        return Ok((String::new(), true)); // no table header over nothing
    }
    if !compact {
        let text = if out.json {
            lines(
                records
                    .iter()
                    .map(|r| {
                        let mut doc = r.record.to_json();
                        doc["file"] = json!(r.file);
                        doc["offset"] = json!(r.offset);
                        doc
                    })
                    .collect(),
            )
        } else {
            let rows: Vec<Vec<String>> = records.iter().map(record_row).collect();
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
    let partitions = compacted(records);
    if out.json {
        let docs = partitions
            .iter()
            .map(|((t, p), recs)| {
                json!({"topicId": t, "partition": p, "records": recs.iter().map(StateRecord::to_json).collect::<Vec<_>>()})
            })
            .collect();
        return Ok((lines(docs), problems));
    }
    let mut text = String::new();
    for ((t, p), recs) in &partitions {
        let _ = writeln!(text, "{t} partition {p}: {} binding(s)", recs.len());
        let rows: Vec<Vec<String>> = recs
            .iter()
            .filter_map(|r| {
                let v = r.value.as_ref()?;
                let mapped =
                    mirrorpid::map_pid(&r.key.source_cluster_id, r.key.original_pid, v.salt as u64)
                        .map(|m| m.to_string())
                        .unwrap_or_else(|e| e.to_string());
                Some(vec![
                    r.key.source_cluster_id.clone(),
                    r.key.original_pid.to_string(),
                    v.salt.to_string(),
                    mapped,
                ])
            })
            .collect();
        text.push_str(&table(&["SOURCE", "PID", "SALT", "MAPPED"], &rows));
        text.push('\n');
    }
    Ok((text, problems))
}

fn record_row(r: &Read) -> Vec<String> {
    let (salt, colliding, ts) = match &r.record.value {
        Some(v) => (
            v.salt.to_string(),
            v.colliding_cluster_id.clone(),
            v.timestamp_ms.to_string(),
        ),
        None => ("tombstone".into(), String::new(), String::new()),
    };
    let k = &r.record.key;
    vec![
        r.offset.to_string(),
        k.topic_id.to_string(),
        k.partition.to_string(),
        k.source_cluster_id.clone(),
        k.original_pid.to_string(),
        salt,
        colliding,
        ts,
    ]
}
