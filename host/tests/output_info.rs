//! `mp_output_info` (ABI version 4) against the three calls it stands for:
//! after every kind of successful call that writes an output, on either of
//! two mappers, its 12 bytes say what `mp_output_ptr`, `mp_output_len` and
//! `mp_snapshot_required` say of that mapper, and the bytes there are the
//! output; a failed call leaves them as they were; the address never moves,
//! memory growth included.

use mirrorpid_abi::{OutputInfo, ABI_VERSION, EMPTY_RECORDS};
use mirrorpid_host::{default_module_path, BrokerModule};
use wasmtime::Val::{I32, I64};

use mirrorpid_test_support::fetch as batches;

const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;

/// The info, checked against the calls on `h` and against `h`'s output
/// bytes; returns the output.
fn agrees(m: &mut BrokerModule, h: i32, what: &str) -> Vec<u8> {
    let info = m.output_info().expect("a valid info");
    // The calls' answer (an error for a negative pointer or length, or a
    // flag other than 0 or 1).
    let by_calls = m
        .output_info_by_calls(h)
        .unwrap_or_else(|e| panic!("{what}: the output calls: {e:?}"));
    assert_eq!(info, by_calls, "{what}: the info is h's output");
    let out = m.read(info.ptr as i32, info.len as i32);
    assert_eq!(out, m.output(h).unwrap(), "{what}: the bytes there");
    out
}

fn raw_bytes(m: &BrokerModule, at: i32) -> Vec<u8> {
    m.read(at, OutputInfo::BYTES as i32)
}

#[test]
fn the_output_info_says_where_the_last_output_is_without_a_call() {
    let mut m = BrokerModule::load(&default_module_path()).unwrap();
    assert_eq!(m.abi_version(), ABI_VERSION);
    let at = m.call_raw("mp_output_info", &[]).unwrap();
    assert!(at > 0);
    let (a, b) = (m.mapper_new(CONFIG).unwrap(), m.mapper_new(CONFIG).unwrap());

    // mp_rewrite: new producers, records in the output.
    let mut fetch = batches::fetch([0, 1, 2]);
    let r = m.rewrite(a, "cluster-2123", &mut fetch, 1, 0).unwrap();
    assert_eq!(r.records.len(), 3);
    // (rewrite() read the output through the calls, which write none.)
    agrees(&mut m, a, "mp_rewrite with records");
    m.confirm(a).unwrap();
    // A collision: cluster-2336 shares cluster-2123's region at salt 0.
    let mut fetch = batches::fetch([0]);
    let r = m.rewrite(a, "cluster-2336", &mut fetch, 1, 0).unwrap();
    assert!(r.snapshot_required);
    assert!(m.output_info().unwrap().snapshot_required);
    agrees(&mut m, a, "a collision");
    m.confirm(a).unwrap();

    // mp_rewrite_headers on the other mapper: the info follows the call.
    let mut fetch = batches::fetch([7, 8]);
    let r = m.rewrite_headers(b, "east", &mut fetch, 16, 2, 0).unwrap();
    assert_eq!(r.records.len(), 2);
    agrees(&mut m, b, "mp_rewrite_headers");
    m.confirm(b).unwrap();
    // Every producer bound: the empty list, 4 bytes, and no flag.
    let mut fetch = batches::fetch([7, 8]);
    m.rewrite_headers(b, "east", &mut fetch, 16, 3, 0).unwrap();
    assert_eq!(agrees(&mut m, b, "bound producers"), EMPTY_RECORDS);
    assert!(!m.output_info().unwrap().snapshot_required);

    // mp_map: the record list, then the mapped PID.
    let mapped = m.map(a, "west", 9, 4).unwrap();
    let out = agrees(&mut m, a, "mp_map");
    assert_eq!(out[out.len() - 8..], mapped.mapped.to_be_bytes());

    // mp_snapshot: the snapshot; the flag stays what a's last rewrite or map left.
    let snap = m.snapshot(a).unwrap();
    assert_eq!(agrees(&mut m, a, "mp_snapshot"), snap);

    // mp_expire and mp_expire_pid: the tombstones.
    m.confirm(a).unwrap();
    let n = m.call_raw("mp_expire", &[I32(a), I64(i64::MAX)]).unwrap();
    assert!(n > 0);
    agrees(&mut m, a, "mp_expire");
    let pid = m.map(b, "east", 7, 5).unwrap().mapped;
    assert_eq!(m.call_raw("mp_expire_pid", &[I32(b), I64(pid)]).unwrap(), 1);
    agrees(&mut m, b, "mp_expire_pid");

    // Failed calls leave the bytes as they were: a bad handle, a malformed
    // fetch, a refused flag, an expiry of a mapper that is not there.
    let before = raw_bytes(&m, at);
    let mut cut = batches::fetch([3]);
    cut.pop(); // a truncated tail where the fetch must be complete
    assert!(m.rewrite(a, "east", &mut cut, 6, 2).is_err());
    assert!(m
        .rewrite(99, "east", &mut batches::fetch([3]), 6, 0)
        .is_err());
    assert!(m
        .rewrite_headers(a, "east", &mut batches::fetch([3]), 16, 6, 1)
        .is_err());
    assert!(m.call_raw("mp_expire", &[I32(99), I64(6)]).unwrap() < 0);
    assert!(
        m.call_raw("mp_map", &[I32(99), I32(0), I32(0), I64(1), I64(6)])
            .unwrap()
            < 0
    );
    assert_eq!(raw_bytes(&m, at), before, "failed calls change no info");

    // The address is fixed: memory grows, the info stays where it was.
    let pages = m.memory_size();
    let big = m.alloc(64 << 20).unwrap();
    assert!(m.memory_size() > pages, "memory grew");
    assert_eq!(m.call_raw("mp_output_info", &[]).unwrap(), at);
    let mut fetch = batches::fetch([40]);
    m.rewrite(b, "east", &mut fetch, 7, 0).unwrap();
    agrees(&mut m, b, "after growth");
    m.free(big).unwrap();
}
