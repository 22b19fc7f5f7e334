//! CRC-32C (Castagnoli), and its update for a patch of a few bytes.
//!
//! CRC is linear over GF(2): for two messages of the same length,
//! `crc(a) ^ crc(b) = crc0(a ^ b)`, where `crc0` has zero init and no final
//! xor. Rewriting 8 bytes that are followed by `n` bytes therefore changes
//! the CRC by `crc0(old ^ new) · x^(8n) mod P`: O(log n) work that never
//! reads the other bytes (zlib's `crc32_combine` technique), here with
//! tables of `x^(8n)` for the digits of `n`, so that it is one
//! multiplication per non-zero digit (the low byte, then hex digits), each
//! a carry-less product from integer multiplications and a reduction by
//! table.

/// The CRC-32C polynomial, bit-reflected.
const POLY: u32 = 0x82f6_3b78;

/// CRC-32C of `bytes`: natively the `crc32c` crate (hardware instructions
/// where the CPU has them); in WebAssembly, which has none, four bytes at a
/// time through the patch's own tables (the crate's 8 KiB of tables would
/// grow the broker module for checks off the hot path).
pub fn crc32c(bytes: &[u8]) -> u32 {
    #[cfg(not(target_family = "wasm"))]
    return crc32c::crc32c(bytes);
    #[cfg(target_family = "wasm")]
    return crc32c_by_words(bytes);
}

/// CRC-32C four bytes at a time with [`ZERO4`] (slicing-by-4).
#[cfg_attr(not(any(test, target_family = "wasm")), allow(dead_code))]
fn crc32c_by_words(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        c = zero4(c ^ u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    }
    for &b in words.remainder() {
        c = (c >> 8) ^ ZERO4[0][((c ^ u32::from(b)) & 255) as usize];
    }
    !c
}

/// `p · x mod P` (reflected: a right shift, reducing the bit shifted out).
const fn mulx(p: u32) -> u32 {
    (p >> 1) ^ (POLY & 0u32.wrapping_sub(p & 1))
}

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

/// The byte tables of a reflected CRC-32C register, four bytes at a time:
/// `ZERO4[k][b]` is byte `b` followed by `k` zero bytes, as `crc0`.
static ZERO4: [[u32; 256]; 4] = ZERO4_TABLES;

/// [`ZERO4`]'s values, for the tables built from them at compile time.
const ZERO4_TABLES: [[u32; 256]; 4] = {
    let mut t = [[0u32; 256]; 4];
    let mut b = 0;
    while b < 256 {
        let mut c = b as u32;
        let mut i = 0;
        while i < 8 {
            c = mulx(c);
            i += 1;
        }
        t[0][b] = c;
        b += 1;
    }
    let mut k = 1;
    while k < 4 {
        let mut b = 0;
        while b < 256 {
            let c = t[k - 1][b];
            t[k][b] = (c >> 8) ^ t[0][(c & 255) as usize];
            b += 1;
        }
        k += 1;
    }
    t
};

/// `c · x^32 mod P`: four zero bytes through a register holding `c`, one
/// table lookup a byte, all four independent.
#[inline]
fn zero4(c: u32) -> u32 {
    ZERO4[3][(c & 255) as usize]
        ^ ZERO4[2][((c >> 8) & 255) as usize]
        ^ ZERO4[1][((c >> 16) & 255) as usize]
        ^ ZERO4[0][(c >> 24) as usize]
}

/// The carry-less product of `a` and `b` (degree at most 62), with
/// sixteen integer multiplications of their bits four apart (BearSSL's
/// technique): at most eight terms meet at a bit, so no carry reaches the
/// next bit kept. No table, no branch, and no carry-less multiply
/// instruction needed (WebAssembly has none).
#[inline]
fn clmul32(a: u32, b: u32) -> u64 {
    const M: [u64; 4] = [
        0x1111_1111_1111_1111,
        0x2222_2222_2222_2222,
        0x4444_4444_4444_4444,
        0x8888_8888_8888_8888,
    ];
    let (a, b) = (u64::from(a), u64::from(b));
    let [a0, a1, a2, a3] = M.map(|m| a & m);
    let [b0, b1, b2, b3] = M.map(|m| b & m);
    let m = u64::wrapping_mul;
    let z0 = m(a0, b0) ^ m(a1, b3) ^ m(a2, b2) ^ m(a3, b1);
    let z1 = m(a0, b1) ^ m(a1, b0) ^ m(a2, b3) ^ m(a3, b2);
    let z2 = m(a0, b2) ^ m(a1, b1) ^ m(a2, b0) ^ m(a3, b3);
    let z3 = m(a0, b3) ^ m(a1, b2) ^ m(a2, b1) ^ m(a3, b0);
    (z0 & M[0]) | (z1 & M[1]) | (z2 & M[2]) | (z3 & M[3])
}

