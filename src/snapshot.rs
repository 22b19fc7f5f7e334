//! Snapshots: the whole state of a mapper as versioned, checksummed bytes.
//!
//! ```text
//! "MPIDSNAP" | u16 format 3 | u8 F version 1
//! | uuid TopicId | i32 Partition | u8 durability (0 bindings, 1 collisions) | i64 expirationMs
//! | u8 0 (no trust declaration) or 1 + u32 k × (STRING source | u32 m × STRING origin)   (absent in format 1)
//! | u64 maxBindings | u64 maxClusters | u64 maxClusterIdBytes                           (absent before format 3)
//! | u32 n | n × STRING cluster ID (those the bindings use)
//! | u32 m | m × (u32 cluster | i64 pid | i64 mapped | u8 salt | u8 flags | i64 lastSeenMs)
//! | u32 CRC-32C of every byte before it
//! ```
//!
//! All integers are big-endian. [`Mapper::restore`] checks the magic, the
//! versions, the checksum, and then that every binding is one F v1 would
//! make and that no two different producers share a slot: it returns a new
//! mapper or an error, never a partial state.

use crate::error::{Error, Quoted, Result};
use crate::mapper::table::PERSISTED_FLAGS;
use crate::mapper::{Binding, Durability, Mapper, MapperConfig, Table, Wire};
use crate::pid::{self, MAX_PROBES};
use crate::topic::TopicId;
use crate::wire::{self, Reader};

/// The first eight bytes of every snapshot.
pub const SNAPSHOT_MAGIC: &[u8; 8] = b"MPIDSNAP";
/// The snapshot format this build writes. It reads this one, format 2
/// (without the capacity limits: a restored mapper gets the defaults, or
/// what it holds if that is more) and format 1 (without the trust
/// declaration either).
pub const SNAPSHOT_FORMAT: u16 = 3;
const BINDING_BYTES: usize = 4 + 8 + 8 + 1 + 1 + 8;

/// A cluster ID as a Kafka STRING (int16 length, UTF-8).
fn put_name(out: &mut Vec<u8>, name: &str) {
    wire::put_i16(out, name.len() as i16);
    out.extend_from_slice(name.as_bytes());
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::CorruptSnapshot {
        reason: reason.into(),
    }
}

impl Mapper {
    /// The confirmed state as snapshot bytes: pending bindings (not yet
    /// confirmed durable) are left out, as if [`Mapper::abort`] had run.
    ///
    /// Panics only if memory runs out; [`Mapper::try_snapshot`] returns
    /// [`Error::OutOfMemory`] instead.
    pub fn snapshot(&self) -> Vec<u8> {
        self.try_snapshot().expect("memory for a snapshot")
    }

    /// [`Mapper::snapshot`], or [`Error::OutOfMemory`] if there is no room
    /// for it (it allocates its whole size once, up front).
    pub fn try_snapshot(&self) -> Result<Vec<u8>> {
        let (clusters, bindings) = self.confirmed();
        // Only the names confirmed bindings use, renumbered in order: the
        // names of expired sources are not carried forward.
        let mut renumber = Vec::new();
        renumber
            .try_reserve_exact(clusters.len())
            .map_err(|_| crate::vec::out_of_memory("a snapshot"))?;
        renumber.resize(clusters.len(), u32::MAX);
        for b in bindings.clone() {
            if let Some(r) = renumber.get_mut(b.cluster as usize) {
                *r = 0;
            }
        }
        let mut kept = 0u32;
        let mut names_bytes = 0;
        for (r, name) in renumber.iter_mut().zip(clusters) {
            if *r == 0 {
                *r = kept;
                kept += 1;
                names_bytes += 2 + name.len();
            }
        }
        let origins_bytes: usize = self
            .config
            .origins
            .iter()
            .flat_map(|o| o.iter())
            .map(|(s, o)| 6 + s.len() + o.iter().map(|o| 2 + o.len()).sum::<usize>())
            .sum();
        let size = 64 + 24 + origins_bytes + names_bytes + bindings.len() * BINDING_BYTES;
        let mut out = Vec::new();
        out.try_reserve_exact(size)
            .map_err(|_| crate::vec::out_of_memory("a snapshot"))?;
        out.extend_from_slice(SNAPSHOT_MAGIC);
        out.extend_from_slice(&SNAPSHOT_FORMAT.to_be_bytes());
        out.push(pid::F_VERSION);
        let c = &self.config;
        out.extend_from_slice(c.topic_id.as_bytes());
        wire::put_i32(&mut out, c.partition);
        out.push(match c.durability {
            Durability::Bindings => 0,
            Durability::Collisions => 1,
        });
        wire::put_i64(&mut out, c.producer_expiration_ms);
        // Format 2: the trust declaration (cluster IDs are checked to fit
        // a STRING when the config is validated).
        match &c.origins {
            None => out.push(0),
            Some(map) => {
                out.push(1);
                wire::put_u32(&mut out, map.len() as u32);
                for (source, origins) in map.iter() {
                    put_name(&mut out, source);
                    wire::put_u32(&mut out, origins.len() as u32);
                    for o in origins {
                        put_name(&mut out, o);
                    }
                }
            }
        }
        // Format 3: the capacity limits.
        for limit in [c.max_bindings, c.max_clusters, c.max_cluster_id_bytes] {
            out.extend_from_slice(&limit.to_be_bytes());
        }
        wire::put_u32(&mut out, kept);
        for (name, &r) in clusters.iter().zip(&renumber) {
            // Cluster IDs are checked to fit a STRING when first seen.
            if r != u32::MAX {
                put_name(&mut out, name);
            }
        }
        wire::put_u32(&mut out, bindings.len() as u32);
        for b in bindings {
            let cluster = renumber.get(b.cluster as usize).copied();
            wire::put_u32(&mut out, cluster.unwrap_or(u32::MAX));
            wire::put_i64(&mut out, b.pid.value());
            wire::put_i64(&mut out, b.mapped.value());
            out.push(b.salt);
            out.push(b.flags & PERSISTED_FLAGS);
            wire::put_i64(&mut out, b.last_seen);
        }
        let crc = crate::crc::crc32c(&out);
        wire::put_u32(&mut out, crc);
        Ok(out)
    }

