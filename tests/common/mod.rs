//! Reference vectors from `tests/vectors/` (copied from the project's
//! shared, independently computed set), parsed for native and WASM tests.
#![allow(dead_code)]

use serde_json::Value;

#[cfg(all(target_arch = "wasm32", feature = "js"))]
pub mod js;

/// One F value: `F(source, pid, salt) = mapped`.
pub struct FVector {
    pub source: String,
    pub pid: i64,
    pub salt: u64,
    pub mapped: i64,
}

/// One step of a mapper scenario.
pub struct Step {
    pub source: String,
    pub pid: i64,
    pub mapped: i64,
    pub salt: Option<u8>,
    pub colliding: Option<String>,
}

/// One record: JSON form and bytes.
pub struct RecordVector {
    pub json: Value,
    pub key: Vec<u8>,
    pub value: Option<Vec<u8>>,
}

pub const MAPPING: &str = include_str!("../vectors/mapping.json");
pub const RECORDS: &str = include_str!("../vectors/records.json");

fn int(v: &Value) -> i64 {
    v.as_str()
        .expect("64-bit values are strings")
        .parse()
        .unwrap()
}

pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

pub fn f_vectors() -> Vec<FVector> {
    let doc: Value = serde_json::from_str(MAPPING).unwrap();
    doc["f"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| FVector {
            source: v["source"].as_str().unwrap().to_owned(),
            pid: int(&v["pid"]),
            salt: v["salt"].as_u64().unwrap(),
            mapped: int(&v["mapped"]),
        })
        .collect()
}

pub fn scenarios() -> Vec<(String, Vec<Step>)> {
    let doc: Value = serde_json::from_str(MAPPING).unwrap();
    doc["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let steps = s["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|st| Step {
                    source: st["source"].as_str().unwrap().to_owned(),
                    pid: int(&st["pid"]),
                    mapped: int(&st["mapped"]),
                    salt: st["salt"].as_u64().map(|s| s as u8),
                    colliding: st["collidingCluster"].as_str().map(str::to_owned),
                })
                .collect();
            (s["name"].as_str().unwrap().to_owned(), steps)
        })
        .collect()
}

pub fn records() -> (String, String, Vec<RecordVector>) {
    let doc: Value = serde_json::from_str(RECORDS).unwrap();
    let recs = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| RecordVector {
            json: r["json"].clone(),
            key: hex(r["keyHex"].as_str().unwrap()),
            value: r["valueHex"].as_str().map(hex),
        })
        .collect();
    (
        doc["topicIdBase64"].as_str().unwrap().to_owned(),
        doc["topicIdHex"].as_str().unwrap().to_owned(),
        recs,
    )
}

/// The topic every scenario runs in.
pub const TOPIC: &str = "bxw7Kp1OS3-KHC0-T1prfA";
// Each test binary uses some of them.
#[allow(unused_imports)]
pub use mirrorpid_test_support::{clusters, crash, fetch as batches};

/// Everything a failed call must leave unchanged: the snapshot (confirmed
/// bindings with their last-seen times and flags) and the number of bound
/// and pending bindings (pending ones are not in snapshots).
#[cfg(not(target_arch = "wasm32"))]
pub fn state(m: &mirrorpid::Mapper) -> (Vec<u8>, usize, usize) {
    (m.snapshot(), m.len(), m.pending())
}

/// `snapshot` (its old checksum included) with the checksum recomputed:
/// a snapshot whose contents were edited, as a forger would seal it.
pub fn reseal_snapshot(snapshot: &[u8]) -> Vec<u8> {
    let mut body = snapshot[..snapshot.len() - 4].to_vec();
    let crc = crc32c::crc32c(&body);
    body.extend_from_slice(&crc.to_be_bytes());
    body
}

/// Holds a committed fixture to what a test computes now: with
/// `UPDATE_FIXTURES` set, writes `text` to `path` first; then fails unless
/// the file is `text`, naming `command` as the way to rewrite it.
pub fn check_fixture(path: &str, text: &str, command: &str) {
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let committed = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (UPDATE_FIXTURES=1 writes it)"));
    assert!(
        committed == text,
        "{path} is stale: UPDATE_FIXTURES=1 {command}"
    );
}

/// A record vector's JSON as today's JSON writes it: the vectors give the
/// salt as a decimal string (0.1's form), which is still read; it is
/// written as a number now (`docs/FORMAT.md`).
pub fn salt_as_number(json: &Value) -> Value {
    let mut out = json.clone();
    if let Some(salt) = json["value"]["salt"].as_str() {
        out["value"]["salt"] = salt.parse::<i64>().unwrap().into();
    }
    out
}