/// `a · b mod P` in the reflected representation (bit 31 is x^0): the
/// carry-less product of the reflected values is the reflected product
/// shifted right by one; its low half (x^0..x^31) is kept as is and its
/// high half (x^32..x^63) reduced by four zero bytes.
#[inline]
fn multmodp(a: u32, b: u32) -> u32 {
    let r = clmul32(a, b) << 1;
    ((r >> 32) as u32) ^ zero4(r as u32)
}

/// Bits of a byte count that [`SHIFT_LOW`] takes in one multiplication:
/// a batch of up to 16 KiB (Kafka's default `batch.size`) is shifted by
/// one multiplication.
const LOW_BITS: u32 = 14;
/// Bits that [`SHIFT_MID`] takes: up to 16 MiB in two multiplications.
const MID_BITS: u32 = 10;

/// `x^(32 + 8·d)` for each low part `d` ([`LOW_BITS`] bits) of a byte
/// count; the `x^32` takes the changed bytes' `crc0` with it
/// ([`crc0_8_over_x32`]).
static SHIFT_LOW: [u32; 1 << LOW_BITS] = powers(X8, 1 << LOW_BITS, x32());

/// `x^(8·d·2^LOW_BITS)` for each middle part `d` ([`MID_BITS`] bits).
static SHIFT_MID: [u32; 1 << MID_BITS] = powers(x8_pow2(LOW_BITS), 1 << MID_BITS, 1 << 31);

/// `x^(8·d·2^(LOW_BITS + MID_BITS))` for each top byte `d`.
static SHIFT_TOP: [u32; 1 << (32 - LOW_BITS - MID_BITS)] = powers(
    x8_pow2(LOW_BITS + MID_BITS),
    1 << (32 - LOW_BITS - MID_BITS),
    1 << 31,
);

/// `x^32`.
const fn x32() -> u32 {
    multmodp_bits(X8, multmodp_bits(X8, multmodp_bits(X8, X8)))
}

/// `x^(8·2^k)`, by squaring.
const fn x8_pow2(k: u32) -> u32 {
    let mut p = X8;
    let mut i = 0;
    while i < k {
        p = multmodp_bits(p, p);
        i += 1;
    }
    p
}

/// `first · step^d` for each `d` below `N` (a step of `x^8` is one byte
/// through the register, by table).
const fn powers<const N: usize>(step: u32, n: usize, first: u32) -> [u32; N] {
    let mut t = [0u32; N];
    let mut p = first;
    let mut d = 0;
    while d < n && d < N {
        t[d] = p;
        p = if step == X8 {
            (p >> 8) ^ ZERO4_TABLES[0][(p & 255) as usize]
        } else {
            multmodp_bits(p, step)
        };
        d += 1;
    }
    t
}

/// `x^8` (bit 23 in the reflected representation): the step of the shift
/// tables.
const X8: u32 = 1 << 23;

/// `v · x^(32 + 8n) mod P`: appends `n` zero bytes to the `crc0` value
/// `v · x^32` (what [`crc0_8_over_x32`] gives), with the multiply `mul`
/// (by tables, or by the CPU's carry-less multiply: the same parts, so the
/// same value): one multiplication for each part of `n` that is not 0
/// but the low one, which always takes one.
#[inline(always)]
fn shift32(v: u32, n: u32, mul: impl Fn(u32, u32) -> u32) -> u32 {
    let mut v = mul(SHIFT_LOW[(n & ((1 << LOW_BITS) - 1)) as usize], v);
    let mid = (n >> LOW_BITS) & ((1 << MID_BITS) - 1);
    if mid != 0 {
        v = mul(SHIFT_MID[mid as usize], v);
    }
    let top = n >> (LOW_BITS + MID_BITS);
    if top != 0 {
        v = mul(SHIFT_TOP[top as usize], v);
    }
    v
}

