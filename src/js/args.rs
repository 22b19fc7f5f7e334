//! What comes in from JS: the one rule for 64-bit input, small integers,
//! options through serde (unknown keys refused, plain objects only; the
//! mapper's and the rewrites' are `options.rs`), byte arguments.

use js_sys::{Array, Object, Reflect, Uint8Array};
use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{invalid, js_err};
use crate::error::Error;
use crate::record::StateRecord;

/// A 64-bit integer from a BigInt, a safe-integer number or a decimal string.
pub(super) fn int64(v: &JsValue, what: &str) -> Result<i64, JsError> {
    // The common cases in one call into JS; the rest (and the message of an
    // error) below.
    if let Some(Ok(n)) = super::build::with(|b| b.int64(v)) {
        return Ok(n);
    }
    if v.is_bigint() {
        return i64::try_from(v.clone())
            .map_err(|_| invalid(format!("{what} does not fit in a signed 64-bit integer")));
    }
    if let Some(n) = v.as_f64() {
        if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 {
            return Ok(n as i64);
        }
        return Err(invalid(format!(
            "{what} {n} is not a safe integer; pass it as a BigInt"
        )));
    }
    if let Some(s) = v.as_string() {
        return crate::json::parse_i64(&s)
            .ok_or_else(|| invalid(format!("{what} {s:?} is not a 64-bit integer")));
    }
    Err(invalid(format!(
        "{what} must be a BigInt, a number or a decimal string"
    )))
}

/// An integer number in `[min, max]`, as the core would take it: a
/// `number` that is an integer, nothing else (no string, boolean, `null`,
/// BigInt or fraction is coerced, as wasm-bindgen's `i32`/`u32` parameters
/// would: `2 ** 32 + 3` is not partition 3). `err` builds the error for a
/// value out of range or of the wrong type.
pub(super) fn small_int(
    v: &JsValue,
    (min, max): (i64, i64),
    err: impl FnOnce(String) -> Error,
) -> Result<i64, JsError> {
    match v.as_f64() {
        Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => Ok(n as i64),
        Some(n) => Err(js_err(err(format!(
            "{n} is not an integer from {min} to {max}"
        )))),
        None => Err(js_err(err(format!(
            "{} is not a number (an integer from {min} to {max})",
            type_name(v)
        )))),
    }
}

/// What a JS value is, for messages.
fn type_name(v: &JsValue) -> &'static str {
    if v.is_undefined() {
        "undefined"
    } else if v.is_null() {
        "null"
    } else if v.is_bigint() {
        "a BigInt"
    } else if v.is_string() {
        "a string"
    } else if v.as_bool().is_some() {
        "a boolean"
    } else {
        "an object"
    }
}

/// An options object of the API: its keys, and serde for the values.
pub(super) trait JsOptions: for<'de> Deserialize<'de> + Default {
    /// Every key it takes (serde-wasm-bindgen reads only the fields a
    /// struct names, so unknown keys are checked against this list).
    const KEYS: &'static [&'static str];
}

/// Options of type `T` from a JS object (`undefined` or `null`: defaults);
/// an unknown key or a bad value is an error naming it.
pub(super) fn options<T: JsOptions>(v: JsValue, what: &str) -> Result<T, JsError> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    if !is_plain_object(&v) {
        return Err(invalid(format!(
            "{what} must be a plain object or null, not {}",
            if Array::is_array(&v) {
                "an array"
            } else if v.is_function() {
                "a function"
            } else if v.is_object() {
                "an instance of a class"
            } else {
                type_name(&v)
            }
        )));
    }
    let v = plain_copy(&v, 0).map_err(|why| invalid(format!("{what} cannot be read: {why}")))?;
    let object: &Object = v.unchecked_ref();
    for key in Object::keys(object).iter() {
        let key = key.as_string().unwrap_or_default();
        if !T::KEYS.contains(&key.as_str()) {
            return Err(invalid(format!(
                "{what}: unknown option {key:?} (the options are {})",
                T::KEYS.join(", ")
            )));
        }
    }
    serde_wasm_bindgen::from_value(v).map_err(|e| invalid(format!("{what}: {e}")))
}

/// Whether `v` is a plain object: `{…}` (its prototype `Object.prototype`)
/// or `Object.create(null)`; not an array, function, `Date`, `Map`, class
/// instance or primitive. A proxy whose trap throws is not.
fn is_plain_object(v: &JsValue) -> bool {
    if !v.is_object() || v.is_function() || Array::is_array(v) {
        return false;
    }
    match Reflect::get_prototype_of(v) {
        Ok(proto) => {
            let proto: &JsValue = proto.as_ref();
            proto.is_null()
                || Reflect::get_prototype_of(&Object::new())
                    .is_ok_and(|plain| JsValue::from(plain) == *proto)
        }
        Err(_) => false,
    }
}

