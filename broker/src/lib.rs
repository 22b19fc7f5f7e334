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
//!   the next call on that mapper.
//! * Running out of memory is `-103 OutOfMemory` with nothing changed,
//!   never a trap (`reserve.rs`), and the module declares a maximum memory
//!   of 2 GiB, so every pointer and length it returns is a non-negative
//!   `i32`.

#![deny(missing_docs)]

mod reserve;

#[global_allocator]
static ALLOCATOR: reserve::WithReserve = reserve::WithReserve;

use mirrorpid::abi::{self, ABI_VERSION, FLAG_COMPLETE, FLAG_STRICT_CRC};
use mirrorpid::batch::{HeaderView, SLOT_BYTES};
use mirrorpid::rewrite::Fetch;
use mirrorpid::{Code, Error, Mapper, MapperConfig, RewriteOptions, RewriteResult, StateRecord};
use std::cell::RefCell;

struct Slot {
    mapper: Mapper,
    output: Vec<u8>,
    snapshot_required: bool,
    /// Reused by every `mp_rewrite`, so that a call on bound producers
    /// allocates nothing.
    result: RewriteResult,
}

/// A map kept as a vector sorted by key, searched by bisection: the module
/// holds a few blocks and mappers, and two B-tree maps were 8 KiB of it.
/// Entries are reached through `as_slice()[i]`, not `self.0[i]`: at
/// `opt-level = "z"` indexing a `Vec` is a call to its `Index` impl, while
/// indexing a slice is inlined (docs/PERFORMANCE.md).
struct Sorted<K, V>(Vec<(K, V)>);

impl<K, V> Default for Sorted<K, V> {
    fn default() -> Self {
        Sorted(Vec::new())
    }
}

impl<K: Ord + Copy, V> Sorted<K, V> {
    #[inline(always)]
    fn find(&self, key: K) -> Result<usize, usize> {
        // Bisection written out: `binary_search_by`'s closure is a call
        // per step in the size-optimised build.
        let (mut lo, mut hi) = (0, self.0.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.0.as_slice()[mid].0.cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    fn get_mut(&mut self, key: K) -> Option<&mut V> {
        let i = self.find(key).ok()?;
        Some(&mut self.0.as_mut_slice()[i].1)
    }

    /// The index of the entry with the greatest key at or below `key`.
    #[inline(always)]
    fn at_or_below(&self, key: K) -> Option<usize> {
        match self.find(key) {
            Ok(i) => Some(i),
            Err(i) => i.checked_sub(1),
        }
    }

    /// Inserts a new key (an existing one's value is replaced); fails,
    /// changing nothing, when there is no memory for the entry.
    fn insert(&mut self, key: K, value: V) -> Result<(), Failure> {
        match self.find(key) {
            Ok(i) => self.0.as_mut_slice()[i].1 = value,
            Err(i) => {
                self.0
                    .try_reserve(1)
                    .map_err(|_| fail(Code::OutOfMemory, "no room to track one more"))?;
                self.0.insert(i, (key, value));
            }
        }
        Ok(())
    }

    fn remove(&mut self, key: K) -> Option<V> {
        let i = self.find(key).ok()?;
        Some(self.0.remove(i).1)
    }
}

/// What `State::with_fetch` runs: the source, the mapper's slot and the
/// host's bytes in, a status out.
type FetchCall<'a> = dyn FnMut(&str, &mut Slot, &mut [u8]) -> Result<i32, Failure> + 'a;

/// The blocks `mp_alloc` handed out, by address.
type Blocks = Sorted<usize, Box<[u8]>>;

#[derive(Default)]
struct State {
    allocs: Blocks,
    mappers: Sorted<i32, Slot>,
    next_handle: i32,
    last_error: String,
    /// The source cluster ID of the last `mp_rewrite`, kept between calls:
    /// a call from the same source compares its bytes and neither checks
    /// nor copies them again (no allocation per call either).
    source: String,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// An error of this layer: a code and its message (which starts with the
/// code's name).
struct Failure(Code, String);

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure(e.kind(), e.to_string())
    }
}

/// A failure of this layer's own: `Name: detail`.
fn fail(code: Code, detail: impl std::fmt::Display) -> Failure {
    Failure(code, format!("{}: {detail}", code.name()))
}

fn bad_pointer(ptr: usize, len: usize) -> Failure {
    fail(
        Code::BadPointer,
        format!("[{ptr}, {ptr}+{len}) is not inside a block from mp_alloc"),
    )
}

fn bad_handle(handle: i32) -> Failure {
    fail(Code::BadHandle, format!("no mapper has handle {handle}"))
}

impl Blocks {
    /// The live allocation holding [ptr, ptr+len): its index, and the
    /// offset of `ptr` in it.
    #[inline(always)]
    fn locate(&self, ptr: usize, len: usize) -> Result<(usize, usize), Failure> {
        let Some(i) = self.at_or_below(ptr) else {
            return Err(bad_pointer(ptr, len));
        };
        let (start, block) = &self.0.as_slice()[i];
        let off = ptr - start;
        match off.checked_add(len) {
            Some(end) if end <= block.len() => Ok((i, off)),
            _ => Err(bad_pointer(ptr, len)),
        }
    }

