//! Arbitrary interleavings of the broker module's exports, with arbitrary
//! arguments, in wasmtime: no call traps, a failed `mp_rewrite` leaves the
//! buffer and the mapper unchanged, and every pointer the module returns
//! lies inside its memory. `mp_output_info` says what the three output
//! calls say after every successful call that writes an output, and no
//! failed call changes it.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mirrorpid_abi::OutputInfo;
use mirrorpid_host::BrokerModule;
use wasmtime::Val::{self, I32, I64};
use wasmtime::{Engine, Module};

use mirrorpid_test_support::fetch as batches;

#[derive(Arbitrary, Debug)]
enum Call {
    Alloc(u16),
    AllocRaw(i32),
    Free(u8),
    FreeRaw(i32),
    Write {
        block: u8,
        at: u16,
        bytes: Vec<u8>,
    },
    Batches(Vec<i64>),
    MapperNew {
        config: u8,
    },
    MapperNewRaw {
        block: u8,
    },
    MapperFree(u8),
    Rewrite {
        handle: u8,
        source: u8,
        block: u8,
        now: i64,
        flags: u8,
    },
    RewriteRaw {
        handle: u8,
        args: (i32, i32, i32, i32),
        now: i64,
        flags: i32,
    },
    /// `mp_source`, then `mp_rewrite_headers_from` with the token it gave
    /// or with any other.
    RewriteFrom {
        handle: u8,
        source: u8,
        token: Option<i32>,
        block: u8,
        count: i32,
        fetch_len: i32,
        now: i64,
        flags: i32,
    },
    Load {
        handle: u8,
        key: u8,
        value: Option<u8>,
    },
    LoadRaw {
        handle: u8,
        args: (i32, i32, i32, i32),
    },
    Snapshot(u8),
    RestoreBlock(u8),
    RestoreSnapshot(u8),
    Expire {
        handle: u8,
        now: i64,
    },
    ExpirePid {
        handle: u8,
        pid: i64,
    },
    Confirm(u8),
    Abort(u8),
    Pending(u8),
    Len(u8),
    SnapshotRequired(u8),
    Output(u8),
    HashSeed(i64),
}

const CONFIGS: [&str; 3] = [
    r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#,
    r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"durability":"collisions","producerExpirationMs":1000}"#,
    r#"{"topicId":"b6efb12a-9d2b-4c3e-8e1d-000000000001","partition":1}"#,
];
const SOURCES: [&str; 4] = ["A", "cluster-2123", "cluster-2336", "B"];
/// The module's memory cap, and how much of it the fuzzer may allocate
/// through `mp_alloc` (the rest is the module's own working room). The
/// allocation budget is small on purpose: an input that fills megabytes
/// costs about a second to run and reset, which starves the search of
/// executions without reaching any code that 1 MiB does not (the walker's
/// paths depend on header fields, not on batch size).
const MAX_MEMORY: usize = 256 << 20;
const MAX_ALLOCATED: i64 = 1 << 20;

fn compiled() -> &'static (Engine, Module) {
    static M: OnceLock<(Engine, Module)> = OnceLock::new();
    M.get_or_init(|| mirrorpid_fuzz::pooled_module(MAX_MEMORY))
}

/// The exports that write an output (`docs/ABI.md`, `mp_output_info`).
const OUTPUT_CALLS: [&str; 7] = [
    "mp_rewrite",
    "mp_rewrite_headers",
    "mp_rewrite_headers_from",
    "mp_map",
    "mp_snapshot",
    "mp_expire",
    "mp_expire_pid",
];

struct Run {
    m: BrokerModule,
    /// Where `mp_output_info`'s bytes are.
    info_at: i32,
    blocks: Vec<(i32, i32)>,
    handles: Vec<i32>,
    snapshots: Vec<Vec<u8>>,
    allocated: i64,
}

