//! A partition leader's life, with the broker module loaded in wasmtime
//! with no imports: mirrored fetches from three source clusters (two share
//! a region at salt 0), a local chain A -> B -> C, every record persisted
//! to an in-memory compacted `__mirror_state`, leader elections that
//! replay it, expiry with tombstones. Every output is compared with the
//! native API given the same inputs.

use std::collections::{BTreeMap, HashMap};

use mirrorpid::batch::{BatchBuilder, Batches, ControlType, Entry};
use mirrorpid::{map_pid, Mapper, RewriteOptions, StateRecord};
use mirrorpid_host::{default_module_path, BrokerModule, RawRecord};

mod common;

use common::{config, fetch, load, native, EXPIRATION_MS};

/// `__mirror_state` as a compacted topic: last value per key; tombstones kept.
#[derive(Default)]
struct CompactedTopic {
    log: Vec<RawRecord>,
}

impl CompactedTopic {
    fn append(&mut self, records: &[RawRecord]) {
        self.log.extend_from_slice(records);
    }
    fn compacted(&self) -> Vec<RawRecord> {
        let mut last: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        for (i, r) in self.log.iter().enumerate() {
            last.insert(r.key.clone(), i);
        }
        let mut keep: Vec<usize> = last.into_values().collect();
        keep.sort_unstable();
        keep.into_iter().map(|i| self.log[i].clone()).collect()
    }
}

/// A fetch: data batches for `pids`, some transactional, plus PID -1.
fn marker(pid: i64, commit: bool, base: i64) -> Vec<u8> {
    BatchBuilder {
        base_offset: base,
        producer_id: pid,
        producer_epoch: 1,
        control: Some(if commit {
            ControlType::Commit
        } else {
            ControlType::Abort
        }),
        ..BatchBuilder::default()
    }
    .encode()
}

fn raw(records: &[StateRecord]) -> Vec<RawRecord> {
    records
        .iter()
        .map(|r| {
            let (key, value) = r.encode().unwrap();
            RawRecord { key, value }
        })
        .collect()
}

/// One destination partition served by the module, shadowed by the native
/// mapper. `known` is every identity with the PID it was mapped to.
struct Leader<'m> {
    module: &'m mut BrokerModule,
    handle: i32,
    /// A second mapper of the module, served every fetch through its
    /// headers (`mp_rewrite_headers`); it must agree with the first.
    headers: i32,
    native: Mapper,
    topic: CompactedTopic,
    known: HashMap<(String, i64), i64>,
    partition: i32,
}

