//! PID spaces and the mapping function F, version 1 (`docs/FORMAT.md` §1–2).
//!
//! A mapped PID has bit 62 set, a 22-bit *region* in bits 40..61 and the
//! producer's 40-bit local PID (`pid40`) in bits 0..39:
//!
//! ```text
//! 0 | 1 | region (22 bits) | pid40 (40 bits)
//! ```
//!
//! The region comes from the producer's *origin*: the source cluster's ID
//! for a local PID, or the region already in the PID for one mapped by an
//! upstream hop. F is deterministic and versioned: every broker in a topology
//! must compute the same F, so any change is a new version, never an edit.

use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Error, Result};

/// The version of F this crate implements.
pub const F_VERSION: u8 = 1;
/// Bit 62: set on every mapped PID.
pub const MIRROR_BIT: i64 = 1 << 62;
/// Width of `pid40`.
pub const PID40_BITS: u32 = 40;
/// Mask of `pid40`.
pub const PID40_MASK: i64 = (1 << PID40_BITS) - 1;
/// Width of the region.
pub const REGION_BITS: u32 = 22;
/// Mask of the region (after shifting it down by 40).
pub const REGION_MASK: u32 = (1 << REGION_BITS) - 1;
/// The largest local PID that can be mapped (2^40 - 1).
pub const MAX_LOCAL_PID: i64 = PID40_MASK;
/// How many salts the mapper probes before giving up (salts 0..=63).
pub const MAX_PROBES: u8 = 64;

/// Which of the four PID spaces of `docs/FORMAT.md` §1 a PID is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PidSpace {
    /// `pid < 0`: no producer; passes untouched.
    NoProducer,
    /// `0 <= pid < 2^40`: a local PID of the source cluster.
    Local,
    /// `2^40 <= pid < 2^62`: a local PID too large to map.
    OutOfRange,
    /// `pid >= 2^62`: already mapped by an upstream hop.
    Mirrored,
}

impl PidSpace {
    /// The space `pid` is in.
    pub fn of(pid: i64) -> PidSpace {
        if pid < 0 {
            PidSpace::NoProducer
        } else if pid <= MAX_LOCAL_PID {
            PidSpace::Local
        } else if pid < MIRROR_BIT {
            PidSpace::OutOfRange
        } else {
            PidSpace::Mirrored
        }
    }
}

/// Where a producer's region comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// A local PID: the source cluster's ID.
    Cluster(&'a str),
    /// A mirrored PID: the region it already carries.
    Region(u32),
}

/// An idempotent PID split into its origin and `pid40`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// Where the region comes from.
    pub origin: Origin<'a>,
    /// The low 40 bits kept in the mapped PID.
    pub pid40: i64,
}

/// Splits an incoming PID as `docs/FORMAT.md` §2 says.
///
/// Returns `Ok(None)` for a negative PID (no producer: nothing to map) and
/// [`Error::PidOutOfRange`] for a local PID at or above 2^40.
pub fn split(source_cluster_id: &str, pid: i64) -> Result<Option<Split<'_>>> {
    match PidSpace::of(pid) {
        PidSpace::NoProducer => Ok(None),
        PidSpace::Local => Ok(Some(Split {
            origin: Origin::Cluster(source_cluster_id),
            pid40: pid,
        })),
        PidSpace::OutOfRange => Err(Error::PidOutOfRange { pid }),
        PidSpace::Mirrored => Ok(Some(Split {
            origin: Origin::Region(region_of(pid)),
            pid40: pid & PID40_MASK,
        })),
    }
}

/// The 22-bit region of `origin` at `salt`.
pub fn region(origin: Origin<'_>, salt: u64) -> u32 {
    match origin {
        Origin::Cluster(id) => (xxh3_64_with_seed(id.as_bytes(), salt) >> 42) as u32,
        Origin::Region(r) if salt == 0 => r,
        Origin::Region(r) => (xxh3_64_with_seed(&r.to_be_bytes(), salt) >> 42) as u32,
    }
}

