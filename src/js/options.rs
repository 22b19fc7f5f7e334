//! The options of `new PidMapper` and of both rewrites, read through
//! [`super::args::options`] (unknown keys refused, plain objects only), and
//! the seeding of the mappers' hash keys that `new PidMapper` does first.

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::args::{int64, JsOptions};
use super::convert::{invalid, js_err};
use crate::mapper::{Durability, MapperConfig};

/// `new PidMapper`'s options.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct MapperOptions {
    #[serde(default, deserialize_with = "durability")]
    pub(super) durability: Option<Durability>,
    /// Read by [`int64`], the one rule for 64-bit input.
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    pub(super) producer_expiration_ms: JsValue,
    /// The trust declaration: source -> origins it may carry.
    #[serde(default)]
    pub(super) origins: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// The capacity limits, read by [`int64`].
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    pub(super) max_bindings: JsValue,
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    pub(super) max_clusters: JsValue,
    #[serde(default, with = "serde_wasm_bindgen::preserve")]
    pub(super) max_cluster_id_bytes: JsValue,
}

impl JsOptions for MapperOptions {
    const KEYS: &'static [&'static str] = &crate::mapper::OPTION_FIELDS;
}

impl MapperOptions {
    /// The config these options make for `topic_id`/`partition`.
    pub(super) fn config(self, topic_id: &str, partition: i32) -> Result<MapperConfig, JsError> {
        let mut config = MapperConfig::new(topic_id.parse().map_err(js_err)?, partition);
        if let Some(d) = self.durability {
            config.durability = d;
        }
        config.origins = self.origins.map(Into::into);
        let given = |v: &JsValue| !v.is_undefined() && !v.is_null();
        if given(&self.producer_expiration_ms) {
            config.producer_expiration_ms =
                int64(&self.producer_expiration_ms, "options.producerExpirationMs")?;
        }
        for (v, name, field) in [
            (
                &self.max_bindings,
                "options.maxBindings",
                &mut config.max_bindings,
            ),
            (
                &self.max_clusters,
                "options.maxClusters",
                &mut config.max_clusters,
            ),
            (
                &self.max_cluster_id_bytes,
                "options.maxClusterIdBytes",
                &mut config.max_cluster_id_bytes,
            ),
        ] {
            if given(v) {
                *field = u64::try_from(int64(v, name)?)
                    .map_err(|_| invalid(format!("{name} must not be negative")))?;
            }
        }
        Ok(config)
    }
}

/// Seeds the mappers' hash keys once per instance from `Math.random`: the
/// module has no other randomness, and the keys only need to be unknown
/// to the sources (no result depends on them).
pub(super) fn seed_once() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static SEEDED: AtomicBool = AtomicBool::new(false);
    if !SEEDED.swap(true, Ordering::Relaxed) {
        let word = || (js_sys::Math::random() * 4_294_967_296.0) as u64;
        crate::mapper::seed_hashing(word() << 32 | word());
    }
}

/// `durability`, with its name in the error.
fn durability<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Durability>, D::Error> {
    Option::<Durability>::deserialize(d)
        .map_err(|e| serde::de::Error::custom(format!("durability: {e}")))
}

/// Both rewrites' options; a key left out takes its value from
/// `Default`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub(super) struct RewriteOpts {
    pub(super) strict_crc: bool,
    pub(super) complete: bool,
    /// Whether the result describes every batch (the default).
    pub(super) outcomes: bool,
}

impl Default for RewriteOpts {
    fn default() -> RewriteOpts {
        RewriteOpts {
            strict_crc: false,
            complete: false,
            outcomes: true,
        }
    }
}

/// The rewrite options' keys, each with its bit where the options travel
/// as a number (the fast path's `flags`, `fast.rs`).
pub(super) const REWRITE_OPTIONS: [(&str, u32); 3] =
    [("strictCrc", 1), ("complete", 2), ("outcomes", 4)];

impl JsOptions for RewriteOpts {
    const KEYS: &'static [&'static str] = &{
        let mut keys = [""; REWRITE_OPTIONS.len()];
        let mut i = 0;
        while i < keys.len() {
            keys[i] = REWRITE_OPTIONS[i].0;
            i += 1;
        }
        keys
    };
}