    /// The bytes [ptr, ptr+len) (any pointer when the length is 0).
    #[inline(always)]
    fn bytes(&self, ptr: usize, len: usize) -> Result<&[u8], Failure> {
        if len == 0 {
            return Ok(&[]);
        }
        let (i, off) = self.locate(ptr, len)?;
        Ok(&self.0.as_slice()[i].1[off..off + len])
    }
}

impl State {
    /// [`Blocks::bytes`], kept out of line for the exports off the batch
    /// path.
    #[inline(never)]
    fn bytes(&self, ptr: usize, len: usize) -> Result<&[u8], Failure> {
        self.allocs.bytes(ptr, len)
    }

    fn text(&self, ptr: usize, len: usize, what: &str) -> Result<String, Failure> {
        let raw = self.bytes(ptr, len)?;
        String::from_utf8(raw.to_vec())
            .map_err(|_| fail(Code::BadArgument, format!("{what} is not UTF-8")))
    }

    /// The arguments of a rewrite export, checked in this order and handed
    /// to `f`: the source cluster ID (UTF-8; kept in `self.source`, so an
    /// unchanged one is only compared), the mapper, and the host's buffer
    /// (any pointer when the length is 0).
    ///
    /// `f` is called through a `dyn` (one indirect call per call of an
    /// export): one copy of this function serves every export that takes a
    /// source, which the module's size budget needs.
    fn with_fetch(
        &mut self,
        handle: i32,
        (src_ptr, src_len): (i32, i32),
        (buf_ptr, buf_len): (i32, i32),
        f: &mut FetchCall<'_>,
    ) -> Result<i32, Failure> {
        let raw = self
            .allocs
            .bytes(address(src_ptr), size(src_len, "length")?)?;
        if raw != self.source.as_bytes() {
            let Ok(text) = std::str::from_utf8(raw) else {
                return Err(fail(Code::BadArgument, "source cluster ID is not UTF-8"));
            };
            // In place: `clear` keeps the capacity.
            self.source.clear();
            self.source.push_str(text);
        }
        let (ptr, len) = (address(buf_ptr), size(buf_len, "length")?);
        let Ok(slot_at) = self.mappers.find(handle) else {
            return Err(bad_handle(handle));
        };
        let block_at = if len == 0 {
            None
        } else {
            Some(self.allocs.locate(ptr, len)?)
        };
        let slot = &mut self.mappers.0.as_mut_slice()[slot_at].1;
        let mut empty = [0u8; 0];
        let buf: &mut [u8] = match block_at {
            Some((i, off)) => &mut self.allocs.0.as_mut_slice()[i].1[off..off + len],
            None => &mut empty,
        };
        f(&self.source, slot, buf)
    }

