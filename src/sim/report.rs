//! What a run reports: per partition, the corruption each strategy left,
//! mirrorpid's bindings and records; per producer, its PID at every hop;
//! totals computed here once, so no reader adds them up again.

use serde::Serialize;

use super::psm::{Corruption, EntryRow, Kind, Refusals};
use super::scenario::Scenario;
use super::{PerStrategy, Sim, Strategy};
use crate::pid;

/// The PIDs a batch of one producer carried at one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hop {
    /// The cluster.
    pub cluster: String,
    /// How many mirror hops from the producer's own cluster (0 = local).
    pub distance: u32,
    /// The PID there, per strategy (decimal strings).
    pub pid: PerStrategy<String>,
}

/// One producer's path through the topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerPath {
    /// The producer.
    pub producer: String,
    /// Its own cluster.
    pub cluster: String,
    /// Every cluster its batches reached.
    pub hops: Vec<Hop>,
}

/// One binding of a destination's mirrorpid mapper, with who it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityRow {
    /// The direct source cluster.
    pub source: String,
    /// The PID as it arrived (decimal).
    pub pid: String,
    /// The true producer(s) behind it.
    pub producers: Vec<String>,
    /// The mapped PID (decimal).
    pub mapped: String,
    /// The mapped PID in hex.
    pub mapped_hex: String,
    /// Its region.
    pub region: u32,
    /// Its pid40 (decimal).
    pub pid40: String,
    /// The salt.
    pub salt: u8,
    /// For a salted binding: the cluster holding its salt-0 slot.
    pub colliding_cluster: Option<String>,
}

/// A `__mirror_state` record as shown to people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordRow {
    /// Key bytes in hex.
    pub key_hex: String,
    /// Value bytes in hex (`None`: tombstone).
    pub value_hex: Option<String>,
    /// The JSON form.
    pub json: serde_json::Value,
}

/// One producer's batches across one mirror link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Crossing {
    /// The true producer.
    pub producer: String,
    /// The PID its last batch carried into the destination (after the
    /// hop's rewrite), per strategy (decimal strings).
    pub pid: PerStrategy<String>,
}

/// A mirror link and what crossed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkReport {
    /// The source cluster.
    pub from: String,
    /// The destination cluster.
    pub to: String,
    /// Whether the link still mirrors at the end (a failover or a
    /// `removeLink` stops it).
    pub active: bool,
    /// Every producer whose batches crossed it, in producer order.
    pub crossings: Vec<Crossing>,
}

/// A silent corruption, or an append Kafka refused, at one partition, under one strategy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IncidentRow {
    /// The strategy.
    pub strategy: Strategy,
    /// The partition's cluster.
    pub cluster: String,
    /// Which count it adds to.
    pub kind: Kind,
    /// What went wrong in the producer state, in a sentence.
    pub text: String,
}

/// One event of the run and what it did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// What happened, in a line.
    pub text: String,
    /// Corruption totals over all partitions after it, per strategy.
    pub totals: PerStrategy<u32>,
    /// Refusal totals over all partitions after it, per strategy.
    pub refused: PerStrategy<u32>,
    /// The silent corruptions and refusals it caused, at most
    /// [`super::MAX_INCIDENTS_PER_EVENT`] of them in words.
    pub incidents: Vec<IncidentRow>,
    /// How many more it caused than `incidents` lists.
    pub unsaid: u32,
}

/// One partition (cluster) after the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionReport {
    /// The cluster.
    pub cluster: String,
    /// Whether local producers may write (a failover makes a mirror writable).
    pub writable: bool,
    /// Clusters mirrored into it (at the end).
    pub sources: Vec<String>,
    /// Batches in its log.
    pub batches: u32,
    /// mirrorpid's bindings here.
    pub identities: Vec<IdentityRow>,
    /// Silent corruptions per strategy.
    pub corruption: PerStrategy<Corruption>,
    /// Appends Kafka refused here, per strategy (loud, not silent).
    pub refusals: PerStrategy<Refusals>,
    /// Copies (a second path's) the host dropped before appending, per
    /// strategy: only mirrorpid's loop can tell them, so only it drops them.
    pub duplicates: PerStrategy<u32>,
    /// What Kafka's producer state holds here, per strategy.
    pub producer_state: PerStrategy<Vec<EntryRow>>,
    /// The `__mirror_state` log mirrorpid wrote here, in order.
    pub records: Vec<RecordRow>,
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The scenario's name.
    pub name: String,
    /// One entry per cluster, in scenario order.
    pub partitions: Vec<PartitionReport>,
    /// One entry per producer.
    pub paths: Vec<ProducerPath>,
    /// Every mirror link that existed during the run, in (from, to) order
    /// of the clusters' positions.
    pub links: Vec<LinkReport>,
    /// Corruption summed over partitions.
    pub totals: PerStrategy<Corruption>,
    /// Refusals summed over partitions.
    pub refused: PerStrategy<Refusals>,
    /// One step per event, in order.
    pub timeline: Vec<Step>,
}