/// `crc0` over `x^32` of the 8 bytes read little-endian as `word`: the two
/// words through the register but for the last four zero bytes, which
/// [`shift32`] multiplies in with the rest (`crc0 = zero4` of this), with
/// `zero4` by tables or by the CPU's CRC-32C instruction.
#[inline(always)]
fn crc0_8_over_x32(word: u64, zero4: impl Fn(u32) -> u32) -> u32 {
    zero4(word as u32) ^ (word >> 32) as u32
}

/// The patch's two primitives by x86-64 instructions: `zero4` is one
/// `CRC32` (SSE 4.2: the register through four zero bytes) and the
/// carry-less product one `PCLMULQDQ`. The broker module, built for
/// WebAssembly, has neither and keeps the tables.
#[cfg(target_arch = "x86_64")]
mod hardware {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_crc32_u32, _mm_cvtsi128_si64, _mm_cvtsi32_si128,
    };

    /// Whether this CPU has both instructions (detected once, then a load).
    #[inline]
    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("pclmulqdq") && std::is_x86_feature_detected!("sse4.2")
    }

    /// `c · x^32 mod P`, as [`super::zero4`].
    #[target_feature(enable = "sse4.2")]
    pub(super) fn zero4(c: u32) -> u32 {
        _mm_crc32_u32(c, 0)
    }

    /// `a · b mod P`, as [`super::multmodp`].
    #[target_feature(enable = "pclmulqdq,sse4.2")]
    pub(super) fn multmodp(a: u32, b: u32) -> u32 {
        let (a, b) = (_mm_cvtsi32_si128(a as i32), _mm_cvtsi32_si128(b as i32));
        let r = (_mm_cvtsi128_si64(_mm_clmulepi64_si128::<0>(a, b)) as u64) << 1;
        ((r >> 32) as u32) ^ zero4(r as u32)
    }

    /// [`super::Patch::new`] by instructions.
    #[target_feature(enable = "sse4.2")]
    pub(super) fn base(delta: u64) -> u32 {
        super::crc0_8_over_x32(delta, |c| zero4(c))
    }

    /// [`super::Patch::after`] by instructions: the same digits and tables
    /// of powers, so the same value.
    #[target_feature(enable = "pclmulqdq,sse4.2")]
    pub(super) fn shift(v: u32, bytes_after: u32) -> u32 {
        super::shift32(v, bytes_after, |a, b| multmodp(a, b))
    }
}

/// Whether this CPU runs the patch by instructions ([`hardware`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn by_instructions() -> bool {
    hardware::available()
}

/// The change of 8 bytes of a message, ready to patch its CRC wherever
/// they stand: what depends on the bytes is computed once here, and each
/// [`Patch::after`] only shifts it by the bytes after them. A run of one
/// producer's batches changes the same 8 bytes the same way in every
/// batch, so it computes this once for the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Patch {
    /// `crc0` of the XOR of old and new, over `x^32` ([`crc0_8_over_x32`]).
    base: u32,
}

impl Patch {
    /// The patch of `old` becoming `new` (8 bytes read in their order).
    #[inline]
    pub fn new(old: [u8; 8], new: [u8; 8]) -> Patch {
        let delta = u64::from_le_bytes(old) ^ u64::from_le_bytes(new);
        #[cfg(target_arch = "x86_64")]
        if by_instructions() {
            // SAFETY: the CPU has the instruction `hardware::base` is
            // compiled for; `by_instructions` asked it.
            return Patch {
                base: unsafe { hardware::base(delta) },
            };
        }
        Patch {
            base: crc0_8_over_x32(delta, zero4),
        }
    }

    /// What the CRC of the message changes by (XORed into it) when the
    /// bytes stand with `bytes_after` more bytes after them: 0 when old
    /// and new are equal.
    #[inline]
    pub fn after(self, bytes_after: u32) -> u32 {
        if self.base == 0 {
            return 0;
        }
        #[cfg(target_arch = "x86_64")]
        if by_instructions() {
            // SAFETY: as in `Patch::new`, for both instructions.
            return unsafe { hardware::shift(self.base, bytes_after) };
        }
        shift32(self.base, bytes_after, multmodp)
    }
}

#[cfg(test)]
mod tests;
