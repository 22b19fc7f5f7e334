//! Sources you do not control. A source controls every PID it sends; these
//! tests play the attacker against a victim source on the same partition,
//! first without a trust declaration (the damage is real, and is what
//! `docs/DESIGN.md` says an undeclared topology allows), then with one
//! (the victim is unaffected and the attacker's batches are refused).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use mirrorpid::batch::{BatchBuilder, ControlType};
use mirrorpid::pid::MAX_PROBES;
use mirrorpid::{map_pid, Error, Mapper, MapperConfig, Origins, RewriteOptions};

const VICTIM: &str = "victim";
const ATTACKER: &str = "attacker";

fn mapper(declared: bool) -> Mapper {
    let mut config = MapperConfig::new(common::TOPIC.parse().unwrap(), 0);
    if declared {
        // The attacker's link legitimately carries cluster "upstream"'s
        // producers; the victim carries only its own.
        let mut origins = Origins::default();
        origins.insert(ATTACKER.to_owned(), vec!["upstream".to_owned()]);
        origins.insert(VICTIM.to_owned(), vec![]);
        config.origins = Some(origins);
    }
    Mapper::new(config).unwrap()
}

fn batch(pid: i64, marker: Option<ControlType>) -> Vec<u8> {
    BatchBuilder {
        producer_id: pid,
        producer_epoch: 0,
        base_sequence: if marker.is_some() { -1 } else { 0 },
        transactional: true,
        control: marker,
        ..BatchBuilder::default()
    }
    .encode()
}

/// Serves a fetch the way a host does: rewrite, persist, confirm.
fn serve(m: &mut Mapper, source: &str, mut bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
    m.rewrite(source, &mut bytes, 1_000, RewriteOptions::default())?;
    m.confirm();
    Ok(bytes)
}

fn pid_of(bytes: &[u8]) -> i64 {
    i64::from_be_bytes(bytes[43..51].try_into().unwrap())
}

/// The attacker's search: the mapped PID the victim's producer holds (or
/// will hold), which F makes public.
fn victims_pid(pid: i64) -> i64 {
    map_pid(VICTIM, pid, 0).unwrap()
}

#[test]
fn hijack_without_declaration_shares_the_victims_pid() {
    let mut m = mapper(false);
    let victim = pid_of(&serve(&mut m, VICTIM, batch(5, None)).unwrap());
    // The attacker sends the victim's mapped PID as "its" mirrored PID, and
    // a COMMIT marker under it.
    let stolen = victims_pid(5);
    let attacker = pid_of(&serve(&mut m, ATTACKER, batch(stolen, None)).unwrap());
    serve(&mut m, ATTACKER, batch(stolen, Some(ControlType::Commit))).unwrap();
    assert_eq!(
        attacker, victim,
        "undeclared: the two-paths rule believes the claim"
    );
    assert_eq!(m.holders(victim).len(), 2);
}

#[test]
fn hijack_with_declaration_is_refused_and_the_victim_is_unaffected() {
    let mut m = mapper(true);
    let victim = pid_of(&serve(&mut m, VICTIM, batch(5, None)).unwrap());
    let stolen = victims_pid(5);
    let before = common::state(&m);
    let err = serve(&mut m, ATTACKER, batch(stolen, None)).unwrap_err();
    assert!(
        matches!(err, Error::UndeclaredOrigin { ref source_cluster_id, pid, .. }
        if source_cluster_id == ATTACKER && pid == stolen),
        "{err}"
    );
    assert_eq!(
        common::state(&m),
        before,
        "the refused fetch changed nothing"
    );
    assert_eq!(m.holders(victim).len(), 1, "the victim's PID is its own");
    // The attacker's legitimate traffic still flows: upstream's producers.
    let upstream = map_pid("upstream", 9, 0).unwrap();
    assert_eq!(
        pid_of(&serve(&mut m, ATTACKER, batch(upstream, None)).unwrap()),
        upstream
    );
    // And the victim keeps its PID on every later fetch.
    assert_eq!(
        pid_of(&serve(&mut m, VICTIM, batch(5, None)).unwrap()),
        victim
    );
}

/// The attacker's search for a block: the victim's future identity (victim,
/// 7) will probe F(victim, 7, s) for s = 0..63; the attacker sends each of
/// those 64 values as a mirrored PID of its own, occupying every slot (the
/// salt-0 one as a claim the two-paths rule believes).
fn block_fetches() -> Vec<i64> {
    (0..u64::from(MAX_PROBES))
        .map(|s| map_pid(VICTIM, 7, s).unwrap())
        .collect()
}

