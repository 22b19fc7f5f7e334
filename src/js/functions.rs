//! The API's functions beside `PidMapper`: F and PID decoding, records
//! encoded and decoded, the simulator, the fleet planner.

use wasm_bindgen::prelude::*;

use super::*;

/// F v1: the mapped PID of `pid` from `sourceClusterId` at `salt`, an
/// integer number from 0 to 63 (outside it `InvalidSalt`; not a number,
/// or a fraction, `InvalidInput`).
#[wasm_bindgen(js_name = mapPid)]
pub fn map_pid(
    #[wasm_bindgen(js_name = sourceClusterId, unchecked_param_type = "string")]
    source_cluster_id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Int64")] pid: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] salt: JsValue,
) -> Result<i64, JsError> {
    let source = text(&source_cluster_id, "sourceClusterId")?;
    let pid = int64(&pid, "pid")?;
    // Any integer number; the core refuses one outside 0 to 63
    // (`InvalidSalt`), as it would in a record.
    let safe = (1i64 << 53) - 1;
    let salt = args::small_int(&salt, (-safe, safe), |why| {
        crate::Error::invalid(format!("salt {why}"))
    })?;
    let salt = u64::try_from(salt).map_err(|_| js_err(crate::Error::InvalidSalt { salt }))?;
    crate::pid::map_pid(&source, pid, salt).map_err(js_err)
}

/// Explains a PID: its space, and region and pid40 where they exist.
#[wasm_bindgen(js_name = decodePid, unchecked_return_type = "PidInfo")]
pub fn decode_pid(
    #[wasm_bindgen(unchecked_param_type = "Int64")] pid: JsValue,
) -> Result<JsValue, JsError> {
    let info = crate::pid::decode_pid(int64(&pid, "pid")?);
    Ok(to_js(&PidInfoJs {
        pid: info.pid,
        space: info.space,
        region: info.region,
        pid40: info.pid40,
    }))
}

/// Whose producers a mapped PID's region (`decodePid(pid).region`) may
/// be: every way one of `ids` (a list as people write one, as
/// `planClusters` takes it) carries it, at every salt
/// (`mirrorpid::pid::owners`, as `mirrorpid pid decode --clusters` says).
#[wasm_bindgen(js_name = regionOwners, unchecked_return_type = "RegionOwner[]")]
pub fn region_owners(
    #[wasm_bindgen(unchecked_param_type = "number")] region: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] ids: JsValue,
) -> Result<JsValue, JsError> {
    let max = i64::from(crate::pid::REGION_MASK);
    let region = args::small_int(&region, (0, max), |why| {
        crate::Error::invalid(format!("region {why}"))
    })? as u32;
    let ids = text(&ids, "ids")?;
    let owners = crate::pid::owners(region, crate::plan::cluster_ids(&ids));
    Ok(json_to_js(
        &serde_json::to_value(owners).unwrap_or_default(),
    ))
}

/// Decodes `__mirror_state` bytes to the JSON form (`docs/FORMAT.md`).
#[wasm_bindgen(js_name = decodeRecord, unchecked_return_type = "RecordJson")]
pub fn decode_record(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array")] key: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Uint8Array | null")] value: JsValue,
) -> Result<JsValue, JsError> {
    let record = record_arg(&key, &value)?;
    Ok(json_to_js(&record.to_json()))
}

/// Encodes the JSON form of a record (object or text) to its bytes.
#[wasm_bindgen(js_name = encodeRecord, unchecked_return_type = "RecordBytes")]
pub fn encode_record(
    #[wasm_bindgen(unchecked_param_type = "RecordJson | string")] json: JsValue,
) -> Result<JsValue, JsError> {
    let text = js_to_json_text(&json, "record")?;
    let record = StateRecord::from_json(&text).map_err(js_err)?;
    record_to_js(&record)
}

/// The version of the mapping function F.
#[wasm_bindgen(js_name = fVersion)]
pub fn f_version() -> u32 {
    u32::from(crate::pid::F_VERSION)
}

/// The simulator's limits (`mirrorpid::sim::MAX_*`), for the page to
/// refuse drawing what the simulator refuses to run.
#[wasm_bindgen(js_name = simulatorLimits, unchecked_return_type = "SimulatorLimits")]
pub fn simulator_limits() -> JsValue {
    use crate::sim::{
        MAX_CLUSTERS, MAX_COUNT, MAX_DELIVERIES, MAX_EVENTS, MAX_LINKS, MAX_PRODUCERS,
    };
    let obj = Object::new();
    set(&obj, "clusters", MAX_CLUSTERS as u32);
    set(&obj, "links", MAX_LINKS as u32);
    set(&obj, "producers", MAX_PRODUCERS as u32);
    set(&obj, "events", MAX_EVENTS as u32);
    set(&obj, "count", MAX_COUNT);
    set(&obj, "deliveries", MAX_DELIVERIES as u32);
    obj.into()
}

/// Runs the topology simulator on a scenario (object or JSON text) and
/// returns the report (the JSON form: 64-bit values as decimal strings).
#[wasm_bindgen(unchecked_return_type = "SimulationReport")]
pub fn simulate(
    #[wasm_bindgen(unchecked_param_type = "object | string")] scenario: JsValue,
) -> Result<JsValue, JsError> {
    let text = js_to_json_text(&scenario, "scenario")?;
    let report = crate::sim::simulate_json(&text).map_err(js_err)?;
    Ok(json_to_js(
        &serde_json::to_value(report).unwrap_or_default(),
    ))
}

/// Checks a fleet's cluster IDs before mirroring starts: each ID's region at
/// salt 0, the IDs sharing one, and the chance some two of that many would
/// (`mirrorpid::plan`, the same check as `mirrorpid clusters check`).
#[wasm_bindgen(js_name = planClusters, unchecked_return_type = "ClusterPlan")]
///
/// `ids` is a list as people write one: one ID per line, blank lines and
/// `#` comments ignored.
pub fn plan_clusters(
    #[wasm_bindgen(unchecked_param_type = "string")] ids: JsValue,
) -> Result<JsValue, JsError> {
    let ids = text(&ids, "ids")?;
    let plan = crate::plan::plan(crate::plan::cluster_ids(&ids)).map_err(js_err)?;
    Ok(json_to_js(&serde_json::to_value(plan).unwrap_or_default()))
}