/// How deep option objects may nest (the deepest, a trust declaration's
/// origins, is two levels).
const MAX_OPTION_DEPTH: u32 = 8;
/// The longest array an option may hold.
const MAX_OPTION_ARRAY: u32 = 1 << 20;

/// A copy of `v` made of plain objects, arrays and primitives, read only
/// through calls that catch: a getter or proxy trap of the caller's that
/// throws is an error here, never an exception thrown through a call that
/// holds the mapper (which would leave it borrowed for good). Only own
/// enumerable string keys are copied, as `Object.keys` would list them,
/// into objects without a prototype.
fn plain_copy(v: &JsValue, depth: u32) -> Result<JsValue, String> {
    if !v.is_object() || v.is_function() {
        return Ok(v.clone());
    }
    if depth == MAX_OPTION_DEPTH {
        return Err(format!("nested more than {MAX_OPTION_DEPTH} deep"));
    }
    let threw = |e: JsValue| {
        let message = e
            .dyn_ref::<js_sys::Error>()
            .map_or_else(|| "a value threw".to_owned(), |e| String::from(e.message()));
        format!("reading it threw ({message})")
    };
    if Array::is_array(v) {
        let len = Reflect::get(v, &"length".into()).map_err(threw)?;
        let len = len.as_f64().unwrap_or(0.0);
        if len > f64::from(MAX_OPTION_ARRAY) {
            return Err(format!("an array of more than {MAX_OPTION_ARRAY} items"));
        }
        let out = Array::new();
        for i in 0..len as u32 {
            let item = Reflect::get_u32(v, i).map_err(threw)?;
            out.push(&plain_copy(&item, depth + 1)?);
        }
        return Ok(out.into());
    }
    let object = v.unchecked_ref::<Object>();
    // Without a prototype, so that a reader of the copy that looks a key up
    // (serde's) finds the caller's own keys only, not one inherited from a
    // changed `Object.prototype`.
    let out: Object = Object::create(JsValue::NULL.unchecked_ref());
    for key in Reflect::own_keys(object).map_err(threw)?.iter() {
        if !key.is_string() {
            continue;
        }
        let d = Reflect::get_own_property_descriptor(object, &key).map_err(threw)?;
        let enumerable = !d.is_undefined()
            && Reflect::get(&d, &"enumerable".into())
                .map_err(threw)?
                .is_truthy();
        if enumerable {
            let value = Reflect::get(v, &key).map_err(threw)?;
            Reflect::set(&out, &key, &plain_copy(&value, depth + 1)?).map_err(threw)?;
        }
    }
    Ok(out.into())
}

thread_local! {
    static VIEW_GETTERS: Option<[js_sys::Function; 3]> = view_getters();
}

/// The intrinsic getters of a typed array's `buffer`, `byteOffset` and
/// `byteLength` (from `%TypedArray%.prototype`), looked up once.
fn view_getters() -> Option<[js_sys::Function; 3]> {
    let uint8 = js_sys::Object::get_prototype_of(&Uint8Array::new_with_length(0));
    let typed = js_sys::Object::get_prototype_of(&uint8);
    let getter = |name: &str| -> Option<js_sys::Function> {
        let d = js_sys::Object::get_own_property_descriptor(&typed, &name.into());
        Reflect::get(&d, &"get".into()).ok()?.dyn_into().ok()
    };
    Some([
        getter("buffer")?,
        getter("byteOffset")?,
        getter("byteLength")?,
    ])
}

/// A plain `Uint8Array` over the bytes `array` shows, or `None` when it
/// shows none (empty, or its buffer detached). Read through the intrinsic
/// getters: a subclass's `length`, `set` or `subarray` never runs inside
/// a call that holds the mapper, where a throw would leave it borrowed.
pub(super) fn plain_view(array: &Uint8Array) -> Result<Option<Uint8Array>, JsError> {
    let unreadable = || invalid("bytes cannot be read as a Uint8Array".into());
    // The same reads by the builders, in one call into JS.
    if let Some(view) = super::build::with(|b| b.plain_view(array)) {
        let view = view.map_err(|_| unreadable())?;
        return Ok((!view.is_null()).then(|| view.unchecked_into()));
    }
    VIEW_GETTERS.with(|getters| {
        let [buffer, offset, length] = getters.as_ref().ok_or_else(unreadable)?;
        let read = |f: &js_sys::Function| f.call0(array).map_err(|_| unreadable());
        let len = read(length)?.as_f64().ok_or_else(unreadable)? as u32;
        if len == 0 {
            return Ok(None);
        }
        let at = read(offset)?.as_f64().ok_or_else(unreadable)? as u32;
        Ok(Some(Uint8Array::new_with_byte_offset_and_length(
            &read(buffer)?,
            at,
            len,
        )))
    })
}

