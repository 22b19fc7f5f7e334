//! Property tests of the mapper over random event sequences from several
//! source clusters, with forced region collisions (`docs/DESIGN.md`).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::HashMap;

use common::clusters::{colliding_pairs, VECTOR_PAIR};
use mirrorpid::batch::{BatchBuilder, ControlType, RecordSpec};
use mirrorpid::pid::{is_mirrored, map_pid};
use mirrorpid::{Durability, Mapper, MapperConfig, RewriteOptions, StateRecord, TopicId};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Event {
    /// A data batch from `source` with `pid`; transactional or not.
    Produce {
        source: usize,
        pid: i64,
        transactional: bool,
    },
    /// A COMMIT or ABORT marker for `pid` from `source`.
    Marker {
        source: usize,
        pid: i64,
        commit: bool,
    },
    /// Time passes.
    Advance(i64),
    /// An expiry pass.
    Expire,
    /// The host expires one producer by its mapped PID.
    ExpireOne(usize),
}

fn sources() -> Vec<String> {
    let mut s = vec![
        VECTOR_PAIR.0.to_owned(),
        VECTOR_PAIR.1.to_owned(),
        "A".to_owned(),
    ];
    let (a, b) = colliding_pairs(6000)
        .into_iter()
        .next()
        .expect("a colliding pair among 6000 names");
    s.push(a);
    s.push(b);
    s
}

/// PIDs a source might send: small local ones, and mirrored ones that are
/// upstream mappings of other clusters' (or the same) PIDs.
fn pid_strategy(srcs: &[String]) -> impl Strategy<Value = i64> + Clone {
    let mirrored: Vec<i64> = srcs
        .iter()
        .flat_map(|s| (0..3).map(move |p| (s.clone(), p)))
        .flat_map(|(s, p)| [0u64, 1].map(|salt| map_pid(&s, p, salt).unwrap()))
        .collect();
    prop_oneof![
        3 => 0i64..6,
        2 => proptest::sample::select(mirrored),
    ]
}

fn event_strategy(srcs: Vec<String>) -> impl Strategy<Value = Event> {
    let n = srcs.len();
    let pid = pid_strategy(&srcs);
    prop_oneof![
        6 => (0..n, pid.clone(), any::<bool>()).prop_map(|(source, pid, transactional)| Event::Produce { source, pid, transactional }),
        2 => (0..n, pid, any::<bool>()).prop_map(|(source, pid, commit)| Event::Marker { source, pid, commit }),
        2 => (1i64..50_000).prop_map(Event::Advance),
        1 => Just(Event::Expire),
        1 => (0usize..64).prop_map(Event::ExpireOne),
    ]
}

fn config(durability: Durability) -> MapperConfig {
    let topic: TopicId = common::TOPIC.parse().unwrap();
    MapperConfig {
        durability,
        producer_expiration_ms: 60_000,
        ..MapperConfig::new(topic, 3)
    }
}

fn batch(pid: i64, transactional: bool, marker: Option<bool>) -> Vec<u8> {
    BatchBuilder {
        producer_id: pid,
        producer_epoch: 0,
        base_sequence: if marker.is_some() { -1 } else { 0 },
        transactional,
        control: marker.map(|c| {
            if c {
                ControlType::Commit
            } else {
                ControlType::Abort
            }
        }),
        records: vec![RecordSpec {
            key: None,
            value: Some(b"v".to_vec()),
        }],
        ..BatchBuilder::default()
    }
    .encode()
}

/// identity -> mapped, for every binding.
fn mapping(m: &Mapper) -> HashMap<(String, i64), i64> {
    m.bindings()
        .map(|b| ((b.source_cluster_id.to_owned(), b.pid), b.mapped))
        .collect()
}

/// Asserts no two different producers share a mapped PID.
fn assert_no_shared_pids(m: &Mapper) {
    let mut by_mapped: HashMap<i64, Vec<(String, i64, u8)>> = HashMap::new();
    for b in m.bindings() {
        by_mapped.entry(b.mapped).or_default().push((
            b.source_cluster_id.to_owned(),
            b.pid,
            b.salt,
        ));
    }
    for (mapped, holders) in by_mapped {
        for (i, a) in holders.iter().enumerate() {
            for b in &holders[i + 1..] {
                let same =
                    a.0 != b.0 && (is_mirrored(a.1) || is_mirrored(b.1)) && a.2 == 0 && b.2 == 0;
                assert!(same, "{a:?} and {b:?} share {mapped}");
            }
        }
    }
}

/// The persisted topic: last record per key, in log order, as compaction
/// keeps it (tombstones kept, as within delete.retention.ms).
#[derive(Default)]
struct Topic {
    log: Vec<StateRecord>,
}

