//! The batch rewrite (the targets in docs/PERFORMANCE.md): 1 KiB, 64 KiB and 1 MiB batches, against a
//! full CRC-32C recompute of the same batch in the same run.
//!
//! cargo bench --bench rewrite

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use mirrorpid::batch::{BatchBuilder, RecordSpec, ATTRIBUTES_OFFSET};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions};

fn batch(size: usize) -> Vec<u8> {
    BatchBuilder {
        producer_id: 5,
        producer_epoch: 0,
        base_sequence: 0,
        records: vec![RecordSpec {
            key: None,
            value: Some((0..size - 80).map(|i| i as u8).collect()),
        }],
        ..BatchBuilder::default()
    }
    .encode()
}

fn bench_rewrite(c: &mut Criterion) {
    let mut g = c.benchmark_group("rewrite");
    for (name, size) in [("1KiB", 1 << 10), ("64KiB", 64 << 10), ("1MiB", 1 << 20)] {
        let original = batch(size);
        let mut buf = original.clone();
        let mut m = Mapper::new(MapperConfig::new(
            "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap(),
            0,
        ))
        .unwrap();
        m.map("A", 5, 0).unwrap(); // bound: measure the rewrite, not the first binding
        m.confirm();
        g.bench_function(format!("rewrite {name}"), |b| {
            b.iter(|| {
                // Put the original CRC and PID back (12 bytes, O(1)) so every
                // iteration really rewrites.
                buf[17..21].copy_from_slice(&original[17..21]);
                buf[43..51].copy_from_slice(&original[43..51]);
                let out = m
                    .rewrite("A", black_box(&mut buf), 1, RewriteOptions::default())
                    .unwrap();
                black_box(out.consumed)
            })
        });
        g.bench_function(format!("full CRC recompute {name}"), |b| {
            b.iter(|| {
                black_box(mirrorpid::crc::crc32c(black_box(
                    &original[ATTRIBUTES_OFFSET..],
                )))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_rewrite);
criterion_main!(benches);
