//! The native core and the broker module in wasmtime, fed the same
//! structured calls, must agree on every one: the same status or error
//! code, the same rewritten bytes (whole with `mp_rewrite`, and through
//! the headers with `mp_rewrite_headers`), the same records, and the same
//! snapshot, size and pending count after each call. No call may trap.
//!
//! The inputs come from a grammar of real things: fetches of real batches
//! (data, transactional, control markers, legacy entries, PIDs at the
//! edges of each space) with bit flips and truncation; `__mirror_state`
//! records with every field chosen (strings of bad UTF-8, lengths and
//! varints at their limits, tagged fields) and then mutated byte-wise;
//! snapshots taken and damaged; configs valid and not; and the calls in
//! any order (confirm, abort, expiry, replay, restore).
#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use mirrorpid::batch::{BatchBuilder, ControlType, RecordSpec};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions, StateRecord};
use mirrorpid_host::{AbiError, BrokerModule, RawRecord};
use wasmtime::{Engine, Module};

const TOPIC_HEX: &str = "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c";
const OTHER_TOPIC: &str = "bxw7Kp1OS3-KHC0-T1prfA";
const CONFIGS: [&str; 6] = [
    r#"{"topicId":"6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c","partition":0}"#,
    r#"{"topicId":"6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c","partition":0,"durability":"collisions","producerExpirationMs":1000}"#,
    r#"{"topicId":"6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c","partition":0,"origins":{"B":["A"],"C":["A","B"]}}"#,
    r#"{"topicId":"6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c","partition":0,"maxBindings":3,"maxClusters":2,"maxClusterIdBytes":16}"#,
    r#"{"topicId":"6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c","partition":"0"}"#,
    r#"{"topicId":"6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7d","partition":2147483648}"#,
];
/// Two of these collide at salt 0 on every PID (cluster-2123, cluster-2336).
const SOURCES: [&str; 6] = [
    "A",
    "B",
    "C",
    "cluster-2123",
    "cluster-2336",
    "\u{e9}t\u{e9}",
];
const MAX_MEMORY: usize = 64 << 20;

fn compiled() -> &'static (Engine, Module) {
    static M: OnceLock<(Engine, Module)> = OnceLock::new();
    M.get_or_init(|| mirrorpid_fuzz::pooled_module(MAX_MEMORY))
}

/// A PID at the interesting places of each space.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Pid {
    Small(u8),
    Local(u64),
    Edge(u8),
    Mirrored { origin: u8, pid: u8, salt: u8 },
    Any(i64),
}

