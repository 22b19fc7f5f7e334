//! # mirrorpid-broker
//!
//! mirrorpid as a module for non-JavaScript hosts (a JVM, Go, C++ or Rust
//! broker or proxy loading it with wasmtime, wazero, Chicory, V8 …). Built
//! for `wasm32-unknown-unknown`, it **imports nothing** and exports `memory`
//! plus the C-style functions below; `docs/ABI.md` documents them byte for
//! byte.
//!
//! This crate is a thin adapter: each export turns (pointer, length) pairs
//! into slices, calls the same `mirrorpid` method a native caller would,
//! and turns the result into a status and output bytes. Conventions:
//!
//! * Every function returns an `i32` (`i64` where noted): `>= 0` is success
//!   (a value), `< 0` is `-code`, with the message in
//!   `mp_last_error_ptr/len`.
//! * Pointers the host passes must lie inside a live block from `mp_alloc`:
//!   anything else is `-101 BadPointer`, never a trap and never a write to
//!   memory the module did not hand out. The layer has no `unsafe` blocks
//!   (but for its allocator): it reaches host-written bytes through the
//!   blocks it owns.
//! * Output (records, snapshots) lives in a per-mapper buffer, valid until
//!   the next call on that mapper; `mp_output_info` says where the last
//!   call's is without another call.
//! * Running out of memory is `-103 OutOfMemory` with nothing changed,
//!   never a trap (`reserve.rs`), and the module declares a maximum memory
//!   of 2 GiB, so every pointer and length it returns is a non-negative
//!   `i32`.

#![deny(missing_docs)]

mod blocks;
mod failure;
mod output;
mod reserve;
mod rewrite;
mod state;

use failure::{address, bad_handle, count, fail, size, Failure};
use output::{encode_records, headroom, output_info_ptr, publish};
use rewrite::{rewrite, rewrite_slots, SourceArg};
use state::{call, call_allocating, peek, Args, Slot};

#[global_allocator]
static ALLOCATOR: reserve::WithReserve = reserve::WithReserve;

use mirrorpid::{Code, Mapper, MapperConfig, StateRecord};
use mirrorpid_abi::{self as abi, ABI_VERSION};

/// The ABI version ([`ABI_VERSION`]).
#[no_mangle]
pub extern "C" fn mp_abi_version() -> i32 {
    ABI_VERSION
}

/// Seeds the hash keys of every mapper made or restored after it with 64
/// random bits from the host (the module has no randomness of its own):
/// without it a source that knows the module could choose PIDs that slow
/// its lookups down. Changes no result. Returns 0.
#[no_mangle]
pub extern "C" fn mp_hash_seed(seed: i64) -> i32 {
    call(|_| {
        mirrorpid::mapper::seed_hashing(seed as u64);
        Ok(0)
    })
}

/// Allocates `len` (> 0) zeroed bytes for the host to fill; returns the
/// pointer or `-code`.
#[no_mangle]
pub extern "C" fn mp_alloc(len: i32) -> i32 {
    call_allocating(|s| {
        let n = size(len, "length")?;
        if n == 0 {
            return Err(fail(Code::BadArgument, "mp_alloc(0)"));
        }
        let mut v: Vec<u8> = Vec::new();
        v.try_reserve_exact(n)
            .map_err(|_| fail(Code::OutOfMemory, format_args!("{n} bytes")))?;
        v.resize(n, 0);
        let block = v.into_boxed_slice();
        let ptr = block.as_ptr() as usize;
        // A block at or above 2^31 would read as a negative status.
        let ptr32 = i32::try_from(ptr)
            .map_err(|_| fail(Code::OutOfMemory, "no block below 2^31 is free"))?;
        s.allocs.insert(ptr, block)?;
        Ok(ptr32)
    })
}

/// Frees a block from `mp_alloc` (its exact pointer).
#[no_mangle]
pub extern "C" fn mp_free(ptr: i32) -> i32 {
    call(|s| {
        if s.allocs.remove(address(ptr)) {
            return Ok(0);
        }
        Err(fail(
            Code::BadPointer,
            format_args!("{} is not a live block from mp_alloc", address(ptr)),
        ))
    })
}