#[test]
fn block_without_declaration_denies_or_hijacks_the_victims_identity() {
    let mut m = mapper(false);
    for slot in block_fetches() {
        serve(&mut m, ATTACKER, batch(slot, None)).unwrap();
    }
    // The victim's producer arrives: either all its slots are taken
    // (SlotSpaceExhausted, every retry the same) or it shares its salt-0
    // slot with the attacker's claim. Both are damage.
    match serve(&mut m, VICTIM, batch(7, None)) {
        Err(Error::SlotSpaceExhausted { .. }) => {}
        Ok(bytes) => assert!(
            m.holders(pid_of(&bytes)).len() > 1,
            "shared with the attacker"
        ),
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn block_with_declaration_is_refused_and_the_victim_maps_at_salt_0() {
    let mut m = mapper(true);
    let mut refused = 0;
    for slot in block_fetches() {
        match serve(&mut m, ATTACKER, batch(slot, None)) {
            Err(Error::UndeclaredOrigin { .. }) => refused += 1,
            other => panic!("the claim of {slot} was not refused: {other:?}"),
        }
    }
    assert_eq!(refused, 64);
    let victim = pid_of(&serve(&mut m, VICTIM, batch(7, None)).unwrap());
    assert_eq!(victim, map_pid(VICTIM, 7, 0).unwrap());
    assert_eq!(m.holders(victim).len(), 1);
}

#[test]
fn declared_chains_and_diamonds_still_share_by_the_two_paths_rule() {
    // A -> B -> D and A -> C -> D, declared: A's producer keeps one PID at D.
    let mut origins = Origins::default();
    origins.insert("B".to_owned(), vec!["A".to_owned()]);
    origins.insert("C".to_owned(), vec!["A".to_owned()]);
    let config = MapperConfig {
        origins: Some(origins),
        ..MapperConfig::new(common::TOPIC.parse().unwrap(), 0)
    };
    let mut m = Mapper::new(config.clone()).unwrap();
    let a5 = map_pid("A", 5, 0).unwrap();
    let via_b = pid_of(&serve(&mut m, "B", batch(a5, None)).unwrap());
    let via_c = pid_of(&serve(&mut m, "C", batch(a5, None)).unwrap());
    assert_eq!((via_b, via_c), (a5, a5));
    // B's own producers are B's: a source always carries itself.
    assert!(serve(&mut m, "B", batch(5, None)).is_ok());
    // The declaration travels in the snapshot, so a new leader refuses alike.
    let restored = Mapper::restore(&m.snapshot()).unwrap();
    assert_eq!(restored.config(), &config);
    let mut restored = restored;
    assert!(matches!(
        serve(&mut restored, "B", batch(victims_pid(1), None)),
        Err(Error::UndeclaredOrigin { .. })
    ));
}

/// Decided (issue 22): a source's local PIDs are always its own, but its
/// mirrored PIDs in its own region are claims like any other: they can
/// only be its producers come back through a cycle, which the declaration
/// names by declaring the source its own origin.
#[test]
fn a_sources_mirrored_pids_in_its_own_region_need_it_declared_as_its_own_origin() {
    let own = map_pid(VICTIM, 9, 0).unwrap();
    let mut m = mapper(true);
    // Local PIDs flow without any declaration of the victim's own.
    assert!(serve(&mut m, VICTIM, batch(9, None)).is_ok());
    let e = serve(&mut m, VICTIM, batch(own, None)).unwrap_err();
    assert!(matches!(e, Error::UndeclaredOrigin { .. }), "{e}");
    let mut config = MapperConfig::new(common::TOPIC.parse().unwrap(), 0);
    let mut origins = Origins::default();
    origins.insert(VICTIM.to_owned(), vec![VICTIM.to_owned()]);
    config.origins = Some(origins);
    let mut m = Mapper::new(config).unwrap();
    assert!(serve(&mut m, VICTIM, batch(own, None)).is_ok());
}

/// Decided (issue 22): `__mirror_state` records are loaded whatever the
/// declaration says (a leader wrote them), so whoever can write the topic
/// gets past it; a record that contradicts it is reported.
#[test]
fn a_record_that_contradicts_the_declaration_is_loaded_and_reported() {
    use mirrorpid::record::{StateKey, StateValue};
    use mirrorpid::{LoadOutcome, StateRecord};
    let record = |source: &str, pid: i64| StateRecord {
        key: StateKey {
            topic_id: common::TOPIC.parse().unwrap(),
            partition: 0,
            source_cluster_id: source.into(),
            original_pid: pid,
        },
        value: Some(StateValue {
            salt: 0,
            colliding_cluster_id: String::new(),
            timestamp_ms: 5,
        }),
    };
    let mut m = mapper(true);
    // The attacker claims the victim's producer; a rewrite would refuse it.
    let claim = victims_pid(4);
    let outcome = m.load_record(&record(ATTACKER, claim)).unwrap();
    assert!(
        matches!(
            outcome,
            LoadOutcome::Bound {
                undeclared: true,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(mirrorpid_abi::load_status(&outcome), 1 | 4);
    // A declared claim, and a local PID, are not reported.
    let upstream = map_pid("upstream", 4, 0).unwrap();
    for (source, pid) in [(ATTACKER, upstream), (VICTIM, 4), (ATTACKER, 8)] {
        let outcome = m.load_record(&record(source, pid)).unwrap();
        assert!(
            matches!(
                outcome,
                LoadOutcome::Bound {
                    undeclared: false,
                    ..
                }
            ),
            "{source}/{pid}: {outcome:?}"
        );
    }
    // Without a declaration nothing is undeclared.
    let mut open = mapper(false);
    let outcome = open.load_record(&record(ATTACKER, claim)).unwrap();
    assert!(matches!(
        outcome,
        LoadOutcome::Bound {
            undeclared: false,
            ..
        }
    ));
}

/// Decided (issue 22): a record is judged before the mapper's state. One
/// that could never load fails with its own error even while bindings are
/// pending; another partition's is skipped; a well-formed one of this
/// partition is `Unconfirmed`.
#[test]
fn while_bindings_are_pending_a_malformed_record_gets_its_own_error() {
    use mirrorpid::record::{StateKey, StateValue};
    use mirrorpid::StateRecord;
    let mut m = mapper(false);
    serve(&mut m, VICTIM, batch(1, None)).unwrap();
    let mut bytes = batch(2, None);
    m.rewrite(VICTIM, &mut bytes, 2, RewriteOptions::default())
        .unwrap();
    assert_eq!(m.pending(), 1);
    let good = StateRecord {
        key: StateKey {
            topic_id: common::TOPIC.parse().unwrap(),
            partition: 0,
            source_cluster_id: "x".into(),
            original_pid: 3,
        },
        value: Some(StateValue {
            salt: 0,
            colliding_cluster_id: String::new(),
            timestamp_ms: 5,
        }),
    };
    assert!(matches!(
        m.load_record(&good),
        Err(Error::Unconfirmed { .. })
    ));
    let mut bad_salt = good.clone();
    bad_salt.value.as_mut().unwrap().salt = 64;
    assert!(matches!(
        m.load_record(&bad_salt),
        Err(Error::InvalidSalt { salt: 64 })
    ));
    let mut bad_pid = good.clone();
    bad_pid.key.original_pid = 1 << 41;
    assert!(matches!(
        m.load_record(&bad_pid),
        Err(Error::InvalidRecordPid { .. })
    ));
    let mut empty = good.clone();
    empty.key.source_cluster_id.clear();
    assert!(matches!(
        m.load_record(&empty),
        Err(Error::InvalidInput { .. })
    ));
    let mut other = good.clone();
    other.key.partition = 1;
    assert_eq!(
        m.load_record(&other).unwrap(),
        mirrorpid::LoadOutcome::Skipped
    );
    // Bytes that do not decode never reach the mapper: their error, too.
    let (key, _) = good.encode().unwrap();
    assert!(matches!(
        StateRecord::decode(&key, Some(&[0, 0, 0])),
        Err(Error::Truncated { .. })
    ));
    assert_eq!(m.pending(), 1, "nothing changed");
}

/// Decided (issue 22): a snapshot whose declaration names a source twice
/// (or out of order) was not written by a mapper, checksum or not: it is
/// corrupt. A config naming a source twice is refused too (its JSON
/// repeats a key).
#[test]
fn a_source_declared_twice_is_refused_in_snapshots_and_configs() {
    let m = mapper(true);
    let snap = m.snapshot();
    let a = snap
        .windows(ATTACKER.len())
        .position(|w| w == ATTACKER.as_bytes())
        .unwrap();
    let v = snap
        .windows(VICTIM.len())
        .position(|w| w == VICTIM.as_bytes())
        .unwrap();
    assert!(a < v, "sources in ascending order");
    // Entry = i16 len | name | u32 count | origins: the victim's entry
    // (no origins) replaced by a second copy of the attacker's.
    let attacker_entry_start = a - 2;
    let victim_entry_start = v - 2;
    let victim_entry_end = v + VICTIM.len() + 4;
    let mut twice = snap[..victim_entry_start].to_vec();
    twice.extend_from_slice(&snap[attacker_entry_start..victim_entry_start]);
    twice.extend_from_slice(&snap[victim_entry_end..]);
    let twice = common::reseal_snapshot(&twice);
    match Mapper::restore(&twice) {
        Err(Error::CorruptSnapshot { reason }) => {
            assert!(reason.contains("twice"), "{reason}")
        }
        other => panic!("{:?}", other.map(|m| m.len())),
    }
    let config = format!(
        r#"{{"topicId":"{}","partition":0,"origins":{{"B":["A"],"B":["C"]}}}}"#,
        common::TOPIC
    );
    let e = MapperConfig::from_json(&config).unwrap_err();
    assert!(e.to_string().contains("repeated"), "{e}");
}

/// Two-way mirroring whose mirror lacks a cycle check: us-east's own
/// producer comes back from eu-west with the PID eu-west mapped it to. At
/// salt 0 F keeps a mirrored PID, so without a declaration the loop is
/// silent (the batch is written again, under a PID no local producer has);
/// with the declaration of the two-way pair it is refused, loudly.
#[test]
fn a_two_way_loop_is_refused_under_the_pairs_declaration() {
    let local = 5;
    let came_back = map_pid("us-east", local, 0).unwrap();
    let mut open = Mapper::new(MapperConfig::new(common::TOPIC.parse().unwrap(), 0)).unwrap();
    let looped = serve(&mut open, "eu-west", batch(came_back, None)).unwrap();
    assert_eq!(pid_of(&looped), came_back, "silent: the same PID again");
    assert_ne!(pid_of(&looped), local);

    let mut config = MapperConfig::new(common::TOPIC.parse().unwrap(), 0);
    let mut origins = Origins::default();
    origins.insert("eu-west".to_owned(), vec![]); // eu-west carries only its own
    config.origins = Some(origins);
    let mut declared = Mapper::new(config).unwrap();
    let own = serve(&mut declared, "eu-west", batch(7, None)).unwrap();
    assert_eq!(pid_of(&own), map_pid("eu-west", 7, 0).unwrap());
    let err = serve(&mut declared, "eu-west", batch(came_back, None)).unwrap_err();
    assert!(matches!(err, Error::UndeclaredOrigin { .. }), "{err}");
}

/// A direct source the declaration does not name is trusted with no
/// origin, as one declared with an empty list is: its own producers map,
/// every mirrored PID it sends is refused and changes nothing. The README's
/// Java guide says so; this holds it.
#[test]
fn an_undeclared_direct_source_is_trusted_like_an_empty_list() {
    let upstreams = map_pid("upstream", 3, 0).unwrap();
    for declared_empty in [false, true] {
        let mut config = MapperConfig::new(common::TOPIC.parse().unwrap(), 0);
        let mut origins = Origins::default();
        origins.insert(ATTACKER.to_owned(), vec!["upstream".to_owned()]);
        if declared_empty {
            origins.insert("stranger".to_owned(), vec![]);
        }
        config.origins = Some(origins);
        let mut m = Mapper::new(config).unwrap();
        let own = serve(&mut m, "stranger", batch(7, None)).unwrap();
        assert_eq!(pid_of(&own), map_pid("stranger", 7, 0).unwrap());
        let before = m.len();
        let mut bytes = batch(upstreams, None);
        let original = bytes.clone();
        let err = m
            .rewrite("stranger", &mut bytes, 1_000, RewriteOptions::default())
            .unwrap_err();
        assert!(matches!(err, Error::UndeclaredOrigin { .. }), "{err}");
        assert_eq!(bytes, original, "the refused batch is unchanged");
        assert_eq!(m.len(), before, "and nothing was bound");
        // The source declared to carry upstream's producers maps the same PID.
        assert!(serve(&mut m, ATTACKER, batch(upstreams, None)).is_ok());
    }
}