    fn slot(&mut self, handle: i32) -> Result<&mut Slot, Failure> {
        self.mappers
            .get_mut(handle)
            .ok_or_else(|| bad_handle(handle))
    }

    fn add(&mut self, mapper: Mapper) -> Result<i32, Failure> {
        if self.next_handle == i32::MAX {
            return Err(fail(Code::OutOfMemory, "every handle has been used"));
        }
        let slot = Slot {
            mapper,
            output: Vec::new(),
            snapshot_required: false,
            result: RewriteResult::default(),
        };
        self.mappers.insert(self.next_handle + 1, slot)?;
        self.next_handle += 1;
        Ok(self.next_handle)
    }
}

/// Runs `f` on the module state: a success clears the last error message;
/// a failure becomes `-code` and records its message.
fn call<T: From<i32>>(f: impl FnOnce(&mut State) -> Result<T, Failure>) -> T {
    run(false, f)
}

/// [`call`] for a call that allocates: refused with `OutOfMemory` unless
/// the allocator's reserve is held (it was spent on an earlier call's small
/// allocations and memory is still full).
fn call_allocating<T: From<i32>>(f: impl FnOnce(&mut State) -> Result<T, Failure>) -> T {
    run(true, f)
}

fn run<T: From<i32>>(allocates: bool, f: impl FnOnce(&mut State) -> Result<T, Failure>) -> T {
    STATE.with(|s| {
        let mut state = s.borrow_mut();
        let result = if allocates && !reserve::ensure() {
            Err(fail(
                Code::OutOfMemory,
                format_args!(
                    "memory is full (the {} KiB reserve for small allocations is spent); \
                     free blocks or mappers, or expire bindings",
                    reserve::RESERVE_BYTES >> 10
                ),
            ))
        } else {
            f(&mut state)
        };
        match result {
            Ok(v) => {
                state.last_error.clear();
                v
            }
            Err(Failure(code, message)) => {
                state.last_error = message;
                T::from(-code.value())
            }
        }
    })
}

/// A pointer: wasm32 addresses are unsigned, so an `i32` below zero is an
/// address at or above 2^31 (no block is there unless memory is that big).
#[inline(always)]
fn address(ptr: i32) -> usize {
    ptr as u32 as usize
}

/// A length: never negative.
#[inline(always)]
fn size(v: i32, what: &str) -> Result<usize, Failure> {
    match usize::try_from(v) {
        Ok(n) => Ok(n),
        Err(_) => Err(fail(Code::BadArgument, format!("{what} {v} is negative"))),
    }
}

/// A result count or length as the `i32` the ABI returns. Outputs live in
/// wasm32 memory, so they always fit; the check keeps a cast honest.
#[inline(always)]
fn count(n: usize) -> Result<i32, Failure> {
    match i32::try_from(n) {
        Ok(v) => Ok(v),
        Err(_) => Err(fail(
            Code::OutOfMemory,
            format!("result {n} does not fit an i32"),
        )),
    }
}

/// Writes records in the record-list layout (`mirrorpid::abi`), having
/// made room for all of it first: the core runs this before a call takes
/// effect, so running out of memory here undoes the call.
#[inline(always)]
fn encode_records(records: &[StateRecord], out: &mut Vec<u8>) -> mirrorpid::Result<()> {
    // The common case, every producer bound, after a call that was too:
    // the output holds the empty list already.
    if records.is_empty() && out[..] == abi::EMPTY_RECORDS {
        return Ok(());
    }
    encode_some(records, out)
}

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
    // when it has room, else in a new buffer that replaces it.
    if out.capacity() < size {
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
fn headroom(bytes: usize) -> Result<(), Failure> {
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
            format!("no room for {bytes} bytes of work"),
        )
    })
}

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
        mirrorpid::seed_hashing(seed as u64);
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
            .map_err(|_| fail(Code::OutOfMemory, format!("{n} bytes")))?;
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
        s.allocs.remove(address(ptr)).map(|_| 0).ok_or_else(|| {
            fail(
                Code::BadPointer,
                format!("{} is not a live block from mp_alloc", address(ptr)),
            )
        })
    })
}

