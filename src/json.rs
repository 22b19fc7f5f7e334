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

/// Deserializes an `i64` from a decimal string or an integer number.
pub fn i64_from_any<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = i64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a 64-bit integer as a decimal string or a number")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom(format!("{v} does not fit in int64")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
            if v.fract() == 0.0 && v.abs() <= 9007199254740992.0 {
                Ok(v as i64)
            } else {
                Err(E::custom(format!(
                    "{v} is not an exact integer (pass 64-bit values as strings)"
                )))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
            v.trim()
                .parse()
                .map_err(|_| E::custom(format!("{v:?} is not a 64-bit integer")))
        }
    }
    d.deserialize_any(V)
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
