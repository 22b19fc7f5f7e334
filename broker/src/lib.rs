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
//!   anything else is `-ERR_BAD_POINTER`, never a trap and never a write to
//!   memory the module did not hand out. The layer has no `unsafe` blocks:
//!   it reaches host-written bytes through the blocks it owns.
//! * Output (records, snapshots) lives in a per-mapper buffer, valid until
//!   the next call on that mapper.

#![deny(missing_docs)]

use std::cell::RefCell;
use std::collections::BTreeMap;

use mirrorpid::{Error, Mapper, MapperConfig, RewriteOptions, StateRecord};

/// The ABI version `mp_abi_version` returns: 2 since bindings wait for
/// `mp_confirm` (docs/ABI.md, "Persistence protocol").
pub const ABI_VERSION: i32 = 2;
/// No mapper has this handle (never created, or freed).
pub const ERR_BAD_HANDLE: i32 = 100;
/// A (pointer, length) pair outside every live `mp_alloc` block.
pub const ERR_BAD_POINTER: i32 = 101;
/// A length, flag or other argument out of its range.
pub const ERR_BAD_ARGUMENT: i32 = 102;
/// The module could not allocate memory.
pub const ERR_OUT_OF_MEMORY: i32 = 103;
/// Rewrite flag: verify each batch's CRC first.
pub const FLAG_STRICT_CRC: i32 = 1;
/// Rewrite flag: the buffer must end on a batch boundary.
pub const FLAG_COMPLETE: i32 = 2;

struct Slot {
    mapper: Mapper,
    output: Vec<u8>,
    snapshot_required: bool,
}

#[derive(Default)]
struct State {
    allocs: BTreeMap<usize, Box<[u8]>>,
    mappers: BTreeMap<i32, Slot>,
    next_handle: i32,
    last_error: String,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// An error of this layer: a code and a message.
struct Failure(i32, String);

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure(e.code(), e.to_string())
    }
}

fn bad_pointer(ptr: usize, len: usize) -> Failure {
    Failure(
        ERR_BAD_POINTER,
        format!("BadPointer: [{ptr}, {ptr}+{len}) is not inside a block from mp_alloc"),
    )
}

fn bad_handle(handle: i32) -> Failure {
    Failure(
        ERR_BAD_HANDLE,
        format!("BadHandle: no mapper has handle {handle}"),
    )
}

impl State {
    /// The live allocation holding [ptr, ptr+len): (its start, offset of ptr).
    fn locate(&self, ptr: usize, len: usize) -> Result<usize, Failure> {
        let (&start, block) = self
            .allocs
            .range(..=ptr)
            .next_back()
            .ok_or_else(|| bad_pointer(ptr, len))?;
        let off = ptr - start;
        match off.checked_add(len) {
            Some(end) if end <= block.len() => Ok(start),
            _ => Err(bad_pointer(ptr, len)),
        }
    }

    fn bytes(&self, ptr: usize, len: usize) -> Result<&[u8], Failure> {
        if len == 0 {
            return Ok(&[]);
        }
        let start = self.locate(ptr, len)?;
        let off = ptr - start;
        Ok(&self.allocs[&start][off..off + len])
    }

    fn text(&self, ptr: usize, len: usize, what: &str) -> Result<String, Failure> {
        let raw = self.bytes(ptr, len)?;
        String::from_utf8(raw.to_vec()).map_err(|_| {
            Failure(
                ERR_BAD_ARGUMENT,
                format!("BadArgument: {what} is not UTF-8"),
            )
        })
    }

    fn slot(&mut self, handle: i32) -> Result<&mut Slot, Failure> {
        self.mappers
            .get_mut(&handle)
            .ok_or_else(|| bad_handle(handle))
    }

    fn add(&mut self, mapper: Mapper) -> Result<i32, Failure> {
        if self.next_handle == i32::MAX {
            return Err(Failure(ERR_OUT_OF_MEMORY, "OutOfHandles".into()));
        }
        self.next_handle += 1;
        let slot = Slot {
            mapper,
            output: Vec::new(),
            snapshot_required: false,
        };
        self.mappers.insert(self.next_handle, slot);
        Ok(self.next_handle)
    }
}

