//! Crash-point testing of the persistence protocol, for any leader: the
//! native mapper (`tests/crash_points.rs`) or the broker module in wasmtime
//! (`host/tests/crash_points.rs`).
//!
//! A [`Host`] serves one destination partition the way `docs/DESIGN.md`
//! says a broker must: rewrite a fetch, append the returned records to
//! `__mirror_state`, confirm, then append the batches. A random sequence of
//! [`Step`]s (fetches from several sources with forced collisions, a chain
//! and a diamond; time passing; expiry; snapshots; elections) is run once
//! per (step, fault) pair, with that one [`Fault`] injected at that step.
//! Every appended batch is checked against a model of the partition's log:
//! no producer appears under two mapped PIDs, and no mapped PID belongs to
//! two producers, for as long as the producer's binding lives.

use std::collections::{HashMap, HashSet};

use mirrorpid::batch::{BatchBuilder, Batches, Entry};
use mirrorpid::pid::{is_mirrored, map_pid, PID40_MASK};
use mirrorpid::StateRecord;

/// A `__mirror_state` record as bytes: key, value (`None` = tombstone).
pub type Raw = (Vec<u8>, Option<Vec<u8>>);

/// What a host can ask of the leader of one partition.
pub trait Leader {
    /// Rewrites `buf` in place; returns the records to make durable.
    fn rewrite(&mut self, source: &str, buf: &mut [u8], now: i64) -> Result<Vec<Raw>, String>;
    /// Confirms the pending bindings.
    fn confirm(&mut self) -> usize;
    /// Takes the pending bindings back.
    fn abort(&mut self) -> usize;
    /// The snapshot bytes.
    fn snapshot(&mut self) -> Vec<u8>;
    /// Expires idle bindings; returns the tombstones.
    fn expire(&mut self, now: i64) -> Vec<Raw>;
    /// Becomes a new leader: restores `snapshot` (or starts empty), then
    /// loads `records` in order.
    fn elect(&mut self, snapshot: Option<&[u8]>, records: &[Raw]);
}

/// The expiry every leader in these tests is configured with.
pub const EXPIRATION_MS: i64 = 10_000;
/// The mapper config every leader in these tests uses.
pub const CONFIG: &str =
    r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"producerExpirationMs":"10000"}"#;

/// Sources with local producers. `cluster-2123` and `cluster-2336` share a
/// region, so their equal PIDs collide.
const LOCAL: [&str; 3] = ["cluster-2123", "cluster-2336", "B"];

/// The direct sources and what each sends.
fn menu(source: usize) -> (&'static str, Vec<i64>) {
    let a = |p| map_pid("A", p, 0).unwrap();
    let b = |p| map_pid("B", p, 0).unwrap();
    match source {
        0 => ("cluster-2123", (0..4).collect()),
        1 => ("cluster-2336", (0..4).collect()),
        // B: its own producers, and A's mirrored through B (a chain).
        2 => ("B", (0..3).chain((0..3).map(a)).collect()),
        // C: A's producers again (a diamond A->B, A->C) and B's producers
        // mirrored through C (a second path for B's producers).
        3 => ("C", (0..3).map(a).chain((0..3).map(b)).collect()),
        // B again, sending its own PID 9 and the mirrored PID F(B, 9, 0):
        // one slot, two producers of one source, so the second is salted.
        _ => ("B", vec![9, b(9)]),
    }
}

/// How many sources [`menu`] knows.
pub const SOURCES: usize = 5;

/// One step of a scenario.
#[derive(Debug, Clone)]
pub enum Step {
    /// A fetch of one batch per PID from a source.
    Fetch {
        /// Index into the sources.
        source: usize,
        /// The PIDs, one batch each.
        pids: Vec<i64>,
    },
    /// Time passes.
    Advance(i64),
    /// An expiry pass.
    Expire,
    /// The host takes and stores a snapshot.
    Snapshot,
    /// A clean leader change.
    Elect {
        /// Restore the last stored snapshot first.
        snapshot: bool,
    },
}

/// A fault a host can meet, injected at one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Fetch: no record reached `__mirror_state`; the host aborts.
    RecordsLostAbort,
    /// Fetch: no record reached `__mirror_state`; the host retries the fetch.
    RecordsLostRetry,
    /// Fetch: the first half of the records reached it; the host aborts.
    PartlyPersistedAbort,
    /// Fetch: the first half of the records reached it; the host retries.
    PartlyPersistedRetry,
    /// Fetch: the records are durable, the host crashes before confirm.
    CrashBeforeConfirm {
        /// How the next leader starts.
        snapshot: bool,
    },
    /// Fetch: confirmed, the host crashes before appending the batches.
    CrashBeforeAppend {
        /// How the next leader starts.
        snapshot: bool,
    },
    /// Snapshot: the host crashes before the snapshot is stored.
    CrashBeforeSnapshotStored,
    /// Snapshot: the host crashes right after storing it.
    CrashAfterSnapshotStored,
    /// Expire: the tombstones never reach `__mirror_state`.
    TombstonesLost,
    /// Expire: the host crashes before persisting the tombstones.
    CrashAfterExpire {
        /// How the next leader starts.
        snapshot: bool,
    },
}

