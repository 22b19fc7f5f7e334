//! A vector in fixed-size chunks: the binding table's storage.
//!
//! A `Vec` that outgrows its capacity copies itself to a new, larger
//! block: for a moment both are live, and afterwards the old block is a
//! hole that only smaller allocations can use. At 10 M bindings that is a
//! copy of 320 MB inside one call, and in WebAssembly, whose memory never
//! shrinks, the module keeps the peak (83 bytes of linear memory per
//! producer where the mapper held 54). Here the elements live in chunks of
//! [`CHUNK`] that never move: growing adds a chunk (128 KiB), which fits the
//! holes the hash indexes leave when they double. The first chunk grows
//! like a `Vec` up to [`CHUNK`], so a small mapper stays small.
//!
//! Capacity is never given back (as a `Vec`'s is not when it is popped):
//! what [`Chunked::try_reserve`] made room for stays there, so the pushes
//! a caller reserved for cannot fail to allocate.

use std::collections::TryReserveError;

/// log2 of [`CHUNK`].
const SHIFT: u32 = 12;
/// Elements a chunk holds (4096: 128 KiB of 32-byte bindings).
pub(crate) const CHUNK: usize = 1 << SHIFT;

/// A vector in chunks of [`CHUNK`] elements that never move.
#[derive(Debug, Clone)]
pub(crate) struct Chunked<T> {
    /// The first chunk, held here rather than in `rest`: a lookup in a
    /// table of at most [`CHUNK`] elements (every partition of a few
    /// producers) then reads no list of chunks first, which is one memory
    /// access less that a broker cycling through thousands of partitions
    /// finds outside its caches.
    first: Vec<T>,
    /// Chunks 1, 2, …. Every chunk before the one holding index `len` is
    /// full; chunks past it are empty, with room reserved.
    rest: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            first: Vec::new(),
            rest: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy> Chunked<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Elements it can hold without allocating.
    pub(crate) fn capacity(&self) -> usize {
        // (An unreserved push may have grown the first past CHUNK.)
        self.first.capacity().min(CHUNK) + self.rest.len() * CHUNK
    }

