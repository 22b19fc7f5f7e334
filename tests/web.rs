//! The JavaScript API under `wasm-pack test`, in Node and in headless
//! Chromium (`WASM_BINDGEN_USE_BROWSER=1`): every reference vector through
//! the same functions JS calls, plus errors and state.
#![cfg(all(target_arch = "wasm32", feature = "js"))]

mod common;

use common::js::{big, bytes_of, get, mapper, message, u8a};
use js_sys::{Uint8Array, JSON};
use mirrorpid::batch::{BatchBuilder, RecordSpec};
use mirrorpid::js::{decode_pid, decode_record, encode_record, map_pid, PidMapper};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn every_f_vector() {
    let vectors = common::f_vectors();
    assert!(vectors.len() > 200);
    for v in vectors {
        let got = map_pid(
            v.source.as_str().into(),
            JsValue::from(v.pid),
            JsValue::from(v.salt as u32),
        )
        .unwrap();
        assert_eq!(got, v.mapped, "F({:?}, {}, {})", v.source, v.pid, v.salt);
    }
}

#[wasm_bindgen_test]
fn every_scenario() {
    for (name, steps) in common::scenarios() {
        let mut m = mapper();
        for (i, s) in steps.iter().enumerate() {
            let out = m
                .map(
                    s.source.as_str().into(),
                    JsValue::from(s.pid),
                    JsValue::from(1000 + i as u32),
                )
                .unwrap();
            assert_eq!(big(&get(&out, "mapped")), s.mapped, "{name} step {i}");
            let salt = get(&out, "salt").as_f64().map(|f| f as u8);
            assert_eq!(salt, s.salt, "{name} step {i} salt");
            let collision = get(&out, "collision");
            let colliding = (!collision.is_null())
                .then(|| get(&collision, "collidingClusterId").as_string().unwrap());
            assert_eq!(colliding, s.colliding, "{name} step {i} colliding");
            if !collision.is_null() {
                assert!(get(&out, "snapshotRequired").as_bool().unwrap());
                let rec = decode_record(get(&collision, "key"), get(&collision, "value")).unwrap();
                let value = get(&rec, "value");
                assert_eq!(get(&value, "salt").as_f64().map(|f| f as u8), s.salt);
            }
            // Each step is a host's call: its record made durable, then confirmed.
            m.confirm();
        }
    }
}

#[wasm_bindgen_test]
fn every_record_vector() {
    let (_, _, records) = common::records();
    for r in records {
        let value = match &r.value {
            Some(v) => Uint8Array::from(&v[..]).into(),
            None => JsValue::NULL,
        };
        let decoded = decode_record(u8a(&r.key), value).unwrap();
        let text: String = JSON::stringify(&decoded).unwrap().into();
        let got: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(got, common::salt_as_number(&r.json));
        let encoded = encode_record(JSON::parse(&r.json.to_string()).unwrap()).unwrap();
        assert_eq!(bytes_of(&get(&encoded, "key")), r.key);
        let v = get(&encoded, "value");
        assert_eq!((!v.is_null()).then(|| bytes_of(&v)), r.value);
    }
}

#[wasm_bindgen_test]
fn decode_pid_explains_regions() {
    let info = decode_pid(JsValue::from(8373639764095533061i64)).unwrap();
    assert_eq!(get(&info, "space").as_string().unwrap(), "mirrored");
    assert_eq!(get(&info, "region").as_f64().unwrap() as u32, 0x343525);
    assert_eq!(big(&get(&info, "pid40")), 5);
    assert_eq!(big(&get(&info, "pid")), 8373639764095533061);
}

