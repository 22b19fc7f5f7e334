//! Scenarios a visitor can paste that are wrong, or that once overflowed
//! the stack, ran for hours or overflowed the clock: each is a clear
//! error, fast.
#![cfg(not(target_arch = "wasm32"))]

use std::time::{Duration, Instant};

use mirrorpid::sim::{simulate_json, MAX_CLUSTERS, MAX_DELIVERIES};
use serde_json::json;

/// A chain c0 -> c1 -> ... of `n` clusters with one producer at c0.
fn chain(n: usize, downstream_first: bool) -> serde_json::Value {
    let clusters: Vec<_> = (0..n).map(|i| json!({"id": format!("c{i}")})).collect();
    let mut links: Vec<_> = (1..n)
        .map(|i| json!({"from": format!("c{}", i - 1), "to": format!("c{i}")}))
        .collect();
    if downstream_first {
        links.reverse();
    }
    json!({
        "clusters": clusters, "links": links,
        "producers": [{"id": "p", "cluster": "c0", "pid": "5"}],
        "events": [{"type": "produce", "producer": "p"}]
    })
}

/// `k` diamonds in a row: d0 -> (l0, r0) -> d1 -> ... -> dk.
fn diamonds(k: usize) -> serde_json::Value {
    let mut clusters = vec![json!({"id": "d0"})];
    let mut links = Vec::new();
    for i in 0..k {
        for side in ["l", "r"] {
            clusters.push(json!({"id": format!("{side}{i}")}));
            links.push(json!({"from": format!("d{i}"), "to": format!("{side}{i}")}));
            links.push(json!({"from": format!("{side}{i}"), "to": format!("d{}", i + 1)}));
        }
        clusters.push(json!({"id": format!("d{}", i + 1)}));
    }
    json!({
        "clusters": clusters, "links": links,
        "producers": [{"id": "p", "cluster": "d0", "pid": "5"}],
        "events": [{"type": "produce", "producer": "p"}]
    })
}

/// How long a refusal may take. Not a speed claim: a limit that failed to
/// stop the work would run for hours (2^40 paths, 100k clusters), so a
/// generous bound catches it without failing on a loaded machine (one
/// second was tight there).
const REFUSED_WITHIN: Duration = Duration::from_secs(10);

/// Runs a scenario, expecting an error that mentions `needle`, within
/// [`REFUSED_WITHIN`].
fn rejected(scenario: serde_json::Value, needle: &str) {
    let text = scenario.to_string();
    let start = Instant::now();
    let err = simulate_json(&text).expect_err("expected an error");
    let took = start.elapsed();
    assert!(err.to_string().contains(needle), "{err}");
    assert!(took < REFUSED_WITHIN, "{needle}: took {took:?}");
}

#[test]
fn a_100k_cluster_chain_is_refused() {
    rejected(chain(100_000, false), "at most 500");
}

#[test]
fn the_longest_chain_allowed_runs_without_recursion() {
    // Downstream-first links used to make chains cubic; 500 clusters run.
    let text = chain(MAX_CLUSTERS, true).to_string();
    let report = simulate_json(&text).unwrap();
    assert_eq!(report.partitions.len(), MAX_CLUSTERS);
    assert_eq!(report.partitions[MAX_CLUSTERS - 1].batches, 1);
}

#[test]
fn forty_chained_diamonds_exceed_the_work_budget() {
    rejected(diamonds(40), &MAX_DELIVERIES.to_string());
    // A few diamonds are fine: 2^4 paths reach the last cluster.
    let report = simulate_json(&diamonds(4).to_string()).unwrap();
    assert_eq!(report.partitions.last().unwrap().batches, 16);
}

#[test]
fn huge_counts_are_refused() {
    for count in [
        json!(4_294_967_296u64),
        json!(4_000_000_000u64),
        json!(10_001),
    ] {
        let mut s = chain(2, false);
        s["events"][0]["count"] = count.clone();
        let text = s.to_string();
        let start = Instant::now();
        let err = simulate_json(&text).expect_err("expected an error");
        assert!(start.elapsed() < REFUSED_WITHIN);
        assert!(err.to_string().contains("count"), "{count}: {err}");
    }
}

#[test]
fn the_clock_never_overflows() {
    let mut s = chain(2, false);
    s["events"] = json!([
        {"type": "advance", "ms": i64::MAX.to_string()},
        {"type": "produce", "producer": "p"}
    ]);
    rejected(s, "clock overflows");
    let mut s = chain(2, false);
    s["events"] = json!([{"type": "expire", "advanceMs": i64::MAX.to_string()}]);
    rejected(s, "clock overflows");
}

#[test]
fn bad_scenarios_give_clear_errors() {
    let cases = [
        ("{", "scenario JSON"),
        // serde alone reads an array as a struct's fields in order.
        (
            r#"["n", "d", "bxw7Kp1OS3-KHC0-T1prfA", "bindings", [{"id":"A"}]]"#,
            "expected an object",
        ),
        (r#"{"clusters":[["A", true]]}"#, "expected an object"),
        (
            r#"{"clusters":[{"id":"A"}],"producers":[["p","A","1"]]}"#,
            "expected an object",
        ),
        (
            r#"{"clusters":[{"id":"A"}],"links":[{"from":"A","to":"Z"}]}"#,
            "unknown cluster \"Z\"",
        ),
        (r#"{"clusters":[{"id":"A"},{"id":"A"}]}"#, "defined twice"),
        (
            r#"{"clusters":[{"id":"A"}],"producers":[{"id":"p","cluster":"A","pid":"1099511627776"}]}"#,
            "out of range",
        ),
        (
            r#"{"clusters":[{"id":"A"}],"events":[{"type":"produce","producer":"nobody"}]}"#,
            "unknown producer \"nobody\"",
        ),
        (
            r#"{"clusters":[{"id":"A","writable":false}],"producers":[{"id":"p","cluster":"A","pid":"1"}],"events":[{"type":"produce","producer":"p"}]}"#,
            "read-only mirror",
        ),
        (
            r#"{"clusters":[{"id":"A"}],"events":[{"type":"explode"}]}"#,
            "unknown variant",
        ),
        (
            r#"{"clusters":[{"id":"A"}],"topicId":"nope"}"#,
            "InvalidTopicId",
        ),
    ];
    for (json, needle) in cases {
        let err = simulate_json(json).unwrap_err().to_string();
        assert!(err.contains(needle), "{json}: {err}");
    }
}
