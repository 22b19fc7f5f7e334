//! What the simulator predicts for the scenarios the real-Kafka judge runs
//! (`tests/fixtures/judge/*.json`, each the twin of a test in `jvm/kafka`),
//! written to `tests/fixtures/judge-sim.json`: per scenario, strategy and
//! cluster, Kafka's producer entries (epoch and last sequence, sorted), the
//! appends refused by kind, and the local writes lost as duplicates. The
//! Java tests run the same scenario on real clusters into Kafka's own logs
//! and must find the same; so the simulator's model is held to Kafka.
//!
//! This test fails when the committed file is not what the simulator
//! computes now; `UPDATE_FIXTURES=1 cargo test --features sim --test
//! judge_fixture` writes it.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use mirrorpid::sim::{simulate_json, Strategy, STRATEGIES};
use serde_json::{json, Map, Value};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/judge");
const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/judge-sim.json");

fn key(s: Strategy) -> &'static str {
    match s {
        Strategy::Verbatim => "verbatim",
        Strategy::Kip => "kip",
        Strategy::Mirrorpid => "mirrorpid",
    }
}

fn fixture() -> Value {
    let mut names: Vec<_> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    let mut out = Map::new();
    for path in names {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let report = simulate_json(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut strategies = Map::new();
        for s in STRATEGIES {
            let mut clusters = Map::new();
            for p in &report.partitions {
                let mut entries: Vec<(i16, i32)> = p
                    .producer_state
                    .get(s)
                    .iter()
                    .map(|e| (e.epoch, e.last_sequence))
                    .collect();
                entries.sort();
                let refused = serde_json::to_value(p.refusals.get(s)).unwrap();
                clusters.insert(
                    p.cluster.clone(),
                    json!({
                        "entries": entries,
                        "refused": refused,
                        "lostAsDuplicate": p.corruption.get(s).lost_as_duplicate,
                    }),
                );
            }
            strategies.insert(key(s).to_owned(), Value::Object(clusters));
        }
        out.insert(name, Value::Object(strategies));
    }
    Value::Object(out)
}

#[test]
fn the_judge_fixture_is_what_the_simulator_predicts() {
    let text = serde_json::to_string_pretty(&fixture()).unwrap() + "\n";
    common::check_fixture(
        PATH,
        &text,
        "cargo test --features sim --test judge_fixture",
    );
}
