//! The v2 batch header's layout, as Kafka's `DefaultRecordBatch` declares
//! it: each field's offset chained from the one before, and the attribute
//! bits. Public with feature `broker`, for a host that reads headers in its
//! own buffers; a Rust user reads them through [`super::Batch`].

// Without `broker` the crate reads only the fields it needs.
#![cfg_attr(not(feature = "broker"), allow(dead_code))]

/// Offset of baseOffset (i64).
pub const BASE_OFFSET_OFFSET: usize = 0;
/// Offset of batchLength (i32: the batch's size after the first 12 bytes).
pub const LENGTH_OFFSET: usize = BASE_OFFSET_OFFSET + 8;
/// Bytes before `batchLength` counts: baseOffset and batchLength.
pub const LOG_OVERHEAD: usize = LENGTH_OFFSET + 4;
/// Offset of partitionLeaderEpoch (i32).
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = LOG_OVERHEAD;
/// Offset of the magic byte.
pub const MAGIC_OFFSET: usize = PARTITION_LEADER_EPOCH_OFFSET + 4;
/// Offset of the CRC (u32, CRC-32C of everything from the attributes on).
pub const CRC_OFFSET: usize = MAGIC_OFFSET + 1;
/// Offset of the attributes (i16); the CRC covers everything from here.
pub const ATTRIBUTES_OFFSET: usize = CRC_OFFSET + 4;
/// Offset of lastOffsetDelta (i32).
pub const LAST_OFFSET_DELTA_OFFSET: usize = ATTRIBUTES_OFFSET + 2;
/// Offset of baseTimestamp (i64).
pub const BASE_TIMESTAMP_OFFSET: usize = LAST_OFFSET_DELTA_OFFSET + 4;
/// Offset of maxTimestamp (i64).
pub const MAX_TIMESTAMP_OFFSET: usize = BASE_TIMESTAMP_OFFSET + 8;
/// Offset of the producer ID (i64).
pub const PRODUCER_ID_OFFSET: usize = MAX_TIMESTAMP_OFFSET + 8;
/// Offset of producerEpoch (i16).
pub const PRODUCER_EPOCH_OFFSET: usize = PRODUCER_ID_OFFSET + 8;
/// Offset of baseSequence (i32).
pub const BASE_SEQUENCE_OFFSET: usize = PRODUCER_EPOCH_OFFSET + 2;
/// Offset of recordCount (i32).
pub const RECORD_COUNT_OFFSET: usize = BASE_SEQUENCE_OFFSET + 4;
/// Size of the v2 header: where the records start.
pub const HEADER_LEN: usize = RECORD_COUNT_OFFSET + 4;
/// The smallest legal `batchLength` of a v2 batch.
pub const MIN_BATCH_LENGTH: i32 = (HEADER_LEN - LOG_OVERHEAD) as i32;
/// The smallest legal size of a legacy (magic 0) message.
pub const MIN_LEGACY_LENGTH: i32 = 14;

const _: () = assert!(HEADER_LEN == 61 && PRODUCER_ID_OFFSET == 43 && CRC_OFFSET == 17);

/// Attribute bits: compression codec.
pub const COMPRESSION_MASK: i16 = 0x07;
/// Attribute bit: timestamps are log-append time.
pub const LOG_APPEND_TIME: i16 = 0x08;
/// Attribute bit: part of a transaction.
pub const TRANSACTIONAL: i16 = 0x10;
/// Attribute bit: a control batch (transaction marker).
pub const CONTROL: i16 = 0x20;
