//! The batch path (`docs/DESIGN.md`), cross-checked against an independent Kafka
//! implementation: batches encoded by the `kafka-protocol` crate with every
//! compression it supports are rewritten here, then decoded by it (which
//! verifies the CRC).
#![cfg(not(target_arch = "wasm32"))]

mod common;
use mirrorpid_test_support::kp;

use kp::kp_encode;

use bytes::Bytes;
use kafka_protocol::records::{Compression, Record, RecordBatchDecoder, TimestampType};
use mirrorpid::batch::{BatchBuilder, Batches, ControlType, Entry, RecordSpec};
use mirrorpid::{map_pid, Error, Mapper, MapperConfig, RewriteOptions};
use proptest::prelude::*;

fn mapper() -> Mapper {
    Mapper::new(MapperConfig::new(common::TOPIC.parse().unwrap(), 0)).unwrap()
}

fn kp_records(pid: i64, transactional: bool, n: usize) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let mut headers = indexmap::IndexMap::new();
            headers.insert("h".into(), Some(Bytes::from(format!("header-{i}"))));
            Record {
                transactional,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 7,
                producer_id: pid,
                producer_epoch: 3,
                timestamp_type: TimestampType::Creation,
                offset: 100 + i as i64,
                sequence: 40 + i as i32,
                timestamp: 1_764_403_200_000 + i as i64,
                key: (i % 3 != 0).then(|| Bytes::from(format!("key-{i}"))),
                value: Some(Bytes::from(format!("value {i} ").repeat(20))),
                headers,
            }
        })
        .collect()
}

fn kp_decode(bytes: &[u8]) -> Vec<Record> {
    let mut b = Bytes::copy_from_slice(bytes);
    RecordBatchDecoder::decode_all(&mut b)
        .expect("kafka-protocol decodes and verifies the CRC")
        .into_iter()
        .flat_map(|set| set.records)
        .collect()
}

/// Bytes outside producerId [43, 51) and crc [17, 21) of each batch are untouched.
fn assert_only_pid_and_crc_changed(before: &[u8], after: &[u8]) {
    assert_eq!(before.len(), after.len());
    let mut allowed = vec![false; before.len()];
    for entry in Batches::new(before) {
        if let Entry::Batch { offset, .. } = entry.unwrap() {
            for i in (offset + 17..offset + 21).chain(offset + 43..offset + 51) {
                allowed[i] = true;
            }
        }
    }
    for i in 0..before.len() {
        assert!(allowed[i] || before[i] == after[i], "byte {i} changed");
    }
}

#[test]
fn kafka_protocol_batches_every_compression() {
    let compressions = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    for compression in compressions {
        for transactional in [false, true] {
            let records = kp_records(5, transactional, 12);
            let original = kp_encode(&records, compression);
            let mut m = mapper();
            let mut buf = original.clone();
            let out = m
                .rewrite(
                    "A",
                    &mut buf,
                    1_000,
                    RewriteOptions {
                        strict_crc: true,
                        complete: true,
                        outcomes: true,
                    },
                )
                .unwrap();
            let expected = map_pid("A", 5, 0).unwrap();
            assert_eq!(out.consumed, buf.len());
            assert_eq!(out.batches[0].mapped_pid, expected);
            assert_only_pid_and_crc_changed(&original, &buf);
            let decoded = kp_decode(&buf);
            assert_eq!(decoded.len(), records.len(), "{compression:?}");
            for (got, want) in decoded.iter().zip(&records) {
                let mut want = want.clone();
                want.producer_id = expected;
                assert_eq!(got, &want, "{compression:?} transactional={transactional}");
            }
            assert_eq!(
                m.lookup("A", 5).unwrap().transaction_open,
                transactional,
                "a transactional data batch opens a transaction"
            );
        }
    }
}

