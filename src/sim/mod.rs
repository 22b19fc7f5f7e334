//! A topology simulator (the playground's engine): clusters, mirror links, producers and
//! events, run under three strategies side by side (verbatim mirroring,
//! the stateless `-(pid+2)` rewrite of KIP-1279's first proposal, and
//! mirrorpid), counting the silent corruptions each leaves in Kafka's
//! producer state.
//!
//! Every batch is a real magic-v2 batch ([`BatchBuilder`]); under mirrorpid
//! every destination partition runs a real [`Mapper`] through
//! [`Mapper::rewrite`], the same code a broker runs, and persists its
//! `__mirror_state` records; an election replays them.

mod deliver;
mod events;
pub mod psm;
mod report;
pub mod scenario;
mod strategy;

pub use strategy::{PerStrategy, Strategy, STRATEGIES};

pub use report::{
    Crossing, Hop, IdentityRow, IncidentRow, LinkReport, PartitionReport, ProducerPath, RecordRow,
    Report, Step,
};

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::mapper::{Mapper, MapperConfig};
use crate::pid::PidSpace;
use crate::record::StateRecord;
use crate::topic::TopicId;
use psm::ProducerState;
use scenario::Scenario;

/// The clock at the start of every run (2025-11-29T08:00:00Z).
pub const START_MS: i64 = 1_764_403_200_000;

/// The most clusters a scenario may have.
pub const MAX_CLUSTERS: usize = 500;
/// The most mirror links a scenario may have at once.
pub const MAX_LINKS: usize = 2_000;
/// The most producers a scenario may have.
pub const MAX_PRODUCERS: usize = 10_000;
/// The most events a scenario may have.
pub const MAX_EVENTS: usize = 10_000;
/// The most incidents a report says in words for one event (the counts
/// always cover all of them).
pub const MAX_INCIDENTS_PER_EVENT: usize = 20;
/// The most batches one `produce` event may write.
pub const MAX_COUNT: u32 = 10_000;
/// The work budget of one run: appends of a batch at a cluster, summed over
/// the three strategies. A batch reaches a cluster once per path, so chained
/// diamonds multiply it; past the budget the run stops with an error.
pub const MAX_DELIVERIES: u64 = 250_000;

/// A batch travelling through the topology, with what the bytes do not say.
#[derive(Debug, Clone)]
struct Travelling {
    bytes: Vec<u8>,
    owner: usize,
    epoch: i16,
    base_sequence: i32,
    transactional: bool,
    marker: bool,
    /// For a marker: COMMIT (else ABORT).
    commit: bool,
    /// Which batch this is: every copy of it has the same.
    serial: u64,
    /// The clusters this copy has been written to, its own first. A mirror
    /// never carries a batch into one of them: the cycle check that
    /// makes two-way (active-active) mirroring work, as MirrorMaker 2's
    /// does for a topic whose chain of sources names the target.
    been: Vec<usize>,
}

/// A mirrored batch Kafka refused with `InvalidTxnStateException` at
/// `cluster`: the mirror from `from` stalls on it and retries after every
/// event until the transaction on `pid` ends.
struct Held {
    cluster: usize,
    from: usize,
    batch: Travelling,
    distance: u32,
    pid: i64,
}

/// One strategy's world: a log and producer state per cluster.
struct World {
    strategy: Strategy,
    psm: Vec<ProducerState>,
    logs: Vec<u32>,
    mappers: Vec<Option<Mapper>>,
    state_topic: Vec<Vec<StateRecord>>,
    snapshots: Vec<Option<Vec<u8>>>,
    held: Vec<Held>,
}

impl World {
    fn new(strategy: Strategy, clusters: usize) -> World {
        World {
            strategy,
            psm: vec![ProducerState::default(); clusters],
            logs: vec![0; clusters],
            mappers: (0..clusters).map(|_| None).collect(),
            state_topic: vec![Vec::new(); clusters],
            snapshots: vec![None; clusters],
            held: Vec::new(),
        }
    }
}

struct Producer {
    id: String,
    cluster: usize,
    pid: i64,
    epoch: i16,
    sequence: i32,
}

