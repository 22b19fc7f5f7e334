//! Prints the broker module's instruction counts on the batch path
//! (`mirrorpid_host::instructions`) at several batch sizes: with `--json`,
//! as the data `docs/PERFORMANCE.md`'s instruction table is written from
//! (`docs/perf/instructions.json`, which `host/tests/instructions.rs`
//! holds to the module); else as a table.
//!
//! cargo run --release -p mirrorpid-host --example instructions -- [--json] [module.wasm]

use mirrorpid_host::{default_module_path, instructions};

/// The batch sizes counted.
const SIZES: [usize; 4] = [256, 1024, 16 << 10, 1 << 20];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let path = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(Into::into)
        .unwrap_or_else(default_module_path);
    if json {
        println!("{}", instructions::table_json(&path, &SIZES)?);
        return Ok(());
    }
    println!("batch bytes\tidle call\tempty rewrite\tone batch\tfurther batch\tfurther in a run\t(sizes varying)\t(in a run)\tmp_rewrite one batch");
    for size in SIZES {
        let c = instructions::count(&path, size)?;
        println!(
            "{size}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            c.idle_call,
            c.empty_rewrite,
            c.one_batch,
            c.further_batch,
            c.further_batch_in_run,
            c.further_batch_sizes_vary,
            c.further_batch_in_run_sizes_vary,
            c.one_batch_in_memory
        );
    }
    Ok(())
}
