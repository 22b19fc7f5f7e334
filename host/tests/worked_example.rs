//! `docs/ABI.md`'s worked example, run as written: the block between the
//! markers below is the doc's code block, byte for byte (the first test
//! checks that), and the second test runs it against the module.

use mirrorpid::{map_pid, StateRecord};
use mirrorpid_abi::OutputInfo;
use mirrorpid_host::{default_module_path, BrokerModule};
use wasmtime::Val::{I32, I64};

use mirrorpid_test_support::fetch as batches;

/// Calls an export; a trap fails the test.
fn call(m: &mut BrokerModule, name: &str, args: &[wasmtime::Val]) -> i32 {
    m.call_raw(name, args).expect("no trap")
}

/// Copies bytes into a new block from `mp_alloc`.
fn put(m: &mut BrokerModule, bytes: &[u8]) -> i32 {
    let p = call(m, "mp_alloc", &[I32(bytes.len() as i32)]);
    assert!(p > 0);
    m.write(p, bytes).unwrap();
    p
}

/// The last error message.
fn last_error(m: &mut BrokerModule) -> String {
    let (p, l) = (
        call(m, "mp_last_error_ptr", &[]),
        call(m, "mp_last_error_len", &[]),
    );
    String::from_utf8_lossy(&m.read(p, l)).into_owned()
}

/// Records in the record-list layout.
fn parse(out: &[u8]) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    mirrorpid_abi::parse_records(out).expect("a record list")
}

// BEGIN worked example
/// One partition leader's life: start, replay `__mirror_state`, serve one
/// fetch from the mirrored cluster `east`. `state_topic` is the compacted
/// `__mirror_state` topic; `partition_log` the partition's log.
fn serve_one_fetch(
    m: &mut BrokerModule,
    state_topic: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    fetch: &[u8],
    now_ms: i64,
    partition_log: &mut Vec<u8>,
) -> Result<(), String> {
    // Once, when becoming leader of orders-0.
    let cfg = br#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;
    assert_eq!(cfg.len(), 50);
    let p = put(m, cfg);
    let h = call(m, "mp_mapper_new", &[I32(p), I32(50)]);
    if h < 0 {
        return Err(last_error(m));
    }
    call(m, "mp_free", &[I32(p)]);
    // Replay __mirror_state for this partition, in log order.
    for (key, value) in state_topic.iter() {
        let kp = put(m, key);
        let (vp, vl) = match value {
            Some(v) => (put(m, v), v.len() as i32),
            None => (0, -1),
        };
        let status = call(
            m,
            "mp_load_record",
            &[I32(h), I32(kp), I32(key.len() as i32), I32(vp), I32(vl)],
        );
        if status < 0 {
            return Err(last_error(m));
        }
        call(m, "mp_free", &[I32(kp)]);
        if vl > 0 {
            call(m, "mp_free", &[I32(vp)]);
        }
    }
    let src = put(m, b"east"); // keep it for every fetch from east
    let info_at = call(m, "mp_output_info", &[]); // ask once

    // Each fetch: rewrite, make the records durable, confirm, append.
    let n = fetch.len() as i32;
    let buf = put(m, fetch);
    let consumed = call(
        m,
        "mp_rewrite",
        &[
            I32(h),
            I32(src),
            I32(4),
            I32(buf),
            I32(n),
            I64(now_ms),
            I32(0),
        ],
    );
    if consumed < 0 {
        return Err(last_error(m)); // nothing changed: fail the fetch
    }
    // Where the output is, read without a call: the 12 bytes at
    // `mp_output_info()` (an address fixed for the instance's life).
    let bytes = m
        .read(info_at, 12)
        .try_into()
        .map_err(|_| "no output info")?;
    let info = OutputInfo::decode(&bytes).ok_or("malformed output info")?;
    let out = m.read(info.ptr as i32, info.len as i32);
    state_topic.extend(parse(&out)); // append, and wait for acks=all
    call(m, "mp_confirm", &[I32(h)]); // only now are new bindings permanent
    if info.snapshot_required {
        // a collision: take a producer-state snapshot
    }
    partition_log.extend(m.read(buf, consumed)); // the rewritten complete batches
    call(m, "mp_free", &[I32(buf)]);
    // (fetch[consumed..], a truncated batch, waits for the next fetch)
    Ok(())
}
// END worked example

fn doc_block() -> String {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ABI.md")).unwrap();
    let start = doc
        .find("```rust\n// BEGIN worked example\n")
        .expect("the doc has the example");
    let body = &doc[start + "```rust\n".len()..];
    body[..body.find("```").unwrap()].to_owned()
}

#[test]
fn the_doc_shows_this_example_verbatim() {
    let this = include_str!("worked_example.rs");
    let start = this.find("// BEGIN worked example").unwrap();
    let end = this.find("// END worked example\n").unwrap() + "// END worked example\n".len();
    assert_eq!(
        doc_block(),
        this[start..end],
        "docs/ABI.md and host/tests/worked_example.rs differ"
    );
}

#[test]
fn the_worked_example_runs() {
    let mut m = BrokerModule::load(&default_module_path()).unwrap();
    // A fetch of producer 5's batch, then a truncated batch.
    let batch = |pid| batches::fetch([pid]);
    let whole = batch(5);
    let fetch = [whole.clone(), batch(6)[..30].to_vec()].concat();
    let mut state_topic = Vec::new();
    let mut log = Vec::new();
    serve_one_fetch(&mut m, &mut state_topic, &fetch, 1_000, &mut log).unwrap();
    assert_eq!(log.len(), whole.len(), "the truncated batch waits");
    assert_eq!(
        i64::from_be_bytes(log[43..51].try_into().unwrap()),
        map_pid("east", 5, 0).unwrap()
    );
    assert_eq!(state_topic.len(), 1);
    let r = StateRecord::decode(&state_topic[0].0, state_topic[0].1.as_deref()).unwrap();
    assert_eq!(
        (r.key.source_cluster_id.as_str(), r.key.original_pid),
        ("east", 5)
    );
    // A second leader replays the topic and maps the same producer alike.
    let mut log2 = Vec::new();
    serve_one_fetch(&mut m, &mut state_topic, &whole, 2_000, &mut log2).unwrap();
    assert_eq!(log2, log);
    assert_eq!(state_topic.len(), 1, "a bound producer makes no new record");
}
