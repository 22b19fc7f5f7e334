//! The keyed hashes of the binding table's indexes. Every key that reaches
//! them is chosen by a source cluster, so each table hashes with secret
//! keys of its own ([`Keys`]), drawn from the operating system's randomness
//! or, in WebAssembly, from the seed the host passes ([`seed_hashing`]): a
//! source cannot pick PIDs or cluster IDs that share buckets without
//! knowing them. No output depends on the keys, only the speed.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::vec::{word4, word8};

/// The instance-wide seed that [`seed_hashing`] sets.
static SEED: AtomicU64 = AtomicU64::new(0);
/// Tables made so far: each gets its own keys from the seed.
static TABLES: AtomicU64 = AtomicU64::new(0);

broker_api! {
    /// Seeds the hash keys of every mapper made or restored after this call.
    ///
    /// Natively the keys already come from the operating system's randomness
    /// (as `std`'s `HashMap` does), and the seed is mixed in. A WebAssembly
    /// instance has no randomness of its own: its host passes 64 random bits
    /// here once (`mp_hash_seed` in the broker ABI; the JS package does it from
    /// `Math.random` itself). Without a seed the keys are fixed, and a source
    /// that knows them could slow lookups down (never change a result).
    pub fn seed_hashing(seed: u64) {
        SEED.store(splitmix(seed ^ 0x6a09_e667_f3bc_c908), Ordering::Relaxed);
    }
}

/// SplitMix64's finaliser: every input bit reaches every output bit.
fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Randomness from the operating system, where there is one.
#[cfg(not(target_family = "wasm"))]
fn os_entropy() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64)
}

#[cfg(target_family = "wasm")]
fn os_entropy() -> u64 {
    0
}

/// The secret keys of one table's hashes (foldhash's construction: the
/// key is XORed in before a folded multiply by a second key).
#[derive(Debug, Clone, Copy)]
pub(super) struct Keys {
    identity: (u64, u64),
    mapped: (u64, u64),
    name: (u64, u64),
}

impl Keys {
    pub(super) fn fresh() -> Keys {
        let n = TABLES.fetch_add(1, Ordering::Relaxed);
        let mut state = SEED.load(Ordering::Relaxed) ^ os_entropy() ^ n.wrapping_mul(K1);
        let mut next = || {
            state = state.wrapping_add(K1);
            splitmix(state)
        };
        // The multiplier is odd and has both halves populated, so the
        // product of a folded multiply never collapses to few bits.
        let mut pair = || (next(), next() | 1 << 63 | 1);
        Keys {
            identity: pair(),
            mapped: pair(),
            name: pair(),
        }
    }
}

const K1: u64 = 0x9e37_79b9_7f4a_7c15;
const K2: u64 = 0xd6e8_feb8_6659_fd93;

/// A folded 64x64->128 multiply: one multiplication, good avalanche
/// (in WebAssembly, [`fold_halves`]).
#[inline(always)]
fn fold(x: u64, k: u64) -> u64 {
    if cfg!(target_family = "wasm") {
        fold_halves(x, k)
    } else {
        let p = u128::from(x) * u128::from(k);
        (p as u64) ^ ((p >> 64) as u64)
    }
}

/// [`fold`] for WebAssembly, which has no 64 × 64 → 128-bit multiply: a
/// `u128` product there is a call to `__multi3` passing its result through
/// memory (and LLVM recognises the exact high-half computation from 32-bit
/// halves and makes it that call again). This mixes the four 32 × 32-bit
/// products instead, the two cross products swapped in halves, so every
/// output bit still depends on every input and key bit. Not the same
/// values as `fold`, which nothing observes: index hashes are never stored
/// and no result depends on an index's order.
#[inline(always)]
fn fold_halves(x: u64, k: u64) -> u64 {
    const LOW: u64 = 0xffff_ffff;
    let (xl, xh, kl, kh) = (x & LOW, x >> 32, k & LOW, k >> 32);
    (xl * kl) ^ (xh * kh) ^ ((xl * kh) ^ (xh * kl)).rotate_left(32)
}

