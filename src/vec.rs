//! Slice helpers for code the broker module runs, which reaches no panic
//! (`docs/RELIABILITY.md`): `Vec::insert` and `Vec::remove` without their
//! index assertions, whose panic paths the module's build test refuses (a
//! push or a pop and a rotation of the tail), and a byte comparison that
//! needs no `memcmp`.

/// Whether `a` and `b` hold the same bytes, compared a word at a time (the
/// last word overlapping the one before it). Slice equality is a call of
/// `memcmp`, which WebAssembly runs a byte at a time, where a 22-byte
/// cluster ID (Kafka's) is three words here.
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // From 8 to 24 bytes (Kafka's cluster IDs are 22): three words that
    // overlap where they must, straight-line.
    if (8..=24).contains(&n) {
        let mid = (n - 8).min(8);
        return word8(a, 0) == word8(b, 0)
            && word8(a, mid) == word8(b, mid)
            && word8(a, n - 8) == word8(b, n - 8);
    }
    same_bytes_any(a, b)
}

/// [`same_bytes`] of any length.
#[inline(never)]
fn same_bytes_any(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        if n >= 4 {
            return word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4);
        }
        return (0..n).all(|i| a.get(i) == b.get(i));
    }
    let mut i = 0;
    while i + 8 < n {
        if word8(a, i) != word8(b, i) {
            return false;
        }
        i += 8;
    }
    word8(a, n - 8) == word8(b, n - 8)
}

/// The 8 bytes at `i` as a little-endian word (0 past the end, which
/// [`same_bytes`] and the mapper's name hash never read).
#[inline(always)]
pub(crate) fn word8(s: &[u8], i: usize) -> u64 {
    s.get(i..)
        .and_then(<[u8]>::first_chunk::<8>)
        .map_or(0, |w| u64::from_le_bytes(*w))
}

/// The 4 bytes at `i` as a word, as [`word8`].
#[inline(always)]
pub(crate) fn word4(s: &[u8], i: usize) -> u32 {
    s.get(i..)
        .and_then(<[u8]>::first_chunk::<4>)
        .map_or(0, |w| u32::from_le_bytes(*w))
}

/// Inserts `x` at position `i`, shifting the elements from there up; at
/// the end when `i` is past it.
pub fn insert_at<T>(v: &mut Vec<T>, i: usize, x: T) {
    v.push(x);
    match v.get_mut(i..) {
        Some(tail) if !tail.is_empty() => tail.rotate_right(1),
        _ => {}
    }
}

/// An allocation failure as the error every call returns for it.
pub(crate) fn out_of_memory(what: &'static str) -> crate::Error {
    crate::Error::OutOfMemory { what }
}

/// Makes room in `v` for `n` more elements, or [`Error::OutOfMemory`]
/// naming `what`. Inline, and a call only when there is no room: the
/// batch path asks for room for one element per batch.
#[inline(always)]
pub(crate) fn room<T>(v: &mut Vec<T>, n: usize, what: &'static str) -> crate::Result<()> {
    if v.capacity() - v.len() < n {
        return grow(v, n, what);
    }
    Ok(())
}

/// [`room`] when there is none: out of line, so that a function asking
/// for room holds only the check (a JVM compiling the module to bytecode
/// inlines less into a larger method).
#[cold]
#[inline(never)]
fn grow<T>(v: &mut Vec<T>, n: usize, what: &'static str) -> crate::Result<()> {
    v.try_reserve(n).map_err(|_| out_of_memory(what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_is_slice_equality() {
        let base: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        for n in 0..=base.len() {
            let a = &base[..n];
            assert!(same_bytes(a, a), "{n} bytes");
            let mut b = a.to_vec();
            for at in 0..n {
                b[at] ^= 1 << (at % 8);
                assert!(!same_bytes(a, &b), "{n} bytes, byte {at} differs");
                b[at] = a[at];
            }
            assert!(same_bytes(a, &b), "{n} bytes, restored");
            if n > 1 {
                assert!(
                    !same_bytes(a, &base[..n - 1]),
                    "{n} against {} bytes",
                    n - 1
                );
                assert!(
                    !same_bytes(&base[1..n], &base[..n - 1]),
                    "{n} bytes, shifted"
                );
            }
        }
    }

    #[test]
    fn it_is_vec_insert() {
        for len in 0..5usize {
            for i in 0..=len {
                let mut a: Vec<usize> = (0..len).collect();
                let mut b = a.clone();
                insert_at(&mut a, i, 99);
                b.insert(i, 99);
                assert_eq!(a, b, "insert at {i} of {len}");
            }
            let mut a: Vec<usize> = (0..len).collect();
            insert_at(&mut a, len + 3, 7);
            assert_eq!(a.last(), Some(&7), "past the end: at the end");
        }
    }
}