    /// Makes room for `additional` more elements, so that that many
    /// [`Chunked::push`]es do not allocate. Fails with nothing lost (room
    /// made before the failure stays).
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), TryReserveError> {
        let want = self.len.saturating_add(additional);
        if want <= self.capacity() {
            return Ok(());
        }
        // The first chunk grows like a vector up to CHUNK: doubling from 4
        // up to 64, so that a partition of a few producers holds room for
        // about that many (a broker holds thousands of them), then by a
        // quarter.
        let cap = self.first.capacity();
        if cap < CHUNK {
            let grown = if cap < 64 {
                (cap * 2).max(4)
            } else {
                cap + cap / 4 + 64
            };
            let target = want.max(grown).min(CHUNK);
            self.first
                .try_reserve_exact(target.saturating_sub(self.first.len()))?;
        }
        let rest = want.div_ceil(CHUNK).saturating_sub(1);
        if rest > self.rest.len() {
            self.rest.try_reserve_exact(rest - self.rest.len())?;
            while self.rest.len() < rest {
                let mut chunk = Vec::new();
                chunk.try_reserve_exact(CHUNK)?;
                self.rest.push(chunk);
            }
        }
        Ok(())
    }

    /// Appends `v`; allocates (infallibly) only when no room was reserved.
    pub(crate) fn push(&mut self, v: T) {
        let c = self.len >> SHIFT;
        if c == 0 {
            self.first.push(v);
            self.len += 1;
            return;
        }
        if c - 1 == self.rest.len() {
            self.rest.push(Vec::with_capacity(CHUNK));
        }
        // The chunk is there: every chunk up to the length's is.
        if let Some(chunk) = self.rest.get_mut(c - 1) {
            chunk.push(v);
            self.len += 1;
        }
    }

    /// The first chunk's elements.
    #[inline(always)]
    pub(crate) fn first(&self) -> &[T] {
        &self.first
    }

    /// Element `i`, or `None` past the end (the chunks' own bounds: a
    /// chunk holds elements only up to the length).
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i < CHUNK {
            return self.first.get(i);
        }
        self.rest.get((i >> SHIFT) - 1)?.get(i & (CHUNK - 1))
    }

    /// Element `i`, to change, or `None` past the end.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i < CHUNK {
            return self.first.get_mut(i);
        }
        self.rest
            .get_mut((i >> SHIFT) - 1)?
            .get_mut(i & (CHUNK - 1))
    }

    /// Removes element `i`, moving the last one into its place; `None`
    /// (and nothing removed) past the end.
    pub(crate) fn swap_remove(&mut self, i: usize) -> Option<T> {
        if i >= self.len {
            return None;
        }
        let last = self.len - 1;
        let moved = match last >> SHIFT {
            0 => self.first.pop()?,
            c => self.rest.get_mut(c - 1)?.pop()?,
        };
        self.len = last;
        if i == last {
            Some(moved)
        } else {
            self.get_mut(i).map(|at| std::mem::replace(at, moved))
        }
    }

    /// Heap bytes held: the chunks' capacity and the list of all but the
    /// first.
    pub(crate) fn heap_bytes(&self) -> usize {
        let elements = self.first.capacity() + self.rest.iter().map(Vec::capacity).sum::<usize>();
        elements * std::mem::size_of::<T>() + self.rest.capacity() * std::mem::size_of::<Vec<T>>()
    }

    /// The elements in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.first.iter().chain(self.rest.iter().flatten())
    }

    /// The elements in order, to change.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        self.first.iter_mut().chain(self.rest.iter_mut().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes, swap-removes and reserves agree with a `Vec` doing the same,
    /// across chunk boundaries, and reserved room is never reallocated.
    #[test]
    fn behaves_as_a_vec() {
        let mut c = Chunked::default();
        let mut v = Vec::new();
        let mut x = 1u64;
        for step in 0..60_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x >> 62 == 0 && !v.is_empty() {
                let i = (x >> 20) as usize % v.len();
                assert_eq!(c.swap_remove(i), Some(v.swap_remove(i)));
            } else {
                c.try_reserve(1).unwrap();
                let cap = c.capacity();
                c.push(step);
                v.push(step);
                assert_eq!(c.capacity(), cap, "a reserved push does not allocate");
            }
            assert_eq!(c.len(), v.len());
        }
        assert!(c.len() > 3 * CHUNK, "the test crosses chunks");
        assert!(c.iter().eq(v.iter()));
        for i in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, v.len() - 1] {
            assert_eq!(c.get(i), Some(&v[i]));
        }
        for e in c.iter_mut() {
            *e += 1;
        }
        assert!(c.iter().copied().eq(v.iter().map(|e| e + 1)));
    }

    /// A small table holds about what it needs; a large one at most one
    /// chunk more, and its chunks never move.
    #[test]
    fn capacity_follows_length() {
        let mut c = Chunked::<usize>::default();
        c.try_reserve(10).unwrap();
        assert!((10..=CHUNK / 8).contains(&c.capacity()), "{}", c.capacity());
        for i in 0..10 * CHUNK + 7 {
            c.try_reserve(1).unwrap();
            c.push(i);
        }
        let first = c.get(CHUNK).unwrap() as *const usize;
        c.try_reserve(5 * CHUNK).unwrap();
        assert_eq!(c.capacity(), 16 * CHUNK);
        assert_eq!(
            c.get(CHUNK).unwrap() as *const usize,
            first,
            "chunks do not move"
        );
        let mut fresh = Chunked::<u8>::default();
        fresh.try_reserve(10 * CHUNK + 7).unwrap();
        assert_eq!(fresh.capacity(), 11 * CHUNK);
    }

    #[test]
    fn past_the_end_is_none_even_with_room_reserved() {
        let mut c = Chunked::<u8>::default();
        c.try_reserve(3 * CHUNK).unwrap();
        for i in 0..3u8 {
            c.push(i);
        }
        assert_eq!(c.get(2), Some(&2));
        for i in [3, CHUNK - 1, CHUNK + 1, usize::MAX] {
            assert_eq!(c.get(i), None);
            assert_eq!(c.get_mut(i), None);
            assert_eq!(c.swap_remove(i), None);
        }
        assert_eq!(c.len(), 3, "nothing removed past the end");
        assert_eq!(Chunked::<u8>::default().swap_remove(0), None);
    }
}
