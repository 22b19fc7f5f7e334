//! Kafka record batches (magic v2) as they arrive in a fetch: every byte
//! offset of the format, a zero-copy header view ([`Batch`]), the one write
//! a rewrite makes ([`BatchMut`]), a walker over concatenated batches
//! (`walker.rs`) and the encoder ([`BatchBuilder`], `builder.rs`).
//!
//! ```text
//! @0 baseOffset i64 | @8 batchLength i32 (= size - 12) | @12 partitionLeaderEpoch i32
//! @16 magic i8 | @17 crc u32 (CRC-32C of [21, end)) | @21 attributes i16
//! @23 lastOffsetDelta i32 | @27 baseTimestamp i64 | @35 maxTimestamp i64
//! @43 producerId i64 | @51 producerEpoch i16 | @53 baseSequence i32
//! @57 recordCount i32 | @61 records (possibly compressed)
//! ```
//!
//! Legacy message sets (magic 0 and 1) share the first 17 bytes' layout
//! (offset, size, crc, magic) and carry no producer ID; the walker yields
//! them so that callers pass them through.

mod builder;
mod changes;
mod headers;
mod offsets;
mod walker;

pub use builder::{BatchBuilder, RecordSpec};
pub use changes::BatchOutcome;
pub(crate) use changes::{bytes_after_pid, crc_word, write_all, Changes, Noted, PidWrite};
pub(crate) use headers::Gathered;
#[cfg(feature = "js")]
pub(crate) use headers::{changed_slots, gather_with};
#[cfg(feature = "broker")]
pub use headers::{
    gather, write_back, HeaderView, SLOT_BYTES, SLOT_CHANGED_OFFSET, SLOT_LEN_OFFSET, WINDOW,
};
#[cfg(not(feature = "broker"))]
#[allow(unused_imports)] // what the crate's own paths and tests read of it
pub(crate) use headers::{HeaderView, SLOT_BYTES, SLOT_LEN_OFFSET, WINDOW};
#[cfg(feature = "broker")]
pub use offsets::*;
#[cfg(not(feature = "broker"))]
pub(crate) use offsets::*;
pub(crate) use walker::{step, Entries, Step};
pub use walker::{Batches, Entry};

use crate::error::{Error, Result};
use crate::wire::Reader;

/// The type of a control batch's single record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlType {
    /// Type 0: the transaction aborted.
    Abort,
    /// Type 1: the transaction committed.
    Commit,
    /// Any other type (KRaft's leader change and snapshot markers, …).
    Other(i16),
}

impl ControlType {
    /// Its name in outcomes and JSON: `"abort"`, `"commit"` or `"other"`.
    pub fn name(self) -> &'static str {
        match self {
            ControlType::Abort => "abort",
            ControlType::Commit => "commit",
            ControlType::Other(_) => "other",
        }
    }

    /// Whether this marker ends a transaction.
    pub fn ends_transaction(self) -> bool {
        matches!(self, ControlType::Abort | ControlType::Commit)
    }
}

impl serde::Serialize for ControlType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A zero-copy view of one complete magic-v2 batch: all of its bytes when
/// walked from a buffer, or its first `WINDOW` bytes when walked from a
/// `HeaderView` (everything but [`Batch::computed_crc`] reads within
/// them).
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    bytes: &'a [u8],
    /// The batch's size (`LOG_OVERHEAD + batchLength`), `>= bytes.len()`.
    size: usize,
}

/// `N` bytes at `at`, as an array. Inlined always: at the size-optimised
/// WASM builds' `opt-level = "s"` it would otherwise be a call and a
/// `memcpy` per header field.
#[inline(always)]
pub(crate) fn be<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    // Every caller reads inside a header it checked the length of.
    match bytes.get(at..).and_then(<[u8]>::first_chunk::<N>) {
        Some(array) => *array,
        None => *crate::error::invariant_broken("a header read past its end", &[0u8; N]),
    }
}

/// Writes `value` at `at` (inlined always, as [`be`]).
#[inline(always)]
fn put<const N: usize>(bytes: &mut [u8], at: usize, value: [u8; N]) {
    match bytes.get_mut(at..).and_then(<[u8]>::first_chunk_mut::<N>) {
        Some(slot) => *slot = value,
        None => {
            crate::error::invariant_broken("a header write past its end", &());
        }
    }
}

