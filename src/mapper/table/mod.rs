//! The binding table: every binding of one mapper in insertion order (in
//! chunks that never move, `chunked.rs`), plus hash indexes by identity
//! (source cluster, incoming PID) and by mapped PID.
//!
//! Its invariants are private to this file: each binding's position is in
//! both indexes exactly once under the hash of its key fields, each
//! interned cluster name is in the name index once, and each name counts
//! the bindings that use it. Callers get positions (`usize`), read
//! bindings, and change only the fields that no index depends on
//! (last-seen time and flags).
//!
//! The indexes hash with keys secret to each table (`keyed.rs`), since
//! sources choose every key. No output depends on them: storage is in
//! insertion order, and every list a caller sees is read from it or sorted.

use hashbrown::HashTable;

mod clusters;

use super::chunked::Chunked;
use super::index::Index;
use super::keyed::{identity_hash, mapped_hash, name_hash, same_name, Keys};
use super::source::{Found, Source};

pub(crate) use super::binding::*;
use crate::error::{invariant_broken, Result};
use crate::vec::out_of_memory;

/// A rehash function as one type: every index grows through the same
/// instance of hashbrown's rehash code, where a distinct closure type per
/// call site would be one more copy of it in the module each (growth is
/// rare, and a dynamic call there costs nothing that counts).
type Rehash<'a> = &'a dyn Fn(&u32) -> u64;

fn rehash<'a>(f: Rehash<'a>) -> Rehash<'a> {
    f
}

/// The hash of the name at `i` (0 for a number no name has).
fn name_hash_at(k: &Keys, names: &[String], i: u32) -> u64 {
    names.get(i as usize).map_or(0, |n| name_hash(k, n))
}

/// The identity hash of the binding at `i` (0 past the end).
fn identity_hash_at(k: &Keys, all: &Chunked<Binding>, i: u32) -> u64 {
    all.get(i as usize)
        .map_or(0, |b| identity_hash(k, b.cluster, b.pid.word()))
}

/// The mapped-PID hash of the binding at `i` (0 past the end).
fn mapped_hash_at(k: &Keys, all: &Chunked<Binding>, i: u32) -> u64 {
    all.get(i as usize)
        .map_or(0, |b| mapped_hash(k, b.mapped.word()))
}

/// Bindings and cluster names with their indexes.
#[derive(Debug)]
pub(crate) struct Table {
    keys: Keys,
    clusters: Vec<String>,
    /// For each cluster name, how many bindings use it.
    cluster_refs: Vec<u32>,
    /// Bytes of all cluster names held (unused ones included).
    name_bytes: usize,
    /// Names no binding uses any more, waiting for [`Table::compact_clusters`].
    unused_clusters: usize,
    cluster_index: HashTable<u32>,
    /// The index the last successful [`Table::find_cluster`] returned: a
    /// caller mapping many PIDs of one source finds it with one string
    /// comparison instead of a hash and a probe. Always checked against the
    /// name, so it is never wrong, only sometimes useless. One, not a few:
    /// names chosen to compare equal for long would make every miss cost
    /// several long comparisons.
    recent: std::cell::Cell<u32>,
    /// The clusters' version: new for every table and every change of its
    /// cluster numbers, so that where a [`super::KnownSource`] was found
    /// stays right while it is the same.
    version: u64,
    bindings: Chunked<Binding>,
    by_identity: Index,
    by_mapped: HashTable<u32>,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            keys: Keys::fresh(),
            clusters: Vec::new(),
            cluster_refs: Vec::new(),
            name_bytes: 0,
            unused_clusters: 0,
            cluster_index: HashTable::new(),
            recent: std::cell::Cell::new(u32::MAX),
            version: next_version(),
            bindings: Chunked::default(),
            by_identity: Index::default(),
            by_mapped: HashTable::new(),
        }
    }
}

/// A clusters' version no table has had (from 1: a [`Found`] of version 0
/// was found in none).
fn next_version() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static VERSIONS: AtomicU64 = AtomicU64::new(1);
    VERSIONS.fetch_add(1, Ordering::Relaxed)
}

impl Table {
    /// A table with room for `clusters` names and `bindings` bindings, or
    /// [`crate::Error::OutOfMemory`].
    pub(crate) fn with_capacity(clusters: usize, bindings: usize) -> Result<Table> {
        let mut t = Table::default();
        t.reserve(clusters, bindings)?;
        Ok(t)
    }

    /// Makes room for `clusters` more names and `bindings` more bindings,
    /// so that the inserts that follow cannot fail to allocate; the one
    /// place a table grows. [`crate::Error::OutOfMemory`] if memory ran out.
    pub(crate) fn reserve(&mut self, clusters: usize, bindings: usize) -> Result<()> {
        let oom = |_| out_of_memory("the binding table");
        if clusters > 0 {
            self.clusters.try_reserve(clusters).map_err(oom)?;
            self.cluster_refs.try_reserve(clusters).map_err(oom)?;
            let (k, names) = (&self.keys, &self.clusters);
            self.cluster_index
                .try_reserve(clusters, rehash(&|&i| name_hash_at(k, names, i)))
                .map_err(|_| out_of_memory("the binding table"))?;
        }
        if bindings > 0 {
            // In chunks that never move (`chunked.rs`): no copy of the
            // table, no spare quarter of it, and no hole left behind.
            self.bindings.try_reserve(bindings).map_err(oom)?;
            let (k, all) = (&self.keys, &self.bindings);
            self.by_identity
                .try_reserve(bindings, |i| identity_hash_at(k, all, i))
                .map_err(oom)?;
            self.by_mapped
                .try_reserve(bindings, rehash(&|&i| mapped_hash_at(k, all, i)))
                .map_err(|_| out_of_memory("the binding table"))?;
        }
        Ok(())
    }

