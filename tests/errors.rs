//! Bad input: every case gives a typed error with a clear message, and the
//! mapper's state is the same after the error as before.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use mirrorpid::record::{StateKey, StateValue};
use mirrorpid::{Error, Mapper, MapperConfig, StateRecord, TopicId};

fn mapper() -> Mapper {
    let mut m = Mapper::new(MapperConfig::new(common::TOPIC.parse().unwrap(), 0)).unwrap();
    m.map("A", 1, 0).unwrap();
    m.map("cluster-2123", 5, 0).unwrap();
    m.map("cluster-2336", 5, 0).unwrap();
    m.confirm();
    m
}

/// Runs `f` on a mapper, expects an error, and checks nothing changed.
fn unchanged(f: impl FnOnce(&mut Mapper) -> Result<(), Error>) -> Error {
    let mut m = mapper();
    let before = common::state(&m);
    let err = f(&mut m).expect_err("expected an error");
    assert_eq!(common::state(&m), before, "state changed after {err}");
    err
}

#[test]
fn every_truncation_of_every_record_vector() {
    let (_, _, records) = common::records();
    for r in &records {
        for cut in 0..r.key.len() {
            let err = StateKey::decode(&r.key[..cut]).unwrap_err();
            assert!(
                matches!(err, Error::Truncated { .. }),
                "key cut at {cut}: {err}"
            );
            assert!(err.to_string().contains("MirrorPidCollisionKey"), "{err}");
        }
        if let Some(v) = &r.value {
            for cut in 0..v.len() {
                let err = StateValue::decode(&v[..cut]).unwrap_err();
                assert!(
                    matches!(err, Error::Truncated { .. }),
                    "value cut at {cut}: {err}"
                );
            }
        }
        let err = unchanged(|m| {
            let key = &r.key[..r.key.len() - 1];
            m.load_record(&StateRecord::decode(key, r.value.as_deref())?)?;
            Ok(())
        });
        assert!(matches!(err, Error::Truncated { .. }));
    }
}

#[test]
fn malformed_record_bytes() {
    let (_, _, records) = common::records();
    let key = &records[0].key;
    let value = records[0].value.clone().unwrap();

    let mut bad = key.clone();
    bad[1] = 4;
    assert_eq!(
        StateKey::decode(&bad).unwrap_err(),
        Error::UnknownApiKey { api_key: 4 }
    );

    let mut bad = value.clone();
    bad[1] = 1;
    assert_eq!(
        StateValue::decode(&bad).unwrap_err(),
        Error::UnknownVersion {
            what: "MirrorPidCollisionValue",
            version: 1
        }
    );

    let mut bad = key.clone();
    bad.push(0);
    assert_eq!(
        StateKey::decode(&bad).unwrap_err(),
        Error::TrailingBytes {
            what: "MirrorPidCollisionKey",
            extra: 1
        }
    );
    let mut bad = value.clone();
    bad.extend_from_slice(&[1, 2]);
    assert_eq!(
        StateValue::decode(&bad).unwrap_err(),
        Error::TrailingBytes {
            what: "MirrorPidCollisionValue",
            extra: 2
        }
    );

    // SourceClusterId "cluster-2336" starts at byte 24; break its UTF-8.
    let mut bad = key.clone();
    bad[24] = 0xff;
    assert_eq!(
        StateKey::decode(&bad).unwrap_err(),
        Error::InvalidUtf8 {
            field: "MirrorPidCollisionKey.SourceClusterId"
        }
    );
    let mut bad = value.clone();
    bad[11] = 0xc3; // first byte of CollidingClusterId, now a broken sequence
    bad[12] = 0x28;
    assert!(matches!(
        StateValue::decode(&bad).unwrap_err(),
        Error::InvalidUtf8 { .. }
    ));

    // A null (negative-length) SourceClusterId and CollidingClusterId.
    let mut bad = key.clone();
    bad[22..24].copy_from_slice(&(-1i16).to_be_bytes());
    assert_eq!(
        StateKey::decode(&bad).unwrap_err(),
        Error::InvalidLength {
            field: "MirrorPidCollisionKey.SourceClusterId",
            length: -1
        }
    );
    let mut bad = value.clone();
    bad[10] = 0; // compact string length 0 = null
    assert_eq!(
        StateValue::decode(&bad).unwrap_err(),
        Error::InvalidLength {
            field: "MirrorPidCollisionValue.CollidingClusterId",
            length: -1
        }
    );
}

