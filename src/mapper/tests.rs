use super::*;
use crate::topic::TopicId;

fn mapper() -> Mapper {
    Mapper::new(MapperConfig::new(TopicId([7; 16]), 1)).unwrap()
}

#[test]
fn failed_call_undoes_bindings_touches_and_clusters() {
    let mut m = mapper();
    m.map("A", 1, 10).unwrap();
    m.confirm();
    let before = m.snapshot();
    {
        // A call that changes everything it can, then is dropped.
        let mut call = m.begin(99);
        call.map("A", 1).unwrap();
        let a = call.cluster(SourceCluster::new("A").unwrap()).unwrap();
        let found = call.find(a, Wire::of(1)).unwrap();
        call.reserve(1).unwrap();
        call.see(found, Some(true));
        call.map("new-cluster", 2).unwrap();
        call.map("A", 3).unwrap();
        assert_eq!(call.m.len(), 3);
        assert!(call.m.lookup("A", 1).unwrap().transaction_open);
    }
    assert_eq!(m.snapshot(), before);
    assert_eq!(m.pending(), 0);
    assert!(m.table.find_cluster("new-cluster").is_none());
    assert_eq!(m.lookup("A", 1).unwrap().last_seen_ms, Some(10));
    // A successful call keeps its changes.
    let mut call = m.begin(5);
    call.map("B", 1).unwrap();
    call.commit();
    assert!(m.lookup("B", 1).is_some());
}

#[test]
fn a_failed_call_inside_a_stage_keeps_the_earlier_pending_bindings() {
    let mut m = mapper();
    m.map("A", 1, 10).unwrap();
    {
        let mut call = m.begin(11);
        call.map("A", 2).unwrap();
    }
    assert_eq!(m.pending(), 1);
    assert!(m.lookup("A", 2).is_none());
    assert!(m.lookup("A", 1).unwrap().pending);
    assert_eq!(m.confirm(), 1);
    assert!(!m.lookup("A", 1).unwrap().pending);
}

#[test]
fn pending_records_come_back_until_confirmed() {
    let mut m = mapper();
    let first = m.map("A", 1, 10).unwrap();
    assert!(first.record.is_some());
    // A retry gets the same record again, and the same PID.
    let again = m.map("A", 1, 20).unwrap();
    assert_eq!(again.record, first.record);
    assert_eq!(again.mapped, first.mapped);
    assert_eq!(m.pending(), 1);
    assert_eq!(m.confirm(), 1);
    assert_eq!(m.map("A", 1, 30).unwrap().record, None);
    assert_eq!(m.confirm(), 0);
}

#[test]
fn abort_restores_the_last_confirmed_state() {
    let mut m = mapper();
    m.map("A", 1, 10).unwrap();
    m.confirm();
    let confirmed = m.snapshot();
    m.map("B", 7, 50).unwrap();
    m.map("A", 1, 50).unwrap();
    m.map("C", 8, 50).unwrap();
    // Snapshots hold confirmed bindings only.
    assert_eq!(m.snapshot().len(), confirmed.len());
    assert_eq!(m.abort(), 2);
    assert_eq!(m.snapshot(), confirmed);
    assert_eq!(m.lookup("A", 1).unwrap().last_seen_ms, Some(10));
    assert!(m.table.find_cluster("B").is_none());
}

#[test]
fn removals_wait_for_confirm() {
    let mut m = mapper();
    let out = m.map("A", 1, 10).unwrap();
    assert!(matches!(
        m.expire(i64::MAX),
        Err(Error::Unconfirmed { pending: 1, .. })
    ));
    assert!(matches!(
        m.expire_pid(out.mapped),
        Err(Error::Unconfirmed { .. })
    ));
    let record = out.record.unwrap();
    assert!(matches!(
        m.load_record(&record),
        Err(Error::Unconfirmed { .. })
    ));
    m.confirm();
    assert_eq!(m.expire(i64::MAX).unwrap().len(), 1);
}

#[test]
fn removal_keeps_indexes_consistent() {
    let mut m = mapper();
    for pid in 0..50 {
        m.map("A", pid, pid).unwrap();
    }
    m.confirm();
    for pid in (0..50).step_by(3) {
        let mapped = m.lookup("A", pid).unwrap().mapped;
        assert_eq!(m.expire_pid(mapped).unwrap().len(), 1);
    }
    for pid in 0..50 {
        let found = m.lookup("A", pid);
        assert_eq!(found.is_some(), pid % 3 != 0, "pid {pid}");
        if let Some(b) = found {
            assert_eq!(m.holders(b.mapped).len(), 1);
        }
    }
}

