//! The simulator on arbitrary scenario JSON: an error or a report, never a
//! panic, and a report whose totals are the sum of its partitions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirrorpid::sim::psm::Corruption;
use mirrorpid::sim::{simulate_json, STRATEGIES};

fuzz_target!(|text: &str| {
    let Ok(report) = simulate_json(text) else {
        return;
    };
    for s in STRATEGIES {
        let mut sum = Corruption::default();
        for p in &report.partitions {
            sum.add(p.corruption.get(s));
        }
        assert_eq!(&sum, report.totals.get(s));
    }
});
