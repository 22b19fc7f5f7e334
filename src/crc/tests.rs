//! The patch against recomputed CRCs, the tables against the bit-by-bit
//! definition, and the x86-64 instructions against the tables.

use super::*;

#[test]
fn known_value() {
    assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    assert_eq!(crc32c_by_words(b"123456789"), 0xe306_9283);
}

#[test]
fn four_bytes_at_a_time_is_the_crate() {
    let msg: Vec<u8> = (0..1000u32).map(|i| (i * 151 % 253) as u8).collect();
    for start in 0..9 {
        for end in [start, start + 1, start + 3, start + 4, 100, 997, 1000] {
            let m = &msg[start..end];
            assert_eq!(crc32c_by_words(m), crc32c::crc32c(m), "{start}..{end}");
        }
    }
}

#[test]
fn the_multiply_is_the_bitwise_one() {
    let mut x = 0x1234_5678u32;
    for _ in 0..1000 {
        x = x.wrapping_mul(0x9e37_79b9).rotate_left(7) ^ 0x5bd1_e995;
        let y = x.rotate_left(13).wrapping_add(0x2545_f491);
        assert_eq!(multmodp(x, y), multmodp_bits(x, y), "{x:#x} {y:#x}");
    }
    // Where the most terms meet a bit: all ones.
    for (x, y) in [(!0, !0), (!0, 1 << 31), (1, 1), (0, !0), (!0, 0)] {
        assert_eq!(multmodp(x, y), multmodp_bits(x, y), "{x:#x} {y:#x}");
    }
}

/// `crc0` through the `crc32c` crate.
fn crc0(bytes: &[u8]) -> u32 {
    !crc32c::crc32c_append(!0, bytes)
}

#[test]
fn eight_bytes_through_the_register_are_their_crc0() {
    let mut x = 0x0123_4567_89ab_cdefu64;
    for _ in 0..1000 {
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0x5bd1_e995;
        let b = x.to_le_bytes();
        assert_eq!(zero4(crc0_8_over_x32(x, zero4)), crc0(&b), "{x:#x}");
    }
    assert_eq!(zero4(crc0_8_over_x32(!0, zero4)), crc0(&[0xff; 8]));
}

#[test]
fn shift_appends_zero_bytes() {
    let msg = *b"mirrorpi";
    let w = crc0_8_over_x32(u64::from_le_bytes(msg), zero4);
    let counts = [0u64, 1, 15, 16, 17, 255, 256, 4095, 4096, 65_537, 1 << 20];
    for n in counts.into_iter().chain([(1 << 21) - 1]) {
        let mut long = msg.to_vec();
        long.resize(8 + n as usize, 0);
        assert_eq!(shift32(w, n as u32, multmodp), crc0(&long), "n = {n}");
    }
    // Counts too large to build: against x^(32 + 8n) by squaring, with
    // the bitwise multiply.
    let pow_x8 = |mut n: u64| {
        let (mut r, mut base) = (1u32 << 31, X8);
        while n > 0 {
            if n & 1 == 1 {
                r = multmodp_bits(r, base);
            }
            base = multmodp_bits(base, base);
            n >>= 1;
        }
        r
    };
    for n in [
        0u64,
        300,
        70_000,
        123_456_789,
        (1 << 31) - 1,
        0x7654_3210,
        u32::MAX.into(),
    ] {
        let want = multmodp_bits(multmodp_bits(w, pow_x8(4)), pow_x8(n));
        assert_eq!(shift32(w, n as u32, multmodp), want, "n = {n}");
    }
}

/// The instructions' primitives and patch are the tables', bit for
/// bit. Every x86-64 CPU since 2010 has both instructions: one without
/// them fails here, so that the table path is not the one measured by
/// mistake.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_instructions_are_the_tables() {
    assert!(hardware::available(), "this CPU lacks PCLMULQDQ or SSE 4.2");
    let mut x = 0x0123_4567_89ab_cdefu64;
    let counts = [0u64, 1, 200, 255, 256, 1000, 16_323, 1 << 20, (1 << 31) - 1];
    for i in 0..2000u64 {
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) ^ 0x5bd1_e995;
        let (a, b) = (x as u32, (x >> 32) as u32);
        let n = counts[i as usize % counts.len()] ^ (i & 7);
        // SAFETY: the CPU has both instructions, asserted above.
        unsafe {
            assert_eq!(hardware::zero4(a), zero4(a), "{a:#x}");
            assert_eq!(hardware::multmodp(a, b), multmodp(a, b), "{a:#x} {b:#x}");
            let by_tables = shift32(crc0_8_over_x32(x, zero4), n as u32, multmodp);
            assert_eq!(
                hardware::shift(hardware::base(x), n as u32),
                by_tables,
                "{x:#x} {n}"
            );
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
        let after = (msg.len() - at - 8) as u32;
        assert_eq!(patch(before, &old, &new, after), crc32c(&msg), "at {at}");
        assert_eq!(
            patch_delta(&old, &new, after),
            before ^ crc32c(&msg),
            "at {at}"
        );
        assert_eq!(patch_delta(&new, &new, after), 0);
    }
}

/// The CRC-32C of a message after `old` is replaced by `new` at a place
/// followed by `bytes_after` more bytes, given the message's CRC `crc`.
///
/// Valid for any CRC-32C message, whatever bytes precede the patch.
fn patch(crc: u32, old: &[u8; 8], new: &[u8; 8], bytes_after: u32) -> u32 {
    crc ^ patch_delta(old, new, bytes_after)
}

/// What [`patch`] XORs into the CRC: the CRC's change when `old` becomes
/// `new` with `bytes_after` bytes after them (0 when they are equal). An
/// XOR commutes with byte order, so a CRC stored big-endian is patched by
/// XORing this one's big-endian bytes into its bytes, never decoding it.
fn patch_delta(old: &[u8; 8], new: &[u8; 8], bytes_after: u32) -> u32 {
    Patch::new(*old, *new).after(bytes_after)
}