impl Fault {
    /// Every fault, in a fixed order.
    pub const ALL: [Fault; 13] = [
        Fault::RecordsLostAbort,
        Fault::RecordsLostRetry,
        Fault::PartlyPersistedAbort,
        Fault::PartlyPersistedRetry,
        Fault::CrashBeforeConfirm { snapshot: true },
        Fault::CrashBeforeConfirm { snapshot: false },
        Fault::CrashBeforeAppend { snapshot: true },
        Fault::CrashBeforeAppend { snapshot: false },
        Fault::CrashBeforeSnapshotStored,
        Fault::CrashAfterSnapshotStored,
        Fault::TombstonesLost,
        Fault::CrashAfterExpire { snapshot: true },
        Fault::CrashAfterExpire { snapshot: false },
    ];

    /// Whether the fault can happen at `step`.
    pub fn applies_to(self, step: &Step) -> bool {
        use Fault::*;
        match step {
            Step::Fetch { .. } => matches!(
                self,
                RecordsLostAbort
                    | RecordsLostRetry
                    | PartlyPersistedAbort
                    | PartlyPersistedRetry
                    | CrashBeforeConfirm { .. }
                    | CrashBeforeAppend { .. }
            ),
            Step::Snapshot => {
                matches!(self, CrashBeforeSnapshotStored | CrashAfterSnapshotStored)
            }
            Step::Expire => matches!(self, TombstonesLost | CrashAfterExpire { .. }),
            Step::Advance(_) | Step::Elect { .. } => false,
        }
    }
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    /// The next value below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// A random scenario of `len` steps.
pub fn scenario(seed: u64, len: usize) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    (0..len)
        .map(|_| match rng.below(20) {
            0..=11 => {
                let source = rng.below(SOURCES as u64) as usize;
                let choices = menu(source).1;
                let n = 1 + rng.below(3) as usize;
                let pids = (0..n)
                    .map(|_| choices[rng.below(choices.len() as u64) as usize])
                    .collect();
                Step::Fetch { source, pids }
            }
            12 | 13 => Step::Advance(rng.below(EXPIRATION_MS as u64 * 3 / 4) as i64),
            14 | 15 => Step::Expire,
            16 | 17 => Step::Snapshot,
            18 => Step::Elect { snapshot: true },
            _ => Step::Elect { snapshot: false },
        })
        .collect()
}

/// The upstream producer a batch belongs to. A mirrored PID that is
/// another local source's producer at salt 0 is that producer (it reached
/// the partition by a second path); any other mirrored PID names its own
/// producer (from the same source it is a different producer: a source
/// never sends one producer under two PIDs).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Producer {
    /// A local source's producer.
    Local(String, i64),
    /// A producer mirrored from further upstream.
    Mirrored(i64),
}

/// The producer of a batch with `pid` arriving from `source`.
pub fn producer(source: &str, pid: i64) -> Producer {
    if !is_mirrored(pid) {
        return Producer::Local(source.to_owned(), pid);
    }
    let pid40 = pid & PID40_MASK;
    LOCAL
        .iter()
        .find(|s| **s != source && map_pid(s, pid40, 0).ok() == Some(pid))
        .map_or(Producer::Mirrored(pid), |s| {
            Producer::Local((*s).to_owned(), pid40)
        })
}

/// What the partition's data log says about producers and PIDs.
#[derive(Default)]
struct LogModel {
    producer_pid: HashMap<Producer, i64>,
    pid_producer: HashMap<i64, Producer>,
    /// The identities bound at the leader whose batches were appended.
    live: HashSet<(String, i64)>,
}

impl LogModel {
    fn append(&mut self, source: &str, pid: i64, mapped: i64) -> Result<(), String> {
        let p = producer(source, pid);
        if let Some(&m) = self.producer_pid.get(&p) {
            if m != mapped {
                return Err(format!("{p:?} appended under {m} and then {mapped}"));
            }
        }
        if let Some(q) = self.pid_producer.get(&mapped) {
            if *q != p {
                return Err(format!("mapped PID {mapped} appended for {q:?} and {p:?}"));
            }
        }
        self.producer_pid.insert(p.clone(), mapped);
        self.pid_producer.insert(mapped, p);
        self.live.insert((source.to_owned(), pid));
        Ok(())
    }