impl Run {
    fn call(&mut self, name: &str, args: &[Val]) -> i32 {
        let info = self.m.read(self.info_at, OutputInfo::BYTES as i32);
        let status = match self.m.call_raw(name, args) {
            Ok(status) => status,
            Err(trap) => panic!("{name}({args:?}) trapped: {trap:?}"),
        };
        if status < 0 {
            assert_eq!(
                self.m.read(self.info_at, OutputInfo::BYTES as i32),
                info,
                "a failed {name} changed the output info"
            );
        } else if OUTPUT_CALLS.contains(&name) {
            let Some(&I32(h)) = args.first() else {
                unreachable!("an output call's first argument is its handle")
            };
            self.check_info(h, name);
        }
        status
    }
    /// After a successful `name` on `h`: the info is what the three calls
    /// say of `h`, and lies inside memory.
    fn check_info(&mut self, h: i32, name: &str) {
        let info = self.m.output_info().expect("the info decodes");
        let by_calls = self
            .m
            .output_info_by_calls(h)
            .unwrap_or_else(|e| panic!("the output calls on {h} after {name}: {e:?}"));
        assert_eq!(info, by_calls, "after {name}");
        self.check_memory(info.ptr as i32, info.len as i32);
    }
    fn handle(&self, i: u8) -> i32 {
        self.handles
            .get(usize::from(i))
            .copied()
            .unwrap_or(i32::from(i) - 2)
    }
    fn block(&self, i: u8) -> Option<(i32, i32)> {
        (!self.blocks.is_empty()).then(|| self.blocks[usize::from(i) % self.blocks.len()])
    }
    fn alloc(&mut self, len: i32) -> i32 {
        if i64::from(len) + self.allocated > MAX_ALLOCATED {
            return -1;
        }
        let p = self.call("mp_alloc", &[I32(len)]);
        if p > 0 {
            self.blocks.push((p, len));
            self.allocated += i64::from(len);
        }
        p
    }
    fn put(&mut self, bytes: &[u8]) -> Option<(i32, i32)> {
        if bytes.is_empty() {
            return None;
        }
        let p = self.alloc(bytes.len() as i32);
        (p > 0).then(|| {
            self.m.write(p, bytes).unwrap();
            (p, bytes.len() as i32)
        })
    }
    /// What a failed call must leave unchanged (this overwrites the output).
    fn state(&mut self, h: i32) -> Option<(Vec<u8>, usize, usize)> {
        let snap = self.m.snapshot(h).ok()?;
        Some((snap, self.m.mapper_len(h).ok()?, self.m.pending(h).ok()?))
    }
    fn check_memory(&mut self, ptr: i32, len: i32) {
        let size = self.m.memory_size() as i64;
        assert!(
            ptr >= 0 && len >= 0 && i64::from(ptr) + i64::from(len) <= size,
            "({ptr}, {len}) outside memory of {size}"
        );
    }
    /// One of [`SOURCES`] in a new block, if the allocation budget allows.
    fn put_source(&mut self, source: u8) -> Option<(i32, i32)> {
        self.put(SOURCES[usize::from(source) % SOURCES.len()].as_bytes())
    }

    fn rewrite(&mut self, h: i32, args: (i32, i32, i32, i32), now: i64, flags: i32) {
        let (bp, bl) = (args.2, args.3);
        let args = [
            I32(h),
            I32(args.0),
            I32(args.1),
            I32(bp),
            I32(bl),
            I64(now),
            I32(flags),
        ];
        self.rewrite_call(h, "mp_rewrite", &args, (bp, bl));
    }

