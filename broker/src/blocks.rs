//! The blocks `mp_alloc` handed out, and the check that turns a host's
//! (pointer, length) into a slice of one of them: a pointer outside every
//! live block is `BadPointer`, never a trap and never a write to memory
//! the module did not hand out.

use crate::failure::{fail, Failure};
use mirrorpid::Code;

/// A map kept as a vector sorted by key, searched by bisection: the module
/// holds a few blocks.
pub(crate) struct Sorted<K, V>(pub(crate) Vec<(K, V)>);

/// Where `key` is in `entries` (sorted by key), or where it would go.
fn find<K: Ord + Copy, V>(entries: &[(K, V)], key: K) -> Result<usize, usize> {
    entries.binary_search_by(|(k, _)| k.cmp(&key))
}

/// The index of the entry of `entries` (sorted by key) with the greatest
/// key at or below `key`.
fn at_or_below<K: Ord + Copy, V>(entries: &[(K, V)], key: K) -> Option<usize> {
    match find(entries, key) {
        Ok(i) => Some(i),
        Err(i) => i.checked_sub(1),
    }
}

impl<K: Ord + Copy, V> Sorted<K, V> {
    /// An empty map (a constant, for the state's initial value).
    pub(crate) const EMPTY: Sorted<K, V> = Sorted(Vec::new());

    /// Where `key` is, or where it would go.
    pub(crate) fn find(&self, key: K) -> Result<usize, usize> {
        find(&self.0, key)
    }

    /// The index of the entry with the greatest key at or below `key`.
    pub(crate) fn at_or_below(&self, key: K) -> Option<usize> {
        at_or_below(&self.0, key)
    }

    /// Inserts a new key (an existing one's value is replaced); fails,
    /// changing nothing, when there is no memory for the entry.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Result<(), Failure> {
        match self.find(key) {
            Ok(i) => {
                if let Some(entry) = self.0.get_mut(i) {
                    entry.1 = value;
                }
            }
            Err(i) => {
                self.0
                    .try_reserve(1)
                    .map_err(|_| fail(Code::OutOfMemory, "no room to track one more"))?;
                // `find` puts a new key at most at the end.
                self.0.insert(i.min(self.0.len()), (key, value));
            }
        }
        Ok(())
    }

    /// Removes `key`'s entry; whether there was one. (`retain`, not
    /// `remove`: no index to assert on, so no panic in the module.)
    pub(crate) fn remove(&mut self, key: K) -> bool {
        let before = self.0.len();
        self.0.retain(|(k, _)| *k != key);
        self.0.len() != before
    }
}

/// The blocks `mp_alloc` handed out, by address.
pub(crate) type Blocks = Sorted<usize, Box<[u8]>>;

impl Blocks {
    /// The bytes [ptr, ptr+len) (any pointer when the length is 0).
    pub(crate) fn bytes(&self, ptr: usize, len: usize) -> Result<&[u8], Failure> {
        if len == 0 {
            return Ok(&[]);
        }
        let i = self.holding(ptr, len)?;
        self.0
            .get(i)
            .and_then(|b| within(b, ptr, len))
            .ok_or_else(|| bad_pointer(ptr, len))
    }

    /// [`Blocks::bytes`], trying block `hint` first and leaving there the
    /// block it found.
    #[inline(always)]
    pub(crate) fn bytes_from(
        &self,
        hint: &mut usize,
        ptr: usize,
        len: usize,
    ) -> Result<&[u8], Failure> {
        if let Some(bytes) = self.0.get(*hint).and_then(|b| within(b, ptr, len)) {
            return Ok(bytes);
        }
        self.bytes_into(hint, ptr, len)
    }

    /// [`Blocks::bytes_from`] when the hint missed.
    #[inline(never)]
    fn bytes_into(&self, hint: &mut usize, ptr: usize, len: usize) -> Result<&[u8], Failure> {
        if len == 0 {
            return Ok(&[]);
        }
        *hint = self.holding(ptr, len)?;
        self.bytes(ptr, len)
    }

    /// [`Blocks::bytes_from`], to write. The hinted block is checked once:
    /// the blocks are split around it, so that a miss looks among the
    /// others without borrowing the map again.
    #[inline(always)]
    pub(crate) fn bytes_mut_from(
        &mut self,
        hint: &mut usize,
        ptr: usize,
        len: usize,
    ) -> Result<&mut [u8], Failure> {
        // A stale hint past the end leaves every block below it.
        let at = (*hint).min(self.0.len());
        let (below, rest) = self.0.split_at_mut(at);
        let Some((hinted, above)) = rest.split_first_mut() else {
            return bytes_mut_in(below, 0, hint, ptr, len);
        };
        if ptr >= hinted.0 {
            if let Some(bytes) = within_mut(hinted, ptr, len) {
                return Ok(bytes);
            }
            let from = at + 1;
            return bytes_mut_in(above, from, hint, ptr, len);
        }
        if len == 0 {
            return Ok(&mut []);
        }
        bytes_mut_in(below, 0, hint, ptr, len)
    }

