//! Result objects built by JavaScript in one call.
//!
//! Every `Reflect.set` from WebAssembly is a call across the boundary, and
//! every BigInt made from an `i64` another: building a 1000-batch
//! `rewriteBatches` result field by field costs some 10,000 crossings. A
//! small JS object of builder functions, made once per instance with `new
//! Function`, takes the numbers as typed arguments and views of WASM memory
//! and builds the same objects in one call each (object literals, in JS).
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
const control = [null, "abort", "commit", "other"];
const EAGER = 8;
// The columns: three BigInts a batch (base offset, original PID, mapped
// PID), then two int32s a batch (offset; salt | has salt << 8 |
// transactional << 9 | control << 10), copied out of WASM memory at once.
function outcomes(all, n) {
  const ints = new Int32Array(all.buffer, all.byteOffset + 24 * n, 2 * n);
  const batches = new Array(n);
  for (let i = 0, j = 0, k = 0; i < n; i++, j += 2, k += 3) {
    const p = ints[j + 1];
    batches[i] = {
      offset: ints[j] >>> 0,
      baseOffset: all[k],
      originalPid: all[k + 1],
      mappedPid: all[k + 2],
      salt: p & 256 ? p & 255 : null,
      transactional: (p & 512) !== 0,
      control: control[(p >> 10) & 3],
    };
  }
  return batches;
}
function result(bytes, consumed, records, snapshotRequired, columns, n) {
  if (n <= EAGER) {
    // A few batches (a fetch of one batch per partition is common): built
    // now, straight from WASM memory, cheaper than the copy and the lazy
    // property below.
    return { bytes, consumed, records, snapshotRequired, batches: outcomes(columns, n) };
  }
  // The batch outcomes are built when first read: a caller that only
  // forwards the bytes and records pays for the copies, not 1000 objects.
  const all = new BigInt64Array(columns); // a copy: a constructor copies faster than slice()
  const settle = (result, batches) => {
    Object.defineProperty(result, "batches", { value: batches, writable: true, enumerable: true, configurable: true });
    return batches;
  };
  return {
    bytes, consumed, records, snapshotRequired,
    get batches() { return settle(this, outcomes(all, n)); },
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
  mapResult(mapped, salt, collision, record, snapshotRequired) {
    return { mapped, salt: salt < 0 ? null : salt, collision, record, snapshotRequired };
  },
  rewriteResult(bytes, consumed, records, snapshotRequired, columns, n) {
    return result(new Uint8Array(bytes), consumed, records, snapshotRequired, columns, n);
  },
  rewriteResultInPlace(bytes, consumed, records, snapshotRequired, columns, n) {
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

    /// `RewriteResult`: `bytes` copied out of WASM memory, the batches
    /// from `columns` ([`Columns`], `n` batches).
    #[wasm_bindgen(method, js_name = rewriteResult)]
    pub(super) fn rewrite_result(
        this: &Builders,
        bytes: &[u8],
        consumed: u32,
        records: &Array,
        snapshot_required: bool,
        columns: &[i64],
        n: u32,
    ) -> JsValue;

    /// [`Builders::rewrite_result`] whose `bytes` is the caller's array,
    /// rewritten in place.
    #[wasm_bindgen(method, js_name = rewriteResultInPlace)]
    pub(super) fn rewrite_result_in_place(
        this: &Builders,
        bytes: &Uint8Array,
        consumed: u32,
        records: &Array,
        snapshot_required: bool,
        columns: &[i64],
        n: u32,
    ) -> JsValue;
}

thread_local! {
    static BUILDERS: Option<Builders> = make();
    static PLAIN: Cell<bool> = const { Cell::new(false) };
}

/// `new Function(SOURCE)()`, or `None` where that is not allowed.
fn make() -> Option<Builders> {
    let ctor: Function = Reflect::get(&js_sys::global(), &"Function".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let body = Array::of1(&SOURCE.into());
    let maker: Function = Reflect::construct(&ctor, &body).ok()?.dyn_into().ok()?;
    maker
        .call0(&JsValue::UNDEFINED)
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
