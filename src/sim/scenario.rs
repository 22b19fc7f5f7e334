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
    /// The clusters.
    pub clusters: Vec<ClusterSpec>,
    /// Mirror links at the start.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Producers, each local to one cluster.
    #[serde(default)]
    pub producers: Vec<ProducerSpec>,
    /// What happens, in order.
    #[serde(default)]
    pub events: Vec<Event>,
}

/// Refuses a scenario, or a cluster, link, producer or event of one,
/// written as a JSON array: serde reads an array as a struct's fields in
/// order, which no one means and which hides a mistake.
pub(crate) fn objects_only(text: &str) -> crate::Result<()> {
    use crate::json::Value;
    let doc =
        Value::parse(text).map_err(|e| crate::Error::invalid(format!("scenario JSON: {e}")))?;
    let Value::Object(top) = doc else {
        return Err(crate::Error::invalid(format!(
            "scenario JSON: a scenario is an object, {{\"clusters\": [...], ...}}, not {}",
            doc.kind()
        )));
    };
    for (field, value) in &top {
        let Value::Array(items) = value else { continue };
        for (i, item) in items.iter().enumerate() {
            if !matches!(item, Value::Object(_)) {
                return Err(crate::Error::invalid(format!(
                    "scenario JSON: {field}[{i}] is {}, not an object",
                    item.kind()
                )));
            }
        }
    }
    Ok(())
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
