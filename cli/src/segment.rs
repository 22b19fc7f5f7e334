//! Kafka log segment files (`*.log`): record batches back to back, as a
//! broker stores them. Read batch by batch with file offsets, so a bad batch
//! is reported where it is and the reading goes on where the format allows,
//! as `kafka-dump-log` does.

use bytes::Bytes;
use kafka_protocol::records::RecordBatchDecoder;
use mirrorpid::batch::{Batches, Entry};

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

/// Every record of every readable batch of `bytes`, with the problems met,
/// each naming its file offset as every message of the command line does
/// ("batch at byte N ...").
pub fn read(bytes: &[u8]) -> (Vec<SegmentRecord>, Vec<String>) {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let mut walker = Batches::complete(&bytes[pos..]);
        let (start, size) = match walker.next() {
            None => break,
            Some(Ok(Entry::Batch { batch, .. })) => (pos, batch.bytes().len()),
            Some(Ok(Entry::Legacy { len, magic, .. })) => {
                problems.push(format!(
                        "batch at byte {pos}: magic {magic} message set skipped (no records mirrorpid writes)"
                    ));
                pos += len;
                continue;
            }
            Some(Err(e)) => {
                // The length or magic cannot be trusted: nothing after it can
                // be found, so the reading stops here.
                problems.push(format!(
                    "{}; the rest of the file is not read",
                    e.shifted(pos)
                ));
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
            Err(e) => problems.push(format!(
                "batch at byte {start} ({size} bytes) cannot be decoded ({e}); skipped"
            )),
        }
        pos = start + size;
    }
    (records, problems)
}
