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
//! The parts: `config` (what a mapper is for), `source` (a checked source
//! cluster ID), `outcome` (what calls return), `table` (the bindings and
//! their indexes, hashed as `keyed` says), `stage` (savepoints and pending
//! bindings), `replay` (records and expiry), `trust` (the declared
//! origins), `views` (what callers read), `sort` (for short lists), and
//! this file, the policy of
//! mapping.

mod binding;
mod call;
mod chunked;
mod config;
mod index;
mod keyed;
mod outcome;
mod replay;
mod sort;
mod source;
mod stage;
pub(crate) mod table;
mod trust;
mod views;

pub use call::Call;
#[cfg(feature = "js")]
pub(crate) use config::OPTION_FIELDS;
pub use config::{
    Durability, MapperConfig, Origins, DEFAULT_MAX_BINDINGS, DEFAULT_MAX_CLUSTERS,
    DEFAULT_MAX_CLUSTER_ID_BYTES, DEFAULT_PRODUCER_EXPIRATION_MS, MAX_MAX_BINDINGS,
};
#[cfg(feature = "broker")]
pub use keyed::seed_hashing;
#[cfg(all(feature = "js", not(feature = "broker")))]
pub(crate) use keyed::seed_hashing;
pub use outcome::{BindingView, Collision, LoadOutcome, MapOutcome};
pub(crate) use sort::{heapsort, heapsort_by};
pub use source::{KnownSource, Source, SourceCluster};
use stage::{Savepoint, Stage};
pub(crate) use table::{Binding, Table, Wire, RECORDED, TXN_OPEN, UNKNOWN_LAST_SEEN};
use trust::Trust;

use crate::error::{Error, Result};
use crate::pid::{self, Split, MAX_PROBES};
use crate::record::{StateKey, StateRecord};

/// The mapper of one destination partition.
#[derive(Debug)]
pub struct Mapper {
    pub(crate) config: MapperConfig,
    pub(crate) table: Table,
    /// Pending bindings, if any.
    stage: Option<Stage>,
    /// The savepoint of the [`Call`] under way (its buffer is kept between
    /// calls, so that a call on bound producers allocates nothing).
    undo: Savepoint,
    /// Counts calls, so that one call returns a pending record once.
    calls: u64,
    /// What the call under way collects.
    scratch: call::Scratch,
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
            undo: Savepoint::default(),
            calls: 0,
            scratch: call::Scratch::default(),
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
        let names = self.table.clusters();
        let names = match names.get(..clusters) {
            Some(confirmed) => confirmed,
            None => crate::error::invariant_broken("more confirmed names than names", names),
        };
        (names, self.table.first(bindings))
    }

    /// Heap bytes held by the origins map (bindings, indexes, cluster names).
    pub fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
    }

    /// Maps `pid` arriving from `source_cluster_id` at host time `now_ms`:
    /// one [`Call`] of one [`Call::map`], committed.
    ///
    /// Negative PIDs pass untouched; local PIDs ≥ 2^40 give
    /// [`Error::PidOutOfRange`]; after 64 taken salts,
    /// [`Error::SlotSpaceExhausted`]. On error nothing changed. A new
    /// binding is pending until [`Mapper::confirm`].
    pub fn map(&mut self, source_cluster_id: &str, pid: i64, now_ms: i64) -> Result<MapOutcome> {
        let mut call = self.begin(now_ms);
        let outcome = call.map(source_cluster_id, pid)?;
        call.commit();
        Ok(outcome)
    }

    /// The position of a bound identity (the hot path: no validation is
    /// needed, since only valid identities are ever bound).
    #[inline]
    fn bound(&self, source: &str, pid: i64) -> Option<usize> {
        if pid < 0 {
            return None;
        }
        self.table
            .find_identity(self.table.find_cluster(source)?, Wire::of(pid))
    }

    /// Whether the binding at `idx` is pending (made since the last
    /// confirm, so calls report its record).
    #[inline]
    pub(crate) fn is_pending(&self, idx: usize) -> bool {
        self.stage.as_ref().is_some_and(|s| idx >= s.start())
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
            .holders_of(Wire::of(slot))
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

/// The same-producer rule, for an unbound identity meeting a holder of the
/// slot it probes at `salt`.
pub(crate) fn same_producer(cluster: Option<u32>, pid: i64, salt: u8, holder: &Binding) -> bool {
    if cluster == Some(holder.cluster) {
        return holder.pid.value() == pid;
    }
    let holder_pid = holder.pid.value();
    (pid::is_mirrored(pid) || pid::is_mirrored(holder_pid)) && salt == 0 && holder.salt == 0
}

#[cfg(test)]
mod tests;
