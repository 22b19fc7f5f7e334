//! The batch path's WebAssembly instructions, counted exactly as wasmtime
//! fuel (`mirrorpid_host::instructions`), held to their budgets at every
//! batch size: unlike a timing, a count is the same on every machine and in
//! every run, so a change that makes the batch path cost more fails here.
//!
//! The batch size changes only how many digits the CRC patch shifts by.
//! `docs/PERFORMANCE.md`'s instruction table is written from
//! `docs/perf/instructions.json`, which must be what the module counts.

use mirrorpid_host::{default_module_path, instructions};

/// The budgets: (what, the most instructions it may take), the batch
/// path's targets.
const BUDGETS: [(&str, u64); 6] = [
    ("a call doing nothing", 50),
    ("a rewrite of an empty fetch", 340),
    ("a call rewriting one batch", 800),
    ("each further batch, a producer each", 550),
    ("each further batch in a run of one producer", 400),
    ("each further batch in a run, no two sizes alike", 450),
];

#[test]
fn the_batch_path_runs_within_its_instruction_budget() {
    let path = default_module_path();
    for size in [256, 1024, 16 << 10, 1 << 20] {
        let c = instructions::count(&path, size).unwrap();
        let counted = [
            c.idle_call,
            c.empty_rewrite,
            c.one_batch,
            c.further_batch,
            c.further_batch_in_run,
            c.further_batch_in_run_sizes_vary,
        ];
        for ((what, budget), n) in BUDGETS.iter().zip(counted) {
            // A batch of 1 MiB shifts its CRC patch by one digit more
            // when its size is new: allowed for, where sizes vary.
            let budget = if size > 1 << 14 && what.contains("no two sizes") {
                budget + 150
            } else {
                *budget
            };
            assert!(
                n <= budget,
                "{what}, batches of {size} bytes: {n} instructions, over the budget of {budget}"
            );
        }
    }
}

/// The counts are exact: the same twice.
#[test]
fn a_count_is_the_same_every_time() {
    let path = default_module_path();
    let a = instructions::count(&path, 1024).unwrap();
    let b = instructions::count(&path, 1024).unwrap();
    assert_eq!(a, b);
}

/// `docs/perf/instructions.json`, which `docs/PERFORMANCE.md`'s table is
/// written from, is what the shipped module counts: a change to the batch
/// path regenerates it (`cargo run --release -p mirrorpid-host --example
/// instructions -- --json`, then `scripts/perf-doc.py collect instructions`).
#[test]
fn the_documented_counts_are_the_modules() {
    let path = default_module_path();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let stored: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("docs/perf/instructions.json")).unwrap(),
    )
    .unwrap();
    let sizes: Vec<usize> = stored["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["batch_bytes"].as_u64().unwrap() as usize)
        .collect();
    let now: serde_json::Value =
        serde_json::from_str(&instructions::table_json(&path, &sizes).unwrap()).unwrap();
    assert_eq!(
        stored["rows"], now["rows"],
        "docs/perf/instructions.json is not what the module counts: regenerate it"
    );
}
