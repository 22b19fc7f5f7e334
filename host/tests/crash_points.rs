//! The persistence protocol under every fault a host can meet, through the
//! broker module in wasmtime: the runs of `tests/crash_points.rs`, with
//! `mp_rewrite`, `mp_confirm`, `mp_abort`, `mp_snapshot`, `mp_restore`,
//! `mp_load_record` and `mp_expire` as the leader, rewriting each fetch
//! whole (`mp_rewrite`) or through its headers (`mp_rewrite_headers`).

use mirrorpid_test_support::crash;

use std::cell::RefCell;
use std::rc::Rc;

use crash::{Leader, Raw};
use mirrorpid_host::{default_module_path, BrokerModule, RawRecord};

/// One mapper of a module instance shared by every run.
struct Module {
    module: Rc<RefCell<BrokerModule>>,
    handle: i32,
    /// Rewrite through `mp_rewrite_headers`.
    headers: bool,
}

impl Module {
    fn new(module: &Rc<RefCell<BrokerModule>>, headers: bool) -> Module {
        let handle = module.borrow_mut().mapper_new(crash::CONFIG).unwrap();
        Module {
            module: module.clone(),
            handle,
            headers,
        }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let _ = self.module.borrow_mut().mapper_free(self.handle);
    }
}

fn raw(records: Vec<RawRecord>) -> Vec<Raw> {
    records.into_iter().map(|r| (r.key, r.value)).collect()
}

impl Leader for Module {
    fn rewrite(&mut self, source: &str, buf: &mut [u8], now: i64) -> Result<Vec<Raw>, String> {
        let mut m = self.module.borrow_mut();
        let out = if self.headers {
            m.rewrite_headers(self.handle, source, buf, usize::MAX, now, 0)
        } else {
            m.rewrite(self.handle, source, buf, now, 0)
        };
        let out = out.map_err(|e| e.to_string())?;
        Ok(raw(out.records))
    }
    fn confirm(&mut self) -> usize {
        self.module.borrow_mut().confirm(self.handle).unwrap()
    }
    fn abort(&mut self) -> usize {
        self.module.borrow_mut().abort(self.handle).unwrap()
    }
    fn snapshot(&mut self) -> Vec<u8> {
        self.module.borrow_mut().snapshot(self.handle).unwrap()
    }
    fn expire(&mut self, now: i64) -> Vec<Raw> {
        raw(self.module.borrow_mut().expire(self.handle, now).unwrap())
    }
    fn elect(&mut self, snapshot: Option<&[u8]>, records: &[Raw]) {
        let mut m = self.module.borrow_mut();
        m.mapper_free(self.handle).unwrap();
        self.handle = match snapshot {
            Some(bytes) => m.restore(bytes).unwrap(),
            None => m.mapper_new(crash::CONFIG).unwrap(),
        };
        for (k, v) in records {
            m.load_record(self.handle, k, v.as_deref()).unwrap();
        }
    }
}

fn module() -> Rc<RefCell<BrokerModule>> {
    Rc::new(RefCell::new(
        BrokerModule::load(&default_module_path()).expect("run scripts/build.sh first"),
    ))
}

/// The example (see `crash::lost_records_retry_failover`).
#[test]
fn lost_records_then_retry_then_failover_in_the_other_order() {
    let module = module();
    crash::lost_records_retry_failover(Module::new(&module, false));
    crash::lost_records_retry_failover(Module::new(&module, true));
}

#[test]
fn no_fault_at_any_step_changes_a_mapping() {
    no_fault_changes_a_mapping(false);
}

#[test]
fn no_fault_at_any_step_changes_a_mapping_through_headers() {
    no_fault_changes_a_mapping(true);
}

fn no_fault_changes_a_mapping(headers: bool) {
    let module = module();
    let runs = crash::run_all(24, 28, || Module::new(&module, headers));
    assert!(runs > 24 * 28, "faults were injected ({runs} runs)");
    // Every mapper was freed: the instance holds none.
    assert_eq!(
        module.borrow_mut().mapper_len(1).unwrap_err().code,
        100,
        "handle 1 was freed"
    );
}