    /// A rewrite export called with `args` on mapper `h`, whose buffer (the
    /// fetch's bytes or its slots) is `buf`: a failure has a message and
    /// changes neither the buffer nor the mapper.
    fn rewrite_call(&mut self, h: i32, name: &str, args: &[Val], (bp, bl): (i32, i32)) {
        let before = self.state(h);
        // The host's bytes: a range inside one live block from mp_alloc.
        // Elsewhere (the module's own heap and stack) any call may write.
        let in_block = bl >= 0
            && self.blocks.iter().any(|&(p, l)| {
                bp >= p && i64::from(bp) + i64::from(bl) <= i64::from(p) + i64::from(l)
            });
        let bytes = in_block.then(|| self.m.read(bp, bl));
        let status = self.call(name, args);
        if status < 0 {
            // The message first: any successful call (the checks below
            // make some) clears it.
            let (p, l) = (
                self.call("mp_last_error_ptr", &[]),
                self.call("mp_last_error_len", &[]),
            );
            self.check_memory(p, l);
            assert!(l > 0, "a failure has a message");
            if let Some(bytes) = bytes {
                assert_eq!(
                    self.m.read(bp, bl),
                    bytes,
                    "a failed {name} changed the buffer"
                );
            }
            if before.is_some() {
                assert_eq!(self.state(h), before, "a failed {name} changed the mapper");
            }
        }
    }
}