/// Creates a mapper from a JSON config (`{"topicId", "partition",
/// "durability"?, "producerExpirationMs"?}`); returns its handle (> 0).
#[no_mangle]
pub extern "C" fn mp_mapper_new(config_ptr: i32, config_len: i32) -> i32 {
    call_allocating(|s| {
        let text = s.text(config_ptr, config_len, "config")?;
        let mapper = Mapper::new(MapperConfig::from_json(&text)?)?;
        s.add(mapper)
    })
}

/// Frees a mapper; its handle is never valid again.
#[no_mangle]
pub extern "C" fn mp_mapper_free(handle: i32) -> i32 {
    call(|s| {
        s.mappers
            .remove(handle)
            .map(|_| 0)
            .ok_or_else(|| bad_handle(handle))
    })
}

/// Rewrites the batches in [buf_ptr, +buf_len) in place for source cluster
/// [src_ptr, +src_len) at `now_ms`; `flags` = `FLAG_STRICT_CRC |
/// FLAG_COMPLETE`. Returns the bytes consumed (a truncated tail is not);
/// the records are in the output buffer, the flag in
/// `mp_snapshot_required`. On error nothing changed.
#[no_mangle]
pub extern "C" fn mp_rewrite(
    handle: i32,
    src_ptr: i32,
    src_len: i32,
    buf_ptr: i32,
    buf_len: i32,
    now_ms: i64,
    flags: i32,
) -> i32 {
    let buf = (buf_ptr, buf_len);
    let src = SourceArg::Block(src_ptr, src_len);
    call_allocating(|s| rewrite(s, handle, src, buf, None, now_ms, flags))
}

/// [`mp_rewrite`] on a fetch of `fetch_len` bytes that stays in the host's
/// memory, seen through `slot_count` header slots at `slots_ptr`
/// (`mirrorpid::batch::HeaderView`; `docs/ABI.md` has the layout and the
/// gathering loop): the same checks, results, records and consumed count,
/// with each changed batch's PID and CRC written into its slot. `flags`
/// as for `mp_rewrite`, but strict CRC is refused (the records are not
/// here). On error nothing changed, the slots included.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn mp_rewrite_headers(
    handle: i32,
    src_ptr: i32,
    src_len: i32,
    slots_ptr: i32,
    slot_count: i32,
    fetch_len: i32,
    now_ms: i64,
    flags: i32,
) -> i32 {
    let (src, slots) = (SourceArg::Block(src_ptr, src_len), (slots_ptr, slot_count));
    call_allocating(|s| rewrite_slots(s, handle, src, slots, fetch_len, now_ms, flags))
}

/// Names source cluster [src_ptr, +src_len) for [`mp_rewrite_headers_from`]
/// on mapper `handle`: returns its token (> 0), the same for the same ID,
/// valid for the mapper's life. The ID is checked here as a rewrite checks
/// it (UTF-8, 1 to 32767 bytes). A host mirroring one path asks once and
/// passes the token on every fetch, so that no call compares the ID again.
/// A mapper holds at most [`state::MAX_SOURCES`] IDs (`CapacityExceeded`).
#[no_mangle]
pub extern "C" fn mp_source(handle: i32, src_ptr: i32, src_len: i32) -> i32 {
    // Checked in the order a rewrite checks them: UTF-8, the mapper, the
    // ID's length.
    call_allocating(|s| {
        let id = s.text(src_ptr, src_len, "source cluster ID")?;
        let slot = s.slot(handle)?;
        mirrorpid::SourceCluster::new(&id)?;
        slot.add_source(&id)
    })
}

/// [`mp_rewrite_headers`] from the source cluster of `source`, a token of
/// this mapper's from [`mp_source`]: the same checks, results, records and
/// writes, with the source found by its token. An unknown token is
/// `BadArgument`, with nothing changed.
#[no_mangle]
pub extern "C" fn mp_rewrite_headers_from(
    handle: i32,
    source: i32,
    slots_ptr: i32,
    slot_count: i32,
    fetch_len: i32,
    now_ms: i64,
    flags: i32,
) -> i32 {
    let (src, slots) = (SourceArg::Token(source), (slots_ptr, slot_count));
    call_allocating(|s| rewrite_slots(s, handle, src, slots, fetch_len, now_ms, flags))
}

