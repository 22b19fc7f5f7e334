//! Writes the fuzz targets' seed corpora (`fuzz/corpus/<target>/`), from the
//! reference vectors, the presets and batches built here. Run after a
//! format change: `cargo test --features sim --test fuzz_seeds -- --ignored`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::fs;
use std::path::PathBuf;

use mirrorpid::batch::{BatchBuilder, ControlType, RecordSpec};
use mirrorpid::{Mapper, MapperConfig};

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(name), bytes).unwrap();
}

fn batch(pid: i64, transactional: bool, control: Option<ControlType>) -> Vec<u8> {
    BatchBuilder {
        producer_id: pid,
        producer_epoch: 0,
        base_sequence: 0,
        transactional,
        control,
        records: vec![RecordSpec {
            key: Some(b"k".to_vec()),
            value: Some(b"value".to_vec()),
        }],
        ..BatchBuilder::default()
    }
    .encode()
}

#[test]
#[ignore = "writes files; run by hand"]
fn write_seed_corpora() {
    // rewrite: a flags byte, then batches.
    let fetch = [
        batch(1, false, None),
        batch(2, true, None),
        batch(2, true, Some(ControlType::Commit)),
        batch(-1, false, None),
        batch(mirrorpid::map_pid("C", 7, 0).unwrap(), false, None),
    ]
    .concat();
    write("rewrite", "fetch", &[[0u8].as_slice(), &fetch].concat());
    write(
        "rewrite",
        "strict-complete",
        &[[3u8].as_slice(), &fetch].concat(),
    );
    write(
        "rewrite",
        "truncated",
        &[[4u8].as_slice(), &fetch[..fetch.len() - 9]].concat(),
    );
    // records: a 2-byte split, the key, then the value (0xff first = null).
    let (b64, hex, records) = common::records();
    for (i, r) in records.iter().enumerate() {
        let split = (r.key.len() as u16).to_be_bytes();
        let value = r.value.clone().unwrap_or_else(|| vec![0xff]);
        write(
            "records",
            &format!("vector-{i}"),
            &[&split[..], &r.key, &value].concat(),
        );
    }
    // snapshot: mode 0 and a real snapshot.
    let mut m = Mapper::new(MapperConfig::new(b64.parse().unwrap(), 0)).unwrap();
    for pid in 0..3 {
        m.map("cluster-2123", pid, 5).unwrap();
        m.map("cluster-2336", pid, 5).unwrap();
    }
    m.confirm();
    write(
        "snapshot",
        "snapshot",
        &[[0u8].as_slice(), &m.snapshot()].concat(),
    );
    // topic_id: both forms.
    write("topic_id", "base64", b64.as_bytes());
    write("topic_id", "hex", hex.as_bytes());
    // abi_calls: arbitrary-encoded call lists; any bytes decode to some
    // calls, and these start the fuzzer off with a few.
    write("abi_calls", "zeros", &[0u8; 64]);
    write("abi_calls", "counting", &(0u8..=255).collect::<Vec<u8>>());
    // scenario: every preset, and the real-Kafka judge's twins (transaction
    // version 2, restarts), which no preset has.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for (dir, prefix) in [("www/presets", ""), ("tests/fixtures/judge", "judge-")] {
        for entry in fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            if name != "index" {
                write(
                    "scenario",
                    &format!("{prefix}{name}"),
                    &fs::read(&path).unwrap(),
                );
            }
        }
    }
}
