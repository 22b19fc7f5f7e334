//! The broker module's ABI facts that both sides need: the version, the
//! flag bits, what `mp_load_record` returns, the record-list layout of
//! outputs and the output info that says where the last one is. The
//! module (`broker/`) writes with these and the reference host (`host/`)
//! reads with them, so the two cannot drift apart; error codes are
//! [`mirrorpid::Code`]. `docs/ABI.md` documents each. The `mirrorpid`
//! crate itself knows nothing of the ABI, as a Rust user of the mapper
//! needs none of it.

#![deny(missing_docs)]

#[cfg(test)]
mod generated;

/// What `mp_abi_version` returns. Version 2 added `mp_confirm`,
/// `mp_abort` and `mp_pending` (bindings are pending until confirmed);
/// version 3 added `mp_rewrite_headers` (a fetch seen through its batch
/// headers, [`mirrorpid::batch::HeaderView`]) and `mp_map`; version 4 added
/// `mp_output_info` ([`OutputInfo`]); version 5 added `mp_source` and
/// `mp_rewrite_headers_from` (a source cluster named once by a token).
pub const ABI_VERSION: i32 = 5;

/// `mp_rewrite` flag: verify each batch's CRC first.
pub const FLAG_STRICT_CRC: i32 = 1;
/// `mp_rewrite` flag: the buffer must end on a batch boundary.
pub const FLAG_COMPLETE: i32 = 2;

/// `mp_map`: the PID is no producer's (below 0): passed through, no salt.
pub const MAP_NOT_A_PRODUCER: i32 = 255;

/// `mp_load_record`: a record of another topic or partition, skipped.
pub const LOAD_SKIPPED: i32 = 0;
/// `mp_load_record`: the identity is bound with the record's salt.
pub const LOAD_BOUND: i32 = 1;
/// `mp_load_record`: a tombstone.
pub const LOAD_DELETED: i32 = 2;
/// `mp_load_record`: bound, and other identities holding that slot were
/// removed (the record is newer than the snapshot that put them there).
pub const LOAD_BOUND_EVICTING: i32 = 3;

/// `mp_load_record` bit, added to `LOAD_BOUND` or `LOAD_BOUND_EVICTING`:
/// the record binds a mirrored PID its source is not declared to carry
/// (loaded all the same; `LoadOutcome::Bound::undeclared`).
pub const LOAD_UNDECLARED: i32 = 4;

/// What `mp_load_record` returns for `outcome`: the one definition the
/// module and every host that compares with the core use.
pub fn load_status(outcome: &mirrorpid::LoadOutcome) -> i32 {
    use mirrorpid::LoadOutcome::{Bound, Deleted, Skipped};
    match outcome {
        Skipped => LOAD_SKIPPED,
        Deleted { .. } => LOAD_DELETED,
        Bound {
            evicted,
            undeclared,
            ..
        } => {
            let bound = if evicted.is_empty() {
                LOAD_BOUND
            } else {
                LOAD_BOUND_EVICTING
            };
            bound | if *undeclared { LOAD_UNDECLARED } else { 0 }
        }
    }
}

/// What `mp_output_info` points at: where the output of the last
/// successful call that wrote one is, and that mapper's snapshot flag, as
/// `mp_output_ptr`, `mp_output_len` and `mp_snapshot_required` would
/// answer for it. The address is fixed for the instance's life, so a host
/// asks for it once and then reads these 12 bytes after each call instead
/// of crossing into the module up to three more times. A failed call
/// leaves them as they were.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputInfo {
    /// Where the output starts in linear memory.
    pub ptr: u32,
    /// Its length in bytes.
    pub len: u32,
    /// Whether the call returned a collision record (snapshot the state).
    pub snapshot_required: bool,
}

impl OutputInfo {
    /// Where the pointer is: three big-endian `i32`s, pointer, length,
    /// flag.
    pub const PTR_OFFSET: usize = 0;
    /// Where the length is.
    pub const LEN_OFFSET: usize = 4;
    /// Where the snapshot flag is.
    pub const FLAG_OFFSET: usize = 8;
    /// The layout's size.
    pub const BYTES: usize = 12;

    /// The 12 bytes the module keeps at `mp_output_info`.
    pub fn encode(self) -> [u8; Self::BYTES] {
        let mut out = [0; Self::BYTES];
        let mut put = |at: usize, word: u32| out[at..at + 4].copy_from_slice(&word.to_be_bytes());
        put(Self::PTR_OFFSET, self.ptr);
        put(Self::LEN_OFFSET, self.len);
        put(Self::FLAG_OFFSET, u32::from(self.snapshot_required));
        out
    }

