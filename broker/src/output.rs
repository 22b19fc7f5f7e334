//! Where a call's output goes: each mapper's output buffer (records,
//! snapshots), and the 12 bytes of `mp_output_info` that say where the
//! last one is, which the host reads without a call.

use crate::failure::{fail, Failure};
use crate::reserve;
use mirrorpid::{Code, Error, StateRecord};
use mirrorpid_abi::{self as abi, OutputInfo};
use std::cell::Cell;

thread_local! {
    /// `mp_output_info`'s 12 bytes, at one address for the instance's
    /// life, where the host reads them between calls.
    static OUTPUT_INFO: Cell<[u8; OutputInfo::BYTES]> = const { Cell::new([0; OutputInfo::BYTES]) };

    /// What `OUTPUT_INFO` holds, decoded.
    static PUBLISHED: Cell<OutputInfo> = const {
        Cell::new(OutputInfo { ptr: 0, len: 0, snapshot_required: false })
    };
}

/// Where `mp_output_info`'s bytes are.
pub(crate) fn output_info_ptr() -> i32 {
    OUTPUT_INFO
        .try_with(|c| c.as_ptr() as usize as i32)
        .unwrap_or(0)
}

/// Records a mapper's output and flag as the last call's, for
/// `mp_output_info`: every export that writes an output runs this once it
/// has succeeded. The 12 bytes are written only when they change (a
/// rewrite of bound producers leaves the same empty list where it was).
#[inline(always)]
pub(crate) fn publish(output: &[u8], snapshot_required: bool) {
    let (ptr, len) = (output.as_ptr() as usize as u32, output.len() as u32);
    let _ = PUBLISHED.try_with(|last| {
        // Field by field: the common case reads three words and writes none.
        let was = last.get();
        if was.ptr != ptr || was.len != len || was.snapshot_required != snapshot_required {
            let info = OutputInfo {
                ptr,
                len,
                snapshot_required,
            };
            last.set(info);
            write_info(info);
        }
    });
}

/// Writes `mp_output_info`'s bytes.
#[inline(never)]
fn write_info(info: OutputInfo) {
    let _ = OUTPUT_INFO.try_with(|c| c.set(info.encode()));
}

/// Writes records in the record-list layout (`mirrorpid_abi`), having
/// made room for all of it first: a call writes its output before it
/// commits, so running out of memory here undoes the call.
#[inline(always)]
pub(crate) fn encode_records(records: &[StateRecord], out: &mut Vec<u8>) -> mirrorpid::Result<()> {
    // The common case, every producer bound, after a call that was too:
    // the output holds the empty list already.
    if records.is_empty() && out[..] == abi::EMPTY_RECORDS {
        return Ok(());
    }
    encode_some(records, out)
}

/// The output a mapper may keep room for between calls without its last
/// output needing it (four times this, less than one record): a mapper
/// whose last output was the empty record list keeps next to nothing, as
/// thousands of mostly idle mappers share an instance.
const SMALL_OUTPUT: usize = 16;

/// [`encode_records`] when the output changes.
#[inline(never)]
fn encode_some(records: &[StateRecord], out: &mut Vec<u8>) -> mirrorpid::Result<()> {
    let oom = || Error::OutOfMemory {
        what: "the output buffer",
    };
    let mut encoded = Vec::new();
    encoded
        .try_reserve_exact(records.len())
        .map_err(|_| oom())?;
    for r in records {
        encoded.push(r.encode()?);
    }
    let size = 4 + encoded
        .iter()
        .map(|(k, v)| 8 + k.len() + v.as_ref().map_or(0, Vec::len))
        .sum::<usize>();
    // The old output stays as it was unless the new one fits: in place
    // when it has room, else in a new buffer that replaces it. A buffer
    // far larger than the new output (a snapshot's, a flood's records) is
    // replaced too, so that an idle mapper holds no more than its last
    // output needs: a broker holds thousands.
    if out.capacity() < size || out.capacity() > size.max(SMALL_OUTPUT) * 4 {
        let mut fresh = Vec::new();
        fresh.try_reserve_exact(size).map_err(|_| oom())?;
        *out = fresh;
    }
    abi::encode_records(encoded.iter().map(|(k, v)| (&k[..], v.as_deref())), out).ok_or(
        Error::OutOfMemory {
            what: "a record list (longer than an i32 can say)",
        },
    )
}

/// Makes sure memory can hold `bytes` more (one allocation, freed at once,
/// which leaves the memory grown for the call to use): a call whose small
/// allocations could outgrow the reserve checks this first.
#[inline(always)]
pub(crate) fn headroom(bytes: usize) -> Result<(), Failure> {
    if bytes <= reserve::RESERVE_BYTES / 2 {
        return Ok(());
    }
    probe(bytes)
}

/// [`headroom`]'s allocation, out of the common path.
#[inline(never)]
fn probe(bytes: usize) -> Result<(), Failure> {
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes).map_err(|_| {
        fail(
            Code::OutOfMemory,
            format_args!("no room for {bytes} bytes of work"),
        )
    })
}