#[test]
fn control_batches_close_transactions_and_decode() {
    let mut m = mapper();
    let mut data = kp_encode(&kp_records(9, true, 3), Compression::Zstd);
    m.rewrite("B", &mut data, 10, RewriteOptions::default())
        .unwrap();
    assert!(m.lookup("B", 9).unwrap().transaction_open);
    for marker in [ControlType::Commit, ControlType::Abort] {
        let original = BatchBuilder {
            base_offset: 103,
            producer_id: 9,
            producer_epoch: 3,
            control: Some(marker),
            ..BatchBuilder::default()
        }
        .encode();
        let mut buf = original.clone();
        let out = m
            .rewrite(
                "B",
                &mut buf,
                20,
                RewriteOptions {
                    strict_crc: true,
                    complete: true,
                    outcomes: true,
                },
            )
            .unwrap();
        assert_eq!(out.batches[0].control, Some(marker));
        assert_eq!(
            serde_json::to_value(&out.batches[0]).unwrap()["control"],
            if marker == ControlType::Commit {
                "commit"
            } else {
                "abort"
            }
        );
        assert!(!m.lookup("B", 9).unwrap().transaction_open);
        assert_only_pid_and_crc_changed(&original, &buf);
        let decoded = kp_decode(&buf);
        assert_eq!(decoded.len(), 1);
        assert!(decoded[0].control && decoded[0].transactional);
        assert_eq!(decoded[0].producer_id, map_pid("B", 9, 0).unwrap());
        let key = decoded[0].key.as_ref().unwrap();
        assert_eq!(
            &key[2..4],
            &[0, if marker == ControlType::Commit { 1 } else { 0 }]
        );
        // Reopen for the next marker.
        let mut again = kp_encode(&kp_records(9, true, 1), Compression::None);
        m.rewrite("B", &mut again, 21, RewriteOptions::default())
            .unwrap();
    }
}

#[test]
fn our_encoder_agrees_with_kafka_protocol() {
    let built = BatchBuilder {
        base_offset: 42,
        producer_id: 77,
        producer_epoch: 1,
        base_sequence: 5,
        timestamp: 123,
        records: vec![
            RecordSpec {
                key: Some(b"k".to_vec()),
                value: Some(b"v".to_vec()),
            },
            RecordSpec {
                key: None,
                value: None,
            },
        ],
        ..BatchBuilder::default()
    }
    .encode();
    let decoded = kp_decode(&built);
    assert_eq!(decoded.len(), 2);
    assert_eq!(decoded[0].offset, 42);
    assert_eq!(decoded[1].offset, 43);
    assert_eq!(decoded[1].sequence, 6);
    assert_eq!(decoded[0].producer_id, 77);
    assert_eq!(decoded[0].key.as_deref(), Some(&b"k"[..]));
    assert_eq!(decoded[1].value, None);
}

fn legacy_message(offset: i64, magic: u8) -> Vec<u8> {
    // offset | size | crc | magic | attributes | [timestamp (v1)] | key -1 | value "x"
    let mut body = vec![magic, 0];
    if magic == 1 {
        body.extend_from_slice(&0i64.to_be_bytes());
    }
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&1i32.to_be_bytes());
    body.push(b'x');
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&0xdead_beefu32.to_be_bytes());
    out.extend_from_slice(&body);
    out
}

fn data_batch(pid: i64, base_offset: i64) -> Vec<u8> {
    BatchBuilder {
        base_offset,
        producer_id: pid,
        producer_epoch: 0,
        base_sequence: 0,
        records: vec![RecordSpec {
            key: None,
            value: Some(vec![7; 100]),
        }],
        ..BatchBuilder::default()
    }
    .encode()
}

