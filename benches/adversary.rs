//! Hash flooding: 100,000 identities chosen against the hashes (PIDs found
//! by brute force, cluster IDs that version 1's name hash could not tell
//! apart) beside 100,000 random ones, in one run: map (new and bound),
//! restore and rewrite. The target (docs/PERFORMANCE.md): adversarial
//! within 2x of random.
//!
//! cargo bench --bench adversary

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions, TopicId};

use adversary::Identities;
use mirrorpid_test_support::adversary;

fn mapper() -> Mapper {
    let topic: TopicId = "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap();
    Mapper::new(MapperConfig::new(topic, 0)).unwrap()
}

fn bind(ids: &Identities) -> Mapper {
    let mut m = mapper();
    for (source, pids) in &ids.sources {
        for &pid in pids {
            m.map(source, pid, 1).unwrap();
        }
    }
    m.confirm();
    m
}

fn bench(c: &mut Criterion) {
    let sets = Identities::sets();
    let mut g = c.benchmark_group("100k identities");
    g.throughput(Throughput::Elements(100_000))
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for (name, ids) in sets {
        g.bench_function(format!("map new, {name}"), |b| {
            b.iter_batched(
                mapper,
                |mut m| {
                    for (source, pids) in &ids.sources {
                        for &pid in pids {
                            black_box(m.map(source, pid, 1).unwrap().mapped);
                        }
                    }
                    m
                },
                BatchSize::LargeInput,
            )
        });
        let mut bound = bind(&ids);
        g.bench_function(format!("map bound, {name}"), |b| {
            b.iter(|| {
                for (source, pids) in &ids.sources {
                    for &pid in pids {
                        black_box(bound.map(source, pid, 2).unwrap().mapped);
                    }
                }
            })
        });
        let snapshot = bound.snapshot();
        g.bench_function(format!("restore, {name}"), |b| {
            b.iter(|| Mapper::restore(black_box(&snapshot)).unwrap())
        });
        let fetches = ids.fetches();
        g.bench_function(format!("rewrite bound, {name}"), |b| {
            b.iter_batched(
                || fetches.clone(),
                |mut fetches| {
                    for (source, buf) in &mut fetches {
                        black_box(
                            bound
                                .rewrite(source, buf, 3, RewriteOptions::default())
                                .unwrap(),
                        );
                    }
                    fetches
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
