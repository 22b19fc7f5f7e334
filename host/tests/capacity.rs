//! The module under a memory limit (wasmtime `StoreLimits`), driven past
//! its capacity by a source that sends nothing but new PIDs: every call
//! returns an error code and none traps, a failed call changes nothing,
//! the other mapper of the instance keeps serving its producers, and
//! after expiry and `mp_mapper_free` the instance serves new work. Also:
//! the module's declared maximum memory, the config's capacity limits, and
//! the linear memory a bound producer costs.

use batches::fetch;
use mirrorpid::Code;
use mirrorpid_host::{default_module_path, AbiError, BrokerModule};
use mirrorpid_test_support::fetch as batches;
use wasmtime::{Engine, Module};

const TOPIC: &str = "bxw7Kp1OS3-KHC0-T1prfA";
/// The instance's memory cap: room for a few hundred thousand bindings.
const CAP: usize = 48 << 20;
const BATCHES: i64 = 1000;

fn compiled() -> (Engine, Module) {
    let engine = Engine::default();
    let module = Module::from_file(&engine, default_module_path()).expect("scripts/build.sh first");
    (engine, module)
}

fn config(extra: &str) -> String {
    format!(r#"{{"topicId":"{TOPIC}","partition":0,"producerExpirationMs":1000{extra}}}"#)
}

/// An error that is not a trap (the host reports a trap as code -1).
fn refused(e: &AbiError) -> Code {
    assert_ne!(e.code, -1, "a trap: {}", e.message);
    e.kind()
        .unwrap_or_else(|| panic!("unknown code {}", e.code))
}

fn mapped_pids(m: &mut BrokerModule, h: i32, source: &str, pids: std::ops::Range<i64>) -> Vec<i64> {
    let mut buf = fetch(pids);
    m.rewrite(h, source, &mut buf, 500, 0)
        .expect("the victim is served");
    mirrorpid::batch::Batches::new(&buf)
        .map(|e| match e.unwrap() {
            mirrorpid::batch::Entry::Batch { batch, .. } => batch.producer_id(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn past_its_memory_every_call_is_an_error_and_the_instance_recovers() {
    let (engine, module) = compiled();
    let mut m = BrokerModule::instantiate_limited(&engine, &module, CAP).unwrap();
    let victim = m.mapper_new(&config("")).unwrap();
    let before = mapped_pids(&mut m, victim, "victim", 0..20);
    m.confirm(victim).unwrap();

    // The flood: fetches of 1000 new PIDs each, into one block, until the
    // instance is out of memory (records only for collisions, so that the
    // bindings are what fills it).
    let flood = m
        .mapper_new(&config(r#","durability":"collisions""#))
        .unwrap();
    let src = m.put(b"flood").unwrap();
    let block = m.put(&fetch(0..BATCHES)).unwrap();
    let mut refusals = Vec::new();
    for round in 0..2_000 {
        m.write(block.0, &fetch(round * BATCHES..(round + 1) * BATCHES))
            .unwrap();
        let len = m.mapper_len(flood).unwrap();
        match m.rewrite_in_place(flood, src, block, 0, 0) {
            Ok(_) => {
                m.confirm(flood).unwrap();
            }
            Err(e) => {
                refusals.push(refused(&e));
                assert_eq!(
                    m.mapper_len(flood).unwrap(),
                    len,
                    "a failed call changed the mapper"
                );
                assert_eq!(m.pending(flood).unwrap(), 0);
                if refusals.len() == 5 {
                    break;
                }
            }
        }
    }
    assert!(
        refusals.contains(&Code::OutOfMemory),
        "the flood never ran out of memory: {refusals:?}, {} bindings",
        m.mapper_len(flood).unwrap()
    );
    let bound = m.mapper_len(flood).unwrap();
    assert!(bound > 100_000, "only {bound} bindings in {CAP} bytes");

    // At capacity: every export answers, none traps.
    for result in [
        m.alloc(64 << 20).map(drop),
        m.snapshot(flood).map(drop),
        m.mapper_new(&config("")).map(|h| {
            m.mapper_free(h).unwrap();
        }),
        m.restore(b"MPIDSNAP").map(drop),
    ] {
        if let Err(e) = result {
            refused(&e);
        }
    }
    // The victim's producers keep flowing, under the same PIDs.
    assert_eq!(mapped_pids(&mut m, victim, "victim", 0..20), before);

    // Expiry frees the flood's bindings, and the same mapper serves new work.
    m.expire(flood, 10_000).unwrap();
    assert_eq!(m.mapper_len(flood).unwrap(), 0);
    m.write(block.0, &fetch(10_000_000..10_000_000 + BATCHES))
        .unwrap();
    m.rewrite_in_place(flood, src, block, 10_000, 0).unwrap();
    m.confirm(flood).unwrap();
    // Freeing the mapper frees the rest: a new one takes as much again.
    m.mapper_free(flood).unwrap();
    let again = m.mapper_new(&config("")).unwrap();
    for round in 0..100 {
        m.write(block.0, &fetch(round * BATCHES..(round + 1) * BATCHES))
            .unwrap();
        m.rewrite_in_place(again, src, block, 0, 0).unwrap();
        m.confirm(again).unwrap();
    }
    assert_eq!(mapped_pids(&mut m, victim, "victim", 0..20), before);
}

#[test]
fn capacity_limits_refuse_new_identities_with_a_code() {
    let (engine, module) = compiled();
    let mut m = BrokerModule::instantiate(&engine, &module).unwrap();
    let h = m
        .mapper_new(&config(r#","maxBindings":"1500","maxClusters":1"#))
        .unwrap();
    let mut buf = fetch(0..1000);
    m.rewrite(h, "a", &mut buf, 0, 0).unwrap();
    m.confirm(h).unwrap();
    let mut buf = fetch(1000..2000);
    let err = m.rewrite(h, "a", &mut buf, 0, 0).unwrap_err();
    assert_eq!(err.kind(), Some(Code::CapacityExceeded));
    assert!(err.message.contains("maxBindings 1500"), "{}", err.message);
    let mut buf = fetch(0..1);
    let err = m.rewrite(h, "b", &mut buf, 0, 0).unwrap_err();
    assert!(err.message.contains("maxClusters 1"), "{}", err.message);
    assert_eq!(m.mapper_len(h).unwrap(), 1000);
    // The limits travel in the snapshot.
    let snap = m.snapshot(h).unwrap();
    let restored = m.restore(&snap).unwrap();
    let mut buf = fetch(0..1);
    let err = m.rewrite(restored, "b", &mut buf, 0, 0).unwrap_err();
    assert_eq!(err.kind(), Some(Code::CapacityExceeded));
}

#[test]
fn the_module_declares_a_maximum_memory_of_2_gib() {
    let (_, module) = compiled();
    let memory = module
        .exports()
        .find_map(|e| e.ty().memory().cloned())
        .expect("a memory export");
    assert_eq!(memory.maximum(), Some(32_768), "pages of 64 KiB");
    assert!(!memory.is_64());
}

/// What a host pays per producer is the linear memory the module grows to
/// (it never shrinks), not what the mapper holds at the end: binding
/// 1,000,000 producers through `mp_rewrite`, 1000 a fetch, grows it by at
/// most 64 bytes a producer (the binding table grows in chunks that never
/// move, so no copy of it is left behind as a hole; 107 bytes before).
/// Deterministic: the same module makes the same allocations.
#[test]
fn linear_memory_per_bound_producer_stays_within_64_bytes() {
    const N: i64 = 1_000_000;
    let (engine, module) = compiled();
    let mut m = BrokerModule::instantiate(&engine, &module).unwrap();
    let h = m
        .mapper_new(&format!(r#"{{"topicId":"{TOPIC}","partition":0}}"#))
        .unwrap();
    let src = m.put(b"east-1").unwrap();
    let mut fetches = (0..N)
        .step_by(1_000)
        .map(|first| fetch(first..first + 1_000));
    let first = fetches.next().unwrap();
    let block = m.put(&first).unwrap();
    let before = m.memory_size();
    for buf in std::iter::once(first).chain(fetches) {
        assert_eq!(buf.len(), block.1 as usize, "every fetch is the same size");
        m.write(block.0, &buf).unwrap();
        m.rewrite_in_place(h, src, block, 1, 0).unwrap();
        m.confirm(h).unwrap();
    }
    assert_eq!(m.mapper_len(h).unwrap(), N as usize);
    let per_producer = (m.memory_size() - before) as f64 / N as f64;
    println!("{N} producers: linear memory grew {per_producer:.1} bytes each");
    assert!(per_producer <= 64.0, "{per_producer:.1} bytes a producer");
}
