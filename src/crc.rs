//! CRC-32C (Castagnoli), and its update for a patch of a few bytes.
//!
//! CRC is linear over GF(2): for two messages of the same length,
//! `crc(a) ^ crc(b) = crc0(a ^ b)`, where `crc0` has zero init and no final
//! xor. Rewriting 8 bytes that are followed by `n` bytes therefore changes
//! the CRC by `crc0(old ^ new) · x^(8n) mod P`: O(log n) work that never
//! reads the other bytes (zlib's `crc32_combine` technique), here with a
//! 1 KiB table of `x^(8·d·16^k)` so that it is one multiplication per
//! non-zero hex digit of `n`.

/// The CRC-32C polynomial, bit-reflected.
const POLY: u32 = 0x82f6_3b78;

/// CRC-32C of `bytes` (hardware-accelerated where the CPU has it).
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// `a · b mod P` in the reflected representation (bit 31 is x^0).
const fn multmodp(a: u32, mut b: u32) -> u32 {
    let mut p: u32 = 0;
    let mut i = 0;
    while i < 32 {
        // Branch-free: add b when bit (31 - i) of a is set.
        p ^= b & 0u32.wrapping_sub((a >> (31 - i)) & 1);
        b = (b >> 1) ^ (POLY & 0u32.wrapping_sub(b & 1));
        i += 1;
    }
    p
}

/// `SHIFT[k][d] = x^(8 · d · 16^k) mod P`: the operator that appends
/// `d · 16^k` zero bytes to a `crc0`. 16 × 16 entries (1 KiB) cover every
/// 64-bit byte count, one table entry per non-zero hex digit of it.
static SHIFT: [[u32; 16]; 16] = {
    let mut t = [[0u32; 16]; 16];
    // x^8: x^1 squared three times.
    let x1: u32 = 1 << 30;
    let x2 = multmodp(x1, x1);
    let x4 = multmodp(x2, x2);
    let mut base = multmodp(x4, x4); // x^(8 · 16^k), starting at k = 0
    let mut k = 0;
    while k < 16 {
        t[k][0] = 1 << 31; // x^0
        let mut d = 1;
        while d < 16 {
            t[k][d] = multmodp(t[k][d - 1], base);
            d += 1;
        }
        // base^16 = t[k][15] · base
        base = multmodp(t[k][15], base);
        k += 1;
    }
    t
};

/// `v · x^(8n) mod P`: appends `n` zero bytes to the `crc0` value `v`, with
/// one multiplication per non-zero hex digit of `n` (at most 5 for any batch
/// up to 1 MiB).
fn shift(mut v: u32, mut n: u64) -> u32 {
    let mut k = 0;
    while n != 0 {
        let d = (n & 15) as usize;
        if d != 0 {
            v = multmodp(SHIFT[k][d], v);
        }
        n >>= 4;
        k += 1;
    }
    v
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
    crc ^ shift(crc0(&delta), bytes_after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_value() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn shift_appends_zero_bytes() {
        for n in [0u64, 1, 15, 16, 17, 255, 4096, 1 << 20, 123_456_789] {
            let mut msg = b"mirrorpid".to_vec();
            let v = crc0(&msg);
            msg.resize(msg.len() + n.min(1 << 21) as usize, 0);
            if n <= 1 << 21 {
                assert_eq!(shift(v, n), crc0(&msg), "n = {n}");
            }
        }
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
