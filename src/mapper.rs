//! The mapper of one destination partition (SPEC §4–5).
//!
//! It holds the *origins map*: identity (direct source cluster, incoming PID)
//! → (mapped PID, salt), and mapped PID → the identities holding it. Mapping
//! an identity is, in order: (1) already bound → the same PID, always;
//! (2) bound from a loaded `__mirror_state` record → that record's salt, no
//! probing; (3) probe salt 0, 1, … 63 and take the first slot that is free or
//! held only by the same producer.
//!
//! Storage is one `Vec` of 32-byte bindings plus two hash indexes of `u32`
//! positions into it, about 54 bytes per bound producer (SPEC §11 asks ≤ 64;
//! `docs/PERFORMANCE.md` has the measurement).

use hashbrown::HashTable;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::pid::{self, Split, MAX_PROBES};
use crate::record::{StateKey, StateRecord, StateValue};
use crate::topic::TopicId;

/// Kafka's default `producer.id.expiration.ms` (one day).
pub const DEFAULT_PRODUCER_EXPIRATION_MS: i64 = 86_400_000;

/// Which bindings yield `__mirror_state` records (SPEC §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Every new binding yields a record: replaying the compacted topic
    /// rebuilds the whole origins map. The default.
    #[default]
    Bindings,
    /// Only salted bindings yield records (the seed design); salt-0
    /// bindings survive a leader change only through snapshots.
    Collisions,
}

/// What a mapper is for and how it behaves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MapperConfig {
    /// The destination topic.
    pub topic_id: TopicId,
    /// The destination partition.
    pub partition: i32,
    /// Which bindings yield records.
    #[serde(default)]
    pub durability: Durability,
    /// Idle time after which [`Mapper::expire`] drops a binding.
    #[serde(default = "default_expiration", with = "crate::json::i64_str")]
    pub producer_expiration_ms: i64,
}

fn default_expiration() -> i64 {
    DEFAULT_PRODUCER_EXPIRATION_MS
}

impl MapperConfig {
    /// A config with the default durability and expiration.
    pub fn new(topic_id: TopicId, partition: i32) -> MapperConfig {
        MapperConfig {
            topic_id,
            partition,
            durability: Durability::Bindings,
            producer_expiration_ms: DEFAULT_PRODUCER_EXPIRATION_MS,
        }
    }

    /// Parses the JSON form (`{"topicId", "partition", "durability"?,
    /// "producerExpirationMs"?}`) and validates it.
    pub fn from_json(text: &str) -> Result<MapperConfig> {
        let config: MapperConfig = serde_json::from_str(text)
            .map_err(|e| Error::invalid(format!("mapper config: {e}")))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks the values a JSON or JS caller may get wrong.
    pub fn validate(&self) -> Result<()> {
        if self.partition < 0 {
            return Err(Error::invalid(format!(
                "mapper config: partition {} is negative",
                self.partition
            )));
        }
        if self.producer_expiration_ms <= 0 {
            return Err(Error::invalid(format!(
                "mapper config: producerExpirationMs {} must be positive",
                self.producer_expiration_ms
            )));
        }
        Ok(())
    }
}

/// A collision: the identity did not get its salt-0 slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collision {
    /// Source cluster of the holder of the salt-0 slot.
    pub colliding_cluster_id: String,
}

/// The result of mapping one PID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapOutcome {
    /// The PID as it arrived.
    pub pid: i64,
    /// The PID to write (equal to `pid` for a non-producer).
    pub mapped: i64,
    /// The salt of the binding; `None` for a non-producer.
    pub salt: Option<u8>,
    /// Set when this call made a salted binding.
    pub collision: Option<Collision>,
    /// The `__mirror_state` record this call produced, if any (boxed: most
    /// calls hit a bound identity and produce none, and keeping the outcome
    /// small keeps that path fast).
    pub record: Option<Box<StateRecord>>,
    /// Set with a collision: the host should snapshot its producer state.
    pub snapshot_required: bool,
}

impl MapOutcome {
    fn passthrough(pid: i64) -> MapOutcome {
        MapOutcome {
            pid,
            mapped: pid,
            salt: None,
            collision: None,
            record: None,
            snapshot_required: false,
        }
    }
}