    /// The leader expired these identities: a producer none of whose
    /// identities is live any more has ended its PID's life.
    fn expired(&mut self, identities: &[(String, i64)]) {
        for id in identities {
            self.live.remove(id);
        }
        let alive: HashSet<Producer> = self.live.iter().map(|(s, p)| producer(s, *p)).collect();
        self.producer_pid.retain(|p, _| alive.contains(p));
        let producer_pid = &self.producer_pid;
        self.pid_producer
            .retain(|_, p| producer_pid.contains_key(p));
    }
}

/// A host serving one partition, following the protocol.
pub struct Host<L: Leader> {
    leader: L,
    /// `__mirror_state`, in log order.
    log: Vec<Raw>,
    /// The last stored snapshot and the log position it covers.
    stored: Option<(Vec<u8>, usize)>,
    model: LogModel,
    now: i64,
    /// Fetches to serve again (aborted or lost to a crash).
    again: Vec<(usize, Vec<i64>)>,
    next_offset: i64,
    /// The case, for messages.
    case: String,
}

impl<L: Leader> Host<L> {
    /// A host whose leader is `leader` (a fresh, empty mapper).
    pub fn new(leader: L, case: String) -> Host<L> {
        Host {
            leader,
            log: Vec::new(),
            stored: None,
            model: LogModel::default(),
            now: 1_000_000,
            again: Vec::new(),
            next_offset: 0,
            case,
        }
    }

    fn batches(&mut self, pids: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        for &pid in pids {
            out.extend(
                BatchBuilder {
                    base_offset: self.next_offset,
                    producer_id: pid,
                    producer_epoch: 0,
                    base_sequence: 0,
                    timestamp: self.now,
                    ..BatchBuilder::default()
                }
                .encode(),
            );
            self.next_offset += 1;
        }
        out
    }

    fn append_batches(&mut self, source: &str, original: &[u8], rewritten: &[u8]) {
        let pids = |b: &[u8]| -> Vec<i64> {
            Batches::new(b)
                .map(|e| match e.unwrap() {
                    Entry::Batch { batch, .. } => batch.producer_id(),
                    Entry::Legacy { .. } => unreachable!(),
                })
                .collect()
        };
        for (pid, mapped) in pids(original).into_iter().zip(pids(rewritten)) {
            if let Err(e) = self.model.append(source, pid, mapped) {
                panic!("{}: {e}", self.case);
            }
        }
    }

    /// A new leader: the stored snapshot and the records after it, or
    /// (replay only) every record of the compacted topic.
    fn elect(&mut self, with_snapshot: bool) {
        match (&self.stored, with_snapshot) {
            (Some((bytes, pos)), true) => {
                let (bytes, tail) = (bytes.clone(), self.log[*pos..].to_vec());
                self.leader.elect(Some(&bytes), &tail);
            }
            _ => {
                let compacted = compact(&self.log);
                self.leader.elect(None, &compacted);
            }
        }
    }

    fn rewrite(&mut self, source: &str, buf: &mut [u8]) -> Vec<Raw> {
        match self.leader.rewrite(source, buf, self.now) {
            Ok(r) => r,
            Err(e) => panic!("{}: rewrite failed: {e}", self.case),
        }
    }

    /// Serves one fetch, with `fault` injected (or none).
    fn fetch(&mut self, source: usize, pids: &[i64], fault: Option<Fault>) {
        let name = menu(source).0;
        let original = self.batches(pids);
        let mut buf = original.clone();
        let records = self.rewrite(name, &mut buf);
        let half = records.len() / 2;
        match fault {
            None => {}
            Some(Fault::RecordsLostAbort | Fault::PartlyPersistedAbort) => {
                if fault == Some(Fault::PartlyPersistedAbort) {
                    self.log.extend_from_slice(&records[..half]);
                }
                self.leader.abort();
                self.again.push((source, pids.to_vec()));
                return;
            }
            Some(Fault::RecordsLostRetry | Fault::PartlyPersistedRetry) => {
                if fault == Some(Fault::PartlyPersistedRetry) {
                    self.log.extend_from_slice(&records[..half]);
                }
                // The same fetch again, from the source's original bytes.
                buf = original.clone();
                let again = self.rewrite(name, &mut buf);
                assert_eq!(
                    again, records,
                    "{}: a retry returns the same records",
                    self.case
                );
            }
            Some(Fault::CrashBeforeConfirm { snapshot }) => {
                self.log.extend(records);
                self.elect(snapshot);
                self.again.push((source, pids.to_vec()));
                return;
            }
            Some(Fault::CrashBeforeAppend { snapshot }) => {
                self.log.extend(records);
                self.leader.confirm();
                self.elect(snapshot);
                self.again.push((source, pids.to_vec()));
                return;
            }
            Some(other) => unreachable!("{other:?} is not a fetch fault"),
        }
        self.log.extend(records);
        self.leader.confirm();
        self.append_batches(name, &original, &buf);
    }