#[inline(always)]
pub(super) fn identity_hash(k: &Keys, cluster: u32, pid: u64) -> u64 {
    fold(
        pid ^ u64::from(cluster).rotate_left(40) ^ k.identity.0,
        k.identity.1,
    )
}

pub(super) fn mapped_hash(k: &Keys, mapped: u64) -> u64 {
    fold(mapped ^ k.mapped.0, k.mapped.1)
}

/// Up to 7 bytes as a word (length in the top byte, so "a" and "a\0" differ).
fn read_tail(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    w[7] = b.len() as u8;
    u64::from_le_bytes(w)
}

/// Hash of a cluster ID, reading every byte. Names up to 16 bytes (the
/// usual case) are read as two overlapping words with no copy or loop, as
/// wyhash does; longer ones fold every 8-byte word, the last one
/// overlapping the one before.
pub(super) fn name_hash(k: &Keys, name: &str) -> u64 {
    let b = name.as_bytes();
    let n = b.len();
    let seed = (n as u64).wrapping_mul(K1) ^ k.name.0;
    let (lo, hi) = if n > 16 {
        let mut h = seed;
        // Whole words up to the last 8 bytes, then the last 8 bytes: every
        // byte is read, so names that differ anywhere hash apart.
        let body = &b[..n - 8];
        for c in body.chunks(8) {
            h = fold(
                h ^ if c.len() == 8 {
                    word8(c, 0)
                } else {
                    read_tail(c)
                },
                k.name.1,
            );
        }
        (h, word8(b, n - 8))
    } else if n >= 8 {
        (word8(b, 0), word8(b, n - 8))
    } else if n >= 4 {
        (u64::from(word4(b, 0)), u64::from(word4(b, n - 4)))
    } else if n > 0 {
        (
            u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
            0,
        )
    } else {
        (0, 0)
    };
    fold(lo ^ K2 ^ k.name.1, hi ^ seed ^ K1)
}

/// Whether two cluster IDs are equal, a word at a time
/// ([`crate::vec::same_bytes`]).
#[inline]
pub(super) fn same_name(a: &str, b: &str) -> bool {
    crate::vec::same_bytes(a.as_bytes(), b.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::{name_hash, Keys};

    #[test]
    fn names_are_equal_exactly_when_their_bytes_are() {
        let names = [
            "",
            "a",
            "ab",
            "abcd",
            "abcde",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "bbcd",
            "abcdefgi",
            "abcdefghijklmnoq",
        ];
        for a in names {
            for b in names {
                assert_eq!(super::same_name(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn the_wasm_fold_depends_on_every_bit_of_input_and_key() {
        // Flipping any one bit of x or of k changes about half the output
        // bits (at least 8 of 64 in every case here).
        let mut x = 0x0123_4567_89ab_cdefu64;
        for _ in 0..200 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23) ^ 0x5bd1_e995;
            let k = x.rotate_left(31) ^ 0x2545_f491_4f6c_dd1d | 1 | 1 << 32;
            let h = super::fold_halves(x, k);
            for bit in 0..64 {
                let dx = (h ^ super::fold_halves(x ^ 1 << bit, k)).count_ones();
                let dk = (h ^ super::fold_halves(x, k ^ 1 << bit)).count_ones();
                assert!(dx >= 8 && dk >= 8, "{x:#x} {k:#x} bit {bit}: {dx} {dk}");
            }
        }
    }

    #[test]
    fn the_name_hash_reads_every_byte() {
        // Names longer than 16 bytes that differ in one byte anywhere.
        for n in 17..64 {
            let base = vec![b'x'; n];
            let k = Keys::fresh();
            let h = name_hash(&k, std::str::from_utf8(&base).unwrap());
            for i in 0..n {
                let mut other = base.clone();
                other[i] = b'y';
                let o = name_hash(&k, std::str::from_utf8(&other).unwrap());
                assert_ne!(h, o, "length {n}: byte {i} is not read");
            }
        }
    }
}
