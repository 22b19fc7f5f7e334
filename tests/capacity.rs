//! Capacity: a source that sends ever more new PIDs or cluster IDs meets
//! the limits of the mapper config, gets a typed error with nothing
//! changed, and cannot stop the producers already bound; expiry frees the
//! room again, names of expired sources included. Also: the hash keys are
//! secret per mapper and change no output.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::batches::fetch;

use mirrorpid::mapper::seed_hashing;
use mirrorpid::{Error, Mapper, MapperConfig, RewriteOptions, StateKey, StateRecord, StateValue};

fn config() -> MapperConfig {
    MapperConfig {
        producer_expiration_ms: 1_000,
        max_bindings: 100,
        max_clusters: 3,
        max_cluster_id_bytes: 64,
        ..MapperConfig::new(common::TOPIC.parse().unwrap(), 0)
    }
}

fn exceeded(limit: &'static str, max: u64) -> Error {
    Error::CapacityExceeded { limit, max }
}

#[test]
fn a_flood_of_new_pids_stops_at_max_bindings_and_the_bound_keep_working() {
    let mut m = Mapper::new(config()).unwrap();
    // The victim's producers, bound first.
    let victim: Vec<i64> = (0..10)
        .map(|pid| m.map("victim", pid, 0).unwrap().mapped)
        .collect();
    m.confirm();
    // The flood: one new PID per batch until the table is full.
    let mut buf = fetch(1000..1090);
    m.rewrite("flood", &mut buf, 0, RewriteOptions::default())
        .unwrap();
    m.confirm();
    assert_eq!(m.len(), 100);
    // One more new identity, alone or in a fetch: refused, nothing changed.
    let before = common::state(&m);
    assert_eq!(
        m.map("flood", 5000, 0).unwrap_err(),
        exceeded("maxBindings", 100)
    );
    let mut buf = fetch([1000, 1001, 5001]);
    let copy = buf.clone();
    assert_eq!(
        m.rewrite("flood", &mut buf, 0, RewriteOptions::default())
            .unwrap_err(),
        exceeded("maxBindings", 100)
    );
    assert_eq!(buf, copy, "a refused fetch is not rewritten");
    assert_eq!(common::state(&m), before);
    // The victim's bound producers are served as before.
    let mut buf = fetch(0..10);
    let r = m
        .rewrite(
            "victim",
            &mut buf,
            500,
            RewriteOptions {
                outcomes: true,
                ..RewriteOptions::default()
            },
        )
        .unwrap();
    let got: Vec<i64> = r.batches.iter().map(|b| b.mapped_pid).collect();
    assert_eq!(got, victim);
    // Expiry frees room: the idle flood goes, the victim (seen at 500) stays.
    let tombstones = m.expire(1_200).unwrap();
    assert_eq!(tombstones.len(), 90);
    assert_eq!(m.len(), 10);
    assert!(m.map("flood", 5000, 1_200).is_ok());
}

#[test]
fn cluster_limits_count_live_names_and_expiry_frees_them() {
    let mut m = Mapper::new(config()).unwrap();
    m.map("a", 1, 0).unwrap();
    m.map("b", 1, 0).unwrap();
    m.map("c", 1, 0).unwrap();
    assert_eq!(m.map("d", 1, 0).unwrap_err(), exceeded("maxClusters", 3));
    // A known cluster still binds new PIDs.
    m.map("a", 2, 0).unwrap();
    m.confirm();
    // Bytes: two long names fill 64 bytes with the three short ones.
    let mut m2 = Mapper::new(MapperConfig {
        max_clusters: 10,
        ..config()
    })
    .unwrap();
    let long = "x".repeat(40);
    m2.map(&long, 1, 0).unwrap();
    let before = common::state(&m2);
    assert_eq!(
        m2.map(&"y".repeat(30), 1, 0).unwrap_err(),
        exceeded("maxClusterIdBytes", 64)
    );
    assert_eq!(common::state(&m2), before);
    // Expiring every binding of a source frees its name: "d" fits now, and
    // the snapshot no longer carries "b" and "c".
    m.map("a", 1, 900).unwrap();
    m.map("a", 2, 900).unwrap();
    m.confirm();
    m.expire(1_500).unwrap();
    let snap = m.snapshot();
    assert!(!snap.windows(3).any(|w| w == b"\0\x01b"));
    m.map("d", 1, 1_500).unwrap();
    m.map("e", 1, 1_500).unwrap();
    m.confirm();
    let restored = Mapper::restore(&m.snapshot()).unwrap();
    assert_eq!(restored.snapshot(), m.snapshot());
    assert_eq!(
        restored.lookup("d", 1).unwrap().mapped,
        m.lookup("d", 1).unwrap().mapped
    );
}

