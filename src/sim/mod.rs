//! A topology simulator (SPEC §10): clusters, mirror links, producers and
//! events, run under three strategies side by side (verbatim mirroring,
//! the stateless `-(pid+2)` rewrite of KIP-1279's first proposal, and
//! mirrorpid), counting the silent corruptions each leaves in Kafka's
//! producer state.
//!
//! Every batch is a real magic-v2 batch ([`BatchBuilder`]); under mirrorpid
//! every destination partition runs a real [`Mapper`] through
//! [`Mapper::rewrite`], the same code a broker runs, and persists its
//! `__mirror_state` records; an election replays them.

pub mod psm;
pub mod scenario;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::batch::{Batch, BatchBuilder, BatchMut, ControlType, RecordSpec};
use crate::error::{Error, Result};
use crate::mapper::{Mapper, MapperConfig};
use crate::pid::{self, PidSpace};
use crate::record::StateRecord;
use crate::rewrite::RewriteOptions;
use crate::topic::TopicId;
use psm::{Appended, Corruption, ProducerState};
use scenario::{Event, Scenario};

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
/// The most batches one `produce` event may write.
pub const MAX_COUNT: u32 = 10_000;
/// The work budget of one run: appends of a batch at a cluster, summed over
/// the three strategies. A batch reaches a cluster once per path, so chained
/// diamonds multiply it; past the budget the run stops with an error.
pub const MAX_DELIVERIES: u64 = 250_000;

/// How a mirror hop treats producer IDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Strategy {
    /// PIDs copied as they are.
    Verbatim = 0,
    /// `pid -> -(pid + 2)` at every hop.
    Kip = 1,
    /// mirrorpid's mapper.
    Mirrorpid = 2,
}

/// All strategies, in report order (each one's discriminant is its index).
pub const STRATEGIES: [Strategy; 3] = [Strategy::Verbatim, Strategy::Kip, Strategy::Mirrorpid];

/// A value per strategy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PerStrategy<T> {
    /// Under verbatim mirroring.
    pub verbatim: T,
    /// Under `-(pid+2)`.
    pub kip: T,
    /// Under mirrorpid.
    pub mirrorpid: T,
}

impl<T> PerStrategy<T> {
    /// The value for `s`.
    pub fn get(&self, s: Strategy) -> &T {
        match s {
            Strategy::Verbatim => &self.verbatim,
            Strategy::Kip => &self.kip,
            Strategy::Mirrorpid => &self.mirrorpid,
        }
    }
    /// The value for `s`, mutably.
    pub fn get_mut(&mut self, s: Strategy) -> &mut T {
        match s {
            Strategy::Verbatim => &mut self.verbatim,
            Strategy::Kip => &mut self.kip,
            Strategy::Mirrorpid => &mut self.mirrorpid,
        }
    }
}

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

/// One partition (cluster) after the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionReport {
    /// The cluster.
    pub cluster: String,
    /// Clusters mirrored into it (at the end).
    pub sources: Vec<String>,
    /// Batches in its log.
    pub batches: u32,
    /// mirrorpid's bindings here.
    pub identities: Vec<IdentityRow>,
    /// Silent corruptions per strategy.
    pub corruption: PerStrategy<Corruption>,
    /// Deduplicated re-deliveries per strategy (not corruption).
    pub duplicates: PerStrategy<u32>,
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
    /// Corruption summed over partitions.
    pub totals: PerStrategy<Corruption>,
    /// What happened, one line per event.
    pub log: Vec<String>,
}

/// A batch travelling through the topology, with what the bytes do not say.
#[derive(Debug, Clone)]
struct Travelling {
    bytes: Vec<u8>,
    owner: usize,
    epoch: i16,
    base_sequence: i32,
    transactional: bool,
    marker: bool,
}

/// One strategy's world: a log and producer state per cluster.
struct World {
    strategy: Strategy,
    psm: Vec<ProducerState>,
    logs: Vec<u32>,
    mappers: Vec<Option<Mapper>>,
    state_topic: Vec<Vec<StateRecord>>,
    snapshots: Vec<Option<Vec<u8>>>,
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
    let scenario: Scenario =
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("scenario JSON: {e}")))?;
    simulate(&scenario)
}

