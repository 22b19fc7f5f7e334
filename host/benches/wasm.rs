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
use mirrorpid::{Mapper, MapperConfig, RewriteOptions};
use mirrorpid_host::{default_module_path, BrokerModule};

use adversary::Identities;
use batches::{fetch as fetch_of, single, SIZES};
use mirrorpid_test_support::adversary;
use mirrorpid_test_support::bench as batches;

const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;
const BATCHES: usize = 1000;

fn bench(c: &mut Criterion) {
    let original = fetch_of(BATCHES);
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
    for (name, ids) in Identities::sets() {
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

/// The bench-only module with the naive peer (`scripts/bench.sh` builds
/// it), or `$MIRRORPID_PEER_WASM`.
fn peer_module() -> Option<BrokerModule> {
    let path = std::env::var_os("MIRRORPID_PEER_WASM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../dist/bench/mirrorpid_broker_peer.wasm")
        });
    match BrokerModule::load(&path) {
        Ok(m) => Some(m),
        Err(e) => {
            eprintln!("skipping the peer comparison ({e:#}): run scripts/bench.sh");
            None
        }
    }
}

/// mirrorpid beside the naive peer in wasmtime (`mp_rewrite` and
/// `mp_rewrite_naive` of one instance) and natively (`rewrite_into`), in
/// one run: the single batches and fetches of `benches/peer.rs`.
fn bench_peer(c: &mut Criterion) {
    let Some(mut module) = peer_module() else {
        return;
    };
    type Naive = wasmtime::TypedFunc<(i32, i32, i32, i32, i32, i64), i32>;
    let naive: Naive = module.typed_func("mp_rewrite_naive").unwrap();
    let src = module.put(b"A").unwrap();
    let cases: Vec<(&str, String, Vec<u8>, u64)> = SIZES
        .iter()
        .map(|&(name, size)| ("single batch", name.to_owned(), single(size), 1))
        .chain(
            [1u64, 10, 100, 1000]
                .iter()
                .map(|&n| ("fetch", format!("{n} batches"), fetch_of(n as usize), n)),
        )
        .collect();
    for group in ["single batch", "fetch"] {
        let mut g = c.benchmark_group(format!("{group} (wasmtime)"));
        if group == "fetch" {
            // The floor under every call: wasmtime entering the module and
            // returning, for an export that does nothing.
            type Nothing = wasmtime::TypedFunc<(), i32>;
            let nothing: Nothing = module.typed_func("mp_abi_version").unwrap();
            g.bench_function("a call doing nothing (mp_abi_version)", |b| {
                b.iter(|| black_box(module.call_typed(&nothing, ()).unwrap()))
            });
        }
        for (_, name, original, n) in cases.iter().filter(|c| c.0 == group) {
            g.throughput(Throughput::Elements(*n));
            let at = batches::offsets(original);
            let h = module.mapper_new(CONFIG).unwrap();
            module.rewrite(h, "A", &mut original.clone(), 0, 0).unwrap();
            module.confirm(h).unwrap();
            let input = module.put(original).unwrap();
            // The header bytes a rewrite changes, put back from the host
            // side (12 bytes per batch) by the same function as natively.
            let restore = |m: &mut BrokerModule| {
                let block = &mut m.memory_mut()[input.0 as usize..][..original.len()];
                batches::restore_headers(block, original, &at);
            };
            g.bench_function(format!("mirrorpid wasm {name}"), |b| {
                b.iter(|| {
                    restore(&mut module);
                    black_box(module.rewrite_in_place(h, src, input, 1, 0).unwrap())
                })
            });
            g.bench_function(format!("naive wasm {name}"), |b| {
                b.iter(|| {
                    restore(&mut module);
                    let args = (h, src.0, src.1, input.0, input.1, 1i64);
                    black_box(module.call_typed(&naive, args).unwrap())
                })
            });
            let mut native = Mapper::new(MapperConfig::from_json(CONFIG).unwrap()).unwrap();
            native
                .rewrite("A", &mut original.clone(), 0, RewriteOptions::default())
                .unwrap();
            native.confirm();
            let mut buf = original.clone();
            g.bench_function(format!("mirrorpid native {name}"), |b| {
                b.iter(|| {
                    batches::restore_headers(&mut buf, original, &at);
                    native
                        .rewrite("A", &mut buf, 1, RewriteOptions::default())
                        .unwrap()
                        .consumed
                })
            });
            module.free(input.0).unwrap();
            module.mapper_free(h).unwrap();
        }
        g.finish();
    }
}

/// A fetch of `pids.len()` minimal v2 batches (no records, 61 bytes each)
/// carrying `pids`: built directly, as 10 M of them are bound through it.
/// The CRC need not be valid (strict CRC is off).
fn minimal_fetch(pids: impl IntoIterator<Item = i64>) -> Vec<u8> {
    let pids: Vec<i64> = pids.into_iter().collect();
    let mut buf = vec![0u8; 61 * pids.len()];
    for (batch, pid) in buf.chunks_exact_mut(61).zip(pids) {
        batch[8..12].copy_from_slice(&49i32.to_be_bytes()); // batchLength
        batch[16] = 2; // magic
        batch[43..51].copy_from_slice(&pid.to_be_bytes());
    }
    buf
}

/// How cost grows in the module: a 1000-batch rewrite with 1k to 10M bound
/// producers (one source; the 1000 spread over the whole table, as
/// `benches/mapper.rs` does natively), and the linear memory each bound
/// producer took (the memory grown while binding them through
/// `mp_rewrite`, over their number; the module has no `map` export).
fn bench_scale(c: &mut Criterion) {
    let mut g = c.benchmark_group("scale in wasmtime");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(1_000));
    for n in [1_000i64, 100_000, 1_000_000, 10_000_000] {
        let mut module = BrokerModule::load(&default_module_path()).unwrap();
        let config =
            format!(r#"{{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0,"maxBindings":{n}}}"#);
        let h = module.mapper_new(&config).unwrap();
        let src = module.put(b"east-1").unwrap();
        let block = module.put(&minimal_fetch(0..1_000)).unwrap();
        let before = module.memory_size();
        for first in (0..n).step_by(1_000) {
            let fetch = minimal_fetch(first..first + 1_000);
            module.write(block.0, &fetch).unwrap();
            module.rewrite_in_place(h, src, block, 1, 0).unwrap();
            module.confirm(h).unwrap(); // the records are "durable"
        }
        assert_eq!(module.mapper_len(h).unwrap(), n as usize);
        println!(
            "scale in wasmtime: {n} bound producers grew linear memory by {} bytes = {:.1} bytes per producer",
            module.memory_size() - before,
            (module.memory_size() - before) as f64 / n as f64
        );
        let step = n / 1_000;
        let original = minimal_fetch((0..1_000).map(|i| i * step));
        g.bench_function(format!("rewrite 1000 batches, {n} bound"), |b| {
            b.iter(|| {
                module.write(block.0, &original).unwrap();
                black_box(module.rewrite_in_place(h, src, block, 2, 0).unwrap())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench, bench_adversary, bench_peer, bench_scale);
criterion_main!(benches);
