//! The binding table: every binding of one mapper in a `Vec`, plus hash
//! indexes by identity (source cluster, incoming PID) and by mapped PID.
//!
//! Its invariants are private to this file: each binding's position is in
//! both indexes exactly once under the hash of its key fields, and each
//! interned cluster name is in the name index once. Callers get positions
//! (`usize`), read bindings, and change only the fields that no index
//! depends on (last-seen time and flags).

use hashbrown::HashTable;

/// Flag: a `__mirror_state` record exists for the binding.
pub(crate) const RECORDED: u8 = 1;
/// Flag: a transaction of the producer is open.
pub(crate) const TXN_OPEN: u8 = 2;
/// Flag (in memory only): the open stage saved this binding's state.
pub(crate) const STAGE_SAVED: u8 = 4;
/// The flags a snapshot carries.
pub(crate) const PERSISTED_FLAGS: u8 = RECORDED | TXN_OPEN;
/// `last_seen` of a binding loaded from a record: unknown until the next
/// batch, or until an expiry pass starts its idle clock.
pub(crate) const UNKNOWN_LAST_SEEN: i64 = i64::MIN;

/// A host time as a last-seen time: the one value that means "unknown"
/// counts as the earliest real time instead.
pub(crate) fn seen_at(now_ms: i64) -> i64 {
    now_ms.max(UNKNOWN_LAST_SEEN + 1)
}

/// One binding: 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) pid: i64,
    pub(crate) mapped: i64,
    pub(crate) last_seen: i64,
    pub(crate) cluster: u32,
    pub(crate) salt: u8,
    pub(crate) flags: u8,
}

/// Bindings and cluster names with their indexes.
#[derive(Debug, Default)]
pub(crate) struct Table {
    clusters: Vec<String>,
    cluster_index: HashTable<u32>,
    bindings: Vec<Binding>,
    by_identity: HashTable<u32>,
    by_mapped: HashTable<u32>,
}

/// A folded 64x64->128 multiply: one multiplication, good avalanche.
fn fold(x: u64, k: u64) -> u64 {
    let p = u128::from(x) * u128::from(k);
    (p as u64) ^ ((p >> 64) as u64)
}

fn identity_hash(cluster: u32, pid: i64) -> u64 {
    fold(
        (pid as u64) ^ u64::from(cluster).rotate_left(40),
        0x9e37_79b9_7f4a_7c15,
    )
}

fn mapped_hash(mapped: i64) -> u64 {
    fold(mapped as u64, 0xd6e8_feb8_6659_fd93)
}

fn read8(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// Up to 7 bytes as a word (length in the top byte, so "a" and "a\0" differ).
fn read_tail(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    w[7] = b.len() as u8;
    u64::from_le_bytes(w)
}

fn read4(b: &[u8]) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[..4]);
    u64::from(u32::from_le_bytes(w))
}

/// Hash of a cluster ID, reading every byte. Names up to 16 bytes (the
/// usual case) are read as two overlapping words with no copy or loop, as
/// wyhash does; longer ones fold every 8-byte word, the last one
/// overlapping the one before.
fn name_hash(name: &str) -> u64 {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xd6e8_feb8_6659_fd93;
    let b = name.as_bytes();
    let n = b.len();
    let seed = (n as u64).wrapping_mul(K1);
    let (lo, hi) = if n > 16 {
        let mut h = seed;
        // Whole words up to the last 8 bytes, then the last 8 bytes: every
        // byte is read (the old loop skipped up to 7 before the tail).
        let body = &b[..n - 8];
        for c in body.chunks(8) {
            h = fold(h ^ if c.len() == 8 { read8(c) } else { read_tail(c) }, K1);
        }
        (h, read8(&b[n - 8..]))
    } else if n >= 8 {
        (read8(b), read8(&b[n - 8..]))
    } else if n >= 4 {
        (read4(b), read4(&b[n - 4..]))
    } else if n > 0 {
        (
            u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
            0,
        )
    } else {
        (0, 0)
    };
    fold(lo ^ K2, hi ^ seed ^ K1)
}

impl Table {
    pub(crate) fn with_capacity(clusters: usize, bindings: usize) -> Table {
        Table {
            clusters: Vec::with_capacity(clusters),
            cluster_index: HashTable::with_capacity(clusters),
            bindings: Vec::with_capacity(bindings),
            by_identity: HashTable::with_capacity(bindings),
            by_mapped: HashTable::with_capacity(bindings),
        }
    }

