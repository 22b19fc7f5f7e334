//! A call as a value: every change a host call makes to the mapper goes
//! through one [`Call`], which keeps what it needs to undo them. The host
//! checks its work on the side (maps PIDs, walks a fetch, writes its
//! output) and only then [`Call::commit`]s; a call dropped before that,
//! by an error or on purpose, undoes everything it did, so no caller can
//! forget the rollback. Kafka's `ProducerStateManager.prepareUpdate` and
//! `ProducerAppendInfo` have the same shape.

use super::stage::{Savepoint, Stage};
use super::table::{self, Binding, Wire, RECORDED, STAGE_SAVED, TXN_OPEN};
use super::{collision_of, key, Collision, Durability, MapOutcome, Mapper, Source, SourceCluster};
use crate::batch::{Changes, PidWrite};
use crate::error::{invariant_broken, Error, Result};
use crate::pid;
use crate::record::{StateRecord, StateValue};
use crate::vec::room;

/// One all-or-nothing call on a [`Mapper`], made by [`Mapper::begin`].
///
/// Bindings it makes are pending until [`Mapper::confirm`], as every
/// binding is; what it returns in [`Call::records`] is what the host
/// persists. Dropped without [`Call::commit`], it undoes every binding it
/// made and every last-seen time and transaction state it changed.
#[derive(Debug)]
#[must_use = "a call dropped without commit() undoes everything it did"]
pub struct Call<'a> {
    pub(super) m: &'a mut Mapper,
    /// The host's time for the whole call.
    now_ms: i64,
    /// Whether a stage was open when the call began (if not, one the call
    /// opens goes with it when it is undone).
    had_stage: bool,
    committed: bool,
}

/// What a call collects, kept in the mapper between calls so that a call
/// on bound producers allocates nothing.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// The records of the call under way.
    records: Vec<StateRecord>,
    /// Whether a binding of the call is a collision.
    snapshot_required: bool,
    /// The batch writes the call decided (the rewrite's list of changes).
    changes: Changes,
    /// The position and producer ID of the binding the batch path used
    /// last, a hint for the next call's first batch (checked when it is
    /// used: [`Call::see_hinted`]).
    last: Option<(usize, Wire)>,
}

impl Scratch {
    /// Forgets the last call's records, and their room: a call that makes
    /// records is rare once a mapper's producers are bound, and a broker
    /// holds thousands of mappers, so none keeps room for records between
    /// such calls.
    #[inline(never)]
    fn release_records(&mut self) {
        self.records = Vec::new();
    }
}

impl Mapper {
    /// Begins a call at host time `now_ms`: map PIDs or rewrite a fetch on
    /// it, persist what it returns, then [`Call::commit`].
    #[inline]
    pub fn begin(&mut self, now_ms: i64) -> Call<'_> {
        self.calls += 1;
        self.undo.reset(&self.table);
        let had_stage = self.stage.is_some();
        self.scratch.snapshot_required = false;
        if !self.scratch.records.is_empty() {
            self.scratch.release_records();
        }
        self.scratch.changes.clear();
        Call {
            m: self,
            now_ms,
            had_stage,
            committed: false,
        }
    }
}

impl<'a> Call<'a> {
    /// The records of the bindings this call made or met pending, in the
    /// order they arose: persist them before the batches that carry their
    /// PIDs are appended.
    pub fn records(&self) -> &[StateRecord] {
        &self.m.scratch.records
    }

    /// Whether a binding of this call is a collision: take a snapshot of
    /// the producer state (`docs/DESIGN.md`).
    pub fn snapshot_required(&self) -> bool {
        self.m.scratch.snapshot_required
    }

    /// The host time the call was begun at.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Keeps every change the call made.
    #[inline]
    pub fn commit(mut self) {
        self.committed = true;
    }

    /// Keeps every change the call made; returns its records.
    pub fn commit_records(mut self) -> Vec<StateRecord> {
        self.committed = true;
        std::mem::take(&mut self.m.scratch.records)
    }

    /// The batch writes the call decided, in fetch order.
    #[inline(always)]
    pub(crate) fn writes(&self) -> &[PidWrite] {
        self.m.scratch.changes.writes()
    }

    /// The call's list of changes, to note a batch write in.
    #[inline(always)]
    pub(crate) fn changes(&mut self) -> &mut Changes {
        &mut self.m.scratch.changes
    }

    /// The call's list of changes, to read.
    #[inline(always)]
    pub(crate) fn changes_ref(&self) -> &Changes {
        &self.m.scratch.changes
    }

    /// Where the binding the batch path used last was, and its producer
    /// ID: a hint, which [`Call::see_hinted`] checks.
    #[inline(always)]
    pub(crate) fn last(&self) -> Option<(usize, Wire)> {
        self.m.scratch.last
    }

    /// Remembers the binding the batch path used last.
    #[inline(always)]
    pub(crate) fn set_last(&mut self, idx: usize, pid: Wire) {
        self.m.scratch.last = Some((idx, pid));
    }