#[test]
fn unknown_tagged_fields_are_skipped() {
    let v = StateValue {
        salt: 2,
        colliding_cluster_id: "X".into(),
        timestamp_ms: 9,
    };
    let mut bytes = v.to_bytes().unwrap();
    let last = bytes.len() - 1;
    bytes.truncate(last);
    bytes.extend_from_slice(&[1, 5, 3, 0xaa, 0xbb, 0xcc]); // one tag (5) of 3 bytes
    assert_eq!(StateValue::decode(&bytes).unwrap(), v);
}

#[test]
fn bad_records_leave_state_unchanged() {
    let topic: TopicId = common::TOPIC.parse().unwrap();
    let key = |pid| StateKey {
        topic_id: topic,
        partition: 0,
        source_cluster_id: "A".into(),
        original_pid: pid,
    };
    let value = |salt| {
        Some(StateValue {
            salt,
            colliding_cluster_id: String::new(),
            timestamp_ms: 0,
        })
    };
    assert_eq!(
        unchanged(|m| m
            .load_record(&StateRecord {
                key: key(1),
                value: value(64)
            })
            .map(drop)),
        Error::InvalidSalt { salt: 64 }
    );
    assert_eq!(
        unchanged(|m| m
            .load_record(&StateRecord {
                key: key(1),
                value: value(-1)
            })
            .map(drop)),
        Error::InvalidSalt { salt: -1 }
    );
    for pid in [-1, 1 << 40] {
        assert_eq!(
            unchanged(|m| m
                .load_record(&StateRecord {
                    key: key(pid),
                    value: value(0)
                })
                .map(drop)),
            Error::InvalidRecordPid { pid }
        );
    }
    // Another partition's record is skipped, not an error.
    let mut m = mapper();
    let before = common::state(&m);
    let other = StateRecord {
        key: StateKey {
            partition: 9,
            ..key(77)
        },
        value: value(0),
    };
    assert_eq!(
        m.load_record(&other).unwrap(),
        mirrorpid::LoadOutcome::Skipped
    );
    assert_eq!(common::state(&m), before);
}

#[test]
fn pids_out_of_range() {
    for pid in [1i64 << 40, (1 << 62) - 1] {
        let err = unchanged(|m| m.map("A", pid, 0).map(drop));
        assert_eq!(err, Error::PidOutOfRange { pid });
        assert!(err.to_string().contains(&pid.to_string()));
    }
    let err = unchanged(|m| m.map("", 1, 0).map(drop));
    assert!(matches!(err, Error::InvalidInput { .. }), "{err}");
}

