//! What a mapper is for and how it behaves: its config and durability.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::topic::TopicId;

/// Kafka's default `producer.id.expiration.ms` (one day).
pub const DEFAULT_PRODUCER_EXPIRATION_MS: i64 = 86_400_000;

/// Default of [`MapperConfig::max_bindings`]: about 60 MB of bindings and
/// indexes.
pub const DEFAULT_MAX_BINDINGS: u64 = 1_000_000;
/// Default of [`MapperConfig::max_clusters`].
pub const DEFAULT_MAX_CLUSTERS: u64 = 10_000;
/// Default of [`MapperConfig::max_cluster_id_bytes`] (1 MiB).
pub const DEFAULT_MAX_CLUSTER_ID_BYTES: u64 = 1 << 20;
/// The largest `maxBindings`: positions are 32-bit.
pub const MAX_MAX_BINDINGS: u64 = u32::MAX as u64;

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
///
/// Its JSON form is read by one parser, [`MapperConfig::from_json`] (the
/// broker module's, the command line's and the tests'); serde writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MapperConfig {
    /// The destination topic.
    pub topic_id: TopicId,
    /// The destination partition.
    pub partition: i32,
    /// Which bindings yield records.
    pub durability: Durability,
    /// Idle time after which [`Mapper::expire`](crate::Mapper::expire) drops a binding.
    #[serde(serialize_with = "crate::json::i64_as_string")]
    pub producer_expiration_ms: i64,
    /// The trust declaration: for each direct source cluster, the origin
    /// clusters whose mirrored producers it may carry (the upstream closure
    /// of the mirror topology). When set, a mirrored PID whose region is
    /// none of its source's declared origins is refused
    /// ([`crate::Error::UndeclaredOrigin`]), and only declared claims can
    /// share a slot under the two-paths rule. `None`: every claim is
    /// believed (`docs/DESIGN.md`, "Sources you do not control").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origins: Option<Origins>,
    /// The most bindings the mapper holds (pending ones included): a new
    /// identity beyond it is refused with [`Error::CapacityExceeded`]
    /// until expiry frees room. Every source shares it, so size it for the
    /// partition's real producers with headroom, and declare `origins` so
    /// that one source cannot claim another's PIDs.
    pub max_bindings: u64,
    /// The most distinct source cluster IDs the bindings name.
    pub max_clusters: u64,
    /// The most bytes of those cluster IDs together.
    pub max_cluster_id_bytes: u64,
}

/// The fields of the JSON form, as [`MapperConfig::from_json`] reads them:
/// the partition's identity, then [`OPTION_FIELDS`].
const IDENTITY_FIELDS: [&str; 2] = ["topicId", "partition"];

/// The fields that are options, with defaults: the JS API's `options`
/// object takes these names too.
pub(crate) const OPTION_FIELDS: [&str; 6] = [
    "durability",
    "producerExpirationMs",
    "origins",
    "maxBindings",
    "maxClusters",
    "maxClusterIdBytes",
];

impl MapperConfig {
    /// A config with the default durability and expiration.
    pub fn new(topic_id: TopicId, partition: i32) -> MapperConfig {
        MapperConfig {
            topic_id,
            partition,
            durability: Durability::Bindings,
            producer_expiration_ms: DEFAULT_PRODUCER_EXPIRATION_MS,
            origins: None,
            max_bindings: DEFAULT_MAX_BINDINGS,
            max_clusters: DEFAULT_MAX_CLUSTERS,
            max_cluster_id_bytes: DEFAULT_MAX_CLUSTER_ID_BYTES,
        }
    }