#[test]
fn mixed_buffer_with_truncated_tail() {
    let mirrored = map_pid("Z", 3, 0).unwrap();
    let parts = [
        data_batch(1, 0),
        legacy_message(1, 0),
        data_batch(-1, 2),
        legacy_message(3, 1),
        data_batch(2, 4),
        data_batch(mirrored, 5),
        data_batch(1, 6),
    ];
    let mut input: Vec<u8> = parts.concat();
    let complete_len = input.len();
    let tail = data_batch(3, 7);
    input.extend_from_slice(&tail[..tail.len() - 10]);
    let original = input.clone();
    let mut m = mapper();
    let out = m
        .rewrite(
            "C",
            &mut input,
            5,
            RewriteOptions {
                outcomes: true,
                ..RewriteOptions::default()
            },
        )
        .unwrap();
    assert_eq!(out.consumed, complete_len, "truncated tail is not consumed");
    assert_eq!(out.legacy_entries, 2);
    let pids: Vec<(i64, i64)> = out
        .batches
        .iter()
        .map(|b| (b.original_pid, b.mapped_pid))
        .collect();
    assert_eq!(
        pids,
        vec![
            (1, map_pid("C", 1, 0).unwrap()),
            (-1, -1),
            (2, map_pid("C", 2, 0).unwrap()),
            (mirrored, mirrored),
            (1, map_pid("C", 1, 0).unwrap()),
        ]
    );
    assert_eq!(
        &input[complete_len..],
        &original[complete_len..],
        "tail untouched"
    );
    assert_only_pid_and_crc_changed(&original, &input);
    // PID -1 and already-mirrored batches are byte-identical.
    let at = parts[0].len() + parts[1].len();
    assert_eq!(&input[at..at + parts[2].len()], &parts[2][..]);
    // Three bindings (C/1, C/2, C/mirrored), three records in order.
    assert_eq!(out.records.len(), 3);
    assert_eq!(m.len(), 3);
    assert!(kp_decode(&input[..parts[0].len()])
        .iter()
        .all(|r| r.producer_id == map_pid("C", 1, 0).unwrap()));
    // The same bytes in complete mode: the tail is an error naming its offset.
    let mut again = original.clone();
    let err = mapper()
        .rewrite(
            "C",
            &mut again,
            5,
            RewriteOptions {
                strict_crc: false,
                complete: true,
                ..RewriteOptions::default()
            },
        )
        .unwrap_err();
    assert_eq!(
        err,
        Error::BatchOverrun {
            offset: complete_len,
            needed: tail.len(),
            available: tail.len() - 10
        }
    );
    assert_eq!(again, original);
}

#[test]
fn malformed_buffers_are_errors_and_change_nothing() {
    let good = data_batch(4, 0);
    let mut unknown_magic = data_batch(5, 1);
    unknown_magic[16] = 3;
    let mut too_short = data_batch(5, 1);
    too_short[8..12].copy_from_slice(&48i32.to_be_bytes());
    let mut bad_crc = data_batch(5, 1);
    bad_crc[70] ^= 1;
    let mut bad_control = BatchBuilder {
        producer_id: 5,
        control: Some(ControlType::Commit),
        ..BatchBuilder::default()
    }
    .encode();
    bad_control[57..61].copy_from_slice(&2i32.to_be_bytes());
    let big = data_batch(1 << 41, 1);
    let o = good.len();
    let cases: Vec<(Vec<u8>, RewriteOptions, Error)> = vec![
        (
            unknown_magic,
            RewriteOptions::default(),
            Error::UnknownMagic {
                offset: o,
                magic: 3,
            },
        ),
        (
            too_short,
            RewriteOptions::default(),
            Error::BatchTooShort {
                offset: o,
                length: 48,
            },
        ),
        (
            bad_crc.clone(),
            RewriteOptions {
                strict_crc: true,
                complete: false,
                ..RewriteOptions::default()
            },
            {
                let b = mirrorpid::batch::Batches::new(&bad_crc)
                    .next()
                    .unwrap()
                    .unwrap();
                let Entry::Batch { batch, .. } = b else {
                    unreachable!()
                };
                Error::CrcMismatch {
                    offset: o,
                    stored: batch.crc(),
                    computed: batch.computed_crc().unwrap(),
                }
            },
        ),
        (
            bad_control,
            RewriteOptions::default(),
            Error::MalformedControlBatch {
                offset: o,
                reason: "control batch must hold exactly one record",
            },
        ),
        (
            big,
            RewriteOptions::default(),
            Error::PidOutOfRange { pid: 1 << 41 },
        ),
    ];
    for (second, options, expected) in cases {
        let mut m = mapper();
        m.map("seed", 1, 0).unwrap();
        m.confirm();
        let before = common::state(&m);
        let mut input = [good.clone(), second].concat();
        let original = input.clone();
        let err = m.rewrite("D", &mut input, 9, options).unwrap_err();
        assert_eq!(err, expected);
        assert!(!err.to_string().is_empty());
        assert_eq!(input, original, "{expected}: no byte changed");
        assert_eq!(common::state(&m), before, "{expected}: no binding added");
        assert!(m.lookup("D", 4).is_none());
    }
}

