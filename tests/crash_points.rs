//! The persistence protocol under every fault a host can meet, natively:
//! see `tests/common/crash.rs` for the model. The same runs go through the
//! broker module in `host/tests/crash_points.rs`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::crash::{self, Fault, Host, Leader, Raw, Step};
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

/// The example: source B sends its own PID 9 and the mirrored PID
/// F(B, 9, 0) in one fetch, so the second lands at salt 1; the records are
/// lost and the fetch retried; a new leader replays only, and meets the
/// identities in the other order. Before the protocol, the retry returned
/// no records and the new leader gave PID 9 the salt-0 slot of the
/// mirrored one's: one mapped PID, two producers in the log.
#[test]
fn lost_records_then_retry_then_failover_in_the_other_order() {
    let b9 = mirrorpid::map_pid("B", 9, 0).unwrap();
    let mut host = Host::new(fresh(), "issue example".into());
    host.fetch_with(4, &[9, b9], Some(Fault::RecordsLostRetry));
    host.step(&Step::Elect { snapshot: false }, None);
    host.fetch_with(4, &[b9, 9], None);
    host.finish();
}

#[test]
fn no_fault_at_any_step_changes_a_mapping() {
    let runs = crash::run_all(24, 28, fresh);
    println!("{runs} runs");
    assert!(runs > 24 * 28, "faults were injected ({runs} runs)");
}
