//! What mapper calls return: outcomes of mapping and loading, and the view
//! of a binding callers read.

use serde::Serialize;

use crate::record::StateRecord;

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
    /// Set when the binding is salted and pending (made by this call, or by
    /// an earlier call not yet confirmed).
    pub collision: Option<Collision>,
    /// The `__mirror_state` record to make durable before [`Mapper::confirm`](crate::Mapper::confirm):
    /// set while the binding is pending, so a retry gets it again (boxed:
    /// most calls hit a confirmed identity and produce none).
    pub record: Option<Box<StateRecord>>,
    /// Set with a collision: the host should snapshot its producer state.
    pub snapshot_required: bool,
}

impl MapOutcome {
    pub(crate) fn passthrough(pid: i64) -> MapOutcome {
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

/// What [`Mapper::load_record`](crate::Mapper::load_record) did with a record.
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
        /// The record binds a mirrored PID its source is not declared to
        /// carry (the config's `origins`): loaded all the same, since a
        /// leader wrote it, but a rewrite would have refused the claim.
        /// Whoever can write `__mirror_state` gets past the declaration,
        /// so a host counts or alerts on these.
        undeclared: bool,
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
    /// Whether it awaits [`Mapper::confirm`](crate::Mapper::confirm).
    pub pending: bool,
}