impl<'a> Batch<'a> {
    /// Wraps a batch of `size` bytes whose first `bytes.len()` (at least
    /// the header) are `bytes`.
    pub(crate) fn new(bytes: &'a [u8], size: usize) -> Batch<'a> {
        debug_assert!(bytes.len() >= HEADER_LEN && bytes.len() <= size);
        Batch { bytes, size }
    }

    /// Wraps one complete v2 batch this crate built (the simulator's).
    #[cfg(feature = "sim")]
    pub(crate) fn whole(bytes: &'a [u8]) -> Batch<'a> {
        assert!(bytes.len() >= HEADER_LEN, "a whole batch");
        Batch {
            bytes,
            size: bytes.len(),
        }
    }

    /// The batch's bytes as walked: all of them from a buffer, its first
    /// `WINDOW` (or fewer, if it is smaller) from a `HeaderView`.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// The batch's size in bytes (`12 + batchLength`), whatever was walked.
    pub fn size(&self) -> usize {
        self.size
    }
    /// Whether all of its bytes are here (walked from a buffer).
    pub fn is_whole(&self) -> bool {
        self.bytes.len() == self.size
    }
    /// baseOffset.
    pub fn base_offset(&self) -> i64 {
        i64::from_be_bytes(be(self.bytes, BASE_OFFSET_OFFSET))
    }
    /// batchLength (the size after the first 12 bytes).
    pub fn batch_length(&self) -> i32 {
        i32::from_be_bytes(be(self.bytes, LENGTH_OFFSET))
    }
    /// partitionLeaderEpoch.
    pub fn partition_leader_epoch(&self) -> i32 {
        i32::from_be_bytes(be(self.bytes, PARTITION_LEADER_EPOCH_OFFSET))
    }
    /// The magic byte (2).
    pub fn magic(&self) -> i8 {
        i8::from_be_bytes(be(self.bytes, MAGIC_OFFSET))
    }
    /// The CRC stored in the batch.
    pub fn crc(&self) -> u32 {
        u32::from_be_bytes(be(self.bytes, CRC_OFFSET))
    }
    /// The attributes.
    pub fn attributes(&self) -> i16 {
        i16::from_be_bytes(be(self.bytes, ATTRIBUTES_OFFSET))
    }
    /// The compression codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd).
    pub fn compression(&self) -> u8 {
        (self.attributes() & COMPRESSION_MASK) as u8
    }
    /// Whether the batch belongs to a transaction.
    pub fn is_transactional(&self) -> bool {
        self.attributes() & TRANSACTIONAL != 0
    }
    /// Whether this is a control batch.
    pub fn is_control(&self) -> bool {
        self.attributes() & CONTROL != 0
    }
    /// lastOffsetDelta.
    pub fn last_offset_delta(&self) -> i32 {
        i32::from_be_bytes(be(self.bytes, LAST_OFFSET_DELTA_OFFSET))
    }
    /// baseTimestamp.
    pub fn base_timestamp(&self) -> i64 {
        i64::from_be_bytes(be(self.bytes, BASE_TIMESTAMP_OFFSET))
    }
    /// maxTimestamp.
    pub fn max_timestamp(&self) -> i64 {
        i64::from_be_bytes(be(self.bytes, MAX_TIMESTAMP_OFFSET))
    }
    /// producerId.
    pub fn producer_id(&self) -> i64 {
        i64::from_be_bytes(be(self.bytes, PRODUCER_ID_OFFSET))
    }
    /// producerEpoch.
    pub fn producer_epoch(&self) -> i16 {
        i16::from_be_bytes(be(self.bytes, PRODUCER_EPOCH_OFFSET))
    }
    /// baseSequence.
    pub fn base_sequence(&self) -> i32 {
        i32::from_be_bytes(be(self.bytes, BASE_SEQUENCE_OFFSET))
    }
    /// recordCount.
    pub fn record_count(&self) -> i32 {
        i32::from_be_bytes(be(self.bytes, RECORD_COUNT_OFFSET))
    }
    /// The records section, as stored (compressed or not): all of it for a
    /// whole batch, its start for one walked from a `HeaderView`.
    pub fn records(&self) -> &'a [u8] {
        self.bytes.get(HEADER_LEN..).unwrap_or_default()
    }
    /// CRC-32C of bytes [21, end): what `crc()` should be; `None` unless
    /// the whole batch is here.
    pub fn computed_crc(&self) -> Option<u32> {
        self.is_whole()
            .then(|| crate::crc::crc32c(self.bytes.get(ATTRIBUTES_OFFSET..).unwrap_or_default()))
    }

    /// The type of a control batch's record; `None` for a data batch.
    ///
    /// A control record is `length, attributes, timestampDelta, offsetDelta,
    /// keyLength, key = int16 version + int16 type, …`; only the key is read,
    /// which lies within the first [`CONTROL_KEY_READ`] bytes of the records
    /// whatever they hold, so a `HeaderView`'s window gives the same answer
    /// as the whole batch. `offset` is the batch's position, for the error.
    // Out of line in the module, for the reason `Batches::next_entry` is.
    #[cfg_attr(not(target_family = "wasm"), inline)]
    #[cfg_attr(target_family = "wasm", inline(never))]
    pub fn control_type(&self, offset: usize) -> Result<Option<ControlType>> {
        if !self.is_control() {
            return Ok(None);
        }
        self.read_control_type(offset).map(Some)
    }

    /// [`Batch::control_type`] of a control batch: the record read, kept
    /// out of the batch loop natively, where a data batch needs only the
    /// attribute test. The broker module is left to LLVM's choice: there
    /// the same hint costs instructions.
    #[cfg_attr(not(target_family = "wasm"), inline(never))]
    fn read_control_type(&self, offset: usize) -> Result<ControlType> {
        let bad = |reason| Error::MalformedControlBatch { offset, reason };
        if self.compression() != 0 {
            return Err(bad("control batch is compressed"));
        }
        if self.record_count() != 1 {
            return Err(bad("control batch must hold exactly one record"));
        }
        let mut r = Reader::new(self.records());
        let read = |r: &mut Reader<'_>| -> Result<i16> {
            r.varlong("record length")?;
            r.i8("record attributes")?;
            r.varlong("timestampDelta")?;
            r.varlong("offsetDelta")?;
            if r.varlong("keyLength")? < 4 {
                return Err(Error::MalformedControlBatch {
                    offset,
                    reason: "control record key is shorter than 4 bytes",
                });
            }
            r.i16("control key version")?;
            r.i16("control key type")
        };
        match read(&mut r) {
            Ok(0) => Ok(ControlType::Abort),
            Ok(1) => Ok(ControlType::Commit),
            Ok(t) => Ok(ControlType::Other(t)),
            Err(e @ Error::MalformedControlBatch { .. }) => Err(e),
            Err(_) => Err(bad("control record is truncated")),
        }
    }
}