    /// Heap bytes held (bindings, indexes, cluster names).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bindings.heap_bytes()
            + self.by_identity.allocation_size()
            + self.by_mapped.allocation_size()
            + self.cluster_index.allocation_size()
            + self.clusters.capacity() * std::mem::size_of::<String>()
            + self.cluster_refs.capacity() * std::mem::size_of::<u32>()
            + self.clusters.iter().map(String::capacity).sum::<usize>()
    }

    // ---- bindings ----

    pub(crate) fn len(&self) -> usize {
        self.bindings.len()
    }

    /// The first `n` (at most [`Table::len`]) bindings, in order.
    pub(crate) fn first(&self, n: usize) -> impl ExactSizeIterator<Item = &Binding> + Clone + '_ {
        (0..n.min(self.len())).map(move |i| self.get(i))
    }

    /// The binding at `idx`, which the caller found in this table (past
    /// the end, [`Binding::VACANT`]).
    #[inline(always)]
    pub(crate) fn get(&self, idx: usize) -> &Binding {
        match self.bindings.get(idx) {
            Some(b) => b,
            None => invariant_broken("a binding past the end", &Binding::VACANT),
        }
    }

    /// The binding at `idx`, to change only the fields no index depends
    /// on (its last-seen time and flags), if there is one.
    #[inline(always)]
    pub(crate) fn state_mut(&mut self, idx: usize) -> Option<&mut Binding> {
        self.bindings.get_mut(idx)
    }

    /// Sets the fields no index depends on.
    pub(crate) fn set_state(&mut self, idx: usize, last_seen: i64, flags: u8) {
        if let Some(b) = self.bindings.get_mut(idx) {
            b.last_seen = last_seen;
            b.flags = flags;
        }
    }

    /// Reads the identity index's ends and one word of every 64 bytes of
    /// the first `n` bindings, none of the reads waiting for another.
    /// A broker cycling through thousands of partitions finds a mapper's
    /// table outside its caches; the lookups that follow each wait for a
    /// read of their own, one after another, while these all go to memory
    /// at once and leave the lines in the cache.
    #[inline(always)]
    pub(crate) fn warm(&self, n: usize) {
        let first = self.bindings.first();
        let mut acc = self.by_identity.ends();
        let mut i = 0;
        while i < n && i < first.len() {
            if let Some(b) = first.get(i) {
                acc ^= b.cluster;
            }
            i += 2;
        }
        std::hint::black_box(acc);
    }

    /// The position of the binding of (`cluster`, `pid`), if bound: the
    /// batch path's keyed lookup. Out of line in the module: it keeps the
    /// batch loop a method a JVM's JIT compiles whole.
    #[cfg_attr(not(target_family = "wasm"), inline(always))]
    #[cfg_attr(target_family = "wasm", inline(never))]
    pub(crate) fn find_identity(&self, cluster: u32, pid: Wire) -> Option<usize> {
        self.by_identity
            .find_map(identity_hash(&self.keys, cluster, pid.word()), |i| {
                let b = self.bindings.get(i as usize)?;
                (b.pid == pid && b.cluster == cluster).then_some(i as usize)
            })
    }

    /// Positions of the bindings holding `mapped`, in no particular order.
    pub(crate) fn holders_of(&self, mapped: Wire) -> impl Iterator<Item = usize> + '_ {
        self.by_mapped
            .iter_hash(mapped_hash(&self.keys, mapped.word()))
            .map(|&i| i as usize)
            .filter(move |&i| self.bindings.get(i).is_some_and(|b| b.mapped == mapped))
    }

    /// Appends a binding; returns its position. The caller has made room
    /// with [`Table::reserve`] (otherwise a full table grows infallibly).
    pub(crate) fn insert(&mut self, b: Binding) -> usize {
        let idx = self.bindings.len();
        self.bindings.push(b);
        if let Some(refs) = self.cluster_refs.get_mut(b.cluster as usize) {
            if *refs == 0 {
                self.unused_clusters -= 1;
            }
            *refs += 1;
        }
        let (k, bindings) = (&self.keys, &self.bindings);
        self.by_identity
            .insert_unique(identity_hash(k, b.cluster, b.pid.word()), idx as u32);
        self.by_mapped.insert_unique(
            mapped_hash(k, b.mapped.word()),
            idx as u32,
            rehash(&|&i| mapped_hash_at(k, bindings, i)),
        );
        idx
    }

    /// Removes the binding at `idx`; the last binding moves into its place.
    /// `None`, and nothing changed, past the end.
    pub(crate) fn remove_at(&mut self, idx: usize) -> Option<Binding> {
        let k = self.keys;
        let b = *self.bindings.get(idx)?;
        let last = self.bindings.len() - 1;
        let pos = idx as u32;
        let all = &self.bindings;
        self.by_identity
            .remove(identity_hash(&k, b.cluster, b.pid.word()), pos, |i| {
                identity_hash_at(&k, all, i)
            });
        if let Ok(e) = self
            .by_mapped
            .find_entry(mapped_hash(&k, b.mapped.word()), |&i| i == pos)
        {
            e.remove();
        }
        if let Some(&moved) = self.bindings.get(last).filter(|_| idx != last) {
            let from = last as u32;
            self.by_identity.repoint(
                identity_hash(&k, moved.cluster, moved.pid.word()),
                from,
                pos,
            );
            if let Some(slot) = self
                .by_mapped
                .find_mut(mapped_hash(&k, moved.mapped.word()), |&i| i == from)
            {
                *slot = pos;
            }
        }
        if let Some(refs) = self.cluster_refs.get_mut(b.cluster as usize) {
            *refs -= 1;
            if *refs == 0 {
                self.unused_clusters += 1;
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
