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
//! property): forwarding the bytes and records costs no per-batch object.
//! Up to eight batches it is built at once instead, which costs less than
//! the copy of the columns and the accessor that laziness needs.
//!
//! Where a Content-Security-Policy forbids `new Function`, the builders are
//! absent and [`super::convert`] builds the same objects field by field:
//! the results are equal either way (`tests/web.rs` compares both paths).

use std::cell::Cell;

use js_sys::{Array, Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::batch::ControlType;
use crate::rewrite::BatchOutcome;

/// The builders' source: a function body returning the builder object. Key
/// order is the documented order of each result (`types.d.ts`).
const SOURCE: &str = r#"
const memory = arguments[0]; // WASM memory: its views are kept, and remade after a grow
const control = [null, "abort", "commit", "other"];
const EAGER = 8;
// Views of all of WASM memory, made again when a grow detaches the buffer
// (a detached buffer's views have length 0): no view is made per call.
let u8 = new Uint8Array(0), i64 = new BigInt64Array(0), i32 = new Int32Array(0);
function views() {
  if (u8.length === 0) {
    u8 = new Uint8Array(memory.buffer);
    i64 = new BigInt64Array(memory.buffer);
    i32 = new Int32Array(memory.buffer);
  }
}
// The intrinsic getters of a typed array (a subclass's own never run).
const typed = Object.getPrototypeOf(Uint8Array.prototype);
const getter = (name) => Object.getOwnPropertyDescriptor(typed, name).get;
const bufferOf = getter("buffer"), offsetOf = getter("byteOffset"), lengthOf = getter("byteLength");
// The columns at index `at` of `big` (a BigInt64Array) and `ints` (an
// Int32Array over the same bytes): three BigInts a batch (base offset,
// original PID, mapped PID), then two int32s a batch (offset; salt | has
// salt << 8 | transactional << 9 | control << 10).
function outcomes(big, ints, at, n) {
  const batches = new Array(n);
  for (let i = 0, j = 2 * (at + 3 * n), k = at; i < n; i++, j += 2, k += 3) {
    const p = ints[j + 1];
    batches[i] = {
      offset: ints[j] >>> 0,
      baseOffset: big[k],
      originalPid: big[k + 1],
      mappedPid: big[k + 2],
      salt: p & 256 ? p & 255 : null,
      transactional: (p & 512) !== 0,
      control: control[(p >> 10) & 3],
    };
  }
  return batches;
}
function result(bytes, consumed, records, snapshotRequired, columns, n) {
  if (records === undefined) records = [];
  const at = columns / 8;
  if (n <= EAGER) {
    // A few batches (a fetch of one batch per partition is common): built
    // now, straight from WASM memory, cheaper than the copy and the lazy
    // property below.
    return { bytes, consumed, records, snapshotRequired, batches: outcomes(i64, i32, at, n) };
  }
  // The batch outcomes are built when first read: a caller that only
  // forwards the bytes and records pays for the copies, not 1000 objects.
  const all = i64.slice(at, at + 4 * n);
  const ints = new Int32Array(all.buffer);
  const settle = (result, batches) => {
    Object.defineProperty(result, "batches", { value: batches, writable: true, enumerable: true, configurable: true });
    return batches;
  };
  return {
    bytes, consumed, records, snapshotRequired,
    get batches() { return settle(this, outcomes(all, ints, 0, n)); },
    set batches(value) { settle(this, value); },
  };
}
return {
  int64(v) {
    if (typeof v === "bigint") {
      if (BigInt.asIntN(64, v) === v) return v;
    } else if (Number.isSafeInteger(v)) {
      return BigInt(v);
    }
    throw 0; // not a plain 64-bit integer: the caller says why
  },
  same(a, b) {
    return a === b;
  },
  plainView(a) {
    const length = lengthOf.call(a); // throws unless a typed array
    return length === 0 ? null : new Uint8Array(bufferOf.call(a), offsetOf.call(a), length);
  },
  copyIn(view, to) {
    views();
    u8.set(view, to);
  },
  mapResult(mapped, salt, collision, record, snapshotRequired) {
    return { mapped, salt: salt < 0 ? null : salt, collision, record, snapshotRequired };
  },
  rewriteResult(from, length, consumed, records, snapshotRequired, columns, n) {
    views();
    return result(u8.slice(from, from + length), consumed, records, snapshotRequired, columns, n);
  },
  rewriteResultInPlace(bytes, view, from, length, consumed, records, snapshotRequired, columns, n) {
    views();
    if (length > 0) view.set(u8.subarray(from, from + length));
    return result(bytes, consumed, records, snapshotRequired, columns, n);
  },
};
"#;

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

    /// `RewriteResult`: `bytes` copied out of WASM memory (`length` bytes
    /// at `from`), `records` (`undefined`: none), the batches from the
    /// columns at `columns` ([`Columns`], `n` batches).
    #[wasm_bindgen(method, js_name = rewriteResult)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rewrite_result(
        this: &Builders,
        from: u32,
        length: u32,
        consumed: u32,
        records: &JsValue,
        snapshot_required: bool,
        columns: u32,
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
        columns: u32,
        n: u32,
    ) -> JsValue;
}

thread_local! {
    static BUILDERS: Option<Builders> = make();
    static PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// `new Function(SOURCE)(memory)`, or `None` where that is not allowed.
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

/// The batches of a rewrite as the columns the builders take, in one
/// vector so that JS copies them out at once: three `i64`s a batch (base
/// offset, original PID, mapped PID), then two `i32`s a batch, two to an
/// `i64` in memory order (the offset; the salt, `256` when there is one,
/// `512` when transactional, and the control code times `1024`: 0 none, 1
/// abort, 2 commit, 3 other). Kept by each `PidMapper` and refilled, so a
/// rewrite of bound producers allocates nothing here.
#[derive(Debug, Default)]
pub(super) struct Columns(pub(super) Vec<i64>);

impl Columns {
    /// Refills the columns from `batches`.
    pub(super) fn fill(&mut self, batches: &[BatchOutcome]) {
        let n = batches.len();
        self.0.resize(n * 4, 0);
        let (bigs, ints) = self.0.split_at_mut(n * 3);
        for (b, (big, int)) in batches.iter().zip(bigs.chunks_exact_mut(3).zip(ints)) {
            big[0] = b.base_offset;
            big[1] = b.original_pid;
            big[2] = b.mapped_pid;
            let control = match b.control {
                None => 0,
                Some(ControlType::Abort) => 1,
                Some(ControlType::Commit) => 2,
                Some(ControlType::Other(_)) => 3,
            };
            let packed = b.salt.map_or(0, |s| 256 | u32::from(s))
                | u32::from(b.transactional) << 9
                | control << 10;
            // The first i32 at the lower address: WASM memory is
            // little-endian, as are JS typed arrays on every host it runs.
            *int = (u64::from(b.offset as u32) | u64::from(packed) << 32) as i64;
        }
    }
}