/// Creates a mapper from a JSON config (`{"topicId", "partition",
/// "durability"?, "producerExpirationMs"?}`); returns its handle (> 0).
#[no_mangle]
pub extern "C" fn mp_mapper_new(config_ptr: i32, config_len: i32) -> i32 {
    call_allocating(|s| {
        let text = s.text(address(config_ptr), size(config_len, "length")?, "config")?;
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
    rewrite(
        handle,
        (src_ptr, src_len),
        (buf_ptr, buf_len),
        None,
        now_ms,
        flags,
    )
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
    // Too many slots for an i32 of bytes: `size` reports a negative length
    // (as it does for a negative count).
    let slots_len = slot_count.checked_mul(SLOT_BYTES as i32).unwrap_or(-1);
    let fetch = (slots_ptr, slots_len);
    rewrite(
        handle,
        (src_ptr, src_len),
        fetch,
        Some(fetch_len),
        now_ms,
        flags,
    )
}

/// Both rewrites: `block` is the fetch's bytes, or (with `fetch_len`) its
/// header slots.
fn rewrite(
    handle: i32,
    src: (i32, i32),
    block: (i32, i32),
    fetch_len: Option<i32>,
    now_ms: i64,
    flags: i32,
) -> i32 {
    call_allocating(|s| {
        if flags & !(FLAG_STRICT_CRC | FLAG_COMPLETE) != 0 {
            return Err(fail(Code::BadArgument, format!("flags {flags:#x}")));
        }
        let options = RewriteOptions {
            strict_crc: flags & FLAG_STRICT_CRC != 0,
            complete: flags & FLAG_COMPLETE != 0,
        };
        let fetch_len = match fetch_len {
            Some(n) => Some(size(n, "fetch length")?),
            None => None,
        };
        s.with_fetch(handle, src, block, &mut |source, slot, buf| {
            // Each batch (header slot) can make a binding and a record
            // (about 300 bytes and three copies of the source's ID); a
            // batch takes 61 bytes or more, a slot SLOT_BYTES.
            let per = if fetch_len.is_some() { SLOT_BYTES } else { 61 };
            headroom((buf.len() / per + 1).saturating_mul(320 + 3 * source.len()))?;
            let mut view;
            let fetch = match fetch_len {
                Some(n) => {
                    view = HeaderView::new(buf, n)?;
                    Fetch::Headers(&mut view)
                }
                None => Fetch::Bytes(buf),
            };
            let output = &mut slot.output;
            let result = &mut slot.result;
            slot.mapper
                .rewrite_fetch_into(source, fetch, now_ms, options, result, |r| {
                    encode_records(&r.records, output)
                })?;
            slot.snapshot_required = result.snapshot_required;
            count(result.consumed)
        })
    })
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
        s.with_fetch(
            handle,
            (src_ptr, src_len),
            (0, 0),
            &mut |source, slot, _| {
                let outcome = slot.mapper.map(source, pid, now_ms)?;
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
                slot.snapshot_required = outcome.snapshot_required;
                Ok(outcome.salt.map_or(abi::MAP_NOT_A_PRODUCER, i32::from))
            },
        )
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
        let key = s.bytes(address(key_ptr), size(key_len, "length")?)?;
        let value = match value_len {
            -1 => None,
            n => Some(s.bytes(address(value_ptr), size(n, "length")?)?),
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
        count(slot.output.len())
    })
}

/// Creates a mapper from snapshot bytes; returns its handle (> 0).
#[no_mangle]
pub extern "C" fn mp_restore(ptr: i32, len: i32) -> i32 {
    call_allocating(|s| {
        let bytes = s.bytes(address(ptr), size(len, "length")?)?;
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
        s.with_fetch(
            handle,
            (src_ptr, src_len),
            (buf_ptr, buf_len),
            &mut |source, slot, buf| {
                count(mirrorpid::peer::rewrite_naive(
                    &mut slot.mapper,
                    source,
                    buf,
                    now_ms,
                )?)
            },
        )
    })
}
