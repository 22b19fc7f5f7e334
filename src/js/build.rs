//! Result objects built by JavaScript in one call.
//!
//! Every `Reflect.set` from WebAssembly is a call across the boundary, and
//! every BigInt made from an `i64` another: building a 1000-batch
//! `rewriteBatches` result field by field costs some 10,000 crossings. A
//! small JS object of builder functions, made once per instance with `new
//! Function`, takes the numbers as typed arguments and addresses in WASM
//! memory and builds the same objects in one call each (object literals,
//! in JS). It keeps its views of WASM memory between calls (each view made
//! is a cost too), making them again when a grow detaches the buffer, and
//! does the other small jobs of a rewrite that would each be a crossing:
//! reading the caller's array through the intrinsic getters, copying it in
//! and the rewritten bytes back, comparing a source with the last one.
//!
//! A rewrite's `batches` is built when first read (then it is a plain data
//! property), from a copy of the outcomes as the walk noted them
//! (big-endian, as the batches hold them: JS decodes them, not the walk):
//! forwarding the bytes and records costs no per-batch object. Up to eight
//! batches it is built at once instead, which costs less than the copy and
//! the accessor that laziness needs.
//!
//! The builders' source is `builders.js`, a function body, after the
//! constants of `layout.js` (generated from Rust, `generated.rs`). The glue made by
//! wasm-bindgen gets a second instance of it (`scripts/finish-glue.py`),
//! whose `inPlace` is `rewriteBatchesInPlace`'s fast path (`fast.rs`).
//!
//! Where a Content-Security-Policy forbids `new Function`, the builders are
//! absent and [`super::convert`] builds the same objects field by field:
//! the results are equal either way (`tests/web.rs` compares both paths).

use std::cell::Cell;

use js_sys::{Array, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::batch::Noted;
use crate::record::StateRecord;
use crate::rewrite::{BatchOutcome, Rewrite};

/// The builders' source: a function body returning the builder object. Key
/// order is the documented order of each result (`types.d.ts`).
const SOURCE: &str = concat!(include_str!("layout.js"), include_str!("builders.js"));

#[wasm_bindgen]
extern "C" {
    /// The builder object `SOURCE` returns.
    pub(super) type Builders;

    /// A BigInt in the signed 64-bit range or a safe-integer number, as an
    /// `i64`; anything else throws (`Err`), and `args::int64` says why.
    #[wasm_bindgen(method, catch)]
    pub(super) fn int64(this: &Builders, v: &JsValue) -> Result<i64, JsValue>;

    /// `MapResult`; `salt` < 0 is null.
    #[wasm_bindgen(method, js_name = mapResult)]
    pub(super) fn map_result(
        this: &Builders,
        mapped: i64,
        salt: i32,
        collision: &JsValue,
        record: &JsValue,
        snapshot_required: bool,
    ) -> JsValue;

    /// `a === b`.
    #[wasm_bindgen(method)]
    pub(super) fn same(this: &Builders, a: &JsValue, b: &JsValue) -> bool;

    /// A plain `Uint8Array` over the bytes `a` shows, read through the
    /// intrinsic getters (`args::plain_view`'s work in one call), or null
    /// when it shows none; throws when `a` is not a typed array.
    #[wasm_bindgen(method, catch, js_name = plainView)]
    pub(super) fn plain_view(this: &Builders, a: &Uint8Array) -> Result<JsValue, JsValue>;

    /// Copies `view` into WASM memory at `to` (room for it made first).
    #[wasm_bindgen(method, js_name = copyIn)]
    pub(super) fn copy_in(this: &Builders, view: &Uint8Array, to: u32);
    /// How many header slots a rewrite of `view` takes, one an entry
    /// (`batch::gather_with`'s rule): for `every` entry, or 0 where they
    /// average fewer bytes than one copy of every byte serves better.
    #[wasm_bindgen(method, js_name = slotsOf)]
    pub(super) fn slots_of(this: &Builders, view: &Uint8Array, every: bool) -> u32;
    /// Copies the windows of `view`'s entries into the slots at `base`, as
    /// `batch::gather_with` does, `slots` at most; returns how many it
    /// filled.
    #[wasm_bindgen(method)]
    pub(super) fn gather(this: &Builders, view: &Uint8Array, base: u32, slots: u32) -> u32;
    /// Writes into `view` the CRC and producer ID of each batch the rewrite
    /// whose numbers are at `info` ([`Done::info_address`]) changed, from
    /// its slot at `base`.
    #[wasm_bindgen(method, js_name = writeBack)]
    pub(super) fn write_back(this: &Builders, view: &Uint8Array, info: u32, base: u32);

    /// `RewriteResult`: `bytes` copied out of WASM memory (`length` bytes
    /// at `from`), `records` (`undefined`: none), the batches from their
    /// `n` outcomes noted at `noted` ([`Noted`]).
    #[wasm_bindgen(method, js_name = rewriteResult)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rewrite_result(
        this: &Builders,
        from: u32,
        length: u32,
        consumed: u32,
        records: &JsValue,
        snapshot_required: bool,
        noted: u32,
        n: u32,
    ) -> JsValue;

    /// [`Builders::rewrite_result`] whose `bytes` is the caller's array,
    /// rewritten in place: `length` bytes at `from` are first copied into
    /// `view` (the plain view over it; none when 0).
    #[wasm_bindgen(method, js_name = rewriteResultInPlace)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rewrite_result_in_place(
        this: &Builders,
        bytes: &Uint8Array,
        view: &JsValue,
        from: u32,
        length: u32,
        consumed: u32,
        records: &JsValue,
        snapshot_required: bool,
        noted: u32,
        n: u32,
    ) -> JsValue;
}

