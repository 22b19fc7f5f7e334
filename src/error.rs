//! The one error type of mirrorpid.
//!
//! Every failure a caller can cause has its own variant with the facts needed
//! to act on it (which PID, which byte offset, which field). Each variant has
//! a stable numeric [`Error::code`], which the broker ABI returns as its
//! status, so a host and the docs (`docs/ABI.md`) share one list.

use std::fmt;

/// Everything that can go wrong in mirrorpid.
///
/// An operation that returns an `Error` has changed nothing: no binding, no
/// byte of a buffer, no transaction state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A local PID at or above 2^40 and below 2^62: too large to map (SPEC §2).
    PidOutOfRange {
        /// The PID as it arrived.
        pid: i64,
    },
    /// All 64 salts of an identity landed on slots held by other producers.
    SlotSpaceExhausted {
        /// The direct source cluster of the identity.
        source_cluster_id: String,
        /// The incoming PID of the identity.
        pid: i64,
    },
    /// Bytes ended before a complete value could be read.
    Truncated {
        /// What was being read (for example `"MirrorPidCollisionKey.SourceClusterId"`).
        what: &'static str,
        /// Byte offset at which more input was needed.
        offset: usize,
    },
    /// A `__mirror_state` key whose apiKey is not 3.
    UnknownApiKey {
        /// The apiKey found.
        api_key: i16,
    },
    /// A versioned structure with a version this build does not know.
    UnknownVersion {
        /// Which structure.
        what: &'static str,
        /// The version found.
        version: i32,
    },
    /// Bytes left over after a complete value.
    TrailingBytes {
        /// Which structure.
        what: &'static str,
        /// How many bytes were left.
        extra: usize,
    },
    /// A string field that is not valid UTF-8.
    InvalidUtf8 {
        /// Which field.
        field: &'static str,
    },
    /// A length prefix below zero (a null where none is allowed) or a varint
    /// that does not fit.
    InvalidLength {
        /// Which field.
        field: &'static str,
        /// The length as decoded (-1 for a null).
        length: i64,
    },
    /// A salt outside `0..64` in a record being loaded.
    InvalidSalt {
        /// The salt found.
        salt: i64,
    },
    /// A `__mirror_state` key whose OriginalPid is not a mappable producer.
    InvalidRecordPid {
        /// The PID found.
        pid: i64,
    },
    /// TopicId text that is neither 22-character base64url nor 8-4-4-4-12 hex.
    InvalidTopicId {
        /// The text given (cut to 64 characters).
        text: String,
    },
    /// A snapshot that is not a mirrorpid snapshot at all.
    ForeignSnapshot,
    /// A snapshot whose checksum or contents do not hold together.
    CorruptSnapshot {
        /// What did not hold.
        reason: String,
    },
    /// A record batch or message set with a magic byte other than 0, 1 or 2.
    UnknownMagic {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// The magic byte found.
        magic: i8,
    },
    /// A v2 batch whose batchLength is below the header's 49 bytes (or a
    /// legacy message below its minimum).
    BatchTooShort {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// The length field found.
        length: i32,
    },
    /// A batch that runs past the end of input declared complete.
    BatchOverrun {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// Bytes the batch needs from its offset.
        needed: usize,
        /// Bytes the buffer has from that offset.
        available: usize,
    },
    /// Strict mode: a batch whose stored CRC does not match its bytes.
    CrcMismatch {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// CRC stored at offset 17.
        stored: u32,
        /// CRC-32C computed over bytes [21, end).
        computed: u32,
    },
    /// A control batch whose single record cannot be read as a control key.
    MalformedControlBatch {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A configuration, option object or JSON document that cannot be used.
    InvalidInput {
        /// What is wrong, naming the field.
        reason: String,
    },
    /// A call that removes bindings (expiry, loading records) while some
    /// bindings await `confirm` or `abort`.
    Unconfirmed {
        /// The call refused.
        call: &'static str,
        /// How many bindings are pending.
        pending: usize,
    },
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable numeric code of this error (never 0; `docs/ABI.md` lists them).
    pub fn code(&self) -> i32 {
        match self {
            Error::PidOutOfRange { .. } => 1,
            Error::SlotSpaceExhausted { .. } => 2,
            Error::Truncated { .. } => 3,
            Error::UnknownApiKey { .. } => 4,
            Error::UnknownVersion { .. } => 5,
            Error::TrailingBytes { .. } => 6,
            Error::InvalidUtf8 { .. } => 7,
            Error::InvalidLength { .. } => 8,
            Error::InvalidSalt { .. } => 9,
            Error::InvalidRecordPid { .. } => 10,
            Error::InvalidTopicId { .. } => 11,
            Error::ForeignSnapshot => 12,
            Error::CorruptSnapshot { .. } => 13,
            Error::UnknownMagic { .. } => 14,
            Error::BatchTooShort { .. } => 15,
            Error::BatchOverrun { .. } => 16,
            Error::CrcMismatch { .. } => 17,
            Error::MalformedControlBatch { .. } => 18,
            Error::InvalidInput { .. } => 19,
            Error::Unconfirmed { .. } => 20,
        }
    }

    /// Shorthand for [`Error::InvalidInput`].
    pub fn invalid(reason: impl Into<String>) -> Error {
        Error::InvalidInput {
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::PidOutOfRange { pid } => write!(
                f,
                "PidOutOfRange: PID {pid} is a local PID >= 2^40 and cannot be mapped \
                 (local PIDs must be below 1099511627776; mirrored ones at or above 2^62)"
            ),
            Error::SlotSpaceExhausted {
                source_cluster_id,
                pid,
            } => write!(
                f,
                "SlotSpaceExhausted: all 64 salts for PID {pid} from cluster {source_cluster_id:?} \
                 land on slots held by other producers"
            ),
            Error::Truncated { what, offset } => {
                write!(f, "Truncated: {what} ends early at byte {offset}")
            }
            Error::UnknownApiKey { api_key } => write!(
                f,
                "UnknownApiKey: record key has apiKey {api_key}, expected 3 (MirrorPidCollisionKey)"
            ),
            Error::UnknownVersion { what, version } => {
                write!(f, "UnknownVersion: {what} version {version} is not supported")
            }
            Error::TrailingBytes { what, extra } => {
                write!(f, "TrailingBytes: {extra} byte(s) after the end of {what}")
            }
            Error::InvalidUtf8 { field } => write!(f, "InvalidUtf8: {field} is not valid UTF-8"),
            Error::InvalidLength { field, length } => {
                write!(f, "InvalidLength: {field} has length {length}")
            }
            Error::InvalidSalt { salt } => {
                write!(f, "InvalidSalt: salt {salt} is outside 0..64")
            }
            Error::InvalidRecordPid { pid } => write!(
                f,
                "InvalidRecordPid: OriginalPid {pid} is not a mappable producer ID"
            ),
            Error::InvalidTopicId { text } => write!(
                f,
                "InvalidTopicId: {text:?} is neither 22-character base64url nor 8-4-4-4-12 hex"
            ),
            Error::ForeignSnapshot => {
                write!(f, "ForeignSnapshot: these bytes are not a mirrorpid snapshot")
            }
            Error::CorruptSnapshot { reason } => write!(f, "CorruptSnapshot: {reason}"),
            Error::UnknownMagic { offset, magic } => write!(
                f,
                "UnknownMagic: batch at byte {offset} has magic {magic} (expected 0, 1 or 2)"
            ),
            Error::BatchTooShort { offset, length } => write!(
                f,
                "BatchTooShort: batch at byte {offset} declares length {length}, below the header size"
            ),
            Error::BatchOverrun {
                offset,
                needed,
                available,
            } => write!(
                f,
                "BatchOverrun: batch at byte {offset} needs {needed} bytes, only {available} remain"
            ),
            Error::CrcMismatch {
                offset,
                stored,
                computed,
            } => write!(
                f,
                "CrcMismatch: batch at byte {offset} stores CRC {stored:#010x}, its bytes give {computed:#010x}"
            ),
            Error::MalformedControlBatch { offset, reason } => {
                write!(f, "MalformedControlBatch: batch at byte {offset}: {reason}")
            }
            Error::InvalidInput { reason } => write!(f, "InvalidInput: {reason}"),
            Error::Unconfirmed { call, pending } => write!(
                f,
                "Unconfirmed: {call} removes bindings, but {pending} binding(s) await \
                 confirm() or abort(); make their records durable and confirm first"
            ),
        }
    }
}

impl std::error::Error for Error {}
