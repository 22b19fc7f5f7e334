//! What the simulator predicts for the scenarios the real-Kafka judge runs
//! (`tests/fixtures/judge/*.json`, each the twin of a test in `jvm/judge`,
//! and the playground's presets, `www/presets/*.json`, as `preset/<name>`,
//! which `jvm/judge`'s `PresetTest` replays batch for batch into Kafka's
//! logs), written to `tests/fixtures/judge-sim.json`: per scenario, strategy and
//! cluster, Kafka's producer entries (epoch and last sequence, sorted), the
//! appends refused by kind, the local writes lost as duplicates, and the
//! copies by a second path mirrorpid's host dropped. The
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
const PRESETS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/www/presets");
const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/judge-sim.json");

fn key(s: Strategy) -> &'static str {
    match s {
        Strategy::Verbatim => "verbatim",
        Strategy::Kip => "kip",
        Strategy::Mirrorpid => "mirrorpid",
    }
}

/// The scenario files in `dir` (the presets' index is not one), sorted.
fn scenarios(dir: &str) -> Vec<std::path::PathBuf> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| p.file_stem().is_some_and(|s| s != "index"))
        .collect();
    names.sort();
    names
}

fn fixture() -> Value {
    let judged = scenarios(DIR).into_iter().map(|p| (String::new(), p));
    let presets = scenarios(PRESETS)
        .into_iter()
        .map(|p| ("preset/".to_owned(), p));
    let mut out = Map::new();
    for (prefix, path) in judged.chain(presets) {
        let name = prefix + &path.file_stem().unwrap().to_string_lossy();
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
                        "copiesDropped": p.duplicates.get(s),
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
