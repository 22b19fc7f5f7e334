//! The fixture the JVM library's tests read (`tests/fixtures/jvm-rewrites.json`):
//! a leader's sequence of fetches from several sources (batches encoded by
//! the `kafka-protocol` crate with every compression, transactional batches,
//! control markers, colliding sources, a truncated tail), each rewritten by
//! the native core, with what it gave: the bytes, the records, the flags,
//! and the snapshot at the end. The Java side rewrites the same inputs
//! through the module on Chicory and must give the same, byte for byte.
//!
//! This test fails when the committed file is not what the core computes
//! now; `UPDATE_FIXTURES=1 cargo test --test jvm_fixture` writes it.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use mirrorpid_test_support::kp;

use bytes::Bytes;
use kafka_protocol::records::{Compression, Record, TimestampType};
use mirrorpid::batch::{BatchBuilder, ControlType};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions};
use serde_json::{json, Value};

const PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/jvm-rewrites.json"
);

fn records(pid: i64, epoch: i16, transactional: bool, n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| Record {
            transactional,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: pid,
            producer_epoch: epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: i as i32,
            timestamp: 1_764_403_200_000 + i as i64,
            key: Some(Bytes::from(format!("key-{i}"))),
            value: Some(Bytes::from(format!("value {i} of {pid} ").repeat(8))),
            headers: Default::default(),
        })
        .collect()
}

fn marker(pid: i64, commit: bool) -> Vec<u8> {
    BatchBuilder {
        producer_id: pid,
        producer_epoch: 1,
        transactional: true,
        control: Some(if commit {
            ControlType::Commit
        } else {
            ControlType::Abort
        }),
        ..BatchBuilder::default()
    }
    .encode()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The steps: (source, fetch).
fn steps() -> Vec<(&'static str, Vec<u8>)> {
    let compressions = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    let mut steps = Vec::new();
    for (i, c) in compressions.into_iter().enumerate() {
        let pid = i as i64;
        steps.push(("cluster-2123", kp::kp_encode(&records(pid, 0, false, 3), c)));
        // The colliding source's same PIDs: salted bindings, collision records.
        steps.push(("cluster-2336", kp::kp_encode(&records(pid, 0, false, 2), c)));
    }
    // A transaction, committed; another, aborted; a mirrored PID passed on.
    let txn = kp::kp_encode(&records(9, 1, true, 2), Compression::None);
    steps.push(("A", [txn.clone(), marker(9, true)].concat()));
    steps.push(("A", [txn, marker(9, false)].concat()));
    let mirrored = mirrorpid::map_pid("B", 4, 0).unwrap();
    steps.push((
        "C",
        kp::kp_encode(&records(mirrored, 0, false, 1), Compression::Lz4),
    ));
    // No producer (PID -1), then a truncated tail after a whole batch.
    steps.push((
        "A",
        kp::kp_encode(&records(-1, -1, false, 2), Compression::None),
    ));
    let whole = kp::kp_encode(&records(3, 0, false, 2), Compression::Gzip);
    let next = kp::kp_encode(&records(4, 0, false, 2), Compression::Gzip);
    steps.push(("A", [whole, next[..next.len() / 2].to_vec()].concat()));
    steps
}

fn fixture() -> Value {
    let config = json!({"topicId": common::TOPIC, "partition": 0});
    let mut m = Mapper::new(MapperConfig::from_json(&config.to_string()).unwrap()).unwrap();
    let mut out = Vec::new();
    for (i, (source, fetch)) in steps().into_iter().enumerate() {
        let mut bytes = fetch.clone();
        let now = 1_764_403_200_000 + i as i64;
        let r = m
            .rewrite(source, &mut bytes, now, RewriteOptions::default())
            .unwrap();
        let recs: Vec<Value> = r
            .records
            .iter()
            .map(|rec| {
                let (k, v) = rec.encode().unwrap();
                json!({"key": hex(&k), "value": v.map(|v| hex(&v))})
            })
            .collect();
        out.push(json!({
            "source": source,
            "nowMs": now,
            "input": hex(&fetch),
            "output": hex(&bytes),
            "consumed": r.consumed,
            "records": recs,
            "snapshotRequired": r.snapshot_required,
        }));
        m.confirm();
    }
    json!({
        "about": "written by tests/jvm_fixture.rs (UPDATE_FIXTURES=1): fetches rewritten by the native core in order, each confirmed; read by jvm/library's FixtureTest",
        "config": config,
        "steps": out,
        "snapshot": hex(&m.snapshot()),
    })
}

#[test]
fn the_jvm_fixture_is_what_the_core_computes() {
    let text = serde_json::to_string_pretty(&fixture()).unwrap() + "\n";
    common::check_fixture(PATH, &text, "cargo test --test jvm_fixture");
}
