//! Results as JS values, every 64-bit integer as a BigInt, and the error
//! every call throws (what comes in is read in `args.rs`).

use js_sys::{Array, Object, Reflect, Uint8Array, JSON};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::batch::ControlType;
use crate::error::Error;
use crate::mapper::MapOutcome;
use crate::pid::PidSpace;
use crate::record::StateRecord;

pub(super) fn js_err(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

pub(super) fn invalid(reason: String) -> JsError {
    js_err(Error::invalid(reason))
}

/// A result with every 64-bit integer as a BigInt.
pub(super) fn to_js<T: Serialize>(value: &T) -> JsValue {
    let s = serde_wasm_bindgen::Serializer::new()
        .serialize_large_number_types_as_bigints(true)
        .serialize_maps_as_objects(true)
        .serialize_missing_as_null(true);
    value
        .serialize(&s)
        .expect("plain data serialises to JS values")
}

pub(super) fn set(obj: &Object, key: &'static str, value: impl Into<JsValue>) {
    // Setting a data property on a plain object cannot fail.
    with_key(key, |k| {
        let _ = Reflect::set(obj, k, &value.into());
    });
}

/// Calls `f` with the JS string of `key`, made once: decoding a key from
/// WASM memory on every use costs more than the rest of a small result.
fn with_key<T>(key: &'static str, f: impl FnOnce(&JsValue) -> T) -> T {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static KEYS: RefCell<HashMap<(usize, usize), JsValue>> = RefCell::new(HashMap::new());
    }
    KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        let k = keys
            .entry((key.as_ptr() as usize, key.len()))
            .or_insert_with(|| JsValue::from_str(key));
        f(k)
    })
}

pub(super) fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

pub(super) fn bytes(v: &[u8]) -> JsValue {
    Uint8Array::from(v).into()
}

pub(super) fn json_to_js(value: &serde_json::Value) -> JsValue {
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

pub(super) fn js_to_json_text(value: &JsValue, what: &str) -> Result<String, JsError> {
    if let Some(s) = value.as_string() {
        return Ok(s);
    }
    JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| invalid(format!("{what} is not JSON-serializable")))
}

/// `{key: Uint8Array, value: Uint8Array | null}` for a record.
pub(super) fn record_to_js(record: &StateRecord) -> Result<JsValue, JsError> {
    let (k, v) = record.encode().map_err(js_err)?;
    let obj = Object::new();
    set(&obj, "key", bytes(&k));
    set(
        &obj,
        "value",
        v.as_deref().map(bytes).unwrap_or(JsValue::NULL),
    );
    Ok(obj.into())
}

pub(super) fn records_to_js(records: &[StateRecord]) -> Result<Array, JsError> {
    records.iter().map(record_to_js).collect()
}

pub(super) fn outcome_to_js(o: &MapOutcome) -> Result<JsValue, JsError> {
    let record = match &o.record {
        Some(r) => record_to_js(r)?,
        None => JsValue::NULL,
    };
    let collision = match &o.collision {
        Some(c) => {
            let col = Object::new();
            set(&col, "collidingClusterId", c.colliding_cluster_id.as_str());
            set(&col, "key", get(&record, "key"));
            set(&col, "value", get(&record, "value"));
            col.into()
        }
        None => JsValue::NULL,
    };
    let salt = o.salt.map_or(-1, i32::from);
    if let Some(built) = super::build::with(|b| {
        b.map_result(o.mapped, salt, &collision, &record, o.snapshot_required)
    }) {
        return Ok(built);
    }
    let obj = Object::new();
    set(&obj, "mapped", o.mapped);
    set(
        &obj,
        "salt",
        o.salt.map(JsValue::from).unwrap_or(JsValue::NULL),
    );
    set(&obj, "collision", collision);
    set(&obj, "record", record);
    set(&obj, "snapshotRequired", o.snapshot_required);
    Ok(obj.into())
}

