//! The adapter's state and plumbing behind the exports: the blocks
//! `mp_alloc` handed out, the mappers by handle, each call's error, and the
//! checks that turn host pointers and lengths into slices.

use crate::reserve;
use mirrorpid::abi;
use mirrorpid::error::text;
use mirrorpid::{Code, Error, Mapper, RewriteResult, StateRecord};
use std::cell::Cell;
use std::fmt::Display;

pub(crate) struct Slot {
    pub(crate) mapper: Mapper,
    pub(crate) output: Vec<u8>,
    pub(crate) snapshot_required: bool,
    /// Reused by every `mp_rewrite`, so that a call on bound producers
    /// allocates nothing.
    pub(crate) result: RewriteResult,
}

/// A map kept as a vector sorted by key, searched by bisection: the module
/// holds a few blocks and mappers, and two B-tree maps were 8 KiB of it.
/// Entries are reached through `as_slice()[i]`, not `self.0[i]`: at
/// `opt-level = "z"` indexing a `Vec` is a call to its `Index` impl, while
/// indexing a slice is inlined (docs/PERFORMANCE.md).
pub(crate) struct Sorted<K, V>(pub(crate) Vec<(K, V)>);

impl<K, V> Default for Sorted<K, V> {
    fn default() -> Self {
        Sorted(Vec::new())
    }
}

impl State {
    /// The state before the first call (a constant: the thread-local
    /// holding it needs no lazy initialisation, whose re-entrancy check
    /// is a panic).
    const EMPTY: State = State {
        allocs: Sorted(Vec::new()),
        mappers: Sorted(Vec::new()),
        next_handle: 0,
        last_error: String::new(),
        source: String::new(),
        source_at: 0,
        fetch_at: 0,
        mapper_at: 0,
    };
}

impl<K: Ord + Copy, V> Sorted<K, V> {
    #[inline(always)]
    pub(crate) fn find(&self, key: K) -> Result<usize, usize> {
        // Bisection written out: `binary_search_by`'s closure is a call
        // per step in the size-optimised build.
        let (mut lo, mut hi) = (0, self.0.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let Some((k, _)) = self.0.get(mid) else {
                break;
            };
            match k.cmp(&key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// [`Sorted::find`], trying entry `hint` first and leaving there the
    /// entry it found.
    #[inline(always)]
    pub(crate) fn find_from(&self, hint: &mut usize, key: K) -> Result<usize, usize> {
        if self.0.get(*hint).is_some_and(|(k, _)| *k == key) {
            return Ok(*hint);
        }
        let found = self.find(key);
        if let Ok(i) = found {
            *hint = i;
        }
        found
    }

    /// The index of the entry with the greatest key at or below `key`.
    #[inline(always)]
    pub(crate) fn at_or_below(&self, key: K) -> Option<usize> {
        match self.find(key) {
            Ok(i) => Some(i),
            Err(i) => i.checked_sub(1),
        }
    }

    /// Inserts a new key (an existing one's value is replaced); fails,
    /// changing nothing, when there is no memory for the entry.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Result<(), Failure> {
        match self.find(key) {
            Ok(i) => {
                if let Some(entry) = self.0.get_mut(i) {
                    entry.1 = value;
                }
            }
            Err(i) => {
                self.0
                    .try_reserve(1)
                    .map_err(|_| fail(Code::OutOfMemory, "no room to track one more"))?;
                mirrorpid::vec::insert_at(&mut self.0, i, (key, value));
            }
        }
        Ok(())
    }

    pub(crate) fn remove(&mut self, key: K) -> Option<V> {
        let i = self.find(key).ok()?;
        mirrorpid::vec::remove_at(&mut self.0, i).map(|(_, v)| v)
    }
}

/// What `State::with_fetch` runs: the source, the mapper's slot and the
/// host's bytes in, a status out.
pub(crate) type FetchCall<'a> = dyn FnMut(&str, &mut Slot, &mut [u8]) -> Result<i32, Failure> + 'a;

/// The blocks `mp_alloc` handed out, by address.
pub(crate) type Blocks = Sorted<usize, Box<[u8]>>;

#[derive(Default)]
pub(crate) struct State {
    pub(crate) allocs: Blocks,
    pub(crate) mappers: Sorted<i32, Slot>,
    pub(crate) next_handle: i32,
    pub(crate) last_error: String,
    /// The source cluster ID of the last `mp_rewrite`, kept between calls:
    /// a call from the same source compares its bytes and neither checks
    /// nor copies them again (no allocation per call either).
    pub(crate) source: String,
    /// Where the last rewrite found its source's block and its fetch's
    /// among `allocs`: a host passes the same two blocks call after call,
    /// so each is checked there before any bisection (a hint only: a stale
    /// one costs the bisection, never a wrong block).
    pub(crate) source_at: usize,
    pub(crate) fetch_at: usize,
    /// Where the last call found its mapper among `mappers`, the same way.
    pub(crate) mapper_at: usize,
}

thread_local! {
    /// Taken out for a call and put back after it (a `Cell`, not a
    /// `RefCell`: no borrow can fail). The module imports nothing, so no
    /// call can start inside another; if one did, it would find an empty
    /// state, not a panic.
    pub(crate) static STATE: Cell<State> = const { Cell::new(State::EMPTY) };

    /// `mp_output_info`'s 12 bytes (`mirrorpid::abi::OutputInfo`), kept
    /// apart from `STATE`, which moves out for every call: this one stays
    /// at one address, where the host reads it between calls.
    static OUTPUT_INFO: Cell<[u8; abi::OutputInfo::BYTES]> =
        const { Cell::new([0; abi::OutputInfo::BYTES]) };
}

/// Where `mp_output_info`'s bytes are.
pub(crate) fn output_info_ptr() -> i32 {
    OUTPUT_INFO
        .try_with(|c| c.as_ptr() as usize as i32)
        .unwrap_or(0)
}

/// Records `slot`'s output and flag as the last call's, for
/// `mp_output_info`: every export that writes an output runs this once it
/// has succeeded.
#[inline(always)]
pub(crate) fn publish(slot: &Slot) {
    let info = abi::OutputInfo {
        ptr: slot.output.as_ptr() as usize as u32,
        len: slot.output.len() as u32,
        snapshot_required: slot.snapshot_required,
    };
    let _ = OUTPUT_INFO.try_with(|c| c.set(info.encode()));
}

/// An error of this layer: a code and its message (which starts with the
/// code's name).
pub(crate) struct Failure(pub(crate) Code, pub(crate) String);

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure(e.kind(), text(format_args!("{e}")))
    }
}

