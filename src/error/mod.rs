//! The one error type of mirrorpid.
//!
//! Every failure a caller can cause has its own variant with the facts needed
//! to act on it (which PID, which byte offset, which field). Each variant has
//! a stable numeric [`Error::code`], which the broker ABI returns as its
//! status, so a host and the docs (`docs/ABI.md`) share one list.

/// Defines every error once: its variant of [`Error`] with its fields, its
/// [`Code`] (number, name, meaning) and its message; and the codes of the
/// broker ABI that no [`Error`] carries. [`Error::kind`], the message's
/// `Name: ` prefix, the broker module's statuses, the reference host's
/// constants, the JS API's error names, the Java library's `Code` and the
/// table in `docs/ABI.md` (which tests compare with this one) all come from
/// it.
macro_rules! define_errors {
    (
        $(
            $(#[$doc:meta])*
            $name:ident = $value:literal, $meaning:literal
            { $( $(#[$fdoc:meta])* $field:ident : $ty:ty ),* $(,)? }
            => ( $($message:tt)* );
        )*
        [abi] {
            $( $(#[$adoc:meta])* $abi:ident = $avalue:literal, $ameaning:literal; )*
        }
    ) => {
        /// Every error code of mirrorpid and of the broker ABI, with its
        /// name and meaning.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Code {
            $( #[doc = concat!("See [`Error::", stringify!($name), "`].")] $name = $value, )*
            $( $(#[$adoc])* $abi = $avalue, )*
        }

        impl Code {
            /// Every code: the errors' in the table's order, then the broker
            /// ABI's own.
            pub const ALL: &'static [Code] = &[$(Code::$name,)* $(Code::$abi,)*];

            /// The number (never 0; the broker ABI returns its negation).
            pub fn value(self) -> i32 {
                self as i32
            }

            /// The name, as messages start with it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$name => stringify!($name),)*
                    $(Code::$abi => stringify!($abi),)*
                }
            }

            /// One line saying what it means.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Code::$name => $meaning,)*
                    $(Code::$abi => $ameaning,)*
                }
            }

            /// The code with this number.
            pub fn from_value(value: i32) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| c.value() == value)
            }
        }

        /// Everything that can go wrong in mirrorpid.
        ///
        /// An operation that returns an `Error` has changed nothing: no
        /// binding, no byte of a buffer, no transaction state.
        #[derive(Debug, Clone, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Error {
            $(
                $(#[$doc])*
                $name { $( $(#[$fdoc])* $field: $ty, )* },
            )*
        }

        impl Error {
            /// Its entry in the code table.
            pub fn kind(&self) -> Code {
                match self {
                    $(Error::$name { .. } => Code::$name,)*
                }
            }
        }

        impl std::fmt::Display for Error {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}: ", self.kind().name())?;
                match self {
                    $(
                        #[allow(unused_variables)]
                        Error::$name { $($field),* } => write!(f, $($message)*),
                    )*
                }
            }
        }
    };
}

define_errors! {
    /// A local PID at or above 2^40 and below 2^62: too large to map (`docs/FORMAT.md` §1).
    PidOutOfRange = 1, "a local PID in [2^40, 2^62): too large to map" {
        /// The PID as it arrived.
        pid: i64,
    } => ("PID {pid} is a local PID >= 2^40 and cannot be mapped \
           (local PIDs must be below 1099511627776; mirrored ones at or above 2^62)");

    /// All 64 salts of an identity landed on slots held by other producers.
    SlotSpaceExhausted = 2, "all 64 salts of an identity land on other producers' slots" {
        /// The direct source cluster of the identity.
        source_cluster_id: String,
        /// The incoming PID of the identity.
        pid: i64,
    } => ("all 64 salts for PID {pid} from cluster {} land on slots held by other producers",
          Quoted(source_cluster_id));

    /// Bytes ended before a complete value could be read.
    Truncated = 3, "record bytes end before a complete value" {
        /// What was being read (for example `"MirrorPidCollisionKey.SourceClusterId"`).
        what: &'static str,
        /// Byte offset at which more input was needed.
        offset: usize,
    } => ("{what} ends early at byte {offset}");

    /// A `__mirror_state` key whose apiKey is not 3.
    UnknownApiKey = 4, "a __mirror_state key whose apiKey is not 3" {
        /// The apiKey found.
        api_key: i16,
    } => ("record key has apiKey {api_key}, expected 3 (MirrorPidCollisionKey)");

    /// A versioned structure with a version this build does not know.
    UnknownVersion = 5, "a record value, snapshot format or F version this build does not know" {
        /// Which structure.
        what: &'static str,
        /// The version found.
        version: i32,
    } => ("{what} version {version} is not supported");

    /// Bytes left over after a complete value.
    TrailingBytes = 6, "bytes after a complete record key or value" {
        /// Which structure.
        what: &'static str,
        /// How many bytes were left.
        extra: usize,
    } => ("{extra} byte(s) after the end of {what}");

    /// A string field that is not valid UTF-8.
    InvalidUtf8 = 7, "a string field that is not UTF-8" {
        /// Which field.
        field: &'static str,
    } => ("{field} is not valid UTF-8");

    /// A length prefix below zero (a null where none is allowed) or a varint
    /// that does not fit.
    InvalidLength = 8, "a negative (null) length or an oversized varint" {
        /// Which field.
        field: &'static str,
        /// The length as decoded (-1 for a null).
        length: i64,
    } => ("{field} has length {length}");

    /// A salt outside 0 to 63: in a record being loaded, or given to F.
    InvalidSalt = 9, "a salt outside 0 to 63 (in a record, or given to F)" {
        /// The salt found.
        salt: i64,
    } => ("salt {salt} is outside 0 to 63");

    /// A `__mirror_state` key whose OriginalPid is not a mappable producer.
    InvalidRecordPid = 10, "a record's OriginalPid is not a mappable producer ID" {
        /// The PID found.
        pid: i64,
    } => ("OriginalPid {pid} is not a mappable producer ID");

    /// TopicId text that is neither 22-character base64url nor 8-4-4-4-12 hex.
    InvalidTopicId = 11, "TopicId text that is neither base64url nor 8-4-4-4-12 hex" {
        /// The text given (cut to 64 characters).
        text: String,
    } => ("{} is neither 22-character base64url nor 8-4-4-4-12 hex", Quoted(text));

    /// A snapshot that is not a mirrorpid snapshot at all.
    ForeignSnapshot = 12, "bytes shorter than the snapshot magic, or with another magic" {}
        => ("these bytes are not a mirrorpid snapshot");

    /// A snapshot whose checksum or contents do not hold together.
    CorruptSnapshot = 13, "a snapshot that is truncated, fails its checksum, or does not hold together" {
        /// What did not hold.
        reason: String,
    } => ("{reason}");

    /// A record batch or message set with a magic byte other than 0, 1 or 2.
    UnknownMagic = 14, "a batch whose magic is not 0, 1 or 2" {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// The magic byte found.
        magic: i8,
    } => ("batch at byte {offset} has magic {magic} (expected 0, 1 or 2)");

    /// A v2 batch whose batchLength is below the header's 49 bytes (or a
    /// legacy message below its minimum).
    BatchTooShort = 15, "a batchLength below 49 (v2) or 14 (magic 0 and 1)" {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// The length field found.
        length: i32,
    } => ("batch at byte {offset} declares length {length}, below the header size");

    /// A batch that runs past the end of input declared complete.
    BatchOverrun = 16, "a batch that runs past the end of a buffer declared complete" {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// Bytes the batch needs from its offset.
        needed: usize,
        /// Bytes the buffer has from that offset.
        available: usize,
    } => ("batch at byte {offset} needs {needed} bytes, only {available} remain");

    /// Strict mode: a batch whose stored CRC does not match its bytes.
    CrcMismatch = 17, "strict mode: a batch whose stored CRC is wrong" {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// CRC stored at offset 17.
        stored: u32,
        /// CRC-32C computed over bytes [21, end).
        computed: u32,
    } => ("batch at byte {offset} stores CRC {stored:#010x}, its bytes give {computed:#010x}");

    /// A control batch whose single record cannot be read as a control key.
    MalformedControlBatch = 18, "a control batch without a readable marker" {
        /// Byte offset of the batch in the buffer.
        offset: usize,
        /// What is wrong with it.
        reason: &'static str,
    } => ("batch at byte {offset}: {reason}");

    /// A configuration, option object or JSON document that cannot be used.
    InvalidInput = 19, "a config, option or JSON document that cannot be used, or an empty source cluster ID" {
        /// What is wrong, naming the field.
        reason: String,
    } => ("{reason}");

    /// A call that removes bindings (expiry, loading records) while some
    /// bindings await `confirm` or `abort`.
    Unconfirmed = 20, "expiry or a record load while bindings await confirm" {
        /// The call refused.
        call: &'static str,
        /// How many bindings are pending.
        pending: usize,
    } => ("{call} removes bindings, but {pending} binding(s) await confirm() or abort(); \
           make their records durable and confirm first");

    /// A mirrored PID from a source that the trust declaration does not
    /// let carry its region (`MapperConfig::origins`).
    UndeclaredOrigin = 21, "a mirrored PID whose region is none of its source's declared origins" {
        /// The direct source that sent it.
        source_cluster_id: String,
        /// The mirrored PID.
        pid: i64,
        /// Its region.
        region: u32,
    } => ("source {} sent mirrored PID {pid} of region {region:#08x}, \
           which belongs to none of the origins declared for it (config origins)",
          Quoted(source_cluster_id));

    /// A new binding, source cluster or cluster-ID byte count would pass a
    /// limit of the mapper config (`maxBindings`, `maxClusters`,
    /// `maxClusterIdBytes`): the limits bound what sources can make a
    /// mapper hold.
    CapacityExceeded = 22, "a new binding or source cluster would pass a capacity limit of the mapper config" {
        /// Which limit (`"maxBindings"`, `"maxClusters"` or
        /// `"maxClusterIdBytes"`).
        limit: &'static str,
        /// Its value.
        max: u64,
    } => ("the mapper holds as much as its config allows ({limit} {max}); \
           expire idle producers or raise the limit");

    /// An allocation failed (a WebAssembly instance at its memory limit):
    /// the call changed nothing, and the mapper keeps working.
    OutOfMemory = 103, "memory ran out (the module's, or the process's) before a call could finish" {
        /// What could not grow.
        what: &'static str,
    } => ("no memory to grow {what}; nothing changed (free mappers or expire bindings)");

    [abi] {
        /// Broker ABI: no mapper has the handle (never made, or freed).
        BadHandle = 100, "no mapper has this handle (never made, or freed)";
        /// Broker ABI: a (pointer, length) pair outside every live `mp_alloc` block.
        BadPointer = 101, "a (pointer, length) not inside one live mp_alloc block";
        /// Broker ABI: a length, flag or other argument out of its range.
        BadArgument = 102, "a negative length, mp_alloc(0), unknown flag bits, or text that is not UTF-8";
    }
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

mod quoted;
pub(crate) use quoted::Quoted;

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
/// far. The crate's `text!` macro calls this.
pub(crate) fn text(args: std::fmt::Arguments<'_>) -> String {
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
