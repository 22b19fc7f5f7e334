//! Prints the broker module's instruction counts on the batch path
//! (`mirrorpid_host::instructions`) at several batch sizes: what
//! `docs/PERFORMANCE.md`'s instruction table holds and
//! `host/tests/instructions.rs` holds to its budget.
//!
//! cargo run --release -p mirrorpid-host --example instructions -- [module.wasm]

use mirrorpid_host::{default_module_path, instructions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .map(Into::into)
        .unwrap_or_else(default_module_path);
    println!("batch bytes\tidle call\tempty rewrite\tone batch\tfurther batch\tfurther in a run\t(sizes varying)\t(in a run)\tmp_rewrite one batch");
    for size in [256, 1024, 16 << 10, 1 << 20] {
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
