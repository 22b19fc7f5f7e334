//! Mapper benchmarks (the targets in docs/PERFORMANCE.md): map() of a bound identity, restore and
//! replay of 1 M bindings, and memory per bound producer.
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

criterion_group!(benches, bench_map, bench_million);
criterion_main!(benches);
