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
        let h: String = self.0.iter().map(|b| text!("{b:02x}")).collect();
        text!(
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
                out = base64url_16(s.as_bytes()).ok_or_else(bad)?;
            }
            36 => {
                const DASHES: [usize; 4] = [8, 13, 18, 23];
                let bytes = s.as_bytes();
                if DASHES.iter().any(|&i| bytes.get(i) != Some(&b'-')) {
                    return Err(bad());
                }
                // 32 hex digits around the dashes (`to_digit` takes no
                // sign, which `from_str_radix` would: "+e" as 14).
                let mut nibbles = bytes
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !DASHES.contains(i))
                    .map(|(_, &b)| char::from(b).to_digit(16));
                for byte in &mut out {
                    match (nibbles.next(), nibbles.next()) {
                        (Some(Some(hi)), Some(Some(lo))) => *byte = (hi << 4 | lo) as u8,
                        _ => return Err(bad()),
                    }
                }
            }
            _ => return Err(bad()),
        }
        Ok(TopicId(out))
    }
}

/// The 16 bytes that 22 base64url characters (unpadded) spell, as the
/// `base64` crate's `URL_SAFE_NO_PAD` decodes them: the last character's
/// low four bits, past the 128th, must be zero. Written out because that
/// crate's decoder keeps bounds checks (panics) the module must not hold.
fn base64url_16(text: &[u8]) -> Option<[u8; 16]> {
    let sextet = |c: &u8| -> Option<u128> {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        Some(u128::from(v))
    };
    let (last, first) = text.split_last()?;
    if first.len() != 21 {
        return None;
    }
    let mut bits: u128 = 0;
    for c in first {
        bits = bits << 6 | sextet(c)?;
    }
    let last = sextet(last)?;
    if last & 0xf != 0 {
        return None;
    }
    Some((bits << 2 | last >> 4).to_be_bytes())
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

    #[test]
    fn the_decoder_agrees_with_the_base64_crate() {
        // Every character in every position of a real ID, and every last
        // character (trailing bits set or not), against `URL_SAFE_NO_PAD`.
        let alphabet: Vec<u8> = (0u8..=255).collect();
        let base = *b"bxw7Kp1OS3-KHC0-T1prfA";
        let mut tried = 0;
        for at in 0..22 {
            for &c in &alphabet {
                let mut text = base;
                text[at] = c;
                let mut theirs = [0u8; 16];
                let want = match URL_SAFE_NO_PAD.decode_slice(text, &mut theirs) {
                    Ok(16) => Some(theirs),
                    _ => None,
                };
                assert_eq!(
                    base64url_16(&text),
                    want,
                    "{:?}",
                    String::from_utf8_lossy(&text)
                );
                tried += 1;
            }
        }
        assert_eq!(tried, 22 * 256);
        assert_eq!(base64url_16(b"bxw7Kp1OS3-KHC0-T1prf"), None);
    }
}
