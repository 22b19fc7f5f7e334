//! What mirrorpid's tests and benchmarks share across its crates (the core,
//! the broker host, the command line): one dependency instead of files
//! included by path.
//!
//! * [`fetch`]: a fetch of one minimal idempotent batch per PID;
//! * [`bench`]: the batches the rewrite benchmarks compare, natively and in
//!   wasmtime, and the 12 header bytes a rewrite changes put back;
//! * [`adversary`]: PIDs and cluster IDs chosen against the hash, beside
//!   random ones;
//! * [`clusters`]: cluster names that share a region, to force collisions;
//! * [`crash`]: the crash-point harness of the persistence protocol, for
//!   any leader;
//! * [`generated`]: a generated file checked against, or written from, its
//!   Rust definitions;
//! * `kp` (not in WebAssembly): batches encoded by the `kafka-protocol`
//!   crate, an implementation independent of mirrorpid's.

pub mod adversary;
pub mod bench;
pub mod clusters;
pub mod crash;
pub mod fetch;
pub mod generated;
#[cfg(not(target_arch = "wasm32"))]
pub mod kp;