/// A failure of this layer's own: `Name: detail`.
pub(crate) fn fail(code: Code, detail: impl Display) -> Failure {
    Failure(code, text(format_args!("{}: {detail}", code.name())))
}

pub(crate) fn bad_pointer(ptr: usize, len: usize) -> Failure {
    fail(
        Code::BadPointer,
        format_args!("[{ptr}, {ptr}+{len}) is not inside a block from mp_alloc"),
    )
}

pub(crate) fn bad_handle(handle: i32) -> Failure {
    fail(
        Code::BadHandle,
        format_args!("no mapper has handle {handle}"),
    )
}

impl Blocks {
    /// The live allocation holding [ptr, ptr+len): its index, and the
    /// offset of `ptr` in it.
    #[inline(always)]
    pub(crate) fn locate(&self, ptr: usize, len: usize) -> Result<(usize, usize), Failure> {
        let Some(i) = self.at_or_below(ptr) else {
            return Err(bad_pointer(ptr, len));
        };
        self.within(i, ptr, len)
            .ok_or_else(|| bad_pointer(ptr, len))
    }

    /// [`Blocks::locate`], trying block `hint` first and leaving there the
    /// block it found. Blocks never overlap, so a block that holds the
    /// whole of a non-empty range is the one the bisection finds.
    #[inline(always)]
    pub(crate) fn locate_from(
        &self,
        hint: &mut usize,
        ptr: usize,
        len: usize,
    ) -> Result<(usize, usize), Failure> {
        if len != 0 {
            if let Some(found) = self.within(*hint, ptr, len) {
                return Ok(found);
            }
        }
        let found = self.locate(ptr, len)?;
        *hint = found.0;
        Ok(found)
    }

    /// Block `i` and the offset of `ptr` in it, if it holds [ptr, ptr+len).
    #[inline(always)]
    fn within(&self, i: usize, ptr: usize, len: usize) -> Option<(usize, usize)> {
        let (start, block) = self.0.get(i)?;
        let off = ptr.checked_sub(*start)?;
        match off.checked_add(len) {
            Some(end) if end <= block.len() => Some((i, off)),
            _ => None,
        }
    }

