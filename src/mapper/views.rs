//! What callers read of a mapper: a binding by identity, every binding,
//! the holders of a mapped PID, each as a [`BindingView`].

use super::table::Wire;
use super::{heapsort_by, BindingView, Mapper, RECORDED, TXN_OPEN, UNKNOWN_LAST_SEEN};

impl Mapper {
    /// The binding of an identity, if bound.
    pub fn lookup(&self, source_cluster_id: &str, pid: i64) -> Option<BindingView<'_>> {
        let cluster = self.table.find_cluster(source_cluster_id)?;
        let idx = self.table.find_identity(cluster, Wire::of(pid))?;
        Some(self.view(idx))
    }

    /// Every binding, in storage order.
    pub fn bindings(&self) -> impl Iterator<Item = BindingView<'_>> + '_ {
        (0..self.table.len()).map(|i| self.view(i))
    }

    /// The identities holding `mapped` (more than one when the same upstream
    /// producer reaches this partition by several paths), ordered by source
    /// cluster ID and PID, the same on every engine.
    pub fn holders(&self, mapped: i64) -> Vec<BindingView<'_>> {
        let mut out: Vec<_> = self
            .table
            .holders_of(Wire::of(mapped))
            .map(|i| self.view(i))
            .collect();
        heapsort_by(&mut out, |a, b| {
            (a.source_cluster_id, a.pid) < (b.source_cluster_id, b.pid)
        });
        out
    }

    fn view(&self, idx: usize) -> BindingView<'_> {
        let b = self.table.get(idx);
        BindingView {
            source_cluster_id: self.table.cluster_name(b.cluster),
            pid: b.pid.value(),
            mapped: b.mapped.value(),
            salt: b.salt,
            last_seen_ms: (b.last_seen != UNKNOWN_LAST_SEEN).then_some(b.last_seen),
            transaction_open: b.flags & TXN_OPEN != 0,
            recorded: b.flags & RECORDED != 0,
            pending: self.stage.as_ref().is_some_and(|s| idx >= s.start()),
        }
    }
}