    /// Heap bytes held (bindings, indexes, cluster names).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bindings.capacity() * std::mem::size_of::<Binding>()
            + self.by_identity.allocation_size()
            + self.by_mapped.allocation_size()
            + self.cluster_index.allocation_size()
            + self.clusters.capacity() * std::mem::size_of::<String>()
            + self.clusters.iter().map(String::capacity).sum::<usize>()
    }

    // ---- cluster names ----

    /// Interned cluster names, by index.
    pub(crate) fn clusters(&self) -> &[String] {
        &self.clusters
    }

    pub(crate) fn cluster_name(&self, cluster: u32) -> &str {
        &self.clusters[cluster as usize]
    }

    #[inline]
    pub(crate) fn find_cluster(&self, name: &str) -> Option<u32> {
        self.cluster_index
            .find(name_hash(name), |&i| self.clusters[i as usize] == name)
            .copied()
    }

    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        if let Some(i) = self.find_cluster(name) {
            return i;
        }
        let idx = self.clusters.len() as u32;
        self.clusters.push(name.to_owned());
        let clusters = &self.clusters;
        self.cluster_index
            .insert_unique(name_hash(name), idx, |&i| name_hash(&clusters[i as usize]));
        idx
    }

    /// Forgets the names interned after the first `len`.
    pub(crate) fn truncate_clusters(&mut self, len: usize) {
        while self.clusters.len() > len {
            let idx = self.clusters.len() - 1;
            let h = name_hash(&self.clusters[idx]);
            if let Ok(entry) = self.cluster_index.find_entry(h, |&i| i as usize == idx) {
                entry.remove();
            }
            self.clusters.pop();
        }
    }

    // ---- bindings ----

    pub(crate) fn len(&self) -> usize {
        self.bindings.len()
    }

    pub(crate) fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    pub(crate) fn get(&self, idx: usize) -> &Binding {
        &self.bindings[idx]
    }

    /// Sets the fields no index depends on.
    pub(crate) fn set_state(&mut self, idx: usize, last_seen: i64, flags: u8) {
        let b = &mut self.bindings[idx];
        b.last_seen = last_seen;
        b.flags = flags;
    }

    #[inline]
    pub(crate) fn find_identity(&self, cluster: u32, pid: i64) -> Option<usize> {
        self.by_identity
            .find(identity_hash(cluster, pid), |&i| {
                let b = &self.bindings[i as usize];
                b.cluster == cluster && b.pid == pid
            })
            .map(|&i| i as usize)
    }

    /// Positions of the bindings holding `mapped`, in no particular order.
    pub(crate) fn holders_of(&self, mapped: i64) -> impl Iterator<Item = usize> + '_ {
        self.by_mapped
            .iter_hash(mapped_hash(mapped))
            .map(|&i| i as usize)
            .filter(move |&i| self.bindings[i].mapped == mapped)
    }

    /// Appends a binding; returns its position.
    pub(crate) fn insert(&mut self, b: Binding) -> usize {
        let idx = self.bindings.len();
        self.bindings.push(b);
        let bindings = &self.bindings;
        self.by_identity
            .insert_unique(identity_hash(b.cluster, b.pid), idx as u32, |&i| {
                let b = &bindings[i as usize];
                identity_hash(b.cluster, b.pid)
            });
        self.by_mapped
            .insert_unique(mapped_hash(b.mapped), idx as u32, |&i| {
                mapped_hash(bindings[i as usize].mapped)
            });
        idx
    }

    /// Removes the binding at `idx`; the last binding moves into its place.
    pub(crate) fn remove_at(&mut self, idx: usize) -> Binding {
        let b = self.bindings[idx];
        let last = self.bindings.len() - 1;
        let pos = idx as u32;
        if let Ok(e) = self
            .by_identity
            .find_entry(identity_hash(b.cluster, b.pid), |&i| i == pos)
        {
            e.remove();
        }
        if let Ok(e) = self
            .by_mapped
            .find_entry(mapped_hash(b.mapped), |&i| i == pos)
        {
            e.remove();
        }
        if idx != last {
            let moved = self.bindings[last];
            let from = last as u32;
            if let Some(slot) = self
                .by_identity
                .find_mut(identity_hash(moved.cluster, moved.pid), |&i| i == from)
            {
                *slot = pos;
            }
            if let Some(slot) = self
                .by_mapped
                .find_mut(mapped_hash(moved.mapped), |&i| i == from)
            {
                *slot = pos;
            }
        }
        self.bindings.swap_remove(idx)
    }

    /// Removes every binding after the first `len` (newest first).
    pub(crate) fn truncate(&mut self, len: usize) {
        while self.bindings.len() > len {
            self.remove_at(self.bindings.len() - 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::name_hash;

    #[test]
    fn the_name_hash_reads_every_byte() {
        // Names longer than 16 bytes that differ in one byte anywhere.
        for n in 17..64 {
            let base = vec![b'x'; n];
            let h = name_hash(std::str::from_utf8(&base).unwrap());
            for i in 0..n {
                let mut other = base.clone();
                other[i] = b'y';
                let o = name_hash(std::str::from_utf8(&other).unwrap());
                assert_ne!(h, o, "length {n}: byte {i} is not read");
            }
        }
    }
}