    /// The bytes [ptr, ptr+len) (any pointer when the length is 0).
    #[inline(always)]
    pub(crate) fn bytes(&self, ptr: usize, len: usize) -> Result<&[u8], Failure> {
        if len == 0 {
            return Ok(&[]);
        }
        let found = self.locate(ptr, len)?;
        self.slice(found, ptr, len)
    }

    /// [`Blocks::bytes`] through [`Blocks::locate_from`].
    #[inline(always)]
    pub(crate) fn bytes_from(
        &self,
        hint: &mut usize,
        ptr: usize,
        len: usize,
    ) -> Result<&[u8], Failure> {
        if len == 0 {
            return Ok(&[]);
        }
        let found = self.locate_from(hint, ptr, len)?;
        self.slice(found, ptr, len)
    }

    /// The `len` bytes at offset `off` of block `i`.
    #[inline(always)]
    fn slice(&self, (i, off): (usize, usize), ptr: usize, len: usize) -> Result<&[u8], Failure> {
        self.0
            .get(i)
            .and_then(|(_, block)| block.get(off..)?.get(..len))
            .ok_or_else(|| bad_pointer(ptr, len))
    }
}

impl State {
    /// [`Blocks::bytes`], kept out of line for the exports off the batch
    /// path.
    #[inline(never)]
    pub(crate) fn bytes(&self, ptr: usize, len: usize) -> Result<&[u8], Failure> {
        self.allocs.bytes(ptr, len)
    }

    pub(crate) fn text(&self, ptr: usize, len: usize, what: &str) -> Result<String, Failure> {
        let raw = self.bytes(ptr, len)?;
        String::from_utf8(raw.to_vec())
            .map_err(|_| fail(Code::BadArgument, format_args!("{what} is not UTF-8")))
    }

    /// The arguments of a rewrite export, checked in this order and handed
    /// to `f`: the source cluster ID (UTF-8; kept in `self.source`, so an
    /// unchanged one is only compared), the mapper, and the host's buffer
    /// (any pointer when the length is 0). When `f` succeeds, the mapper's
    /// output is published for `mp_output_info`.
    ///
    /// `f` is called through a `dyn` (one indirect call per call of an
    /// export): one copy of this function serves every export that takes a
    /// source, which the module's size budget needs.
    pub(crate) fn with_fetch(
        &mut self,
        handle: i32,
        (src_ptr, src_len): (i32, i32),
        (buf_ptr, buf_len): (i32, i32),
        f: &mut FetchCall<'_>,
    ) -> Result<i32, Failure> {
        let (src_ptr, src_len) = (address(src_ptr), size(src_len, "length")?);
        let raw = self
            .allocs
            .bytes_from(&mut self.source_at, src_ptr, src_len)?;
        if !mirrorpid::vec::same_bytes(raw, self.source.as_bytes()) {
            let Ok(text) = std::str::from_utf8(raw) else {
                return Err(fail(Code::BadArgument, "source cluster ID is not UTF-8"));
            };
            // In place: `clear` keeps the capacity.
            self.source.clear();
            self.source.push_str(text);
        }
        let (ptr, len) = (address(buf_ptr), size(buf_len, "length")?);
        let Ok(slot_at) = self.mappers.find_from(&mut self.mapper_at, handle) else {
            return Err(bad_handle(handle));
        };
        let block_at = if len == 0 {
            None
        } else {
            Some(self.allocs.locate_from(&mut self.fetch_at, ptr, len)?)
        };
        let Some((_, slot)) = self.mappers.0.get_mut(slot_at) else {
            return Err(bad_handle(handle));
        };
        let mut empty = [0u8; 0];
        let buf: &mut [u8] = match block_at {
            Some((i, off)) => self
                .allocs
                .0
                .get_mut(i)
                .and_then(|(_, block)| block.get_mut(off..)?.get_mut(..len))
                .ok_or_else(|| bad_pointer(ptr, len))?,
            None => &mut empty,
        };
        let status = f(&self.source, slot, buf)?;
        publish(slot);
        Ok(status)
    }

    pub(crate) fn slot(&mut self, handle: i32) -> Result<&mut Slot, Failure> {
        let Ok(i) = self.mappers.find_from(&mut self.mapper_at, handle) else {
            return Err(bad_handle(handle));
        };
        self.mappers
            .0
            .get_mut(i)
            .map(|(_, slot)| slot)
            .ok_or_else(|| bad_handle(handle))
    }

