//! The trust declaration (`MapperConfig::origins`): which origin clusters
//! each direct source may carry. A mirrored PID names its origin only by
//! its region, so a source is trusted with the regions its declared
//! origins' producers can have: each origin's region at every salt (the
//! first mirror hop salts on a collision), and each of those re-salted once
//! more (a second hop's collision).

use crate::pid::{region, Origin, MAX_PROBES};

/// Per direct source, the sorted regions it may carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trust {
    /// Sorted by source, as `origins` iterates: found by binary search (a
    /// second map type would add its code to the broker module).
    allowed: Vec<(String, Vec<u32>)>,
}

impl Trust {
    pub(crate) fn new(origins: &super::Origins) -> Trust {
        let allowed = origins
            .iter()
            .map(|(source, origins)| {
                let mut regions: Vec<u32> = origins.iter().flat_map(|o| regions_of(o)).collect();
                super::heapsort(&mut regions);
                regions.dedup();
                (source.to_owned(), regions)
            })
            .collect();
        Trust { allowed }
    }

    /// Whether `source` may carry a mirrored PID of `region`.
    pub(crate) fn allows(&self, source: &str, region: u32) -> bool {
        self.allowed
            .binary_search_by(|(s, _)| s.as_str().cmp(source))
            .ok()
            .and_then(|i| self.allowed.get(i))
            .is_some_and(|(_, regions)| regions.binary_search(&region).is_ok())
    }
}

/// The regions an origin's producers can have after at most two hops.
fn regions_of(origin: &str) -> Vec<u32> {
    let first: Vec<u32> = (0..u64::from(MAX_PROBES))
        .map(|s| region(Origin::Cluster(origin), s))
        .collect();
    let mut all = first.clone();
    for &r in &first {
        all.extend((1..u64::from(MAX_PROBES)).map(|s| region(Origin::Region(r), s)));
    }
    all
}
