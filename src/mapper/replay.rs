//! What removes or replaces bindings: replaying `__mirror_state` records on
//! a new leader, and expiry. All of it is refused while bindings are
//! pending (see `stage.rs`).

use super::table::{Binding, Wire, RECORDED, TXN_OPEN, UNKNOWN_LAST_SEEN};
use super::{key, same_producer, LoadOutcome, Mapper, SourceCluster};
use crate::error::{Error, Result};
use crate::pid::{self, MAX_PROBES};
use crate::record::StateRecord;

impl Mapper {
    /// Applies one `__mirror_state` record, as a new leader does while
    /// replaying the topic in log order.
    ///
    /// Records of other partitions are skipped. A value binds the identity
    /// with the record's salt, replacing any binding it had; holders of that
    /// slot that are not the same producer are evicted, since the record is
    /// newer than any snapshot that put them there. A tombstone unbinds.
    /// A bound record that contradicts the trust declaration is loaded and
    /// reported (`undeclared`).
    ///
    /// The record is judged before the mapper's state: one that could
    /// never load (an empty source, a PID that is no producer's, a salt
    /// out of range) fails with its own error, a record of another
    /// partition is skipped, and only then is a well-formed record of this
    /// partition refused with [`Error::Unconfirmed`] while bindings are
    /// pending.
    pub fn load_record(&mut self, record: &StateRecord) -> Result<LoadOutcome> {
        let key = &record.key;
        SourceCluster::new(&key.source_cluster_id)?;
        if key.topic_id != self.config.topic_id || key.partition != self.config.partition {
            return Ok(LoadOutcome::Skipped);
        }
        let pid = key.original_pid;
        let split = match pid::split(&key.source_cluster_id, pid) {
            Ok(Some(split)) => split,
            _ => return Err(Error::InvalidRecordPid { pid }),
        };
        let salt = match &record.value {
            None => None,
            Some(value) => Some(
                u8::try_from(value.salt)
                    .ok()
                    .filter(|s| *s < MAX_PROBES)
                    .ok_or(Error::InvalidSalt { salt: value.salt })?,
            ),
        };
        self.require_confirmed("load_record")?;
        let cluster = self.table.find_cluster(&key.source_cluster_id);
        let existing = cluster.and_then(|c| self.table.find_identity(c, Wire::of(pid)));
        let Some(salt) = salt else {
            if let Some(idx) = existing {
                self.table.remove_at(idx);
                self.free_unused_clusters(false);
            }
            return Ok(LoadOutcome::Deleted {
                existed: existing.is_some(),
            });
        };
        if existing.is_none() {
            // Before any change: a record that cannot be held changes nothing.
            self.make_room(cluster, &key.source_cluster_id)?;
        }
        let mapped = pid::f_split(split, u64::from(salt));
        let undeclared = self.undeclared(&key.source_cluster_id, split.origin);
        if let Some(idx) = existing {
            let b = *self.table.get(idx);
            if b.mapped.value() == mapped {
                self.table.set_state(idx, b.last_seen, b.flags | RECORDED);
                return Ok(LoadOutcome::Bound {
                    mapped,
                    evicted: Vec::new(),
                    undeclared,
                });
            }
            self.table.remove_at(idx);
        }
        let mut conflicting: Vec<usize> = self
            .table
            .holders_of(Wire::of(mapped))
            .filter(|&i| !same_producer(cluster, pid, salt, self.table.get(i)))
            .collect();
        // Descending, so removing one never moves another.
        super::heapsort_by(&mut conflicting, |a, b| a > b);
        let evicted = conflicting
            .into_iter()
            .filter_map(|i| {
                let b = self.table.remove_at(i)?;
                Some((self.table.cluster_name(b.cluster).to_owned(), b.pid.value()))
            })
            .collect();
        let cluster = self.table.intern(&key.source_cluster_id);
        self.table.insert(Binding {
            pid: Wire::of(pid),
            mapped: Wire::of(mapped),
            last_seen: UNKNOWN_LAST_SEEN,
            cluster,
            salt,
            flags: RECORDED,
        });
        self.free_unused_clusters(false);
        Ok(LoadOutcome::Bound {
            mapped,
            evicted,
            undeclared,
        })
    }

    /// Drops every binding idle for at least `producerExpirationMs` with no
    /// open transaction, freeing its slot; returns a tombstone for each one
    /// that had a record, in storage order.
    ///
    /// A binding loaded from a record has no known last-seen time: the first
    /// expiry pass starts its idle clock at `now_ms` instead of dropping it,
    /// so a leader change never expires a producer that is still active.
    /// Refused with [`Error::Unconfirmed`] while bindings are pending.
    pub fn expire(&mut self, now_ms: i64) -> Result<Vec<StateRecord>> {
        self.expire_then(now_ms, |_| Ok(()))
    }