#[wasm_bindgen_test]
fn errors_are_js_errors_and_change_nothing() {
    let mut m = mapper();
    m.map("A".into(), JsValue::from(1i64), JsValue::from(0))
        .unwrap();
    assert_eq!(m.pending(), 1);
    assert_eq!(m.confirm(), 1);
    let before = m.snapshot().unwrap();
    let err = m
        .map("A".into(), JsValue::from(1i64 << 40), JsValue::from(0))
        .unwrap_err();
    assert!(message(err).starts_with("PidOutOfRange"));
    let err = m
        .map("A".into(), JsValue::from(2f64.powi(60)), JsValue::from(0))
        .unwrap_err();
    assert!(message(err).contains("not a safe integer"));
    let err = m.load_record(u8a(&[0, 3, 1]), JsValue::NULL).unwrap_err();
    assert!(message(err).starts_with("Truncated"));
    let err = PidMapper::restore(u8a(&[1, 2, 3])).unwrap_err();
    assert!(message(err).starts_with("ForeignSnapshot"));
    let err = PidMapper::new("nope".into(), 0.into(), None).err().unwrap();
    assert!(message(err).starts_with("InvalidTopicId"));
    let opts = JSON::parse(r#"{"durability":"sometimes"}"#).unwrap();
    let err = PidMapper::new(common::TOPIC.into(), 0.into(), Some(opts))
        .err()
        .unwrap();
    assert!(message(err).contains("durability"));
    let mut bad = BatchBuilder {
        producer_id: 3,
        ..BatchBuilder::default()
    }
    .encode();
    bad[16] = 9;
    let err = m
        .rewrite_batches("A".into(), u8a(&bad), JsValue::from(0), None)
        .unwrap_err();
    assert!(message(err).starts_with("UnknownMagic"));
    assert_eq!(m.snapshot().unwrap(), before);
    assert_eq!((m.size(), m.pending()), (1, 0));
}

#[wasm_bindgen_test]
fn rewrite_snapshot_restore_expire() {
    let opts = JSON::parse(r#"{"producerExpirationMs": 1000}"#).unwrap();
    let mut m = PidMapper::new(common::TOPIC.into(), 0.into(), Some(opts)).unwrap();
    let batch = BatchBuilder {
        producer_id: 5,
        producer_epoch: 0,
        base_sequence: 0,
        records: vec![RecordSpec {
            key: None,
            value: Some(b"hello".to_vec()),
        }],
        ..BatchBuilder::default()
    }
    .encode();
    let strict = JSON::parse(r#"{"strictCrc": true}"#).unwrap();
    let out = m
        .rewrite_batches("A".into(), u8a(&batch), JsValue::from(10), Some(strict))
        .unwrap();
    let bytes = bytes_of(&get(&out, "bytes"));
    assert_eq!(&bytes[43..51], &8373639764095533061i64.to_be_bytes());
    assert_eq!(
        get(&out, "consumed").as_f64().unwrap() as usize,
        batch.len()
    );
    let records = js_sys::Array::from(&get(&out, "records"));
    assert_eq!(records.length(), 1);
    let batches = js_sys::Array::from(&get(&out, "batches"));
    assert_eq!(big(&get(&batches.get(0), "mappedPid")), 8373639764095533061);
    assert_eq!(big(&get(&batches.get(0), "originalPid")), 5);

    // Pending until confirmed: a retry returns the record again, snapshots
    // and expiry wait for confirm().
    assert_eq!(
        PidMapper::restore(u8a(&m.snapshot().unwrap()))
            .unwrap()
            .size(),
        0
    );
    let retry = m
        .rewrite_batches("A".into(), u8a(&batch), JsValue::from(10), None)
        .unwrap();
    assert_eq!(js_sys::Array::from(&get(&retry, "records")).length(), 1);
    let err = m.expire(JsValue::from(10)).unwrap_err();
    assert!(message(err).starts_with("Unconfirmed"));
    assert_eq!(m.confirm(), 1);
    let restored = PidMapper::restore(u8a(&m.snapshot().unwrap())).unwrap();
    assert_eq!(restored.size(), 1);
    let mut replayed = mapper();
    let rec = records.get(0);
    let loaded = replayed
        .load_record(get(&rec, "key"), get(&rec, "value"))
        .unwrap();
    assert_eq!(get(&loaded, "outcome").as_string().unwrap(), "bound");
    assert_eq!(big(&get(&loaded, "mapped")), 8373639764095533061);

    assert_eq!(m.expire(JsValue::from(500)).unwrap().length(), 0);
    let tombstones = m.expire(JsValue::from(1010)).unwrap();
    assert_eq!(tombstones.length(), 1);
    assert_eq!(m.size(), 0);
    assert_eq!(bytes_of(&tombstones.get(0)), bytes_of(&get(&rec, "key")));
}

#[wasm_bindgen_test]
fn simulate_runs_a_preset_and_reports_errors() {
    let scenario = include_str!("../www/presets/region-collision.json");
    let report = mirrorpid::js::simulate(JsValue::from_str(scenario)).unwrap();
    let totals = get(&report, "totals");
    assert_eq!(
        get(&get(&totals, "mirrorpid"), "sharedPids").as_f64(),
        Some(0.0)
    );
    assert_eq!(
        get(&get(&totals, "verbatim"), "sharedPids").as_f64(),
        Some(1.0)
    );
    let parsed = JSON::parse(scenario).unwrap();
    assert!(
        mirrorpid::js::simulate(parsed).is_ok(),
        "a plain object works too"
    );
    let err = mirrorpid::js::simulate(JsValue::from_str(
        r#"{"clusters":[{"id":"A"}],"links":[{"from":"A","to":"Q"}]}"#,
    ))
    .unwrap_err();
    assert!(message(err).contains("unknown cluster \"Q\""));
}

#[wasm_bindgen_test]
fn plan_clusters_finds_the_reference_pair() {
    let plan =
        mirrorpid::js::plan_clusters("# fleet\ncluster-2123\nA\ncluster-2336\n".into()).unwrap();
    let shared = get(&plan, "sharedRegions");
    assert_eq!(
        JSON::stringify(&shared).unwrap(),
        r#"[{"clusters":["cluster-2123","cluster-2336"],"region":1649414}]"#
    );
    assert_eq!(
        get(&plan, "sharedRegionProbability").as_f64(),
        Some(mirrorpid::pid::shared_region_probability(3))
    );
    let err = mirrorpid::js::plan_clusters("x".repeat(40_000).into()).unwrap_err();
    assert!(message(err).contains("cluster ID"));
}

/// Finding 13: an unknown option key is an error, never a silent default.
#[wasm_bindgen_test]
fn unknown_option_keys_are_errors() {
    let typo = JSON::parse(r#"{"durabilty":"collisions"}"#).unwrap();
    let err = PidMapper::new(common::TOPIC.into(), 0.into(), Some(typo))
        .err()
        .unwrap();
    assert!(message(err).contains("durabilty"));
    let mut m = mapper();
    let batch = BatchBuilder {
        producer_id: 5,
        ..BatchBuilder::default()
    }
    .encode();
    let strict = JSON::parse(r#"{"strictCRC":true}"#).unwrap();
    let err = m
        .rewrite_batches("A".into(), u8a(&batch), JsValue::from(1), Some(strict))
        .unwrap_err();
    assert!(message(err).contains("strictCRC"));
    assert_eq!(m.size(), 0, "nothing ran");
    // Known keys, null and undefined are fine.
    let ok = JSON::parse(r#"{"durability":"collisions","producerExpirationMs":null}"#).unwrap();
    assert!(PidMapper::new(common::TOPIC.into(), 0.into(), Some(ok)).is_ok());
    assert!(PidMapper::new(common::TOPIC.into(), 0.into(), Some(JsValue::NULL)).is_ok());
}

/// Finding 14: every 64-bit value comes back as a BigInt, and goes in as a
/// BigInt, a safe-integer number or a plain decimal string.
#[wasm_bindgen_test]
fn one_int64_convention() {
    let mut m = mapper();
    let out = m
        .map("A".into(), JsValue::from_str("5"), JsValue::from(10))
        .unwrap();
    assert_eq!(big(&get(&out, "mapped")), 8373639764095533061);
    m.confirm();
    let all = js_sys::Array::from(&m.bindings());
    let b = all.get(0);
    assert_eq!(big(&get(&b, "pid")), 5);
    assert_eq!(big(&get(&b, "mapped")), 8373639764095533061);
    assert_eq!(big(&get(&b, "lastSeenMs")), 10);
    // The edges, on the JS-built path and the plain one alike.
    let bigint = |text: &str| {
        js_sys::BigInt::new(&JsValue::from_str(text))
            .unwrap()
            .into()
    };
    for plain in [false, true] {
        mirrorpid::js::use_plain_results(plain);
        for bad in [
            JsValue::from_str(" 5"),
            JsValue::from_str("+5"),
            JsValue::from(2f64.powi(53)),
            JsValue::from(1.5),
            JsValue::from(f64::NAN),
            JsValue::TRUE,
            JsValue::NULL,
            bigint("9223372036854775808"),
            bigint("-9223372036854775809"),
        ] {
            assert!(
                m.map("A".into(), bad.clone(), JsValue::from(0)).is_err(),
                "{bad:?}"
            );
        }
        // The extremes of the range are accepted; a PID in range that the
        // mapper refuses gets the mapper's own error.
        for (now, ok) in [
            (bigint("9223372036854775807"), true),
            (bigint("-9223372036854775808"), true),
            (JsValue::from(2f64.powi(53) - 1.0), true),
            (JsValue::from(-(2f64.powi(53) - 1.0)), true),
        ] {
            assert_eq!(
                m.map("A".into(), JsValue::from(5), now.clone()).is_ok(),
                ok,
                "{now:?}"
            );
        }
        let err = m
            .map("A".into(), bigint("1099511627776"), JsValue::from(0))
            .unwrap_err();
        assert!(message(err).starts_with("PidOutOfRange"), "plain {plain}");
    }
    mirrorpid::js::use_plain_results(false);
    let opts = JSON::parse(r#"{"producerExpirationMs":"1e3"}"#).unwrap();
    assert!(PidMapper::new(common::TOPIC.into(), 0.into(), Some(opts)).is_err());
}

/// A source that sends nothing but new PIDs meets the capacity limits:
/// every refused call throws `CapacityExceeded` and changes nothing, the
/// other mapper keeps serving its producers, and after expiry and
/// `free()` the module serves new work.
#[wasm_bindgen_test]
fn capacity_limits_in_js() {
    use common::batches::fetch;
    let mut victim = mapper();
    let served = |m: &mut PidMapper| {
        let out = m
            .rewrite_batches(
                "victim".into(),
                u8a(&fetch(0..10)),
                JsValue::from(500),
                None,
            )
            .unwrap();
        bytes_of(&get(&out, "bytes"))
    };
    let before = served(&mut victim);
    victim.confirm();
    let opts = JSON::parse(r#"{"producerExpirationMs":1000,"maxBindings":"1000","maxClusters":1}"#)
        .unwrap();
    let mut flood = PidMapper::new(common::TOPIC.into(), 0.into(), Some(opts)).unwrap();
    let mut refused = 0;
    for round in 0..20 {
        match flood.rewrite_batches(
            "flood".into(),
            u8a(&fetch(round * 100..round * 100 + 100)),
            JsValue::from(0),
            None,
        ) {
            Ok(_) => {
                flood.confirm();
            }
            Err(e) => {
                let text = message(e);
                assert!(text.starts_with("CapacityExceeded"), "{text}");
                assert!(text.contains("maxBindings 1000"), "{text}");
                assert_eq!(flood.size(), 1000);
                assert_eq!(flood.pending(), 0);
                refused += 1;
            }
        }
    }
    assert_eq!(refused, 10);
    let err = flood
        .map("other".into(), JsValue::from(1), JsValue::from(0))
        .unwrap_err();
    assert!(message(err).starts_with("CapacityExceeded"));
    assert_eq!(served(&mut victim), before);
    // Expiry makes room again; a freed mapper gives its memory back.
    assert_eq!(flood.expire(JsValue::from(5_000)).unwrap().length(), 1000);
    assert!(flood
        .map("other".into(), JsValue::from(1), JsValue::from(5_000))
        .is_ok());
    drop(flood);
    let mut again = mapper();
    assert!(again
        .rewrite_batches("flood".into(), u8a(&fetch(0..100)), JsValue::from(0), None)
        .is_ok());
    assert_eq!(served(&mut victim), before);
    for bad in [
        r#"{"maxBindings":0}"#,
        r#"{"maxClusters":-1}"#,
        r#"{"maxClusterIdBytes":"x"}"#,
    ] {
        let err = PidMapper::new(
            common::TOPIC.into(),
            0.into(),
            Some(JSON::parse(bad).unwrap()),
        )
        .err()
        .unwrap();
        assert!(message(err).starts_with("InvalidInput"), "{bad}");
    }
}
