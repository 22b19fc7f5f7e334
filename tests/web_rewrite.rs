//! The JavaScript API's rewrite paths under `wasm-pack test`, in Node and
//! in headless Chromium: results built by JS equal the ones built field by
//! field, an in-place rewrite equals the copying one, and a large fetch
//! rewritten through its header windows equals the copy; a bad batch
//! changes nothing on any path.
#![cfg(all(target_arch = "wasm32", feature = "js"))]

mod common;

use common::js::{bytes_of, get, mapper, message, u8a};
use js_sys::{Reflect, Uint8Array, JSON};
use mirrorpid::batch::{BatchBuilder, RecordSpec};
use mirrorpid::js::PidMapper;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

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
