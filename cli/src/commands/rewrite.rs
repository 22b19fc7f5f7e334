//! `rewrite`: every batch of a segment file rewritten offline as a leader
//! would, with the `__mirror_state` records it would persist. Each batch's
//! CRC is checked first: a batch already damaged is refused unless
//! `--allow-bad-crc`, and then reported, since the CRC patch keeps it wrong.

use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mirrorpid::batch::{BatchBuilder, Batches, Entry, RecordSpec};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions, StateRecord, TopicId};
use serde_json::json;

use crate::out::{read, refuse_same_file, write, Output, Result};

#[derive(Args)]
pub struct RewriteArgs {
    /// The direct source cluster the segment was mirrored from.
    #[arg(long, value_name = "CLUSTER")]
    source: String,
    /// The destination topic's ID (base64 or hex).
    #[arg(long, value_name = "ID")]
    topic_id: String,
    /// The destination partition.
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    partition: i32,
    /// Where to write the `__mirror_state` records (a segment file);
    /// default: OUT.log with `.mirror_state.log` appended.
    #[arg(long, value_name = "FILE")]
    records: Option<PathBuf>,
    /// Rewrite batches whose stored CRC is already wrong (each is reported;
    /// its CRC stays wrong) instead of stopping at the first.
    #[arg(long)]
    allow_bad_crc: bool,
    /// The segment to read.
    #[arg(value_name = "IN.log")]
    input: PathBuf,
    /// The rewritten segment to write (not IN.log).
    #[arg(value_name = "OUT.log")]
    output: PathBuf,
    #[command(flatten)]
    out: Output,
}

/// One entry of the segment: its size, its time (a v2 batch's
/// maxTimestamp, which the rewrite takes as "now"), and its stored and
/// computed CRC when they differ.
struct Next {
    size: usize,
    now: i64,
    bad_crc: Option<(u32, u32)>,
}

fn next_entry(bytes: &[u8], pos: usize) -> std::result::Result<Next, mirrorpid::Error> {
    match Batches::complete(bytes).next() {
        Some(Ok(Entry::Batch { batch, .. })) => Ok(Next {
            size: batch.bytes().len(),
            now: batch.max_timestamp(),
            bad_crc: batch
                .computed_crc()
                .filter(|&c| c != batch.crc())
                .map(|c| (batch.crc(), c)),
        }),
        Some(Ok(Entry::Legacy { len, .. })) => Ok(Next {
            size: len,
            now: 0,
            bad_crc: None,
        }),
        Some(Err(e)) => Err(e.shifted(pos)),
        None => Ok(Next {
            size: bytes.len(),
            now: 0,
            bad_crc: None,
        }),
    }
}

pub fn run(a: &RewriteArgs) -> Result<String> {
    refuse_same_file(&a.input, &a.output)?;
    let topic: TopicId = a
        .topic_id
        .parse()
        .map_err(|e: mirrorpid::Error| e.to_string())?;
    let mut config = MapperConfig::new(topic, a.partition);
    config.validate().map_err(|e| e.to_string())?;
    config.producer_expiration_ms = i64::MAX;
    let mut mapper = Mapper::new(config).map_err(|e| e.to_string())?;
    let mut bytes = read(&a.input)?;
    let input = a.input.display();
    let options = RewriteOptions {
        strict_crc: false,
        complete: true,
        // Counted in the summary.
        outcomes: true,
    };
    // Batch by batch, so a long file shows progress and every message
    // names the batch's offset in the file.
    let bar = ProgressBar::new(bytes.len() as u64).with_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg}")
            .expect("a valid template"),
    );
    let mut pos = 0;
    let mut records = Vec::new();
    let mut batches = 0;
    let mut bad_crc = Vec::new();
    while pos < bytes.len() {
        let next = next_entry(&bytes[pos..], pos).map_err(|e| format!("{input}: {e}"))?;
        if let Some((stored, computed)) = next.bad_crc {
            let what = format!(
                "batch at byte {pos} stores CRC {stored:#010x}, its bytes give {computed:#010x}"
            );
            if !a.allow_bad_crc {
                bar.finish_and_clear();
                return Err(format!(
                    "{input}: {what}: the segment is damaged; nothing written \
                     (--allow-bad-crc rewrites it anyway, keeping the CRC wrong)"
                ));
            }
            bar.suspend(|| {
                eprintln!("mirrorpid: warning: {input}: {what}; rewritten, its CRC stays wrong")
            });
            bad_crc.push(pos);
        }
        let out = mapper
            .rewrite(
                &a.source,
                &mut bytes[pos..pos + next.size],
                next.now,
                options,
            )
            .map_err(|e| format!("{input}: {}", e.shifted(pos)))?;
        batches += out.batches.len();
        records.extend(out.records);
        mapper.confirm();
        pos += next.size;
        bar.set_position(pos as u64);
    }
    bar.finish_and_clear();
    let records_path = a.records.clone().unwrap_or_else(|| {
        let mut p = a.output.clone().into_os_string();
        p.push(".mirror_state.log");
        PathBuf::from(p)
    });
    refuse_same_file(&a.input, &records_path)?;
    let state = state_segment(&records)?;
    write(&a.output, &bytes)?;
    write(&records_path, &state)?;
    let salted = mapper.bindings().filter(|b| b.salt > 0).count();
    Ok(if a.out.json {
        format!(
            "{}\n",
            json!({"batches": batches, "output": a.output.display().to_string(),
                "records": records.len(), "recordsFile": records_path.display().to_string(),
                "bound": mapper.len(), "salted": salted, "badCrc": bad_crc})
        )
    } else {
        format!(
            "{batches} batch(es) rewritten into {}; {} __mirror_state record(s) in {}; {} producer(s) bound, {salted} salted{}\n",
            a.output.display(),
            records.len(),
            records_path.display(),
            mapper.len(),
            if bad_crc.is_empty() {
                String::new()
            } else {
                format!("; {} batch(es) with a wrong CRC", bad_crc.len())
            }
        )
    })
}

/// The records as a segment: one batch each, at offsets from 0.
fn state_segment(records: &[StateRecord]) -> Result<Vec<u8>> {
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
    Ok(state)
}
