//! The simulator's input: a mirror topology and what happens in it, as
//! plain JSON-able data (the playground edits it, presets are files of it).
//!
//! ```json
//! {
//!   "name": "fan-in",
//!   "clusters": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
//!   "links": [{"from": "A", "to": "C"}, {"from": "B", "to": "C"}],
//!   "producers": [{"id": "a5", "cluster": "A", "pid": 5}],
//!   "events": [{"type": "produce", "producer": "a5", "count": 2}]
//! }
//! ```
//!
//! Every cluster holds one partition of the mirrored topic; a link `A -> C`
//! mirrors A's partition into C's, so C's partition is a *destination*.

use serde::{Deserialize, Serialize};

use crate::mapper::Durability;

/// A topology and its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// A short name.
    #[serde(default)]
    pub name: String,
    /// What the scenario shows.
    #[serde(default)]
    pub description: String,
    /// The topic ID every destination partition uses in its records.
    #[serde(default = "default_topic")]
    pub topic_id: String,
    /// mirrorpid's durability mode at every destination.
    #[serde(default)]
    pub durability: Durability,
    /// Kafka's `transaction.version` (0 to 2; 0 when left out). From 2 on,
    /// Kafka 4's default, every COMMIT or ABORT bumps its producer's epoch:
    /// the marker carries the next epoch, and the producer's batches after
    /// it that epoch with sequences from 0.
    #[serde(default, deserialize_with = "transaction_version")]
    pub transaction_version: u8,
    /// The clusters.
    #[serde(deserialize_with = "objects")]
    pub clusters: Vec<ClusterSpec>,
    /// Mirror links at the start.
    #[serde(default, deserialize_with = "objects")]
    pub links: Vec<LinkSpec>,
    /// Producers, each local to one cluster.
    #[serde(default, deserialize_with = "objects")]
    pub producers: Vec<ProducerSpec>,
    /// What happens, in order.
    #[serde(default, deserialize_with = "objects")]
    pub events: Vec<Event>,
}

/// A value that must be written as a JSON object. serde alone also reads
/// an array as a struct's fields in order, which no one means and which
/// hides a mistake; the scenario and each of its clusters, links,
/// producers and events are read through this.
pub(crate) struct Obj<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Only<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Only<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Only(std::marker::PhantomData)).map(Obj)
    }
}

/// A list of objects (see [`Obj`]).
fn objects<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    let list: Vec<Obj<T>> = Vec::deserialize(d)?;
    Ok(list.into_iter().map(|o| o.0).collect())
}

fn default_topic() -> String {
    "bxw7Kp1OS3-KHC0-T1prfA".to_owned()
}

fn yes() -> bool {
    true
}

/// A cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterSpec {
    /// Its cluster ID (what mirrorpid hashes).
    pub id: String,
    /// Whether local producers may write (a mirror is read-only until a
    /// failover makes it writable).
    #[serde(default = "yes")]
    pub writable: bool,
}

/// A mirror link: `to` mirrors `from`'s partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinkSpec {
    /// The source cluster.
    pub from: String,
    /// The destination cluster.
    pub to: String,
}

/// A producer, local to one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProducerSpec {
    /// A name unique in the scenario.
    pub id: String,
    /// The cluster it writes to.
    pub cluster: String,
    /// Its PID there (-1: not idempotent).
    #[serde(with = "crate::json::i64_str")]
    pub pid: i64,
    /// Its producer epoch.
    #[serde(default)]
    pub epoch: i16,
}

/// One thing that happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Event {
    /// The producer writes `count` batches (transactional ones open a
    /// transaction).
    Produce {
        /// The producer.
        producer: String,
        /// How many batches (1 to [`crate::sim::MAX_COUNT`]).
        #[serde(default = "one", deserialize_with = "count")]
        count: u32,
        /// Whether the batches are transactional.
        #[serde(default)]
        transactional: bool,
    },
    /// The producer commits its transaction (a COMMIT marker).
    Commit {
        /// The producer.
        producer: String,
    },
    /// The producer aborts its transaction (an ABORT marker).
    Abort {
        /// The producer.
        producer: String,
    },
    /// The producer is restarted (a transactional producer's
    /// `initTransactions`): the same PID at the next epoch, sequences from 0.
    Restart {
        /// The producer.
        producer: String,
    },
    /// A mirror becomes writable: mirroring into it stops.
    Failover {
        /// The cluster.
        cluster: String,
    },
    /// A mirror link starts.
    AddLink {
        /// The source cluster.
        from: String,
        /// The destination cluster.
        to: String,
    },
    /// A mirror link stops.
    RemoveLink {
        /// The source cluster.
        from: String,
        /// The destination cluster.
        to: String,
    },
    /// A new leader at `cluster`: replays its `__mirror_state` (after
    /// restoring the last snapshot when `snapshot` is set).
    Election {
        /// The cluster.
        cluster: String,
        /// Restore a snapshot taken just before the election first.
        #[serde(default)]
        snapshot: bool,
    },
    /// The clock moves.
    Advance {
        /// Milliseconds.
        #[serde(with = "crate::json::i64_str")]
        ms: i64,
    },
    /// Every partition's producer state and every mirrorpid mapper expire
    /// idle producers (after the clock moves `advanceMs`), with Kafka's
    /// default `producer.id.expiration.ms` (one day).
    Expire {
        /// Milliseconds to move the clock first.
        #[serde(default, with = "crate::json::i64_str")]
        advance_ms: i64,
    },
}

fn one() -> u32 {
    1
}

/// A `transactionVersion`, refused with its own message when not 0 to 2.
fn transaction_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    let v = u64::deserialize(d)?;
    match u8::try_from(v) {
        Ok(t) if t <= 2 => Ok(t),
        _ => Err(serde::de::Error::custom(format!(
            "transactionVersion {v} is not 0, 1 or 2"
        ))),
    }
}

/// A `produce` count, refused with its own message when out of range.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u64::deserialize(d)?;
    match u32::try_from(n) {
        Ok(c) if (1..=crate::sim::MAX_COUNT).contains(&c) => Ok(c),
        _ => Err(serde::de::Error::custom(format!(
            "count {n} is outside 1 to {} batches per event",
            crate::sim::MAX_COUNT
        ))),
    }
}
