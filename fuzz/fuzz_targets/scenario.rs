//! The simulator on arbitrary scenario JSON: an error or a report, never a
//! panic; a report whose totals are the sum of its partitions, which the
//! same JSON gives again (the playground, the CLI and the real-Kafka
//! judge's fixture rely on a run being a function of its scenario), and
//! which serialises to the JSON the page reads.
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
    let again = simulate_json(text).expect("the same scenario ran once");
    assert_eq!(report, again, "a second run of the same scenario differs");
    serde_json::to_string(&report).expect("a report serialises to JSON");
});
