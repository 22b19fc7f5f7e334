//! The adapter's state behind the exports: the blocks `mp_alloc` handed
//! out, the mappers by handle and the last call's error, and how a call
//! reaches them (`run`), turning its outcome into a status.

use crate::blocks::{Blocks, Handles, Sorted};
use crate::failure::{address, bad_handle, count, fail, memory_full, size, Failure};
use crate::reserve;
use mirrorpid::{Code, KnownSource, Mapper};
use std::cell::{Cell, RefCell};

/// One mapper and what its calls return.
pub(crate) struct Slot {
    pub(crate) mapper: Mapper,
    /// The output of its last call that wrote one (records, a snapshot).
    pub(crate) output: Vec<u8>,
    /// Whether its last rewrite or map made a collision.
    pub(crate) snapshot_required: bool,
    /// The source cluster IDs `mp_source` named, token `i + 1` at `i`.
    pub(crate) sources: Vec<KnownSource>,
}

/// The most source cluster IDs one mapper names by token: a path is one
/// source, and a mapper mirrors few.
pub const MAX_SOURCES: usize = 4096;

/// What a call changes in a [`Slot`], borrowed beside its sources.
pub(crate) struct Parts<'a> {
    pub(crate) mapper: &'a mut Mapper,
    pub(crate) output: &'a mut Vec<u8>,
    pub(crate) snapshot_required: &'a mut bool,
}

impl Slot {
    /// What a call changes.
    #[inline(always)]
    pub(crate) fn parts(&mut self) -> Parts<'_> {
        self.split().0
    }

    /// What a call changes, and the sources it reads.
    #[inline(always)]
    pub(crate) fn split(&mut self) -> (Parts<'_>, &[KnownSource]) {
        let Slot {
            mapper,
            output,
            snapshot_required,
            sources,
        } = self;
        let parts = Parts {
            mapper,
            output,
            snapshot_required,
        };
        (parts, sources)
    }

    /// The token of source cluster `id` (checked), named now if new.
    pub(crate) fn add_source(&mut self, id: &str) -> Result<i32, Failure> {
        if let Some(i) = self.sources.iter().position(|k| k.as_str() == id) {
            return count(i + 1);
        }
        if self.sources.len() >= MAX_SOURCES {
            return Err(fail(
                Code::CapacityExceeded,
                format_args!("a mapper names at most {MAX_SOURCES} source clusters by token"),
            ));
        }
        self.sources
            .try_reserve(1)
            .map_err(|_| fail(Code::OutOfMemory, "a source token"))?;
        let mut known = KnownSource::new();
        known.set(id);
        self.sources.push(known);
        count(self.sources.len())
    }
}

/// Everything the module holds between calls.
pub(crate) struct State {
    pub(crate) allocs: Blocks,
    pub(crate) mappers: Handles<Slot>,
    pub(crate) last_error: String,
    /// The source cluster ID of the last call that took one, kept between
    /// calls: a call from the same source compares its bytes and neither
    /// checks nor copies them again, and its mapper finds the source's
    /// cluster where it found it last.
    pub(crate) source: KnownSource,
    /// Where the last call found its source's block, its buffer's block
    /// a host passes the same ones call after call, so each is tried
    /// there before any bisection (a hint only: a stale one costs the
    /// bisection, never a wrong answer).
    source_at: usize,
    buf_at: usize,
}

impl State {
    /// The state before the first call.
    fn empty() -> State {
        State {
            allocs: Sorted::EMPTY,
            mappers: Handles::EMPTY,
            last_error: String::new(),
            source: KnownSource::new(),
            source_at: 0,
            buf_at: 0,
        }
    }
}

thread_local! {
    /// The state, made at the first call and kept for the instance's life
    /// (a reference, so that a call reaches it without running its body
    /// inside a closure of the thread-local's).
    static STATE: Cell<Option<&'static RefCell<State>>> = const { Cell::new(None) };
}

