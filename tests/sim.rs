//! Every preset of the playground (`www/presets/*.json`), run natively:
//! exact corruption counts per strategy, zero for mirrorpid, and mirrorpid's
//! mapped PIDs against the reference vectors where they apply.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use mirrorpid::sim::psm::Corruption;
use mirrorpid::sim::{simulate_json, PartitionReport, Report};

fn preset(name: &str) -> Report {
    let path = format!("{}/www/presets/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    simulate_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn c(shared: u32, seq: u32, epoch: u32, marker: u32, bypass: u32) -> Corruption {
    Corruption {
        shared_pids: shared,
        wrong_sequence_accepted: seq,
        lower_epoch_accepted: epoch,
        foreign_marker: marker,
        psm_bypass: bypass,
    }
}

fn f(source: &str, pid: i64, salt: u64) -> String {
    let v = common::f_vectors()
        .into_iter()
        .find(|v| v.source == source && v.pid == pid && v.salt == salt)
        .unwrap_or_else(|| panic!("no vector for F({source}, {pid}, {salt})"));
    v.mapped.to_string()
}

fn partition<'a>(r: &'a Report, cluster: &str) -> &'a PartitionReport {
    r.partitions.iter().find(|p| p.cluster == cluster).unwrap()
}

fn mirrorpid_pid_at(r: &Report, producer: &str, cluster: &str) -> String {
    let path = r.paths.iter().find(|p| p.producer == producer).unwrap();
    path.hops
        .iter()
        .find(|h| h.cluster == cluster)
        .unwrap()
        .pid
        .mirrorpid
        .clone()
}

#[test]
fn every_preset_is_listed_and_counts_exactly() {
    let index: Vec<String> = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/www/presets/index.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let expected = [
        ("seed-chain", c(3, 8, 4, 0, 0), c(2, 3, 1, 0, 12)),
        ("failover", c(2, 3, 2, 0, 0), c(1, 1, 1, 0, 5)),
        ("fan-in", c(2, 2, 1, 0, 0), c(0, 0, 0, 0, 6)),
        ("diamond", c(1, 2, 1, 0, 0), c(1, 2, 1, 0, 6)),
        ("region-collision", c(1, 1, 1, 0, 0), c(0, 0, 0, 0, 6)),
        ("election", c(1, 2, 0, 0, 0), c(0, 0, 0, 0, 9)),
        ("transactions", c(1, 3, 1, 1, 0), c(0, 0, 0, 0, 8)),
    ];
    assert_eq!(index, expected.iter().map(|e| e.0).collect::<Vec<_>>());
    for (name, verbatim, kip) in expected {
        let r = preset(name);
        assert_eq!(r.totals.verbatim, verbatim, "{name}: verbatim");
        assert_eq!(r.totals.kip, kip, "{name}: -(pid+2)");
        assert_eq!(
            r.totals.mirrorpid,
            Corruption::default(),
            "{name}: mirrorpid"
        );
        assert!(
            verbatim.total() > 0 && kip.total() > 0,
            "{name} shows the failures"
        );
        for p in &r.partitions {
            assert_eq!(p.corruption.mirrorpid.total(), 0, "{name} at {}", p.cluster);
        }
    }
}

#[test]
fn seed_chain_pids_hop_by_hop() {
    let r = preset("seed-chain");
    let a5 = f("A", 5, 0);
    // mirrorpid: A's producer keeps F(A, 5) at B, C and D; B's gets F(B, 5).
    for cluster in ["B", "C", "D"] {
        assert_eq!(mirrorpid_pid_at(&r, "a5", cluster), a5, "a5 at {cluster}");
    }
    assert_eq!(mirrorpid_pid_at(&r, "a5", "A"), "5");
    assert_eq!(mirrorpid_pid_at(&r, "b5", "C"), f("B", 5, 0));
    // -(pid+2) is its own inverse: A's 5 is -7 at B and 5 again at C.
    let path = r.paths.iter().find(|p| p.producer == "a5").unwrap();
    let kip: Vec<(&str, &str)> = path
        .hops
        .iter()
        .map(|h| (h.cluster.as_str(), h.pid.kip.as_str()))
        .collect();
    assert_eq!(kip, vec![("A", "5"), ("B", "-7"), ("C", "5"), ("D", "-7")]);
    // C's table: A's producer arrives mirrored through B, B's own 5 is local to B.
    let at_c = partition(&r, "C");
    let row = at_c
        .identities
        .iter()
        .find(|i| i.producers == ["a5"])
        .unwrap();
    assert_eq!(
        (
            row.source.as_str(),
            row.pid.as_str(),
            row.mapped.as_str(),
            row.salt
        ),
        ("B", a5.as_str(), a5.as_str(), 0)
    );
    assert_eq!(row.mapped_hex, "0x7435250000000005");
    assert_eq!(row.region, 0x343525);
    assert_eq!(row.pid40, "5");
}

