//! Building batches byte for byte as Kafka writes them: the encoding side
//! of [`super::Batch`], for the simulator and tests.

use super::{
    ControlType, ATTRIBUTES_OFFSET, CONTROL, CRC_OFFSET, HEADER_LEN, LOG_OVERHEAD, TRANSACTIONAL,
};

/// One record to put in a batch built by [`BatchBuilder`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordSpec {
    /// The key, or null.
    pub key: Option<Vec<u8>>,
    /// The value, or null.
    pub value: Option<Vec<u8>>,
}

/// Builds uncompressed magic-v2 batches, byte for byte as Kafka writes them:
/// the encoding side of [`Batch`](super::Batch). Used by the simulator and by tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchBuilder {
    /// baseOffset.
    pub base_offset: i64,
    /// partitionLeaderEpoch.
    pub partition_leader_epoch: i32,
    /// producerId (-1 for none).
    pub producer_id: i64,
    /// producerEpoch.
    pub producer_epoch: i16,
    /// baseSequence (-1 for none).
    pub base_sequence: i32,
    /// baseTimestamp (every record gets delta 0).
    pub timestamp: i64,
    /// Whether the batch is transactional.
    pub transactional: bool,
    /// A control batch with this marker instead of `records`.
    pub control: Option<ControlType>,
    /// The records of a data batch.
    pub records: Vec<RecordSpec>,
}

impl Default for BatchBuilder {
    fn default() -> Self {
        BatchBuilder {
            base_offset: 0,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            timestamp: 0,
            transactional: false,
            control: None,
            records: Vec::new(),
        }
    }
}

impl BatchBuilder {
    /// The batch's bytes, with a valid CRC.
    pub fn encode(&self) -> Vec<u8> {
        use crate::wire::{put_i16, put_i32, put_i64, put_varlong};
        let control_record;
        let records: &[RecordSpec] = match self.control {
            Some(c) => {
                let kind = match c {
                    ControlType::Abort => 0,
                    ControlType::Commit => 1,
                    ControlType::Other(t) => t,
                };
                let mut key = Vec::new();
                put_i16(&mut key, 0);
                put_i16(&mut key, kind);
                let mut value = Vec::new();
                put_i16(&mut value, 0); // version
                put_i32(&mut value, 0); // coordinatorEpoch
                control_record = [RecordSpec {
                    key: Some(key),
                    value: Some(value),
                }];
                &control_record
            }
            None => &self.records,
        };
        let mut body = Vec::new();
        for (i, r) in records.iter().enumerate() {
            let mut rec = vec![0u8]; // attributes
            put_varlong(&mut rec, 0); // timestampDelta
            put_varlong(&mut rec, i as i64); // offsetDelta
            for field in [&r.key, &r.value] {
                match field {
                    Some(b) => {
                        put_varlong(&mut rec, b.len() as i64);
                        rec.extend_from_slice(b);
                    }
                    None => put_varlong(&mut rec, -1),
                }
            }
            put_varlong(&mut rec, 0); // headers
            put_varlong(&mut body, rec.len() as i64);
            body.extend_from_slice(&rec);
        }
        let mut attributes = 0i16;
        if self.transactional || self.control.is_some() {
            attributes |= TRANSACTIONAL;
        }
        if self.control.is_some() {
            attributes |= CONTROL;
        }
        let count = records.len() as i32;
        let mut out = Vec::with_capacity(HEADER_LEN + body.len());
        put_i64(&mut out, self.base_offset);
        put_i32(&mut out, (HEADER_LEN - LOG_OVERHEAD + body.len()) as i32);
        put_i32(&mut out, self.partition_leader_epoch);
        out.push(2);
        put_i32(&mut out, 0); // CRC, filled below
        put_i16(&mut out, attributes);
        put_i32(&mut out, (count - 1).max(0));
        put_i64(&mut out, self.timestamp);
        put_i64(&mut out, self.timestamp);
        put_i64(&mut out, self.producer_id);
        put_i16(&mut out, self.producer_epoch);
        put_i32(&mut out, self.base_sequence);
        put_i32(&mut out, count);
        out.extend_from_slice(&body);
        let crc = crate::crc::crc32c(&out[ATTRIBUTES_OFFSET..]);
        out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        out
    }
}