    /// Parses the JSON form (`{"topicId", "partition", "durability"?,
    /// "producerExpirationMs"?, "origins"?, "maxBindings"?, "maxClusters"?,
    /// "maxClusterIdBytes"?}`, unknown fields refused, optional fields
    /// absent or null, 64-bit integers as numbers or decimal strings) and
    /// validates it. It reads JSON with its own small reader rather than
    /// serde_json, whose deserializer would take the broker module past
    /// its size budget (`wasm-pack.toml`). A bad `topicId` is
    /// [`Error::InvalidTopicId`]; anything else wrong is
    /// [`Error::InvalidInput`].
    // Out of line: a JVM leaves a method over 8,000 bytes of bytecode
    // uncompiled, and Chicory makes one of each of the module's functions.
    #[inline(never)]
    pub fn from_json(text: &str) -> Result<MapperConfig> {
        use crate::json::Value;
        let bad = |what: String| Error::invalid(text!("mapper config: {what}"));
        let Value::Object(members) = Value::parse(text).map_err(bad)? else {
            return Err(bad("not a JSON object".into()));
        };
        let mut config = MapperConfig::new(TopicId([0; 16]), 0);
        let (mut topic_id, mut partition) = (None, None);
        for (key, v) in members {
            // Optional fields may be null, meaning absent.
            if v == Value::Null && key != "topicId" && key != "partition" {
                continue;
            }
            let wrong = |expected: &str| bad(text!("{key} is {}, expected {expected}", v.kind()));
            // A 64-bit integer: a number written as one, or a decimal string.
            let int = || match &v {
                Value::Number(_) => v.as_i64(),
                Value::String(t) => crate::json::parse_i64(t),
                _ => None,
            };
            match key.as_str() {
                "topicId" => match &v {
                    Value::String(t) => topic_id = Some(t.parse::<TopicId>()?),
                    _ => return Err(wrong("a string")),
                },
                "partition" => match v.as_i64().and_then(|p| i32::try_from(p).ok()) {
                    Some(p) => partition = Some(p),
                    None => return Err(wrong("a 32-bit integer")),
                },
                "durability" => {
                    config.durability = match &v {
                        Value::String(t) if t == "bindings" => Durability::Bindings,
                        Value::String(t) if t == "collisions" => Durability::Collisions,
                        _ => return Err(wrong(r#""bindings" or "collisions""#)),
                    }
                }
                "producerExpirationMs" => {
                    config.producer_expiration_ms =
                        int().ok_or_else(|| wrong("a 64-bit integer (number or decimal string)"))?
                }
                "origins" => {
                    config.origins = Some(origins(&v).ok_or_else(|| {
                        wrong("an object of source cluster IDs to arrays of origin cluster IDs")
                    })?)
                }
                "maxBindings" | "maxClusters" | "maxClusterIdBytes" => {
                    let n = int()
                        .and_then(|n| u64::try_from(n).ok())
                        .ok_or_else(|| wrong("a non-negative integer"))?;
                    match key.as_str() {
                        "maxBindings" => config.max_bindings = n,
                        "maxClusters" => config.max_clusters = n,
                        _ => config.max_cluster_id_bytes = n,
                    }
                }
                _ => {
                    let key = crate::error::Quoted(&key);
                    // Pushed, not `join`ed: `join` reaches a panic on a length overflow.
                    let mut known = String::new();
                    for (i, field) in IDENTITY_FIELDS.iter().chain(&OPTION_FIELDS).enumerate() {
                        if i > 0 {
                            known.push_str(", ");
                        }
                        known.push_str(field);
                    }
                    return Err(bad(text!("unknown field {key} (known: {known})")));
                }
            }
        }
        config.topic_id = topic_id.ok_or_else(|| bad("missing field topicId".into()))?;
        config.partition = partition.ok_or_else(|| bad("missing field partition".into()))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks the values a JSON or JS caller may get wrong.
    pub fn validate(&self) -> Result<()> {
        if self.partition < 0 {
            return Err(Error::invalid(text!(
                "mapper config: partition {} is negative",
                self.partition
            )));
        }
        for (source, origins) in self.origins.iter().flat_map(Origins::iter) {
            for id in std::iter::once(source).chain(origins.iter().map(String::as_str)) {
                super::SourceCluster::new(id).map_err(|_| {
                    let id = crate::error::Quoted(id);
                    Error::invalid(text!(
                        "mapper config: origins names cluster {id}, which is not 1 to 32767 bytes"
                    ))
                })?;
            }
        }
        for (name, value, max) in [
            ("maxBindings", self.max_bindings, MAX_MAX_BINDINGS),
            ("maxClusters", self.max_clusters, u64::from(u32::MAX)),
            ("maxClusterIdBytes", self.max_cluster_id_bytes, u64::MAX),
        ] {
            if value == 0 || value > max {
                return Err(Error::invalid(text!(
                    "mapper config: {name} {value} must be 1 to {max}"
                )));
            }
        }
        if self.producer_expiration_ms <= 0 {
            return Err(Error::invalid(text!(
                "mapper config: producerExpirationMs {} must be positive",
                self.producer_expiration_ms
            )));
        }
        Ok(())
    }
}

/// The trust declaration: each direct source cluster's declared origin
/// clusters, one entry per source, in the order of the sources' IDs (the
/// order snapshots write them in). A sorted vector rather than a
/// `BTreeMap`: the B-tree's code was 3.5 KB of the broker module for a map
/// that is built once and searched through the mapper's own copy. In
/// JSON it is an object of source IDs to arrays of origin IDs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    from = "BTreeMap<String, Vec<String>>",
    into = "BTreeMap<String, Vec<String>>"
)]
pub struct Origins(Vec<(String, Vec<String>)>);

impl Origins {
    /// Declares `source`'s origins, returning an earlier declaration of the
    /// same source, which this one replaces.
    pub fn insert(&mut self, source: String, origins: Vec<String>) -> Option<Vec<String>> {
        match self.0.binary_search_by(|(s, _)| s.cmp(&source)) {
            Ok(i) => self
                .0
                .get_mut(i)
                .map(|(_, old)| std::mem::replace(old, origins)),
            Err(i) => {
                crate::vec::insert_at(&mut self.0, i, (source, origins));
                None
            }
        }
    }