/// What [`Mapper::load_record`] did with a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    /// The record is for another partition or topic; nothing changed.
    Skipped,
    /// The identity is bound to `mapped`. `evicted` lists identities whose
    /// binding the record overrode (a stale snapshot's view).
    Bound {
        /// The mapped PID.
        mapped: i64,
        /// Identities removed because the record's slot was theirs.
        evicted: Vec<(String, i64)>,
    },
    /// A tombstone; `existed` tells whether a binding was removed.
    Deleted {
        /// Whether the identity was bound.
        existed: bool,
    },
}

/// One binding of the origins map, as callers see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingView<'a> {
    /// The direct source cluster.
    pub source_cluster_id: &'a str,
    /// The incoming PID.
    #[serde(with = "crate::json::i64_str")]
    pub pid: i64,
    /// The mapped PID.
    #[serde(with = "crate::json::i64_str")]
    pub mapped: i64,
    /// The salt.
    pub salt: u8,
    /// Last time a batch of this producer was seen (`None` after a replay,
    /// until the next batch or expiry pass).
    #[serde(with = "crate::json::opt_i64_str")]
    pub last_seen_ms: Option<i64>,
    /// Whether a transaction is open.
    pub transaction_open: bool,
    /// Whether a `__mirror_state` record exists for it.
    pub recorded: bool,
}

pub(crate) const RECORDED: u8 = 1;
pub(crate) const TXN_OPEN: u8 = 2;
/// `last_seen` of a binding loaded from a record: unknown until the next
/// batch, or until an expiry pass starts its idle clock.
pub(crate) const UNKNOWN_LAST_SEEN: i64 = i64::MIN;

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

/// What a batch-set rewrite changed, so that a failure can undo it.
#[derive(Debug)]
struct Journal {
    bindings_len: usize,
    clusters_len: usize,
    touched: Vec<(u32, i64, u8)>,
}

/// The mapper of one destination partition.
#[derive(Debug)]
pub struct Mapper {
    pub(crate) config: MapperConfig,
    pub(crate) clusters: Vec<String>,
    cluster_index: HashTable<u32>,
    pub(crate) bindings: Vec<Binding>,
    by_identity: HashTable<u32>,
    by_mapped: HashTable<u32>,
    journal: Option<Journal>,
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

fn read4(b: &[u8]) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[..4]);
    u64::from(u32::from_le_bytes(w))
}

