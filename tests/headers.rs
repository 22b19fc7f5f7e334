//! A fetch rewritten through its gathered headers (`HeaderView`, the ABI's
//! `mp_rewrite_headers`) against the same fetch rewritten whole: for any
//! bytes (real batches of every kind, legacy entries, bit flips, truncated
//! tails, fewer slots than entries), the same result or the same error,
//! the same records and outcomes, the same bytes once the slots are
//! written back, and the same mapper state afterwards.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use mirrorpid::batch::{
    gather, write_back, BatchBuilder, ControlType, HeaderView, RecordSpec, SLOT_BYTES,
    SLOT_CHANGED_OFFSET, SLOT_LEN_OFFSET, WINDOW,
};
use mirrorpid::{Error, Mapper, MapperConfig, RewriteOptions, RewriteResult};
use proptest::prelude::*;

fn mapper() -> Mapper {
    Mapper::new(MapperConfig::new(common::TOPIC.parse().unwrap(), 0)).unwrap()
}

/// One entry of a generated fetch.
#[derive(Debug, Clone)]
enum Part {
    Data {
        pid: i64,
        txn: bool,
        sizes: Vec<usize>,
    },
    Control {
        pid: i64,
        commit: bool,
    },
    Legacy {
        magic: u8,
        len: u8,
    },
}

fn part() -> impl Strategy<Value = Part> {
    let pid = prop_oneof![0i64..8, Just(-1i64), 0i64..(1 << 40), Just(1i64 << 45)];
    prop_oneof![
        4 => (pid.clone(), any::<bool>(), proptest::collection::vec(0usize..400, 0..4))
            .prop_map(|(pid, txn, sizes)| Part::Data { pid, txn, sizes }),
        1 => (pid, any::<bool>()).prop_map(|(pid, commit)| Part::Control { pid, commit }),
        1 => (0u8..2, 0u8..80).prop_map(|(magic, len)| Part::Legacy { magic, len }),
    ]
}

fn encode(part: &Part) -> Vec<u8> {
    match part {
        Part::Data { pid, txn, sizes } => BatchBuilder {
            producer_id: *pid,
            transactional: *txn,
            records: sizes
                .iter()
                .map(|&n| RecordSpec {
                    key: None,
                    value: Some(vec![7; n]),
                })
                .collect(),
            ..BatchBuilder::default()
        }
        .encode(),
        Part::Control { pid, commit } => BatchBuilder {
            producer_id: *pid,
            transactional: true,
            control: Some(if *commit {
                ControlType::Commit
            } else {
                ControlType::Abort
            }),
            ..BatchBuilder::default()
        }
        .encode(),
        Part::Legacy { magic, len } => {
            // offset, size, crc, magic, attributes, then filler.
            let size = 14 + usize::from(*len);
            let mut e = vec![0u8; 12 + size];
            e[8..12].copy_from_slice(&(size as i32).to_be_bytes());
            e[16] = *magic;
            e
        }
    }
}

/// Options that describe every batch, so that outcomes are compared too.
const DESCRIBED: RewriteOptions = RewriteOptions {
    strict_crc: false,
    complete: false,
    outcomes: true,
};

/// The outcome of one rewrite, comparable across the two paths.
type Outcome = Result<(usize, Vec<u8>, RewriteResult), Error>;

fn by_buffer(m: &mut Mapper, fetch: &[u8], options: RewriteOptions) -> Outcome {
    by_buffer_at(m, fetch, options, 1_000)
}

/// [`by_buffer`] at host time `now`.
fn by_buffer_at(m: &mut Mapper, fetch: &[u8], options: RewriteOptions, now: i64) -> Outcome {
    let mut bytes = fetch.to_vec();
    let out = m.rewrite("east", &mut bytes, now, options)?;
    Ok((out.consumed, bytes, out))
}

fn by_headers(m: &mut Mapper, fetch: &[u8], max_slots: usize, options: RewriteOptions) -> Outcome {
    by_headers_at(m, fetch, max_slots, options, 1_000)
}