fuzz_target!(|calls: Vec<Call>| {
    let (engine, module) = compiled();
    let mut m = BrokerModule::instantiate_limited(engine, module, MAX_MEMORY).unwrap();
    let info_at = m.call_raw("mp_output_info", &[]).unwrap();
    let mut run = Run {
        m,
        info_at,
        blocks: Vec::new(),
        handles: Vec::new(),
        snapshots: Vec::new(),
        allocated: 0,
    };
    for call in calls.into_iter().take(64) {
        match call {
            Call::Alloc(len) => {
                run.alloc(i32::from(len));
            }
            Call::AllocRaw(len) => {
                run.alloc(len);
            }
            Call::Free(i) => {
                if !run.blocks.is_empty() {
                    let (p, _) = run.blocks.remove(usize::from(i) % run.blocks.len());
                    assert_eq!(run.call("mp_free", &[I32(p)]), 0);
                }
            }
            Call::FreeRaw(p) => {
                if !run.blocks.iter().any(|b| b.0 == p) {
                    assert!(
                        run.call("mp_free", &[I32(p)]) < 0,
                        "freeing a non-block fails"
                    );
                }
            }
            Call::Write { block, at, bytes } => {
                if let Some((p, l)) = run.block(block) {
                    let at = i32::from(at) % l;
                    let n = bytes.len().min((l - at) as usize);
                    run.m.write(p + at, &bytes[..n]).unwrap();
                }
            }
            Call::Batches(pids) => {
                let bytes = batches::fetch(pids.iter().take(16).copied());
                run.put(&bytes);
            }
            Call::MapperNew { config } => {
                let text = CONFIGS[usize::from(config) % CONFIGS.len()];
                if let Some((p, l)) = run.put(text.as_bytes()) {
                    let h = run.call("mp_mapper_new", &[I32(p), I32(l)]);
                    assert!(h > 0, "a valid config makes a mapper");
                    run.handles.push(h);
                }
            }
            Call::MapperNewRaw { block } => {
                if let Some((p, l)) = run.block(block) {
                    let h = run.call("mp_mapper_new", &[I32(p), I32(l)]);
                    if h > 0 {
                        run.handles.push(h);
                    }
                }
            }
            Call::MapperFree(i) => {
                let h = run.handle(i);
                run.call("mp_mapper_free", &[I32(h)]);
            }
            Call::Rewrite {
                handle,
                source,
                block,
                now,
                flags,
            } => {
                let h = run.handle(handle);
                let Some((sp, sl)) = run.put_source(source) else {
                    continue;
                };
                let (bp, bl) = run.block(block).unwrap_or((0, 0));
                run.rewrite(h, (sp, sl, bp, bl), now, i32::from(flags & 7));
            }
            Call::RewriteRaw {
                handle,
                args,
                now,
                flags,
            } => {
                let h = run.handle(handle);
                run.rewrite(h, args, now, flags);
            }
            Call::RewriteFrom {
                handle,
                source,
                token,
                block,
                count,
                fetch_len,
                now,
                flags,
            } => {
                let h = run.handle(handle);
                let Some((sp, sl)) = run.put_source(source) else {
                    continue;
                };
                let given = run.call("mp_source", &[I32(h), I32(sp), I32(sl)]);
                let token = token.unwrap_or(given);
                let (bp, _) = run.block(block).unwrap_or((0, 0));
                let slots = count
                    .checked_mul(mirrorpid::batch::SLOT_BYTES as i32)
                    .unwrap_or(-1);
                let args = [
                    I32(h),
                    I32(token),
                    I32(bp),
                    I32(count),
                    I32(fetch_len),
                    I64(now),
                    I32(flags),
                ];
                run.rewrite_call(h, "mp_rewrite_headers_from", &args, (bp, slots));
            }
            Call::Load { handle, key, value } => {
                let h = run.handle(handle);
                let (kp, kl) = run.block(key).unwrap_or((0, 0));
                let (vp, vl) = match value {
                    Some(v) => run.block(v).unwrap_or((0, 0)),
                    None => (0, -1),
                };
                run.call(
                    "mp_load_record",
                    &[I32(h), I32(kp), I32(kl), I32(vp), I32(vl)],
                );
            }
            Call::LoadRaw { handle, args } => {
                let h = run.handle(handle);
                run.call(
                    "mp_load_record",
                    &[I32(h), I32(args.0), I32(args.1), I32(args.2), I32(args.3)],
                );
            }
            Call::Snapshot(i) => {
                let h = run.handle(i);
                if let Ok(snap) = run.m.snapshot(h) {
                    run.check_info(h, "mp_snapshot");
                    run.snapshots.push(snap);
                }
            }
            Call::RestoreBlock(i) => {
                if let Some((p, l)) = run.block(i) {
                    let h = run.call("mp_restore", &[I32(p), I32(l)]);
                    if h > 0 {
                        run.handles.push(h);
                    }
                }
            }
            Call::RestoreSnapshot(i) => {
                if !run.snapshots.is_empty() {
                    let snap = run.snapshots[usize::from(i) % run.snapshots.len()].clone();
                    if let Some((p, l)) = run.put(&snap) {
                        let h = run.call("mp_restore", &[I32(p), I32(l)]);
                        assert!(h > 0, "a snapshot restores");
                        run.handles.push(h);
                        assert_eq!(
                            run.m.snapshot(h).unwrap(),
                            snap,
                            "restore(snapshot(m)) == m"
                        );
                    }
                }
            }
            Call::Expire { handle, now } => {
                let h = run.handle(handle);
                run.call("mp_expire", &[I32(h), I64(now)]);
            }
            Call::ExpirePid { handle, pid } => {
                let h = run.handle(handle);
                run.call("mp_expire_pid", &[I32(h), I64(pid)]);
            }
            Call::Confirm(i) => {
                let h = run.handle(i);
                run.call("mp_confirm", &[I32(h)]);
            }
            Call::Abort(i) => {
                let h = run.handle(i);
                run.call("mp_abort", &[I32(h)]);
            }
            Call::Pending(i) => {
                let h = run.handle(i);
                run.call("mp_pending", &[I32(h)]);
            }
            Call::Len(i) => {
                let h = run.handle(i);
                run.call("mp_mapper_len", &[I32(h)]);
            }
            Call::SnapshotRequired(i) => {
                let h = run.handle(i);
                let s = run.call("mp_snapshot_required", &[I32(h)]);
                assert!(s <= 1);
            }
            Call::HashSeed(seed) => {
                assert_eq!(run.call("mp_hash_seed", &[I64(seed)]), 0);
            }
            Call::Output(i) => {
                let h = run.handle(i);
                let (p, l) = (
                    run.call("mp_output_ptr", &[I32(h)]),
                    run.call("mp_output_len", &[I32(h)]),
                );
                if p >= 0 && l >= 0 {
                    run.check_memory(p, l);
                }
            }
        }
    }
});
