//! Kafka wire primitives: big-endian integers, (compact) strings, varints.
//!
//! [`Reader`] decodes with bounds checks that name the field being read;
//! the `put_*` functions encode the same shapes. Records (`record.rs`),
//! snapshots (`snapshot.rs`) and control batches (`batch.rs`) all use these.

use crate::error::{Error, Result};

/// A cursor over bytes that never reads past the end.
///
/// It keeps the bytes not yet read as a slice, so every take is a checked
/// split of that slice: no index in it can be out of bounds, and none can
/// panic (`host/tests/module_structure.rs` holds the module to that).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    rest: &'a [u8],
    len: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            rest: buf,
            len: buf.len(),
        }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    fn truncated(&self, what: &'static str) -> Error {
        Error::Truncated {
            what,
            offset: self.len,
        }
    }

    /// Takes `n` bytes or fails naming `what`.
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let Some((out, rest)) = self.rest.split_at_checked(n) else {
            return Err(self.truncated(what));
        };
        self.rest = rest;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let Some((out, rest)) = self.rest.split_first_chunk::<N>() else {
            return Err(self.truncated(what));
        };
        self.rest = rest;
        Ok(*out)
    }

    /// An int8.
    pub fn i8(&mut self, what: &'static str) -> Result<i8> {
        Ok(i8::from_be_bytes(self.array(what)?))
    }
    /// An unsigned byte.
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(u8::from_be_bytes(self.array(what)?))
    }
    /// A big-endian int16.
    pub fn i16(&mut self, what: &'static str) -> Result<i16> {
        Ok(i16::from_be_bytes(self.array(what)?))
    }
    /// A big-endian int32.
    pub fn i32(&mut self, what: &'static str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }
    /// A big-endian uint32.
    pub fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }
    /// A big-endian int64.
    pub fn i64(&mut self, what: &'static str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }
    /// A 16-byte UUID.
    pub fn uuid(&mut self, what: &'static str) -> Result<[u8; 16]> {
        self.array(what)
    }

    /// An unsigned varint of at most 32 bits (Kafka's `UNSIGNED_VARINT`).
    pub fn uvarint(&mut self, what: &'static str) -> Result<u32> {
        let mut value: u64 = 0;
        for i in 0..5 {
            let b = self.u8(what)?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return u32::try_from(value).map_err(|_| Error::InvalidLength {
                    field: what,
                    length: value as i64,
                });
            }
        }
        Err(Error::InvalidLength {
            field: what,
            length: -1,
        })
    }

    /// A zig-zag signed varint of at most 64 bits (Kafka's `VARLONG`; also
    /// reads `VARINT`).
    pub fn varlong(&mut self, what: &'static str) -> Result<i64> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let b = self.u8(what)?;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        Err(Error::InvalidLength {
            field: what,
            length: -1,
        })
    }

    /// A non-null `STRING` (int16 length, then UTF-8).
    pub fn string(&mut self, what: &'static str) -> Result<String> {
        let len = self.i16(what)?;
        if len < 0 {
            return Err(Error::InvalidLength {
                field: what,
                length: i64::from(len),
            });
        }
        self.utf8(len as usize, what)
    }

    /// A non-null `COMPACT_STRING` (unsigned varint length + 1, then UTF-8).
    pub fn compact_string(&mut self, what: &'static str) -> Result<String> {
        let len = i64::from(self.uvarint(what)?) - 1;
        if len < 0 {
            return Err(Error::InvalidLength {
                field: what,
                length: len,
            });
        }
        self.utf8(len as usize, what)
    }

    fn utf8(&mut self, len: usize, what: &'static str) -> Result<String> {
        let raw = self.bytes(len, what)?;
        // Checked before it is copied: bad bytes allocate nothing.
        match core::str::from_utf8(raw) {
            Ok(text) => Ok(text.to_owned()),
            Err(_) => Err(Error::InvalidUtf8 { field: what }),
        }
    }

    /// Fails with [`Error::TrailingBytes`] unless everything was read.
    pub fn finish(&self, what: &'static str) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(Error::TrailingBytes { what, extra }),
        }
    }
}

/// Appends a big-endian int16.
pub fn put_i16(out: &mut Vec<u8>, v: i16) {
    out.extend_from_slice(&v.to_be_bytes());
}
/// Appends a big-endian int32.
pub fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}
/// Appends a big-endian uint32.
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}
/// Appends a big-endian int64.
pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&v.to_be_bytes());
}
/// Appends an unsigned varint.
pub fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
/// Appends a zig-zag signed varint (`VARINT`/`VARLONG`).
pub fn put_varlong(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}
/// Appends a `STRING`; fails if it is longer than 32767 bytes.
pub fn put_string(out: &mut Vec<u8>, s: &str, what: &'static str) -> Result<()> {
    let len = i16::try_from(s.len()).map_err(|_| Error::InvalidLength {
        field: what,
        length: s.len() as i64,
    })?;
    put_i16(out, len);
    out.extend_from_slice(s.as_bytes());
    Ok(())
}
/// Appends a `COMPACT_STRING`.
pub fn put_compact_string(out: &mut Vec<u8>, s: &str, what: &'static str) -> Result<()> {
    let len = u32::try_from(s.len() + 1).map_err(|_| Error::InvalidLength {
        field: what,
        length: s.len() as i64,
    })?;
    put_uvarint(out, len);
    out.extend_from_slice(s.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_edges() {
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            i32::MAX as i64,
            i64::MIN,
            i64::MAX,
        ] {
            let mut out = Vec::new();
            put_varlong(&mut out, v);
            let mut r = Reader::new(&out);
            assert_eq!(r.varlong("v").unwrap(), v);
            r.finish("v").unwrap();
        }
        for v in [0u32, 127, 128, 16383, 16384, u32::MAX] {
            let mut out = Vec::new();
            put_uvarint(&mut out, v);
            assert_eq!(Reader::new(&out).uvarint("u").unwrap(), v);
        }
    }

    #[test]
    fn overlong_uvarint_is_rejected() {
        let bytes = [0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert!(matches!(
            Reader::new(&bytes).uvarint("u"),
            Err(Error::InvalidLength { .. })
        ));
    }
}
