//! Rewrites a 1000-batch fetch (`BATCHES=n`: n batches; 0, an empty buffer,
//! times the fixed cost of a call) of bound producers in the broker module
//! under wasmtime, again and again, for a profiler: with `PERFMAP=1`
//! wasmtime writes `/tmp/perf-<pid>.map`, so `perf` names the module's
//! functions (build the module keeping its name section, as
//! docs/PERFORMANCE.md shows). Prints the time a batch (the fastest and the
//! median of 21 rounds of a million batches): a quick way to compare two builds
//! of the module side by side; the benchmarks are `host/benches/wasm.rs`.
//!
//! cargo run --release -p mirrorpid-host --example profile_fetch -- [module.wasm]
//! PERFMAP=1 perf record -F 5000 target/release/examples/profile_fetch [module.wasm]

use mirrorpid_host::{default_module_path, BrokerModule};
use wasmtime::{Config, Engine, Module, ProfilingStrategy};

#[allow(dead_code)]
use mirrorpid_test_support::bench as batches;

const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;

fn main() -> wasmtime::Result<()> {
    let mut config = Config::new();
    if std::env::var_os("PERFMAP").is_some() {
        config.profiler(ProfilingStrategy::PerfMap);
    }
    let engine = Engine::new(&config)?;
    let path = std::env::args()
        .nth(1)
        .map(Into::into)
        .unwrap_or_else(default_module_path);
    let module = Module::from_file(&engine, &path)?;
    let mut m = BrokerModule::instantiate(&engine, &module)?;
    let n: usize = std::env::var("BATCHES").map_or(Ok(1000), |v| v.parse())?;
    let original = batches::fetch(n);
    let h = m.mapper_new(CONFIG)?;
    // A batch at least, so that even an empty call finds its source known.
    let mut buf = batches::fetch(n.max(1));
    m.rewrite(h, "A", &mut buf, 0, 0)?;
    m.confirm(h)?; // every producer bound and permanent
    let src = m.put(b"A")?;
    // An empty fetch has no block (length 0 needs none).
    let input = if n == 0 { (0, 0) } else { m.put(&original)? };
    let mut rounds = vec![];
    for _ in 0..21 {
        let t = std::time::Instant::now();
        for _ in 0..1_000_000 / n.max(1) {
            if n > 0 {
                m.write(input.0, &original)?;
            }
            std::hint::black_box(m.rewrite_in_place(h, src, input, 1, 0)?);
        }
        rounds.push(t.elapsed().as_nanos() as f64 / 1e6);
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "{}: {:.1} ns a batch (fastest round), {:.1} ns (median)",
        path.display(),
        rounds[0],
        rounds[10]
    );
    Ok(())
}
