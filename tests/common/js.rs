//! What the JavaScript API's tests (`tests/web.rs`, `tests/web_rewrite.rs`)
//! share: reading JS values, a mapper of the reference topic, bytes as a
//! JS caller passes them.

use js_sys::{Reflect, Uint8Array};
use mirrorpid::js::PidMapper;
use wasm_bindgen::{JsCast, JsValue};

pub fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap()
}

pub fn big(v: &JsValue) -> i64 {
    assert!(v.is_bigint(), "{v:?} is a BigInt");
    i64::try_from(v.clone()).unwrap()
}

pub fn message(err: wasm_bindgen::JsError) -> String {
    let v: JsValue = err.into();
    let e: js_sys::Error = v.dyn_into().expect("thrown value is a JS Error");
    e.message().into()
}

pub fn mapper() -> PidMapper {
    PidMapper::new(super::TOPIC.into(), 0.into(), None).unwrap()
}

/// Bytes as the `Uint8Array` a JS caller passes.
pub fn u8a(bytes: &[u8]) -> JsValue {
    Uint8Array::from(bytes).into()
}

pub fn bytes_of(v: &JsValue) -> Vec<u8> {
    v.dyn_ref::<Uint8Array>().expect("a Uint8Array").to_vec()
}