    /// A new mapper from snapshot bytes; rejects foreign, truncated, corrupt
    /// or inconsistent snapshots.
    pub fn restore(bytes: &[u8]) -> Result<Mapper> {
        // In this order: the magic (is it ours at all?), the checksum (is
        // it whole?), then the versions (can this build read it?), so a
        // damaged version byte is corruption, not an unknown version.
        if bytes.len() < SNAPSHOT_MAGIC.len() || &bytes[..8] != SNAPSHOT_MAGIC {
            return Err(Error::ForeignSnapshot {});
        }
        if bytes.len() < 8 + 3 + 4 {
            return Err(corrupt("truncated: no header and checksum"));
        }
        let (body, tail) = bytes.split_at(bytes.len() - 4);
        let stored = u32::from_be_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let computed = crate::crc::crc32c(body);
        if stored != computed {
            return Err(corrupt(text!(
                "checksum {stored:#010x} does not match contents {computed:#010x} (truncated or damaged)"
            )));
        }
        let format = u16::from_be_bytes([bytes[8], bytes[9]]);
        if !(1..=SNAPSHOT_FORMAT).contains(&format) {
            return Err(Error::UnknownVersion {
                what: "snapshot format",
                version: i32::from(format),
            });
        }
        if bytes[10] != pid::F_VERSION {
            return Err(Error::UnknownVersion {
                what: "snapshot mapping function F",
                version: i32::from(bytes[10]),
            });
        }
        decode_body(&body[11..], format).map_err(|e| match e {
            Error::Truncated { what, .. } => corrupt(text!("truncated at {what}")),
            Error::TrailingBytes { extra, .. } => corrupt(text!("{extra} trailing bytes")),
            Error::InvalidUtf8 { field } | Error::InvalidLength { field, .. } => {
                corrupt(text!("bad {field}"))
            }
            other => other,
        })
    }
}

// Out of line, in two parts: each stays under HotSpot's 8,000 bytes of
// bytecode once Chicory compiles the module.
#[inline(never)]
fn decode_body(body: &[u8], format: u16) -> Result<Mapper> {
    let mut r = Reader::new(body);
    let topic_id = TopicId(r.uuid("TopicId")?);
    let partition = r.i32("Partition")?;
    let durability = match r.u8("durability")? {
        0 => Durability::Bindings,
        1 => Durability::Collisions,
        d => return Err(corrupt(text!("unknown durability {d}"))),
    };
    let producer_expiration_ms = r.i64("expirationMs")?;
    let origins = decode_origins(&mut r, format)?;
    let mut config = MapperConfig {
        topic_id,
        partition,
        durability,
        producer_expiration_ms,
        origins,
        ..MapperConfig::new(topic_id, partition)
    };
    if format >= 3 {
        config.max_bindings = r.i64("maxBindings")? as u64;
        config.max_clusters = r.i64("maxClusters")? as u64;
        config.max_cluster_id_bytes = r.i64("maxClusterIdBytes")? as u64;
    }
    config.validate().map_err(|e| corrupt(text!("{e}")))?;
    let n_clusters = r.u32("cluster count")? as usize;
    let mut names = Vec::new();
    for _ in 0..n_clusters {
        names.push(r.string("cluster ID")?);
    }
    let n_bindings = r.u32("binding count")? as usize;
    let name_bytes: usize = names.iter().map(String::len).sum();
    if format < 3 {
        // Older snapshots had no limits: the defaults, raised to fit.
        config.max_bindings = config.max_bindings.max(n_bindings as u64);
        config.max_clusters = config.max_clusters.max(n_clusters as u64);
        config.max_cluster_id_bytes = config.max_cluster_id_bytes.max(name_bytes as u64);
    }
    for (limit, held, max) in [
        ("maxBindings", n_bindings, config.max_bindings),
        ("maxClusters", n_clusters, config.max_clusters),
        ("maxClusterIdBytes", name_bytes, config.max_cluster_id_bytes),
    ] {
        if held as u64 > max {
            return Err(corrupt(text!("{held} is more than its {limit} {max}")));
        }
    }
    if r.remaining() != n_bindings.saturating_mul(BINDING_BYTES) {
        return Err(corrupt(text!(
            "{n_bindings} bindings need {} bytes, {} remain",
            n_bindings.saturating_mul(BINDING_BYTES),
            r.remaining()
        )));
    }
    let mut restored = Mapper::with_table(config, Table::with_capacity(n_clusters, n_bindings)?);
    for name in &names {
        if name.is_empty() || restored.table.find_cluster(name).is_some() {
            let name = Quoted(name);
            return Err(corrupt(text!("cluster ID {name} empty or repeated")));
        }
        restored.table.intern(name);
    }
    decode_bindings(&mut r, &mut restored, n_bindings)?;
    r.finish("snapshot")?;
    // Names that only older formats could carry without a binding.
    restored.table.compact_clusters();
    Ok(restored)
}