/// Where a rewrite's bytes go.
pub(super) enum Output<'a> {
    /// A new array, a copy of these bytes (`rewriteBatches`).
    New(&'a [u8]),
    /// The caller's array (`rewriteBatchesInPlace`), into whose plain view
    /// (`args::plain_view`; `None` when it shows no bytes) `copy` is
    /// written first, from its start (empty when the rewrite wrote the
    /// array itself).
    InPlace {
        bytes: &'a Uint8Array,
        view: Option<&'a Uint8Array>,
        copy: &'a [u8],
    },
}

/// A `RewriteResult` whose bytes are `out`.
pub(super) fn rewrite_to_js(
    out: Output<'_>,
    done: &mut super::build::Done,
) -> Result<JsValue, JsError> {
    let records = match done.records.is_empty() {
        true => JsValue::UNDEFINED, // the builders make `[]` in JS
        false => records_to_js(&done.records)?.into(),
    };
    done.records.clear();
    if let Some(built) = super::build::with(|b| {
        let (consumed, snapshot) = (done.consumed() as u32, done.snapshot_required());
        let (n, at) = done.noted();
        match &out {
            Output::New(buf) => b.rewrite_result(
                buf.as_ptr() as u32,
                buf.len() as u32,
                consumed,
                &records,
                snapshot,
                at,
                n,
            ),
            Output::InPlace { bytes, view, copy } => {
                let (view, copy) = match view {
                    Some(v) => (v.as_ref(), *copy),
                    None => (&JsValue::UNDEFINED, &[][..]),
                };
                let (from, length) = (copy.as_ptr() as u32, copy.len() as u32);
                b.rewrite_result_in_place(
                    bytes, view, from, length, consumed, &records, snapshot, at, n,
                )
            }
        }
    }) {
        return Ok(built);
    }
    let records = match records.is_undefined() {
        true => Array::new().into(),
        false => records,
    };
    let obj = Object::new();
    match out {
        Output::New(buf) => set(&obj, "bytes", bytes(buf)),
        Output::InPlace { bytes, view, copy } => {
            if let (Some(view), false) = (view, copy.is_empty()) {
                view.subarray(0, copy.len() as u32).copy_from(copy);
            }
            set(&obj, "bytes", bytes)
        }
    }
    set(&obj, "consumed", done.consumed() as u32);
    set(&obj, "records", records);
    set(&obj, "snapshotRequired", done.snapshot_required());
    let batches: Vec<BatchJs> = done
        .batches
        .iter()
        .map(|b| BatchJs {
            offset: b.offset as u32,
            base_offset: b.base_offset,
            original_pid: b.original_pid,
            mapped_pid: b.mapped_pid,
            salt: b.salt,
            transactional: b.transactional,
            control: b.control,
        })
        .collect();
    set(&obj, "batches", to_js(&batches));
    Ok(obj.into())
}

/// One batch's outcome, 64-bit values as BigInt (`BatchOutcome` in TS).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BatchJs {
    pub(super) offset: u32,
    pub(super) base_offset: i64,
    pub(super) original_pid: i64,
    pub(super) mapped_pid: i64,
    pub(super) salt: Option<u8>,
    pub(super) transactional: bool,
    pub(super) control: Option<ControlType>,
}

/// One binding, 64-bit values as BigInt (`Binding` in TS).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BindingJs<'a> {
    pub(super) source_cluster_id: &'a str,
    pub(super) pid: i64,
    pub(super) mapped: i64,
    pub(super) salt: u8,
    pub(super) last_seen_ms: Option<i64>,
    pub(super) transaction_open: bool,
    pub(super) recorded: bool,
    pub(super) pending: bool,
}

/// A decoded PID, 64-bit values as BigInt (`PidInfo` in TS).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PidInfoJs {
    pub(super) pid: i64,
    pub(super) space: PidSpace,
    pub(super) region: Option<u32>,
    pub(super) pid40: Option<i64>,
}