/// [`by_headers`] at host time `now`.
fn by_headers_at(
    m: &mut Mapper,
    fetch: &[u8],
    max_slots: usize,
    options: RewriteOptions,
    now: i64,
) -> Outcome {
    let mut slots = Vec::new();
    let offsets = gather(fetch, max_slots, &mut slots);
    let before = slots.clone();
    let mut view = HeaderView::new(&mut slots, fetch.len()).unwrap();
    let out = match m.rewrite_headers("east", &mut view, now, options) {
        Ok(out) => out,
        Err(e) => {
            assert_eq!(slots, before, "a failed header rewrite changed its slots");
            return Err(e);
        }
    };
    let mut bytes = fetch.to_vec();
    write_back(&slots, &offsets, &mut bytes);
    Ok((out.consumed, bytes, out))
}

/// The bytes a header rewrite covers (the buffer it is equivalent to):
/// the whole fetch if the host gathered every entry; else up to the end of
/// the last gathered entry, and at least to its magic byte (the walker
/// reads an entry's magic even when its batchLength says it is shorter).
/// The fuzz target `differential` computes the same.
fn gathered_prefix(fetch: &[u8], max_slots: usize) -> usize {
    let mut slots = Vec::new();
    let offsets = gather(fetch, max_slots, &mut slots);
    if offsets.len() < max_slots {
        return fetch.len();
    }
    let last = *offsets.last().unwrap_or(&0);
    let length = fetch
        .get(last + 8..last + 12)
        .map(|b| i32::from_be_bytes(b.try_into().unwrap()));
    let end = match length {
        Some(l) if l >= 0 => last + 12 + l as usize,
        _ => fetch.len(),
    };
    end.max(last + mirrorpid::batch::MAGIC_OFFSET + 1)
        .min(fetch.len())
}

/// The fuzz target's finding: four slots, the fourth a legacy entry of
/// batchLength 0 with more bytes after it. The header rewrite refuses it
/// (BatchTooShort), as the whole fetch's does; the buffer cut at that
/// entry's declared end would have called it a truncated tail.
#[test]
fn a_short_last_gathered_entry_is_refused_as_in_the_whole_fetch() {
    let legacy = |len: usize| {
        encode(&Part::Legacy {
            magic: 0,
            len: len as u8,
        })
    };
    let data = encode(&Part::Data {
        pid: 1,
        txn: false,
        sizes: vec![20],
    });
    let mut short = vec![0u8; 12];
    short.extend_from_slice(&[0; 40]); // batchLength 0, then other bytes
    let fetch = [legacy(32), legacy(63), data, short].concat();
    let whole = by_buffer(&mut mapper(), &fetch, RewriteOptions::default()).map(|r| r.0);
    let headers = by_headers(&mut mapper(), &fetch, 4, RewriteOptions::default()).map(|r| r.0);
    assert!(
        matches!(whole, Err(Error::BatchTooShort { .. })),
        "{whole:?}"
    );
    assert_eq!(headers, whole);
    assert_eq!(
        gathered_prefix(&fetch, 4),
        fetch.len().min(fetch.len() - 40 + 5)
    );
}

