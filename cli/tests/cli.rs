//! The command line, run as a process: segment files built by the
//! `kafka-protocol` crate's encoder (compressed and not, with a corrupt batch
//! in the middle and a truncated tail), checked against the library and
//! decoded back by `kafka-protocol`.

use std::collections::BTreeSet;
use std::path::Path;

use mirrorpid_test_support::kp;
mod support;

use bytes::Bytes;
use kafka_protocol::records::{Compression, Record, RecordBatchDecoder};
use kp::kp_encode;
use mirrorpid::{map_pid, Mapper, MapperConfig, StateRecord};
use serde_json::Value;
use support::{dir, json_lines, mirrorpid, record, TOPIC};

/// `__mirror_state` records of a real mapper: bindings, a collision, and
/// tombstones after expiry, in log order.
fn state_records() -> Vec<StateRecord> {
    let mut m = Mapper::new(MapperConfig::new(TOPIC.parse().unwrap(), 3)).unwrap();
    let mut out = Vec::new();
    for pid in 0..4 {
        for source in ["cluster-2123", "cluster-2336", "A"] {
            out.extend(m.map(source, pid, 1_000).unwrap().record.map(|r| *r));
        }
    }
    m.confirm();
    out.extend(m.map("A", 9, 5_000_000_000).unwrap().record.map(|r| *r));
    m.confirm();
    out.extend(m.expire(100_000_000).unwrap()); // everything but A/9
                                                // Another partition's record, which a leader of partition 3 skips.
    let mut other = Mapper::new(MapperConfig::new(TOPIC.parse().unwrap(), 4)).unwrap();
    out.extend(other.map("B", 1, 7).unwrap().record.map(|r| *r));
    out
}

/// The batches of a segment: (start, size, records in it), read with
/// mirrorpid's walker and counted by kafka-protocol (whose encoder decides
/// how records split into batches).
fn batches_of(bytes: &[u8]) -> Vec<(usize, usize, usize)> {
    mirrorpid::batch::Batches::complete(bytes)
        .map(|e| match e.unwrap() {
            mirrorpid::batch::Entry::Batch { offset, batch } => {
                let n = RecordBatchDecoder::decode(&mut Bytes::copy_from_slice(batch.bytes()))
                    .unwrap()
                    .records
                    .len();
                (offset, batch.bytes().len(), n)
            }
            mirrorpid::batch::Entry::Legacy { .. } => unreachable!(),
        })
        .collect()
}

/// A segment of `records`, three per encoder call, each with the next
/// compression; returns the bytes and where each call's output starts.
fn segment(records: &[StateRecord]) -> (Vec<u8>, Vec<usize>) {
    let compressions = [
        Compression::None,
        Compression::Gzip,
        Compression::Zstd,
        Compression::Lz4,
        Compression::Snappy,
    ];
    let mut bytes = Vec::new();
    let mut starts = Vec::new();
    for (i, chunk) in records.chunks(3).enumerate() {
        let kp: Vec<Record> = chunk
            .iter()
            .enumerate()
            .map(|(j, r)| {
                let (k, v) = r.encode().unwrap();
                record((i * 3 + j) as i64, -1, Some(k), v)
            })
            .collect();
        starts.push(bytes.len());
        bytes.extend(kp_encode(&kp, compressions[i % compressions.len()]));
    }
    (bytes, starts)
}

