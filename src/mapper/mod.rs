//! The mapper of one destination partition.
//!
//! It holds the *origins map*: identity (direct source cluster, incoming PID)
//! → (mapped PID, salt), and mapped PID → the identities holding it. Mapping
//! an identity is, in order: (1) already bound → the same PID, always;
//! (2) bound from a loaded `__mirror_state` record → that record's salt, no
//! probing; (3) probe salt 0, 1, … 63 and take the first slot that is free or
//! held only by the same producer.
//!
//! A binding made by [`Mapper::map`] or [`Mapper::rewrite`] is *pending*
//! until the host calls [`Mapper::confirm`], after it has made the
//! binding's `__mirror_state` record durable. Until then every call that
//! touches the identity returns its record again (so a retry after a failed
//! append gets the records it lost), [`Mapper::abort`] takes all pending
//! bindings back, snapshots leave them out, and calls that remove bindings
//! (expiry, loading records) are refused. `docs/DESIGN.md` explains why.
//!
//! The parts: `config` (what a mapper is for), `outcome` (what calls
//! return), `table` (the bindings and their indexes), `stage` (savepoints
//! and pending bindings), `replay` (records and expiry), and this file, the
//! policy of mapping.

mod chunked;
mod config;
mod outcome;
mod replay;
mod stage;
mod keyed;
pub(crate) mod table;
mod trust;

pub use config::{
    Durability, MapperConfig, Origins, DEFAULT_MAX_BINDINGS, DEFAULT_MAX_CLUSTERS,
    DEFAULT_MAX_CLUSTER_ID_BYTES, DEFAULT_PRODUCER_EXPIRATION_MS, MAX_MAX_BINDINGS,
};
pub use outcome::{BindingView, Collision, LoadOutcome, MapOutcome};
use stage::{Savepoint, Stage};
pub use table::seed_hashing;
pub(crate) use table::{Binding, Table, RECORDED, TXN_OPEN, UNKNOWN_LAST_SEEN};
use trust::Trust;

use crate::error::{Error, Result};
use crate::pid::{self, Split, MAX_PROBES};
use crate::record::{StateKey, StateRecord, StateValue};

/// The mapper of one destination partition.
#[derive(Debug)]
pub struct Mapper {
    pub(crate) config: MapperConfig,
    pub(crate) table: Table,
    /// Pending bindings, if any.
    stage: Option<Stage>,
    /// The savepoint of the all-or-nothing call under way, if any (its
    /// buffer is kept between calls).
    call: Savepoint,
    in_call: bool,
    /// Counts calls, so that one call returns a pending record once.
    calls: u64,
    /// The trust declaration, prepared for lookups.
    trust: Option<Trust>,
}

impl Mapper {
    /// A mapper with no bindings; fails on an invalid config.
    pub fn new(config: MapperConfig) -> Result<Mapper> {
        config.validate()?;
        Ok(Mapper::with_table(config, Table::default()))
    }

    pub(crate) fn with_table(config: MapperConfig, table: Table) -> Mapper {
        Mapper {
            trust: config.origins.as_ref().map(Trust::new),
            config,
            table,
            stage: None,
            call: Savepoint::default(),
            in_call: false,
            calls: 0,
        }
    }

    /// The config this mapper was made with.
    pub fn config(&self) -> &MapperConfig {
        &self.config
    }

    /// How many identities are bound, pending ones included.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether no identity is bound.
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    /// How many bindings await [`Mapper::confirm`].
    pub fn pending(&self) -> usize {
        self.stage.as_ref().map_or(0, Stage::len)
    }

    /// The confirmed bindings and the cluster names they use: what a
    /// snapshot holds.
    pub(crate) fn confirmed(
        &self,
    ) -> (
        &[String],
        impl ExactSizeIterator<Item = &Binding> + Clone + '_,
    ) {
        let (clusters, bindings) = match &self.stage {
            Some(s) => (s.undo.clusters_len(), s.start()),
            None => (self.table.clusters().len(), self.table.len()),
        };
        (
            &self.table.clusters()[..clusters],
            self.table.first(bindings),
        )
    }

