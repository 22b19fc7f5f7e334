//! `__mirror_state` records (`docs/FORMAT.md` §3): what a mapper persists so that a new
//! leader maps exactly as the old one did.
//!
//! Kafka coordinator-record framing, big-endian:
//!
//! ```text
//! key   (MirrorPidCollisionKey, apiKey 3, v0, not flexible)
//!   int16 3 | uuid TopicId | int32 Partition | string SourceClusterId | int64 OriginalPid
//! value (MirrorPidCollisionValue, v0, flexible)
//!   int16 0 | int64 Salt | compact string CollidingClusterId | int64 TimestampMs | tagged fields
//! ```
//!
//! A tombstone is a key with a null value. Each wire type decodes and
//! encodes next to the other, and the JSON form (`{"key":…,"value":…|null}`)
//! is their serde form.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::json::i64_str;
use crate::topic::TopicId;
use crate::wire::{self, Reader};

/// The apiKey of `MirrorPidCollisionKey`.
pub const KEY_API_KEY: i16 = 3;
/// The only value version this build writes and reads.
pub const VALUE_VERSION: i16 = 0;

/// `MirrorPidCollisionKey`: which binding a record is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateKey {
    /// The destination topic.
    pub topic_id: TopicId,
    /// The destination partition.
    pub partition: i32,
    /// The direct source cluster of the identity.
    pub source_cluster_id: String,
    /// The PID as it arrived from that source.
    #[serde(with = "i64_str")]
    pub original_pid: i64,
}

/// `MirrorPidCollisionValue`: the decision for a binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StateValue {
    /// The salt F was applied with. A JSON number, as everywhere else a
    /// salt appears; a decimal string (what 0.1 wrote) is read too.
    #[serde(deserialize_with = "crate::json::i64_from_any")]
    pub salt: i64,
    /// Source cluster of the holder of the salt-0 slot ("" when none).
    pub colliding_cluster_id: String,
    /// The host clock when the binding was made.
    #[serde(with = "i64_str")]
    pub timestamp_ms: i64,
}

/// One `__mirror_state` record: a key and a value, or a tombstone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateRecord {
    /// The key.
    pub key: StateKey,
    /// The value; `None` is a tombstone.
    pub value: Option<StateValue>,
}

impl StateKey {
    /// Appends the key's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        wire::put_i16(out, KEY_API_KEY);
        out.extend_from_slice(self.topic_id.as_bytes());
        wire::put_i32(out, self.partition);
        wire::put_string(
            out,
            &self.source_cluster_id,
            "MirrorPidCollisionKey.SourceClusterId",
        )?;
        wire::put_i64(out, self.original_pid);
        Ok(())
    }

    /// Decodes a key; every byte must belong to it.
    pub fn decode(bytes: &[u8]) -> Result<StateKey> {
        let mut r = Reader::new(bytes);
        let api_key = r.i16("MirrorPidCollisionKey.apiKey")?;
        if api_key != KEY_API_KEY {
            return Err(Error::UnknownApiKey { api_key });
        }
        let key = StateKey {
            topic_id: TopicId(r.uuid("MirrorPidCollisionKey.TopicId")?),
            partition: r.i32("MirrorPidCollisionKey.Partition")?,
            source_cluster_id: r.string("MirrorPidCollisionKey.SourceClusterId")?,
            original_pid: r.i64("MirrorPidCollisionKey.OriginalPid")?,
        };
        r.finish("MirrorPidCollisionKey")?;
        Ok(key)
    }

    /// The key's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(32 + self.source_cluster_id.len());
        self.encode(&mut out)?;
        Ok(out)
    }
}

impl StateValue {
    /// Appends the value's bytes (with an empty tagged-field section) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        wire::put_i16(out, VALUE_VERSION);
        wire::put_i64(out, self.salt);
        wire::put_compact_string(
            out,
            &self.colliding_cluster_id,
            "MirrorPidCollisionValue.CollidingClusterId",
        )?;
        wire::put_i64(out, self.timestamp_ms);
        wire::put_uvarint(out, 0);
        Ok(())
    }

    /// Decodes a value; unknown tagged fields are skipped, as Kafka does.
    pub fn decode(bytes: &[u8]) -> Result<StateValue> {
        let mut r = Reader::new(bytes);
        let version = r.i16("MirrorPidCollisionValue.version")?;
        if version != VALUE_VERSION {
            return Err(Error::UnknownVersion {
                what: "MirrorPidCollisionValue",
                version: i32::from(version),
            });
        }
        let value = StateValue {
            salt: r.i64("MirrorPidCollisionValue.Salt")?,
            colliding_cluster_id: r.compact_string("MirrorPidCollisionValue.CollidingClusterId")?,
            timestamp_ms: r.i64("MirrorPidCollisionValue.TimestampMs")?,
        };
        let tags = r.uvarint("MirrorPidCollisionValue.taggedFields")?;
        for _ in 0..tags {
            r.uvarint("MirrorPidCollisionValue.taggedFields.tag")?;
            let size = r.uvarint("MirrorPidCollisionValue.taggedFields.size")?;
            r.bytes(size as usize, "MirrorPidCollisionValue.taggedFields.data")?;
        }
        r.finish("MirrorPidCollisionValue")?;
        Ok(value)
    }

    /// The value's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(24 + self.colliding_cluster_id.len());
        self.encode(&mut out)?;
        Ok(out)
    }
}

impl StateRecord {
    /// Decodes a record from key bytes and value bytes (`None` = tombstone).
    // Out of line: it keeps the module's functions under HotSpot's 8,000
    // bytes of bytecode once Chicory compiles them.
    #[inline(never)]
    pub fn decode(key: &[u8], value: Option<&[u8]>) -> Result<StateRecord> {
        Ok(StateRecord {
            key: StateKey::decode(key)?,
            value: value.map(StateValue::decode).transpose()?,
        })
    }

    /// Encodes to key bytes and value bytes (`None` for a tombstone).
    pub fn encode(&self) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
        Ok((
            self.key.to_bytes()?,
            self.value.as_ref().map(StateValue::to_bytes).transpose()?,
        ))
    }

    /// A tombstone for `key`.
    pub fn tombstone(key: StateKey) -> StateRecord {
        StateRecord { key, value: None }
    }

    /// Whether this is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }

    /// The JSON form, `{"key": {...}, "value": {...} | null}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("StateRecord serializes to JSON")
    }

    /// Parses the JSON form.
    pub fn from_json(text: &str) -> Result<StateRecord> {
        serde_json::from_str(text)
            .map_err(|e| Error::invalid(text!("__mirror_state record JSON: {e}")))
    }
}