    pub(crate) fn add(&mut self, mapper: Mapper) -> Result<i32, Failure> {
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
pub(crate) fn call<T: From<i32>>(f: impl FnOnce(&mut State) -> Result<T, Failure>) -> T {
    run(false, f)
}

/// [`call`] for a call that allocates: refused with `OutOfMemory` unless
/// the allocator's reserve is held (it was spent on an earlier call's small
/// allocations and memory is still full).
pub(crate) fn call_allocating<T: From<i32>>(f: impl FnOnce(&mut State) -> Result<T, Failure>) -> T {
    run(true, f)
}

pub(crate) fn run<T: From<i32>>(
    allocates: bool,
    f: impl FnOnce(&mut State) -> Result<T, Failure>,
) -> T {
    with_state(|state| {
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
            f(state)
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

/// Reads the module state without a call (no message is cleared).
pub(crate) fn peek<T>(f: impl FnOnce(&State) -> T) -> T {
    with_state(|state| f(state))
}

/// Runs `f` on the state, taken out of its cell and put back after. The
/// cell holds [`State::EMPTY`] meanwhile, which owns no memory, so it is
/// forgotten rather than dropped: dropping it ran the allocator's free
/// path for each of its empty buffers on every call (about 180
/// WebAssembly instructions a call, of a one-batch rewrite's 2,900
/// before). Nothing calls an export from inside one,
/// so what the cell held is always that placeholder.
fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut state = take_state();
    let out = f(&mut state);
    put_state(state);
    out
}

/// [`with_state`]'s two halves, one copy each for every export. Through
/// `try_with`: `with` panics once a thread's locals are destroyed, which
/// WebAssembly's one thread never sees; were it to, a call would find an
/// empty state and its state would be dropped after it, not a panic.
#[inline(never)]
// `unwrap_or(State::EMPTY)` would build a placeholder and drop it on every
// call: the drop is the cost `with_state` avoids.
#[allow(clippy::unnecessary_lazy_evaluations)]
fn take_state() -> State {
    STATE
        .try_with(|s| s.replace(State::EMPTY))
        .unwrap_or_else(|_| State::EMPTY)
}

#[inline(never)]
fn put_state(state: State) {
    let mut held = Some(state);
    let _ = STATE.try_with(|s| {
        if let Some(state) = held.take() {
            std::mem::forget(s.replace(state));
        }
    });
}

/// A pointer: wasm32 addresses are unsigned, so an `i32` below zero is an
/// address at or above 2^31 (no block is there unless memory is that big).
#[inline(always)]
pub(crate) fn address(ptr: i32) -> usize {
    ptr as u32 as usize
}

/// A length: never negative.
#[inline(always)]
pub(crate) fn size(v: i32, what: &str) -> Result<usize, Failure> {
    match usize::try_from(v) {
        Ok(n) => Ok(n),
        Err(_) => Err(fail(
            Code::BadArgument,
            format_args!("{what} {v} is negative"),
        )),
    }
}

/// A result count or length as the `i32` the ABI returns. Outputs live in
/// wasm32 memory, so they always fit; the check keeps a cast honest.
#[inline(always)]
pub(crate) fn count(n: usize) -> Result<i32, Failure> {
    match i32::try_from(n) {
        Ok(v) => Ok(v),
        Err(_) => Err(fail(
            Code::OutOfMemory,
            format_args!("result {n} does not fit an i32"),
        )),
    }
}

/// Writes records in the record-list layout (`mirrorpid::abi`), having
/// made room for all of it first: the core runs this before a call takes
/// effect, so running out of memory here undoes the call.
#[inline(always)]
pub(crate) fn encode_records(records: &[StateRecord], out: &mut Vec<u8>) -> mirrorpid::Result<()> {
    // The common case, every producer bound, after a call that was too:
    // the output holds the empty list already.
    if records.is_empty() && out[..] == abi::EMPTY_RECORDS {
        return Ok(());
    }
    encode_some(records, out)
}

/// [`encode_records`] when the output changes.
#[inline(never)]
pub(crate) fn encode_some(records: &[StateRecord], out: &mut Vec<u8>) -> mirrorpid::Result<()> {
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
pub(crate) fn headroom(bytes: usize) -> Result<(), Failure> {
    if bytes <= reserve::RESERVE_BYTES / 2 {
        return Ok(());
    }
    probe(bytes)
}

/// [`headroom`]'s allocation, out of the common path.
#[inline(never)]
pub(crate) fn probe(bytes: usize) -> Result<(), Failure> {
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes).map_err(|_| {
        fail(
            Code::OutOfMemory,
            format_args!("no room for {bytes} bytes of work"),
        )
    })
}