/// Maps one PID from source cluster [src_ptr, +src_len) at `now_ms`, as a
/// rewrite maps a batch's: returns the binding's salt (0 to 63), or
/// [`abi::MAP_NOT_A_PRODUCER`] for a PID below 0 (passed through). The
/// output is the record list of the binding's record while it is pending,
/// then the mapped PID (big-endian i64); `mp_snapshot_required` says
/// whether it is a collision. On error nothing changed.
#[no_mangle]
pub extern "C" fn mp_map(handle: i32, src_ptr: i32, src_len: i32, pid: i64, now_ms: i64) -> i32 {
    call_allocating(|s| {
        let Args { source, slot, .. } = s.args(handle, (src_ptr, src_len), (0, 0))?;
        let mut call = slot.mapper.begin(now_ms);
        let outcome = call.map(source.as_str(), pid)?;
        let records: &[StateRecord] = match &outcome.record {
            Some(r) => std::slice::from_ref(r),
            None => &[],
        };
        // The record list, then the mapped PID.
        encode_records(records, &mut slot.output)?;
        slot.output
            .try_reserve_exact(8)
            .map_err(|_| fail(Code::OutOfMemory, "the output buffer"))?;
        slot.output.extend_from_slice(&outcome.mapped.to_be_bytes());
        call.commit();
        slot.snapshot_required = outcome.snapshot_required;
        publish(&slot.output, slot.snapshot_required);
        Ok(outcome.salt.map_or(abi::MAP_NOT_A_PRODUCER, i32::from))
    })
}

/// 1 if the last rewrite on `handle` caused a collision (snapshot the
/// producer state), else 0.
#[no_mangle]
pub extern "C" fn mp_snapshot_required(handle: i32) -> i32 {
    call(|s| Ok(i32::from(s.slot(handle)?.snapshot_required)))
}

/// Pointer to the 12 bytes that say where the output of the last
/// successful call that wrote one is (`mirrorpid_abi::OutputInfo`):
/// fixed for the instance's life, so a host asks once and reads them after
/// each call instead of calling the three exports below.
#[no_mangle]
pub extern "C" fn mp_output_info() -> i32 {
    output_info_ptr()
}

/// Pointer to the output of the last call on `handle`.
#[no_mangle]
pub extern "C" fn mp_output_ptr(handle: i32) -> i32 {
    call(|s| Ok(s.slot(handle)?.output.as_ptr() as usize as i32))
}

/// Length of the output of the last call on `handle`.
#[no_mangle]
pub extern "C" fn mp_output_len(handle: i32) -> i32 {
    call(|s| count(s.slot(handle)?.output.len()))
}

/// Applies one `__mirror_state` record; `value_len` -1 is a tombstone.
/// Returns 0 skipped (another partition), 1 bound, 2 deleted, 3 bound and
/// other identities holding that slot removed; plus 4 when the record
/// contradicts the trust declaration (`abi::load_status`).
#[no_mangle]
pub extern "C" fn mp_load_record(
    handle: i32,
    key_ptr: i32,
    key_len: i32,
    value_ptr: i32,
    value_len: i32,
) -> i32 {
    call_allocating(|s| {
        s.slot(handle)?;
        let key = s.bytes(key_ptr, key_len)?;
        let value = match value_len {
            -1 => None,
            n => Some(s.bytes(value_ptr, n)?),
        };
        let record = StateRecord::decode(key, value)?;
        let outcome = s.slot(handle)?.mapper.load_record(&record)?;
        Ok(abi::load_status(&outcome))
    })
}

/// Writes the mapper's snapshot to the output buffer; returns its length.
#[no_mangle]
pub extern "C" fn mp_snapshot(handle: i32) -> i32 {
    call_allocating(|s| {
        let slot = s.slot(handle)?;
        slot.output = slot.mapper.try_snapshot()?;
        let n = count(slot.output.len())?;
        publish(&slot.output, slot.snapshot_required);
        Ok(n)
    })
}

/// Creates a mapper from snapshot bytes; returns its handle (> 0).
#[no_mangle]
pub extern "C" fn mp_restore(ptr: i32, len: i32) -> i32 {
    call_allocating(|s| {
        let bytes = s.bytes(ptr, len)?;
        // A restored mapper takes about three times its snapshot's size.
        headroom(bytes.len().saturating_mul(3))?;
        let mapper = Mapper::restore(bytes)?;
        s.add(mapper)
    })
}