struct Sim {
    clusters: Vec<String>,
    writable: Vec<bool>,
    links: BTreeSet<(usize, usize)>,
    producers: Vec<Producer>,
    worlds: Vec<World>,
    config: MapperConfig,
    now: i64,
    /// (producer, cluster) -> (distance, pid per strategy).
    hops: BTreeMap<(usize, usize), (u32, PerStrategy<i64>)>,
    /// (cluster, source, incoming pid under mirrorpid) -> producers.
    who: BTreeMap<(usize, String, i64), BTreeSet<usize>>,
    log: Vec<String>,
    /// Deliveries so far (see [`MAX_DELIVERIES`]).
    deliveries: u64,
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
            crate::mapper::check_source(&c.id).map_err(|_| {
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
        let mut sim = Sim {
            writable: s.clusters.iter().map(|c| c.writable).collect(),
            links: BTreeSet::new(),
            producers: Vec::new(),
            worlds: Vec::new(),
            config: MapperConfig {
                durability: s.durability,
                ..MapperConfig::new(topic_id, 0)
            },
            now: START_MS,
            hops: BTreeMap::new(),
            who: BTreeMap::new(),
            log: Vec::new(),
            deliveries: 0,
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
        let n = sim.clusters.len();
        for strategy in STRATEGIES {
            sim.worlds.push(World {
                strategy,
                psm: vec![ProducerState::default(); n],
                logs: vec![0; n],
                mappers: (0..n).map(|_| None).collect(),
                state_topic: vec![Vec::new(); n],
                snapshots: vec![None; n],
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
        if self.reaches(t, f) {
            self.links.remove(&(f, t));
            return Err(Error::invalid(format!(
                "{context}: the links would form a cycle"
            )));
        }
        Ok(())
    }

    fn reaches(&self, from: usize, to: usize) -> bool {
        let mut stack = vec![from];
        let mut seen = BTreeSet::new();
        while let Some(c) = stack.pop() {
            if c == to {
                return true;
            }
            if seen.insert(c) {
                stack.extend(self.out_links(c));
            }
        }
        false
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
            self.advance(1)
                .and_then(|()| self.event(event))
                .map_err(|e| {
                    Error::invalid(format!("event {} ({}): {e}", i + 1, describe(event)))
                })?;
        }
        Ok(self.report(s))
    }

    fn event(&mut self, event: &Event) -> Result<()> {
        match event {
            Event::Produce {
                producer,
                count,
                transactional,
            } => {
                let p = self.producer(producer)?;
                if *count > MAX_COUNT {
                    return Err(Error::invalid(format!(
                        "count {count} is over the simulator's {MAX_COUNT} batches per event"
                    )));
                }
                for _ in 0..*count {
                    self.produce(p, *transactional, None)?;
                }
                self.log.push(format!(
                    "{producer} writes {count} {}batch(es)",
                    if *transactional { "transactional " } else { "" }
                ));
            }
            Event::Commit { producer } | Event::Abort { producer } => {
                let p = self.producer(producer)?;
                let commit = matches!(event, Event::Commit { .. });
                let marker = if commit {
                    ControlType::Commit
                } else {
                    ControlType::Abort
                };
                self.produce(p, true, Some(marker))?;
                self.log.push(format!(
                    "{producer} {}",
                    if commit { "commits" } else { "aborts" }
                ));
            }
            Event::Failover { cluster } => {
                let c = self.cluster(cluster, "failover")?;
                self.writable[c] = true;
                self.links.retain(|l| l.1 != c);
                self.log.push(format!(
                    "failover: {cluster} is writable, mirroring into it stops"
                ));
            }
            Event::AddLink { from, to } => {
                self.add_link(from, to)?;
                self.log.push(format!("link {from} -> {to} added"));
            }
            Event::RemoveLink { from, to } => {
                let context = format!("remove link {from} -> {to}");
                let (f, t) = (self.cluster(from, &context)?, self.cluster(to, &context)?);
                if !self.links.remove(&(f, t)) {
                    return Err(Error::invalid(format!("{context}: no such link")));
                }
                self.log.push(format!("link {from} -> {to} removed"));
            }
            Event::Election { cluster, snapshot } => {
                let c = self.cluster(cluster, "election")?;
                self.elect(c, *snapshot)?;
                self.log.push(format!(
                    "leader election at {cluster}: {}replay of __mirror_state",
                    if *snapshot {
                        "snapshot restore, then "
                    } else {
                        ""
                    }
                ));
            }
            Event::Advance { ms } => {
                self.advance(*ms)?;
                self.log.push(format!("{ms} ms pass"));
            }
            Event::Expire { advance_ms } => {
                self.advance(*advance_ms)?;
                let (now, limit) = (self.now, self.config.producer_expiration_ms);
                for world in &mut self.worlds {
                    for psm in &mut world.psm {
                        psm.expire(now, limit);
                    }
                }
                let mut dropped = 0;
                let world = &mut self.worlds[Strategy::Mirrorpid as usize];
                for (c, m) in world.mappers.iter_mut().enumerate() {
                    if let Some(m) = m {
                        let tombstones = m.expire(now)?;
                        dropped += tombstones.len();
                        world.state_topic[c].extend(tombstones);
                    }
                }
                self.log.push(format!(
                    "expiry after {advance_ms} ms: producer state drops idle producers; \
                     mirrorpid drops {dropped} binding(s)"
                ));
            }
        }
        Ok(())
    }

    /// One batch of producer `p`, written locally and mirrored everywhere.
    fn produce(
        &mut self,
        p: usize,
        transactional: bool,
        marker: Option<ControlType>,
    ) -> Result<()> {
        let (cluster, pid, epoch, seq) = {
            let pr = &self.producers[p];
            (pr.cluster, pr.pid, pr.epoch, pr.sequence)
        };
        if !self.writable[cluster] {
            return Err(Error::invalid(format!(
                "cluster {:?} is a read-only mirror (add a failover event first)",
                self.clusters[cluster]
            )));
        }
        let is_marker = marker.is_some();
        let bytes = BatchBuilder {
            base_offset: 0,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: if is_marker || pid < 0 { -1 } else { seq },
            timestamp: self.now,
            transactional,
            control: marker,
            records: vec![RecordSpec {
                key: Some(self.producers[p].id.clone().into_bytes()),
                value: Some(format!("seq {seq}").into_bytes()),
            }],
            ..BatchBuilder::default()
        }
        .encode();
        if !is_marker && pid >= 0 {
            self.producers[p].sequence += 1;
        }
        let batch = Travelling {
            bytes,
            owner: p,
            epoch,
            base_sequence: seq,
            transactional: transactional && !is_marker,
            marker: is_marker,
        };
        for w in 0..self.worlds.len() {
            self.deliver(w, cluster, batch.clone())?;
        }
        Ok(())
    }

    /// Appends `batch` at its own `cluster` in world `w`, then mirrors it
    /// along every path out of it, depth first in link order. A worklist,
    /// not recursion, so a long chain cannot exhaust the stack; every
    /// append counts against [`MAX_DELIVERIES`].
    fn deliver(&mut self, w: usize, cluster: usize, batch: Travelling) -> Result<()> {
        let mut work = vec![(cluster, None, batch, 0u32)];
        while let Some((cluster, from, batch, distance)) = work.pop() {
            self.deliveries += 1;
            if self.deliveries > MAX_DELIVERIES {
                return Err(Error::invalid(format!(
                    "the run needs more than {MAX_DELIVERIES} batch deliveries (each path \
                     through the topology counts once): make the topology or the counts smaller"
                )));
            }
            let batch = self.append_at(w, cluster, from, batch, distance)?;
            let next: Vec<usize> = self.out_links(cluster).collect();
            for to in next.into_iter().rev() {
                work.push((to, Some(cluster), batch.clone(), distance + 1));
            }
        }
        Ok(())
    }

    /// Appends `batch` at `cluster` (arriving from `from`, or local, after
    /// the strategy's rewrite); returns it as appended there.
    fn append_at(
        &mut self,
        w: usize,
        cluster: usize,
        from: Option<usize>,
        mut batch: Travelling,
        distance: u32,
    ) -> Result<Travelling> {
        let strategy = self.worlds[w].strategy;
        if let Some(src) = from {
            let incoming = read_pid(&batch.bytes);
            match strategy {
                Strategy::Verbatim => {}
                Strategy::Kip => {
                    let to = incoming.wrapping_add(2).wrapping_neg();
                    BatchMut::whole(&mut batch.bytes).set_producer_id(to);
                }
                Strategy::Mirrorpid => {
                    let config = self.config.clone();
                    let world = &mut self.worlds[w];
                    let mapper = match &mut world.mappers[cluster] {
                        Some(m) => m,
                        slot => slot.insert(Mapper::new(config)?),
                    };
                    let out = mapper.rewrite(
                        &self.clusters[src],
                        &mut batch.bytes,
                        self.now,
                        RewriteOptions::default(),
                    )?;
                    // The host's protocol: records durable, then confirm,
                    // then append the batch.
                    world.state_topic[cluster].extend(out.records);
                    mapper.confirm();
                    self.who
                        .entry((cluster, self.clusters[src].clone(), incoming))
                        .or_default()
                        .insert(batch.owner);
                }
            }
        }
        let pid_here = read_pid(&batch.bytes);
        let hop = self
            .hops
            .entry((batch.owner, cluster))
            .or_insert_with(|| (distance, PerStrategy::default()));
        hop.0 = hop.0.min(distance);
        *hop.1.get_mut(strategy) = pid_here;
        let world = &mut self.worlds[w];
        world.logs[cluster] += 1;
        world.psm[cluster].append(&Appended {
            owner: &self.producers[batch.owner].id,
            idempotent: self.producers[batch.owner].pid >= 0,
            pid: pid_here,
            epoch: batch.epoch,
            base_sequence: batch.base_sequence,
            count: 1,
            transactional: batch.transactional,
            marker: batch.marker,
            now_ms: self.now,
        });
        Ok(batch)
    }

    fn elect(&mut self, c: usize, with_snapshot: bool) -> Result<()> {
        let config = self.config.clone();
        let world = &mut self.worlds[Strategy::Mirrorpid as usize];
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

    fn report(self, s: &Scenario) -> Report {
        let mut totals = PerStrategy::<Corruption>::default();
        let mut partitions = Vec::new();
        for (c, name) in self.clusters.iter().enumerate() {
            let mut corruption = PerStrategy::<Corruption>::default();
            let mut duplicates = PerStrategy::<u32>::default();
            for world in &self.worlds {
                *corruption.get_mut(world.strategy) = world.psm[c].corruption;
                *duplicates.get_mut(world.strategy) = world.psm[c].duplicates;
                totals.get_mut(world.strategy).add(&world.psm[c].corruption);
            }
            let world = &self.worlds[Strategy::Mirrorpid as usize];
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
                sources: self
                    .links
                    .iter()
                    .filter(|l| l.1 == c)
                    .map(|l| self.clusters[l.0].clone())
                    .collect(),
                batches: self.worlds[0].logs[c],
                identities,
                corruption,
                duplicates,
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
                        pid: PerStrategy {
                            verbatim: pids.verbatim.to_string(),
                            kip: pids.kip.to_string(),
                            mirrorpid: pids.mirrorpid.to_string(),
                        },
                    })
                    .collect(),
            })
            .collect();
        Report {
            name: s.name.clone(),
            partitions,
            paths,
            totals,
            log: self.log,
        }
    }
}

/// The producerId of a batch the simulator built (always complete).
fn read_pid(bytes: &[u8]) -> i64 {
    Batch::whole(bytes).producer_id()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn describe(e: &Event) -> &'static str {
    match e {
        Event::Produce { .. } => "produce",
        Event::Commit { .. } => "commit",
        Event::Abort { .. } => "abort",
        Event::Failover { .. } => "failover",
        Event::AddLink { .. } => "addLink",
        Event::RemoveLink { .. } => "removeLink",
        Event::Election { .. } => "election",
        Event::Advance { .. } => "advance",
        Event::Expire { .. } => "expire",
    }
}
