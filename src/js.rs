//! The JavaScript API (wasm-bindgen, feature `js`): conversions only.
//!
//! Every function here turns JS values into the Rust types of the core,
//! calls the same method a native caller would, and turns the result back.
//! 64-bit integers (PIDs) cross as `BigInt` (numbers that are safe integers
//! and decimal strings are accepted on the way in); errors are thrown as JS
//! `Error`s carrying the core's message.

use js_sys::{Array, Object, Reflect, Uint8Array, JSON};
use wasm_bindgen::prelude::*;

use crate::error::Error;
use crate::mapper::{Durability, LoadOutcome, MapOutcome, Mapper, MapperConfig};
use crate::record::StateRecord;
use crate::rewrite::RewriteOptions;

fn js_err(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

fn invalid(reason: String) -> JsError {
    js_err(Error::invalid(reason))
}

/// A 64-bit integer from a BigInt, a safe-integer number or a decimal string.
fn int64(v: &JsValue, what: &str) -> Result<i64, JsError> {
    if v.is_bigint() {
        return i64::try_from(v.clone())
            .map_err(|_| invalid(format!("{what} does not fit in a signed 64-bit integer")));
    }
    if let Some(n) = v.as_f64() {
        if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 {
            return Ok(n as i64);
        }
        return Err(invalid(format!(
            "{what} {n} is not a safe integer; pass it as a BigInt"
        )));
    }
    if let Some(s) = v.as_string() {
        return s
            .trim()
            .parse()
            .map_err(|_| invalid(format!("{what} {s:?} is not a 64-bit integer")));
    }
    Err(invalid(format!("{what} must be a BigInt or a number")))
}

fn set(obj: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a data property on a plain object cannot fail.
    let _ = Reflect::set(obj, &JsValue::from_str(key), &value.into());
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

fn bytes(v: &[u8]) -> JsValue {
    Uint8Array::from(v).into()
}

fn json_to_js(value: &serde_json::Value) -> JsValue {
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

fn js_to_json_text(value: &JsValue, what: &str) -> Result<String, JsError> {
    if let Some(s) = value.as_string() {
        return Ok(s);
    }
    JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| invalid(format!("{what} is not JSON-serializable")))
}

/// `{key: Uint8Array, value: Uint8Array | null}` for a record.
fn record_to_js(record: &StateRecord) -> Result<JsValue, JsError> {
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

fn records_to_js(records: &[StateRecord]) -> Result<Array, JsError> {
    records.iter().map(record_to_js).collect()
}

fn outcome_to_js(o: &MapOutcome) -> Result<JsValue, JsError> {
    let obj = Object::new();
    set(&obj, "mapped", o.mapped);
    set(
        &obj,
        "salt",
        o.salt.map(JsValue::from).unwrap_or(JsValue::NULL),
    );
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
    set(&obj, "collision", collision);
    set(&obj, "record", record);
    set(&obj, "snapshotRequired", o.snapshot_required);
    Ok(obj.into())
}

fn optional_bytes(v: &JsValue, what: &str) -> Result<Option<Vec<u8>>, JsError> {
    if v.is_null() || v.is_undefined() {
        return Ok(None);
    }
    v.dyn_ref::<Uint8Array>()
        .map(|a| Some(a.to_vec()))
        .ok_or_else(|| invalid(format!("{what} must be a Uint8Array or null")))
}

/// The mapper of one destination partition (`docs/DESIGN.md`).
#[wasm_bindgen]
#[derive(Debug)]
pub struct PidMapper {
    inner: Mapper,
}

#[wasm_bindgen]
impl PidMapper {
    /// `new PidMapper(topicId, partition, {durability?, producerExpirationMs?})`.
    #[wasm_bindgen(constructor)]
    pub fn new(topic_id: &str, partition: i32, options: JsValue) -> Result<PidMapper, JsError> {
        let mut config = MapperConfig::new(topic_id.parse().map_err(js_err)?, partition);
        let durability = get(&options, "durability");
        if !durability.is_undefined() {
            config.durability = match durability.as_string().as_deref() {
                Some("bindings") => Durability::Bindings,
                Some("collisions") => Durability::Collisions,
                _ => {
                    return Err(invalid(
                        "options.durability must be \"bindings\" or \"collisions\"".into(),
                    ))
                }
            };
        }
        let expiration = get(&options, "producerExpirationMs");
        if !expiration.is_undefined() {
            config.producer_expiration_ms = int64(&expiration, "options.producerExpirationMs")?;
        }
        Ok(PidMapper {
            inner: Mapper::new(config).map_err(js_err)?,
        })
    }

    /// Maps `pid` (BigInt) from `sourceClusterId` at `nowMs`.
    pub fn map(
        &mut self,
        source_cluster_id: &str,
        pid: JsValue,
        now_ms: JsValue,
    ) -> Result<JsValue, JsError> {
        let pid = int64(&pid, "pid")?;
        let now = int64(&now_ms, "nowMs")?;
        let outcome = self
            .inner
            .map(source_cluster_id, pid, now)
            .map_err(js_err)?;
        outcome_to_js(&outcome)
    }

    /// Rewrites a buffer of record batches; returns `{bytes, consumed,
    /// records, snapshotRequired, batches}`. The input array is not changed.
    #[wasm_bindgen(js_name = rewriteBatches)]
    pub fn rewrite_batches(
        &mut self,
        source_cluster_id: &str,
        input: &[u8],
        now_ms: JsValue,
        options: JsValue,
    ) -> Result<JsValue, JsError> {
        let now = int64(&now_ms, "nowMs")?;
        let opts = RewriteOptions {
            strict_crc: get(&options, "strictCrc").is_truthy(),
            complete: get(&options, "complete").is_truthy(),
        };
        let mut buf = input.to_vec();
        let result = self
            .inner
            .rewrite(source_cluster_id, &mut buf, now, opts)
            .map_err(js_err)?;
        let obj = Object::new();
        set(&obj, "bytes", bytes(&buf));
        set(&obj, "consumed", result.consumed as u32);
        set(&obj, "records", records_to_js(&result.records)?);
        set(&obj, "snapshotRequired", result.snapshot_required);
        let batches = serde_json::to_value(&result.batches).unwrap_or_default();
        set(&obj, "batches", json_to_js(&batches));
        Ok(obj.into())
    }

    /// Applies one `__mirror_state` record (`value` null = tombstone);
    /// returns `{outcome: "skipped" | "bound" | "deleted", mapped?}`.
    #[wasm_bindgen(js_name = loadRecord)]
    pub fn load_record(&mut self, key: &[u8], value: JsValue) -> Result<JsValue, JsError> {
        let value = optional_bytes(&value, "value")?;
        let record = StateRecord::decode(key, value.as_deref()).map_err(js_err)?;
        let outcome = self.inner.load_record(&record).map_err(js_err)?;
        let obj = Object::new();
        match outcome {
            LoadOutcome::Skipped => set(&obj, "outcome", "skipped"),
            LoadOutcome::Bound { mapped, evicted } => {
                set(&obj, "outcome", "bound");
                set(&obj, "mapped", mapped);
                set(&obj, "evicted", evicted.len() as u32);
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

    /// The confirmed state as snapshot bytes (pending bindings left out).
    pub fn snapshot(&self) -> Vec<u8> {
        self.inner.snapshot()
    }

    /// A mapper from snapshot bytes.
    pub fn restore(bytes: &[u8]) -> Result<PidMapper, JsError> {
        Ok(PidMapper {
            inner: Mapper::restore(bytes).map_err(js_err)?,
        })
    }

    /// Expires idle bindings; returns the tombstones' keys (Uint8Array[]).
    pub fn expire(&mut self, now_ms: JsValue) -> Result<Array, JsError> {
        let now = int64(&now_ms, "nowMs")?;
        keys(&self.inner.expire(now).map_err(js_err)?)
    }

    /// Expires every binding of one mapped PID; returns tombstone keys.
    #[wasm_bindgen(js_name = expirePid)]
    pub fn expire_pid(&mut self, mapped: JsValue) -> Result<Array, JsError> {
        let mapped = int64(&mapped, "mapped")?;
        keys(&self.inner.expire_pid(mapped).map_err(js_err)?)
    }

    /// Every binding as `{sourceClusterId, pid, mapped, salt, lastSeenMs,
    /// transactionOpen, recorded, pending}` (64-bit values as decimal strings).
    pub fn bindings(&self) -> JsValue {
        let all: Vec<_> = self.inner.bindings().collect();
        json_to_js(&serde_json::to_value(all).unwrap_or_default())
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

/// F v1: the mapped PID (BigInt) of `pid` from `sourceClusterId` at `salt`.
#[wasm_bindgen(js_name = mapPid)]
pub fn map_pid(source_cluster_id: &str, pid: JsValue, salt: u32) -> Result<i64, JsError> {
    let pid = int64(&pid, "pid")?;
    crate::pid::map_pid(source_cluster_id, pid, u64::from(salt)).map_err(js_err)
}

/// Explains a PID: `{pid, space, region, pid40}` (64-bit values as strings).
#[wasm_bindgen(js_name = decodePid)]
pub fn decode_pid(pid: JsValue) -> Result<JsValue, JsError> {
    let info = crate::pid::decode_pid(int64(&pid, "pid")?);
    Ok(json_to_js(&serde_json::to_value(info).unwrap_or_default()))
}

/// Decodes `__mirror_state` bytes to the JSON form `{key, value | null}`.
#[wasm_bindgen(js_name = decodeRecord)]
pub fn decode_record(key: &[u8], value: JsValue) -> Result<JsValue, JsError> {
    let value = optional_bytes(&value, "value")?;
    let record = StateRecord::decode(key, value.as_deref()).map_err(js_err)?;
    Ok(json_to_js(&record.to_json()))
}

/// Encodes the JSON form of a record (object or text) to `{key, value}` bytes.
#[wasm_bindgen(js_name = encodeRecord)]
pub fn encode_record(json: JsValue) -> Result<JsValue, JsError> {
    let text = js_to_json_text(&json, "record")?;
    let record = StateRecord::from_json(&text).map_err(js_err)?;
    record_to_js(&record)
}

/// The version of the mapping function F.
#[wasm_bindgen(js_name = fVersion)]
pub fn f_version() -> u32 {
    u32::from(crate::pid::F_VERSION)
}

/// Runs the topology simulator on a scenario (object or JSON text) and
/// returns the report as a plain object (64-bit values as strings).
#[wasm_bindgen]
pub fn simulate(scenario: JsValue) -> Result<JsValue, JsError> {
    let text = js_to_json_text(&scenario, "scenario")?;
    let report = crate::sim::simulate_json(&text).map_err(js_err)?;
    Ok(json_to_js(
        &serde_json::to_value(report).unwrap_or_default(),
    ))
}
