//! The identity index: each binding's position under the keyed hash of
//! its identity (source cluster, incoming PID), in an open-addressing
//! table probed linearly.
//!
//! It is the one lookup on the batch path, so it is built for the fewest
//! instructions a hit takes: a slot is a position (plus one; 0 is empty)
//! and nothing else, a probe is one load and the binding's two fields
//! compared, and the table is at most three quarters full, so a hit takes
//! about one probe and a half. That costs the same memory as a SwissTable
//! at seven eighths with its control bytes. Sources choose every key, so
//! the hash is keyed (`keyed.rs`): without the key, nobody can pick
//! identities that share a run of slots.

use std::collections::TryReserveError;

/// Positions by hash, with linear probing.
#[derive(Debug, Default)]
pub(super) struct Index {
    /// Each slot: a position plus one, or 0.
    slots: Vec<u32>,
    /// Occupied slots.
    len: usize,
}

impl Index {
    /// Slots a table of `n` entries needs: a power of two at most three
    /// quarters full.
    fn slots_for(n: usize) -> Option<usize> {
        n.checked_mul(4)
            .map(|x| x.div_ceil(3))
            .and_then(usize::checked_next_power_of_two)
            .map(|s| s.max(8))
    }

    /// The first slot to probe for `hash`.
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        // High bits: the keyed hashes mix best there.
        (hash >> 32) as usize & (self.slots.len().wrapping_sub(1))
    }

    /// Heap bytes held.
    pub(super) fn allocation_size(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<u32>()
    }

    /// Makes room for `additional` more entries, rehashing every entry
    /// with `hash_of` (a position's hash) when it grows, so that the
    /// inserts that follow cannot fail to allocate. Fails with nothing
    /// changed.
    pub(super) fn try_reserve(
        &mut self,
        additional: usize,
        hash_of: impl Fn(u32) -> u64,
    ) -> Result<(), TryReserveError> {
        let want = self.len.saturating_add(additional);
        let have = self.slots.len() / 4 * 3;
        if want <= have {
            return Ok(());
        }
        let n = Index::slots_for(want).unwrap_or(usize::MAX);
        let mut grown = Index {
            slots: Vec::new(),
            len: 0,
        };
        grown.slots.try_reserve_exact(n)?;
        grown.slots.resize(n, 0);
        for &e in &self.slots {
            if e != 0 {
                grown.insert_unique(hash_of(e - 1), e - 1);
            }
        }
        *self = grown;
        Ok(())
    }

    /// The first and last slots, combined: reading them brings the index
    /// of a small table into the cache.
    #[inline(always)]
    pub(super) fn ends(&self) -> u32 {
        self.slots.first().copied().unwrap_or(0) ^ self.slots.last().copied().unwrap_or(0)
    }

    /// The first `Some` that `f` makes of a position under `hash`.
    #[inline(always)]
    pub(super) fn find_map<T>(&self, hash: u64, mut f: impl FnMut(u32) -> Option<T>) -> Option<T> {
        let mask = self.slots.len().wrapping_sub(1);
        let mut i = self.home(hash);
        loop {
            match self.slots.get(i) {
                Some(&e) if e != 0 => {
                    if let Some(found) = f(e - 1) {
                        return Some(found);
                    }
                }
                _ => return None,
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `pos` under `hash`; the caller has made room
    /// ([`Index::try_reserve`]) and knows it is not there.
    pub(super) fn insert_unique(&mut self, hash: u64, pos: u32) {
        if self.len + 1 > self.slots.len() / 4 * 3 {
            // Room was reserved by every caller: this is never reached,
            // and without memory for it the entry is lost, not the call.
            crate::error::invariant_broken("an insert with no room reserved", &());
            return;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        while let Some(slot) = self.slots.get_mut(i) {
            if *slot == 0 {
                *slot = pos + 1;
                self.len += 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// The slot holding `pos`, which is under `hash`.
    fn slot_of(&self, hash: u64, pos: u32) -> Option<usize> {
        let mask = self.slots.len().wrapping_sub(1);
        let mut i = self.home(hash);
        loop {
            match self.slots.get(i) {
                Some(&e) if e == pos + 1 => return Some(i),
                Some(&e) if e != 0 => {}
                _ => return None,
            }
            i = (i + 1) & mask;
        }
    }

    /// Makes the entry of `from`, under `hash`, say `to` (a binding moved).
    pub(super) fn repoint(&mut self, hash: u64, from: u32, to: u32) {
        if let Some(i) = self.slot_of(hash, from) {
            if let Some(slot) = self.slots.get_mut(i) {
                *slot = to + 1;
            }
        }
    }

    /// Removes `pos`, under `hash`, moving the entries after it back into
    /// the gap wherever their probe allows (no tombstones: lookups stay as
    /// short as the load allows). `hash_of` gives a position's hash.
    pub(super) fn remove(&mut self, hash: u64, pos: u32, hash_of: impl Fn(u32) -> u64) {
        let Some(mut gap) = self.slot_of(hash, pos) else {
            return;
        };
        let mask = self.slots.len() - 1;
        let mut j = gap;
        loop {
            j = (j + 1) & mask;
            let Some(&e) = self.slots.get(j) else {
                break;
            };
            if e == 0 {
                break;
            }
            // The entry at j may fill the gap if its home is not in
            // (gap, j] (cyclically).
            let home = self.home(hash_of(e - 1));
            let between = if gap <= j {
                gap < home && home <= j
            } else {
                gap < home || home <= j
            };
            if !between {
                if let Some(slot) = self.slots.get_mut(gap) {
                    *slot = e;
                }
                gap = j;
            }
        }
        if let Some(slot) = self.slots.get_mut(gap) {
            *slot = 0;
        }
        self.len -= 1;
    }

    /// Removes every entry, keeping the slots.
    pub(super) fn clear(&mut self) {
        self.slots.fill(0);
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Index;

    /// A scrambled hash, with collisions on purpose (every tenth key
    /// shares its home with the one before).
    fn hash(k: u32) -> u64 {
        let k = u64::from(k - k % 10 % 2);
        k.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17) << 3
    }

    #[test]
    fn finds_what_was_inserted_and_not_what_was_removed() {
        let mut index = Index::default();
        let mut present = vec![false; 5000];
        let keys = |k: u32| k;
        for k in 0..5000u32 {
            index.try_reserve(1, |p| hash(keys(p))).unwrap();
            index.insert_unique(hash(k), k);
            present[k as usize] = true;
            if k % 3 == 0 && k > 0 {
                // Remove an earlier one; the positions here are the keys.
                let r = k / 2;
                if present[r as usize] {
                    index.remove(hash(r), r, hash);
                    present[r as usize] = false;
                }
            }
        }
        for k in 0..5000u32 {
            let found = index.find_map(hash(k), |p| (p == k).then_some(p));
            assert_eq!(found.is_some(), present[k as usize], "key {k}");
        }
        assert!(index.slots.len() / 4 * 3 >= index.len);
    }

    #[test]
    fn repointing_moves_an_entry() {
        let mut index = Index::default();
        index.try_reserve(2, hash).unwrap();
        index.insert_unique(hash(7), 7);
        index.repoint(hash(7), 7, 3);
        assert_eq!(index.find_map(hash(7), |p| (p == 3).then_some(p)), Some(3));
        assert_eq!(index.find_map(hash(7), |p| (p == 7).then_some(p)), None);
    }
}
