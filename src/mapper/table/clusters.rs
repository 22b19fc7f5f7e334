//! The table's cluster names: interned once each, found by a name index
//! or where a [`crate::KnownSource`] found them last, counted by the
//! bindings that use them, and compacted when enough go unused. Part of the
//! table, its invariants with it (`mod.rs`).

use super::*;

impl Table {
    /// Interned cluster names, by index (names no binding uses included
    /// until [`Table::compact_clusters`]).
    pub(crate) fn clusters(&self) -> &[String] {
        &self.clusters
    }

    /// Whether any binding uses the name at `cluster`.
    pub(crate) fn cluster_used(&self, cluster: u32) -> bool {
        self.cluster_refs
            .get(cluster as usize)
            .is_some_and(|&r| r > 0)
    }

    /// Names bound by at least one binding, and their bytes.
    pub(crate) fn live_clusters(&self) -> (usize, usize) {
        let unused_bytes: usize = if self.unused_clusters == 0 {
            0
        } else {
            self.clusters
                .iter()
                .zip(&self.cluster_refs)
                .filter(|(_, &r)| r == 0)
                .map(|(n, _)| n.len())
                .sum()
        };
        (
            self.clusters.len() - self.unused_clusters,
            self.name_bytes - unused_bytes,
        )
    }

    /// The name at `cluster` (empty for a number no name has, which a
    /// binding's never is).
    pub(crate) fn cluster_name(&self, cluster: u32) -> &str {
        match self.clusters.get(cluster as usize) {
            Some(name) => name,
            None => invariant_broken("a cluster number without a name", ""),
        }
    }

    /// The cluster of `source`: where its [`super::KnownSource`] found it
    /// when the clusters have not changed since, else looked up (and kept
    /// there).
    #[inline(always)]
    pub(crate) fn find_source(&self, source: Source<'_>) -> Option<u32> {
        let known = match source {
            Source::Id(id) => return self.find_cluster(id),
            Source::Known(known) => known,
        };
        let found = known.found().get();
        if found.version == self.version {
            return (found.cluster != Found::NONE).then_some(found.cluster);
        }
        self.find_and_keep(known.as_str(), known.found())
    }

    /// [`Table::find_source`] when the clusters changed.
    #[inline(never)]
    fn find_and_keep(&self, name: &str, known: &std::cell::Cell<Found>) -> Option<u32> {
        let cluster = self.find_cluster(name);
        known.set(Found {
            version: self.version,
            cluster: cluster.unwrap_or(Found::NONE),
        });
        cluster
    }

    #[inline]
    pub(crate) fn find_cluster(&self, name: &str) -> Option<u32> {
        let recent = self.recent.get();
        if self
            .clusters
            .get(recent as usize)
            .is_some_and(|n| same_name(n, name))
        {
            return Some(recent);
        }
        self.find_cluster_indexed(name)
    }

    /// [`Table::find_cluster`] by the index, remembering what it finds.
    #[inline(never)]
    fn find_cluster_indexed(&self, name: &str) -> Option<u32> {
        let found = self
            .cluster_index
            .find(name_hash(&self.keys, name), |&i| {
                self.clusters
                    .get(i as usize)
                    .is_some_and(|n| same_name(n, name))
            })
            .copied()?;
        self.recent.set(found);
        Some(found)
    }

    /// The index of `name`, interning it (with no binding yet) if new. The
    /// caller has made room with [`Table::reserve`].
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        if let Some(i) = self.find_cluster(name) {
            return i;
        }
        let idx = self.clusters.len() as u32;
        self.version = next_version();
        self.clusters.push(name.to_owned());
        self.cluster_refs.push(0);
        self.unused_clusters += 1;
        self.name_bytes += name.len();
        let (k, clusters) = (&self.keys, &self.clusters);
        self.cluster_index.insert_unique(
            name_hash(k, name),
            idx,
            rehash(&|&i| name_hash_at(k, clusters, i)),
        );
        idx
    }

    /// Forgets the names interned after the first `len` (no binding uses
    /// them any more: a rollback removed those bindings first).
    pub(crate) fn truncate_clusters(&mut self, len: usize) {
        if self.clusters.len() > len {
            self.version = next_version();
        }
        while self.clusters.len() > len {
            let idx = self.clusters.len() - 1;
            debug_assert_eq!(self.cluster_refs.get(idx), Some(&0));
            let h = name_hash_at(&self.keys, &self.clusters, idx as u32);
            if let Ok(entry) = self.cluster_index.find_entry(h, |&i| i as usize == idx) {
                entry.remove();
            }
            self.unused_clusters -= 1;
            if let Some(name) = self.clusters.pop() {
                self.name_bytes -= name.len();
            }
            self.cluster_refs.pop();
        }
    }

    /// Whether enough names are unused that [`Table::compact_clusters`]
    /// pays for its pass over the bindings (at least half of them).
    pub(crate) fn worth_compacting(&self) -> bool {
        self.unused_clusters > 0 && self.unused_clusters * 2 >= self.clusters.len()
    }

    /// Frees every name no binding uses: the remaining names keep their
    /// order, bindings are renumbered, and the indexes rebuilt. Only when no
    /// savepoint is open (it would remember positions). Costs one pass over
    /// the bindings. Without memory for the renumbering (4 bytes a name)
    /// it leaves the names as they are.
    pub(crate) fn compact_clusters(&mut self) {
        if self.unused_clusters == 0 {
            return;
        }
        let mut renumber = Vec::new();
        if renumber.try_reserve_exact(self.clusters.len()).is_err() {
            return;
        }
        self.version = next_version();
        renumber.resize(self.clusters.len(), u32::MAX);
        let mut kept = 0u32;
        for (new, &refs) in renumber.iter_mut().zip(&self.cluster_refs) {
            if refs > 0 {
                *new = kept;
                kept += 1;
            }
        }
        // In place, in order: nothing to allocate.
        let mut used = self.cluster_refs.iter().map(|&r| r > 0);
        self.clusters.retain(|_| used.next().unwrap_or(false));
        self.cluster_refs.retain(|&r| r > 0);
        self.clusters.shrink_to_fit();
        self.cluster_refs.shrink_to_fit();
        self.name_bytes = self.clusters.iter().map(String::len).sum();
        self.unused_clusters = 0;
        for b in self.bindings.iter_mut() {
            b.cluster = renumber
                .get(b.cluster as usize)
                .copied()
                .unwrap_or(u32::MAX);
        }
        let k = self.keys;
        self.cluster_index.clear();
        for (i, name) in self.clusters.iter().enumerate() {
            let clusters = &self.clusters;
            self.cluster_index.insert_unique(
                name_hash(&k, name),
                i as u32,
                rehash(&|&j| name_hash_at(&k, clusters, j)),
            );
        }
        self.by_identity.clear();
        for (i, b) in self.bindings.iter().enumerate() {
            self.by_identity
                .insert_unique(identity_hash(&k, b.cluster, b.pid.word()), i as u32);
        }
    }
}