/// The most bytes of a control batch's records that
/// [`Batch::control_type`] reads before it answers: four varlongs of at
/// most 10 bytes each (length, timestampDelta, offsetDelta, keyLength),
/// the attributes byte and the key's two int16s.
pub const CONTROL_KEY_READ: usize = 4 * 10 + 1 + 2 + 2;

/// The one thing a rewrite changes in a batch: its producer ID, with the
/// CRC patched to match (bytes 43..51 and 17..21; nothing else is read or
/// written, the records least of all).
#[derive(Debug)]
pub struct BatchMut<'a> {
    /// The batch's first bytes, the header at least.
    bytes: &'a mut [u8],
    /// The batch's size, which the CRC patch needs.
    size: usize,
}

impl<'a> BatchMut<'a> {
    /// The complete v2 batch at `offset` of `buf`, as a walker yielded it
    /// (its batchLength is known to fit).
    #[cfg(feature = "sim")]
    pub(crate) fn at(buf: &'a mut [u8], offset: usize) -> BatchMut<'a> {
        let size = LOG_OVERHEAD + i32::from_be_bytes(be(buf, offset + LENGTH_OFFSET)) as usize;
        let bytes = match buf.get_mut(offset..).and_then(|b| b.get_mut(..size)) {
            Some(bytes) => bytes,
            // Nothing to write to: every write of an empty batch is a
            // no-op (the debug build stops).
            None => {
                crate::error::invariant_broken("a batch past the buffer's end", &());
                &mut []
            }
        };
        BatchMut { bytes, size }
    }

    /// One complete v2 batch this crate built (the simulator's).
    #[cfg(feature = "sim")]
    pub(crate) fn whole(bytes: &'a mut [u8]) -> BatchMut<'a> {
        BatchMut::at(bytes, 0)
    }

    /// Writes `pid` as the producer ID and patches the CRC from the old CRC
    /// and the 8 changed bytes: a valid CRC stays valid, a wrong one stays
    /// wrong.
    pub fn set_producer_id(&mut self, pid: i64) {
        self.set_producer_id_bytes(pid.to_be_bytes());
    }

    /// [`BatchMut::set_producer_id`] given the new producer ID's bytes
    /// (big-endian).
    pub(crate) fn set_producer_id_bytes(&mut self, new: [u8; 8]) {
        let old: [u8; 8] = be(self.bytes, PRODUCER_ID_OFFSET);
        let delta = crate::crc::Patch::new(old, new).after(bytes_after_pid(self.size));
        PidWrite::new(0, 0, new, crc_word(delta)).apply(self.bytes);
    }
}