    /// The block holding all of the non-empty [ptr, ptr+len). Blocks never
    /// overlap, so it is the one that starts at or below `ptr`.
    #[inline(never)]
    fn holding(&self, ptr: usize, len: usize) -> Result<usize, Failure> {
        self.at_or_below(ptr)
            .filter(|&i| self.0.get(i).and_then(|b| within(b, ptr, len)).is_some())
            .ok_or_else(|| bad_pointer(ptr, len))
    }
}

/// The block of `blocks` (sorted by address; the first is block `first`
/// of the map) that holds [ptr, ptr+len), its index in the map left in
/// `hint` (any pointer when the length is 0).
#[inline(never)]
fn bytes_mut_in<'b>(
    blocks: &'b mut [(usize, Box<[u8]>)],
    first: usize,
    hint: &mut usize,
    ptr: usize,
    len: usize,
) -> Result<&'b mut [u8], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    // The block starting at or below `ptr` (blocks never overlap).
    let i = at_or_below(blocks, ptr);
    match i.and_then(|i| Some((i, within_mut(blocks.get_mut(i)?, ptr, len)?))) {
        Some((i, bytes)) => {
            *hint = first + i;
            Ok(bytes)
        }
        None => Err(bad_pointer(ptr, len)),
    }
}

/// The `len` bytes at `ptr` of the block at `start`, if it holds them.
#[inline(always)]
fn within((start, block): &(usize, Box<[u8]>), ptr: usize, len: usize) -> Option<&[u8]> {
    let off = ptr.checked_sub(*start)?;
    block.get(off..off.checked_add(len)?)
}

/// [`within`], to write.
#[inline(always)]
fn within_mut(
    (start, block): &mut (usize, Box<[u8]>),
    ptr: usize,
    len: usize,
) -> Option<&mut [u8]> {
    let off = ptr.checked_sub(*start)?;
    block.get_mut(off..off.checked_add(len)?)
}

/// The failure of a range outside every live block.
#[cold]
#[inline(never)]
pub(crate) fn bad_pointer(ptr: usize, len: usize) -> Failure {
    fail(
        Code::BadPointer,
        format_args!("[{ptr}, {ptr}+{len}) is not inside a block from mp_alloc"),
    )
}

/// The mappers by handle. Handles are given out in order from 1 and never
/// reused, so a handle is its slot's position past the first live one's:
/// finding a mapper is one subtraction and one bounds check. Freed slots
/// at the front are dropped; one held behind a long-lived mapper costs
/// a pointer until the mappers before it go.
pub(crate) struct Handles<T> {
    /// The handle of `slots[0]`.
    base: i32,
    slots: Vec<Option<Box<T>>>,
}

impl<T> Handles<T> {
    /// No mappers (a constant, for the state's initial value).
    pub(crate) const EMPTY: Handles<T> = Handles {
        base: 1,
        slots: Vec::new(),
    };

    /// The mapper of `handle`.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, handle: i32) -> Option<&mut T> {
        let i = handle.wrapping_sub(self.base) as u32 as usize;
        self.slots.get_mut(i)?.as_deref_mut()
    }

    /// Adds `value`; returns its handle, or `None` when every handle has
    /// been given out or there is no memory for one more.
    pub(crate) fn add(&mut self, value: T) -> Option<i32> {
        let handle = self
            .base
            .checked_add(i32::try_from(self.slots.len()).ok()?)?;
        self.slots.try_reserve(1).ok()?;
        self.slots.push(Some(Box::new(value)));
        Some(handle)
    }

    /// Removes the mapper of `handle`, returning it.
    pub(crate) fn remove(&mut self, handle: i32) -> Option<Box<T>> {
        let i = handle.wrapping_sub(self.base) as u32 as usize;
        let removed = self.slots.get_mut(i)?.take()?;
        // Drop the freed slots at the front (`retain`: nothing to index,
        // so no panic in the module).
        let before = self.slots.len();
        let mut live = false;
        self.slots.retain(|s| {
            live |= s.is_some();
            live
        });
        self.base += (before - self.slots.len()) as i32;
        Some(removed)
    }
}
