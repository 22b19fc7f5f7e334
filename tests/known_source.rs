//! A [`KnownSource`] kept from call to call finds its cluster where it
//! found it last, as long as the table's clusters have not changed since:
//! every change of them (a new source interned, a failed call's names
//! taken back, names freed and renumbered after expiry, another mapper)
//! must make it look again, so that a rewrite from it is exactly a rewrite
//! from the plain ID. Two mappers run the same schedule, one naming its
//! sources by ID and one by `KnownSource`s (one of them shared with a
//! third mapper), and must agree on every result and every byte.

use mirrorpid::batch::{BatchBuilder, RecordSpec};
use mirrorpid::{KnownSource, Mapper, MapperConfig, RewriteOptions, Source, TopicId};

fn mapper() -> Mapper {
    let mut config = MapperConfig::new(TopicId([3; 16]), 0);
    config.producer_expiration_ms = 1_000;
    Mapper::new(config).unwrap()
}

/// A fetch of one batch a PID, and with `broken` a truncated batch after
/// them (an error when the fetch is complete).
fn fetch(pids: &[i64], broken: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &pid) in pids.iter().enumerate() {
        out.extend(
            BatchBuilder {
                base_offset: i as i64,
                producer_id: pid,
                producer_epoch: 0,
                base_sequence: 0,
                records: vec![RecordSpec {
                    key: None,
                    value: Some(vec![1; 10]),
                }],
                ..BatchBuilder::default()
            }
            .encode(),
        );
    }
    if broken {
        let batch = BatchBuilder {
            producer_id: 1,
            producer_epoch: 0,
            base_sequence: 0,
            ..BatchBuilder::default()
        }
        .encode();
        out.extend_from_slice(&batch[..batch.len() - 3]);
    }
    out
}

/// A small deterministic generator (xorshift).
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const SOURCES: [&str; 3] = ["east", "west", "north-and-some-more-bytes"];

#[test]
fn a_rewrite_from_a_known_source_is_a_rewrite_from_its_id() {
    let options = RewriteOptions {
        complete: true,
        outcomes: true,
        ..RewriteOptions::default()
    };
    for seed in 1..40u64 {
        let mut dice = Dice(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let (mut by_id, mut by_known, mut other) = (mapper(), mapper(), mapper());
        // One `KnownSource` for each source, and one that changes source
        // between calls, used by two mappers.
        let known: Vec<KnownSource> = SOURCES
            .iter()
            .map(|id| {
                let mut k = KnownSource::new();
                k.set(id);
                k
            })
            .collect();
        let mut roaming = KnownSource::new();
        let mut now = 0;
        for step in 0..200 {
            now += dice.below(400) as i64;
            let s = dice.below(SOURCES.len() as u64) as usize;
            match dice.below(10) {
                0 => {
                    assert_eq!(by_id.confirm(), by_known.confirm());
                }
                1 => {
                    assert_eq!(by_id.abort(), by_known.abort());
                }
                2 => {
                    // Expiry needs every binding confirmed; it frees the
                    // names no binding uses and renumbers the others.
                    by_id.confirm();
                    by_known.confirm();
                    assert_eq!(by_id.expire(now).unwrap(), by_known.expire(now).unwrap());
                }
                roll => {
                    let n = 1 + dice.below(4) as usize;
                    let pids: Vec<i64> = (0..n).map(|_| dice.below(6) as i64).collect();
                    // A failed call takes back every name it interned.
                    let original = fetch(&pids, roll == 3);
                    let (mut a, mut b) = (original.clone(), original.clone());
                    let want = by_id.begin(now).rewrite(SOURCES[s], &mut a, options);
                    let source = if roll == 4 {
                        roaming.set(SOURCES[s]);
                        &roaming
                    } else {
                        &known[s]
                    };
                    let got = by_known
                        .begin(now)
                        .rewrite(Source::Known(source), &mut b, options);
                    match (want, got) {
                        (Ok(want), Ok(got)) => {
                            assert_eq!(want.commit(), got.commit(), "seed {seed}, step {step}");
                        }
                        (Err(want), Err(got)) => {
                            assert_eq!(want.to_string(), got.to_string());
                        }
                        (want, got) => panic!(
                            "seed {seed}, step {step}: {:?} and {:?}",
                            want.map(|r| r.consumed()),
                            got.map(|r| r.consumed())
                        ),
                    }
                    assert_eq!(a, b, "seed {seed}, step {step}: the bytes differ");
                    // The roaming source, used by another mapper with
                    // clusters of its own, is looked up there afresh.
                    let mut c = original.clone();
                    if let Ok(r) =
                        other
                            .begin(now)
                            .rewrite(Source::Known(&roaming), &mut c, options)
                    {
                        r.commit();
                    }
                    other.confirm();
                }
            }
            assert_eq!(
                by_id.snapshot(),
                by_known.snapshot(),
                "seed {seed}, step {step}"
            );
        }
    }
}

/// A source is refused through a `KnownSource` exactly as by its ID.
#[test]
fn a_known_source_is_checked_as_its_id_is() {
    let mut m = mapper();
    let mut buf = fetch(&[1], false);
    let empty = KnownSource::new();
    let err = m
        .begin(0)
        .rewrite(Source::Known(&empty), &mut buf, RewriteOptions::default())
        .map(|r| r.consumed())
        .unwrap_err();
    let by_id = m
        .begin(0)
        .rewrite("", &mut buf, RewriteOptions::default())
        .map(|r| r.consumed())
        .unwrap_err();
    assert_eq!(err.to_string(), by_id.to_string());
    assert_eq!(buf, fetch(&[1], false));
}
