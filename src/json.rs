//! JSON conventions shared by every serde type here: 64-bit integers travel
//! as decimal strings (JavaScript numbers lose precision above 2^53), and
//! are accepted as strings or as numbers.

use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;
use std::fmt;

/// Serializes an `i64` as a decimal string.
pub fn i64_as_string<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// Serializes an `Option<i64>` as a decimal string or null.
pub fn opt_i64_as_string<S: Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.collect_str(v),
        None => s.serialize_none(),
    }
}

/// Deserializes an `i64` from an integer number or a decimal string of
/// one (`"-42"`: digits and an optional minus, nothing else). Numbers
/// written with a fraction or an exponent (`3.0`, `1e3`) are refused, so
/// every value is exact: JavaScript numbers above 2^53 cannot be, and pass
/// as strings.
pub fn i64_from_any<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = i64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a 64-bit integer, as an integer number or a decimal string")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom(format!("{v} does not fit in int64")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
            Err(E::custom(format!(
                "{v} is not written as an integer (no fraction or exponent; pass large values as strings)"
            )))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
            parse_i64(v).ok_or_else(|| E::custom(format!("{v:?} is not a 64-bit integer")))
        }
    }
    d.deserialize_any(V)
}

/// A decimal `i64` written plainly: an optional `-` and digits, no spaces,
/// no `+`.
pub fn parse_i64(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// An `i64` that deserializes by [`i64_from_any`] (for optional fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int64(pub i64);

impl<'de> serde::Deserialize<'de> for Int64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int64, D::Error> {
        i64_from_any(d).map(Int64)
    }
}

/// Serde `with` module for `i64` fields: string out, string or number in.
pub mod i64_str {
    pub use super::i64_as_string as serialize;
    pub use super::i64_from_any as deserialize;
}

/// Serde `with` module for `Option<i64>` fields serialized as string or null.
pub mod opt_i64_str {
    pub use super::opt_i64_as_string as serialize;
}