/// Expires idle bindings at `now_ms`; returns how many tombstones were
/// written to the output buffer (records format).
#[no_mangle]
pub extern "C" fn mp_expire(handle: i32, now_ms: i64) -> i32 {
    call_allocating(|s| tombstones(s.slot(handle)?, |m, then| m.expire_then(now_ms, then)))
}

/// Expires every binding of one mapped PID (the producer state expired it);
/// returns how many tombstones were written to the output buffer.
#[no_mangle]
pub extern "C" fn mp_expire_pid(handle: i32, mapped: i64) -> i32 {
    call_allocating(|s| tombstones(s.slot(handle)?, |m, then| m.expire_pid_then(mapped, then)))
}

/// The output writer an expiry runs before it drops anything.
type Then<'a> = &'a mut dyn FnMut(&[StateRecord]) -> mirrorpid::Result<()>;

/// Runs an expiry on the slot's mapper with its tombstones written to the
/// output first (no room for them: nothing expires).
fn tombstones(
    slot: &mut Slot,
    expire: impl FnOnce(&mut Mapper, Then<'_>) -> mirrorpid::Result<Vec<StateRecord>>,
) -> Result<i32, Failure> {
    let output = &mut slot.output;
    let records = expire(&mut slot.mapper, &mut |r| encode_records(r, output))?;
    let n = count(records.len())?;
    publish(&slot.output, slot.snapshot_required);
    Ok(n)
}

/// Confirms every pending binding of `handle`: the host calls it once the
/// records of every `mp_rewrite` since the last confirm are durable, and
/// only then appends those batches. Returns how many bindings it confirmed.
#[no_mangle]
pub extern "C" fn mp_confirm(handle: i32) -> i32 {
    call(|s| count(s.slot(handle)?.mapper.confirm()))
}

/// Takes back every pending binding of `handle` and every change since the
/// last confirm (the host could not make the records durable and will not
/// append the batches). Returns how many bindings it removed.
#[no_mangle]
pub extern "C" fn mp_abort(handle: i32) -> i32 {
    call(|s| count(s.slot(handle)?.mapper.abort()))
}

/// How many bindings of `handle` await `mp_confirm`.
#[no_mangle]
pub extern "C" fn mp_pending(handle: i32) -> i32 {
    call(|s| count(s.slot(handle)?.mapper.pending()))
}

/// How many identities `handle` has bound.
#[no_mangle]
pub extern "C" fn mp_mapper_len(handle: i32) -> i32 {
    call(|s| count(s.slot(handle)?.mapper.len()))
}

/// The bytes the module's live allocations hold (mappers, their outputs,
/// `mp_alloc` blocks), the 1 MiB reserve aside: what a host sizes an
/// instance's memory for its partitions by.
#[no_mangle]
pub extern "C" fn mp_heap_bytes() -> i32 {
    reserve::live_bytes() as i32
}

/// Pointer to the UTF-8 message of the last failed call.
#[no_mangle]
pub extern "C" fn mp_last_error_ptr() -> i32 {
    peek(|s| s.last_error.as_ptr() as usize as i32)
}

/// Length of the message of the last failed call.
#[no_mangle]
pub extern "C" fn mp_last_error_len() -> i32 {
    peek(|s| s.last_error.len() as i32)
}

/// Bench-only (feature `peer`): the naive peer of `mp_rewrite` on the same
/// arguments (`mirrorpid::peer`); returns the batches rewritten.
#[cfg(feature = "peer")]
#[no_mangle]
pub extern "C" fn mp_rewrite_naive(
    handle: i32,
    src_ptr: i32,
    src_len: i32,
    buf_ptr: i32,
    buf_len: i32,
    now_ms: i64,
) -> i32 {
    call(|s| {
        let Args { source, slot, buf } = s.args(handle, (src_ptr, src_len), (buf_ptr, buf_len))?;
        let n = mirrorpid::peer::rewrite_naive(&mut slot.mapper, source.as_str(), buf, now_ms)?;
        publish(&slot.output, slot.snapshot_required);
        count(n)
    })
}
