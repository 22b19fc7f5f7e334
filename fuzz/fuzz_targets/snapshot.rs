//! Snapshot restore on arbitrary bytes, and restore(snapshot(m)) == m for
//! mappers built by arbitrary calls.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mirrorpid::{Mapper, MapperConfig, StateRecord};
use mirrorpid_fuzz::TOPIC;

#[derive(Arbitrary, Debug)]
enum Op {
    Map { source: u8, pid: i64, now: i64 },
    Confirm,
    Abort,
    Expire { now: i64 },
    ExpirePid { pid: i64 },
    Tombstone { source: u8, pid: i64 },
}

const SOURCES: [&str; 4] = ["cluster-2123", "cluster-2336", "A", "B"];

fuzz_target!(|data: &[u8]| {
    // First byte even: the rest is snapshot bytes; odd: calls that build a
    // mapper, then snapshot it.
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 2 {
        0 => {
            if let Ok(m) = Mapper::restore(rest) {
                let snap = m.snapshot();
                let again = Mapper::restore(&snap).expect("a snapshot restores");
                assert_eq!(again.snapshot(), snap);
            }
        }
        _ => {
            let mut u = arbitrary::Unstructured::new(rest);
            let Ok(ops) = Vec::<Op>::arbitrary(&mut u) else {
                return;
            };
            let mut m = Mapper::new(MapperConfig::new(TOPIC.parse().unwrap(), 0)).unwrap();
            for op in ops.iter().take(256) {
                match *op {
                    Op::Map { source, pid, now } => {
                        let pid = if pid & 1 == 0 { pid & 0xff } else { pid };
                        let _ = m.map(SOURCES[usize::from(source) % 4], pid, now);
                    }
                    Op::Confirm => {
                        m.confirm();
                    }
                    Op::Abort => {
                        m.abort();
                    }
                    Op::Expire { now } => {
                        let _ = m.expire(now);
                    }
                    Op::ExpirePid { pid } => {
                        let _ = m.expire_pid(pid);
                    }
                    Op::Tombstone { source, pid } => {
                        let key = mirrorpid::StateKey {
                            topic_id: TOPIC.parse().unwrap(),
                            partition: 0,
                            source_cluster_id: SOURCES[usize::from(source) % 4].into(),
                            original_pid: pid & 0xff,
                        };
                        let _ = m.load_record(&StateRecord::tombstone(key));
                    }
                }
            }
            let snap = m.snapshot();
            let restored = Mapper::restore(&snap).expect("every snapshot restores");
            assert_eq!(restored.snapshot(), snap);
            m.confirm();
            let confirmed = Mapper::restore(&m.snapshot()).unwrap();
            let a: Vec<_> = confirmed
                .bindings()
                .map(|b| (b.source_cluster_id.to_owned(), b.pid, b.mapped, b.salt))
                .collect();
            let b: Vec<_> = m
                .bindings()
                .map(|b| (b.source_cluster_id.to_owned(), b.pid, b.mapped, b.salt))
                .collect();
            assert_eq!(a, b, "restore(snapshot(m)) == m once confirmed");
        }
    }
});
