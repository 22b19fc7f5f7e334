//! CRC-32C (Castagnoli), and its update for a patch of a few bytes.
//!
//! CRC is linear over GF(2): for two messages of the same length,
//! `crc(a) ^ crc(b) = crc0(a ^ b)`, where `crc0` has zero init and no final
//! xor. Rewriting 8 bytes that are followed by `n` bytes therefore changes
//! the CRC by `crc0(old ^ new) · x^(8n) mod P`, which takes O(log n) work
//! and never reads the other bytes (zlib's `crc32_combine` technique).

/// The CRC-32C polynomial, bit-reflected.
const POLY: u32 = 0x82f6_3b78;

/// CRC-32C of `bytes` (hardware-accelerated where the CPU has it).
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// `a · b mod P` in the reflected representation.
fn multmodp(a: u32, mut b: u32) -> u32 {
    let mut m: u32 = 1 << 31;
    let mut p: u32 = 0;
    loop {
        if a & m != 0 {
            p ^= b;
            if a & (m - 1) == 0 {
                break;
            }
        }
        m >>= 1;
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
    }
    p
}

/// `x^(2^k) mod P` for k = 0..32 (x^(2^k) repeats with period dividing 2^32-1,
/// so 32 entries with wrap-around cover every exponent used here).
const X2N: [u32; 32] = {
    let mut t = [0u32; 32];
    let mut p: u32 = 1 << 30; // x^1
    let mut k = 0;
    while k < 32 {
        t[k] = p;
        // p = p · p mod P, written out because const fns cannot call multmodp's loop-with-break form
        let a = p;
        let mut b = p;
        let mut m: u32 = 1 << 31;
        let mut r: u32 = 0;
        while m != 0 {
            if a & m != 0 {
                r ^= b;
            }
            m >>= 1;
            b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
        }
        p = r;
        k += 1;
    }
    t
};

/// `x^(8n) mod P`: the operator that appends `n` zero bytes to a `crc0`.
fn x8n(mut n: u64) -> u32 {
    let mut p: u32 = 1 << 31; // x^0
    let mut k = 3;
    while n != 0 {
        if n & 1 != 0 {
            p = multmodp(X2N[k & 31], p);
        }
        n >>= 1;
        k += 1;
    }
    p
}

/// `crc0` of `bytes`: zero init, no final xor.
fn crc0(bytes: &[u8]) -> u32 {
    let mut c: u32 = 0;
    for &byte in bytes {
        c ^= u32::from(byte);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
        }
    }
    c
}

/// The CRC-32C of a message after `old` is replaced by `new` at a place
/// followed by `bytes_after` more bytes, given the message's CRC `crc`.
///
/// Valid for any CRC-32C message, whatever bytes precede the patch.
pub fn patch(crc: u32, old: &[u8; 8], new: &[u8; 8], bytes_after: u64) -> u32 {
    let mut delta = [0u8; 8];
    for (d, (o, n)) in delta.iter_mut().zip(old.iter().zip(new)) {
        *d = o ^ n;
    }
    if delta == [0; 8] {
        return crc;
    }
    crc ^ multmodp(x8n(bytes_after), crc0(&delta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_value() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn patch_equals_recompute() {
        let mut msg: Vec<u8> = (0..300u32).map(|i| (i * 31 % 251) as u8).collect();
        for at in [0usize, 1, 22, 100, 292] {
            let before = crc32c(&msg);
            let old: [u8; 8] = msg[at..at + 8].try_into().unwrap();
            let new = (at as u64)
                .wrapping_mul(0x0123_4567_89ab_cdef)
                .to_be_bytes();
            msg[at..at + 8].copy_from_slice(&new);
            let after = (msg.len() - at - 8) as u64;
            assert_eq!(patch(before, &old, &new, after), crc32c(&msg), "at {at}");
        }
    }
}