/// The differential fuzz target's finding: a whole v2 header whose
/// batchLength is negative. Both walks refuse it as too short, naming the
/// length, where adding it to the log overhead once overflowed (a panic in
/// a debug build).
#[test]
fn a_negative_batch_length_is_refused_by_both_walks() {
    for length in [-1i32, -12, i32::MIN] {
        let mut fetch = encode(&Part::Data {
            pid: 1,
            txn: false,
            sizes: vec![20],
        });
        fetch[8..12].copy_from_slice(&length.to_be_bytes());
        let whole = by_buffer(&mut mapper(), &fetch, RewriteOptions::default()).map(|r| r.0);
        assert_eq!(
            whole,
            Err(Error::BatchTooShort { offset: 0, length }),
            "batchLength {length}"
        );
        let headers = by_headers(&mut mapper(), &fetch, 1, RewriteOptions::default()).map(|r| r.0);
        assert_eq!(headers, whole, "batchLength {length}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn headers_and_buffer_agree(
        fetches in proptest::collection::vec(
            (
                proptest::collection::vec(part(), 0..6),
                proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
                any::<prop::sample::Index>(),
                any::<bool>(),
                1usize..8,
                any::<bool>(),
            ),
            1..5,
        ),
    ) {
        let (mut a, mut b, mut c, mut d) = (mapper(), mapper(), mapper(), mapper());
        for (parts, flips, cut, truncate, max_slots, complete) in fetches {
            let mut fetch: Vec<u8> = parts.iter().flat_map(encode).collect();
            if !fetch.is_empty() {
                for (at, bit) in &flips {
                    let i = at.index(fetch.len());
                    fetch[i] ^= 1 << (bit % 8);
                }
                if truncate {
                    fetch.truncate(cut.index(fetch.len() + 1));
                }
            }
            let options = RewriteOptions {
                strict_crc: false,
                complete,
                outcomes: true,
            };
            let prefix = gathered_prefix(&fetch, max_slots);
            let whole = by_buffer(&mut a, &fetch[..prefix], options);
            let headers = by_headers(&mut b, &fetch, max_slots, options);
            // The broker module's rewrites: the same, but no outcomes.
            let lean_options = RewriteOptions { outcomes: false, ..options };
            let lean = by_headers(&mut c, &fetch, max_slots, lean_options);
            let lean_whole = by_buffer(&mut d, &fetch[..prefix], lean_options);
            match (&lean_whole, &whole) {
                (Ok((n4, bytes4, out4)), Ok((n1, bytes1, out1))) => {
                    prop_assert_eq!(n4, n1);
                    prop_assert_eq!(bytes4, bytes1);
                    prop_assert!(out4.batches.is_empty());
                    prop_assert_eq!(&RewriteResult { batches: out1.batches.clone(), ..out4.clone() }, out1);
                }
                (Err(e4), Err(e1)) => prop_assert_eq!(e4, e1),
                (x, y) => prop_assert!(
                    false,
                    "without outcomes {:?} but with them {:?}",
                    x.as_ref().map(|r| r.0),
                    y.as_ref().map(|r| r.0)
                ),
            }
            match (whole, headers, lean) {
                (Ok((n1, bytes1, out1)), Ok((n2, bytes2, out2)), Ok((n3, bytes3, out3))) => {
                    prop_assert_eq!(n1, n2);
                    prop_assert_eq!(&bytes1[..], &bytes2[..prefix]);
                    prop_assert_eq!(&fetch[prefix..], &bytes2[prefix..], "ungathered bytes untouched");
                    prop_assert_eq!(&out1, &out2);
                    prop_assert_eq!(n3, n2);
                    prop_assert_eq!(&bytes3, &bytes2);
                    prop_assert!(out3.batches.is_empty());
                    prop_assert_eq!(RewriteResult { batches: out2.batches.clone(), ..out3 }, out2);
                }
                (Err(e1), Err(e2), Err(e3)) => {
                    prop_assert_eq!(&e1, &e2);
                    prop_assert_eq!(e3, e2);
                }
                (x, y, z) => prop_assert!(
                    false,
                    "buffer {:?} but headers {:?}, without outcomes {:?}",
                    x.map(|r| r.0),
                    y.map(|r| r.0),
                    z.map(|r| r.0)
                ),
            }
            prop_assert_eq!(common::state(&a), common::state(&b));
            prop_assert_eq!(common::state(&c), common::state(&b));
            prop_assert_eq!(common::state(&d), common::state(&a));
            a.confirm();
            b.confirm();
            c.confirm();
            d.confirm();
        }
    }
}

#[test]
fn slots_changed_hold_the_new_pid_and_crc_and_nothing_else_moves() {
    let fetch: Vec<u8> = [
        encode(&Part::Data {
            pid: 3,
            txn: false,
            sizes: vec![5000],
        }),
        encode(&Part::Data {
            pid: -1,
            txn: false,
            sizes: vec![10],
        }),
    ]
    .concat();
    let mut slots = Vec::new();
    let offsets = gather(&fetch, 16, &mut slots);
    assert_eq!(slots.len(), 2 * SLOT_BYTES);
    assert_eq!(
        slots[SLOT_LEN_OFFSET..SLOT_LEN_OFFSET + 4],
        (WINDOW as i32).to_be_bytes()
    );
    let before = slots.clone();
    let mut m = mapper();
    let mut view = HeaderView::new(&mut slots, fetch.len()).unwrap();
    m.rewrite_headers("east", &mut view, 0, RewriteOptions::default())
        .unwrap();
    let changed = |s: &[u8], i: usize| {
        s[i * SLOT_BYTES + SLOT_CHANGED_OFFSET..i * SLOT_BYTES + SLOT_CHANGED_OFFSET + 4].to_vec()
    };
    assert_eq!(changed(&slots, 0), [0, 0, 0, 1]);
    assert_eq!(changed(&slots, 1), [0, 0, 0, 0], "PID -1 is left alone");
    let differing: Vec<usize> = (0..slots.len())
        .filter(|&i| slots[i] != before[i])
        .collect();
    assert!(differing
        .iter()
        .all(|&i| (17..21).contains(&i) || (43..51).contains(&i) || i == SLOT_CHANGED_OFFSET + 3));
    let mut whole = fetch.clone();
    mapper()
        .rewrite("east", &mut whole, 0, RewriteOptions::default())
        .unwrap();
    let mut back = fetch.clone();
    write_back(&slots, &offsets, &mut back);
    assert_eq!(back, whole);
}

#[test]
fn strict_crc_and_inconsistent_slots_are_refused_with_nothing_changed() {
    let fetch = encode(&Part::Data {
        pid: 3,
        txn: false,
        sizes: vec![100],
    });
    let mut slots = Vec::new();
    gather(&fetch, 4, &mut slots);
    let mut m = mapper();
    let before = common::state(&m);
    let strict = RewriteOptions {
        strict_crc: true,
        complete: false,
        ..RewriteOptions::default()
    };
    let mut view = HeaderView::new(&mut slots, fetch.len()).unwrap();
    let e = m.rewrite_headers("east", &mut view, 0, strict).unwrap_err();
    assert!(e.to_string().contains("strict CRC"), "{e}");
    // A slot claiming a window length the fetch cannot have.
    let mut lying = slots.clone();
    lying[SLOT_LEN_OFFSET + 3] ^= 1;
    let copy = lying.clone();
    let mut view = HeaderView::new(&mut lying, fetch.len()).unwrap();
    let e = m
        .rewrite_headers("east", &mut view, 0, RewriteOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("header slot 0"), "{e}");
    assert_eq!(lying, copy);
    // Not a whole number of slots.
    let mut short = vec![0u8; SLOT_BYTES - 1];
    assert!(HeaderView::new(&mut short, 10).is_err());
    assert_eq!(common::state(&m), before);
}

#[test]
fn a_control_batch_with_longest_varints_reads_the_same_marker_from_its_window() {
    // The control record's varints at their longest (10 bytes each) put the
    // key at the end of what a window holds: the window must still decide.
    let mut fetch = encode(&Part::Control {
        pid: 9,
        commit: true,
    });
    let records_at = 61;
    // A varlong of 0 (or of keyLength 4, zig-zag 8) written in 10 bytes.
    let zero = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    let four = [0x88, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    // length, attributes, timestampDelta, offsetDelta, keyLength, key
    // (version 0, type 1: COMMIT), then what a record has after its key.
    let record = [
        &zero[..],
        &[0],
        &zero,
        &zero,
        &four,
        &[0, 0, 0, 1],
        &[0; 40],
    ]
    .concat();
    assert_eq!(
        records_at + record.len() - 40,
        106,
        "the key ends inside the window"
    );
    fetch.truncate(records_at);
    fetch.extend_from_slice(&record);
    let length = (fetch.len() - 12) as i32;
    fetch[8..12].copy_from_slice(&length.to_be_bytes());
    let (mut a, mut b) = (mapper(), mapper());
    let whole = by_buffer(&mut a, &fetch, DESCRIBED);
    let headers = by_headers(&mut b, &fetch, 4, DESCRIBED);
    let (whole, headers) = (whole.unwrap(), headers.unwrap());
    assert_eq!(whole.2.batches[0].control, Some(ControlType::Commit));
    assert_eq!(whole.2, headers.2);
    assert_eq!(whole.1, headers.1);
}

#[test]
fn a_rewrite_without_outcomes_writes_what_one_with_them_writes() {
    // A bound producer, a new one, a transaction and its marker, a legacy
    // entry: every kind of batch a rewrite writes or passes.
    let fetch: Vec<u8> = [
        Part::Data {
            pid: 3,
            txn: false,
            sizes: vec![100],
        },
        Part::Data {
            pid: 4,
            txn: true,
            sizes: vec![80, 300],
        },
        Part::Control {
            pid: 4,
            commit: true,
        },
        Part::Legacy { magic: 1, len: 40 },
        Part::Data {
            pid: 3,
            txn: false,
            sizes: vec![61],
        },
    ]
    .iter()
    .flat_map(encode)
    .collect();
    let lean = RewriteOptions::default();
    let described = RewriteOptions {
        outcomes: true,
        ..RewriteOptions::default()
    };
    let (mut a, mut b) = (mapper(), mapper());
    for round in 0..2 {
        let (mut x, mut y) = (fetch.clone(), fetch.clone());
        let without = a.rewrite("east", &mut x, 1_000, lean).unwrap();
        let with = b.rewrite("east", &mut y, 1_000, described).unwrap();
        assert!(without.batches.is_empty(), "round {round}");
        assert!(with.batches.len() >= 4, "round {round}");
        assert_ne!(x, fetch, "round {round}: the batches were rewritten");
        assert_eq!(x, y, "round {round}");
        assert_eq!(
            RewriteResult {
                batches: with.batches.clone(),
                ..without
            },
            with,
            "round {round}"
        );
        assert_eq!(bindings(&a), bindings(&b), "round {round}");
        a.confirm();
        b.confirm();
    }
}

/// Every binding as it stands (pending ones included), in a comparable
/// form: source, PID, mapped PID, salt, last seen, transaction open,
/// recorded, pending.
fn bindings(m: &Mapper) -> Vec<String> {
    let mut all: Vec<String> = m.bindings().map(|b| format!("{b:?}")).collect();
    all.sort();
    all
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A rewrite remembers the last batch's binding for the next batch of
    /// the same producer (`map_batches`): a whole fetch, by its bytes or
    /// its headers, must map, record and change the mapper exactly as the
    /// same batches rewritten one call each, where nothing is remembered.
    /// Few producers, so that runs of one producer, producers coming back,
    /// new bindings between them, and transactions opened and closed by
    /// markers within a run all occur; and several fetches, some with new
    /// times, so that runs span confirmed and pending bindings.
    #[test]
    fn a_fetch_maps_as_its_batches_one_call_each(
        fetches in proptest::collection::vec(
            (
                proptest::collection::vec(
                    prop_oneof![
                        4 => (0i64..3, any::<bool>())
                            .prop_map(|(pid, txn)| Part::Data { pid, txn, sizes: vec![10] }),
                        2 => (0i64..3, any::<bool>()).prop_map(|(pid, commit)| Part::Control { pid, commit }),
                        1 => Just(Part::Data { pid: -1, txn: false, sizes: vec![] }),
                        1 => Just(Part::Legacy { magic: 1, len: 10 }),
                    ],
                    0..12,
                ),
                any::<bool>(),
                0i64..3,
            ),
            1..4,
        ),
    ) {
        let (mut whole, mut headers, mut each) = (mapper(), mapper(), mapper());
        let options = DESCRIBED;
        for (parts, confirm, later) in fetches {
            let now = 1_000 + later * 3_600_000;
            let entries: Vec<Vec<u8>> = parts.iter().map(encode).collect();
            let fetch = entries.concat();
            let (_, one_call, out) = by_buffer_at(&mut whole, &fetch, options, now).unwrap();
            let (_, from_headers, by_headers) =
                by_headers_at(&mut headers, &fetch, usize::MAX, options, now).unwrap();
            let mut records = Vec::new();
            let mut mapped = Vec::new();
            for entry in &entries {
                let (_, bytes, o) = by_buffer_at(&mut each, entry, options, now).unwrap();
                mapped.extend_from_slice(&bytes);
                for r in o.records {
                    // A pending binding's record comes back once per call.
                    if !records.contains(&r) {
                        records.push(r);
                    }
                }
            }
            prop_assert_eq!(&one_call, &mapped);
            prop_assert_eq!(&from_headers, &mapped);
            prop_assert_eq!(&out.records, &records);
            prop_assert_eq!(&by_headers.records, &records);
            prop_assert_eq!(bindings(&whole), bindings(&each));
            prop_assert_eq!(bindings(&headers), bindings(&each));
            if confirm {
                whole.confirm();
                headers.confirm();
                each.confirm();
            }
        }
        prop_assert_eq!(common::state(&whole), common::state(&each));
    }
}