/// Hash of a cluster ID. Names up to 16 bytes (the usual case) are read as
/// two overlapping words with no copy or loop, as wyhash does.
fn name_hash(name: &str) -> u64 {
    const K1: u64 = 0x9e37_79b9_7f4a_7c15;
    const K2: u64 = 0xd6e8_feb8_6659_fd93;
    let b = name.as_bytes();
    let n = b.len();
    let seed = (n as u64).wrapping_mul(K1);
    let (lo, hi) = if n > 16 {
        let mut h = seed;
        for c in b[..n - 8].chunks_exact(8) {
            h = fold(h ^ read8(c), K1);
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

impl Mapper {
    /// A mapper with no bindings; fails on an invalid config.
    pub fn new(config: MapperConfig) -> Result<Mapper> {
        config.validate()?;
        Ok(Mapper::with_capacity(config, 0, 0))
    }

    pub(crate) fn with_capacity(config: MapperConfig, clusters: usize, bindings: usize) -> Mapper {
        Mapper {
            config,
            clusters: Vec::with_capacity(clusters),
            cluster_index: HashTable::with_capacity(clusters),
            bindings: Vec::with_capacity(bindings),
            by_identity: HashTable::with_capacity(bindings),
            by_mapped: HashTable::with_capacity(bindings),
            journal: None,
        }
    }

    /// The config this mapper was made with.
    pub fn config(&self) -> &MapperConfig {
        &self.config
    }

    /// How many identities are bound.
    pub fn len(&self) -> usize {
        self.bindings.len()
    }

    /// Whether no identity is bound.
    pub fn is_empty(&self) -> bool {
        self.bindings.is_empty()
    }

    /// Heap bytes held by the origins map (bindings, indexes, cluster names).
    pub fn memory_bytes(&self) -> usize {
        self.bindings.capacity() * std::mem::size_of::<Binding>()
            + self.by_identity.allocation_size()
            + self.by_mapped.allocation_size()
            + self.cluster_index.allocation_size()
            + self.clusters.capacity() * std::mem::size_of::<String>()
            + self.clusters.iter().map(String::capacity).sum::<usize>()
    }

    /// Maps `pid` arriving from `source_cluster_id` at host time `now_ms`.
    ///
    /// Negative PIDs pass untouched; local PIDs ≥ 2^40 give
    /// [`Error::PidOutOfRange`]; after 64 taken salts,
    /// [`Error::SlotSpaceExhausted`]. On error nothing changed.
    pub fn map(&mut self, source_cluster_id: &str, pid: i64, now_ms: i64) -> Result<MapOutcome> {
        if let Some(idx) = self.bound(source_cluster_id, pid) {
            return Ok(self.bound_outcome(idx, pid, now_ms));
        }
        Ok(self.map_indexed(source_cluster_id, pid, now_ms)?.0)
    }

    /// The position of a bound identity (the hot path: no validation is
    /// needed, since only valid identities are ever bound).
    #[inline]
    fn bound(&self, source: &str, pid: i64) -> Option<usize> {
        if pid < 0 {
            return None;
        }
        self.find_identity(self.find_cluster(source)?, pid)
    }

    /// Touches the bound identity at `idx` and describes it.
    #[inline]
    fn bound_outcome(&mut self, idx: usize, pid: i64, now_ms: i64) -> MapOutcome {
        self.touch(idx, now_ms);
        let b = &self.bindings[idx];
        MapOutcome {
            pid,
            mapped: b.mapped,
            salt: Some(b.salt),
            collision: None,
            record: None,
            snapshot_required: false,
        }
    }

    /// [`Mapper::map`], also returning the binding's position (for the
    /// batch path, which records transaction state on it).
    pub(crate) fn map_indexed(
        &mut self,
        source: &str,
        pid: i64,
        now_ms: i64,
    ) -> Result<(MapOutcome, Option<usize>)> {
        check_source(source)?;
        match pid::PidSpace::of(pid) {
            pid::PidSpace::NoProducer => return Ok((MapOutcome::passthrough(pid), None)),
            pid::PidSpace::OutOfRange => return Err(Error::PidOutOfRange { pid }),
            _ => {}
        }
        if let Some(idx) = self.bound(source, pid) {
            return Ok((self.bound_outcome(idx, pid, now_ms), Some(idx)));
        }
        let cluster = self.find_cluster(source);
        let Some(split) = pid::split(source, pid)? else {
            return Ok((MapOutcome::passthrough(pid), None));
        };
        let (salt, mapped, colliding) = self.probe(cluster, source, pid, split)?;
        let cluster = self.intern(source);
        let recorded = salt > 0 || self.config.durability == Durability::Bindings;
        let idx = self.insert(Binding {
            pid,
            mapped,
            last_seen: now_ms,
            cluster,
            salt,
            flags: if recorded { RECORDED } else { 0 },
        });
        let collision = colliding.map(|id| Collision {
            colliding_cluster_id: id,
        });
        let record = recorded.then(|| {
            Box::new(StateRecord {
                key: self.key(source, pid),
                value: Some(StateValue {
                    salt: i64::from(salt),
                    colliding_cluster_id: collision
                        .as_ref()
                        .map(|c| c.colliding_cluster_id.clone())
                        .unwrap_or_default(),
                    timestamp_ms: now_ms,
                }),
            })
        });
        let outcome = MapOutcome {
            pid,
            mapped,
            salt: Some(salt),
            snapshot_required: collision.is_some(),
            collision,
            record,
        };
        Ok((outcome, Some(idx)))
    }

    /// Finds the first salt whose slot is free or held only by the same
    /// producer. Reads only.
    fn probe(
        &self,
        cluster: Option<u32>,
        source: &str,
        pid: i64,
        split: Split<'_>,
    ) -> Result<(u8, i64, Option<String>)> {
        for salt in 0..MAX_PROBES {
            let slot = pid::f_split(split, u64::from(salt));
            if !self.slot_taken(cluster, pid, salt, slot) {
                let colliding = (salt > 0).then(|| self.salt0_holder(split));
                return Ok((salt, slot, colliding));
            }
        }
        Err(Error::SlotSpaceExhausted {
            source_cluster_id: source.to_owned(),
            pid,
        })
    }

    /// Whether `slot` is held by any producer other than the identity
    /// (`cluster`, `pid`) probing it at `salt` (the same-producer rule of
    /// SPEC §4). `cluster` is `None` for a source not seen before.
    pub(crate) fn slot_taken(&self, cluster: Option<u32>, pid: i64, salt: u8, slot: i64) -> bool {
        self.by_mapped
            .iter_hash(mapped_hash(slot))
            .map(|&h| &self.bindings[h as usize])
            .any(|b| b.mapped == slot && !same_producer(cluster, pid, salt, b))
    }

    /// The source cluster of the holder of the identity's salt-0 slot (the
    /// least by cluster ID and PID when several share it, so the answer does
    /// not depend on insertion order).
    fn salt0_holder(&self, split: Split<'_>) -> String {
        self.holders(pid::f_split(split, 0))
            .into_iter()
            .map(|h| (h.source_cluster_id, h.pid))
            .min()
            .map(|(c, _)| c.to_owned())
            .unwrap_or_default()
    }

    /// The binding of an identity, if bound.
    pub fn lookup(&self, source_cluster_id: &str, pid: i64) -> Option<BindingView<'_>> {
        let cluster = self.find_cluster(source_cluster_id)?;
        let idx = self.find_identity(cluster, pid)?;
        Some(self.view(&self.bindings[idx]))
    }

    /// Every binding, in storage order.
    pub fn bindings(&self) -> impl Iterator<Item = BindingView<'_>> + '_ {
        self.bindings.iter().map(|b| self.view(b))
    }

    /// The identities holding `mapped` (more than one when the same upstream
    /// producer reaches this partition by several paths).
    pub fn holders(&self, mapped: i64) -> Vec<BindingView<'_>> {
        self.positions_of(mapped)
            .into_iter()
            .map(|i| self.view(&self.bindings[i]))
            .collect()
    }

    /// Positions in `bindings` of the holders of `mapped`.
    fn positions_of(&self, mapped: i64) -> Vec<usize> {
        self.by_mapped
            .iter_hash(mapped_hash(mapped))
            .map(|&i| i as usize)
            .filter(|&i| self.bindings[i].mapped == mapped)
            .collect()
    }

    fn view<'a>(&'a self, b: &Binding) -> BindingView<'a> {
        BindingView {
            source_cluster_id: &self.clusters[b.cluster as usize],
            pid: b.pid,
            mapped: b.mapped,
            salt: b.salt,
            last_seen_ms: (b.last_seen != UNKNOWN_LAST_SEEN).then_some(b.last_seen),
            transaction_open: b.flags & TXN_OPEN != 0,
            recorded: b.flags & RECORDED != 0,
        }
    }

    fn key(&self, source: &str, pid: i64) -> StateKey {
        StateKey {
            topic_id: self.config.topic_id,
            partition: self.config.partition,
            source_cluster_id: source.to_owned(),
            original_pid: pid,
        }
    }

    /// Applies one `__mirror_state` record, as a new leader does while
    /// replaying the topic in log order (SPEC §5).
    ///
    /// Records of other partitions are skipped. A value binds the identity
    /// with the record's salt, replacing any binding it had; holders of that
    /// slot that are not the same producer are evicted, since the record is
    /// newer than any snapshot that put them there. A tombstone unbinds.
    pub fn load_record(&mut self, record: &StateRecord) -> Result<LoadOutcome> {
        let key = &record.key;
        check_source(&key.source_cluster_id)?;
        if key.topic_id != self.config.topic_id || key.partition != self.config.partition {
            return Ok(LoadOutcome::Skipped);
        }
        let pid = key.original_pid;
        let split = match pid::split(&key.source_cluster_id, pid) {
            Ok(Some(split)) => split,
            _ => return Err(Error::InvalidRecordPid { pid }),
        };
        let cluster = self.find_cluster(&key.source_cluster_id);
        let existing = cluster.and_then(|c| self.find_identity(c, pid));
        let Some(value) = &record.value else {
            if let Some(idx) = existing {
                self.remove_at(idx);
            }
            return Ok(LoadOutcome::Deleted {
                existed: existing.is_some(),
            });
        };
        let salt = u8::try_from(value.salt)
            .ok()
            .filter(|s| *s < MAX_PROBES)
            .ok_or(Error::InvalidSalt { salt: value.salt })?;
        let mapped = pid::f_split(split, u64::from(salt));
        if let Some(idx) = existing {
            let b = &mut self.bindings[idx];
            if b.mapped == mapped {
                b.salt = salt;
                b.flags |= RECORDED;
                return Ok(LoadOutcome::Bound {
                    mapped,
                    evicted: Vec::new(),
                });
            }
            self.remove_at(idx);
        }
        let mut conflicting: Vec<usize> = self
            .positions_of(mapped)
            .into_iter()
            .filter(|&i| !same_producer(cluster, pid, salt, &self.bindings[i]))
            .collect();
        conflicting.sort_unstable_by(|a, b| b.cmp(a));
        let evicted = conflicting
            .into_iter()
            .map(|i| {
                let b = self.remove_at(i);
                (self.clusters[b.cluster as usize].clone(), b.pid)
            })
            .collect();
        let cluster = self.intern(&key.source_cluster_id);
        self.insert(Binding {
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
    pub fn expire(&mut self, now_ms: i64) -> Vec<StateRecord> {
        let limit = self.config.producer_expiration_ms;
        let mut dropped = Vec::new();
        for idx in (0..self.bindings.len()).rev() {
            let b = &mut self.bindings[idx];
            if b.last_seen == UNKNOWN_LAST_SEEN {
                b.last_seen = now_ms;
            } else if b.flags & TXN_OPEN == 0 && now_ms.saturating_sub(b.last_seen) >= limit {
                dropped.push(self.remove_at(idx));
            }
        }
        dropped.reverse();
        self.tombstones(dropped)
    }

    /// Drops every binding holding `mapped` (the host's producer state
    /// expired it); returns tombstones for those that had records.
    pub fn expire_pid(&mut self, mapped: i64) -> Vec<StateRecord> {
        let mut idxs = self.positions_of(mapped);
        idxs.sort_unstable_by(|a, b| b.cmp(a));
        let dropped: Vec<Binding> = idxs.into_iter().map(|i| self.remove_at(i)).collect();
        self.tombstones(dropped)
    }

    fn tombstones(&self, dropped: Vec<Binding>) -> Vec<StateRecord> {
        dropped
            .into_iter()
            .filter(|b| b.flags & RECORDED != 0)
            .map(|b| StateRecord::tombstone(self.key(&self.clusters[b.cluster as usize], b.pid)))
            .collect()
    }

    // ---- transaction state (fed by the batch path) ----

    /// Marks the binding at `idx` as having an open transaction or not.
    pub(crate) fn set_transaction(&mut self, idx: usize, open: bool) {
        self.save(idx);
        let b = &mut self.bindings[idx];
        if open {
            b.flags |= TXN_OPEN;
        } else {
            b.flags &= !TXN_OPEN;
        }
    }

    #[inline]
    fn touch(&mut self, idx: usize, now_ms: i64) {
        self.save(idx);
        let b = &mut self.bindings[idx];
        b.last_seen = b.last_seen.max(now_ms);
    }

    // ---- journal: all-or-nothing batch sets ----

    /// Starts recording changes so that [`Mapper::rollback`] can undo them.
    pub(crate) fn begin(&mut self) {
        self.journal = Some(Journal {
            bindings_len: self.bindings.len(),
            clusters_len: self.clusters.len(),
            touched: Vec::new(),
        });
    }

    /// Keeps the changes made since [`Mapper::begin`].
    pub(crate) fn commit(&mut self) {
        self.journal = None;
    }

    /// Undoes every change since [`Mapper::begin`]. Only appends and
    /// in-place touches happen while a journal is open, never removals.
    pub(crate) fn rollback(&mut self) {
        let Some(journal) = self.journal.take() else {
            return;
        };
        for &(idx, last_seen, flags) in journal.touched.iter().rev() {
            let b = &mut self.bindings[idx as usize];
            b.last_seen = last_seen;
            b.flags = flags;
        }
        while self.bindings.len() > journal.bindings_len {
            self.remove_at(self.bindings.len() - 1);
        }
        while self.clusters.len() > journal.clusters_len {
            let idx = self.clusters.len() - 1;
            let h = name_hash(&self.clusters[idx]);
            if let Ok(entry) = self.cluster_index.find_entry(h, |&i| i as usize == idx) {
                entry.remove();
            }
            self.clusters.pop();
        }
    }

    fn save(&mut self, idx: usize) {
        if let Some(j) = &mut self.journal {
            if idx < j.bindings_len {
                let b = &self.bindings[idx];
                j.touched.push((idx as u32, b.last_seen, b.flags));
            }
        }
    }

    // ---- storage ----

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

    #[inline]
    fn find_identity(&self, cluster: u32, pid: i64) -> Option<usize> {
        self.by_identity
            .find(identity_hash(cluster, pid), |&i| {
                let b = &self.bindings[i as usize];
                b.cluster == cluster && b.pid == pid
            })
            .map(|&i| i as usize)
    }

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

    fn remove_at(&mut self, idx: usize) -> Binding {
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
}

/// A source cluster ID must be non-empty and fit a Kafka STRING.
pub(crate) fn check_source(source: &str) -> Result<()> {
    if source.is_empty() || source.len() > i16::MAX as usize {
        return Err(Error::invalid(format!(
            "source cluster ID must be 1 to 32767 bytes of UTF-8, got {} bytes",
            source.len()
        )));
    }
    Ok(())
}

/// The same-producer rule of SPEC §4, for an unbound identity meeting a
/// holder of the slot it probes at `salt`.
fn same_producer(cluster: Option<u32>, pid: i64, salt: u8, holder: &Binding) -> bool {
    if cluster == Some(holder.cluster) {
        return holder.pid == pid;
    }
    (pid::is_mirrored(pid) || pid::is_mirrored(holder.pid)) && salt == 0 && holder.salt == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapper() -> Mapper {
        Mapper::new(MapperConfig::new(TopicId([7; 16]), 1)).unwrap()
    }

    #[test]
    fn rollback_undoes_bindings_touches_and_clusters() {
        let mut m = mapper();
        m.map("A", 1, 10).unwrap();
        let before = m.snapshot();
        m.begin();
        let (_, idx) = m.map_indexed("A", 1, 99).unwrap();
        m.set_transaction(idx.unwrap(), true);
        m.map("new-cluster", 2, 99).unwrap();
        m.map("A", 3, 99).unwrap();
        assert_eq!(m.len(), 3);
        m.rollback();
        assert_eq!(m.snapshot(), before);
        assert!(m.find_cluster("new-cluster").is_none());
        assert_eq!(m.lookup("A", 1).unwrap().last_seen_ms, Some(10));
        // The journal is closed: later changes stay.
        m.map("B", 1, 5).unwrap();
        m.rollback();
        assert!(m.lookup("B", 1).is_some());
    }

    #[test]
    fn removal_keeps_indexes_consistent() {
        let mut m = mapper();
        for pid in 0..50 {
            m.map("A", pid, pid).unwrap();
        }
        for pid in (0..50).step_by(3) {
            let mapped = m.lookup("A", pid).unwrap().mapped;
            assert_eq!(m.expire_pid(mapped).len(), 1);
        }
        for pid in 0..50 {
            let found = m.lookup("A", pid);
            assert_eq!(found.is_some(), pid % 3 != 0, "pid {pid}");
            if let Some(b) = found {
                assert_eq!(m.holders(b.mapped).len(), 1);
            }
        }
    }
}
