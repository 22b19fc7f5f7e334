//! Calls a host gets wrong, with the broker module loaded in wasmtime:
//! garbage in every argument is answered with typed errors and the module
//! keeps serving; the source is read at every call; the last call's
//! blocks are only a hint. Every output is compared with the native API
//! given the same inputs.

mod common;

use common::{config, fetch, load, native};
use mirrorpid::{Code, RewriteOptions};
use mirrorpid_host::BrokerModule;

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
