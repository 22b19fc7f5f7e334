//! Text a source chose (a cluster ID), quoted and escaped in messages, so
//! that it cannot forge lines in a log.

use std::fmt;

/// A string in double quotes, escaped as Rust's `{:?}` escapes the common
/// cases (quote, backslash, `\n`, `\r`, `\t`, `\0`, other control
/// characters as `\u{..}`), so that a hostile cluster ID cannot forge lines
/// in a log. Ours, not `{:?}`: that one carries Unicode printability tables
/// into the broker module.
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\0' => f.write_str("\\0")?,
                c if c.is_control() => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}