#[test]
fn expired_long_cluster_ids_leave_nothing_behind() {
    // 2,000 sources with 32 KiB IDs, bound and expired: the memory and the
    // snapshot come back to what one source needs.
    let mut m = Mapper::new(MapperConfig {
        producer_expiration_ms: 1_000,
        max_cluster_id_bytes: 128 << 20,
        ..MapperConfig::new(common::TOPIC.parse().unwrap(), 0)
    })
    .unwrap();
    m.map("stays", 1, 10_000).unwrap();
    m.confirm();
    let small = (m.memory_bytes(), m.snapshot().len());
    for i in 0..2_000 {
        let id = format!("{i:05}{}", "z".repeat(32_000));
        m.map(&id, 1, 0).unwrap();
    }
    m.confirm();
    assert!(m.memory_bytes() > 60 << 20);
    assert_eq!(m.expire(5_000).unwrap().len(), 2_000);
    assert_eq!(m.len(), 1);
    // What stays is the tables' capacity for 2,001 bindings (about 130
    // KB; they do not shrink), not the 64 MB of names.
    assert!(
        m.memory_bytes() < small.0 + 256 * 1024,
        "{} bytes held after expiry",
        m.memory_bytes()
    );
    assert_eq!(m.snapshot().len(), small.1);
}

#[test]
fn records_beyond_capacity_are_refused_before_any_change() {
    let mut m = Mapper::new(MapperConfig {
        max_bindings: 2,
        ..config()
    })
    .unwrap();
    let rec = |source: &str, pid: i64| StateRecord {
        key: StateKey {
            topic_id: common::TOPIC.parse().unwrap(),
            partition: 0,
            source_cluster_id: source.to_owned(),
            original_pid: pid,
        },
        value: Some(StateValue {
            salt: 0,
            colliding_cluster_id: String::new(),
            timestamp_ms: 0,
        }),
    };
    m.load_record(&rec("a", 1)).unwrap();
    m.load_record(&rec("a", 2)).unwrap();
    let before = common::state(&m);
    assert_eq!(
        m.load_record(&rec("a", 3)).unwrap_err(),
        exceeded("maxBindings", 2)
    );
    assert_eq!(common::state(&m), before);
    // A record for a bound identity replaces it in place: no room needed.
    let mut salted = rec("a", 2);
    salted.value.as_mut().unwrap().salt = 5;
    assert!(m.load_record(&salted).is_ok());
    // A tombstone frees room.
    m.load_record(&StateRecord::tombstone(rec("a", 1).key))
        .unwrap();
    m.load_record(&rec("a", 3)).unwrap();
    assert_eq!(m.len(), 2);
}

#[test]
fn limits_travel_in_the_config_json_and_the_snapshot() {
    let json = format!(
        r#"{{"topicId":"{}","partition":0,"maxBindings":"5","maxClusters":2,"maxClusterIdBytes":10}}"#,
        common::TOPIC
    );
    let c = MapperConfig::from_json(&json).unwrap();
    assert_eq!(
        (c.max_bindings, c.max_clusters, c.max_cluster_id_bytes),
        (5, 2, 10)
    );
    let m = Mapper::new(c.clone()).unwrap();
    let restored = Mapper::restore(&m.snapshot()).unwrap();
    assert_eq!(restored.config(), &c);
    for bad in [
        r#""maxBindings":0"#,
        r#""maxClusters":-1"#,
        r#""maxBindings":4294967296"#,
    ] {
        let json = format!(r#"{{"topicId":"{}","partition":0,{bad}}}"#, common::TOPIC);
        let err = MapperConfig::from_json(&json).unwrap_err();
        assert!(matches!(err, Error::InvalidInput { .. }), "{bad}: {err}");
    }
    // Defaults when absent.
    let c = MapperConfig::from_json(&format!(
        r#"{{"topicId":"{}","partition":0}}"#,
        common::TOPIC
    ))
    .unwrap();
    assert_eq!(
        (c.max_bindings, c.max_clusters, c.max_cluster_id_bytes),
        (1_000_000, 10_000, 1 << 20)
    );
}

#[test]
fn a_format_2_snapshot_restores_with_limits_that_fit_it() {
    let mut m = Mapper::new(MapperConfig::new(common::TOPIC.parse().unwrap(), 0)).unwrap();
    for pid in 0..5 {
        m.map("a", pid, 0).unwrap();
    }
    m.confirm();
    let v3 = m.snapshot();
    // Format 2 is format 3 without the 24 bytes of limits, which follow
    // the trust declaration flag (0 here): header 11, TopicId 16,
    // partition 4, durability 1, expiration 8, flag 1.
    let at = 11 + 16 + 4 + 1 + 8 + 1;
    let mut v2 = v3[..v3.len() - 4].to_vec();
    v2.drain(at..at + 24);
    v2[9] = 2;
    let crc = crc32c::crc32c(&v2);
    v2.extend_from_slice(&crc.to_be_bytes());
    let restored = Mapper::restore(&v2).unwrap();
    assert_eq!(restored.snapshot(), v3);
}

#[test]
fn hash_keys_are_secret_per_mapper_and_change_no_output() {
    let run = |seed: u64| {
        seed_hashing(seed);
        let mut m = Mapper::new(MapperConfig::new(common::TOPIC.parse().unwrap(), 0)).unwrap();
        let mut mapped = Vec::new();
        for pid in 0..2_000 {
            for source in ["cluster-2123", "cluster-2336", "b"] {
                mapped.push(m.map(source, pid, pid).unwrap().mapped);
            }
        }
        m.confirm();
        m.expire(1_000 + 86_400_000).unwrap();
        let holders: Vec<String> = m
            .holders(mapped[0])
            .iter()
            .map(|h| format!("{}/{}", h.source_cluster_id, h.pid))
            .collect();
        (mapped, m.snapshot(), holders)
    };
    let a = run(1);
    let b = run(0xdead_beef);
    assert_eq!(a, b);
}
