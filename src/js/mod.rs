//! The JavaScript API (wasm-bindgen, feature `js`): conversions only.
//!
//! Every function here turns JS values into the Rust types of the core,
//! calls the same method a native caller would, and turns the result back.
//!
//! * **64-bit integers** are `BigInt` in every result. On the way in, a
//!   `BigInt`, a number that is a safe integer, or a decimal string of
//!   digits (an optional `-`, nothing else) is accepted. The two JSON
//!   documents of the API, records (`decodeRecord`/`encodeRecord`) and the
//!   simulator's report, keep the JSON form of `docs/FORMAT.md`: 64-bit
//!   integers as decimal strings.
//! * **Options** are a plain object or `null`/`undefined` (an array, a
//!   function or a class instance is an error), parsed by serde: an
//!   unknown key is an error, so a typo never silently runs with defaults.
//! * **Small integers** (a partition, a salt) are `number`s that are
//!   integers in range; nothing is coerced.
//! * **A freed mapper** throws `BadHandle: this PidMapper was freed`
//!   (`scripts/finish-glue.py` names wasm-bindgen's own message).
//! * **Errors** are thrown as JS `Error`s carrying the core's message
//!   (`Name: detail`).
//! * The TypeScript declarations of every option and result are
//!   `src/js/types.d.ts`, appended to the generated `.d.ts`.

mod args;
mod build;
mod convert;
mod fast;
mod functions;
// Native only: it reads and writes the repository's files, and the wasm
// test build links no second copy of this crate (tests/support's).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod generated;
mod options;
mod rewrite;

pub use build::use_plain_results;
pub use functions::*;

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::batch::{
    changed_slots, gather_with, HeaderView, CRC_OFFSET, PRODUCER_ID_OFFSET, SLOT_BYTES,
};
use crate::mapper::{KnownSource, LoadOutcome, Mapper};
use crate::record::StateRecord;
use crate::rewrite::RewriteOptions;
use args::{bytes_arg, int64, record_arg, text};
use convert::{
    bytes, js_err, js_to_json_text, json_to_js, outcome_to_js, record_to_js, set, to_js, BindingJs,
    PidInfoJs,
};
use options::{MapperOptions, RewriteOpts};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = include_str!("types.d.ts");

/// The mapper of one destination partition (`docs/DESIGN.md`).
#[wasm_bindgen]
#[derive(Debug)]
pub struct PidMapper {
    inner: Mapper,
    /// What the last rewrite left for JS to build its result from.
    done: build::Done,
    /// The checked path's copy of the caller's bytes, below
    /// [`HEADERS_FROM`].
    scratch: Vec<u8>,
    /// The checked path's header slots ([`PidMapper::gathering`]), and their entries'
    /// offsets where a call into JS gathered each.
    slots: Vec<u8>,
    offsets: Vec<usize>,
    /// The last source cluster ID of `map` and the rewrites, and its text.
    source: args::LastSource,
    /// The source `rewriteBatchesInPlace`'s fast path last named
    /// (`fast.rs`).
    fast_source: KnownSource,
    /// The error of the fast path's last rewrite, until JS asks for it.
    fast_error: Option<crate::Error>,
}

