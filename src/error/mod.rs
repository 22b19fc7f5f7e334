//! The one error type of mirrorpid.
//!
//! Every failure a caller can cause has its own variant with the facts needed
//! to act on it (which PID, which byte offset, which field). Each variant has
//! a stable numeric [`Error::code`], which the broker ABI returns as its
//! status, so a host and the docs (`docs/ABI.md`) share one list.

macro_rules! codes {
    ($( $(#[$doc:meta])* $name:ident = $value:literal, $meaning:literal; )*) => {
        /// Every error code of mirrorpid and of the broker ABI, defined once
        /// here with its name and meaning. [`Error::code`], the `Name: `
        /// prefix of every message, the broker module's statuses, the
        /// reference host's constants and the table in `docs/ABI.md` (which a
        /// test compares with this one) all come from it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $( $(#[$doc])* $name = $value, )*
        }

        impl Code {
            /// Every code, in ascending order.
            pub const ALL: &'static [Code] = &[$(Code::$name),*];

            /// The number (never 0; the broker ABI returns its negation).
            pub fn value(self) -> i32 {
                self as i32
            }

            /// The name, as messages start with it.
            pub fn name(self) -> &'static str {
                match self { $(Code::$name => stringify!($name),)* }
            }

            /// One line saying what it means.
            pub fn meaning(self) -> &'static str {
                match self { $(Code::$name => $meaning,)* }
            }

            /// The code with this number.
            pub fn from_value(value: i32) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| c.value() == value)
            }
        }
    };
}

codes! {
    /// See [`Error::PidOutOfRange`].
    PidOutOfRange = 1, "a local PID in [2^40, 2^62): too large to map";
    /// See [`Error::SlotSpaceExhausted`].
    SlotSpaceExhausted = 2, "all 64 salts of an identity land on other producers' slots";
    /// See [`Error::Truncated`].
    Truncated = 3, "record bytes end before a complete value";
    /// See [`Error::UnknownApiKey`].
    UnknownApiKey = 4, "a __mirror_state key whose apiKey is not 3";
    /// See [`Error::UnknownVersion`].
    UnknownVersion = 5, "a record value, snapshot format or F version this build does not know";
    /// See [`Error::TrailingBytes`].
    TrailingBytes = 6, "bytes after a complete record key or value";
    /// See [`Error::InvalidUtf8`].
    InvalidUtf8 = 7, "a string field that is not UTF-8";
    /// See [`Error::InvalidLength`].
    InvalidLength = 8, "a negative (null) length or an oversized varint";
    /// See [`Error::InvalidSalt`].
    InvalidSalt = 9, "a salt outside 0 to 63 (in a record, or given to F)";
    /// See [`Error::InvalidRecordPid`].
    InvalidRecordPid = 10, "a record's OriginalPid is not a mappable producer ID";
    /// See [`Error::InvalidTopicId`].
    InvalidTopicId = 11, "TopicId text that is neither base64url nor 8-4-4-4-12 hex";
    /// See [`Error::ForeignSnapshot`].
    ForeignSnapshot = 12, "bytes shorter than the snapshot magic, or with another magic";
    /// See [`Error::CorruptSnapshot`].
    CorruptSnapshot = 13, "a snapshot that is truncated, fails its checksum, or does not hold together";
    /// See [`Error::UnknownMagic`].
    UnknownMagic = 14, "a batch whose magic is not 0, 1 or 2";
    /// See [`Error::BatchTooShort`].
    BatchTooShort = 15, "a batchLength below 49 (v2) or 14 (magic 0 and 1)";
    /// See [`Error::BatchOverrun`].
    BatchOverrun = 16, "a batch that runs past the end of a buffer declared complete";
    /// See [`Error::CrcMismatch`].
    CrcMismatch = 17, "strict mode: a batch whose stored CRC is wrong";
    /// See [`Error::MalformedControlBatch`].
    MalformedControlBatch = 18, "a control batch without a readable marker";
    /// See [`Error::InvalidInput`].
    InvalidInput = 19, "a config, option or JSON document that cannot be used, or an empty source cluster ID";
    /// See [`Error::Unconfirmed`].
    Unconfirmed = 20, "expiry or a record load while bindings await confirm";
    /// See [`Error::UndeclaredOrigin`].
    UndeclaredOrigin = 21, "a mirrored PID whose region is none of its source's declared origins";
    /// See [`Error::CapacityExceeded`].
    CapacityExceeded = 22, "a new binding or source cluster would pass a capacity limit of the mapper config";
    /// Broker ABI: no mapper has the handle (never made, or freed).
    BadHandle = 100, "no mapper has this handle (never made, or freed)";
    /// Broker ABI: a (pointer, length) pair outside every live `mp_alloc` block.
    BadPointer = 101, "a (pointer, length) not inside one live mp_alloc block";
    /// Broker ABI: a length, flag or other argument out of its range.
    BadArgument = 102, "a negative length, mp_alloc(0), unknown flag bits, or text that is not UTF-8";
    /// See [`Error::OutOfMemory`].
    OutOfMemory = 103, "memory ran out (the module's, or the process's) before a call could finish";
}