/// Runs `scenario` and reports.
pub fn simulate(scenario: &Scenario) -> Result<Report> {
    Sim::new(scenario)?.run(scenario)
}

/// Runs a scenario given as JSON text.
pub fn simulate_json(text: &str) -> Result<Report> {
    let scenario::Obj(scenario): scenario::Obj<Scenario> =
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("scenario JSON: {e}")))?;
    simulate(&scenario)
}

struct Sim {
    clusters: Vec<String>,
    writable: Vec<bool>,
    links: BTreeSet<(usize, usize)>,
    producers: Vec<Producer>,
    worlds: PerStrategy<World>,
    config: MapperConfig,
    now: i64,
    /// The scenario's `transactionVersion`: from 2, markers bump epochs.
    transaction_version: u8,
    /// (producer, cluster) -> (distance, pid per strategy).
    hops: BTreeMap<(usize, usize), (u32, PerStrategy<i64>)>,
    /// (cluster, source, incoming pid under mirrorpid) -> producers.
    who: BTreeMap<(usize, String, i64), BTreeSet<usize>>,
    /// Every link that ever existed.
    ever_linked: BTreeSet<(usize, usize)>,
    /// (from, to, producer) -> the PID its last batch carried into `to`.
    crossings: BTreeMap<(usize, usize, usize), PerStrategy<i64>>,
    /// What each event did.
    timeline: Vec<Step>,
    /// Deliveries so far (see [`MAX_DELIVERIES`]).
    deliveries: u64,
    /// Batches produced so far: the next batch's serial.
    serials: u64,
}

impl Sim {
    fn new(s: &Scenario) -> Result<Sim> {
        let limits = [
            ("clusters", s.clusters.len(), MAX_CLUSTERS),
            ("links", s.links.len(), MAX_LINKS),
            ("producers", s.producers.len(), MAX_PRODUCERS),
            ("events", s.events.len(), MAX_EVENTS),
        ];
        for (what, n, max) in limits {
            if n > max {
                return Err(Error::invalid(format!(
                    "the scenario has {n} {what}; the simulator takes at most {max}"
                )));
            }
        }
        let topic_id: TopicId = s.topic_id.parse()?;
        let mut clusters: Vec<String> = Vec::new();
        for c in &s.clusters {
            crate::mapper::SourceCluster::new(&c.id).map_err(|_| {
                Error::invalid(format!("cluster ID {:?} must be 1 to 32767 bytes", c.id))
            })?;
            if clusters.contains(&c.id) {
                return Err(Error::invalid(format!(
                    "cluster {:?} is defined twice",
                    c.id
                )));
            }
            clusters.push(c.id.clone());
        }
        let n = clusters.len();
        let mut sim = Sim {
            writable: s.clusters.iter().map(|c| c.writable).collect(),
            links: BTreeSet::new(),
            producers: Vec::new(),
            worlds: PerStrategy::from_fn(|strategy| World::new(strategy, n)),
            config: MapperConfig {
                durability: s.durability,
                ..MapperConfig::new(topic_id, 0)
            },
            now: START_MS,
            transaction_version: s.transaction_version,
            hops: BTreeMap::new(),
            who: BTreeMap::new(),
            ever_linked: BTreeSet::new(),
            crossings: BTreeMap::new(),
            timeline: Vec::new(),
            deliveries: 0,
            serials: 0,
            clusters,
        };
        for l in &s.links {
            sim.add_link(&l.from, &l.to)?;
        }
        for p in &s.producers {
            if sim.producers.iter().any(|q| q.id == p.id) {
                return Err(Error::invalid(format!(
                    "producer {:?} is defined twice",
                    p.id
                )));
            }
            let cluster = sim.cluster(&p.cluster, &format!("producer {:?}", p.id))?;
            if PidSpace::of(p.pid) == PidSpace::OutOfRange
                || PidSpace::of(p.pid) == PidSpace::Mirrored
            {
                return Err(Error::invalid(format!(
                    "producer {:?}: PID {} is out of range (a local PID is 0 to 1099511627775, or -1 for none)",
                    p.id, p.pid
                )));
            }
            sim.producers.push(Producer {
                id: p.id.clone(),
                cluster,
                pid: p.pid,
                epoch: p.epoch,
                sequence: 0,
            });
        }
        Ok(sim)
    }