thread_local! {
    static BUILDERS: Option<Builders> = make();
    static PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// `new Function(SOURCE)(memory)`, or
/// `None` where that is not allowed.
fn make() -> Option<Builders> {
    let ctor: Function = Reflect::get(&js_sys::global(), &"Function".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let body = Array::of1(&SOURCE.into());
    let maker: Function = Reflect::construct(&ctor, &body).ok()?.dyn_into().ok()?;
    maker
        .call1(&JsValue::UNDEFINED, &wasm_bindgen::memory())
        .ok()
        .map(JsCast::unchecked_into)
}

/// Calls `f` with the builders, or returns `None` when there are none (or
/// [`use_plain_results`] turned them off).
pub(super) fn with<T>(f: impl FnOnce(&Builders) -> T) -> Option<T> {
    if PLAIN.with(Cell::get) {
        return None;
    }
    BUILDERS.with(|b| b.as_ref().map(f))
}

/// Builds every result field by field from now on (`true`), as under a
/// Content-Security-Policy without `unsafe-eval`; for tests comparing both.
#[doc(hidden)]
#[wasm_bindgen(js_name = __usePlainResults)]
pub fn use_plain_results(plain: bool) {
    PLAIN.with(|p| p.set(plain));
}

/// What a committed rewrite leaves for JS to build its result from: its
/// numbers, where its outcomes lie in WASM memory as the walk noted them
/// ([`Noted`], in the mapper until its next call, which JS reads there),
/// and its records. Kept by each `PidMapper` and refilled.
#[derive(Debug, Default)]
pub(super) struct Done {
    /// Bytes consumed, whether a snapshot is required (1) or not (0), the
    /// number of batches, the address of their noted outcomes, the number
    /// of records, and the address and number of the batches' writes
    /// (`PidWrite`, one a changed batch): the fast path reads these from
    /// memory.
    info: [u32; Done::WORDS],
    /// The records, until JS takes them.
    pub(super) records: Vec<StateRecord>,
    /// The outcomes decoded, only where there are no builders to read the
    /// noted ones (the plain path).
    pub(super) batches: Vec<BatchOutcome>,
}

impl Done {
    /// Which word of the numbers (`info`) holds what, for the fast path's
    /// JS half (`src/js/layout.js` is generated from these).
    pub(super) const CONSUMED: usize = 0;
    pub(super) const SNAPSHOT_REQUIRED: usize = 1;
    pub(super) const BATCHES: usize = 2;
    pub(super) const NOTED: usize = 3;
    pub(super) const RECORDS: usize = 4;
    pub(super) const WRITES: usize = 5;
    pub(super) const CHANGED: usize = 6;
    pub(super) const WORDS: usize = 7;

    /// Keeps what `rewrite` leaves for JS, then finishes it (its writes
    /// made, its changes kept); with `decode`, the outcomes decoded too,
    /// where there are no builders to read the noted ones (the fast path's
    /// builders are the glue's own, always there).
    pub(super) fn keep(&mut self, rewrite: Rewrite<'_>, decode: bool) {
        let noted = rewrite.noted();
        self.batches.clear();
        if decode && with(|_| ()).is_none() {
            self.batches.extend(noted.iter().map(Noted::outcome));
        }
        let writes = rewrite.writes();
        let mut info = [0; Done::WORDS];
        info[Done::CONSUMED] = rewrite.consumed() as u32;
        info[Done::SNAPSHOT_REQUIRED] = u32::from(rewrite.snapshot_required());
        info[Done::BATCHES] = noted.len() as u32;
        info[Done::NOTED] = noted.as_ptr() as u32;
        info[Done::WRITES] = writes.as_ptr() as u32;
        info[Done::CHANGED] = writes.len() as u32;
        self.records = rewrite.finish_records();
        info[Done::RECORDS] = self.records.len() as u32;
        self.info = info;
    }

    /// Bytes consumed.
    pub(super) fn consumed(&self) -> usize {
        self.info[Done::CONSUMED] as usize
    }

    /// Whether a snapshot is required.
    pub(super) fn snapshot_required(&self) -> bool {
        self.info[Done::SNAPSHOT_REQUIRED] != 0
    }

    /// The number of batches and the address of their noted outcomes.
    pub(super) fn noted(&self) -> (u32, u32) {
        (self.info[Done::BATCHES], self.info[Done::NOTED])
    }

    /// The address of the numbers the fast path reads.
    pub(super) fn info_address(&self) -> u32 {
        self.info.as_ptr() as u32
    }
}