    /// The info in `bytes`; `None` unless the flag is 0 or 1 and pointer
    /// and length are non-negative `i32`s (the module's memory is at most
    /// 2 GiB).
    pub fn decode(bytes: &[u8; Self::BYTES]) -> Option<OutputInfo> {
        let word =
            |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let (ptr, len) = (word(Self::PTR_OFFSET), word(Self::LEN_OFFSET));
        if ptr > i32::MAX as u32 || len > i32::MAX as u32 {
            return None;
        }
        let snapshot_required = match word(Self::FLAG_OFFSET) {
            0 => false,
            1 => true,
            _ => return None,
        };
        Some(OutputInfo {
            ptr,
            len,
            snapshot_required,
        })
    }
}

/// A record as the ABI carries it: key bytes and value bytes (`None`: a
/// tombstone).
pub type RawRecord = (Vec<u8>, Option<Vec<u8>>);

/// The record-list layout of no records: a count of 0.
pub const EMPTY_RECORDS: [u8; 4] = 0i32.to_be_bytes();

/// Appends the record-list layout of `records` to `out` (cleared first):
/// `i32 count`, then per record `i32 keyLen | key | i32 valueLen | value`,
/// big-endian, `valueLen = -1` for a tombstone. An empty list is 4 bytes.
/// `None` if a length does not fit an `i32`.
pub fn encode_records<'a>(
    records: impl ExactSizeIterator<Item = (&'a [u8], Option<&'a [u8]>)>,
    out: &mut Vec<u8>,
) -> Option<()> {
    out.clear();
    out.extend_from_slice(&i32::try_from(records.len()).ok()?.to_be_bytes());
    for (key, value) in records {
        out.extend_from_slice(&i32::try_from(key.len()).ok()?.to_be_bytes());
        out.extend_from_slice(key);
        match value {
            Some(v) => {
                out.extend_from_slice(&i32::try_from(v.len()).ok()?.to_be_bytes());
                out.extend_from_slice(v);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    Some(())
}

/// Reads the record-list layout; `None` unless `bytes` is exactly one list.
pub fn parse_records(bytes: &[u8]) -> Option<Vec<RawRecord>> {
    let mut pos = 0usize;
    let int = |pos: &mut usize| -> Option<i32> {
        let v = i32::from_be_bytes(bytes.get(*pos..*pos + 4)?.try_into().ok()?);
        *pos += 4;
        Some(v)
    };
    let n = usize::try_from(int(&mut pos)?).ok()?;
    let mut out = Vec::with_capacity(n.min(bytes.len() / 8));
    for _ in 0..n {
        let kl = usize::try_from(int(&mut pos)?).ok()?;
        let key = bytes.get(pos..pos.checked_add(kl)?)?.to_vec();
        pos += kl;
        let value = match int(&mut pos)? {
            -1 => None,
            vl => {
                let vl = usize::try_from(vl).ok()?;
                let v = bytes.get(pos..pos.checked_add(vl)?)?.to_vec();
                pos += vl;
                Some(v)
            }
        };
        out.push((key, value));
    }
    (pos == bytes.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_info_round_trips_and_refuses_what_the_module_never_writes() {
        for info in [
            OutputInfo::default(),
            OutputInfo {
                ptr: 70_000,
                len: 4,
                snapshot_required: true,
            },
            OutputInfo {
                ptr: i32::MAX as u32,
                len: i32::MAX as u32,
                snapshot_required: false,
            },
        ] {
            assert_eq!(OutputInfo::decode(&info.encode()), Some(info));
        }
        let bytes = OutputInfo {
            ptr: 0x0102_0304,
            len: 5,
            snapshot_required: true,
        }
        .encode();
        assert_eq!(bytes, [1, 2, 3, 4, 0, 0, 0, 5, 0, 0, 0, 1], "big-endian");
        let mut flag = bytes;
        flag[11] = 2;
        assert_eq!(OutputInfo::decode(&flag), None, "a flag is 0 or 1");
        let mut ptr = bytes;
        ptr[0] = 0x80;
        assert_eq!(OutputInfo::decode(&ptr), None, "a pointer below 2 GiB");
        let mut len = bytes;
        len[4] = 0x80;
        assert_eq!(OutputInfo::decode(&len), None, "a length below 2 GiB");
    }

    #[test]
    fn record_lists_round_trip_and_an_empty_one_is_four_bytes() {
        let mut out = Vec::new();
        encode_records(std::iter::empty(), &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 0]);
        let records: Vec<RawRecord> = vec![(vec![1, 2], Some(vec![3])), (vec![4], None)];
        encode_records(
            records.iter().map(|(k, v)| (&k[..], v.as_deref())),
            &mut out,
        )
        .unwrap();
        assert_eq!(out[..4], [0, 0, 0, 2], "big-endian count");
        assert_eq!(parse_records(&out).unwrap(), records);
        assert_eq!(parse_records(&out[..out.len() - 1]), None);
        assert_eq!(parse_records(&[0xff, 0xff, 0xff, 0xff]), None);
    }
}
