//! What an operator meets first, each point a test that failed before its
//! fix: file offsets in every message, damaged CRCs caught, the wrong kind
//! of segment named once, a snapshot made from `__mirror_state`, checks
//! that gate CI by their exit, inputs refused rather than coerced.
//! Segments are written by the `kafka-protocol` crate's encoder.

use mirrorpid_test_support::kp;
mod support;

use kafka_protocol::records::{Compression, Record};
use kp::kp_encode;
use mirrorpid::{map_pid, Mapper};
use support::{dir, json_lines, mirrorpid, record, Dir, TOPIC};

/// A data segment: five encoder calls of four records (PIDs 5, 6, 5, -1,
/// 7), uncompressed, gzip, lz4, zstd and snappy; and each batch's start
/// (the encoder decides how records split into batches).
fn data_segment() -> (Vec<u8>, Vec<usize>) {
    let compressions = [
        Compression::None,
        Compression::Gzip,
        Compression::Lz4,
        Compression::Zstd,
        Compression::Snappy,
    ];
    let mut bytes = Vec::new();
    let mut offset = 0;
    for (i, pid) in [5i64, 6, 5, -1, 7].into_iter().enumerate() {
        let batch: Vec<Record> = (0..4)
            .map(|_| {
                offset += 1;
                let value = format!("value {offset}").into_bytes();
                record(offset, pid, Some(b"k".to_vec()), Some(value))
            })
            .collect();
        bytes.extend(kp_encode(&batch, compressions[i]));
    }
    let starts = mirrorpid::batch::Batches::complete(&bytes)
        .map(|e| match e.unwrap() {
            mirrorpid::batch::Entry::Batch { offset, .. } => offset,
            mirrorpid::batch::Entry::Legacy { .. } => unreachable!("v2 only"),
        })
        .collect();
    (bytes, starts)
}

fn rewrite_args(d: &Dir, input: &str, output: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "rewrite",
        "--source",
        "east",
        "--topic-id",
        TOPIC,
        "--partition",
        "0",
    ]
    .map(String::from)
    .to_vec();
    args.push(d.join(input).display().to_string());
    args.push(d.join(output).display().to_string());
    args
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// The run failed with exit `code`, and its stderr says `needle`.
fn fails(out: &std::process::Output, code: i32, needle: &str) {
    assert_eq!(out.status.code(), Some(code), "{}", stderr(out));
    assert!(stderr(out).contains(needle), "{}", stderr(out));
}

#[test]
fn rewrite_json_summary_and_file_offsets_in_its_errors() {
    let d = dir("rewrite-json");
    let (bytes, starts) = data_segment();
    std::fs::write(d.join("in.log"), &bytes).unwrap();
    let mut args = rewrite_args(&d, "in.log", "out.log");
    args.push("--json".into());
    let out = mirrorpid().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = &json_lines(&out.stdout)[0];
    assert_eq!(doc["batches"], starts.len());
    assert_eq!(doc["records"], 3, "PIDs 5, 6 and 7 bound once each");
    assert_eq!(doc["bound"], 3);
    assert_eq!(doc["salted"], 0);
    assert_eq!(doc["badCrc"], serde_json::json!([]));
    assert!(doc["recordsFile"]
        .as_str()
        .unwrap()
        .ends_with("out.log.mirror_state.log"));

    // Cut the last batch short: the message names its offset in the file,
    // with the same words `state dump` uses.
    let cut = bytes.len() - 7;
    std::fs::write(d.join("trunc.log"), &bytes[..cut]).unwrap();
    let last = *starts.last().unwrap();
    let (size, left) = (bytes.len() - last, cut - last);
    let want = format!("batch at byte {last} needs {size} bytes, only {left} remain");
    let out = mirrorpid()
        .args(rewrite_args(&d, "trunc.log", "trunc-out.log"))
        .output()
        .unwrap();
    fails(&out, 2, &want);
    assert!(!d.join("trunc-out.log").exists(), "nothing written");
    let dump = mirrorpid()
        .args(["state", "dump"])
        .arg(d.join("trunc.log"))
        .output()
        .unwrap();
    assert!(stderr(&dump).contains(&want), "{}", stderr(&dump));
}

#[test]
fn rewrite_refuses_a_batch_whose_crc_is_already_wrong_unless_told() {
    let d = dir("crc");
    let (mut bytes, starts) = data_segment();
    // A record byte of the third batch, so its stored CRC no longer holds.
    let third = starts[2];
    bytes[starts[3] - 2] ^= 0x01;
    std::fs::write(d.join("in.log"), &bytes).unwrap();
    let out = mirrorpid()
        .args(rewrite_args(&d, "in.log", "out.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("batch at byte {third} stores CRC"))
            && err.contains("--allow-bad-crc"),
        "{err}"
    );
    assert!(!d.join("out.log").exists(), "nothing written");

    let mut args = rewrite_args(&d, "in.log", "out.log");
    args.extend(["--allow-bad-crc".into(), "--json".into()]);
    let out = mirrorpid().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("warning: "), "{}", stderr(&out));
    assert_eq!(
        json_lines(&out.stdout)[0]["badCrc"],
        serde_json::json!([third])
    );
    // The other batches' CRCs are right; the damaged one stays wrong.
    let rewritten = std::fs::read(d.join("out.log")).unwrap();
    for (i, &s) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(rewritten.len());
        let ok = kafka_protocol::records::RecordBatchDecoder::decode(
            &mut bytes::Bytes::copy_from_slice(&rewritten[s..end]),
        )
        .is_ok();
        assert_eq!(ok, s != third, "batch {i}");
    }
}

