//! The message of each error: what went wrong, with the facts to act on,
//! after the code's name. Text a source chose (a cluster ID) is quoted and
//! escaped, so it cannot forge lines in a log.

use std::fmt;

use super::Error;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.kind().name())?;
        match self {
            Error::PidOutOfRange { pid } => write!(
                f,
                "PID {pid} is a local PID >= 2^40 and cannot be mapped \
                 (local PIDs must be below 1099511627776; mirrored ones at or above 2^62)"
            ),
            Error::SlotSpaceExhausted {
                source_cluster_id,
                pid,
            } => write!(
                f,
                "all 64 salts for PID {pid} from cluster {} \
                 land on slots held by other producers",
                Quoted(source_cluster_id)
            ),
            Error::Truncated { what, offset } => {
                write!(f, "{what} ends early at byte {offset}")
            }
            Error::UnknownApiKey { api_key } => write!(
                f,
                "record key has apiKey {api_key}, expected 3 (MirrorPidCollisionKey)"
            ),
            Error::UnknownVersion { what, version } => {
                write!(f, "{what} version {version} is not supported")
            }
            Error::TrailingBytes { what, extra } => {
                write!(f, "{extra} byte(s) after the end of {what}")
            }
            Error::InvalidUtf8 { field } => write!(f, "{field} is not valid UTF-8"),
            Error::InvalidLength { field, length } => {
                write!(f, "{field} has length {length}")
            }
            Error::InvalidSalt { salt } => {
                write!(f, "salt {salt} is outside 0 to 63")
            }
            Error::InvalidRecordPid { pid } => {
                write!(f, "OriginalPid {pid} is not a mappable producer ID")
            }
            Error::InvalidTopicId { text } => write!(
                f,
                "{} is neither 22-character base64url nor 8-4-4-4-12 hex",
                Quoted(text)
            ),
            Error::ForeignSnapshot => {
                write!(f, "these bytes are not a mirrorpid snapshot")
            }
            Error::CorruptSnapshot { reason } => write!(f, "{reason}"),
            Error::UnknownMagic { offset, magic } => write!(
                f,
                "batch at byte {offset} has magic {magic} (expected 0, 1 or 2)"
            ),
            Error::BatchTooShort { offset, length } => write!(
                f,
                "batch at byte {offset} declares length {length}, below the header size"
            ),
            Error::BatchOverrun {
                offset,
                needed,
                available,
            } => write!(
                f,
                "batch at byte {offset} needs {needed} bytes, only {available} remain"
            ),
            Error::CrcMismatch {
                offset,
                stored,
                computed,
            } => write!(
                f,
                "batch at byte {offset} stores CRC {stored:#010x}, its bytes give {computed:#010x}"
            ),
            Error::MalformedControlBatch { offset, reason } => {
                write!(f, "batch at byte {offset}: {reason}")
            }
            Error::InvalidInput { reason } => write!(f, "{reason}"),
            Error::UndeclaredOrigin {
                source_cluster_id,
                pid,
                region,
            } => write!(
                f,
                "source {} sent mirrored PID {pid} of region {region:#08x}, \
                 which belongs to none of the origins declared for it (config origins)",
                Quoted(source_cluster_id)
            ),
            Error::CapacityExceeded { limit, max } => write!(
                f,
                "the mapper holds as much as its config allows ({limit} {max}); \
                 expire idle producers or raise the limit"
            ),
            Error::OutOfMemory { what } => write!(
                f,
                "no memory to grow {what}; nothing changed (free mappers or expire bindings)"
            ),
            Error::Unconfirmed { call, pending } => write!(
                f,
                "{call} removes bindings, but {pending} binding(s) await \
                 confirm() or abort(); make their records durable and confirm first"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// A string in double quotes, escaped as Rust's `{:?}` escapes the common
/// cases (quote, backslash, `\n`, `\r`, `\t`, `\0`, other control
/// characters as `\u{..}`), so that a hostile cluster ID cannot forge lines
/// in a log. Ours, not `{:?}`: that one carries Unicode printability tables
/// into the broker module.
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\0' => f.write_str("\\0")?,
                c if c.is_control() => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}