/// The same across the binding storage's chunk boundaries: removals move
/// the last binding of the last chunk into holes of the first ones,
/// expiry removes a scattered half, an aborted call truncates across a
/// boundary, and lookups, holders and a snapshot's round trip agree with
/// what was bound.
#[test]
fn removal_across_chunks_keeps_indexes_consistent() {
    use super::chunked::CHUNK;
    let n = 3 * CHUNK as i64 + 100;
    let mut m = Mapper::new(MapperConfig {
        producer_expiration_ms: 1000,
        ..MapperConfig::new(TopicId([7; 16]), 1)
    })
    .unwrap();
    // Odd PIDs are seen at 0 and expire at 1000; even ones stay fresh.
    for pid in 0..n {
        m.map("A", pid, if pid % 2 == 0 { 900 } else { 0 }).unwrap();
    }
    m.confirm();
    let mapped: Vec<i64> = (0..n).map(|p| m.lookup("A", p).unwrap().mapped).collect();
    for pid in (0..n).step_by(7) {
        assert_eq!(m.expire_pid(mapped[pid as usize]).unwrap().len(), 1);
    }
    let gone = |pid: i64| pid % 7 == 0 || pid % 2 == 1;
    let expired = m.expire(1000).unwrap().len();
    assert_eq!(expired, (0..n).filter(|p| p % 2 == 1 && p % 7 != 0).count());
    // A call that binds past the next chunk boundary, then fails.
    let before = m.snapshot();
    {
        let mut call = m.begin(5);
        for pid in n..n + CHUNK as i64 + 10 {
            call.map("B", pid).unwrap();
        }
    }
    assert_eq!(m.snapshot(), before);
    let restored = Mapper::restore(&m.snapshot()).unwrap();
    for mapper in [&m, &restored] {
        assert_eq!(mapper.len(), (0..n).filter(|&p| !gone(p)).count());
        for pid in 0..n {
            let found = mapper.lookup("A", pid);
            assert_eq!(found.is_some(), !gone(pid), "pid {pid}");
            if let Some(b) = found {
                assert_eq!(b.mapped, mapped[pid as usize], "pid {pid}");
                assert_eq!(mapper.holders(b.mapped).len(), 1);
            }
        }
    }
}

#[test]
fn abort_undoes_the_whole_call_that_opened_the_stage() {
    let mut m = mapper();
    m.map("A", 1, 10).unwrap();
    m.confirm();
    let confirmed = m.snapshot();
    // One call touches A/1 first, then binds B/7: abort undoes both.
    let mut call = m.begin(60);
    call.map("A", 1).unwrap();
    call.map("B", 7).unwrap();
    call.commit();
    assert_eq!(m.lookup("A", 1).unwrap().last_seen_ms, Some(60));
    assert_eq!(m.abort(), 1);
    assert_eq!(m.snapshot(), confirmed);
    assert_eq!(m.lookup("A", 1).unwrap().last_seen_ms, Some(10));
}

#[test]
fn expiry_is_inclusive_and_survives_extreme_clocks() {
    let config = MapperConfig {
        producer_expiration_ms: 1_000,
        ..MapperConfig::new(TopicId([7; 16]), 1)
    };
    // Idle for exactly the limit: expired.
    let mut m = Mapper::new(config.clone()).unwrap();
    m.map("A", 1, 5_000).unwrap();
    m.confirm();
    assert_eq!(m.expire(5_999).unwrap().len(), 0);
    assert_eq!(m.expire(6_000).unwrap().len(), 1);
    // The extremes of the clock: idle time saturates instead of wrapping,
    // and i64::MIN (which marks "never seen" internally) counts as the
    // earliest real time.
    for seen in [i64::MIN, i64::MIN + 1, -1, 0] {
        let mut m = Mapper::new(config.clone()).unwrap();
        m.map("A", 1, seen).unwrap();
        m.confirm();
        assert_eq!(m.expire(i64::MAX).unwrap().len(), 1, "seen at {seen}");
    }
    let mut m = Mapper::new(config).unwrap();
    m.map("A", 1, i64::MAX).unwrap();
    m.confirm();
    assert_eq!(m.expire(i64::MAX).unwrap().len(), 0);
    assert_eq!(
        m.expire(i64::MIN).unwrap().len(),
        0,
        "time running backwards expires nothing"
    );
}

#[test]
fn heapsort_sorts() {
    let mut x = 0x2545_f491u32;
    for n in [0usize, 1, 2, 3, 7, 64, 1000] {
        let mut v: Vec<u32> = (0..n)
            .map(|_| {
                x = x.wrapping_mul(0x9e37_79b9).rotate_left(7);
                x % 50
            })
            .collect();
        let mut want = v.clone();
        want.sort();
        super::heapsort(&mut v);
        assert_eq!(v, want, "n = {n}");
    }
}