#[test]
fn bad_topic_ids_and_configs() {
    for text in [
        "",
        "not-a-topic",
        "bxw7Kp1OS3-KHC0-T1prf",
        "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6bXX",
    ] {
        let err = text.parse::<TopicId>().unwrap_err();
        assert_eq!(err, Error::InvalidTopicId { text: text.into() });
        assert!(err.to_string().contains("base64url"));
    }
    for json in [
        "{}",
        r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA"}"#,
        r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":-1}"#,
        r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"durability":"some"}"#,
        r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"producerExpirationMs":0}"#,
        r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"extra":1}"#,
    ] {
        let err = MapperConfig::from_json(json).unwrap_err();
        assert!(matches!(err, Error::InvalidInput { .. }), "{json}: {err}");
    }
    // A bad topicId in a config is InvalidTopicId (code 11), not InvalidInput.
    assert_eq!(
        MapperConfig::from_json(r#"{"topicId":"bad","partition":0}"#).unwrap_err(),
        Error::InvalidTopicId { text: "bad".into() }
    );
    let ok = MapperConfig::from_json(
        r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":2,"durability":"collisions","producerExpirationMs":"1000"}"#,
    )
    .unwrap();
    assert_eq!(ok.producer_expiration_ms, 1000);
    // producerExpirationMs: an exact integer, or absent, or null.
    for bad in [r#"" 5""#, "1e3", "3.0", r#""+5""#, r#""5 ""#] {
        let json = format!(
            r#"{{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"producerExpirationMs":{bad}}}"#
        );
        let err = MapperConfig::from_json(&json).unwrap_err();
        assert!(
            err.to_string().contains("producerExpirationMs") || err.to_string().contains("integer"),
            "{bad}: {err}"
        );
    }
    for (value, want) in [("null", 86_400_000), ("3", 3), (r#""-0""#, 0)] {
        let json = format!(
            r#"{{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"producerExpirationMs":{value}}}"#
        );
        match MapperConfig::from_json(&json) {
            Ok(c) => assert_eq!(c.producer_expiration_ms, want, "{value}"),
            Err(e) => assert_eq!(want, 0, "{value}: {e}"), // 0 is not positive
        }
    }
}

#[test]
fn corrupt_foreign_and_truncated_snapshots() {
    let good = mapper().snapshot();
    assert!(Mapper::restore(&good).is_ok());
    assert_eq!(Mapper::restore(b"").unwrap_err(), Error::ForeignSnapshot {});
    assert_eq!(
        Mapper::restore(b"PK\x03\x04 zip file").unwrap_err(),
        Error::ForeignSnapshot {}
    );
    // Shorter than the magic, or another magic: foreign. The magic and
    // anything less than a whole snapshot: corrupt (the checksum comes
    // before the versions, so a damaged version byte is corrupt too).
    assert_eq!(
        Mapper::restore(b"MPIDSNA").unwrap_err(),
        Error::ForeignSnapshot {}
    );
    for cut in 8..good.len() {
        let err = Mapper::restore(&good[..cut]).unwrap_err();
        assert!(
            matches!(err, Error::CorruptSnapshot { .. }),
            "cut {cut}: {err}"
        );
    }
    for i in 8..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x10;
        let err = Mapper::restore(&bad).unwrap_err();
        assert!(
            matches!(err, Error::CorruptSnapshot { .. }),
            "flip {i}: {err}"
        );
    }
    // A whole snapshot of a format this build does not know.
    let mut future = good[..good.len() - 4].to_vec();
    future[9] = 4;
    let crc = crc32c::crc32c(&future);
    future.extend_from_slice(&crc.to_be_bytes());
    assert_eq!(
        Mapper::restore(&future).unwrap_err(),
        Error::UnknownVersion {
            what: "snapshot format",
            version: 4
        }
    );
}

/// A snapshot with a valid checksum whose contents do not hold together.
#[test]
fn inconsistent_snapshots_are_rejected() {
    let reseal = |body: Vec<u8>| common::reseal_snapshot(&body);
    let good = mapper().snapshot();
    // The last binding's `mapped` field sits 22 bytes before the checksum...
    // binding = cluster(4) pid(8) mapped(8) salt(1) flags(1) lastSeen(8) = 30.
    let last = good.len() - 4 - 30;
    let mut wrong_f = good.clone();
    wrong_f[last + 12 + 7] ^= 1;
    let err = Mapper::restore(&reseal(wrong_f)).unwrap_err();
    assert!(err.to_string().contains("is not F v1"), "{err}");

    let mut wrong_cluster = good.clone();
    wrong_cluster[last..last + 4].copy_from_slice(&99u32.to_be_bytes());
    let err = Mapper::restore(&reseal(wrong_cluster)).unwrap_err();
    assert!(err.to_string().contains("cluster #99"), "{err}");

    let mut wrong_flags = good.clone();
    wrong_flags[last + 21] = 0x80;
    assert!(matches!(
        Mapper::restore(&reseal(wrong_flags)).unwrap_err(),
        Error::CorruptSnapshot { .. }
    ));

    // Duplicate the last binding: the same identity twice.
    let mut dup = good[..good.len() - 4].to_vec();
    let binding = dup[last..].to_vec();
    dup.extend_from_slice(&binding);
    let count_at = last - 4 - 30 * 2;
    let n = u32::from_be_bytes(dup[count_at..count_at + 4].try_into().unwrap());
    dup[count_at..count_at + 4].copy_from_slice(&(n + 1).to_be_bytes());
    dup.extend_from_slice(&[0; 4]);
    let err = Mapper::restore(&reseal(dup)).unwrap_err();
    assert!(err.to_string().contains("bound twice"), "{err}");
}
