//! Every reference vector in `tests/vectors/`, reproduced by the Rust API.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use mirrorpid::{map_pid, Mapper, MapperConfig, StateRecord, TopicId};

#[test]
fn every_f_vector() {
    let vectors = common::f_vectors();
    assert!(vectors.len() > 200);
    for v in vectors {
        assert_eq!(
            map_pid(&v.source, v.pid, v.salt).unwrap(),
            v.mapped,
            "F({:?}, {}, {})",
            v.source,
            v.pid,
            v.salt
        );
    }
}

#[test]
fn every_scenario() {
    let scenarios = common::scenarios();
    assert_eq!(scenarios.len(), 5);
    for (name, steps) in scenarios {
        let topic: TopicId = common::TOPIC.parse().unwrap();
        let mut m = Mapper::new(MapperConfig::new(topic, 0)).unwrap();
        for (i, s) in steps.iter().enumerate() {
            let out = m.map(&s.source, s.pid, 1_000 + i as i64).unwrap();
            assert_eq!(out.mapped, s.mapped, "{name}: step {i} mapped");
            assert_eq!(out.salt, s.salt, "{name}: step {i} salt");
            assert_eq!(
                out.collision.map(|c| c.colliding_cluster_id),
                s.colliding,
                "{name}: step {i} colliding cluster"
            );
            // Each step is a host's call: its record made durable, then confirmed.
            m.confirm();
        }
    }
}

#[test]
fn every_record_vector() {
    let (b64, hex, records) = common::records();
    assert_eq!(
        b64.parse::<TopicId>().unwrap(),
        hex.parse::<TopicId>().unwrap()
    );
    assert_eq!(records.len(), 4);
    for r in records {
        let decoded = StateRecord::decode(&r.key, r.value.as_deref()).unwrap();
        assert_eq!(
            decoded.to_json(),
            common::salt_as_number(&r.json),
            "decode to JSON"
        );
        let from_json = StateRecord::from_json(&r.json.to_string()).unwrap();
        assert_eq!(from_json, decoded);
        let (k, v) = from_json.encode().unwrap();
        assert_eq!(k, r.key, "key bytes");
        assert_eq!(v, r.value, "value bytes");
    }
}
