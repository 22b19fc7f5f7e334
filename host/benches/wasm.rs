//! The same work natively and in the broker module under wasmtime (docs/PERFORMANCE.md:
//! WASM within 2x of native): rewriting a fetch of 1000 small batches from
//! bound producers, i.e. walk + map + CRC patch per batch.
//!
//! Also hash flooding: 100,000 identities chosen against the hashes
//! beside random ones (within 2x is the target).
//!
//! scripts/build.sh && cargo bench -p mirrorpid-host --bench wasm

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mirrorpid::batch::{BatchBuilder, RecordSpec};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions};
use mirrorpid_host::{default_module_path, BrokerModule};

#[path = "../../benches/common/adversary.rs"]
mod adversary;
use adversary::Identities;

const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;
const BATCHES: usize = 1000;

fn fetch() -> Vec<u8> {
    (0..BATCHES as i64)
        .flat_map(|pid| {
            BatchBuilder {
                base_offset: pid,
                producer_id: pid,
                producer_epoch: 0,
                base_sequence: 0,
                records: vec![RecordSpec {
                    key: None,
                    value: Some(vec![1; 32]),
                }],
                ..BatchBuilder::default()
            }
            .encode()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let original = fetch();
    let mut g = c.benchmark_group("rewrite 1000 batches");
    g.throughput(Throughput::Elements(BATCHES as u64));

    let mut native = Mapper::new(MapperConfig::from_json(CONFIG).unwrap()).unwrap();
    let mut buf = original.clone();
    native
        .rewrite("A", &mut buf, 0, RewriteOptions::default())
        .unwrap();
    native.confirm(); // every producer bound and permanent
    g.bench_function("native", |b| {
        b.iter(|| {
            buf.copy_from_slice(&original);
            let out = native.rewrite("A", &mut buf, 1, RewriteOptions::default());
            black_box(out.unwrap().consumed)
        })
    });

    let mut module = BrokerModule::load(&default_module_path()).unwrap();
    let h = module.mapper_new(CONFIG).unwrap();
    let mut buf = original.clone();
    module.rewrite(h, "A", &mut buf, 0, 0).unwrap();
    module.confirm(h).unwrap();
    // Guest-side buffers allocated once, as a broker would keep them.
    let src = module.put(b"A").unwrap();
    let input = module.put(&original).unwrap();
    g.bench_function("wasm (wasmtime, mp_rewrite)", |b| {
        b.iter(|| {
            module.write(input.0, &original).unwrap();
            black_box(module.rewrite_in_place(h, src, input, 1, 0).unwrap())
        })
    });
    g.finish();
}

/// Hash flooding in the module: 100,000 identities chosen against the
/// hashes beside 100,000 random ones (`benches/common/adversary.rs`), each
/// fetch copied into guest memory and rewritten with `mp_rewrite`.
fn bench_adversary(c: &mut Criterion) {
    let mut module = BrokerModule::load(&default_module_path()).unwrap();
    let mut g = c.benchmark_group("100k identities in wasmtime");
    g.throughput(Throughput::Elements(100_000))
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    let sets = Identities::adversarial()
        .into_iter()
        .map(|(what, ids)| (format!("adversarial {what}"), ids))
        .chain(
            Identities::random()
                .into_iter()
                .map(|(what, ids)| (format!("random {what}"), ids)),
        );
    for (name, ids) in sets {
        let fetches = ids.fetches();
        let rewrite_all = |m: &mut BrokerModule, h: i32| {
            for (source, buf) in &fetches {
                let mut buf = buf.clone();
                black_box(m.rewrite(h, source, &mut buf, 1, 0).unwrap());
            }
            m.confirm(h).unwrap();
        };
        g.bench_function(format!("map new (mp_rewrite), {name}"), |b| {
            b.iter(|| {
                let h = module.mapper_new(CONFIG).unwrap();
                rewrite_all(&mut module, h);
                module.mapper_free(h).unwrap();
            })
        });
        let h = module.mapper_new(CONFIG).unwrap();
        rewrite_all(&mut module, h);
        let snapshot = module.snapshot(h).unwrap();
        g.bench_function(format!("restore, {name}"), |b| {
            b.iter(|| {
                let r = module.restore(black_box(&snapshot)).unwrap();
                module.mapper_free(r).unwrap();
            })
        });
        g.bench_function(format!("rewrite bound, {name}"), |b| {
            b.iter(|| rewrite_all(&mut module, h))
        });
        module.mapper_free(h).unwrap();
    }
    g.finish();
}

criterion_group!(benches, bench, bench_adversary);
criterion_main!(benches);