    /// Maps `pid` arriving from `source_cluster_id`, as
    /// [`Mapper::map`] does.
    pub fn map(&mut self, source_cluster_id: &str, pid: i64) -> Result<MapOutcome> {
        if let Some(idx) = self.m.bound(source_cluster_id, pid) {
            return self.touch_and_describe(idx, pid, None);
        }
        let source = SourceCluster::new(source_cluster_id)?;
        self.map_new(source, pid, None)
    }

    /// The source cluster's number in the table, if any binding ever
    /// named it (looked up once per fetch by the batch path).
    #[inline]
    pub(crate) fn cluster(&self, source: SourceCluster<'_>) -> Option<u32> {
        self.m.table.find_cluster(source.as_str())
    }

    /// The source a call names, checked, and its cluster's number in the
    /// table if any binding ever named it: where a [`super::KnownSource`]
    /// found it when the table's clusters have not changed since.
    #[inline(always)]
    pub(crate) fn source<'s>(
        &self,
        source: Source<'s>,
    ) -> Result<(SourceCluster<'s>, Option<u32>)> {
        let id = match source {
            Source::Id(id) => id,
            Source::Known(known) => known.as_str(),
        };
        let checked = SourceCluster::new(id)?;
        Ok((checked, self.m.table.find_source(source)))
    }

    /// [`Table::warm`] for a walk of `n` batches.
    #[inline(always)]
    pub(crate) fn warm(&self, n: usize) {
        self.m.table.warm(n);
    }

    /// The position of the binding of (`cluster`, `pid`), if bound: the
    /// batch path's keyed lookup.
    #[inline(always)]
    pub(crate) fn find(&self, cluster: u32, pid: Wire) -> Option<usize> {
        self.m.table.find_identity(cluster, pid)
    }

    /// Whether the binding at `idx` is pending.
    #[inline(always)]
    pub(crate) fn is_pending(&self, idx: usize) -> bool {
        self.m.is_pending(idx)
    }

    /// [`Call::see`] of the binding at `idx` if it is still the confirmed
    /// binding of (`cluster`, `pid`) (a hint from [`Call::last`]); `None`,
    /// and nothing changed, if not.
    #[inline(always)]
    pub(crate) fn see_hinted(
        &mut self,
        idx: usize,
        cluster: u32,
        pid: Wire,
        txn: Option<bool>,
    ) -> Option<Binding> {
        if self.m.is_pending(idx) {
            return None;
        }
        let seen = table::seen_at(self.now_ms);
        let m = &mut *self.m;
        let b = m.table.state_mut(idx)?;
        if b.cluster != cluster || b.pid != pid {
            return None;
        }
        Some(touch(&mut m.undo, &mut m.stage, seen, idx, b, txn))
    }

    /// Records that the binding at `idx` was seen in this call and, when
    /// `txn` says so, that its transaction is open or ended (saving its
    /// state first, for this call and for the stage): nothing written when
    /// nothing changes. Returns the binding as it is now. The caller has
    /// made room for the save ([`Call::reserve`]).
    #[inline(always)]
    pub(crate) fn see(&mut self, idx: usize, txn: Option<bool>) -> Binding {
        let seen = table::seen_at(self.now_ms);
        let m = &mut *self.m;
        // One lookup, read and written in place.
        let Some(b) = m.table.state_mut(idx) else {
            return *invariant_broken("a binding seen past the end", &Binding::VACANT);
        };
        touch(&mut m.undo, &mut m.stage, seen, idx, b, txn)
    }

    /// The batch path's other cases: a pending binding (`bound`), seen and
    /// described, or an identity not bound yet, mapped (kept out of the
    /// walk's loop by its caller).
    #[inline(always)]
    pub(crate) fn map_pending_or_new(
        &mut self,
        bound: Option<usize>,
        source: SourceCluster<'_>,
        pid: i64,
        txn: Option<bool>,
    ) -> Result<MapOutcome> {
        match bound {
            Some(idx) => self.touch_and_describe(idx, pid, txn),
            None => self.map_new(source, pid, txn),
        }
    }

    /// Touches the bound identity at `idx` (its last-seen time, and its
    /// transaction state as `txn` says) and describes it, having made
    /// room for its record and its saved state first.
    fn touch_and_describe(
        &mut self,
        idx: usize,
        pid: i64,
        txn: Option<bool>,
    ) -> Result<MapOutcome> {
        self.reserve(1)?;
        room(&mut self.m.scratch.records, 1, "a call's records")?;
        self.see(idx, txn);
        Ok(self.describe(idx, pid))
    }

    /// Describes the bound identity at `idx`; a pending binding's record
    /// comes back once per call (and joins the call's records).
    fn describe(&mut self, idx: usize, pid: i64) -> MapOutcome {
        let b = self.m.table.get(idx);
        let mut outcome = MapOutcome {
            pid,
            mapped: b.mapped.value(),
            salt: Some(b.salt),
            collision: None,
            record: None,
            snapshot_required: false,
        };
        if self.m.is_pending(idx) {
            self.describe_pending(idx, &mut outcome);
        }
        outcome
    }

    /// The part of [`Call::describe`] for a pending binding: its record
    /// and collision, the first time this call meets it.
    #[inline(never)]
    fn describe_pending(&mut self, idx: usize, outcome: &mut MapOutcome) {
        let salt = self.m.table.get(idx).salt;
        let calls = self.m.calls;
        let Some(stage) = &mut self.m.stage else {
            return;
        };
        let k = idx.checked_sub(stage.start());
        if let (Some(returned), Some(record)) = (
            k.and_then(|k| stage.returned_in.get_mut(k)),
            k.and_then(|k| stage.records.get(k)),
        ) {
            if *returned != calls {
                *returned = calls;
                outcome.record = record.clone();
                outcome.collision = collision_of(salt, outcome.record.as_deref());
                outcome.snapshot_required = outcome.collision.is_some();
            }
        }
        self.keep(outcome);
    }

    /// Adds an outcome's record and collision to the call's.
    fn keep(&mut self, outcome: &MapOutcome) {
        let scratch = &mut self.m.scratch;
        scratch.snapshot_required |= outcome.snapshot_required;
        if let Some(record) = &outcome.record {
            scratch.records.push((**record).clone());
        }
    }

    /// Maps an identity that is not bound: classifies the PID, checks the
    /// trust declaration, probes salts and binds it (pending), having made
    /// room for everything first, so that a failure changes nothing.
    fn map_new(
        &mut self,
        source: SourceCluster<'_>,
        pid: i64,
        txn: Option<bool>,
    ) -> Result<MapOutcome> {
        let source = source.as_str();
        // The one place a PID is classified: no producer, or out of range.
        let Some(split) = pid::split(source, pid)? else {
            return Ok(MapOutcome::passthrough(pid));
        };
        if let pid::Origin::Region(region) = split.origin {
            if self.m.undeclared(source, split.origin) {
                return Err(Error::UndeclaredOrigin {
                    source_cluster_id: source.to_owned(),
                    pid,
                    region,
                });
            }
        }
        let m = &mut *self.m;
        let cluster = m.table.find_cluster(source);
        let (salt, mapped, colliding) = m.probe(cluster, source, pid, split)?;
        // Every allocation first, so that running out changes nothing.
        m.make_room(cluster, source)?;
        room(&mut m.scratch.records, 1, "a call's records")?;
        let stage = match &mut m.stage {
            Some(stage) => {
                stage.reserve(1)?;
                stage
            }
            None => m.stage.insert(Stage::open(&mut m.table, &m.undo)?),
        };
        let cluster = m.table.intern(source);
        let recorded = salt > 0 || m.config.durability == Durability::Bindings;
        let open = txn == Some(true);
        let idx = m.table.insert(Binding {
            pid: Wire::of(pid),
            mapped: Wire::of(mapped),
            last_seen: table::seen_at(self.now_ms),
            cluster,
            salt,
            flags: if recorded { RECORDED } else { 0 } | if open { TXN_OPEN } else { 0 },
        });
        let record = recorded.then(|| {
            Box::new(StateRecord {
                key: key(&m.config, source, pid),
                value: Some(StateValue {
                    salt: i64::from(salt),
                    colliding_cluster_id: colliding.clone().unwrap_or_default(),
                    timestamp_ms: self.now_ms,
                }),
            })
        });
        stage.records.push(record.clone());
        stage.returned_in.push(m.calls);
        debug_assert_eq!(idx + 1, m.table.len());
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
        self.keep(&outcome);
        Ok(outcome)
    }

    /// Makes room to record `n` more changed bindings, so that the batch
    /// path's saves cannot fail to allocate.
    #[inline(always)]
    pub(crate) fn reserve(&mut self, n: usize) -> Result<()> {
        self.m.reserve_saves(n)
    }
}

/// [`Call::see`] of binding `b` (at `idx`), found by its caller: its
/// last-seen time raised to `seen` and its transaction state set as `txn`
/// says, each change saved first in `undo` and in the stage.
#[inline(always)]
fn touch(
    undo: &mut Savepoint,
    stage: &mut Option<Stage>,
    seen: i64,
    idx: usize,
    b: &mut Binding,
    txn: Option<bool>,
) -> Binding {
    let old = *b;
    let flags = match txn {
        Some(true) => old.flags | TXN_OPEN,
        Some(false) => old.flags & !TXN_OPEN,
        None => old.flags,
    };
    if seen > old.last_seen || flags != old.flags {
        undo.save_state(idx, &old);
        let mut keep = old.flags & STAGE_SAVED;
        if let Some(stage) = stage {
            keep |= stage.save(idx, &old);
        }
        b.last_seen = seen.max(old.last_seen);
        b.flags = flags | keep;
    }
    *b
}

impl Drop for Call<'_> {
    // Inline: a committed call's drop is then nothing at all.
    #[inline(always)]
    fn drop(&mut self) {
        if !self.committed {
            self.m.roll_back(self.had_stage);
        }
    }
}