    fn expire(&mut self, fault: Option<Fault>) {
        let tombstones = self.leader.expire(self.now);
        let ids: Vec<(String, i64)> = tombstones
            .iter()
            .map(|(k, _)| {
                let key = StateRecord::decode(k, None).unwrap().key;
                (key.source_cluster_id, key.original_pid)
            })
            .collect();
        self.model.expired(&ids);
        match fault {
            None => self.log.extend(tombstones),
            Some(Fault::TombstonesLost) => {}
            Some(Fault::CrashAfterExpire { snapshot }) => self.elect(snapshot),
            Some(other) => unreachable!("{other:?} is not an expiry fault"),
        }
    }

    fn snapshot(&mut self, fault: Option<Fault>) {
        let bytes = self.leader.snapshot();
        match fault {
            None => self.stored = Some((bytes, self.log.len())),
            Some(Fault::CrashBeforeSnapshotStored) => self.elect(true),
            Some(Fault::CrashAfterSnapshotStored) => {
                self.stored = Some((bytes, self.log.len()));
                self.elect(true);
            }
            Some(other) => unreachable!("{other:?} is not a snapshot fault"),
        }
    }

    /// Runs one step, first serving again any fetch lost to a fault.
    pub fn step(&mut self, step: &Step, fault: Option<Fault>) {
        for (source, pids) in std::mem::take(&mut self.again) {
            self.fetch(source, &pids, None);
        }
        match step {
            Step::Fetch { source, pids } => self.fetch(*source, pids, fault),
            Step::Advance(ms) => self.now += ms,
            Step::Expire => self.expire(fault),
            Step::Snapshot => self.snapshot(fault),
            Step::Elect { snapshot } => self.elect(*snapshot),
        }
    }

    /// Ends a run: both kinds of election, each followed by a fetch of every
    /// producer the log knows, checked against the log.
    pub fn finish(&mut self) {
        for (source, pids) in std::mem::take(&mut self.again) {
            self.fetch(source, &pids, None);
        }
        for with_snapshot in [true, false] {
            self.elect(with_snapshot);
            for source in 0..SOURCES {
                let pids = menu(source).1;
                self.fetch(source, &pids, None);
            }
        }
    }
}

/// Kafka's log compaction: the last record of each key, in log order.
pub fn compact(log: &[Raw]) -> Vec<Raw> {
    let mut last = HashMap::new();
    for (i, (k, _)) in log.iter().enumerate() {
        last.insert(k.clone(), i);
    }
    let mut keep: Vec<usize> = last.into_values().collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| log[i].clone()).collect()
}

/// The fixed case of the retry fault: source B sends its own PID 9 and the
/// mirrored PID F(B, 9, 0) in one fetch, so the second lands at salt 1; the
/// records are lost and the fetch retried; a new leader replays only, and
/// meets the identities in the other order. Before the protocol, the retry
/// returned no records and the new leader gave PID 9 the salt-0 slot of the
/// mirrored one's: one mapped PID, two producers in the log.
pub fn lost_records_retry_failover<L: Leader>(leader: L) {
    let b9 = map_pid("B", 9, 0).unwrap();
    let mut host = Host::new(leader, "lost records, retry, failover".into());
    host.fetch(4, &[9, b9], Some(Fault::RecordsLostRetry));
    host.step(&Step::Elect { snapshot: false }, None);
    host.fetch(4, &[b9, 9], None);
    host.finish();
}

/// Runs every (step, fault) pair of `scenarios` random scenarios of
/// `len` steps against leaders from `make`; returns how many runs it made.
pub fn run_all<L: Leader>(scenarios: u64, len: usize, mut make: impl FnMut() -> L) -> usize {
    let mut runs = 0;
    for seed in 0..scenarios {
        let steps = scenario(seed, len);
        // The fault-free run first.
        let mut host = Host::new(make(), format!("seed {seed}, no fault"));
        for s in &steps {
            host.step(s, None);
        }
        host.finish();
        runs += 1;
        for (at, step) in steps.iter().enumerate() {
            for fault in Fault::ALL {
                if !fault.applies_to(step) {
                    continue;
                }
                let case = format!("seed {seed}, {fault:?} at step {at} ({step:?})");
                let mut host = Host::new(make(), case);
                for (i, s) in steps.iter().enumerate() {
                    host.step(s, (i == at).then_some(fault));
                }
                host.finish();
                runs += 1;
            }
        }
    }
    runs
}