#[test]
fn corrupt_batches_stay_corrupt_without_strict() {
    let mut input = data_batch(6, 0);
    input[80] ^= 0x40; // damage a record byte
    let stored_before = u32::from_be_bytes(input[17..21].try_into().unwrap());
    let mut m = mapper();
    m.rewrite("E", &mut input, 0, RewriteOptions::default())
        .unwrap();
    let Entry::Batch { batch, .. } = Batches::new(&input).next().unwrap().unwrap() else {
        unreachable!()
    };
    assert_ne!(batch.crc(), stored_before, "CRC was updated for the PID");
    assert_ne!(
        batch.crc(),
        batch.computed_crc().unwrap(),
        "corruption is not laundered"
    );
    let err = RecordBatchDecoder::decode_all(&mut Bytes::copy_from_slice(&input)).unwrap_err();
    assert!(
        err.to_string().contains("Cyclic redundancy check failed"),
        "{err}"
    );
}

#[test]
fn slot_exhaustion_mid_buffer_rolls_back_everything() {
    // Fill all 64 slots of identity (C, m): salt 0 by C's own local PID 5
    // (same cluster, other PID), salts 1..63 by mirrored PIDs sitting on them.
    let m_pid = map_pid("C", 5, 0).unwrap();
    let mut m = mapper();
    m.map("C", 5, 0).unwrap();
    for salt in 1..64u64 {
        let slot = map_pid("C", m_pid, salt).unwrap();
        assert_eq!(m.map("F", slot, 0).unwrap().mapped, slot);
    }
    m.confirm();
    let before = common::state(&m);
    let mut input = [data_batch(8, 0), data_batch(m_pid, 1)].concat();
    let original = input.clone();
    let err = m
        .rewrite("C", &mut input, 50, RewriteOptions::default())
        .unwrap_err();
    assert_eq!(
        err,
        Error::SlotSpaceExhausted {
            source_cluster_id: "C".into(),
            pid: m_pid
        }
    );
    assert_eq!(input, original);
    assert_eq!(
        common::state(&m),
        before,
        "binding of C/8 and last-seen of C/5 rolled back"
    );
    // An error found while scanning leaves a new source cluster unknown too.
    let mut input = [data_batch(8, 0), data_batch(1 << 45, 1)].concat();
    m.rewrite("brand-new", &mut input, 50, RewriteOptions::default())
        .unwrap_err();
    assert_eq!(common::state(&m), before);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The patched CRC equals a full recompute, for random batches.
    #[test]
    fn patched_crc_equals_recompute(
        sizes in proptest::collection::vec(0usize..3000, 1..8),
        pid in 0i64..(1 << 40),
        source in "[a-z]{1,12}",
        seed in any::<u8>(),
    ) {
        let records = sizes
            .iter()
            .map(|&n| RecordSpec { key: None, value: Some((0..n).map(|i| (i as u8).wrapping_mul(seed)).collect()) })
            .collect();
        let mut buf = BatchBuilder { producer_id: pid, producer_epoch: 0, base_sequence: 0, records, ..BatchBuilder::default() }.encode();
        let mut m = mapper();
        m.rewrite(&source, &mut buf, 0, RewriteOptions::default()).unwrap();
        let Entry::Batch { batch, .. } = Batches::new(&buf).next().unwrap().unwrap() else { unreachable!() };
        prop_assert_eq!(batch.producer_id(), map_pid(&source, pid, 0).unwrap());
        prop_assert_eq!(Some(batch.crc()), batch.computed_crc());
    }
}