/// Everything that can go wrong in mirrorpid.
///
/// An operation that returns an `Error` has changed nothing: no binding, no
/// byte of a buffer, no transaction state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A local PID at or above 2^40 and below 2^62: too large to map (`docs/FORMAT.md` §1).
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
    /// A salt outside 0 to 63: in a record being loaded, or given to F.
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
    /// A mirrored PID from a source that the trust declaration does not
    /// let carry its region (`MapperConfig::origins`).
    UndeclaredOrigin {
        /// The direct source that sent it.
        source_cluster_id: String,
        /// The mirrored PID.
        pid: i64,
        /// Its region.
        region: u32,
    },
    /// A new binding, source cluster or cluster-ID byte count would pass a
    /// limit of the mapper config (`maxBindings`, `maxClusters`,
    /// `maxClusterIdBytes`): the limits bound what sources can make a
    /// mapper hold.
    CapacityExceeded {
        /// Which limit (`"maxBindings"`, `"maxClusters"` or
        /// `"maxClusterIdBytes"`).
        limit: &'static str,
        /// Its value.
        max: u64,
    },
    /// An allocation failed (a WebAssembly instance at its memory limit):
    /// the call changed nothing, and the mapper keeps working.
    OutOfMemory {
        /// What could not grow.
        what: &'static str,
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
    /// The same error for a buffer that starts `by` bytes into a larger one
    /// (a segment file): a batch's offset becomes its offset in the larger
    /// buffer, so every message names one position.
    pub fn shifted(mut self, by: usize) -> Error {
        if let Error::UnknownMagic { offset, .. }
        | Error::BatchTooShort { offset, .. }
        | Error::BatchOverrun { offset, .. }
        | Error::CrcMismatch { offset, .. }
        | Error::MalformedControlBatch { offset, .. } = &mut self
        {
            *offset += by;
        }
        self
    }

    /// Its entry in the code table.
    pub fn kind(&self) -> Code {
        match self {
            Error::PidOutOfRange { .. } => Code::PidOutOfRange,
            Error::SlotSpaceExhausted { .. } => Code::SlotSpaceExhausted,
            Error::Truncated { .. } => Code::Truncated,
            Error::UnknownApiKey { .. } => Code::UnknownApiKey,
            Error::UnknownVersion { .. } => Code::UnknownVersion,
            Error::TrailingBytes { .. } => Code::TrailingBytes,
            Error::InvalidUtf8 { .. } => Code::InvalidUtf8,
            Error::InvalidLength { .. } => Code::InvalidLength,
            Error::InvalidSalt { .. } => Code::InvalidSalt,
            Error::InvalidRecordPid { .. } => Code::InvalidRecordPid,
            Error::InvalidTopicId { .. } => Code::InvalidTopicId,
            Error::ForeignSnapshot => Code::ForeignSnapshot,
            Error::CorruptSnapshot { .. } => Code::CorruptSnapshot,
            Error::UnknownMagic { .. } => Code::UnknownMagic,
            Error::BatchTooShort { .. } => Code::BatchTooShort,
            Error::BatchOverrun { .. } => Code::BatchOverrun,
            Error::CrcMismatch { .. } => Code::CrcMismatch,
            Error::MalformedControlBatch { .. } => Code::MalformedControlBatch,
            Error::InvalidInput { .. } => Code::InvalidInput,
            Error::Unconfirmed { .. } => Code::Unconfirmed,
            Error::UndeclaredOrigin { .. } => Code::UndeclaredOrigin,
            Error::CapacityExceeded { .. } => Code::CapacityExceeded,
            Error::OutOfMemory { .. } => Code::OutOfMemory,
        }
    }

    /// The stable numeric code of this error (never 0): `self.kind().value()`.
    pub fn code(&self) -> i32 {
        self.kind().value()
    }

    /// Shorthand for [`Error::InvalidInput`].
    pub fn invalid(reason: impl Into<String>) -> Error {
        Error::InvalidInput {
            reason: reason.into(),
        }
    }
}

mod message;
pub(crate) use message::Quoted;

/// What a lookup that this crate's own invariants rule out returns (an
/// index its own code computed, past the end): a debug build (the tests,
/// the fuzzers' native side) stops there; a release build, the broker
/// module's, goes on with `fallback` instead of trapping, which would kill
/// every mapper in the module (`docs/RELIABILITY.md`). Each caller's
/// fallback is an answer no caller takes for a producer or a batch.
#[cold]
#[inline(never)]
pub(crate) fn invariant_broken<'a, T: ?Sized>(what: &str, fallback: &'a T) -> &'a T {
    if cfg!(debug_assertions) {
        panic!("an invariant is broken: {what}");
    }
    fallback
}

/// Formats as `format!` does, without its panic.
///
/// `format!` and `to_string` panic when a `Display` impl fails (none here
/// does), and the broker module must hold no reachable panic
/// (`docs/RELIABILITY.md`); a failing impl would leave the text written so
/// far. The crate's `text!` macro calls this; the broker module uses it
/// for its own messages.
pub fn text(args: std::fmt::Arguments<'_>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = out.write_fmt(args);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoted_escapes_as_debug_does_for_what_ids_hold() {
        for text in [
            "east-1",
            "a\"b",
            "back\\slash",
            "line\nbreak\r\t\0",
            "bell\u{7}",
            "ünïcode €",
        ] {
            assert_eq!(super::Quoted(text).to_string(), format!("{text:?}"));
        }
    }
}