    /// The origins declared for `source`.
    pub fn get(&self, source: &str) -> Option<&[String]> {
        let i = self
            .0
            .binary_search_by(|(s, _)| s.as_str().cmp(source))
            .ok()?;
        self.0.get(i).map(|(_, origins)| origins.as_slice())
    }

    /// Each source and its origins, in the order of the sources' IDs.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &[String])> {
        self.0.iter().map(|(s, o)| (s.as_str(), o.as_slice()))
    }

    /// How many sources are declared.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no source is declared.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, Vec<String>)> for Origins {
    /// Inserts each pair in turn: a later declaration of a source wins.
    fn from_iter<I: IntoIterator<Item = (String, Vec<String>)>>(pairs: I) -> Origins {
        let mut origins = Origins::default();
        for (source, list) in pairs {
            origins.insert(source, list);
        }
        origins
    }
}

impl From<BTreeMap<String, Vec<String>>> for Origins {
    fn from(map: BTreeMap<String, Vec<String>>) -> Origins {
        // Already sorted and unique.
        Origins(map.into_iter().collect())
    }
}

impl From<Origins> for BTreeMap<String, Vec<String>> {
    fn from(origins: Origins) -> BTreeMap<String, Vec<String>> {
        origins.0.into_iter().collect()
    }
}

/// The trust declaration's JSON form: `{"source": ["origin", …], …}`.
fn origins(v: &crate::json::Value) -> Option<Origins> {
    use crate::json::Value;
    let Value::Object(members) = v else {
        return None;
    };
    let mut map = Origins::default();
    for (source, list) in members {
        let Value::Array(items) = list else {
            return None;
        };
        let names = items
            .iter()
            .map(|i| match i {
                Value::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?;
        map.insert(source.clone(), names);
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn origins_keep_one_entry_per_source_in_id_order() {
        let mut o = Origins::default();
        assert!(o.is_empty());
        assert_eq!(o.insert("c".into(), names(&["x"])), None);
        assert_eq!(o.insert("a".into(), names(&[])), None);
        assert_eq!(o.insert("b".into(), names(&["y", "z"])), None);
        // A later declaration of a source replaces the earlier one.
        assert_eq!(o.insert("c".into(), names(&["w"])), Some(names(&["x"])));
        assert_eq!(o.len(), 3);
        let order: Vec<&str> = o.iter().map(|(s, _)| s).collect();
        assert_eq!(order, ["a", "b", "c"]);
        assert_eq!(o.get("c"), Some(&names(&["w"])[..]));
        assert_eq!(o.get("a"), Some(&[][..]));
        assert_eq!(o.get("d"), None);
        // The same as a BTreeMap built from the same pairs, either way.
        let pairs = [
            ("c", &["x"][..]),
            ("a", &[]),
            ("b", &["y", "z"]),
            ("c", &["w"]),
        ];
        let map: BTreeMap<String, Vec<String>> = pairs
            .iter()
            .map(|(s, o)| (s.to_string(), names(o)))
            .collect();
        let collected: Origins = pairs
            .iter()
            .map(|(s, o)| (s.to_string(), names(o)))
            .collect();
        assert_eq!(collected, o);
        assert_eq!(Origins::from(map.clone()), o);
        assert_eq!(BTreeMap::from(o), map);
    }

    #[test]
    fn origins_read_from_config_json_as_serde_writes_them() {
        let text = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,
            "origins":{"east":["dc3"],"central":[]}}"#;
        let config = MapperConfig::from_json(text).unwrap();
        let origins = config.origins.clone().unwrap();
        assert_eq!(origins.get("east"), Some(&names(&["dc3"])[..]));
        assert_eq!(origins.len(), 2);
        // A source named twice is refused, not silently replaced.
        let twice = text.replace(r#""central":[]"#, r#""east":["dc1"]"#);
        let e = MapperConfig::from_json(&twice).unwrap_err();
        assert!(e.to_string().contains("repeated"), "{e}");
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(
            json["origins"],
            serde_json::json!({"central": [], "east": ["dc3"]})
        );
        let back = MapperConfig::from_json(&json.to_string()).unwrap();
        assert_eq!(back, config, "what serde writes, the parser reads");
    }
}
