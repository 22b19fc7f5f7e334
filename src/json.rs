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
            i64::try_from(v).map_err(|_| E::custom(text!("{v} does not fit in int64")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
            Err(E::custom(text!(
                "{v} is not written as an integer (no fraction or exponent; pass large values as strings)"
            )))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
            parse_i64(v).ok_or_else(|| E::custom(text!("{v:?} is not a 64-bit integer")))
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

/// Serde `with` module for `i64` fields: string out, string or number in.
pub mod i64_str {
    pub use super::i64_as_string as serialize;
    pub use super::i64_from_any as deserialize;
}

/// Serde `with` module for `Option<i64>` fields serialized as string or null.
pub mod opt_i64_str {
    pub use super::opt_i64_as_string as serialize;
}

/// A JSON document as the broker module reads its one JSON input, the
/// mapper config, without serde_json (which would double the module's
/// size): RFC 8259, strictly, with numbers kept as their text so that
/// integers stay exact.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object's members in document order (a repeated key is refused).
    Object(Vec<(String, Value)>),
}

/// How deep arrays and objects may nest.
const MAX_DEPTH: usize = 64;

impl Value {
    /// Parses one document (surrounding whitespace allowed); the error says
    /// what was expected and at which byte.
    pub fn parse(text: &str) -> Result<Value, String> {
        let mut p = Parser {
            b: text.as_bytes(),
            pos: 0,
        };
        let v = p.value(0)?;
        p.ws();
        if p.pos != p.b.len() {
            return Err(p.err("the end of the document"));
        }
        Ok(v)
    }

    /// The integer a number holds, if it is written as one (no fraction, no
    /// exponent) and fits an `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(t) => parse_i64(t),
            _ => None,
        }
    }

    /// What kind of value it is, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn err(&self, expected: &str) -> String {
        text!("expected {expected} at byte {}", self.pos)
    }

    /// The bytes not yet read.
    fn rest(&self) -> &[u8] {
        self.b.get(self.pos..).unwrap_or_default()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        let hit = self.b.get(self.pos) == Some(&c);
        self.pos += usize::from(hit);
        hit
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, String> {
        if self.rest().starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("a value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(text!(
                "nesting deeper than {MAX_DEPTH} at byte {}",
                self.pos
            ));
        }
        self.ws();
        match self.b.get(self.pos) {
            Some(b'{') => {
                self.pos += 1;
                let mut members: Vec<(String, Value)> = Vec::new();
                if self.eat(b'}') {
                    return Ok(Value::Object(members));
                }
                loop {
                    self.ws();
                    let at = self.pos;
                    let key = self.string()?;
                    if members.iter().any(|(k, _)| *k == key) {
                        let key = crate::error::Quoted(&key);
                        return Err(text!("key {key} repeated at byte {at}"));
                    }
                    if !self.eat(b':') {
                        return Err(self.err("':'"));
                    }
                    members.push((key, self.value(depth + 1)?));
                    if self.eat(b'}') {
                        return Ok(Value::Object(members));
                    }
                    if !self.eat(b',') {
                        return Err(self.err("',' or '}'"));
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b']') {
                        return Ok(Value::Array(items));
                    }
                    if !self.eat(b',') {
                        return Err(self.err("',' or ']'"));
                    }
                }
            }
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("a value")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.b.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        self.pos += usize::from(self.b.get(self.pos) == Some(&b'-'));
        match self.digits() {
            0 => return Err(self.err("a digit")),
            n if n > 1 && self.b.get(self.pos - n) == Some(&b'0') => {
                return Err(text!("a number with a leading zero at byte {start}"))
            }
            _ => {}
        }
        if self.b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err("a digit"));
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("a digit"));
            }
        }
        // ASCII, as the loops above read only ASCII.
        match self.b.get(start..self.pos).map(std::str::from_utf8) {
            Some(Ok(text)) => Ok(Value::Number(text.to_owned())),
            _ => Err(self.err("a number")),
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .b
            .get(self.pos..self.pos + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.err("four hex digits"))?;
        self.pos += 4;
        Ok(h)
    }

    fn string(&mut self) -> Result<String, String> {
        if self.b.get(self.pos) != Some(&b'"') {
            return Err(self.err("a string"));
        }
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.pos) else {
                return Err(self.err("'\"'"));
            };
            self.pos += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.b.get(self.pos) else {
                        return Err(self.err("an escape"));
                    };
                    self.pos += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if !self.rest().starts_with(b"\\u") {
                                    return Err(self.err("a low surrogate"));
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err(self.err("a low surrogate"));
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            char::from_u32(code).ok_or_else(|| self.err("a character"))?
                        }
                        _ => return Err(self.err("an escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                0..=0x1f => return Err(self.err("no control character in a string")),
                _ => out.push(c),
            }
        }
        // The input is a &str and escapes write whole characters, so this
        // is UTF-8 (checked all the same, as an error and not a panic).
        String::from_utf8(out).map_err(|_| self.err("UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::Value;

    #[test]
    fn parses_what_serde_json_parses_and_refuses_what_it_refuses() {
        for ok in [
            r#"{"a":[1,-2.5e+3,true,false,null],"b":"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","c":{}}"#,
            " [ ] ",
            "0",
            "-0.0E-1",
            r#""é""#,
        ] {
            let mine = Value::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            let theirs: serde_json::Value = serde_json::from_str(ok).unwrap();
            if let (Value::Object(m), serde_json::Value::Object(t)) = (&mine, &theirs) {
                assert_eq!(m.len(), t.len());
            }
        }
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "1e",
            "-",
            "tru",
            "\"\\x\"",
            "\"\u{1}\"",
            "\"\\ud800\"",
            "{\"a\":1}x",
            "{\"a\":1,\"a\":2}",
            "'a'",
            "[1 2]",
        ] {
            assert!(Value::parse(bad).is_err(), "{bad:?} parsed");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(Value::parse(&deep).unwrap_err().contains("nesting"));
        assert_eq!(Value::parse(" 12 ").unwrap().as_i64(), Some(12));
        assert_eq!(Value::parse("1e3").unwrap().as_i64(), None);
        assert_eq!(
            Value::parse(r#""\ud83d\ude00""#).unwrap(),
            Value::String("😀".into())
        );
    }
}