#[wasm_bindgen]
impl PidMapper {
    /// `new PidMapper(topicId, partition, options?)`: `topicId` Kafka's
    /// base64url or 8-4-4-4-12 hex topic ID; `partition` an integer number
    /// from 0 to 2^31 - 1 (nothing is coerced: `2 ** 32 + 3`, `1.5`, `"0"`,
    /// `true` or `null` is an `InvalidInput` error); `options` a plain
    /// object (`MapperOptions`: durability, expiration, trust declaration,
    /// capacity limits), `null` or left out.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = topicId, unchecked_param_type = "string")] topic_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] partition: JsValue,
        #[wasm_bindgen(unchecked_param_type = "MapperOptions | null")] options: Option<JsValue>,
    ) -> Result<PidMapper, JsError> {
        let partition = args::small_int(&partition, (0, i64::from(i32::MAX)), |why| {
            crate::Error::invalid(format!("partition {why}"))
        })? as i32;
        let opts: MapperOptions =
            args::options(options.unwrap_or(JsValue::UNDEFINED), "PidMapper options")?;
        let config = opts.config(&text(&topic_id, "topicId")?, partition)?;
        options::seed_once();
        Ok(PidMapper::wrap(Mapper::new(config).map_err(js_err)?))
    }

    /// Maps `pid` from `sourceClusterId` at `nowMs`. A new binding is
    /// pending until `confirm()`.
    #[wasm_bindgen(unchecked_return_type = "MapResult")]
    pub fn map(
        &mut self,
        #[wasm_bindgen(js_name = sourceClusterId, unchecked_param_type = "string")]
        source_cluster_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Int64")] pid: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Int64", js_name = nowMs)] now_ms: JsValue,
    ) -> Result<JsValue, JsError> {
        let source = self.source.take(&source_cluster_id)?;
        let pid = int64(&pid, "pid")?;
        let now = int64(&now_ms, "nowMs")?;
        let outcome = self.inner.map(&source.1, pid, now);
        self.source.keep(source);
        outcome_to_js(&outcome.map_err(js_err)?)
    }

    /// Rewrites a buffer of record batches into a new array; the input
    /// array is not changed. From 64 KiB, or where the batches average
    /// 8 KiB or more (unless `strictCrc`, which needs the records), the
    /// new array is the one copy made, and only each batch's header window
    /// enters the module.
    #[wasm_bindgen(js_name = rewriteBatches, unchecked_return_type = "RewriteResult")]
    pub fn rewrite_batches(
        &mut self,
        #[wasm_bindgen(js_name = sourceClusterId, unchecked_param_type = "string")]
        source_cluster_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] input: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Int64", js_name = nowMs)] now_ms: JsValue,
        #[wasm_bindgen(unchecked_param_type = "RewriteOptions | null")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        let source = self.source.take(&source_cluster_id)?;
        let now = int64(&now_ms, "nowMs")?;
        let opts = PidMapper::rewrite_options(options)?;
        let Some(array) = input.dyn_ref::<Uint8Array>() else {
            return Err(convert::invalid("input must be a Uint8Array".to_owned()));
        };
        let view = args::plain_view(array)?;
        // Through the headers: one copy, by JS, into the array the call
        // returns, rewritten there through its headers as
        // `rewriteBatchesInPlace` rewrites the caller's (the records never
        // enter the module); otherwise the copy in and out of the module.
        if let Some((v, gathering)) = view
            .as_ref()
            .and_then(|v| Some((v, PidMapper::gathering(v, opts)?)))
        {
            let out = v.slice(0, v.length());
            let done = self.rewrite_headers_in_place(&source.1, &out, now, opts, gathering);
            self.source.keep(source);
            done?;
            let out = convert::Output::InPlace {
                bytes: &out,
                view: None,
                copy: &[],
            };
            return convert::rewrite_to_js(out, &mut self.done);
        }
        // Into a buffer kept between calls (as long as the fetches are, it
        // is only overwritten): the input array stays as it was.
        args::copy_view(view.as_ref(), &mut self.scratch)?;
        let done = self.rewrite_scratch(&source.1, now, opts);
        self.source.keep(source);
        done?;
        let out = convert::Output::New(&self.scratch);
        convert::rewrite_to_js(out, &mut self.done)
    }

    /// Rewrites `bytes` in place (a broker's or proxy's own fetch buffer,
    /// which it will not read again in its old form): the same work and
    /// result as `rewriteBatches`, whose `bytes` is this array, without
    /// copying the output to a new one. On an error `bytes` is unchanged;
    /// a truncated tail is never written. Where the batches average 8 KiB
    /// or more (unless `strictCrc`, which needs the records), only each
    /// batch's header window is copied in and 12 bytes of a changed batch
    /// out, so that the cost follows the number of batches, not their size;
    /// smaller batches are copied in whole, into room the module keeps
    /// between calls.
    #[wasm_bindgen(js_name = rewriteBatchesInPlace, unchecked_return_type = "RewriteResult")]
    pub fn rewrite_batches_in_place(
        &mut self,
        #[wasm_bindgen(js_name = sourceClusterId, unchecked_param_type = "string")]
        source_cluster_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Int64", js_name = nowMs)] now_ms: JsValue,
        #[wasm_bindgen(unchecked_param_type = "RewriteOptions | null")] options: Option<JsValue>,
    ) -> Result<JsValue, JsError> {
        // The arguments checked once, in the order `rewriteBatches` checks
        // them, before either path runs.
        let source = self.source.take(&source_cluster_id)?;
        let now = int64(&now_ms, "nowMs")?;
        let opts = PidMapper::rewrite_options(options)?;
        self.in_place(source, &bytes, now, opts)
    }

    /// Applies one `__mirror_state` record (`value` null = tombstone).
    #[wasm_bindgen(js_name = loadRecord, unchecked_return_type = "LoadResult")]
    pub fn load_record(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] key: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | null")] value: JsValue,
    ) -> Result<JsValue, JsError> {
        let record = record_arg(&key, &value)?;
        let outcome = self.inner.load_record(&record).map_err(js_err)?;
        let obj = Object::new();
        match outcome {
            LoadOutcome::Skipped => set(&obj, "outcome", "skipped"),
            LoadOutcome::Bound {
                mapped,
                evicted,
                undeclared,
            } => {
                set(&obj, "outcome", "bound");
                set(&obj, "mapped", mapped);
                set(&obj, "evicted", evicted.len() as u32);
                set(&obj, "undeclared", undeclared);
            }
            LoadOutcome::Deleted { existed } => {
                set(&obj, "outcome", "deleted");
                set(&obj, "existed", existed);
            }
        }
        Ok(obj.into())
    }

    /// Confirms every pending binding once their records are durable;
    /// returns how many. Append the batches only after this.
    pub fn confirm(&mut self) -> u32 {
        self.inner.confirm() as u32
    }

    /// Takes back every pending binding and every change since the last
    /// confirm; returns how many bindings it removed.
    pub fn abort(&mut self) -> u32 {
        self.inner.abort() as u32
    }

    /// How many bindings await `confirm()`.
    #[wasm_bindgen(getter)]
    pub fn pending(&self) -> u32 {
        self.inner.pending() as u32
    }

    /// The confirmed state as snapshot bytes (pending bindings left out);
    /// throws `OutOfMemory` if there is no room for them.
    pub fn snapshot(&self) -> Result<Vec<u8>, JsError> {
        self.inner.try_snapshot().map_err(js_err)
    }

    /// A mapper from snapshot bytes.
    pub fn restore(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue,
    ) -> Result<PidMapper, JsError> {
        let bytes = bytes_arg(&bytes, "bytes")?;
        options::seed_once();
        Ok(PidMapper::wrap(Mapper::restore(&bytes).map_err(js_err)?))
    }

    /// Expires idle bindings; returns the tombstones' keys.
    #[wasm_bindgen(unchecked_return_type = "Uint8Array[]")]
    pub fn expire(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Int64", js_name = nowMs)] now_ms: JsValue,
    ) -> Result<Array, JsError> {
        let now = int64(&now_ms, "nowMs")?;
        keys(&self.inner.expire(now).map_err(js_err)?)
    }

    /// Expires every binding of one mapped PID; returns tombstone keys.
    #[wasm_bindgen(js_name = expirePid, unchecked_return_type = "Uint8Array[]")]
    pub fn expire_pid(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "Int64")] mapped: JsValue,
    ) -> Result<Array, JsError> {
        let mapped = int64(&mapped, "mapped")?;
        keys(&self.inner.expire_pid(mapped).map_err(js_err)?)
    }

    /// Every binding, in storage order.
    #[wasm_bindgen(unchecked_return_type = "Binding[]")]
    pub fn bindings(&self) -> JsValue {
        let all: Vec<BindingJs<'_>> = self
            .inner
            .bindings()
            .map(|b| BindingJs {
                source_cluster_id: b.source_cluster_id,
                pid: b.pid,
                mapped: b.mapped,
                salt: b.salt,
                last_seen_ms: b.last_seen_ms,
                transaction_open: b.transaction_open,
                recorded: b.recorded,
                pending: b.pending,
            })
            .collect();
        to_js(&all)
    }

    /// How many identities are bound.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.inner.len() as u32
    }
}

fn keys(records: &[StateRecord]) -> Result<Array, JsError> {
    records
        .iter()
        .map(|r| r.key.to_bytes().map(|k| bytes(&k)).map_err(js_err))
        .collect()
}
