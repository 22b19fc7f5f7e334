//! What the host tests of a partition leader share: the mapper's
//! configuration, the native twin every module output is compared with,
//! the module loaded with no imports, and fetches with records.

use mirrorpid::batch::{BatchBuilder, RecordSpec};
use mirrorpid::{Mapper, MapperConfig};
use mirrorpid_host::{default_module_path, BrokerModule};

pub const TOPIC: &str = "bxw7Kp1OS3-KHC0-T1prfA";
pub const EXPIRATION_MS: i64 = 60_000;

pub fn config(partition: i32) -> String {
    format!(
        r#"{{"topicId":"{TOPIC}","partition":{partition},"producerExpirationMs":{EXPIRATION_MS}}}"#
    )
}

pub fn native(partition: i32) -> Mapper {
    Mapper::new(MapperConfig::from_json(&config(partition)).unwrap()).unwrap()
}

pub fn load() -> BrokerModule {
    BrokerModule::load(&default_module_path()).expect("broker module loads with no imports")
}

/// One batch a PID from `base` on, each with one record of its own size
/// (transactional where asked and the PID is a producer's).
pub fn fetch(pids: &[i64], base: i64, transactional: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &pid) in pids.iter().enumerate() {
        out.extend(
            BatchBuilder {
                base_offset: base + i as i64,
                producer_id: pid,
                producer_epoch: 1,
                base_sequence: (base as i32) * 3,
                transactional: transactional && pid >= 0,
                records: vec![RecordSpec {
                    key: Some(format!("k{pid}").into_bytes()),
                    value: Some(vec![i as u8; 40 + i * 7]),
                }],
                ..BatchBuilder::default()
            }
            .encode(),
        );
    }
    out
}
