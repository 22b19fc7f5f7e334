//! What a mapper is for and how it behaves: its config and durability.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::topic::TopicId;

/// Kafka's default `producer.id.expiration.ms` (one day).
pub const DEFAULT_PRODUCER_EXPIRATION_MS: i64 = 86_400_000;

/// Which bindings yield `__mirror_state` records (`docs/DESIGN.md`, "State").
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
    /// The trust declaration: for each direct source cluster, the origin
    /// clusters whose mirrored producers it may carry (the upstream closure
    /// of the mirror topology). When set, a mirrored PID whose region is
    /// none of its source's declared origins is refused
    /// ([`crate::Error::UndeclaredOrigin`]), and only declared claims can
    /// share a slot under the two-paths rule. `None`: every claim is
    /// believed (`docs/DESIGN.md`, "Sources you do not control").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origins: Option<BTreeMap<String, Vec<String>>>,
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
            origins: None,
        }
    }

    /// Parses the JSON form (`{"topicId", "partition", "durability"?,
    /// "producerExpirationMs"?, "origins"?}`, unknown fields refused, optional fields
    /// absent or null) and validates it. A bad `topicId` is
    /// [`Error::InvalidTopicId`]; anything else wrong is
    /// [`Error::InvalidInput`].
    pub fn from_json(text: &str) -> Result<MapperConfig> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Raw {
            topic_id: String,
            partition: i32,
            durability: Option<Durability>,
            producer_expiration_ms: Option<crate::json::Int64>,
            origins: Option<BTreeMap<String, Vec<String>>>,
        }
        let raw: Raw = serde_json::from_str(text)
            .map_err(|e| Error::invalid(format!("mapper config: {e}")))?;
        let config = MapperConfig {
            topic_id: raw.topic_id.parse()?,
            partition: raw.partition,
            durability: raw.durability.unwrap_or_default(),
            producer_expiration_ms: raw
                .producer_expiration_ms
                .map_or(DEFAULT_PRODUCER_EXPIRATION_MS, |v| v.0),
            origins: raw.origins,
        };
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
        for (source, origins) in self.origins.iter().flatten() {
            for id in std::iter::once(source).chain(origins) {
                super::SourceCluster::new(id).map_err(|_| {
                    Error::invalid(format!(
                        "mapper config: origins names cluster {id:?}, which is not 1 to 32767 bytes"
                    ))
                })?;
            }
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
