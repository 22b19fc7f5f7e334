//! The JavaScript API under `wasm-pack test`, in Node and in headless
//! Chromium (`WASM_BINDGEN_USE_BROWSER=1`): every reference vector through
//! the same functions JS calls, plus errors and state.
#![cfg(all(target_arch = "wasm32", feature = "js"))]

mod common;

use js_sys::{Reflect, Uint8Array, JSON};
use mirrorpid::batch::{BatchBuilder, RecordSpec};
use mirrorpid::js::{decode_pid, decode_record, encode_record, map_pid, PidMapper};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap()
}

fn big(v: &JsValue) -> i64 {
    assert!(v.is_bigint(), "{v:?} is a BigInt");
    i64::try_from(v.clone()).unwrap()
}

fn message(err: wasm_bindgen::JsError) -> String {
    let v: JsValue = err.into();
    let e: js_sys::Error = v.dyn_into().expect("thrown value is a JS Error");
    e.message().into()
}

fn mapper() -> PidMapper {
    PidMapper::new(common::TOPIC.into(), 0.into(), None).unwrap()
}

/// Bytes as the `Uint8Array` a JS caller passes.
fn u8a(bytes: &[u8]) -> JsValue {
    Uint8Array::from(bytes).into()
}

fn bytes_of(v: &JsValue) -> Vec<u8> {
    v.dyn_ref::<Uint8Array>().expect("a Uint8Array").to_vec()
}

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

/// Whether two results are the same: the same keys in the same order, equal
/// bytes, and `Object.is` for everything else (BigInts included).
fn same(a: &JsValue, b: &JsValue) -> bool {
    if let (Some(x), Some(y)) = (a.dyn_ref::<Uint8Array>(), b.dyn_ref::<Uint8Array>()) {
        return x.to_vec() == y.to_vec();
    }
    if a.is_object() && b.is_object() {
        let (ka, kb) = (
            js_sys::Object::keys(a.unchecked_ref::<js_sys::Object>()),
            js_sys::Object::keys(b.unchecked_ref::<js_sys::Object>()),
        );
        return ka.length() == kb.length()
            && (0..ka.length()).all(|i| {
                let k = ka.get(i);
                k == kb.get(i) && same(&Reflect::get(a, &k).unwrap(), &Reflect::get(b, &k).unwrap())
            });
    }
    js_sys::Object::is(a, b)
}

/// The results built by JS in one call (the fast path) equal the ones built
/// field by field (the path under a Content-Security-Policy without eval).
#[wasm_bindgen_test]
fn built_results_equal_plain_ones() {
    use mirrorpid::batch::ControlType;
    let fetch: Vec<u8> = [
        BatchBuilder {
            producer_id: 5,
            base_offset: 10,
            ..BatchBuilder::default()
        },
        BatchBuilder {
            producer_id: 6,
            transactional: true,
            ..BatchBuilder::default()
        },
        BatchBuilder {
            producer_id: 6,
            transactional: true,
            control: Some(ControlType::Commit),
            ..BatchBuilder::default()
        },
        BatchBuilder {
            producer_id: -1,
            ..BatchBuilder::default()
        },
    ]
    .iter()
    .flat_map(BatchBuilder::encode)
    .collect();
    let run = |plain: bool| -> Vec<JsValue> {
        mirrorpid::js::use_plain_results(plain);
        let mut m = mapper();
        let mut out = vec![m
            .map("cluster-2123".into(), JsValue::from(5), JsValue::from(1))
            .unwrap()];
        m.confirm();
        // A collision: cluster-2336's producer 5 wants the same slot.
        out.push(
            m.map("cluster-2336".into(), JsValue::from(5), JsValue::from(2))
                .unwrap(),
        );
        m.confirm();
        out.push(
            m.map("cluster-2123".into(), JsValue::from(5), JsValue::from(3))
                .unwrap(),
        );
        out.push(
            m.rewrite_batches("A".into(), u8a(&fetch), JsValue::from(4), None)
                .unwrap(),
        );
        m.confirm();
        out.push(
            m.rewrite_batches("A".into(), u8a(&fetch), JsValue::from(5), None)
                .unwrap(),
        );
        // Over the builder's eager limit (8): its outcomes are built lazily.
        let many = common::batches::fetch(0..12);
        out.push(
            m.rewrite_batches("B".into(), u8a(&many), JsValue::from(6), None)
                .unwrap(),
        );
        mirrorpid::js::use_plain_results(false);
        out
    };
    let (built, plain) = (run(false), run(true));
    assert_eq!(
        js_sys::Array::from(&get(&built[5], "batches")).length(),
        12,
        "a lazily built result has every outcome"
    );
    assert!(
        !get(&built[1], "collision").is_null(),
        "the collision is in the test"
    );
    assert_eq!(
        js_sys::Array::from(&get(&built[3], "batches")).length(),
        4,
        "every batch has an outcome"
    );
    for (i, (b, p)) in built.iter().zip(&plain).enumerate() {
        let dump = js_sys::Function::new_with_args(
            "v",
            "return JSON.stringify(v, (k, x) => typeof x === 'bigint' ? x + 'n' : x)",
        );
        let show = |v: &JsValue| dump.call1(&JsValue::NULL, v).unwrap().as_string().unwrap();
        assert!(same(b, p), "result {i}: {} vs {}", show(b), show(p));
    }
    // The bytes are a copy, not a view of WASM memory that later calls overwrite.
    let bytes = get(&built[3], "bytes");
    assert_eq!(bytes_of(&bytes).len(), fetch.len());
    assert!(
        !js_sys::Object::is(
            &bytes.dyn_ref::<Uint8Array>().unwrap().buffer(),
            &wasm_bindgen::memory()
                .dyn_into::<js_sys::WebAssembly::Memory>()
                .unwrap()
                .buffer()
        ),
        "bytes do not alias WASM memory"
    );
}

