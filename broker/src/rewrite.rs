//! The rewrite exports' common path: their arguments checked, the
//! mapper's call made on the fetch's bytes or its header slots, and its
//! output written before the call commits.

use crate::failure::{count, fail, size, Failure};
use crate::output::{encode_records, headroom, publish};
use crate::state::{Args, Parts, State};
use mirrorpid::batch::{HeaderView, SLOT_BYTES};
use mirrorpid::{Code, RewriteOptions};
use mirrorpid_abi::{FLAG_COMPLETE, FLAG_STRICT_CRC};

/// Both header rewrites: `slot_count` slots at `slots_ptr`.
#[inline(always)]
pub(crate) fn rewrite_slots(
    s: &mut State,
    handle: i32,
    src: SourceArg,
    (slots_ptr, slot_count): (i32, i32),
    fetch_len: i32,
    now_ms: i64,
    flags: i32,
) -> Result<i32, Failure> {
    // Too many slots for an i32 of bytes: a negative length, refused as a
    // negative count is.
    let slots_len = if slot_count > i32::MAX / SLOT_BYTES as i32 {
        -1
    } else {
        slot_count.wrapping_mul(SLOT_BYTES as i32)
    };
    let slots = (slots_ptr, slots_len);
    rewrite(s, handle, src, slots, Some(fetch_len), now_ms, flags)
}

/// The source cluster a rewrite names: its ID in a block, or a token from
/// `mp_source`.
#[derive(Clone, Copy)]
pub(crate) enum SourceArg {
    Block(i32, i32),
    Token(i32),
}

/// Every rewrite: `block` is the fetch's bytes, or (with `fetch_len`) its
/// header slots. The output is written before the rewrite commits, so that
/// running out of memory for it changes nothing.
#[inline(always)]
pub(crate) fn rewrite(
    s: &mut State,
    handle: i32,
    src: SourceArg,
    block: (i32, i32),
    fetch_len: Option<i32>,
    now_ms: i64,
    flags: i32,
) -> Result<i32, Failure> {
    if flags & !(FLAG_STRICT_CRC | FLAG_COMPLETE) != 0 {
        return Err(bad_flags(flags));
    }
    let options = RewriteOptions {
        strict_crc: flags & FLAG_STRICT_CRC != 0,
        complete: flags & FLAG_COMPLETE != 0,
        // The ABI reports no batch outcome.
        outcomes: false,
    };
    let fetch_len = match fetch_len {
        Some(n) => Some(size(n, "fetch length")?),
        None => None,
    };
    let (source, slot, buf) = match src {
        SourceArg::Block(ptr, len) => {
            let Args { source, slot, buf } = s.args(handle, (ptr, len), block)?;
            (source, slot.parts(), buf)
        }
        SourceArg::Token(token) => {
            let (slot, buf) = s.slot_and_block(handle, block)?;
            let (parts, sources) = slot.split();
            let i = (token as u32 as usize).wrapping_sub(1);
            let Some(source) = sources.get(i) else {
                return Err(bad_token(handle, token));
            };
            (source, parts, buf)
        }
    };
    let Parts {
        mapper,
        output,
        snapshot_required,
    } = slot;
    // Each batch (header slot) can make a binding and a record (about
    // 300 bytes and three copies of the source's ID); a batch takes 61
    // bytes or more, a slot SLOT_BYTES. A small fetch from a source of
    // a usual name needs no look.
    let id_len = source.as_str().len();
    if buf.len() > 4096 || id_len > 1024 {
        let per = if fetch_len.is_some() { SLOT_BYTES } else { 61 };
        headroom((buf.len() / per + 1).saturating_mul(320 + 3 * id_len))?;
    }
    let call = mapper.begin(now_ms);
    let mut view;
    let rewrite = match fetch_len {
        Some(n) => {
            view = HeaderView::new(buf, n)?;
            call.rewrite_headers(source, &mut view, options)?
        }
        None => call.rewrite(source, buf, options)?,
    };
    encode_records(rewrite.records(), output)?;
    *snapshot_required = rewrite.snapshot_required();
    let consumed = count(rewrite.consumed())?;
    rewrite.finish();
    publish(output, *snapshot_required);
    Ok(consumed)
}

/// The failure of a token the mapper never gave out.
#[cold]
#[inline(never)]
fn bad_token(handle: i32, token: i32) -> Failure {
    fail(
        Code::BadArgument,
        format_args!("mapper {handle} gave out no source token {token} (mp_source)"),
    )
}

/// The failure of unknown flag bits.
#[inline(never)]
fn bad_flags(flags: i32) -> Failure {
    fail(Code::BadArgument, format_args!("flags {flags:#x}"))
}