    /// [`Mapper::expire`], running `then` on the tombstones before anything
    /// is dropped: if `then` fails, the call fails with its error and
    /// changes nothing (a host writes them where it persists, as the broker
    /// module writes its output there).
    pub fn expire_then(
        &mut self,
        now_ms: i64,
        then: impl FnOnce(&[StateRecord]) -> Result<()>,
    ) -> Result<Vec<StateRecord>> {
        self.require_confirmed("expire")?;
        let limit = self.config.producer_expiration_ms;
        let is_expired = |b: &Binding| {
            b.last_seen != UNKNOWN_LAST_SEEN
                && b.flags & TXN_OPEN == 0
                && now_ms.saturating_sub(b.last_seen) >= limit
        };
        // Counted first, so that the list is one fallible allocation.
        let n = self
            .table
            .first(self.table.len())
            .filter(|b| is_expired(b))
            .count();
        let mut expired = Vec::new();
        expired
            .try_reserve_exact(n)
            .map_err(|_| crate::vec::out_of_memory("the expiry list"))?;
        expired.extend((0..self.table.len()).filter(|&i| is_expired(self.table.get(i))));
        self.drop_then(expired, true, then, |m| {
            for idx in 0..m.table.len() {
                let b = *m.table.get(idx);
                if b.last_seen == UNKNOWN_LAST_SEEN {
                    m.table
                        .set_state(idx, super::table::seen_at(now_ms), b.flags);
                }
            }
        })
    }

    /// Drops every binding holding `mapped` (the host's producer state
    /// expired it); returns tombstones for those that had records. Refused
    /// with [`Error::Unconfirmed`] while bindings are pending.
    pub fn expire_pid(&mut self, mapped: i64) -> Result<Vec<StateRecord>> {
        self.expire_pid_then(mapped, |_| Ok(()))
    }

    /// [`Mapper::expire_pid`], running `then` on the tombstones first, as
    /// [`Mapper::expire_then`] does.
    pub fn expire_pid_then(
        &mut self,
        mapped: i64,
        then: impl FnOnce(&[StateRecord]) -> Result<()>,
    ) -> Result<Vec<StateRecord>> {
        self.require_confirmed("expire_pid")?;
        let mut idxs: Vec<usize> = self.table.holders_of(Wire::of(mapped)).collect();
        super::heapsort(&mut idxs);
        self.drop_then(idxs, false, then, |_| {})
    }

    /// Drops the bindings at `idxs` (ascending) once `then` accepted their
    /// tombstones, after `also` (the rest of the call's changes); frees
    /// unused cluster IDs `always` or when worth it.
    fn drop_then(
        &mut self,
        idxs: Vec<usize>,
        always: bool,
        then: impl FnOnce(&[StateRecord]) -> Result<()>,
        also: impl FnOnce(&mut Mapper),
    ) -> Result<Vec<StateRecord>> {
        let tombstones = self.tombstones(&idxs)?;
        then(&tombstones)?;
        also(self);
        for &idx in idxs.iter().rev() {
            self.table.remove_at(idx);
        }
        self.free_unused_clusters(always);
        Ok(tombstones)
    }

    /// Tombstones for the bindings at `idxs` that have records, in order.
    fn tombstones(&self, idxs: &[usize]) -> Result<Vec<StateRecord>> {
        let recorded = idxs
            .iter()
            .filter(|&&i| self.table.get(i).flags & RECORDED != 0)
            .count();
        let mut out = Vec::new();
        out.try_reserve_exact(recorded)
            .map_err(|_| crate::vec::out_of_memory("tombstones"))?;
        for &idx in idxs {
            let b = self.table.get(idx);
            if b.flags & RECORDED != 0 {
                let source = self.table.cluster_name(b.cluster);
                out.push(StateRecord::tombstone(key(
                    &self.config,
                    source,
                    b.pid.value(),
                )));
            }
        }
        Ok(out)
    }

    /// Frees the cluster IDs no binding uses any more: always after an
    /// expiry pass (which visits every binding anyway), and elsewhere once
    /// at least half the names are unused, so that replaying tombstones
    /// stays linear. Only with no binding pending (the callers refuse to
    /// run otherwise), since pending bindings' savepoints remember names by
    /// position.
    fn free_unused_clusters(&mut self, always: bool) {
        debug_assert_eq!(self.pending(), 0);
        if always || self.table.worth_compacting() {
            self.table.compact_clusters();
        }
    }
}