/// Runs `f` on the module state; turns a failure into `-code` and records
/// its message.
fn call<T: From<i32>>(f: impl FnOnce(&mut State) -> Result<T, Failure>) -> T {
    STATE.with(|s| {
        let mut state = s.borrow_mut();
        match f(&mut state) {
            Ok(v) => v,
            Err(Failure(code, message)) => {
                state.last_error = message;
                T::from(-code)
            }
        }
    })
}

fn size(v: i32, what: &str) -> Result<usize, Failure> {
    usize::try_from(v).map_err(|_| {
        Failure(
            ERR_BAD_ARGUMENT,
            format!("BadArgument: {what} {v} is negative"),
        )
    })
}

fn count(n: usize) -> Result<i32, Failure> {
    i32::try_from(n).map_err(|_| Failure(ERR_BAD_ARGUMENT, "BadArgument: result too large".into()))
}

/// Writes records as `i32 count | count × (i32 keyLen | key | i32 valueLen
/// (-1 = null) | value)`, big-endian.
fn encode_records(records: &[StateRecord], out: &mut Vec<u8>) -> Result<(), Failure> {
    out.clear();
    out.extend_from_slice(&count(records.len())?.to_be_bytes());
    for r in records {
        let (key, value) = r.encode()?;
        out.extend_from_slice(&count(key.len())?.to_be_bytes());
        out.extend_from_slice(&key);
        match value {
            Some(v) => {
                out.extend_from_slice(&count(v.len())?.to_be_bytes());
                out.extend_from_slice(&v);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    Ok(())
}

/// The ABI version (1).
#[no_mangle]
pub extern "C" fn mp_abi_version() -> i32 {
    ABI_VERSION
}

/// Allocates `len` (> 0) zeroed bytes for the host to fill; returns the
/// pointer or `-code`.
#[no_mangle]
pub extern "C" fn mp_alloc(len: i32) -> i32 {
    call(|s| {
        let n = size(len, "length")?;
        if n == 0 {
            return Err(Failure(ERR_BAD_ARGUMENT, "BadArgument: mp_alloc(0)".into()));
        }
        let mut v: Vec<u8> = Vec::new();
        v.try_reserve_exact(n)
            .map_err(|_| Failure(ERR_OUT_OF_MEMORY, format!("OutOfMemory: {n} bytes")))?;
        v.resize(n, 0);
        let block = v.into_boxed_slice();
        let ptr = block.as_ptr() as usize;
        let ptr32 = i32::try_from(ptr)
            .map_err(|_| Failure(ERR_OUT_OF_MEMORY, "OutOfMemory: address space".into()))?;
        s.allocs.insert(ptr, block);
        Ok(ptr32)
    })
}

/// Frees a block from `mp_alloc` (its exact pointer).
#[no_mangle]
pub extern "C" fn mp_free(ptr: i32) -> i32 {
    call(|s| {
        let key = usize::try_from(ptr).map_err(|_| bad_pointer(0, 0))?;
        s.allocs
            .remove(&key)
            .map(|_| 0)
            .ok_or_else(|| bad_pointer(key, 0))
    })
}

/// Creates a mapper from a JSON config (`{"topicId", "partition",
/// "durability"?, "producerExpirationMs"?}`); returns its handle (> 0).
#[no_mangle]
pub extern "C" fn mp_mapper_new(config_ptr: i32, config_len: i32) -> i32 {
    call(|s| {
        let text = s.text(
            size(config_ptr, "pointer")?,
            size(config_len, "length")?,
            "config",
        )?;
        let mapper = Mapper::new(MapperConfig::from_json(&text)?)?;
        s.add(mapper)
    })
}

/// Frees a mapper; its handle is never valid again.
#[no_mangle]
pub extern "C" fn mp_mapper_free(handle: i32) -> i32 {
    call(|s| {
        s.mappers
            .remove(&handle)
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
    call(|s| {
        if flags & !(FLAG_STRICT_CRC | FLAG_COMPLETE) != 0 {
            return Err(Failure(
                ERR_BAD_ARGUMENT,
                format!("BadArgument: flags {flags:#x}"),
            ));
        }
        let options = RewriteOptions {
            strict_crc: flags & FLAG_STRICT_CRC != 0,
            complete: flags & FLAG_COMPLETE != 0,
        };
        let source = s.text(
            size(src_ptr, "pointer")?,
            size(src_len, "length")?,
            "source cluster ID",
        )?;
        let (ptr, len) = (size(buf_ptr, "pointer")?, size(buf_len, "length")?);
        s.slot(handle)?;
        let start = if len == 0 {
            None
        } else {
            Some(s.locate(ptr, len)?)
        };
        let State {
            allocs, mappers, ..
        } = s;
        let slot = mappers.get_mut(&handle).ok_or_else(|| bad_handle(handle))?;
        let mut empty = [0u8; 0];
        let buf: &mut [u8] = match start {
            Some(start) => {
                let block = allocs
                    .get_mut(&start)
                    .ok_or_else(|| bad_pointer(ptr, len))?;
                &mut block[ptr - start..ptr - start + len]
            }
            None => &mut empty,
        };
        let result = slot.mapper.rewrite(&source, buf, now_ms, options)?;
        encode_records(&result.records, &mut slot.output)?;
        slot.snapshot_required = result.snapshot_required;
        count(result.consumed)
    })
}

/// 1 if the last rewrite on `handle` caused a collision (snapshot the
/// producer state), else 0.
#[no_mangle]
pub extern "C" fn mp_snapshot_required(handle: i32) -> i32 {
    call(|s| Ok(i32::from(s.slot(handle)?.snapshot_required)))
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
/// Returns 0 skipped (another partition), 1 bound, 2 deleted.
#[no_mangle]
pub extern "C" fn mp_load_record(
    handle: i32,
    key_ptr: i32,
    key_len: i32,
    value_ptr: i32,
    value_len: i32,
) -> i32 {
    call(|s| {
        s.slot(handle)?;
        let key = s.bytes(size(key_ptr, "pointer")?, size(key_len, "length")?)?;
        let value = match value_len {
            -1 => None,
            n => Some(s.bytes(size(value_ptr, "pointer")?, size(n, "length")?)?),
        };
        let record = StateRecord::decode(key, value)?;
        let outcome = s.slot(handle)?.mapper.load_record(&record)?;
        Ok(match outcome {
            mirrorpid::LoadOutcome::Skipped => 0,
            mirrorpid::LoadOutcome::Bound { .. } => 1,
            mirrorpid::LoadOutcome::Deleted { .. } => 2,
        })
    })
}

/// Writes the mapper's snapshot to the output buffer; returns its length.
#[no_mangle]
pub extern "C" fn mp_snapshot(handle: i32) -> i32 {
    call(|s| {
        let slot = s.slot(handle)?;
        slot.output = slot.mapper.snapshot();
        count(slot.output.len())
    })
}

/// Creates a mapper from snapshot bytes; returns its handle (> 0).
#[no_mangle]
pub extern "C" fn mp_restore(ptr: i32, len: i32) -> i32 {
    call(|s| {
        let bytes = s.bytes(size(ptr, "pointer")?, size(len, "length")?)?;
        let mapper = Mapper::restore(bytes)?;
        s.add(mapper)
    })
}

/// Expires idle bindings at `now_ms`; returns how many tombstones were
/// written to the output buffer (records format).
#[no_mangle]
pub extern "C" fn mp_expire(handle: i32, now_ms: i64) -> i32 {
    call(|s| tombstones(s.slot(handle)?, |m| m.expire(now_ms)))
}

/// Expires every binding of one mapped PID (the producer state expired it);
/// returns how many tombstones were written to the output buffer.
#[no_mangle]
pub extern "C" fn mp_expire_pid(handle: i32, mapped: i64) -> i32 {
    call(|s| tombstones(s.slot(handle)?, |m| m.expire_pid(mapped)))
}

/// Runs an expiry on the slot's mapper and puts its tombstones in the output.
fn tombstones(
    slot: &mut Slot,
    expire: impl FnOnce(&mut Mapper) -> mirrorpid::Result<Vec<StateRecord>>,
) -> Result<i32, Failure> {
    let records = expire(&mut slot.mapper)?;
    encode_records(&records, &mut slot.output)?;
    count(records.len())
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

/// Pointer to the UTF-8 message of the last failed call.
#[no_mangle]
pub extern "C" fn mp_last_error_ptr() -> i32 {
    STATE.with(|s| s.borrow().last_error.as_ptr() as usize as i32)
}

/// Length of the message of the last failed call.
#[no_mangle]
pub extern "C" fn mp_last_error_len() -> i32 {
    STATE.with(|s| s.borrow().last_error.len() as i32)
}