impl Sim {
    /// The report of a finished run.
    pub(super) fn report(self, s: &Scenario) -> Report {
        let mut totals = PerStrategy::<Corruption>::default();
        let mut refused = PerStrategy::<Refusals>::default();
        let mut partitions = Vec::new();
        for (c, name) in self.clusters.iter().enumerate() {
            let mut corruption = PerStrategy::<Corruption>::default();
            let mut duplicates = PerStrategy::<u32>::default();
            let mut refusals = PerStrategy::<Refusals>::default();
            let mut producer_state = PerStrategy::<Vec<EntryRow>>::default();
            for world in self.worlds.iter() {
                *corruption.get_mut(world.strategy) = world.psm[c].corruption;
                *duplicates.get_mut(world.strategy) = world.psm[c].duplicates;
                *producer_state.get_mut(world.strategy) = world.psm[c].entries();
                totals.get_mut(world.strategy).add(&world.psm[c].corruption);
                *refusals.get_mut(world.strategy) = world.psm[c].refusals;
                refused.get_mut(world.strategy).add(&world.psm[c].refusals);
            }
            let world = &self.worlds.mirrorpid;
            let identities = world.mappers[c]
                .as_ref()
                .map(|m| {
                    m.bindings()
                        .map(|b| {
                            let info = pid::decode_pid(b.mapped);
                            let producers = self
                                .who
                                .get(&(c, b.source_cluster_id.to_owned(), b.pid))
                                .map(|set| {
                                    set.iter().map(|&p| self.producers[p].id.clone()).collect()
                                })
                                .unwrap_or_default();
                            let colliding = (b.salt > 0).then(|| {
                                world.state_topic[c]
                                    .iter()
                                    .rev()
                                    .find(|r| {
                                        r.key.source_cluster_id == b.source_cluster_id
                                            && r.key.original_pid == b.pid
                                    })
                                    .and_then(|r| r.value.as_ref())
                                    .map(|v| v.colliding_cluster_id.clone())
                                    .unwrap_or_default()
                            });
                            IdentityRow {
                                source: b.source_cluster_id.to_owned(),
                                pid: b.pid.to_string(),
                                producers,
                                mapped: b.mapped.to_string(),
                                mapped_hex: format!("{:#018x}", b.mapped),
                                region: info.region.unwrap_or(0),
                                pid40: info.pid40.unwrap_or(0).to_string(),
                                salt: b.salt,
                                colliding_cluster: colliding,
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            let records = world.state_topic[c]
                .iter()
                .map(|r| {
                    let (k, v) = r.encode().unwrap_or_default();
                    RecordRow {
                        key_hex: hex(&k),
                        value_hex: v.as_deref().map(hex),
                        json: r.to_json(),
                    }
                })
                .collect();
            partitions.push(PartitionReport {
                cluster: name.clone(),
                writable: self.writable[c],
                sources: self
                    .links
                    .iter()
                    .filter(|l| l.1 == c)
                    .map(|l| self.clusters[l.0].clone())
                    .collect(),
                batches: self.worlds.verbatim.logs[c],
                identities,
                corruption,
                refusals,
                duplicates,
                producer_state,
                records,
            });
        }
        let paths = self
            .producers
            .iter()
            .enumerate()
            .map(|(p, pr)| ProducerPath {
                producer: pr.id.clone(),
                cluster: self.clusters[pr.cluster].clone(),
                hops: self
                    .hops
                    .range((p, 0)..(p + 1, 0))
                    .map(|(&(_, c), (distance, pids))| Hop {
                        cluster: self.clusters[c].clone(),
                        distance: *distance,
                        pid: pid_strings(pids),
                    })
                    .collect(),
            })
            .collect();
        let links = self
            .ever_linked
            .iter()
            .map(|&(from, to)| LinkReport {
                from: self.clusters[from].clone(),
                to: self.clusters[to].clone(),
                active: self.links.contains(&(from, to)),
                crossings: self
                    .crossings
                    .range((from, to, 0)..=(from, to, usize::MAX))
                    .map(|(&(_, _, p), pids)| Crossing {
                        producer: self.producers[p].id.clone(),
                        pid: pid_strings(pids),
                    })
                    .collect(),
            })
            .collect();
        Report {
            name: s.name.clone(),
            partitions,
            paths,
            links,
            totals,
            refused,
            timeline: self.timeline,
        }
    }
}

fn pid_strings(pids: &PerStrategy<i64>) -> PerStrategy<String> {
    PerStrategy::from_fn(|s| pids.get(s).to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