/// The module's state, borrowed for each call, where it stays: nothing is
/// moved in or out. The module imports nothing, so no call can start inside
/// another; if one did, its borrow would fail and the call with it, never
/// panic.
#[inline(always)]
fn state() -> Option<&'static RefCell<State>> {
    match STATE.try_with(Cell::get) {
        Ok(Some(state)) => Some(state),
        _ => first_state(),
    }
}

/// Makes the state at the first call.
#[cold]
#[inline(never)]
fn first_state() -> Option<&'static RefCell<State>> {
    let state: &'static RefCell<State> = Box::leak(Box::new(RefCell::new(State::empty())));
    STATE.try_with(|s| s.set(Some(state))).ok()?;
    Some(state)
}

/// The checked arguments of an export that takes a source and a buffer.
pub(crate) struct Args<'a> {
    /// The source cluster ID.
    pub(crate) source: &'a KnownSource,
    /// The mapper's slot.
    pub(crate) slot: &'a mut Slot,
    /// The host's bytes.
    pub(crate) buf: &'a mut [u8],
}

impl State {
    /// The arguments of the exports that take a source and a buffer,
    /// checked in this order: the source cluster ID (UTF-8; kept in
    /// `self.source`, so an unchanged one is only compared), the buffer's
    /// length, the mapper, and the buffer (any pointer when the length is
    /// 0).
    #[inline(always)]
    pub(crate) fn args(
        &mut self,
        handle: i32,
        (src_ptr, src_len): (i32, i32),
        (buf_ptr, buf_len): (i32, i32),
    ) -> Result<Args<'_>, Failure> {
        let (src_ptr, src_len) = (address(src_ptr), size(src_len, "length")?);
        let raw = self
            .allocs
            .bytes_from(&mut self.source_at, src_ptr, src_len)?;
        if !same(raw, self.source.as_str().as_bytes()) {
            remember_source(&mut self.source, raw)?;
        }
        let (slot, buf) = slot_and_block(
            &mut self.mappers,
            &mut self.allocs,
            &mut self.buf_at,
            handle,
            (buf_ptr, buf_len),
        )?;
        Ok(Args {
            source: &self.source,
            slot,
            buf,
        })
    }

    /// The slot of `handle` and the block [ptr, +len) (any pointer when
    /// the length is 0), checked in this order: the length, the mapper,
    /// the block.
    #[inline(always)]
    pub(crate) fn slot_and_block(
        &mut self,
        handle: i32,
        block: (i32, i32),
    ) -> Result<(&mut Slot, &mut [u8]), Failure> {
        slot_and_block(
            &mut self.mappers,
            &mut self.allocs,
            &mut self.buf_at,
            handle,
            block,
        )
    }

    /// The slot of `handle`.
    #[inline(always)]
    pub(crate) fn slot(&mut self, handle: i32) -> Result<&mut Slot, Failure> {
        match self.mappers.get_mut(handle) {
            Some(slot) => Ok(slot),
            None => Err(bad_handle(handle)),
        }
    }

    /// Adds a mapper; returns its new handle.
    pub(crate) fn add(&mut self, mapper: Mapper) -> Result<i32, Failure> {
        let slot = Slot {
            mapper,
            output: Vec::new(),
            snapshot_required: false,
            sources: Vec::new(),
        };
        self.mappers.add(slot).ok_or_else(|| {
            fail(
                Code::OutOfMemory,
                "no room for one more mapper, or every handle has been used",
            )
        })
    }

    /// The bytes [ptr, ptr+len) of a block (any pointer when the length is
    /// 0), for the exports off the batch path.
    pub(crate) fn bytes(&self, ptr: i32, len: i32) -> Result<&[u8], Failure> {
        self.allocs.bytes(address(ptr), size(len, "length")?)
    }

    /// [`State::bytes`] as UTF-8 text, copied.
    pub(crate) fn text(&self, ptr: i32, len: i32, what: &str) -> Result<String, Failure> {
        let raw = self.bytes(ptr, len)?;
        String::from_utf8(raw.to_vec())
            .map_err(|_| fail(Code::BadArgument, format_args!("{what} is not UTF-8")))
    }

    /// Records a failed call's message; returns its status.
    #[cold]
    #[inline(never)]
    fn failed(&mut self, failure: Failure) -> i32 {
        let (code, message) = failure.take();
        self.last_error = message;
        -code.value()
    }
}

