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
//!
//! Where a Content-Security-Policy forbids `new Function`, the builders are
//! absent and [`super::convert`] builds the same objects field by field:
//! the results are equal either way (`tests/web.rs` compares both paths).

use std::cell::Cell;

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::batch::ControlType;
use crate::rewrite::BatchOutcome;

/// The builders' source: a function body returning the builder object. Key
/// order is the documented order of each result (`types.d.ts`).
const SOURCE: &str = r#"
const control = [null, "abort", "commit", "other"];
function outcomes(ints, bigs) {
  const batches = new Array(ints.length >> 2);
  for (let i = 0, j = 0, k = 0; i < batches.length; i++, j += 4, k += 3) {
    batches[i] = {
      offset: ints[j] >>> 0,
      baseOffset: bigs[k],
      originalPid: bigs[k + 1],
      mappedPid: bigs[k + 2],
      salt: ints[j + 1] < 0 ? null : ints[j + 1],
      transactional: ints[j + 2] !== 0,
      control: control[ints[j + 3]],
    };
  }
  return batches;
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
  rewriteResult(bytes, consumed, records, snapshotRequired, ints, bigs) {
    // The batch outcomes are built when first read: a caller that only
    // forwards the bytes and records pays for two copies, not 1000 objects.
    const i32s = ints.slice(), i64s = bigs.slice();
    const settle = (result, batches) => {
      Object.defineProperty(result, "batches", { value: batches, writable: true, enumerable: true, configurable: true });
      return batches;
    };
    return {
      bytes: bytes.slice(), consumed, records, snapshotRequired,
      get batches() { return settle(this, outcomes(i32s, i64s)); },
      set batches(value) { settle(this, value); },
    };
  },
};
"#;

#[wasm_bindgen]
extern "C" {
    /// The builder object `SOURCE` returns.
    pub(super) type Builders;

    /// A BigInt in the signed 64-bit range or a safe-integer number, as an
    /// `i64`; anything else throws (`Err`), and `convert::int64` says why.
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

    /// `RewriteResult`: `bytes` copied out of WASM memory, the batches from
    /// four `i32`s (offset, salt or -1, transactional, control code) and
    /// three `i64`s (base offset, original PID, mapped PID) each.
    #[wasm_bindgen(method, js_name = rewriteResult)]
    pub(super) fn rewrite_result(
        this: &Builders,
        bytes: &[u8],
        consumed: u32,
        records: &Array,
        snapshot_required: bool,
        ints: &[i32],
        bigs: &[i64],
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

/// The batches of a rewrite as the columns [`Builders::rewrite_result`]
/// takes: four `i32`s and three `i64`s a batch. Kept by each `PidMapper`
/// and refilled, so a rewrite of bound producers allocates nothing here.
#[derive(Debug, Default)]
pub(super) struct Columns {
    pub(super) ints: Vec<i32>,
    pub(super) bigs: Vec<i64>,
}

impl Columns {
    /// Refills the columns from `batches`.
    pub(super) fn fill(&mut self, batches: &[BatchOutcome]) {
        // Sized first, then written in place: `extend` from arrays is a
        // call per batch at the size-optimised build's `opt-level = "s"`.
        self.ints.resize(batches.len() * 4, 0);
        self.bigs.resize(batches.len() * 3, 0);
        let rows = self
            .ints
            .chunks_exact_mut(4)
            .zip(self.bigs.chunks_exact_mut(3));
        for (b, (ints, bigs)) in batches.iter().zip(rows) {
            ints[0] = b.offset as i32;
            ints[1] = b.salt.map_or(-1, i32::from);
            ints[2] = i32::from(b.transactional);
            ints[3] = match b.control {
                None => 0,
                Some(ControlType::Abort) => 1,
                Some(ControlType::Commit) => 2,
                Some(ControlType::Other(_)) => 3,
            };
            bigs[0] = b.base_offset;
            bigs[1] = b.original_pid;
            bigs[2] = b.mapped_pid;
        }
    }
}