#[test]
fn rewrite_never_overwrites_its_input() {
    let d = dir("same");
    let (bytes, _) = data_segment();
    std::fs::write(d.join("in.log"), &bytes).unwrap();
    std::fs::hard_link(d.join("in.log"), d.join("link.log")).unwrap();
    for output in ["in.log", "link.log"] {
        let out = mirrorpid()
            .args(rewrite_args(&d, "in.log", output))
            .output()
            .unwrap();
        fails(&out, 2, "is both the input and the output");
        assert_eq!(std::fs::read(d.join("in.log")).unwrap(), bytes);
    }
}

#[test]
fn a_negative_partition_reaches_the_core_and_gets_its_error() {
    let d = dir("partition");
    std::fs::write(d.join("in.log"), data_segment().0).unwrap();
    let mut args = rewrite_args(&d, "in.log", "out.log");
    args[6] = "-1".into();
    let out = mirrorpid().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("mirrorpid: error: InvalidInput: ") && err.contains("partition"),
        "{err}"
    );
}

#[test]
fn state_dump_names_a_data_segment_once() {
    let d = dir("not-state");
    std::fs::write(d.join("orders-0.log"), data_segment().0).unwrap();
    let out = mirrorpid()
        .args(["state", "dump"])
        .arg(d.join("orders-0.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("not a __mirror_state segment: none of its 20 record(s)"),
        "{err}"
    );
}

#[test]
fn snapshot_make_holds_what_a_new_leader_holds() {
    let d = dir("snapshot-make");
    std::fs::write(d.join("in.log"), data_segment().0).unwrap();
    let out = mirrorpid()
        .args(rewrite_args(&d, "in.log", "out.log"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let state = d.join("out.log.mirror_state.log");
    let out = mirrorpid()
        .args(["snapshot", "make", "--json", "-o"])
        .arg(d.join("snap"))
        .arg(&state)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = &json_lines(&out.stdout)[0];
    assert_eq!(
        (doc["partition"].as_i64(), doc["bindings"].as_u64()),
        (Some(0), Some(3))
    );
    // The snapshot restores into the mapping the rewrite made.
    let m = Mapper::restore(&std::fs::read(d.join("snap")).unwrap()).unwrap();
    let mut got: Vec<(i64, i64)> = m.bindings().map(|b| (b.pid, b.mapped)).collect();
    got.sort();
    let want: Vec<(i64, i64)> = [5, 6, 7]
        .map(|p| (p, map_pid("east", p, 0).unwrap()))
        .to_vec();
    assert_eq!(got, want);
    let inspect = mirrorpid()
        .args(["snapshot", "inspect"])
        .arg(d.join("snap"))
        .output()
        .unwrap();
    assert!(String::from_utf8(inspect.stdout)
        .unwrap()
        .contains("3 binding(s), 0 salted"));
    // A data segment is not replayed into an empty snapshot.
    let out = mirrorpid()
        .args(["snapshot", "make", "-o"])
        .arg(d.join("bad-snap"))
        .arg(d.join("in.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.join("bad-snap").exists());
}

#[test]
fn clusters_check_gates_on_shared_regions_and_names_repeats_and_bad_lines() {
    let d = dir("clusters");
    std::fs::write(d.join("ok"), "A\nB\n").unwrap();
    std::fs::write(d.join("shared"), "A\ncluster-2123\n# c\ncluster-2336\nA\n").unwrap();
    let ok = mirrorpid()
        .args(["clusters", "check"])
        .arg(d.join("ok"))
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    let shared = mirrorpid()
        .args(["clusters", "check"])
        .arg(d.join("shared"))
        .output()
        .unwrap();
    assert_eq!(
        shared.status.code(),
        Some(1),
        "a shared region fails the check"
    );
    let text = String::from_utf8(shared.stdout).unwrap();
    assert!(
        text.contains("REPEATED ID A: line 5 repeats line 1"),
        "{text}"
    );
    let json = mirrorpid()
        .args(["clusters", "check", "--json"])
        .arg(d.join("shared"))
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(1));
    let doc = &json_lines(&json.stdout)[0];
    assert_eq!(
        doc["repeated"],
        serde_json::json!([{"id": "A", "line": 5, "firstLine": 1}])
    );
    std::fs::write(d.join("latin1"), b"A\nB\nZ\xfcrich\n").unwrap();
    let bad = mirrorpid()
        .args(["clusters", "check"])
        .arg(d.join("latin1"))
        .output()
        .unwrap();
    fails(&bad, 2, "latin1: line 3: not UTF-8");
}

#[test]
fn simulate_refuses_a_scenario_written_as_an_array() {
    let d = dir("array");
    std::fs::write(
        d.join("s.json"),
        r#"["n", "d", "bxw7Kp1OS3-KHC0-T1prfA", "bindings", [{"id":"A"}]]"#,
    )
    .unwrap();
    let out = mirrorpid()
        .arg("simulate")
        .arg(d.join("s.json"))
        .output()
        .unwrap();
    fails(&out, 2, "expected an object");
}

#[test]
fn the_salt_is_a_number_in_every_json_output() {
    let d = dir("salt");
    std::fs::write(d.join("in.log"), data_segment().0).unwrap();
    assert!(mirrorpid()
        .args(rewrite_args(&d, "in.log", "out.log"))
        .output()
        .unwrap()
        .status
        .success());
    let dump = mirrorpid()
        .args(["state", "dump", "--json"])
        .arg(d.join("out.log.mirror_state.log"))
        .output()
        .unwrap();
    for doc in json_lines(&dump.stdout) {
        assert!(doc["value"]["salt"].is_u64(), "{doc}");
    }
    let map = mirrorpid()
        .args([
            "pid", "map", "--source", "east", "--pid", "5", "--salt", "3", "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(json_lines(&map.stdout)[0]["salt"], 3);
}
