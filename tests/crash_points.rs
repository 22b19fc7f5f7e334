//! The persistence protocol under every fault a host can meet, natively:
//! see `tests/common/crash.rs` for the model. The same runs go through the
//! broker module in `host/tests/crash_points.rs`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::crash::{self, Leader, Raw};
use mirrorpid::{Mapper, MapperConfig, RewriteOptions, StateRecord};

struct Native(Mapper);

fn fresh() -> Native {
    Native(Mapper::new(MapperConfig::from_json(crash::CONFIG).unwrap()).unwrap())
}

fn raw(records: Vec<StateRecord>) -> Vec<Raw> {
    records.iter().map(|r| r.encode().unwrap()).collect()
}

impl Leader for Native {
    fn rewrite(&mut self, source: &str, buf: &mut [u8], now: i64) -> Result<Vec<Raw>, String> {
        let out = self
            .0
            .rewrite(source, buf, now, RewriteOptions::default())
            .map_err(|e| e.to_string())?;
        Ok(raw(out.records))
    }
    fn confirm(&mut self) -> usize {
        self.0.confirm()
    }
    fn abort(&mut self) -> usize {
        self.0.abort()
    }
    fn snapshot(&mut self) -> Vec<u8> {
        self.0.snapshot()
    }
    fn expire(&mut self, now: i64) -> Vec<Raw> {
        raw(self.0.expire(now).unwrap())
    }
    fn elect(&mut self, snapshot: Option<&[u8]>, records: &[Raw]) {
        *self = match snapshot {
            Some(bytes) => Native(Mapper::restore(bytes).unwrap()),
            None => fresh(),
        };
        for (k, v) in records {
            let r = StateRecord::decode(k, v.as_deref()).unwrap();
            self.0.load_record(&r).unwrap();
        }
    }
}

/// The example (see `crash::lost_records_retry_failover`).
#[test]
fn lost_records_then_retry_then_failover_in_the_other_order() {
    crash::lost_records_retry_failover(fresh());
}

#[test]
fn no_fault_at_any_step_changes_a_mapping() {
    let runs = crash::run_all(24, 28, fresh);
    println!("{runs} runs");
    assert!(runs > 24 * 28, "faults were injected ({runs} runs)");
}
