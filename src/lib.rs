//! # mirrorpid
//!
//! Kafka allocates producer IDs (PIDs) from 0 on every cluster, so when
//! batches from several clusters are mirrored into one partition, unrelated
//! producers share a PID and the broker's producer state silently accepts
//! wrong sequences, lower epochs and foreign transaction markers.
//!
//! mirrorpid gives every producer mirrored into a partition its own PID:
//!
//! * [`pid`]: the PID spaces and the mapping function F v1 (hashed region +
//!   the producer's 40-bit PID, bit 62 set so mapped PIDs stay positive and
//!   never meet local ones).
//! * [`mapper`]: one [`Mapper`] per destination partition: detects slot
//!   collisions and resolves them with a deterministic salt, tracks expiry
//!   and open transactions.
//! * [`plan`]: a fleet's cluster IDs checked for shared regions before
//!   mirroring starts.
//! * [`record`]: the `__mirror_state` records that persist its decisions so
//!   that a new leader maps identically; [`snapshot`]: its whole state.
//! * [`batch`] and [`rewrite`]: the data path. Fetch bytes → batch headers
//!   → mapper → the same bytes with producerId rewritten and the CRC patched
//!   without reading the records.
//! * `sim` (feature `sim`, on with `js`): a topology simulator comparing
//!   verbatim mirroring, the stateless `-(pid+2)` rewrite and mirrorpid. A
//!   broker's build leaves it out.
//!
//! The core is plain safe Rust (but for one call into x86-64 CRC
//! instructions) with no clock and no randomness: the host passes
//! `now_ms`, and the same inputs give the same outputs on every engine.
//! Thin adapters expose it: the wasm-bindgen API (feature `js`, `src/js/`),
//! and the broker ABI (crate `mirrorpid-broker`, with `mirrorpid-abi` the
//! facts its hosts share).
//!
//! ```
//! use mirrorpid::{Mapper, MapperConfig};
//! let topic = "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap();
//! let mut m = Mapper::new(MapperConfig::new(topic, 0)).unwrap();
//! let out = m.map("A", 5, 1_000).unwrap();
//! assert_eq!(out.mapped, 0x7435250000000005);
//! assert!(out.record.is_some()); // persist it to __mirror_state
//! ```

#![deny(missing_docs)]

/// `format!` without its panic (`error::text`): what the module's code
/// formats with.
macro_rules! text {
    ($($arg:tt)*) => {
        $crate::error::text(format_args!($($arg)*))
    };
}

/// An item of the broker module's API (feature `broker`): public with the
/// feature, crate-private without, so that the default public surface is
/// the library a Rust user maps and rewrites with, not the slot plumbing a
/// host that keeps records in its own buffers builds on.
macro_rules! broker_api {
    ($(#[$attr:meta])* pub $($item:tt)*) => {
        #[cfg(feature = "broker")]
        $(#[$attr])*
        pub $($item)*
        #[cfg(not(feature = "broker"))]
        #[allow(dead_code)]
        $(#[$attr])*
        pub(crate) $($item)*
    };
}

pub mod batch;
pub(crate) mod crc;
pub mod error;
pub(crate) mod json;
pub mod mapper;
#[cfg(feature = "peer")]
pub mod peer;
pub mod pid;
pub mod plan;
pub mod record;
pub mod rewrite;
#[cfg(feature = "sim")]
pub mod sim;
pub mod snapshot;
pub mod topic;
pub(crate) mod vec;
pub(crate) mod wire;

#[cfg(feature = "js")]
pub mod js;

/// The README's Rust example, compiled by `cargo test` as a doctest so that
/// it cannot drift from the API it shows.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;

pub use error::{Code, Error, Result};
pub use mapper::{
    BindingView, Call, Collision, Durability, KnownSource, LoadOutcome, MapOutcome, Mapper,
    MapperConfig, Origins, Source, SourceCluster,
};
pub use pid::{decode_pid, map_pid, PidInfo, PidSpace};
pub use record::{StateKey, StateRecord, StateValue};
pub use rewrite::{BatchOutcome, Rewrite, RewriteOptions, RewriteResult};
pub use topic::TopicId;