    /// Heap bytes held by the origins map (bindings, indexes, cluster names).
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
    }

    /// Maps `pid` arriving from `source_cluster_id` at host time `now_ms`.
    ///
    /// Negative PIDs pass untouched; local PIDs ≥ 2^40 give
    /// [`Error::PidOutOfRange`]; after 64 taken salts,
    /// [`Error::SlotSpaceExhausted`]. On error nothing changed. A new
    /// binding is pending until [`Mapper::confirm`].
    pub fn map(&mut self, source_cluster_id: &str, pid: i64, now_ms: i64) -> Result<MapOutcome> {
        self.calls += 1;
        if let Some(idx) = self.bound(source_cluster_id, pid) {
            return Ok(self.bound_outcome(idx, pid, now_ms));
        }
        let source = SourceCluster::new(source_cluster_id)?;
        Ok(self.map_indexed(source, pid, now_ms)?.0)
    }

    /// Makes every pending binding permanent: the host calls it once the
    /// records returned since the last confirm are durable, and only then
    /// appends the batches that carry their PIDs. Returns how many bindings
    /// it confirmed.
    pub fn confirm(&mut self) -> usize {
        self.stage.take().map_or(0, |s| s.confirm(&mut self.table))
    }

    /// Takes back every pending binding, and every change (last-seen times,
    /// transaction flags) made by the call that made the first of them and
    /// by every call after it, as if those calls never happened: for a host
    /// that could not make their records durable and will not append their
    /// batches. Returns how many bindings it removed.
    pub fn abort(&mut self) -> usize {
        self.stage.take().map_or(0, |s| s.abort(&mut self.table))
    }

    /// Runs `f` as one all-or-nothing call: if it fails, every change it
    /// made is undone, so a caller cannot forget the rollback.
    pub(crate) fn atomically<T>(&mut self, f: impl FnOnce(&mut Mapper) -> Result<T>) -> Result<T> {
        debug_assert!(!self.in_call, "calls do not nest");
        self.calls += 1;
        self.call.reset(&self.table);
        self.in_call = true;
        let had_stage = self.stage.is_some();
        let result = f(self);
        self.in_call = false;
        if result.is_err() {
            self.call.restore(&mut self.table);
            if let Some(stage) = &mut self.stage {
                stage.sync(&self.table);
                if !had_stage {
                    self.stage = None;
                }
            }
        }
        result
    }

    /// Makes room for the call under way to save `n` bindings' states (and
    /// the stage, if open), so that the saves cannot fail to allocate.
    #[inline(always)]
    pub(crate) fn reserve_saves(&mut self, n: usize) -> Result<()> {
        self.call.reserve(n)?;
        match &mut self.stage {
            Some(stage) => stage.undo.reserve(n),
            None => Ok(()),
        }
    }

    /// Refuses a call that removes bindings while some are pending.
    pub(crate) fn require_confirmed(&self, call: &'static str) -> Result<()> {
        match self.pending() {
            0 => Ok(()),
            pending => Err(Error::Unconfirmed { call, pending }),
        }
    }

    /// The position of a bound identity (the hot path: no validation is
    /// needed, since only valid identities are ever bound).
    #[inline]
    fn bound(&self, source: &str, pid: i64) -> Option<usize> {
        if pid < 0 {
            return None;
        }
        self.table
            .find_identity(self.table.find_cluster(source)?, pid)
    }

    /// Touches the bound identity at `idx` and describes it; a pending
    /// binding's record comes back once per call.
    #[inline]
    pub(crate) fn bound_outcome(&mut self, idx: usize, pid: i64, now_ms: i64) -> MapOutcome {
        self.touch(idx, now_ms, None);
        self.describe(idx, pid)
    }

    /// Whether the binding at `idx` is pending (made since the last
    /// confirm, so calls report its record).
    #[inline]
    pub(crate) fn is_pending(&self, idx: usize) -> bool {
        self.stage.as_ref().is_some_and(|s| idx >= s.start())
    }

    /// Describes the bound identity at `idx` (touched already); a pending
    /// binding's record comes back once per call.
    #[inline]
    pub(crate) fn describe(&mut self, idx: usize, pid: i64) -> MapOutcome {
        let b = self.table.get(idx);
        let mut outcome = MapOutcome {
            pid,
            mapped: b.mapped,
            salt: Some(b.salt),
            collision: None,
            record: None,
            snapshot_required: false,
        };
        if self.is_pending(idx) {
            self.describe_pending(idx, &mut outcome);
        }
        outcome
    }

    /// The part of [`Mapper::describe`] for a pending binding, out of the
    /// common path: its record and collision, the first time a call meets
    /// it.
    #[inline(never)]
    fn describe_pending(&mut self, idx: usize, outcome: &mut MapOutcome) {
        let salt = self.table.get(idx).salt;
        if let Some(stage) = &mut self.stage {
            if let Some(k) = idx.checked_sub(stage.start()) {
                if stage.returned_in[k] != self.calls {
                    stage.returned_in[k] = self.calls;
                    outcome.record = stage.records[k].clone();
                    outcome.collision = collision_of(salt, outcome.record.as_deref());
                    outcome.snapshot_required = outcome.collision.is_some();
                }
            }
        }
    }

    /// Whether a PID of `origin` from `source` is a claim the trust
    /// declaration does not allow: a mirrored PID (its region) that
    /// `source` is not declared to carry. A source's local PIDs are always
    /// its own; its mirrored PIDs in its own region are checked like any
    /// other (they came back to it through a cycle, which the declaration
    /// names by declaring the source as its own origin).
    pub(crate) fn undeclared(&self, source: &str, origin: pid::Origin<'_>) -> bool {
        match (&self.trust, origin) {
            (Some(trust), pid::Origin::Region(region)) => !trust.allows(source, region),
            _ => false,
        }
    }

    /// [`Mapper::map`], also returning the binding's position (for the
    /// batch path, which records transaction state on it).
    pub(crate) fn map_indexed(
        &mut self,
        source: SourceCluster<'_>,
        pid: i64,
        now_ms: i64,
    ) -> Result<(MapOutcome, Option<usize>)> {
        let source = source.as_str();
        if let Some(idx) = self.bound(source, pid) {
            return Ok((self.bound_outcome(idx, pid, now_ms), Some(idx)));
        }
        // The one place a PID is classified: no producer, or out of range.
        let Some(split) = pid::split(source, pid)? else {
            return Ok((MapOutcome::passthrough(pid), None));
        };
        if let pid::Origin::Region(region) = split.origin {
            if self.undeclared(source, split.origin) {
                return Err(Error::UndeclaredOrigin {
                    source_cluster_id: source.to_owned(),
                    pid,
                    region,
                });
            }
        }
        let cluster = self.table.find_cluster(source);
        let (salt, mapped, colliding) = self.probe(cluster, source, pid, split)?;
        // Every allocation first, so that running out changes nothing.
        self.make_room(cluster, source)?;
        match &mut self.stage {
            Some(stage) => stage.reserve(1)?,
            None => {
                let call = self.in_call.then_some(&self.call);
                self.stage = Some(Stage::open(&mut self.table, call)?);
            }
        }
        let stage = self.stage.as_mut().expect("opened above");
        let cluster = self.table.intern(source);
        let recorded = salt > 0 || self.config.durability == Durability::Bindings;
        let idx = self.table.insert(Binding {
            pid,
            mapped,
            last_seen: table::seen_at(now_ms),
            cluster,
            salt,
            flags: if recorded { RECORDED } else { 0 },
        });
        let record = recorded.then(|| {
            Box::new(StateRecord {
                key: key(&self.config, source, pid),
                value: Some(StateValue {
                    salt: i64::from(salt),
                    colliding_cluster_id: colliding.clone().unwrap_or_default(),
                    timestamp_ms: now_ms,
                }),
            })
        });
        stage.records.push(record.clone());
        stage.returned_in.push(self.calls);
        let collision = colliding.map(|id| Collision {
            colliding_cluster_id: id,
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

    /// Checks that one more binding (of a source cluster not bound yet when
    /// `cluster` is `None`) stays within the config's limits, and makes room
    /// for it in the table: [`Error::CapacityExceeded`] or
    /// [`Error::OutOfMemory`], having changed nothing.
    pub(crate) fn make_room(&mut self, cluster: Option<u32>, source: &str) -> Result<()> {
        let c = &self.config;
        let exceeded = |limit, max| Err(Error::CapacityExceeded { limit, max });
        if self.table.len() as u64 >= c.max_bindings {
            return exceeded("maxBindings", c.max_bindings);
        }
        let new_name = match cluster {
            Some(i) => !self.table.cluster_used(i),
            None => true,
        };
        if new_name {
            let (names, bytes) = self.table.live_clusters();
            if names as u64 >= c.max_clusters {
                return exceeded("maxClusters", c.max_clusters);
            }
            if (bytes + source.len()) as u64 > c.max_cluster_id_bytes {
                return exceeded("maxClusterIdBytes", c.max_cluster_id_bytes);
            }
        }
        self.table.reserve(usize::from(cluster.is_none()), 1)
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
    /// `docs/DESIGN.md`). `cluster` is `None` for a source not seen before.
    pub(crate) fn slot_taken(&self, cluster: Option<u32>, pid: i64, salt: u8, slot: i64) -> bool {
        self.table
            .holders_of(slot)
            .any(|i| !same_producer(cluster, pid, salt, self.table.get(i)))
    }

    /// The source cluster of the holder of the identity's salt-0 slot (the
    /// least by cluster ID and PID when several share it, so the answer does
    /// not depend on insertion order).
    fn salt0_holder(&self, split: Split<'_>) -> String {
        self.holders(pid::f_split(split, 0))
            .into_iter()
            .next()
            .map(|h| h.source_cluster_id.to_owned())
            .unwrap_or_default()
    }

    /// The binding of an identity, if bound.
    pub fn lookup(&self, source_cluster_id: &str, pid: i64) -> Option<BindingView<'_>> {
        let cluster = self.table.find_cluster(source_cluster_id)?;
        let idx = self.table.find_identity(cluster, pid)?;
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
            .holders_of(mapped)
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
            pid: b.pid,
            mapped: b.mapped,
            salt: b.salt,
            last_seen_ms: (b.last_seen != UNKNOWN_LAST_SEEN).then_some(b.last_seen),
            transaction_open: b.flags & TXN_OPEN != 0,
            recorded: b.flags & RECORDED != 0,
            pending: self.stage.as_ref().is_some_and(|s| idx >= s.start()),
        }
    }

    /// Records that the binding at `idx` was seen at `now_ms` and, when
    /// `txn` says so, that its transaction is open or ended: one saved state
    /// and one write, and none when nothing changes (the batch path's
    /// common case within one call).
    #[inline(always)]
    pub(crate) fn touch(&mut self, idx: usize, now_ms: i64, txn: Option<bool>) {
        let b = *self.table.get(idx);
        let last_seen = b.last_seen.max(table::seen_at(now_ms));
        let flags = match txn {
            Some(true) => b.flags | TXN_OPEN,
            Some(false) => b.flags & !TXN_OPEN,
            None => b.flags,
        };
        if last_seen != b.last_seen || flags != b.flags {
            self.set_state(idx, last_seen, flags);
        }
    }

    /// Changes a binding's state, saving the old one for the call under way
    /// and for the stage first.
    #[inline]
    pub(crate) fn set_state(&mut self, idx: usize, last_seen: i64, flags: u8) {
        if self.in_call {
            self.call.save(&self.table, idx);
        }
        if let Some(stage) = &mut self.stage {
            stage.save(&mut self.table, idx);
        }
        let keep = self.table.get(idx).flags & table::STAGE_SAVED;
        self.table.set_state(idx, last_seen, flags | keep);
    }
}

/// The `__mirror_state` key of an identity of this mapper's partition.
pub(crate) fn key(config: &MapperConfig, source: &str, pid: i64) -> StateKey {
    StateKey {
        topic_id: config.topic_id,
        partition: config.partition,
        source_cluster_id: source.to_owned(),
        original_pid: pid,
    }
}

/// The collision a pending binding reports again.
fn collision_of(salt: u8, record: Option<&StateRecord>) -> Option<Collision> {
    let value = record?.value.as_ref()?;
    (salt > 0).then(|| Collision {
        colliding_cluster_id: value.colliding_cluster_id.clone(),
    })
}

/// A direct source cluster ID, checked once where it enters (a call's
/// argument, a record's key, a scenario): 1 to 32767 bytes of UTF-8, so it
/// fits a Kafka STRING in the records that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceCluster<'a>(&'a str);

impl<'a> SourceCluster<'a> {
    /// Checks `id`; [`Error::InvalidInput`] if it is empty or too long.
    pub fn new(id: &'a str) -> Result<SourceCluster<'a>> {
        if id.is_empty() || id.len() > i16::MAX as usize {
            return Err(Error::invalid(format!(
                "source cluster ID must be 1 to 32767 bytes of UTF-8, got {} bytes",
                id.len()
            )));
        }
        Ok(SourceCluster(id))
    }

    /// The ID.
    pub fn as_str(self) -> &'a str {
        self.0
    }
}

/// Sorts `v` ascending in O(n log n) with little code: a heapsort. The
/// mapper sorts only short lists (a mapped PID's holders, a source's
/// declared regions), and `sort_unstable` would add 3 KB of broker module
/// per element type.
pub(crate) fn heapsort<T: Ord>(v: &mut [T]) {
    heapsort_by(v, |a, b| a < b)
}

/// [`heapsort`] by `less`, a strict weak order.
pub(crate) fn heapsort_by<T>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let sift_down = |v: &mut [T], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && less(&v[child], &v[child + 1]) {
            child += 1;
        }
        if !less(&v[root], &v[child]) {
            return;
        }
        v.swap(root, child);
        root = child;
    };
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift_down(v, root, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}

/// The same-producer rule, for an unbound identity meeting a holder of the
/// slot it probes at `salt`.
pub(crate) fn same_producer(cluster: Option<u32>, pid: i64, salt: u8, holder: &Binding) -> bool {
    if cluster == Some(holder.cluster) {
        return holder.pid == pid;
    }
    (pid::is_mirrored(pid) || pid::is_mirrored(holder.pid)) && salt == 0 && holder.salt == 0
}

#[cfg(test)]
mod tests;
