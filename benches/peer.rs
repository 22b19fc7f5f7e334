//! mirrorpid's rewrite beside the naive peer (`src/peer.rs`: map, write,
//! recompute the CRC-32C over the batch), in one run: single batches of
//! 256 B to 1 MiB, and fetches of 1 to 1000 small batches, every producer
//! bound. `docs/PERFORMANCE.md`'s native table is written from them.
//!
//! cargo bench --features peer --bench peer

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mirrorpid::peer::rewrite_naive;
use mirrorpid::{Mapper, MapperConfig, RewriteOptions};

use batches::{fetch, single, SIZES};
use mirrorpid_test_support::bench as batches;

fn bound(buf: &[u8]) -> Mapper {
    let mut m = Mapper::new(MapperConfig::new(
        "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap(),
        0,
    ))
    .unwrap();
    m.rewrite("A", &mut buf.to_vec(), 0, RewriteOptions::default())
        .unwrap();
    m.confirm();
    m
}

fn side_by_side(c: &mut Criterion, group: &str, cases: Vec<(String, Vec<u8>, u64)>) {
    let mut g = c.benchmark_group(group);
    for (name, original, batches) in cases {
        g.throughput(Throughput::Elements(batches));
        let mut m = bound(&original);
        let mut buf = original.clone();
        let at = batches::offsets(&original);
        // As the README calls it.
        g.bench_function(format!("mirrorpid {name}"), |b| {
            b.iter(|| {
                // Only the header bytes a rewrite changes are put back: a
                // full copy would cost more than the rewrite of a big batch.
                batches::restore_headers(&mut buf, &original, &at);
                let r = m.rewrite("A", black_box(&mut buf), 1, RewriteOptions::default());
                black_box(r.unwrap().consumed)
            })
        });
        g.bench_function(format!("naive {name}"), |b| {
            b.iter(|| {
                batches::restore_headers(&mut buf, &original, &at);
                black_box(rewrite_naive(&mut m, "A", black_box(&mut buf), 1).unwrap())
            })
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    side_by_side(
        c,
        "single batch",
        SIZES
            .iter()
            .map(|&(name, size)| (name.to_owned(), single(size), 1))
            .collect(),
    );
    side_by_side(
        c,
        "fetch",
        [1u64, 10, 100, 1000]
            .iter()
            .map(|&n| (format!("{n} batches"), fetch(n as usize), n))
            .collect(),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