/// A string argument, or a typed error naming it: wasm-bindgen's own
/// conversion of a `&str` parameter reads a non-string's `length` as 0 and
/// traps in its allocator.
pub(super) fn text(v: &JsValue, what: &str) -> Result<String, JsError> {
    v.as_string()
        .ok_or_else(|| invalid(format!("{what} must be a string")))
}

/// The last `sourceClusterId` a mapper was given, with its text: a call
/// with the same string (`===`, one call into JS) takes the text kept
/// here instead of copying the string into WASM memory again.
#[derive(Debug, Default)]
pub(super) struct LastSource(Option<(JsValue, String)>);

impl LastSource {
    /// `v` and its text (a typed error unless `v` is a string), taken out
    /// to be given back by [`LastSource::keep`] after the call.
    pub(super) fn take(&mut self, v: &JsValue) -> Result<(JsValue, String), JsError> {
        match self.0.take() {
            Some(last) if super::build::with(|b| b.same(&last.0, v)) == Some(true) => Ok(last),
            _ => Ok((v.clone(), text(v, "sourceClusterId")?)),
        }
    }

    /// Keeps `last` for the next call.
    pub(super) fn keep(&mut self, last: (JsValue, String)) {
        self.0 = Some(last);
    }
}

pub(super) fn optional_bytes(v: &JsValue, what: &str) -> Result<Option<Vec<u8>>, JsError> {
    if v.is_null() || v.is_undefined() {
        return Ok(None);
    }
    let mut out = Vec::new();
    copy_arg(
        v,
        || format!("{what} must be a Uint8Array or null"),
        &mut out,
    )?;
    Ok(Some(out))
}

/// The `__mirror_state` record whose key and value (`null` for a
/// tombstone) are these arguments.
pub(super) fn record_arg(key: &JsValue, value: &JsValue) -> Result<StateRecord, JsError> {
    let key = bytes_arg(key, "key")?;
    let value = optional_bytes(value, "value")?;
    StateRecord::decode(&key, value.as_deref()).map_err(js_err)
}

/// The bytes of a `Uint8Array` argument, or a typed error naming it.
pub(super) fn bytes_arg(v: &JsValue, what: &str) -> Result<Vec<u8>, JsError> {
    let mut out = Vec::new();
    copy_arg(v, || format!("{what} must be a Uint8Array"), &mut out)?;
    Ok(out)
}

/// Copies a `Uint8Array` argument into `buf`, resized to it (growing
/// fallibly; a buffer kept between calls of one size is only
/// overwritten), reading it through [`plain_view`]. Anything else is
/// `InvalidInput` with `not_bytes()`. (wasm-bindgen's own conversion of a
/// byte-slice parameter allocates whatever `length` an array-like claims,
/// and traps on a negative or huge one.)
pub(super) fn copy_arg(
    v: &JsValue,
    not_bytes: impl FnOnce() -> String,
    buf: &mut Vec<u8>,
) -> Result<(), JsError> {
    let array = v
        .dyn_ref::<Uint8Array>()
        .ok_or_else(|| invalid(not_bytes()))?;
    copy_view(plain_view(array)?.as_ref(), buf)
}

/// Copies what `view` (from [`plain_view`]; `None`: no bytes) shows into
/// `buf`, resized to it, growing fallibly.
pub(super) fn copy_view(view: Option<&Uint8Array>, buf: &mut Vec<u8>) -> Result<(), JsError> {
    let len = view.map_or(0, |v| v.length() as usize);
    if buf.len() != len {
        buf.try_reserve(len.saturating_sub(buf.len()))
            .map_err(|_| {
                js_err(Error::OutOfMemory {
                    what: "a copy of the bytes",
                })
            })?;
        buf.resize(len, 0);
    }
    if let Some(view) = view {
        let to = buf.as_mut_ptr() as u32;
        if super::build::with(|b| b.copy_in(view, to)).is_none() {
            view.copy_to(buf);
        }
    }
    Ok(())
}
