//! A fleet check before mirroring is turned on: the salt-0 region of each
//! cluster ID, the IDs that share one, and the chance that some two of that
//! many clusters would. One definition for the CLI (`mirrorpid clusters
//! check`) and the playground's planner (`planClusters`).
//!
//! Two origin clusters sharing a region can still merge two producers
//! silently (`docs/DESIGN.md`, "Residual risk"): their producers with the
//! same pid40 meeting in one partition by two different paths. Renaming one
//! of the clusters, or keeping their producers from meeting that way, closes
//! the gap; this check finds the pairs.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::mapper::SourceCluster;
use crate::pid::{self, Origin};

/// The most cluster IDs one check takes (a fleet, not a flood: the page's
/// planner is fed by whoever pastes into it).
pub const MAX_PLAN_CLUSTERS: usize = 100_000;

/// One cluster ID and its region at salt 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedCluster {
    /// The cluster ID.
    pub id: String,
    /// Its 22-bit region at salt 0.
    pub region: u32,
}

/// A region shared by two or more of the IDs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedRegion {
    /// The region.
    pub region: u32,
    /// The IDs in it, in the order given.
    pub clusters: Vec<String>,
}

/// The check of a fleet.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPlan {
    /// Each distinct ID, in the order given.
    pub clusters: Vec<PlannedCluster>,
    /// Regions held by more than one ID, in region order.
    pub shared_regions: Vec<SharedRegion>,
    /// The probability that some two of this many random cluster IDs share
    /// a region ([`pid::shared_region_probability`]).
    pub shared_region_probability: f64,
}

/// The cluster IDs of a list as people write one: one ID per line, blank
/// lines and `#` comments ignored, spaces around an ID trimmed.
pub fn cluster_ids(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
}

/// Checks `ids` (each once; a repeated ID counts once, it is one cluster).
///
/// Fails on an ID that is not a valid source cluster ID (1 to 32767 bytes)
/// and on more than [`MAX_PLAN_CLUSTERS`] distinct IDs.
pub fn plan<'a>(ids: impl IntoIterator<Item = &'a str>) -> Result<ClusterPlan> {
    let mut clusters: Vec<PlannedCluster> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for id in ids {
        SourceCluster::new(id)?;
        if !seen.insert(id) {
            continue;
        }
        if clusters.len() == MAX_PLAN_CLUSTERS {
            return Err(Error::invalid(text!(
                "more than {MAX_PLAN_CLUSTERS} cluster IDs: check a fleet at a time"
            )));
        }
        clusters.push(PlannedCluster {
            id: id.to_owned(),
            region: pid::region(Origin::Cluster(id), 0),
        });
    }
    let mut by_region: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
    for c in &clusters {
        by_region.entry(c.region).or_default().push(c.id.clone());
    }
    let shared_regions = by_region
        .into_iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(region, clusters)| SharedRegion { region, clusters })
        .collect();
    Ok(ClusterPlan {
        shared_region_probability: pid::shared_region_probability(clusters.len()),
        clusters,
        shared_regions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_reference_pair_and_only_it() {
        let p = plan(["A", "cluster-2123", "B", "cluster-2336", "A"]).unwrap();
        let ids: Vec<&str> = p.clusters.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["A", "cluster-2123", "B", "cluster-2336"], "A once");
        assert_eq!(
            p.shared_regions,
            [SharedRegion {
                region: 0x192b06,
                clusters: vec!["cluster-2123".into(), "cluster-2336".into()],
            }]
        );
        assert_eq!(p.clusters[0].region, 0x343525);
        assert_eq!(
            p.shared_region_probability,
            pid::shared_region_probability(4)
        );
    }

    #[test]
    fn reads_a_list_as_people_write_it() {
        let text = "# our fleet\n  A  \n\nB # the DR site\r\ncluster-2123\n";
        assert_eq!(
            cluster_ids(text).collect::<Vec<_>>(),
            ["A", "B", "cluster-2123"]
        );
    }

    #[test]
    fn refuses_bad_ids_and_floods() {
        assert!(plan([""]).is_err());
        let long = "x".repeat(40_000);
        assert!(plan([long.as_str()]).is_err());
        let many: Vec<String> = (0..=MAX_PLAN_CLUSTERS).map(|i| i.to_string()).collect();
        let e = plan(many.iter().map(String::as_str)).unwrap_err();
        assert!(e.to_string().contains("more than 100000"), "{e}");
        let p = plan(std::iter::empty()).unwrap();
        assert!(p.clusters.is_empty() && p.shared_region_probability == 0.0);
    }
}