/// `rewriteBatchesInPlace` does what `rewriteBatches` does, in the caller's
/// array: the same result (its `bytes` the array itself), the consumed
/// bytes rewritten and a truncated tail not touched; every control type's
/// outcome survives the packed columns, on the built and the plain path.
/// On an error, or an argument that is not a `Uint8Array`, the array and
/// the mapper are unchanged and the mapper keeps working.
#[wasm_bindgen_test]
fn rewrite_in_place_equals_copying_rewrite() {
    use mirrorpid::batch::ControlType;
    let batch = |producer_id: i64, control: Option<ControlType>| BatchBuilder {
        producer_id,
        base_offset: 7 + producer_id,
        transactional: control.is_some(),
        control,
        ..BatchBuilder::default()
    };
    let mut fetch: Vec<u8> = [
        batch(5, None),
        batch(6, Some(ControlType::Abort)),
        batch(7, Some(ControlType::Commit)),
        batch(8, Some(ControlType::Other(7))),
        batch(-1, None),
    ]
    .iter()
    .flat_map(BatchBuilder::encode)
    .collect();
    let whole = fetch.len();
    fetch.extend_from_slice(&batch(9, None).encode()[..30]); // a truncated tail
    for plain in [false, true] {
        mirrorpid::js::use_plain_results(plain);
        let (mut copying, mut in_place) = (mapper(), mapper());
        let expected = copying
            .rewrite_batches("A".into(), u8a(&fetch), JsValue::from(3), None)
            .unwrap();
        let array = Uint8Array::from(&fetch[..]);
        let got = in_place
            .rewrite_batches_in_place("A".into(), array.clone().into(), JsValue::from(3), None)
            .unwrap();
        assert!(same(&expected, &got), "plain {plain}");
        assert!(
            js_sys::Object::is(&get(&got, "bytes"), &array),
            "plain {plain}"
        );
        let rewritten = array.to_vec();
        assert_eq!(rewritten, bytes_of(&get(&expected, "bytes")));
        assert_ne!(
            rewritten[..whole],
            fetch[..whole],
            "the batches were rewritten"
        );
        assert_eq!(rewritten[whole..], fetch[whole..], "the tail is untouched");
        let controls: Vec<JsValue> = js_sys::Array::from(&get(&got, "batches"))
            .iter()
            .map(|b| get(&b, "control"))
            .collect();
        let names: Vec<Option<String>> = controls.iter().map(JsValue::as_string).collect();
        let want = [None, Some("abort"), Some("commit"), Some("other"), None];
        assert_eq!(names, want.map(|s| s.map(String::from)), "plain {plain}");
        assert_eq!(copying.snapshot().unwrap(), in_place.snapshot().unwrap());

        bad_magic_changes_nothing(&fetch, &mut in_place, |m, array| {
            m.rewrite_batches_in_place("A".into(), array, JsValue::from(4), None)
        });

        // Not a Uint8Array: a typed error, and the next call works.
        for wrong in [
            js_sys::Array::of1(&JsValue::from(1)).into(),
            JsValue::NULL,
            JsValue::from(61),
            JsValue::from_str("bytes"),
        ] {
            let err = in_place
                .rewrite_batches_in_place("A".into(), wrong, JsValue::from(4), None)
                .unwrap_err();
            assert!(message(err).starts_with("InvalidInput"), "plain {plain}");
        }
        let again = Uint8Array::from(&fetch[..]);
        in_place
            .rewrite_batches_in_place("A".into(), again.clone().into(), JsValue::from(5), None)
            .unwrap();
        assert_eq!(again.to_vec(), rewritten);
    }
    mirrorpid::js::use_plain_results(false);
}

