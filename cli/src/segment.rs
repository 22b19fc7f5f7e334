//! Kafka log segment files (`*.log`): record batches back to back, as a
//! broker stores them. Read batch by batch with file offsets, so a bad batch
//! is reported where it is and the reading goes on where the format allows,
//! as `kafka-dump-log` does.

use bytes::Bytes;
use kafka_protocol::records::RecordBatchDecoder;
use mirrorpid::batch::{Batches, Entry};
use mirrorpid::Error;

/// One record of a segment: its Kafka offset and where its batch starts.
pub struct SegmentRecord {
    /// Byte offset of its batch in the file.
    pub batch_position: usize,
    /// The record's Kafka offset.
    pub offset: i64,
    /// Key bytes (`None`: null key).
    pub key: Option<Bytes>,
    /// Value bytes (`None`: a tombstone).
    pub value: Option<Bytes>,
}

/// Something wrong at a byte position of the file.
pub struct Problem {
    /// Byte offset in the file.
    pub position: usize,
    /// What is wrong.
    pub message: String,
}

/// Every record of every readable batch of `bytes`, with the problems met.
pub fn read(bytes: &[u8]) -> (Vec<SegmentRecord>, Vec<Problem>) {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let mut walker = Batches::complete(&bytes[pos..]);
        let (start, size) = match walker.next() {
            None => break,
            Some(Ok(Entry::Batch { batch, .. })) => (pos, batch.bytes().len()),
            Some(Ok(Entry::Legacy { len, magic, .. })) => {
                problems.push(Problem {
                    position: pos,
                    message: format!(
                        "magic {magic} message set skipped (no records mirrorpid writes)"
                    ),
                });
                pos += len;
                continue;
            }
            Some(Err(e)) => {
                // The length or magic cannot be trusted: nothing after it can
                // be found, so the reading stops here.
                let what = match e {
                    Error::BatchOverrun {
                        needed, available, ..
                    } => format!("truncated batch: it needs {needed} bytes, {available} remain"),
                    Error::UnknownMagic { magic, .. } => format!("unknown magic {magic}"),
                    Error::BatchTooShort { length, .. } => {
                        format!("batchLength {length} is below the header size")
                    }
                    other => other.to_string(),
                };
                problems.push(Problem {
                    position: pos,
                    message: format!("{what}; the rest of the file is not read"),
                });
                break;
            }
        };
        let mut batch = Bytes::copy_from_slice(&bytes[start..start + size]);
        match RecordBatchDecoder::decode(&mut batch) {
            Ok(set) => records.extend(set.records.into_iter().map(|r| SegmentRecord {
                batch_position: start,
                offset: r.offset,
                key: r.key,
                value: r.value,
            })),
            Err(e) => problems.push(Problem {
                position: start,
                message: format!("batch of {size} bytes cannot be decoded ({e}); skipped"),
            }),
        }
        pos = start + size;
    }
    (records, problems)
}