impl Topic {
    fn append(&mut self, records: impl IntoIterator<Item = StateRecord>) {
        self.log.extend(records);
    }
    fn compacted(&self) -> Vec<StateRecord> {
        let mut last: HashMap<Vec<u8>, usize> = HashMap::new();
        for (i, r) in self.log.iter().enumerate() {
            last.insert(r.key.to_bytes().unwrap(), i);
        }
        let mut keep: Vec<usize> = last.into_values().collect();
        keep.sort_unstable();
        keep.into_iter().map(|i| self.log[i].clone()).collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn mapper_invariants(events in proptest::collection::vec(event_strategy(sources()), 1..120)) {
        let srcs = sources();
        let mut full = Mapper::new(config(Durability::Bindings)).unwrap();
        let mut lean = Mapper::new(config(Durability::Collisions)).unwrap();
        let mut topic = Topic::default();
        let mut model: HashMap<(String, i64), i64> = HashMap::new();
        let mut now = 1_000_000i64;
        for event in &events {
            match event {
                Event::Produce { source, pid, transactional } => {
                    let src = &srcs[*source];
                    let mut a = batch(*pid, *transactional, None);
                    let mut b = a.clone();
                    let ra = full.rewrite(src, &mut a, now, RewriteOptions { outcomes: true, ..RewriteOptions::default() }).unwrap();
                    let rb = lean.rewrite(src, &mut b, now, RewriteOptions { outcomes: true, ..RewriteOptions::default() }).unwrap();
                    // The two durability modes agree on every mapping.
                    prop_assert_eq!(&a, &b);
                    let mapped = ra.batches[0].mapped_pid;
                    prop_assert_eq!(mapped, rb.batches[0].mapped_pid);
                    // A bound identity never changes its PID.
                    if let Some(prev) = model.insert((src.clone(), *pid), mapped) {
                        prop_assert_eq!(prev, mapped);
                    }
                    topic.append(ra.records);
                    full.confirm();
                    lean.confirm();
                }
                Event::Marker { source, pid, commit } => {
                    let src = &srcs[*source];
                    let mut a = batch(*pid, true, Some(*commit));
                    let mut b = a.clone();
                    let ra = full.rewrite(src, &mut a, now, RewriteOptions { outcomes: true, ..RewriteOptions::default() }).unwrap();
                    lean.rewrite(src, &mut b, now, RewriteOptions { outcomes: true, ..RewriteOptions::default() }).unwrap();
                    prop_assert_eq!(&a, &b);
                    let mapped = ra.batches[0].mapped_pid;
                    if let Some(prev) = model.insert((src.clone(), *pid), mapped) {
                        prop_assert_eq!(prev, mapped);
                    }
                    topic.append(ra.records);
                    full.confirm();
                    lean.confirm();
                }
                Event::Advance(ms) => now += ms,
                Event::Expire => {
                    let open: Vec<(String, i64)> = full
                        .bindings()
                        .filter(|b| b.transaction_open)
                        .map(|b| (b.source_cluster_id.to_owned(), b.pid))
                        .collect();
                    let tombstones = full.expire(now).unwrap();
                    lean.expire(now).unwrap();
                    // Expiry never drops a binding with an open transaction.
                    for id in &open {
                        prop_assert!(full.lookup(&id.0, id.1).is_some(), "{:?} dropped with open txn", id);
                    }
                    for t in &tombstones {
                        model.remove(&(t.key.source_cluster_id.clone(), t.key.original_pid));
                    }
                    model.retain(|id, _| full.lookup(&id.0, id.1).is_some());
                    topic.append(tombstones);
                }
                Event::ExpireOne(i) => {
                    let target = full.bindings().nth(*i % full.len().max(1)).map(|b| b.mapped);
                    if let Some(mapped) = target {
                        let tombstones = full.expire_pid(mapped).unwrap();
                        lean.expire_pid(mapped).unwrap();
                        model.retain(|id, _| full.lookup(&id.0, id.1).is_some());
                        topic.append(tombstones);
                    }
                }
            }
            assert_no_shared_pids(&full);
            prop_assert_eq!(mapping(&full), mapping(&lean));
            prop_assert_eq!(mapping(&full), model.clone());
        }
        // Snapshot + restore gives identical mappings.
        let restored = Mapper::restore(&full.snapshot()).unwrap();
        prop_assert_eq!(mapping(&restored), mapping(&full));
        prop_assert_eq!(restored.snapshot(), full.snapshot());
        // Replaying the records (whole log, or compacted) gives identical mappings.
        for log in [topic.log.clone(), topic.compacted()] {
            let mut replayed = Mapper::new(config(Durability::Bindings)).unwrap();
            for r in &log {
                replayed.load_record(r).unwrap();
            }
            prop_assert_eq!(mapping(&replayed), mapping(&full));
        }
        // Collisions mode: snapshot, then replay of its records, restores it.
        let lean_restored = Mapper::restore(&lean.snapshot()).unwrap();
        prop_assert_eq!(mapping(&lean_restored), mapping(&lean));
    }
}

#[test]
fn helper_finds_colliding_pairs() {
    let pairs = colliding_pairs(6000);
    assert!(!pairs.is_empty());
    for (a, b) in pairs {
        assert_eq!(map_pid(&a, 7, 0).unwrap(), map_pid(&b, 7, 0).unwrap());
        assert_ne!(a, b);
    }
}
