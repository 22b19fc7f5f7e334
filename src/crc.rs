//! CRC-32C (Castagnoli), and its update for a patch of a few bytes.
//!
//! CRC is linear over GF(2): for two messages of the same length,
//! `crc(a) ^ crc(b) = crc0(a ^ b)`, where `crc0` has zero init and no final
//! xor. Rewriting 8 bytes that are followed by `n` bytes therefore changes
//! the CRC by `crc0(old ^ new) · x^(8n) mod P`: O(log n) work that never
//! reads the other bytes (zlib's `crc32_combine` technique), here with a
//! 4 KiB table of `x^(8·d·256^k)` so that it is one multiplication per
//! non-zero base-256 digit of `n` (one or two for a batch under 64 KiB),
//! each four bits at a time.

/// The CRC-32C polynomial, bit-reflected.
const POLY: u32 = 0x82f6_3b78;

/// CRC-32C of `bytes` (hardware-accelerated where the CPU has it).
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// `p · x mod P` (reflected: a right shift, reducing the bit shifted out).
const fn mulx(p: u32) -> u32 {
    (p >> 1) ^ (POLY & 0u32.wrapping_sub(p & 1))
}

/// `j · x^4 mod P` for the 16 values of the low nibble: what a right
/// shift by 4 drops, reduced.
static REDUCE4: [u32; 16] = {
    let mut t = [0u32; 16];
    let mut j = 0;
    while j < 16 {
        t[j] = mulx(mulx(mulx(mulx(j as u32))));
        j += 1;
    }
    t
};

/// `a · b mod P` in the reflected representation (bit 31 is x^0), bit by
/// bit: for building the tables at compile time.
const fn multmodp_bits(a: u32, mut b: u32) -> u32 {
    let mut p: u32 = 0;
    let mut i = 0;
    while i < 32 {
        p ^= b & 0u32.wrapping_sub((a >> (31 - i)) & 1);
        b = mulx(b);
        i += 1;
    }
    p
}

/// `a · b mod P`, four bits of `a` at a time (Horner's rule from the
/// highest degree, which is `a`'s lowest bits). Two ways that give the
/// same product (tested against the bitwise one): natively a 16-entry
/// table of the multiples of `b` (built with SIMD), in WebAssembly masks
/// instead of a table (25 % faster a batch there, 15 % slower natively).
#[inline]
fn multmodp(a: u32, b: u32) -> u32 {
    if cfg!(target_family = "wasm") {
        multmodp_masks(a, b)
    } else {
        multmodp_table(a, b)
    }
}

/// [`multmodp`] with a table of `b`'s multiples.
#[inline]
fn multmodp_table(a: u32, b: u32) -> u32 {
    // Raw bit s of a nibble is the coefficient of x^(3 - s) within it.
    let b1 = mulx(b);
    let b2 = mulx(b1);
    let b3 = mulx(b2);
    let mut t = [0u32; 16];
    for (j, slot) in t.iter_mut().enumerate() {
        let mut v = 0;
        if j & 1 != 0 {
            v ^= b3;
        }
        if j & 2 != 0 {
            v ^= b2;
        }
        if j & 4 != 0 {
            v ^= b1;
        }
        if j & 8 != 0 {
            v ^= b;
        }
        *slot = v;
    }
    let mut p = 0u32;
    let mut shift = 0;
    while shift < 32 {
        p = (p >> 4) ^ REDUCE4[(p & 15) as usize];
        p ^= t[((a >> shift) & 15) as usize];
        shift += 4;
    }
    p
}

/// [`multmodp`] with masks: a nibble's bits select b·x^3, b·x^2, b·x, b
/// (lowest bit first); no table to build, no branch.
#[inline]
fn multmodp_masks(a: u32, b: u32) -> u32 {
    let b1 = mulx(b);
    let b2 = mulx(b1);
    let b3 = mulx(b2);
    let mask = |bit: u32| 0u32.wrapping_sub(bit & 1);
    let mut p = 0u32;
    let mut shift = 0;
    while shift < 32 {
        p = (p >> 4) ^ REDUCE4[(p & 15) as usize];
        let n = a >> shift;
        p ^= (b3 & mask(n)) ^ (b2 & mask(n >> 1)) ^ (b1 & mask(n >> 2)) ^ (b & mask(n >> 3));
        shift += 4;
    }
    p
}

static SHIFT: [[u32; 256]; 4] = {
    let mut t = [[0u32; 256]; 4];
    let x1: u32 = 1 << 30;
    let x2 = multmodp_bits(x1, x1);
    let x4 = multmodp_bits(x2, x2);
    let mut base = multmodp_bits(x4, x4); // x^(8 · 256^k), starting at k = 0
    let mut k = 0;
    while k < 4 {
        t[k][0] = 1 << 31; // x^0
        let mut d = 1;
        while d < 256 {
            t[k][d] = multmodp_bits(t[k][d - 1], base);
            d += 1;
        }
        base = multmodp_bits(t[k][255], base);
        k += 1;
    }
    t
};

/// `v · x^(8n) mod P`: appends `n` zero bytes to the `crc0` value `v`.
#[inline]
fn shift(mut v: u32, n: u64) -> u32 {
    let n = u32::try_from(n).expect("a batch is under 2^31 bytes");
    for (k, table) in SHIFT.iter().enumerate() {
        let d = ((n >> (8 * k)) & 255) as usize;
        if d != 0 {
            v = multmodp(table[d], v);
        }
    }
    v
}

/// `crc0` of `bytes`: zero init, no final xor (through the `crc32c` crate,
/// so in hardware where the CPU has it; a byte-table loop measured 25 %
/// slower on a patch's 8 bytes).
fn crc0(bytes: &[u8]) -> u32 {
    !crc32c::crc32c_append(!0, bytes)
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
    fn the_nibble_multiply_is_the_bitwise_one() {
        let mut x = 0x1234_5678u32;
        for _ in 0..1000 {
            x = x.wrapping_mul(0x9e37_79b9).rotate_left(7) ^ 0x5bd1_e995;
            let y = x.rotate_left(13).wrapping_add(0x2545_f491);
            assert_eq!(multmodp_table(x, y), multmodp_bits(x, y), "{x:#x} {y:#x}");
            assert_eq!(multmodp_masks(x, y), multmodp_bits(x, y), "{x:#x} {y:#x}");
        }
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