#[test]
fn state_dump_reads_every_compression_and_reports_bad_batches_by_offset() {
    let records = state_records();
    let (mut bytes, _) = segment(&records);
    let batches = batches_of(&bytes);
    assert!(batches.len() >= 5);
    // Damage a record byte of the third batch (its CRC no longer matches),
    // and cut the last batch short.
    let (bad, bad_size, bad_records) = batches[2];
    bytes[bad + bad_size - 3] ^= 0x55;
    let (last, _, last_records) = *batches.last().unwrap();
    bytes.truncate(bytes.len() - 5);
    let d = dir("dump");
    let file = d.join("00000000000000000000.log");
    std::fs::write(&file, &bytes).unwrap();

    let out = mirrorpid()
        .args(["state", "dump", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "problems make the exit non-zero"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!(
            "{}: batch at byte {bad} ({bad_size} bytes) cannot be decoded",
            file.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{}: BatchOverrun: batch at byte {last} needs {} bytes, only {} remain; the rest of the file is not read",
            file.display(),
            batches.last().unwrap().1,
            batches.last().unwrap().1 - 5
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), records.len() - bad_records - last_records);
    // The records read are exactly those of the good batches, in order.
    let skipped = batches[..2].iter().map(|b| b.2).sum::<usize>();
    let expected: Vec<Value> = records[..skipped]
        .iter()
        .chain(&records[skipped + bad_records..records.len() - last_records])
        .map(StateRecord::to_json)
        .collect();
    assert_eq!(lines.len(), expected.len());
    for (got, want) in lines.iter().zip(&expected) {
        assert_eq!(got["key"], want["key"]);
        assert_eq!(got["value"], want["value"]);
    }
    // The table form shows the same records.
    let table = mirrorpid()
        .args(["state", "dump"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(table.stdout).unwrap().lines().count(),
        lines.len() + 1
    );
}

#[test]
fn state_dump_compact_equals_a_mapper_restored_from_the_records() {
    let records = state_records();
    let (bytes, _) = segment(&records);
    let d = dir("compact");
    // Two segment files, read in order.
    let half = segment(&records[..9]).0.len();
    std::fs::write(d.join("0.log"), &bytes[..half]).unwrap();
    std::fs::write(d.join("9.log"), &bytes[half..]).unwrap();
    let out = mirrorpid()
        .args(["state", "dump", "--compact", "--json"])
        .arg(d.join("0.log"))
        .arg(d.join("9.log"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let partitions = json_lines(&out.stdout);
    assert_eq!(partitions.len(), 2, "partitions 3 and 4");
    for p in &partitions {
        let partition = p["partition"].as_i64().unwrap() as i32;
        let mut replayed =
            Mapper::new(MapperConfig::new(TOPIC.parse().unwrap(), partition)).unwrap();
        for r in &records {
            replayed.load_record(r).unwrap();
        }
        let want: BTreeSet<(String, i64, u8)> = replayed
            .bindings()
            .map(|b| (b.source_cluster_id.to_owned(), b.pid, b.salt))
            .collect();
        let got: BTreeSet<(String, i64, u8)> = p["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let k = &r["key"];
                (
                    k["sourceClusterId"].as_str().unwrap().to_owned(),
                    k["originalPid"].as_str().unwrap().parse().unwrap(),
                    r["value"]["salt"].as_u64().unwrap() as u8,
                )
            })
            .collect();
        assert_eq!(got, want, "partition {partition}");
        assert!(!want.is_empty());
    }
}

#[test]
fn rewrite_a_segment_offline() {
    let d = dir("rewrite");
    let mut input = Vec::new();
    let compressions = [Compression::None, Compression::Gzip, Compression::Zstd];
    let mut offset = 0;
    for (i, pid) in [5i64, 6, 5, -1, 7].into_iter().enumerate() {
        let batch: Vec<Record> = (0..4)
            .map(|_| {
                offset += 1;
                record(
                    offset,
                    pid,
                    Some(b"k".to_vec()),
                    Some(format!("value {offset}").into_bytes()),
                )
            })
            .collect();
        input.extend(kp_encode(&batch, compressions[i % 3]));
    }
    std::fs::write(d.join("in.log"), &input).unwrap();
    let out = mirrorpid()
        .args([
            "rewrite",
            "--source",
            "cluster-2336",
            "--topic-id",
            TOPIC,
            "--partition",
            "0",
        ])
        .arg(d.join("in.log"))
        .arg(d.join("out.log"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = String::from_utf8(out.stdout).unwrap();
    let batches = batches_of(&input).len();
    assert!(
        summary.contains(&format!("{batches} batch(es)"))
            && summary.contains("3 __mirror_state record(s)"),
        "{summary}"
    );
    // kafka-protocol decodes the output (checking every CRC) and sees the mapped PIDs.
    let rewritten = std::fs::read(d.join("out.log")).unwrap();
    assert_eq!(rewritten.len(), input.len());
    let sets = RecordBatchDecoder::decode_all(&mut Bytes::from(rewritten)).expect("valid CRCs");
    let before = RecordBatchDecoder::decode_all(&mut Bytes::from(input)).unwrap();
    for (a, b) in before
        .iter()
        .flat_map(|s| &s.records)
        .zip(sets.iter().flat_map(|s| &s.records))
    {
        let want = if a.producer_id < 0 {
            a.producer_id
        } else {
            map_pid("cluster-2336", a.producer_id, 0).unwrap()
        };
        assert_eq!(b.producer_id, want);
        assert_eq!((&a.key, &a.value, a.offset), (&b.key, &b.value, b.offset));
    }
    // The records it wrote are a segment `state dump` reads.
    let dump = mirrorpid()
        .args(["state", "dump", "--json"])
        .arg(d.join("out.log.mirror_state.log"))
        .output()
        .unwrap();
    assert!(dump.status.success());
    let lines = json_lines(&dump.stdout);
    let pids: Vec<&str> = lines
        .iter()
        .map(|l| l["key"]["originalPid"].as_str().unwrap())
        .collect();
    assert_eq!(pids, ["5", "6", "7"]);
}

#[test]
fn snapshot_inspect_shows_config_and_bindings() {
    let mut m = Mapper::new(MapperConfig::new(TOPIC.parse().unwrap(), 2)).unwrap();
    for pid in 0..3 {
        m.map("cluster-2123", pid, 10).unwrap();
        m.map("cluster-2336", pid, 10).unwrap();
    }
    m.confirm();
    let d = dir("snapshot");
    std::fs::write(d.join("snap"), m.snapshot()).unwrap();
    let out = mirrorpid()
        .args(["snapshot", "inspect", "--json"])
        .arg(d.join("snap"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc = &json_lines(&out.stdout)[0];
    assert_eq!(doc["fVersion"], 1);
    assert_eq!(doc["config"]["partition"], 2);
    assert_eq!(doc["config"]["maxBindings"], 1_000_000);
    assert_eq!(doc["bindings"], 6);
    assert_eq!(doc["salted"], 3);
    let table = mirrorpid()
        .args(["snapshot", "inspect"])
        .arg(d.join("snap"))
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("6 binding(s), 3 salted")
            && text.contains("cluster-2336")
            && text.contains("limits: 1000000 bindings, 10000 source clusters"),
        "{text}"
    );
}

#[test]
fn pid_and_clusters_commands() {
    let out = mirrorpid()
        .args(["pid", "map", "--source", "A", "--pid", "5", "--json"])
        .output()
        .unwrap();
    assert_eq!(json_lines(&out.stdout)[0]["mapped"], "8373639764095533061");
    let d = dir("clusters");
    std::fs::write(
        d.join("fleet"),
        "# our clusters\nA\ncluster-2123\ncluster-2336\n\neast\n",
    )
    .unwrap();
    let m = map_pid("cluster-2336", 4, 1).unwrap();
    let out = mirrorpid()
        .args([
            "pid",
            "decode",
            "--json",
            "-1",
            &m.to_string(),
            "--clusters",
        ])
        .arg(d.join("fleet"))
        .output()
        .unwrap();
    let docs = json_lines(&out.stdout);
    assert_eq!(docs[0]["space"], "noProducer");
    assert_eq!(docs[1]["pid40"], "4");
    assert!(docs[1]["origins"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o["cluster"] == "cluster-2336" && o["salt"] == 1));
    let out = mirrorpid()
        .args(["clusters", "check", "--json"])
        .arg(d.join("fleet"))
        .output()
        .unwrap();
    let doc = &json_lines(&out.stdout)[0];
    let shared = doc["sharedRegions"].as_array().unwrap();
    assert_eq!(shared.len(), 1, "the vectors' pair, and only it");
    assert_eq!(
        shared[0]["clusters"],
        serde_json::json!(["cluster-2123", "cluster-2336"])
    );
    assert!(
        (doc["sharedRegionProbability"].as_f64().unwrap()
            - mirrorpid::pid::shared_region_probability(4))
        .abs()
            < 1e-15
    );
}

#[test]
fn simulate_exits_1_only_when_mirrorpid_corrupts() {
    let presets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../www/presets");
    let ok = mirrorpid()
        .arg("simulate")
        .arg(presets.join("seed-chain.json"))
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    assert!(String::from_utf8(ok.stdout)
        .unwrap()
        .contains("mirrorpid: no corruption"));
    // The documented residual risk: two origins sharing a region whose
    // producers with equal pid40 meet by two paths.
    let d = dir("simulate");
    let scenario = r#"{"clusters":[{"id":"cluster-2123"},{"id":"cluster-2336"},{"id":"B"},{"id":"D"}],
        "links":[{"from":"cluster-2123","to":"B"},{"from":"B","to":"D"},{"from":"cluster-2336","to":"D"}],
        "producers":[{"id":"x","cluster":"cluster-2123","pid":"5"},{"id":"y","cluster":"cluster-2336","pid":"5"}],
        "events":[{"type":"produce","producer":"x","count":2},{"type":"produce","producer":"y","count":1}]}"#;
    std::fs::write(d.join("risk.json"), scenario).unwrap();
    let bad = mirrorpid()
        .arg("simulate")
        .arg(d.join("risk.json"))
        .output()
        .unwrap();
    assert_eq!(
        bad.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&bad.stdout)
    );
}

#[test]
fn every_subcommand_documents_its_arguments() {
    let cases: [(&[&str], &[&str]); 8] = [
        (&["pid", "decode"], &["<PID>", "--clusters", "--json"]),
        (&["pid", "map"], &["--source", "--pid", "--salt"]),
        (&["clusters", "check"], &["<FILE>", "--json"]),
        (
            &["state", "dump"],
            &["<SEGMENT.log>", "--compact", "--json"],
        ),
        (&["snapshot", "inspect"], &["<FILE>", "--json"]),
        (
            &["snapshot", "make"],
            &[
                "<SEGMENT.log>",
                "--output",
                "--topic-id",
                "--partition",
                "--json",
            ],
        ),
        (
            &["rewrite"],
            &[
                "--source",
                "--topic-id",
                "--partition",
                "<IN.log>",
                "<OUT.log>",
                "--records",
                "--allow-bad-crc",
                "--json",
            ],
        ),
        (&["simulate"], &["<SCENARIO.json>", "--json"]),
    ];
    for (cmd, words) in cases {
        let out = mirrorpid().args(cmd).arg("--help").output().unwrap();
        assert!(out.status.success());
        let help = String::from_utf8(out.stdout).unwrap();
        for w in words {
            assert!(help.contains(w), "{cmd:?} --help lacks {w}:\n{help}");
        }
    }
}

#[test]
fn errors_are_one_line_never_a_panic() {
    let d = dir("errors");
    std::fs::write(d.join("bad.json"), "{ not json").unwrap();
    std::fs::write(d.join("in.log"), b"").unwrap();
    let missing = d.join("missing.log");
    let cases: Vec<Vec<String>> = vec![
        vec!["state".into(), "dump".into(), missing.display().to_string()],
        vec![
            "snapshot".into(),
            "inspect".into(),
            missing.display().to_string(),
        ],
        vec!["pid".into(), "decode".into(), "12abc".into()],
        vec![
            "pid".into(),
            "map".into(),
            "--source".into(),
            "A".into(),
            "--pid".into(),
            "1099511627776".into(),
        ],
        vec!["simulate".into(), d.join("bad.json").display().to_string()],
        vec![
            "rewrite".into(),
            "--source".into(),
            "A".into(),
            "--topic-id".into(),
            "b6efb1+e-0000-0000-0000-000000000000".into(),
            "--partition".into(),
            "0".into(),
            d.join("in.log").display().to_string(),
            d.join("out.log").display().to_string(),
        ],
        vec![
            "snapshot".into(),
            "inspect".into(),
            d.join("bad.json").display().to_string(),
        ],
    ];
    for args in cases {
        let out = mirrorpid().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("mirrorpid: error: "),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"));
    }
}