impl Pid {
    fn value(self) -> i64 {
        match self {
            Pid::Small(p) => i64::from(p % 8),
            Pid::Local(p) => (p % (1 << 40)) as i64,
            Pid::Edge(i) => [
                -1,
                -2,
                i64::MIN,
                i64::MAX,
                (1 << 40) - 1,
                1 << 40,
                (1 << 62) - 1,
                1 << 62,
            ][usize::from(i) % 8],
            Pid::Mirrored { origin, pid, salt } => mirrorpid::map_pid(
                SOURCES[usize::from(origin) % 3],
                i64::from(pid % 8),
                u64::from(salt % 64),
            )
            .unwrap_or(0),
            Pid::Any(p) => p,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Part {
    Data {
        pid: Pid,
        txn: bool,
        sizes: Vec<u8>,
        epoch: i16,
    },
    Control {
        pid: Pid,
        kind: u8,
    },
    Legacy {
        magic: bool,
        len: u8,
    },
}

fn encode(part: &Part) -> Vec<u8> {
    match part {
        Part::Data {
            pid,
            txn,
            sizes,
            epoch,
        } => BatchBuilder {
            producer_id: pid.value(),
            producer_epoch: *epoch,
            transactional: *txn,
            records: sizes
                .iter()
                .take(4)
                .map(|&n| RecordSpec {
                    key: None,
                    value: Some(vec![n; usize::from(n)]),
                })
                .collect(),
            ..BatchBuilder::default()
        }
        .encode(),
        Part::Control { pid, kind } => BatchBuilder {
            producer_id: pid.value(),
            transactional: true,
            control: Some(match kind % 3 {
                0 => ControlType::Abort,
                1 => ControlType::Commit,
                _ => ControlType::Other(i16::from(*kind)),
            }),
            ..BatchBuilder::default()
        }
        .encode(),
        Part::Legacy { magic, len } => {
            let size = 14 + usize::from(*len % 64);
            let mut e = vec![0u8; 12 + size];
            e[8..12].copy_from_slice(&(size as i32).to_be_bytes());
            e[16] = u8::from(*magic);
            e
        }
    }
}

/// A byte-level change after encoding.
#[derive(Arbitrary, Debug)]
enum Mutation {
    Flip {
        at: u16,
        bit: u8,
    },
    Set {
        at: u16,
        byte: u8,
    },
    Truncate(u16),
    Append(Vec<u8>),
    /// A 4-byte big-endian length or count written at `at`.
    Length {
        at: u16,
        value: i32,
    },
}

fn mutate(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for m in mutations.iter().take(4) {
        let n = bytes.len();
        match m {
            Mutation::Flip { at, bit } if n > 0 => bytes[usize::from(*at) % n] ^= 1 << (bit % 8),
            Mutation::Set { at, byte } if n > 0 => bytes[usize::from(*at) % n] = *byte,
            Mutation::Truncate(to) => bytes.truncate(usize::from(*to) % (n + 1)),
            Mutation::Append(extra) => bytes.extend(extra.iter().take(16)),
            Mutation::Length { at, value } if n >= 4 => {
                let i = usize::from(*at) % (n - 3);
                bytes[i..i + 4].copy_from_slice(&value.to_be_bytes());
            }
            _ => {}
        }
    }
}

/// A string field: valid text, empty, long, or bytes that are not UTF-8.
#[derive(Arbitrary, Debug)]
enum Text {
    Source(u8),
    Empty,
    Long(u8),
    Raw(Vec<u8>),
}

impl Text {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Text::Source(i) => SOURCES[usize::from(*i) % SOURCES.len()].as_bytes().to_vec(),
            Text::Empty => Vec::new(),
            Text::Long(n) => vec![b'x'; 200 + usize::from(*n) * 4],
            Text::Raw(b) => b.iter().take(8).copied().collect(),
        }
    }
}

/// A `__mirror_state` record built field by field (`docs/FORMAT.md`), so
/// that every field can be wrong on its own, then mutated byte-wise.
#[derive(Arbitrary, Debug)]
struct RecordSpecFuzz {
    api_key: Option<i16>,
    other_topic: bool,
    partition: u8,
    source: Text,
    pid: Pid,
    value: Option<ValueSpec>,
    key_mutations: Vec<Mutation>,
}

#[derive(Arbitrary, Debug)]
struct ValueSpec {
    version: Option<i16>,
    salt: u8,
    wild_salt: Option<i64>,
    colliding: Text,
    timestamp: i64,
    tags: Vec<(u8, Vec<u8>)>,
    mutations: Vec<Mutation>,
}

/// An unsigned varint, as Kafka's flexible versions write lengths and tags.
fn put_uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_compact(out: &mut Vec<u8>, bytes: &[u8]) {
    put_uvarint(out, bytes.len() as u32 + 1);
    out.extend_from_slice(bytes);
}

impl RecordSpecFuzz {
    fn bytes(&self) -> (Vec<u8>, Option<Vec<u8>>) {
        let mut key = Vec::new();
        key.extend_from_slice(&self.api_key.unwrap_or(3).to_be_bytes());
        let topic: mirrorpid::TopicId = if self.other_topic {
            OTHER_TOPIC
        } else {
            TOPIC_HEX
        }
        .parse()
        .unwrap();
        key.extend_from_slice(topic.as_bytes());
        let partition: i32 = [0, 1, -1, i32::MAX][usize::from(self.partition) % 4];
        key.extend_from_slice(&partition.to_be_bytes());
        let source = self.source.bytes();
        key.extend_from_slice(&(source.len() as i16).to_be_bytes());
        key.extend_from_slice(&source);
        key.extend_from_slice(&self.pid.value().to_be_bytes());
        mutate(&mut key, &self.key_mutations);
        let value = self.value.as_ref().map(|v| {
            let mut out = Vec::new();
            out.extend_from_slice(&v.version.unwrap_or(0).to_be_bytes());
            let salt = v.wild_salt.unwrap_or(i64::from(v.salt % 64));
            out.extend_from_slice(&salt.to_be_bytes());
            put_compact(&mut out, &v.colliding.bytes());
            out.extend_from_slice(&v.timestamp.to_be_bytes());
            let tags: Vec<_> = v.tags.iter().take(3).collect();
            put_uvarint(&mut out, tags.len() as u32);
            for (tag, data) in tags {
                put_uvarint(&mut out, u32::from(*tag));
                let data: Vec<u8> = data.iter().take(8).copied().collect();
                put_uvarint(&mut out, data.len() as u32);
                out.extend_from_slice(&data);
            }
            mutate(&mut out, &v.mutations);
            out
        });
        (key, value)
    }
}

#[derive(Arbitrary, Debug)]
enum Call {
    Rewrite {
        source: u8,
        parts: Vec<Part>,
        mutations: Vec<Mutation>,
        now: i64,
        flags: u8,
        /// Through `mp_rewrite_headers` with at most this many slots
        /// (`None`: `mp_rewrite`).
        headers: Option<u8>,
        /// With `headers`, through `mp_rewrite_headers_from`, the source
        /// named by its `mp_source` token.
        token: bool,
    },
    Map {
        source: u8,
        pid: Pid,
        now: i64,
    },
    Load(RecordSpecFuzz),
    Confirm,
    Abort,
    Expire(i64),
    ExpirePid(Pid),
    /// Snapshot both, compare, and restore the snapshot (mutated) into
    /// both as the new mapper.
    Restore(Vec<Mutation>),
    New(u8),
}

/// The native side's answer for one call, as the module reports it.
type Answer = Result<(i64, Vec<RawRecord>, Vec<u8>), i32>;

fn raw(records: &[StateRecord]) -> Vec<RawRecord> {
    records
        .iter()
        .map(|r| {
            let (key, value) = r.encode().unwrap();
            RawRecord { key, value }
        })
        .collect()
}

fn code(e: mirrorpid::Error) -> i32 {
    e.kind().value()
}

fn module_code(e: AbiError) -> i32 {
    assert!(e.kind().is_some(), "a trap or unknown code: {e}");
    assert!(
        e.message.starts_with(e.kind().unwrap().name()),
        "the message names the error: {e}"
    );
    e.code
}

struct Pair {
    module: BrokerModule,
    handle: Option<i32>,
    native: Option<Mapper>,
}

impl Pair {
    fn replace(&mut self, module: Result<i32, AbiError>, native: mirrorpid::Result<Mapper>) {
        match (module, native) {
            (Ok(h), Ok(n)) => {
                if let Some(old) = self.handle.replace(h) {
                    self.module.mapper_free(old).unwrap();
                }
                self.native = Some(n);
            }
            (Err(e), Err(n)) => assert_eq!(module_code(e), code(n)),
            (m, n) => panic!("module {m:?} but native {:?}", n.map(|_| ())),
        }
    }

