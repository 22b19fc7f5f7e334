//! Undo: savepoints for all-or-nothing calls ([`super::Call`]), and the stage that holds
//! provisional bindings until the host confirms their records are durable.
//!
//! Both rely on one property of the table while they are open: bindings
//! are only appended or changed in place (last-seen time, flags), never
//! removed, so "everything after position n" is exactly what was added and
//! a list of saved states undoes the rest. The mapper refuses the calls
//! that remove bindings (expiry, records) while a stage is open.

use super::table::{Binding, Table, STAGE_SAVED};
use super::Mapper;
use crate::error::{Error, Result};
use crate::record::StateRecord;
use crate::vec::room;

/// What the table looked like at one point, and how to get back there.
#[derive(Debug, Default)]
pub(crate) struct Savepoint {
    bindings_len: usize,
    clusters_len: usize,
    /// (position, last_seen, flags) of bindings older than the savepoint,
    /// as they were before their first change after it.
    touched: Vec<(u32, i64, u8)>,
}

impl Savepoint {
    /// Starts a savepoint at the table's current state, reusing `self`'s
    /// buffer so that a call on the hot path does not allocate.
    pub(crate) fn reset(&mut self, table: &Table) {
        self.bindings_len = table.len();
        self.clusters_len = table.clusters().len();
        self.touched.clear();
    }

    /// Bindings that existed when the savepoint was taken.
    pub(crate) fn bindings_len(&self) -> usize {
        self.bindings_len
    }

    /// Cluster names that existed when the savepoint was taken.
    pub(crate) fn clusters_len(&self) -> usize {
        self.clusters_len
    }

    /// Makes room to save `n` more bindings without allocating.
    #[inline(always)]
    pub(crate) fn reserve(&mut self, n: usize) -> Result<()> {
        room(&mut self.touched, n, "a savepoint")
    }

    /// Saves the state `b` of the binding at `idx` before a change, if it is
    /// older than the savepoint.
    #[inline(always)]
    pub(crate) fn save_state(&mut self, idx: usize, b: &Binding) {
        if idx < self.bindings_len {
            self.touched.push((idx as u32, b.last_seen, b.flags));
        }
    }

    /// Puts the table back as it was at the savepoint.
    pub(crate) fn restore(&mut self, table: &mut Table) {
        for &(idx, last_seen, flags) in self.touched.iter().rev() {
            table.set_state(idx as usize, last_seen, flags);
        }
        self.touched.clear();
        table.truncate(self.bindings_len);
        table.truncate_clusters(self.clusters_len);
    }
}

/// Bindings made since the last confirm, with the records that make them
/// durable. The pending bindings are the table's positions from
/// `undo.bindings_len()` on, in order.
#[derive(Debug)]
pub(crate) struct Stage {
    pub(crate) undo: Savepoint,
    /// For each pending binding, its record (`None` for a salt-0 binding
    /// under `collisions` durability).
    pub(crate) records: Vec<Option<Box<StateRecord>>>,
    /// For each pending binding, the call that last returned its record,
    /// so that one call returns it once.
    pub(crate) returned_in: Vec<u64>,
}

impl Stage {
    /// Opens a stage at the table's current state. Opened inside a call,
    /// it also takes over what the call changed before its first new
    /// binding, so that an abort undoes the whole call.
    /// [`Error::OutOfMemory`](crate::Error::OutOfMemory) if there is no
    /// room for it, before any change.
    pub(crate) fn open(table: &mut Table, call: &Savepoint) -> Result<Stage> {
        let mut undo = Savepoint::default();
        undo.reset(table);
        let touched = &call.touched[..];
        // Room for what the call saved so far (later saves reserve their
        // own room first: `Mapper::reserve_saves`).
        undo.reserve(touched.len() + 1)?;
        let mut stage = Stage {
            undo,
            records: Vec::new(),
            returned_in: Vec::new(),
        };
        stage.reserve(1)?;
        for &(idx, last_seen, flags) in touched {
            stage.undo.touched.push((idx, last_seen, flags));
            let b = *table.get(idx as usize);
            table.set_state(idx as usize, b.last_seen, b.flags | STAGE_SAVED);
        }
        Ok(stage)
    }

    /// Makes room for `n` more pending bindings.
    pub(crate) fn reserve(&mut self, n: usize) -> Result<()> {
        room(&mut self.records, n, "the pending bindings")?;
        room(&mut self.returned_in, n, "the pending bindings")
    }

    /// The first pending position.
    pub(crate) fn start(&self) -> usize {
        self.undo.bindings_len()
    }

    /// How many bindings are pending.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Saves the state `b` of the binding at `idx` before its first change
    /// in this stage; returns the flag that says it was saved, to keep.
    #[inline]
    pub(crate) fn save(&mut self, idx: usize, b: &Binding) -> u8 {
        if idx < self.start() && b.flags & STAGE_SAVED == 0 {
            self.undo.save_state(idx, b);
        }
        if idx < self.start() {
            STAGE_SAVED
        } else {
            0
        }
    }

    /// Forgets pending bindings beyond the table's length (a failed call
    /// took them back).
    pub(crate) fn sync(&mut self, table: &Table) {
        let len = table.len().saturating_sub(self.start());
        self.records.truncate(len);
        self.returned_in.truncate(len);
    }

    /// Makes every pending binding permanent.
    pub(crate) fn confirm(self, table: &mut Table) -> usize {
        for &(idx, _, _) in &self.undo.touched {
            let b = *table.get(idx as usize);
            table.set_state(idx as usize, b.last_seen, b.flags & !STAGE_SAVED);
        }
        self.len()
    }

    /// Removes every pending binding and undoes every change since the
    /// stage opened.
    pub(crate) fn abort(mut self, table: &mut Table) -> usize {
        let n = self.len();
        self.undo.restore(table);
        n
    }
}

/// The calls that open, confirm and abort the stage, and make each call
/// all-or-nothing.
impl Mapper {
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

    /// Undoes the [`super::Call`] under way: every binding it made, every
    /// state it changed, and the stage if the call opened it
    /// (`had_stage`: one was open before).
    #[cold]
    #[inline(never)]
    pub(super) fn roll_back(&mut self, had_stage: bool) {
        self.undo.restore(&mut self.table);
        if let Some(stage) = &mut self.stage {
            stage.sync(&self.table);
            if !had_stage {
                self.stage = None;
            }
        }
    }

    /// Makes room for the call under way to save `n` bindings' states (and
    /// the stage, if open), so that the saves cannot fail to allocate.
    #[inline(always)]
    pub(crate) fn reserve_saves(&mut self, n: usize) -> Result<()> {
        self.undo.reserve(n)?;
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
}
