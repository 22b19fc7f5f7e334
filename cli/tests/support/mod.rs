//! What the command-line tests share: the binary, temporary folders that
//! remove themselves, records to encode and JSON lines to read.

#![allow(dead_code)] // each test file uses its own part

use std::ops::Deref;
use std::path::Path;

use assert_cmd::Command;
use bytes::Bytes;
use kafka_protocol::records::{Record, TimestampType};
use serde_json::Value;

pub const TOPIC: &str = "bxw7Kp1OS3-KHC0-T1prfA";

pub fn mirrorpid() -> Command {
    Command::cargo_bin("mirrorpid").unwrap()
}

/// A temporary folder, removed when dropped.
pub struct Dir(tempfile::TempDir);

impl Deref for Dir {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

pub fn dir(name: &str) -> Dir {
    Dir(tempfile::Builder::new()
        .prefix(&format!("mirrorpid-cli-{name}-"))
        .tempdir()
        .unwrap())
}

pub fn record(offset: i64, pid: i64, key: Option<Vec<u8>>, value: Option<Vec<u8>>) -> Record {
    Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: 0,
        producer_id: pid,
        producer_epoch: if pid < 0 { -1 } else { 0 },
        timestamp_type: TimestampType::Creation,
        offset,
        sequence: if pid < 0 { -1 } else { offset as i32 },
        timestamp: 1_764_403_200_000 + offset,
        key: key.map(Bytes::from),
        value: value.map(Bytes::from),
        headers: Default::default(),
    }
}

pub fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8(out.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