/// The trust declaration of a snapshot (format 2 on), out of line as
/// [`decode_body`] is.
#[inline(never)]
fn decode_origins(r: &mut Reader<'_>, format: u16) -> Result<Option<crate::mapper::Origins>> {
    Ok(
        match (
            format,
            if format == 1 {
                0
            } else {
                r.u8("origins flag")?
            },
        ) {
            (1, _) | (_, 0) => None,
            (_, 1) => {
                let mut map = crate::mapper::Origins::default();
                for _ in 0..r.u32("origins count")? {
                    let source = r.string("origins source")?;
                    let n = r.u32("origins list length")?;
                    let list = (0..n)
                        .map(|_| r.string("origin"))
                        .collect::<Result<Vec<_>>>()?;
                    // Written in ascending order of source, each once: a source
                    // out of order or twice was not written by a mapper.
                    if map
                        .iter()
                        .last()
                        .is_some_and(|(last, _)| last >= source.as_str())
                    {
                        return Err(corrupt(text!(
                            "origins declare \"{source}\" out of order or twice"
                        )));
                    }
                    map.insert(source, list);
                }
                Some(map)
            }
            (_, flag) => return Err(corrupt(text!("origins flag {flag}"))),
        },
    )
}

/// The bindings of a snapshot, each checked, into `restored` (out of line
/// as [`decode_body`] is).
#[inline(never)]
fn decode_bindings(r: &mut Reader<'_>, restored: &mut Mapper, n: usize) -> Result<()> {
    for _ in 0..n {
        let b = Binding {
            cluster: r.u32("binding cluster")?,
            pid: Wire::of(r.i64("binding pid")?),
            mapped: Wire::of(r.i64("binding mapped")?),
            salt: r.u8("binding salt")?,
            flags: r.u8("binding flags")?,
            last_seen: r.i64("binding lastSeen")?,
        };
        restored.check_restored(&b)?;
        restored.table.insert(b);
    }
    Ok(())
}

impl Mapper {
    /// Checks that `b` is a binding this mapper could have made.
    fn check_restored(&self, b: &Binding) -> Result<()> {
        let (pid, mapped) = (b.pid.value(), b.mapped.value());
        let name = self
            .table
            .clusters()
            .get(b.cluster as usize)
            .ok_or_else(|| corrupt(text!("binding names cluster #{}", b.cluster)))?;
        if b.salt >= MAX_PROBES || b.flags & !PERSISTED_FLAGS != 0 {
            return Err(corrupt(text!(
                "binding of PID {} has salt {} / flags {:#x}",
                pid,
                b.salt,
                b.flags
            )));
        }
        let split = match pid::split(name, pid) {
            Ok(Some(split)) => split,
            _ => return Err(corrupt(text!("binding of unmappable PID {}", pid))),
        };
        if pid::f_split(split, u64::from(b.salt)) != mapped {
            return Err(corrupt(text!(
                "binding {}/{} -> {} is not F v1 at salt {}",
                Quoted(name),
                pid,
                mapped,
                b.salt
            )));
        }
        if self.lookup(name, pid).is_some() {
            return Err(corrupt(text!(
                "identity {}/{} bound twice",
                Quoted(name),
                pid
            )));
        }
        if self.slot_taken(Some(b.cluster), pid, b.salt, mapped) {
            return Err(corrupt(text!(
                "mapped PID {} is shared by different producers",
                mapped
            )));
        }
        Ok(())
    }
}