    fn compare_state(&mut self) {
        let (Some(h), Some(n)) = (self.handle, self.native.as_ref()) else {
            return;
        };
        assert_eq!(self.module.snapshot(h).unwrap(), n.snapshot(), "snapshots");
        assert_eq!(self.module.mapper_len(h).unwrap(), n.len(), "sizes");
        assert_eq!(self.module.pending(h).unwrap(), n.pending(), "pending");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(calls) = Vec::<Call>::arbitrary(&mut u) else {
        return;
    };
    let (engine, module) = compiled();
    let module = BrokerModule::instantiate_limited(engine, module, MAX_MEMORY).unwrap();
    let mut pair = Pair {
        module,
        handle: None,
        native: None,
    };
    let m = pair.module.mapper_new(CONFIGS[0]);
    let n = Mapper::new(MapperConfig::from_json(CONFIGS[0]).unwrap());
    pair.replace(m, n);
    for call in calls.into_iter().take(24) {
        let (Some(h), Some(native)) = (pair.handle, pair.native.as_mut()) else {
            return;
        };
        let m = &mut pair.module;
        match call {
            Call::Rewrite {
                source,
                parts,
                mutations,
                now,
                flags,
                headers,
                token,
            } => {
                let source = SOURCES[usize::from(source) % SOURCES.len()];
                let mut fetch: Vec<u8> = parts.iter().take(8).flat_map(encode).collect();
                mutate(&mut fetch, &mutations);
                let flags = i32::from(flags & 3);
                let options = RewriteOptions {
                    strict_crc: flags & 1 != 0,
                    complete: flags & 2 != 0,
                    ..RewriteOptions::default()
                };
                let mut via_module = fetch.clone();
                // What the native core is given: the whole fetch, or the
                // entries a header call gathered when its slots ran out.
                let mut end = fetch.len();
                let got = match headers {
                    None => m.rewrite(h, source, &mut via_module, now, flags),
                    Some(slots) => {
                        let slots = usize::from(slots % 12) + 1;
                        let mut slot_bytes = Vec::new();
                        let offsets = mirrorpid::batch::gather(&fetch, slots, &mut slot_bytes);
                        if offsets.len() == slots {
                            end = prefix(&fetch, *offsets.last().unwrap());
                        }
                        if token {
                            m.source(h, source).and_then(|t| {
                                m.rewrite_headers_from(h, t, &mut via_module, slots, now, flags)
                            })
                        } else {
                            m.rewrite_headers(h, source, &mut via_module, slots, now, flags)
                        }
                    }
                };
                let mut via_native = fetch[..end].to_vec();
                let refused = headers.is_some() && options.strict_crc;
                let want = if refused {
                    // The header path refuses strict CRC before anything.
                    Err(19)
                } else {
                    native
                        .rewrite(source, &mut via_native, now, options)
                        .map_err(code)
                        .map(|r| {
                            (
                                r.consumed as i64,
                                raw(&r.records),
                                vec![u8::from(r.snapshot_required)],
                            )
                        })
                };
                let got: Answer = got.map_err(module_code).map(|r| {
                    (
                        r.consumed as i64,
                        r.records,
                        vec![u8::from(r.snapshot_required)],
                    )
                });
                assert_eq!(got, want, "rewrite");
                if got.is_ok() {
                    assert_eq!(via_module[..end], via_native[..], "rewritten bytes");
                    assert_eq!(via_module[end..], fetch[end..], "ungathered bytes");
                } else {
                    assert_eq!(via_module, fetch, "a failed rewrite changed the fetch");
                }
            }
            Call::Map { source, pid, now } => {
                let source = SOURCES[usize::from(source) % SOURCES.len()];
                let pid = pid.value();
                let got = m
                    .map(h, source, pid, now)
                    .map_err(module_code)
                    .map(|o| (o.mapped, o.salt, o.records, o.snapshot_required));
                let want = native.map(source, pid, now).map_err(code).map(|o| {
                    let records = o.record.as_deref().map(std::slice::from_ref);
                    (
                        o.mapped,
                        o.salt,
                        raw(records.unwrap_or(&[])),
                        o.snapshot_required,
                    )
                });
                assert_eq!(got, want, "map");
            }
            Call::Load(spec) => {
                let (key, value) = spec.bytes();
                let got = m
                    .load_record(h, &key, value.as_deref())
                    .map_err(module_code);
                let want = StateRecord::decode(&key, value.as_deref())
                    .and_then(|r| native.load_record(&r))
                    .map(|o| mirrorpid_abi::load_status(&o))
                    .map_err(code);
                assert_eq!(got, want, "load_record");
            }
            Call::Confirm => assert_eq!(m.confirm(h).unwrap(), native.confirm()),
            Call::Abort => assert_eq!(m.abort(h).unwrap(), native.abort()),
            Call::Expire(now) => {
                let got = m.expire(h, now).map_err(module_code);
                let want = native.expire(now).map(|r| raw(&r)).map_err(code);
                assert_eq!(got, want, "expire");
            }
            Call::ExpirePid(pid) => {
                let pid = pid.value();
                let got = m.expire_pid(h, pid).map_err(module_code);
                let want = native.expire_pid(pid).map(|r| raw(&r)).map_err(code);
                assert_eq!(got, want, "expire_pid");
            }
            Call::Restore(mutations) => {
                let mut snap = native.snapshot();
                mutate(&mut snap, &mutations);
                let got = m.restore(&snap);
                let want = Mapper::restore(&snap);
                pair.replace(got, want);
            }
            Call::New(i) => {
                let config = CONFIGS[usize::from(i) % CONFIGS.len()];
                let got = m.mapper_new(config);
                let want = MapperConfig::from_json(config).and_then(Mapper::new);
                pair.replace(got, want);
            }
        }
        pair.compare_state();
    }
});

/// The bytes a header call that ran out of slots covers, when the last
/// slot it gathered is the entry at `last`: up to that entry's end, and at
/// least to its magic byte (a walker reads an entry's magic even when its
/// batchLength says it is shorter, and refuses it), so that the whole
/// rewrite of this prefix meets what the slots hold.
fn prefix(fetch: &[u8], last: usize) -> usize {
    let end = match fetch.get(last + 8..last + 12) {
        Some(b) => match usize::try_from(i32::from_be_bytes(b.try_into().unwrap())) {
            Ok(l) => (last + 12).saturating_add(l),
            Err(_) => fetch.len(),
        },
        None => fetch.len(),
    };
    end.max(last + mirrorpid::batch::MAGIC_OFFSET + 1)
        .min(fetch.len())
}