/// The probability that some two of `origins` origin clusters share a
/// salt-0 region: `1 - exp(-N(N-1)/2 / 2^22)`, the residual risk of a
/// silent merge that `docs/DESIGN.md` explains (two producers of two such
/// clusters with the same pid40 meeting by different paths).
pub fn shared_region_probability(origins: usize) -> f64 {
    if origins < 2 {
        return 0.0;
    }
    let n = origins as f64;
    let pairs = n * (n - 1.0) / 2.0;
    -(-pairs / f64::from(1u32 << REGION_BITS)).exp_m1()
}

/// Composes a mapped PID from a region and `pid40`.
pub fn compose(region: u32, pid40: i64) -> i64 {
    MIRROR_BIT | (i64::from(region & REGION_MASK) << PID40_BITS) | (pid40 & PID40_MASK)
}

/// The region bits of a PID (meaningful for mapped PIDs).
pub fn region_of(pid: i64) -> u32 {
    ((pid >> PID40_BITS) as u32) & REGION_MASK
}

/// F v1 on an already split PID.
pub fn f_split(split: Split<'_>, salt: u64) -> i64 {
    compose(region(split.origin, salt), split.pid40)
}

/// F v1: the mapped PID of `pid` arriving from `source_cluster_id` at `salt`.
///
/// Negative PIDs come back unchanged; local PIDs at or above 2^40 are an
/// error, and so is a salt outside 0 to 63 (`InvalidSalt`: a mapper never
/// probes past [`MAX_PROBES`], so no binding has such a salt).
///
/// ```
/// assert_eq!(mirrorpid::map_pid("A", 5, 0).unwrap(), 0x7435250000000005);
/// assert_eq!(mirrorpid::map_pid("A", -1, 0).unwrap(), -1);
/// assert!(mirrorpid::map_pid("A", 5, 64).is_err());
/// ```
pub fn map_pid(source_cluster_id: &str, pid: i64, salt: u64) -> Result<i64> {
    if salt >= u64::from(MAX_PROBES) {
        return Err(crate::Error::InvalidSalt {
            salt: i64::try_from(salt).unwrap_or(i64::MAX),
        });
    }
    Ok(match split(source_cluster_id, pid)? {
        None => pid,
        Some(s) => f_split(s, salt),
    })
}

/// A PID explained: its space and, for a mapped PID, its region and `pid40`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PidInfo {
    /// The PID.
    #[serde(with = "crate::json::i64_str")]
    pub pid: i64,
    /// Which space it is in.
    pub space: PidSpace,
    /// The 22-bit region (mapped PIDs only).
    pub region: Option<u32>,
    /// The low 40 bits (mapped and local PIDs).
    #[serde(with = "crate::json::opt_i64_str")]
    pub pid40: Option<i64>,
}

/// Explains a PID (`docs/FORMAT.md` §1–2): its space, and region/`pid40` where they exist.
pub fn decode_pid(pid: i64) -> PidInfo {
    let space = PidSpace::of(pid);
    let (region, pid40) = match space {
        PidSpace::Mirrored => (Some(region_of(pid)), Some(pid & PID40_MASK)),
        PidSpace::Local => (None, Some(pid)),
        _ => (None, None),
    };
    PidInfo {
        pid,
        space,
        region,
        pid40,
    }
}

/// Whether `pid` was mapped by an upstream hop.
pub fn is_mirrored(pid: i64) -> bool {
    PidSpace::of(pid) == PidSpace::Mirrored
}

/// How a cluster's producers come to carry a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Via {
    /// Its own producers, mapped at a salt: its ID's region at that salt.
    Local,
    /// Producers mirrored from it and salted by a later hop: its salt-0
    /// region's region at that salt.
    Mirrored,
}

/// One way a cluster's producers carry a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RegionOwner<'a> {
    /// The cluster's ID.
    pub cluster: &'a str,
    /// The salt.
    pub salt: u8,
    /// How.
    pub via: Via,
}

