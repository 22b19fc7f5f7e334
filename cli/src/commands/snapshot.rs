//! `snapshot inspect` and `snapshot make`: read a mirrorpid snapshot, or
//! make the one a new leader would hold after replaying `__mirror_state`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use mirrorpid::{LoadOutcome, Mapper, MapperConfig, TopicId};
use serde_json::json;

use super::state::read_records;
use crate::out::{or_dash, read, refuse_same_file, table, write, Output, Result};

#[derive(Subcommand)]
pub enum SnapshotCommand {
    /// Header, config, counts and bindings of a snapshot file.
    Inspect {
        /// The snapshot file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        out: Output,
    },
    /// Replay `__mirror_state` segments as a new leader of one partition
    /// does, and write the snapshot it then holds.
    Make {
        /// The partition's topic ID (base64 or hex); default: the only one
        /// the records name.
        #[arg(long, value_name = "ID")]
        topic_id: Option<String>,
        /// The partition; default: the only one the records name.
        #[arg(long, value_name = "P", allow_negative_numbers = true)]
        partition: Option<i32>,
        /// The snapshot file to write.
        #[arg(long, short, value_name = "FILE")]
        output: PathBuf,
        /// `__mirror_state` segment files, in log order.
        #[arg(required = true, value_name = "SEGMENT.log")]
        files: Vec<PathBuf>,
        #[command(flatten)]
        out: Output,
    },
}

pub fn run(command: SnapshotCommand) -> Result<String> {
    match command {
        SnapshotCommand::Inspect { file, out } => inspect(&file, out),
        SnapshotCommand::Make {
            topic_id,
            partition,
            output,
            files,
            out,
        } => make(topic_id.as_deref(), partition, &output, &files, out),
    }
}

fn make(
    topic: Option<&str>,
    partition: Option<i32>,
    output: &Path,
    files: &[PathBuf],
    out: Output,
) -> Result<String> {
    for f in files {
        refuse_same_file(f, output)?;
    }
    let (records, problems) = read_records(files)?;
    if problems {
        return Err(format!(
            "{} not written: the segments have problems (above), and a leader \
             replaying them would not hold what they meant",
            output.display()
        ));
    }
    let topic: TopicId = match topic {
        Some(t) => t.parse().map_err(|e: mirrorpid::Error| e.to_string())?,
        None => only(records.iter().map(|r| r.record.key.topic_id), "topic IDs")?,
    };
    let partition = match partition {
        Some(p) => p,
        None => only(
            records
                .iter()
                .filter(|r| r.record.key.topic_id == topic)
                .map(|r| r.record.key.partition),
            "partitions",
        )?,
    };
    let mut mapper = Mapper::new(MapperConfig::new(topic, partition)).map_err(|e| e.to_string())?;
    let (mut loaded, mut skipped) = (0, 0);
    for r in &records {
        match mapper
            .load_record(&r.record)
            .map_err(|e| format!("{}: record at offset {}: {e}", r.file, r.offset))?
        {
            LoadOutcome::Skipped => skipped += 1,
            _ => loaded += 1,
        }
    }
    let bytes = mapper.snapshot();
    write(output, &bytes)?;
    let salted = mapper.bindings().filter(|b| b.salt > 0).count();
    Ok(if out.json {
        format!(
            "{}\n",
            json!({"output": output.display().to_string(), "topicId": topic.to_string(),
                "partition": partition, "records": loaded, "skipped": skipped,
                "bindings": mapper.len(), "salted": salted, "bytes": bytes.len()})
        )
    } else {
        format!(
            "{} written: topic {topic} partition {partition}, {} binding(s), {salted} salted, \
             from {loaded} record(s) ({skipped} of other partitions skipped)\n",
            output.display(),
            mapper.len(),
        )
    })
}

/// The one value `values` holds, or an error naming them.
fn only<T: PartialEq + ToString>(values: impl Iterator<Item = T>, what: &str) -> Result<T> {
    let mut seen: Vec<T> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    match seen.len() {
        1 => Ok(seen.remove(0)),
        0 => Err(format!("the segments hold no records, so no {what} to choose from: give --topic-id and --partition")),
        _ => Err(format!(
            "the records name {} {what} ({}): choose one with --topic-id and --partition",
            seen.len(),
            seen.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
        )),
    }
}

fn inspect(file: &Path, out: Output) -> Result<String> {
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
                or_dash(b.last_seen_ms),
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