    fn cluster(&self, id: &str, context: &str) -> Result<usize> {
        self.clusters
            .iter()
            .position(|c| c == id)
            .ok_or_else(|| Error::invalid(format!("{context}: unknown cluster {id:?}")))
    }

    fn producer(&self, id: &str) -> Result<usize> {
        self.producers
            .iter()
            .position(|p| p.id == id)
            .ok_or_else(|| Error::invalid(format!("unknown producer {id:?}")))
    }

    /// Adds a mirror link. Links may form cycles (two-way mirroring, rings):
    /// no batch is carried into a cluster it has been in (see
    /// [`Travelling::been`]).
    fn add_link(&mut self, from: &str, to: &str) -> Result<()> {
        let context = format!("link {from} -> {to}");
        let (f, t) = (self.cluster(from, &context)?, self.cluster(to, &context)?);
        if f == t {
            return Err(Error::invalid(format!(
                "{context}: a cluster cannot mirror itself"
            )));
        }
        if self.links.len() >= MAX_LINKS && !self.links.contains(&(f, t)) {
            return Err(Error::invalid(format!(
                "{context}: the simulator takes at most {MAX_LINKS} links"
            )));
        }
        self.links.insert((f, t));
        self.ever_linked.insert((f, t));
        Ok(())
    }

    /// The clusters `c` mirrors into, in order.
    fn out_links(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        self.links.range((c, 0)..(c + 1, 0)).map(|l| l.1)
    }

    /// Moves the clock; an overflow is an error, not a wrap.
    fn advance(&mut self, ms: i64) -> Result<()> {
        self.now = self
            .now
            .checked_add(ms.max(0))
            .ok_or_else(|| Error::invalid(format!("the clock overflows after {ms} ms more")))?;
        Ok(())
    }

    fn run(mut self, s: &Scenario) -> Result<Report> {
        for (i, event) in s.events.iter().enumerate() {
            self.timeline.push(Step::default());
            let text = self
                .advance(1)
                .and_then(|()| self.event(event))
                .and_then(|text| self.retry_held().map(|()| text))
                .map_err(|e| {
                    Error::invalid(format!(
                        "event {} ({}): {e}",
                        i + 1,
                        events::describe(event)
                    ))
                })?;
            let totals = PerStrategy::from_fn(|strategy| {
                let psm = &self.worlds.get(strategy).psm;
                psm.iter().map(|p| p.corruption.total()).sum()
            });
            let refused = PerStrategy::from_fn(|strategy| {
                let psm = &self.worlds.get(strategy).psm;
                psm.iter().map(|p| p.refusals.total()).sum()
            });
            let step = self.timeline.last_mut().expect("pushed above");
            step.text = text;
            step.totals = totals;
            step.refused = refused;
        }
        Ok(self.report(s))
    }

    /// Puts `found` in the timeline's current step.
    fn say(&mut self, strategy: Strategy, cluster: usize, found: Vec<psm::Incident>) {
        if let Some(step) = self.timeline.last_mut() {
            for incident in found {
                if step.incidents.len() < MAX_INCIDENTS_PER_EVENT {
                    step.incidents.push(IncidentRow {
                        strategy,
                        cluster: self.clusters[cluster].clone(),
                        kind: incident.kind,
                        text: incident.text,
                    });
                } else {
                    step.unsaid += 1;
                }
            }
        }
    }

    fn elect(&mut self, c: usize, with_snapshot: bool) -> Result<()> {
        let config = self.config.clone();
        let world = &mut self.worlds.mirrorpid;
        let Some(old) = world.mappers[c].take() else {
            return Ok(()); // nothing mirrored here yet: nothing to elect
        };
        world.snapshots[c] = Some(old.snapshot());
        let mut fresh = match (with_snapshot, &world.snapshots[c]) {
            (true, Some(bytes)) => Mapper::restore(bytes)?,
            _ => Mapper::new(config)?,
        };
        for r in &world.state_topic[c] {
            fresh.load_record(r)?;
        }
        world.mappers[c] = Some(fresh);
        Ok(())
    }
}