/// Whose producers a mapped PID's `region` may be: every way one of
/// `clusters` carries it, at every salt a mapper probes, each cluster in
/// turn and salts in order. What `pid decode --clusters` prints and the
/// playground's decoder shows; empty when none of them does.
///
/// ```
/// use mirrorpid::pid::{owners, region_of, Via};
/// let region = region_of(mirrorpid::map_pid("A", 5, 3).unwrap());
/// let found = owners(region, ["B", "A"]);
/// assert_eq!((found[0].cluster, found[0].salt, found[0].via), ("A", 3, Via::Local));
/// ```
pub fn owners<'a>(
    region: u32,
    clusters: impl IntoIterator<Item = &'a str>,
) -> Vec<RegionOwner<'a>> {
    let mut found = Vec::new();
    for cluster in clusters {
        let home = self::region(Origin::Cluster(cluster), 0);
        for salt in 0..MAX_PROBES {
            let s = u64::from(salt);
            if self::region(Origin::Cluster(cluster), s) == region {
                found.push(RegionOwner {
                    cluster,
                    salt,
                    via: Via::Local,
                });
            }
            if salt > 0 && self::region(Origin::Region(home), s) == region {
                found.push(RegionOwner {
                    cluster,
                    salt,
                    via: Via::Mirrored,
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_name_each_cluster_salt_and_way_a_region_is_carried() {
        // Mirrored from A (salt 0), then salted again at 9 by a later hop.
        let home = region_of(map_pid("A", 7, 0).unwrap());
        let resalted = map_pid("B", compose(home, 7), 9).unwrap();
        let found = owners(region_of(resalted), ["B", "A"]);
        let mirrored = RegionOwner {
            cluster: "A",
            salt: 9,
            via: Via::Mirrored,
        };
        assert!(found.contains(&mirrored), "{found:?}");
        assert!(found
            .iter()
            .all(|o| o.cluster == "A" || o.via == Via::Local));
        // Salt 0 is never "mirrored": a hop keeping a region is no salt.
        let at_home = owners(home, ["A"]);
        assert_eq!(at_home[0].salt, 0);
        assert!(at_home.iter().all(|o| o.salt > 0 || o.via == Via::Local));
        // B carries A's home region in no way, at no salt.
        assert_eq!(owners(home, ["B"]), []);
        assert!(owners(home, std::iter::empty()).is_empty());
    }

    #[test]
    fn shared_region_probability_matches_the_design_table() {
        // docs/DESIGN.md: N=10 -> 1.1e-5, N=100 -> 1.2e-3, N=1000 -> 0.11.
        for (n, p) in [(3, 7.2e-7), (10, 1.1e-5), (100, 1.2e-3), (1000, 0.11)] {
            let got = super::shared_region_probability(n);
            assert!((got - p).abs() / p < 0.05, "N={n}: {got}");
        }
        assert_eq!(super::shared_region_probability(1), 0.0);
    }

    #[test]
    fn spec_example() {
        assert_eq!(region(Origin::Cluster("A"), 0), 0x343525);
        assert_eq!(map_pid("A", 5, 0).unwrap(), 8373639764095533061);
    }

    #[test]
    fn spaces_at_their_edges() {
        assert_eq!(PidSpace::of(-1), PidSpace::NoProducer);
        assert_eq!(PidSpace::of(i64::MIN), PidSpace::NoProducer);
        assert_eq!(PidSpace::of(0), PidSpace::Local);
        assert_eq!(PidSpace::of(MAX_LOCAL_PID), PidSpace::Local);
        assert_eq!(PidSpace::of(MAX_LOCAL_PID + 1), PidSpace::OutOfRange);
        assert_eq!(PidSpace::of(MIRROR_BIT - 1), PidSpace::OutOfRange);
        assert_eq!(PidSpace::of(MIRROR_BIT), PidSpace::Mirrored);
        assert_eq!(PidSpace::of(i64::MAX), PidSpace::Mirrored);
        assert_eq!(
            map_pid("A", 1 << 40, 0),
            Err(Error::PidOutOfRange { pid: 1 << 40 })
        );
    }

    #[test]
    fn mirrored_pid_at_salt_zero_passes_through() {
        let m = map_pid("A", 5, 0).unwrap();
        assert_eq!(map_pid("B", m, 0).unwrap(), m);
        assert_ne!(map_pid("B", m, 1).unwrap(), m);
        let info = decode_pid(m);
        assert_eq!(info.region, Some(0x343525));
        assert_eq!(info.pid40, Some(5));
    }
}
