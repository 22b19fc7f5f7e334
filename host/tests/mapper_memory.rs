//! What one mapper holds in an instance's linear memory, exactly, as
//! `mp_heap_bytes` counts it: an empty mapper, and a mapper that bound ten
//! producers with one rewrite and a confirm. A broker places thousands of
//! mappers in one instance (`docs/ABI.md`, "Many mappers"), so these bytes
//! are what a partition costs the module; like an instruction count, the
//! figure is the same on every machine, and a change that makes a partition
//! cost more fails here. Also: a freed mapper gives back every byte, which
//! the next mapper of the instance then uses.

use mirrorpid_host::{default_module_path, BrokerModule};
use mirrorpid_test_support::fetch::fetch;

const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":7}"#;

/// What an empty mapper holds: its tables, savepoint, output and source
/// list before any producer (their first growth comes with the work).
const EMPTY_MAPPER_BYTES: usize = 464;
/// What a mapper of ten producers holds once they are confirmed.
const TEN_PRODUCERS_BYTES: usize = 1_808;
/// The most a mapper of ten producers may hold: small enough that ten
/// thousand partitions' mappers fit a server's last-level cache, which
/// round-robin fetches over them reach (a call keeps no room for the
/// records or output it does not make).
const TEN_PRODUCERS_LIMIT: usize = 2 << 10;

fn instance() -> BrokerModule {
    BrokerModule::load(&default_module_path()).expect("scripts/build.sh first")
}

/// A mapper bound to ten producers from one source: one rewrite, confirmed,
/// then a fetch of theirs again, as every fetch after.
fn bind_ten(m: &mut BrokerModule, h: i32, first_pid: i64) {
    let mut buf = fetch(first_pid..first_pid + 10);
    let done = m.rewrite(h, "source-a", &mut buf, 1_000, 0).unwrap();
    assert_eq!((done.consumed, done.records.len()), (buf.len(), 10));
    assert_eq!(m.confirm(h).unwrap(), 10);
    let mut buf = fetch(first_pid..first_pid + 10);
    let done = m.rewrite(h, "source-a", &mut buf, 2_000, 0).unwrap();
    assert_eq!((done.consumed, done.records.len()), (buf.len(), 0));
}

/// The heap bytes `f` left held.
fn held(m: &mut BrokerModule, f: impl FnOnce(&mut BrokerModule)) -> usize {
    let before = m.heap_bytes();
    f(m);
    m.heap_bytes() - before
}

#[test]
fn an_empty_mapper_and_one_of_ten_producers_hold_their_bytes_exactly() {
    let mut m = instance();
    // The instance's own first-call state (the handle table, the blocks'
    // list) is made once, by the first mapper.
    let first = m.mapper_new(CONFIG).unwrap();
    bind_ten(&mut m, first, 0);

    let mut h = 0;
    let empty = held(&mut m, |m| h = m.mapper_new(CONFIG).unwrap());
    assert_eq!(
        empty, EMPTY_MAPPER_BYTES,
        "an empty mapper holds {empty} bytes of linear memory"
    );
    let ten = empty + held(&mut m, |m| bind_ten(m, h, 100));
    assert_eq!(
        ten, TEN_PRODUCERS_BYTES,
        "a mapper of ten producers holds {ten} bytes of linear memory"
    );
    assert!(ten <= TEN_PRODUCERS_LIMIT);
}

/// `docs/ABI.md` ("Many mappers") states both figures as this test holds
/// them.
#[test]
fn the_abi_document_states_what_a_mapper_holds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The document's lines joined, so that a sentence may wrap anywhere.
    let doc = std::fs::read_to_string(root.join("docs/ABI.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let thousands = |n: usize| format!("{},{:03}", n / 1000, n % 1000);
    for stated in [
        format!("{EMPTY_MAPPER_BYTES} bytes of linear memory empty"),
        format!("{} with ten producers", thousands(TEN_PRODUCERS_BYTES)),
    ] {
        assert!(doc.contains(&stated), "docs/ABI.md does not say {stated:?}");
    }
}

#[test]
fn a_freed_mapper_returns_every_byte_and_the_next_one_reuses_them() {
    let mut m = instance();
    let warm = m.mapper_new(CONFIG).unwrap();
    bind_ten(&mut m, warm, 0);
    m.mapper_free(warm).unwrap();
    let before = m.heap_bytes();
    let pages = m.memory_size();
    for round in 0..1_000 {
        let h = m.mapper_new(CONFIG).unwrap();
        bind_ten(&mut m, h, 1_000 + round * 10);
        m.mapper_free(h).unwrap();
        assert_eq!(
            m.heap_bytes(),
            before,
            "round {round}: a freed mapper left bytes held"
        );
    }
    // A thousand mappers made and freed in turn fit where one did.
    assert_eq!(m.memory_size(), pages, "linear memory grew");

    // Behind a mapper that stays, a freed one leaves only its handle's
    // slot (handles are never reused; `broker/src/blocks.rs`, `Handles`).
    let stays = m.mapper_new(CONFIG).unwrap();
    bind_ten(&mut m, stays, 0);
    let before = m.heap_bytes();
    for round in 0..1_000 {
        let h = m.mapper_new(CONFIG).unwrap();
        bind_ten(&mut m, h, 1_000 + round * 10);
        m.mapper_free(h).unwrap();
    }
    let left = m.heap_bytes() - before;
    assert!(left <= 8 * 1_000, "{left} bytes left by 1000 freed mappers");
}

#[test]
fn a_thousand_mappers_of_ten_producers_share_one_instance() {
    let mut m = instance();
    let base = m.heap_bytes();
    let mut handles = Vec::new();
    for i in 0..1_000 {
        let h = m.mapper_new(CONFIG).unwrap();
        bind_ten(&mut m, h, i * 10);
        handles.push(h);
    }
    let per_mapper = (m.heap_bytes() - base) / handles.len();
    // Each holds what the exact test says, plus its share of the handle
    // table.
    assert!(
        (TEN_PRODUCERS_BYTES..TEN_PRODUCERS_BYTES + 128).contains(&per_mapper),
        "{per_mapper} bytes a mapper"
    );
    for h in handles {
        m.mapper_free(h).unwrap();
    }
}