/// [`State::slot_and_block`] over the state's fields, so that a caller can
/// hold another field (the source) beside what it returns. The block is
/// looked for first where `buf_at` says the last one was.
#[inline(always)]
fn slot_and_block<'a>(
    mappers: &'a mut Handles<Slot>,
    allocs: &'a mut Blocks,
    buf_at: &mut usize,
    handle: i32,
    (ptr, len): (i32, i32),
) -> Result<(&'a mut Slot, &'a mut [u8]), Failure> {
    let (ptr, len) = (address(ptr), size(len, "length")?);
    let Some(slot) = mappers.get_mut(handle) else {
        return Err(bad_handle(handle));
    };
    let buf = allocs.bytes_mut_from(buf_at, ptr, len)?;
    Ok((slot, buf))
}

/// Whether `a` and `b` hold the same bytes: slice equality is a call of
/// `memcmp`, which WebAssembly runs a byte at a time, and a source cluster
/// ID is compared on every call. From 8 to 24 bytes (Kafka's cluster IDs
/// are 22), three words that overlap where they must, straight-line.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() || !(8..=24).contains(&n) {
        return a == b;
    }
    let word = |s: &[u8], i: usize| {
        s.get(i..)
            .and_then(<[u8]>::first_chunk::<8>)
            .map(|w| u64::from_le_bytes(*w))
    };
    let mid = (n - 8).min(8);
    word(a, 0) == word(b, 0) && word(a, mid) == word(b, mid) && word(a, n - 8) == word(b, n - 8)
}

/// Keeps a new source cluster ID (`raw`, checked to be UTF-8) in `held`.
#[inline(never)]
fn remember_source(held: &mut KnownSource, raw: &[u8]) -> Result<(), Failure> {
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err(fail(Code::BadArgument, "source cluster ID is not UTF-8"));
    };
    held.set(text);
    Ok(())
}

/// Runs `f` on the module state: a success clears the last error message;
/// a failure becomes `-code` and records its message.
#[inline(always)]
pub(crate) fn call(f: impl FnOnce(&mut State) -> Result<i32, Failure>) -> i32 {
    run(false, f)
}

/// [`call`] for a call that allocates: refused with `OutOfMemory` unless
/// the allocator's reserve is held (it was spent on an earlier call's small
/// allocations and memory is still full).
#[inline(always)]
pub(crate) fn call_allocating(f: impl FnOnce(&mut State) -> Result<i32, Failure>) -> i32 {
    run(true, f)
}

#[inline(always)]
fn run(allocates: bool, f: impl FnOnce(&mut State) -> Result<i32, Failure>) -> i32 {
    // A call inside a call: refused, and the state left to the outer one.
    let Some(Ok(mut state)) = state().map(RefCell::try_borrow_mut) else {
        return inside_a_call();
    };
    let result = if allocates && !reserve::ensure() {
        Err(memory_full())
    } else {
        f(&mut state)
    };
    match result {
        Ok(v) => {
            state.last_error.clear();
            v
        }
        Err(failure) => state.failed(failure),
    }
}

/// The status of a call made from inside a call (which the module, importing
/// nothing, never sees).
#[cold]
#[inline(never)]
fn inside_a_call() -> i32 {
    -Code::BadArgument.value()
}

/// Reads the module state without a call (no message is cleared); 0 from
/// inside a call.
pub(crate) fn peek(f: impl FnOnce(&State) -> i32) -> i32 {
    match state().map(RefCell::try_borrow) {
        Some(Ok(state)) => f(&state),
        _ => 0,
    }
}