impl<'m> Leader<'m> {
    fn new(module: &'m mut BrokerModule, partition: i32) -> Leader<'m> {
        let handle = module.mapper_new(&config(partition)).unwrap();
        let headers = module.mapper_new(&config(partition)).unwrap();
        Leader {
            module,
            handle,
            headers,
            native: native(partition),
            topic: CompactedTopic::default(),
            known: HashMap::new(),
            partition,
        }
    }

    /// Rewrites a fetch in the module and natively; both must agree byte
    /// for byte, record for record. Returns the rewritten bytes.
    fn serve(&mut self, source: &str, input: &[u8], now: i64) -> Vec<u8> {
        let mut via_module = input.to_vec();
        let out = self
            .module
            .rewrite(self.handle, source, &mut via_module, now, 0)
            .unwrap();
        let mut via_headers = input.to_vec();
        let by_headers = self
            .module
            .rewrite_headers(self.headers, source, &mut via_headers, usize::MAX, now, 0)
            .unwrap();
        assert_eq!(via_headers, via_module, "headers rewrite the same bytes");
        assert_eq!(by_headers, out, "headers give the same result");
        let mut via_native = input.to_vec();
        let expected = self
            .native
            .rewrite(
                source,
                &mut via_native,
                now,
                RewriteOptions {
                    outcomes: true,
                    ..RewriteOptions::default()
                },
            )
            .unwrap();
        assert_eq!(
            via_module, via_native,
            "module and native rewrite the same bytes"
        );
        assert_eq!(out.consumed, expected.consumed);
        assert_eq!(out.records, raw(&expected.records));
        assert_eq!(out.snapshot_required, expected.snapshot_required);
        for b in &expected.batches {
            if b.original_pid >= 0 {
                let prev = self
                    .known
                    .insert((source.to_owned(), b.original_pid), b.mapped_pid);
                if let Some(prev) = prev {
                    assert_eq!(prev, b.mapped_pid, "a bound producer keeps its PID");
                }
            }
        }
        // The protocol: records durable, then confirm, then append.
        self.topic.append(&out.records);
        assert_eq!(
            self.module.confirm(self.handle).unwrap(),
            self.native.confirm()
        );
        self.module.confirm(self.headers).unwrap();
        via_module
    }

    /// A new leader. With `with_snapshot`, it restores the old leader's
    /// snapshot first (which carries last-seen times and open transactions),
    /// then replays the compacted topic; without, it replays only. The
    /// native shadow does the same.
    fn elect(&mut self, with_snapshot: bool) {
        let snapshot = self.module.snapshot(self.handle).unwrap();
        assert_eq!(self.module.snapshot(self.headers).unwrap(), snapshot);
        self.module.mapper_free(self.handle).unwrap();
        self.module.mapper_free(self.headers).unwrap();
        if with_snapshot {
            self.headers = self.module.restore(&snapshot).unwrap();
            self.handle = self.module.restore(&snapshot).unwrap();
            self.native = Mapper::restore(&snapshot).unwrap();
        } else {
            self.headers = self.module.mapper_new(&config(self.partition)).unwrap();
            self.handle = self.module.mapper_new(&config(self.partition)).unwrap();
            self.native = native(self.partition);
        }
        for r in self.topic.compacted() {
            self.module
                .load_record(self.headers, &r.key, r.value.as_deref())
                .unwrap();
            let got = self
                .module
                .load_record(self.handle, &r.key, r.value.as_deref())
                .unwrap();
            let decoded = StateRecord::decode(&r.key, r.value.as_deref()).unwrap();
            self.native.load_record(&decoded).unwrap();
            assert!(got == 1 || got == 2);
        }
        assert_eq!(
            self.module.mapper_len(self.handle).unwrap(),
            self.native.len()
        );
        assert_eq!(
            self.module.snapshot(self.handle).unwrap(),
            self.native.snapshot()
        );
    }

    /// Every known producer maps as before (fetching one batch each; a
    /// producer inside a transaction sends a transactional batch).
    fn assert_mapping_unchanged(&mut self, now: i64) {
        let mut known: Vec<_> = self.known.clone().into_iter().collect();
        known.sort();
        for ((source, pid), mapped) in known {
            let open = self
                .native
                .lookup(&source, pid)
                .is_some_and(|b| b.transaction_open);
            let out = self.serve(&source, &fetch(&[pid], 0, open), now);
            assert_eq!(
                i64::from_be_bytes(out[43..51].try_into().unwrap()),
                mapped,
                "{source}/{pid}"
            );
        }
    }
}

#[test]
fn a_partition_leaders_life() {
    let mut module = load();
    assert_eq!(module.abi_version(), mirrorpid_abi::ABI_VERSION);
    assert_eq!(module.abi_version(), mirrorpid_abi::ABI_VERSION);
    let mut leader = Leader::new(&mut module, 0);
    let sources = ["cluster-2123", "cluster-2336", "A"];
    let mut now = 1_764_403_200_000;
    // Mirrored fetches; the first two sources collide on every PID.
    for round in 0..3 {
        for source in sources {
            let pids: Vec<i64> = (0..6).chain([-1]).collect();
            leader.serve(source, &fetch(&pids, round * 10, round == 1), now);
        }
        now += 1_000;
    }
    let salted = leader.native.bindings().filter(|b| b.salt > 0).count();
    assert_eq!(salted, 6, "cluster-2336's six producers all collided");
    // Close cluster-2123's transactions on 0..2, leave 3..5 open.
    for pid in 0..3 {
        leader.serve("cluster-2123", &marker(pid, pid % 2 == 0, 100), now);
    }
    leader.elect(true);
    for pid in 0..6 {
        let open = leader
            .native
            .lookup("cluster-2123", pid)
            .unwrap()
            .transaction_open;
        assert_eq!(
            open,
            pid >= 3,
            "transaction state survives a snapshot election"
        );
    }
    leader.assert_mapping_unchanged(now);
    // More fetches after the election, including a new producer.
    leader.serve("A", &fetch(&[6, 7], 200, false), now);
    // Expiry: everything idle except what we touch now; open transactions stay.
    now += EXPIRATION_MS;
    leader.serve("A", &fetch(&[0], 300, false), now);
    let tombstones = leader.module.expire(leader.handle, now).unwrap();
    assert_eq!(
        leader.module.expire(leader.headers, now).unwrap(),
        tombstones
    );
    let native_tombstones = leader.native.expire(now).unwrap();
    assert_eq!(tombstones, raw(&native_tombstones));
    assert!(!tombstones.is_empty());
    assert!(tombstones.iter().all(|t| t.value.is_none()));
    for t in &tombstones {
        let k = StateRecord::decode(&t.key, None).unwrap().key;
        assert!(
            !(k.source_cluster_id == "cluster-2123" && (3..6).contains(&k.original_pid)),
            "open txn expired"
        );
        leader.known.remove(&(k.source_cluster_id, k.original_pid));
    }
    leader.topic.append(&tombstones);
    // Explicit expiry of one mapped PID.
    let one = map_pid("A", 7, 0).unwrap();
    let t = leader.module.expire_pid(leader.handle, one).unwrap();
    assert_eq!(leader.module.expire_pid(leader.headers, one).unwrap(), t);
    assert_eq!(t, raw(&leader.native.expire_pid(one).unwrap()));
    leader.topic.append(&t);
    leader.known.remove(&("A".to_owned(), 7));
    leader.elect(false);
    leader.assert_mapping_unchanged(now);
}

#[test]
fn a_local_chain_a_b_c() {
    let mut module = load();
    // Two mapper instances in one module: partition p at B (mirrors A) and at C (mirrors B).
    let at_b = module.mapper_new(&config(1)).unwrap();
    let at_c = module.mapper_new(&config(2)).unwrap();
    let now = 5_000;
    let mut from_a = fetch(&[5, 6], 0, false);
    module.rewrite(at_b, "A", &mut from_a, now, 0).unwrap();
    // B's log holds A's batches (mapped) and B's own producer 5.
    let b_local = fetch(&[5], 2, false);
    let mut b_log = [from_a.clone(), b_local].concat();
    let out = module.rewrite(at_c, "B", &mut b_log, now, 0).unwrap();
    assert_eq!(out.records.len(), 3);
    let pids: Vec<i64> = Batches::new(&b_log)
        .map(|e| match e.unwrap() {
            Entry::Batch { batch, .. } => batch.producer_id(),
            Entry::Legacy { .. } => unreachable!(),
        })
        .collect();
    let a5 = map_pid("A", 5, 0).unwrap();
    assert_eq!(
        pids[0], a5,
        "A's producer keeps its PID at C (pass-through)"
    );
    assert_eq!(pids[1], map_pid("A", 6, 0).unwrap());
    let b5 = pids[2];
    assert_eq!(b5, map_pid("B", 5, 0).unwrap());
    assert_ne!(b5, a5, "B's own 5 never meets A's 5");
    // The native API agrees.
    let mut n = native(2);
    let mut again = [fetch(&[5, 6], 0, false), fetch(&[5], 2, false)].concat();
    let mut nb = native(1);
    let split = again.len() - fetch(&[5], 2, false).len();
    nb.rewrite("A", &mut again[..split], now, RewriteOptions::default())
        .unwrap();
    n.rewrite("B", &mut again, now, RewriteOptions::default())
        .unwrap();
    assert_eq!(again, b_log);
}

#[test]
fn module_is_within_its_budget_and_imports_nothing() {
    let path = default_module_path();
    let size = std::fs::metadata(&path).unwrap().len();
    // The budget is written once, in wasm-pack.toml's [broker] table.
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../wasm-pack.toml")).unwrap();
    let budget: u64 = manifest
        .lines()
        .find_map(|l| l.strip_prefix("max-bytes = "))
        .and_then(|v| v.trim().parse().ok())
        .expect("wasm-pack.toml names the module's max-bytes");
    assert!(
        size <= budget,
        "{} is {size} bytes, over its budget of {budget}",
        path.display()
    );
    // load() itself refuses a module with imports.
    load();
}
