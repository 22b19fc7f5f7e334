//! Kafka topic IDs: 16-byte UUIDs, shown as Kafka shows them.
//!
//! Kafka prints a `Uuid` as 22 characters of URL-safe base64 without padding
//! (`bxw7Kp1OS3-KHC0-T1prfA`); the 8-4-4-4-12 hex form is accepted too.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;

/// A topic's 16-byte ID.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TopicId(pub [u8; 16]);

impl TopicId {
    /// The 16 bytes.
    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }

    /// The 8-4-4-4-12 hex form.
    pub fn to_hex(&self) -> String {
        let h: String = self.0.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

impl FromStr for TopicId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || Error::InvalidTopicId {
            text: s.chars().take(64).collect(),
        };
        let mut out = [0u8; 16];
        match s.len() {
            22 => {
                let n = URL_SAFE_NO_PAD
                    .decode_slice(s.as_bytes(), &mut out)
                    .map_err(|_| bad())?;
                if n != 16 {
                    return Err(bad());
                }
            }
            36 => {
                let bytes = s.as_bytes();
                if [8, 13, 18, 23].iter().any(|&i| bytes[i] != b'-') {
                    return Err(bad());
                }
                let hex: Vec<u8> = bytes.iter().copied().filter(|&b| b != b'-').collect();
                // from_str_radix alone would take "+e" as 14.
                if hex.len() != 32 || !hex.iter().all(u8::is_ascii_hexdigit) {
                    return Err(bad());
                }
                for (i, pair) in hex.chunks(2).enumerate() {
                    let text = std::str::from_utf8(pair).map_err(|_| bad())?;
                    out[i] = u8::from_str_radix(text, 16).map_err(|_| bad())?;
                }
            }
            _ => return Err(bad()),
        }
        Ok(TopicId(out))
    }
}

impl fmt::Display for TopicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl fmt::Debug for TopicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TopicId({self})")
    }
}

impl Serialize for TopicId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TopicId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_hex_name_the_same_id() {
        let a: TopicId = "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap();
        let b: TopicId = "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "bxw7Kp1OS3-KHC0-T1prfA");
        assert_eq!(a.to_hex(), "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c");
    }

    #[test]
    fn bad_text_is_rejected() {
        for bad in [
            "",
            "short",
            "bxw7Kp1OS3-KHC0-T1prf!",
            "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6bzz",
            "6f1c3b2a99d4e-4b7f-8a1c-2d3e4f5a6b7c",
            "bxw7Kp1OS3-KHC0-T1prfB", // non-canonical trailing bits
            "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b+c", // a sign is not a digit
            "+f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c",
        ] {
            assert!(
                matches!(bad.parse::<TopicId>(), Err(Error::InvalidTopicId { .. })),
                "{bad:?}"
            );
        }
    }
}
