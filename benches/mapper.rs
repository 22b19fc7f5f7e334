//! Mapper benchmarks (the targets in docs/PERFORMANCE.md): map() of a bound identity, restore and
//! replay of 1 M bindings, memory per bound producer, and how map and
//! rewrite scale from 1k to 10M bound producers.
//!
//! cargo bench --bench mapper

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mirrorpid::{Mapper, MapperConfig, StateRecord, TopicId};

fn mapper() -> Mapper {
    let topic: TopicId = "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap();
    Mapper::new(MapperConfig::new(topic, 0)).unwrap()
}

/// A mapper with `n` bound producers from 4 source clusters, and their records.
fn populated(n: i64) -> (Mapper, Vec<StateRecord>) {
    let mut m = mapper();
    let mut records = Vec::with_capacity(n as usize);
    for i in 0..n {
        let source = ["east-1", "west-2", "eu-3", "ap-4"][(i % 4) as usize];
        let out = m.map(source, i / 4, 1).unwrap();
        records.extend(out.record.map(|r| *r));
    }
    m.confirm(); // the records are "durable": every binding is permanent
    (m, records)
}

fn bench_map(c: &mut Criterion) {
    let (mut m, _) = populated(1_000);
    let mut g = c.benchmark_group("map");
    g.throughput(Throughput::Elements(1_000));
    g.bench_function("bound identity x1000", |b| {
        b.iter(|| {
            for i in 0..1_000i64 {
                let source = ["east-1", "west-2", "eu-3", "ap-4"][(i % 4) as usize];
                black_box(
                    m.map(black_box(source), black_box(i / 4), 2)
                        .unwrap()
                        .mapped,
                );
            }
        })
    });
    // A host maps one source's PIDs together (a fetch comes from one
    // source): the last source's cluster index is remembered.
    g.bench_function("bound identity x1000, one source at a time", |b| {
        b.iter(|| {
            for s in 0..4i64 {
                let source = ["east-1", "west-2", "eu-3", "ap-4"][s as usize];
                for i in 0..250i64 {
                    black_box(m.map(black_box(source), black_box(i), 2).unwrap().mapped);
                }
            }
        })
    });
    g.finish();
}

fn bench_million(c: &mut Criterion) {
    let (m, records) = populated(1_000_000);
    let per = m.memory_bytes() as f64 / m.len() as f64;
    println!(
        "memory: {} bound producers use {} bytes = {per:.1} bytes per producer",
        m.len(),
        m.memory_bytes()
    );
    let snapshot = m.snapshot();
    let encoded: Vec<(Vec<u8>, Option<Vec<u8>>)> =
        records.iter().map(|r| r.encode().unwrap()).collect();
    let mut g = c.benchmark_group("1M bindings");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(1_000_000));
    g.bench_function("restore snapshot", |b| {
        b.iter(|| black_box(Mapper::restore(&snapshot).unwrap().len()))
    });
    g.bench_function("replay records (decode + load)", |b| {
        b.iter_batched(
            mapper,
            |mut fresh| {
                for (k, v) in &encoded {
                    let r = StateRecord::decode(k, v.as_deref()).unwrap();
                    fresh.load_record(&r).unwrap();
                }
                black_box(fresh.len())
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// How cost grows with the work: `map` of a bound identity and a
/// 1000-batch rewrite with 1k to 10M bound producers (one source), and
/// the memory per producer at each.
fn bench_scale(c: &mut Criterion) {
    let mut g = c.benchmark_group("scale");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(1_000));
    for n in [1_000i64, 100_000, 1_000_000, 10_000_000] {
        let topic: TopicId = "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap();
        let mut m = Mapper::new(MapperConfig {
            max_bindings: n as u64,
            ..MapperConfig::new(topic, 0)
        })
        .unwrap();
        for pid in 0..n {
            m.map("east-1", pid, 1).unwrap();
            if pid % 100_000 == 99_999 {
                m.confirm();
            }
        }
        m.confirm();
        println!(
            "scale: {n} bound producers use {} bytes = {:.1} bytes per producer",
            m.memory_bytes(),
            m.memory_bytes() as f64 / n as f64
        );
        // 1000 identities spread over the whole table (cache misses grow
        // with it, as in a real partition).
        let step = n / 1_000;
        g.bench_function(format!("map bound x1000, {n} bound"), |b| {
            b.iter(|| {
                for i in 0..1_000 {
                    black_box(m.map("east-1", i * step, 2).unwrap().mapped);
                }
            })
        });
        let original: Vec<u8> = (0..1_000)
            .flat_map(|i| {
                mirrorpid::batch::BatchBuilder {
                    producer_id: i * step,
                    producer_epoch: 0,
                    base_sequence: 0,
                    ..mirrorpid::batch::BatchBuilder::default()
                }
                .encode()
            })
            .collect();
        g.bench_function(format!("rewrite 1000 batches, {n} bound"), |b| {
            b.iter_batched_ref(
                || original.clone(),
                |buf| {
                    m.rewrite("east-1", buf, 3, mirrorpid::RewriteOptions::default())
                        .unwrap()
                        .consumed
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench_map, bench_million, bench_scale);
criterion_main!(benches);