#[test]
fn region_collision_salts_and_records() {
    let r = preset("region-collision");
    let dest = partition(&r, "dest");
    let salted: Vec<_> = dest.identities.iter().filter(|i| i.salt > 0).collect();
    assert_eq!(salted.len(), 1);
    assert_eq!(salted[0].producers, ["p2336"]);
    assert_eq!(
        salted[0].mapped, "6363006830846672901",
        "the reference scenario's salt-1 PID"
    );
    assert_eq!(salted[0].colliding_cluster.as_deref(), Some("cluster-2123"));
    assert_eq!(mirrorpid_pid_at(&r, "p2123", "dest"), "6425235890443911173");
    // q2336 (PID 6) took its own salt-0 slot.
    assert_eq!(
        mirrorpid_pid_at(&r, "q2336", "dest"),
        "6425235890443911174",
        "as in the reference scenario"
    );
    // bindings durability: one record per binding, the collision record names the holder.
    assert_eq!(dest.records.len(), 3);
    let collision = dest
        .records
        .iter()
        .find(|r| r.json["value"]["salt"] == "1")
        .unwrap();
    assert_eq!(
        collision.json["value"]["collidingClusterId"],
        "cluster-2123"
    );
    assert_eq!(collision.json["key"]["sourceClusterId"], "cluster-2336");
    assert!(collision.key_hex.starts_with("0003"));
}

#[test]
fn diamond_keeps_one_pid_for_one_producer() {
    let r = preset("diamond");
    let d = partition(&r, "D");
    let a5 = f("A", 5, 0);
    let holders: Vec<_> = d.identities.iter().filter(|i| i.mapped == a5).collect();
    assert_eq!(holders.len(), 2, "via B and via C, one mapped PID");
    assert!(holders.iter().all(|h| h.producers == ["a5"] && h.salt == 0));
    assert_eq!(
        d.duplicates.mirrorpid, 3,
        "the second path's copies are deduplicated, not corruption"
    );
}

#[test]
fn elections_keep_every_mapping() {
    let r = preset("election");
    let dest = partition(&r, "dest");
    // 'second' bound first (salt 0), 'first' collided (salt 1); both survive two elections.
    assert_eq!(
        mirrorpid_pid_at(&r, "second", "dest"),
        "6425235890443911173"
    );
    assert_eq!(
        mirrorpid_pid_at(&r, "first", "dest"),
        f("cluster-2123", 5, 1)
    );
    assert!(r.log.iter().any(|l| l.contains("leader election at dest")));
    // After the expiry only 'second' (which wrote after it) is bound; tombstones were written.
    assert!(dest.records.iter().any(|r| r.value_hex.is_none()));
    assert_eq!(dest.identities.len(), 1);
}

#[test]
fn bad_scenarios_give_clear_errors() {
    let cases = [
        ("{", "scenario JSON"),
        (
            r#"{"clusters":[{"id":"A"}],"links":[{"from":"A","to":"Z"}]}"#,
            "unknown cluster \"Z\"",
        ),
        (r#"{"clusters":[{"id":"A"},{"id":"A"}]}"#, "defined twice"),
        (
            r#"{"clusters":[{"id":"A"},{"id":"B"}],"links":[{"from":"A","to":"B"},{"from":"B","to":"A"}]}"#,
            "cycle",
        ),
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
