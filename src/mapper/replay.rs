//! What removes or replaces bindings: replaying `__mirror_state` records on
//! a new leader, and expiry. All of it is refused while bindings are
//! pending (see `stage.rs`).

use super::table::{Binding, RECORDED, TXN_OPEN, UNKNOWN_LAST_SEEN};
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
    /// Refused with [`Error::Unconfirmed`] while bindings are pending.
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
        let existing = cluster.and_then(|c| self.table.find_identity(c, pid));
        let Some(salt) = salt else {
            if let Some(idx) = existing {
                self.table.remove_at(idx);
            }
            return Ok(LoadOutcome::Deleted {
                existed: existing.is_some(),
            });
        };
        let mapped = pid::f_split(split, u64::from(salt));
        if let Some(idx) = existing {
            let b = *self.table.get(idx);
            if b.mapped == mapped {
                self.table.set_state(idx, b.last_seen, b.flags | RECORDED);
                return Ok(LoadOutcome::Bound {
                    mapped,
                    evicted: Vec::new(),
                });
            }
            self.table.remove_at(idx);
        }
        let mut conflicting: Vec<usize> = self
            .table
            .holders_of(mapped)
            .filter(|&i| !same_producer(cluster, pid, salt, self.table.get(i)))
            .collect();
        conflicting.sort_unstable_by(|a, b| b.cmp(a));
        let evicted = conflicting
            .into_iter()
            .map(|i| {
                let b = self.table.remove_at(i);
                (self.table.cluster_name(b.cluster).to_owned(), b.pid)
            })
            .collect();
        let cluster = self.table.intern(&key.source_cluster_id);
        self.table.insert(Binding {
            pid,
            mapped,
            last_seen: UNKNOWN_LAST_SEEN,
            cluster,
            salt,
            flags: RECORDED,
        });
        Ok(LoadOutcome::Bound { mapped, evicted })
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
        self.require_confirmed("expire")?;
        let limit = self.config.producer_expiration_ms;
        let mut dropped = Vec::new();
        for idx in (0..self.table.len()).rev() {
            let b = *self.table.get(idx);
            if b.last_seen == UNKNOWN_LAST_SEEN {
                self.table
                    .set_state(idx, super::table::seen_at(now_ms), b.flags);
            } else if b.flags & TXN_OPEN == 0 && now_ms.saturating_sub(b.last_seen) >= limit {
                dropped.push(self.table.remove_at(idx));
            }
        }
        dropped.reverse();
        Ok(self.tombstones(dropped))
    }

    /// Drops every binding holding `mapped` (the host's producer state
    /// expired it); returns tombstones for those that had records. Refused
    /// with [`Error::Unconfirmed`] while bindings are pending.
    pub fn expire_pid(&mut self, mapped: i64) -> Result<Vec<StateRecord>> {
        self.require_confirmed("expire_pid")?;
        let mut idxs: Vec<usize> = self.table.holders_of(mapped).collect();
        idxs.sort_unstable_by(|a, b| b.cmp(a));
        let dropped: Vec<Binding> = idxs.into_iter().map(|i| self.table.remove_at(i)).collect();
        Ok(self.tombstones(dropped))
    }

    fn tombstones(&self, dropped: Vec<Binding>) -> Vec<StateRecord> {
        dropped
            .into_iter()
            .filter(|b| b.flags & RECORDED != 0)
            .map(|b| {
                let source = self.table.cluster_name(b.cluster);
                StateRecord::tombstone(key(&self.config, source, b.pid))
            })
            .collect()
    }
}
