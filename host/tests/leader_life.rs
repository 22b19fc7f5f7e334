//! A partition leader's life, with the broker module loaded in wasmtime
//! with no imports: mirrored fetches from three source clusters (two share
//! a region at salt 0), a local chain A -> B -> C, every record persisted
//! to an in-memory compacted `__mirror_state`, leader elections that
//! replay it, expiry with tombstones. Every output is compared with the
//! native API given the same inputs.

use std::collections::{BTreeMap, HashMap};

use mirrorpid::batch::{BatchBuilder, Batches, ControlType, Entry, RecordSpec};
use mirrorpid::{map_pid, Code, Mapper, MapperConfig, RewriteOptions, StateRecord};
use mirrorpid_host::{default_module_path, BrokerModule, RawRecord};

const TOPIC: &str = "bxw7Kp1OS3-KHC0-T1prfA";
const EXPIRATION_MS: i64 = 60_000;

fn config(partition: i32) -> String {
    format!(
        r#"{{"topicId":"{TOPIC}","partition":{partition},"producerExpirationMs":{EXPIRATION_MS}}}"#
    )
}

fn native(partition: i32) -> Mapper {
    Mapper::new(MapperConfig::from_json(&config(partition)).unwrap()).unwrap()
}

fn load() -> BrokerModule {
    BrokerModule::load(&default_module_path()).expect("broker module loads with no imports")
}

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
fn fetch(pids: &[i64], base: i64, transactional: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &pid) in pids.iter().enumerate() {
        out.extend(
            BatchBuilder {
                base_offset: base + i as i64,
                producer_id: pid,
                producer_epoch: 1,
                base_sequence: (base as i32) * 3,
                transactional: transactional && pid >= 0,
                records: vec![RecordSpec {
                    key: Some(format!("k{pid}").into_bytes()),
                    value: Some(vec![i as u8; 40 + i * 7]),
                }],
                ..BatchBuilder::default()
            }
            .encode(),
        );
    }
    out
}

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
fn garbage_is_answered_with_errors_and_the_module_keeps_serving() {
    let mut module = load();
    let h = module.mapper_new(&config(0)).unwrap();
    let mut good = fetch(&[1, 2], 0, false);
    module.rewrite(h, "A", &mut good, 1, 0).unwrap();
    assert_eq!(module.confirm(h).unwrap(), 2);
    let reference = module.snapshot(h).unwrap();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut errors = 0;
    for round in 0..300 {
        let len = (next() % 300) as usize;
        let mut junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if round % 3 == 0 && junk.len() > 17 {
            junk[16] = 2; // look like a v2 batch to get past the magic check
        }
        let before = junk.clone();
        let mut through_headers = junk.clone();
        let by_headers = module.rewrite_headers(h, "A", &mut through_headers, usize::MAX, 2, 2);
        match module.rewrite(h, "A", &mut junk, 2, 2) {
            Err(e) => {
                assert!(e.kind().is_some(), "no trap: {e}");
                assert!(!e.message.is_empty());
                assert_eq!(junk, before);
                assert_eq!(by_headers, Err(e), "the same error through headers");
                assert_eq!(through_headers, before);
                errors += 1;
            }
            Ok(out) => {
                assert_eq!(out.consumed, junk.len());
                assert_eq!(by_headers, Ok(out));
                assert_eq!(through_headers, junk);
            }
        }
        let key: Vec<u8> = (0..(next() % 40)).map(|_| next() as u8).collect();
        let e = module.load_record(h, &key, Some(&junk)).unwrap_err();
        assert!(
            e.kind().is_some_and(|k| k.value() < 100),
            "a core error: {e}"
        );
        assert!(module.restore(&junk).unwrap_err().kind().is_some());
    }
    assert!(errors > 250);
    assert_eq!(
        module.snapshot(h).unwrap(),
        reference,
        "garbage changed nothing"
    );

    // Bad handles: unknown, freed.
    assert_eq!(
        module.mapper_len(999).unwrap_err().kind(),
        Some(Code::BadHandle)
    );
    let tmp = module.mapper_new(&config(0)).unwrap();
    module.mapper_free(tmp).unwrap();
    assert_eq!(
        module.mapper_free(tmp).unwrap_err().kind(),
        Some(Code::BadHandle)
    );
    assert_eq!(
        module.snapshot(tmp).unwrap_err().kind(),
        Some(Code::BadHandle)
    );
    let mut buf = fetch(&[3], 0, false);
    let e = module.rewrite(tmp, "A", &mut buf, 0, 0).unwrap_err();
    assert_eq!(e.kind(), Some(Code::BadHandle));
    assert!(e.message.contains("BadHandle"));
    // Bad pointers: past memory, negative, inside memory but never allocated, freed.
    let mem = module.memory_size() as i32;
    assert_eq!(
        module.free(mem + 100).unwrap_err().kind(),
        Some(Code::BadPointer)
    );
    assert_eq!(module.free(-5).unwrap_err().kind(), Some(Code::BadPointer));
    assert_eq!(module.free(8).unwrap_err().kind(), Some(Code::BadPointer));
    let p = module.alloc(64).unwrap();
    module.free(p).unwrap();
    assert_eq!(module.free(p).unwrap_err().kind(), Some(Code::BadPointer));
    assert_eq!(
        module.alloc(-1).unwrap_err().kind(),
        Some(Code::BadArgument)
    );
    assert_eq!(module.alloc(0).unwrap_err().kind(), Some(Code::BadArgument));
    // Every pointer-taking export, with pointers past memory, negative
    // lengths, and lengths running past the end of a live block.
    use wasmtime::Val::{I32, I64};
    let block = module.alloc(16).unwrap();
    let past = mem + 4096;
    // mp_rewrite(h, src_ptr, src_len, buf_ptr, buf_len, now_ms = 0, flags = 0)
    let rewrite = |src: i32, src_len: i32, buf: i32, buf_len: i32| {
        vec![
            I32(h),
            I32(src),
            I32(src_len),
            I32(buf),
            I32(buf_len),
            I64(0),
            I32(0),
        ]
    };
    let bad_calls: Vec<(&str, Vec<wasmtime::Val>, Code)> = vec![
        ("mp_mapper_new", vec![I32(past), I32(10)], Code::BadPointer),
        ("mp_mapper_new", vec![I32(block), I32(17)], Code::BadPointer),
        (
            "mp_mapper_new",
            vec![I32(block), I32(-3)],
            Code::BadArgument,
        ),
        ("mp_rewrite", rewrite(block, 1, past, 100), Code::BadPointer),
        (
            "mp_rewrite",
            rewrite(block, 1, block + 8, 9),
            Code::BadPointer,
        ),
        ("mp_rewrite", rewrite(past, 1, block, 16), Code::BadPointer),
        (
            "mp_rewrite",
            rewrite(block, 1, block, -16),
            Code::BadArgument,
        ),
        ("mp_rewrite", rewrite(8, 4, block, 16), Code::BadPointer),
        (
            "mp_load_record",
            vec![I32(h), I32(past), I32(30), I32(0), I32(-1)],
            Code::BadPointer,
        ),
        (
            "mp_load_record",
            vec![I32(h), I32(block), I32(16), I32(past), I32(20)],
            Code::BadPointer,
        ),
        (
            "mp_load_record",
            vec![I32(h), I32(block), I32(16), I32(block), I32(-7)],
            Code::BadArgument,
        ),
        ("mp_restore", vec![I32(past), I32(64)], Code::BadPointer),
        // -1 is address 2^32-1: a pointer, not a length, so BadPointer.
        ("mp_restore", vec![I32(-1), I32(64)], Code::BadPointer),
        // A length of 0 is accepted with any pointer, even one past 2^31.
        ("mp_restore", vec![I32(-1), I32(0)], Code::ForeignSnapshot),
        ("mp_free", vec![I32(block + 1)], Code::BadPointer),
    ];
    for (name, args, code) in bad_calls {
        let status = module
            .call_raw(name, &args)
            .unwrap_or_else(|e| panic!("{name} trapped: {e}"));
        assert_eq!(
            status,
            -code.value(),
            "{name}{args:?}: {}",
            module.last_error()
        );
        assert!(module.last_error().starts_with(code.name()));
    }
    module.free(block).unwrap();
    // Malformed config, bad flags.
    assert_eq!(
        module.mapper_new("{not json").unwrap_err().kind(),
        Some(Code::InvalidInput)
    );
    assert_eq!(
        module
            .mapper_new(r#"{"topicId":"x","partition":0}"#)
            .unwrap_err()
            .kind(),
        Some(Code::InvalidTopicId)
    );
    let e = module
        .rewrite(h, "A", &mut fetch(&[1], 0, false), 0, 0x40)
        .unwrap_err();
    assert_eq!(e.kind(), Some(Code::BadArgument));
    // Still serving, state intact.
    let mut more = fetch(&[1, 2], 9, false);
    let mut native_more = more.clone();
    let out = module.rewrite(h, "A", &mut more, 3, 0).unwrap();
    assert!(out.records.is_empty(), "already bound");
    native(0)
        .rewrite("A", &mut native_more, 3, RewriteOptions::default())
        .unwrap();
    assert_eq!(more, native_more);
}

/// The module keeps the last call's source cluster ID and only compares
/// the next call's with it: whatever changed (another ID, a prefix of the
/// last, the same block rewritten in place, an ID sharing a block with the
/// batches) maps as that source, as natively, and a bad ID changes nothing.
#[test]
fn the_source_is_read_at_every_call() {
    let mut module = load();
    let h = module.mapper_new(&config(0)).unwrap();
    let mut twin = native(0);
    // The same PIDs from every source: each source's get PIDs of their own.
    let original = fetch(&[0, 1, 2], 0, false);
    let block = module.put(&original).unwrap();
    let src = module.put(b"AB").unwrap();
    let mut step = |module: &mut BrokerModule, id: &str, src: (i32, i32), buf: (i32, i32)| {
        module.write(buf.0, &original).unwrap();
        let consumed = module.rewrite_in_place(h, src, buf, 1, 0).unwrap();
        assert_eq!(consumed, original.len());
        let records = module.output_records(h).unwrap();
        module.confirm(h).unwrap();
        let mut want = original.clone();
        let out = twin
            .rewrite(id, &mut want, 1, RewriteOptions::default())
            .unwrap();
        twin.confirm();
        assert_eq!(module.read(buf.0, buf.1), want, "mapped as {id}");
        assert_eq!(records.len(), out.records.len(), "records of {id}");
        want
    };
    let ab = step(&mut module, "AB", src, block);
    let a = step(&mut module, "A", (src.0, 1), block);
    module.write(src.0, b"CD").unwrap();
    let cd = step(&mut module, "CD", src, block);
    assert!(ab != a && a != cd && ab != cd, "each source maps apart");
    module.write(src.0, b"AB").unwrap();
    assert_eq!(step(&mut module, "AB", src, block), ab, "bound before");

    // Not UTF-8, after "AB": refused, nothing changed; "AB" again is AB.
    let before = module.snapshot(h).unwrap();
    module.write(src.0, &[0xff, 0xfe]).unwrap();
    module.write(block.0, &original).unwrap();
    let e = module.rewrite_in_place(h, src, block, 1, 0).unwrap_err();
    assert_eq!(e.kind(), Some(Code::BadArgument), "{e}");
    assert!(e.message.contains("not UTF-8"), "{e}");
    assert_eq!(module.read(block.0, block.1), original);
    assert_eq!(module.snapshot(h).unwrap(), before);
    module.write(src.0, b"AB").unwrap();
    assert_eq!(step(&mut module, "AB", src, block), ab);

    // An empty ID is the core's error; the next call is served.
    let e = module
        .rewrite_in_place(h, (src.0, 0), block, 1, 0)
        .unwrap_err();
    assert_eq!(e.kind(), Some(Code::InvalidInput), "{e}");
    assert_eq!(step(&mut module, "AB", src, block), ab);

    // The ID in the same block as the batches, just before them.
    let shared = module.put(&[b"EF".as_slice(), &original].concat()).unwrap();
    let batches = (shared.0 + 2, original.len() as i32);
    let ef = step(&mut module, "EF", (shared.0, 2), batches);
    assert!(ef != ab && ef != cd);
    assert_eq!(module.read(shared.0, 2), b"EF");
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

/// A rewrite tries the blocks and the mapper the last rewrite used before
/// any bisection. A host that then passes a range running past that block,
/// starting before it, in a block since freed, or in a block whose index
/// moved, gets what the bisection gives: a bad pointer, or the right
/// block. A freed mapper's handle is refused, and another's is served as
/// itself.
#[test]
fn the_last_calls_blocks_are_only_a_hint() {
    let mut module = load();
    let h = module.mapper_new(&config(0)).unwrap();
    let mut twin = native(0);
    let original = fetch(&[0, 1, 2], 0, false);
    let n = original.len() as i32;
    let src = module.put(b"AB").unwrap();
    let buf = module.put(&original).unwrap();
    let mut want = original.clone();
    twin.rewrite("AB", &mut want, 1, RewriteOptions::default())
        .unwrap();
    assert_eq!(
        module.rewrite_in_place(h, src, buf, 1, 0).unwrap(),
        original.len()
    );
    assert_eq!(module.read(buf.0, n), want);
    let bad = |module: &mut BrokerModule, h: i32, src: (i32, i32), buf: (i32, i32)| {
        let before = module.snapshot(h).ok();
        let e = module.rewrite_in_place(h, src, buf, 1, 0).unwrap_err();
        assert_eq!(module.snapshot(h).ok(), before, "nothing changed");
        e.kind()
    };
    // Past the end of the last call's fetch block, and before its start.
    assert_eq!(
        bad(&mut module, h, src, (buf.0 + 1, n)),
        Some(Code::BadPointer)
    );
    assert_eq!(
        bad(&mut module, h, src, (buf.0 - 1, n)),
        Some(Code::BadPointer)
    );
    // Past the end of the last call's source block.
    assert_eq!(bad(&mut module, h, (src.0, 3), buf), Some(Code::BadPointer));
    assert_eq!(
        bad(&mut module, h, (src.0 + 1, 2), buf),
        Some(Code::BadPointer)
    );
    // Both blocks freed: their addresses are no block's now.
    module.free(buf.0).unwrap();
    assert_eq!(bad(&mut module, h, src, buf), Some(Code::BadPointer));
    let other = module.put(&original).unwrap();
    module.free(src.0).unwrap();
    assert_eq!(bad(&mut module, h, src, other), Some(Code::BadPointer));
    // New blocks on every side of the fetch, so that its index moves
    // between calls: each call still finds its own block.
    let mut blocks = vec![other];
    for round in 0..6 {
        let src = module.put(b"CD").unwrap();
        let fetch_block = module.put(&original).unwrap();
        blocks.push(src);
        blocks.push(fetch_block);
        // Free one earlier block, so that indices shift down too.
        if round % 2 == 1 {
            let old = blocks.remove(0);
            module.free(old.0).unwrap();
        }
        let mut want = original.clone();
        twin.rewrite("CD", &mut want, 1, RewriteOptions::default())
            .unwrap();
        module.rewrite_in_place(h, src, fetch_block, 1, 0).unwrap();
        assert_eq!(module.read(fetch_block.0, n), want, "round {round}");
    }
    // The mapper: a second one, then the first freed.
    let h2 = module.mapper_new(&config(1)).unwrap();
    let mut twin2 = native(1);
    let (src, fetch_block) = (module.put(b"CD").unwrap(), module.put(&original).unwrap());
    let mut want = original.clone();
    twin2
        .rewrite("CD", &mut want, 1, RewriteOptions::default())
        .unwrap();
    module.rewrite_in_place(h2, src, fetch_block, 1, 0).unwrap();
    assert_eq!(module.read(fetch_block.0, n), want, "as the second mapper");
    module.mapper_free(h).unwrap();
    module.write(fetch_block.0, &original).unwrap();
    assert_eq!(bad(&mut module, h, src, fetch_block), Some(Code::BadHandle));
    assert_eq!(module.read(fetch_block.0, n), original);
    module.rewrite_in_place(h2, src, fetch_block, 1, 0).unwrap();
    assert_eq!(
        module.read(fetch_block.0, n),
        want,
        "the second mapper again"
    );
}