/// `rewriteBatches` of a large fetch rewrites through the batches' headers,
/// into the one copy it makes in JS (gathered by the builders where the
/// batches average 8 KiB or more, a call into JS a window on the plain path
/// from 64 KiB), or copies every byte: either way the same result as its
/// copying path (which a strict CRC check takes, and which these valid
/// batches pass) and the same bytes as `rewriteBatchesInPlace`, its input
/// untouched, a truncated tail copied as it was; on an error nothing
/// changed; with batches of about 3 KiB and of about 10 KiB, on the built
/// and the plain path.
#[wasm_bindgen_test]
fn large_fetch_rewrite_through_headers_equals_the_copy() {
    let batch = |producer_id: i64, value: usize| {
        BatchBuilder {
            producer_id,
            base_offset: 10 * producer_id,
            records: vec![RecordSpec {
                key: None,
                value: Some(vec![7; value]),
            }],
            ..BatchBuilder::default()
        }
        .encode()
    };
    let strict = JSON::parse(r#"{"strictCrc": true}"#).unwrap();
    for (size, plain) in [(1000, false), (1000, true), (9000, false), (9000, true)] {
        let mut fetch: Vec<u8> = (0..40)
            .flat_map(|i: i64| batch(i % 5, size + 97 * i as usize))
            .collect();
        let whole = fetch.len();
        assert!(
            whole >= 64 << 10,
            "a fetch over the plain header path's threshold"
        );
        fetch.extend_from_slice(&batch(9, 500)[..100]); // a truncated tail
        mirrorpid::js::use_plain_results(plain);
        let (mut copying, mut headers, mut in_place) = (mapper(), mapper(), mapper());
        let expected = copying
            .rewrite_batches(
                "A".into(),
                u8a(&fetch),
                JsValue::from(3),
                Some(strict.clone()),
            )
            .unwrap();
        let input = Uint8Array::from(&fetch[..]);
        let got = headers
            .rewrite_batches("A".into(), input.clone().into(), JsValue::from(3), None)
            .unwrap();
        assert!(same(&expected, &got), "size {size}, plain {plain}");
        assert_eq!(input.to_vec(), fetch, "the input is untouched");
        let bytes = bytes_of(&get(&got, "bytes"));
        assert_ne!(bytes[..whole], fetch[..whole], "the batches were rewritten");
        assert_eq!(bytes[whole..], fetch[whole..], "the tail is as it was");
        let array = Uint8Array::from(&fetch[..]);
        let mine = in_place
            .rewrite_batches_in_place("A".into(), array.clone().into(), JsValue::from(3), None)
            .unwrap();
        assert_eq!(array.to_vec(), bytes, "size {size}, plain {plain}");
        assert!(same(&get(&mine, "batches"), &get(&got, "batches")));
        assert_eq!(copying.snapshot().unwrap(), headers.snapshot().unwrap());

        bad_magic_changes_nothing(&fetch, &mut headers, |m, array| {
            m.rewrite_batches("A".into(), array, JsValue::from(4), None)
        });
    }
    mirrorpid::js::use_plain_results(false);
}

/// `fetch` with its first batch's magic byte made bad, through `call` on
/// `m`: an `UnknownMagic` error, the array and the mapper as they were.
fn bad_magic_changes_nothing(
    fetch: &[u8],
    m: &mut PidMapper,
    call: impl FnOnce(&mut PidMapper, JsValue) -> Result<JsValue, wasm_bindgen::JsError>,
) {
    let mut bad = fetch.to_vec();
    bad[16] = 9;
    let array = Uint8Array::from(&bad[..]);
    let before = m.snapshot().unwrap();
    let err = call(m, array.clone().into()).unwrap_err();
    assert!(message(err).starts_with("UnknownMagic"));
    assert_eq!(array.to_vec(), bad);
    assert_eq!(m.snapshot().unwrap(), before);
}
