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
