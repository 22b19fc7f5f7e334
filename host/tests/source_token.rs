//! `mp_source` and `mp_rewrite_headers_from`: a source cluster named once
//! by a token rewrites exactly as its ID does through `mp_rewrite_headers`
//! (two instances, the same schedule, every result and byte compared), and
//! a token the mapper never gave out, or an ID a rewrite would refuse, is
//! refused with nothing changed.

use mirrorpid::Code;
use mirrorpid_host::{default_module_path, AbiError, BrokerModule};
use mirrorpid_test_support::fetch as batches;

const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;

fn module() -> BrokerModule {
    BrokerModule::load(&default_module_path()).unwrap()
}

fn code(e: AbiError) -> i32 {
    e.code
}

#[test]
fn a_token_rewrites_as_its_id_does() {
    let (mut by_id, mut by_token) = (module(), module());
    let (a, b) = (
        by_id.mapper_new(CONFIG).unwrap(),
        by_token.mapper_new(CONFIG).unwrap(),
    );
    let sources = ["east", "west", "a-cluster-id-of-some-length"];
    let tokens: Vec<i32> = sources
        .iter()
        .map(|s| by_token.source(b, s).unwrap())
        .collect();
    let mut dice = 0x2545_f491_4f6c_dd1du64;
    let mut roll = |n: u64| {
        dice ^= dice << 13;
        dice ^= dice >> 7;
        dice ^= dice << 17;
        dice % n
    };
    for step in 0..300 {
        let s = roll(3) as usize;
        let now = step as i64 * 250;
        match roll(8) {
            0 => assert_eq!(by_id.confirm(a).unwrap(), by_token.confirm(b).unwrap()),
            1 => {
                by_id.confirm(a).unwrap();
                by_token.confirm(b).unwrap();
                assert_eq!(
                    by_id.expire(a, now).unwrap(),
                    by_token.expire(b, now).unwrap()
                );
            }
            _ => {
                let pids: Vec<i64> = (0..1 + roll(4)).map(|_| roll(8) as i64 - 1).collect();
                let mut x = batches::fetch(pids.iter().copied());
                // A truncated last batch now and then: a tail, or with
                // `complete` an error that changes nothing.
                if roll(5) == 0 {
                    x.truncate(x.len() - 3);
                }
                let flags = if roll(2) == 0 { 2 } else { 0 };
                let mut y = x.clone();
                let want = by_id.rewrite_headers(a, sources[s], &mut x, usize::MAX, now, flags);
                let got =
                    by_token.rewrite_headers_from(b, tokens[s], &mut y, usize::MAX, now, flags);
                match (want, got) {
                    (Ok(w), Ok(g)) => assert_eq!(w, g, "step {step}"),
                    (Err(w), Err(g)) => assert_eq!(w.code, g.code, "step {step}: {w:?} {g:?}"),
                    (w, g) => panic!("step {step}: {w:?} and {g:?}"),
                }
                assert_eq!(x, y, "step {step}: the fetches differ");
            }
        }
        assert_eq!(
            by_id.snapshot(a).unwrap(),
            by_token.snapshot(b).unwrap(),
            "step {step}"
        );
    }
}

#[test]
fn a_source_has_one_token_on_its_mapper() {
    let mut m = module();
    let (a, b) = (m.mapper_new(CONFIG).unwrap(), m.mapper_new(CONFIG).unwrap());
    let east = m.source(a, "east").unwrap();
    let west = m.source(a, "west").unwrap();
    assert!(east > 0 && west > 0 && east != west);
    assert_eq!(m.source(a, "east").unwrap(), east);
    // Another mapper's tokens are its own.
    assert_eq!(m.source(b, "west").unwrap(), 1);
    // IDs a rewrite refuses.
    assert_eq!(
        code(m.source(a, "").unwrap_err()),
        Code::InvalidInput.value()
    );
    let long = "x".repeat(32_768);
    assert_eq!(
        code(m.source(a, &long).unwrap_err()),
        Code::InvalidInput.value()
    );
    let (p, l) = m.put(&[0xff, 0xfe]).unwrap();
    let status = m
        .call_raw(
            "mp_source",
            &[
                wasmtime::Val::I32(a),
                wasmtime::Val::I32(p),
                wasmtime::Val::I32(l),
            ],
        )
        .unwrap();
    assert_eq!(-status, Code::BadArgument.value(), "{}", m.last_error());
    assert_eq!(
        code(m.source(99, "east").unwrap_err()),
        Code::BadHandle.value()
    );
}

#[test]
fn a_token_the_mapper_never_gave_out_changes_nothing() {
    let mut m = module();
    let (a, b) = (m.mapper_new(CONFIG).unwrap(), m.mapper_new(CONFIG).unwrap());
    m.source(a, "east").unwrap();
    m.source(a, "west").unwrap();
    let only = m.source(b, "east").unwrap();
    let before = m.snapshot(b).unwrap();
    for token in [0, -1, only + 1, 2, i32::MAX, i32::MIN] {
        let original = batches::fetch([1, 2, 3]);
        let mut fetch = original.clone();
        let e = m
            .rewrite_headers_from(b, token, &mut fetch, usize::MAX, 5, 0)
            .unwrap_err();
        assert_eq!(e.code, Code::BadArgument.value(), "token {token}: {e:?}");
        assert!(e.message.contains("source token"), "{}", e.message);
        assert_eq!(fetch, original, "token {token}");
        assert_eq!(m.pending(b).unwrap(), 0);
        assert_eq!(m.snapshot(b).unwrap(), before);
    }
    // The mapper's own token works, and a freed mapper's is gone with it.
    let mut fetch = batches::fetch([1]);
    m.rewrite_headers_from(b, only, &mut fetch, usize::MAX, 5, 0)
        .unwrap();
    m.mapper_free(b).unwrap();
    let e = m
        .rewrite_headers_from(b, only, &mut fetch, usize::MAX, 5, 0)
        .unwrap_err();
    assert_eq!(e.code, Code::BadHandle.value());
}

#[test]
fn a_mapper_names_a_bounded_number_of_sources() {
    let mut m = module();
    let h = m.mapper_new(CONFIG).unwrap();
    for i in 0..4096 {
        assert_eq!(m.source(h, &format!("source-{i}")).unwrap(), i + 1);
    }
    let e = m.source(h, "one-more").unwrap_err();
    assert_eq!(e.code, Code::CapacityExceeded.value(), "{e:?}");
    // The ones it has still answer.
    assert_eq!(m.source(h, "source-7").unwrap(), 8);
}
