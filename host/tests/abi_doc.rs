//! `docs/ABI.md` against the module: its function table (names and
//! signatures) and its list of other exports against the module's exports,
//! its error table against `mirrorpid::Code`, and the numbered findings of
//! a host written from the docs alone, each as a test.

use std::collections::BTreeMap;

use mirrorpid::record::{StateKey, StateValue};
use mirrorpid::{map_pid, Code, StateRecord};
use mirrorpid_abi as abi;
use mirrorpid_host::{default_module_path, BrokerModule};
use wasmtime::{Engine, ExternType, Module, ValType};

fn doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/ABI.md")).unwrap()
}

/// The rows of the first table after `heading_row` (cells trimmed).
fn table(doc: &str, heading_row: &str) -> Vec<Vec<String>> {
    let start = doc
        .find(heading_row)
        .unwrap_or_else(|| panic!("no table {heading_row:?}"));
    doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

fn ticks(s: &str) -> &str {
    s.trim_matches('`')
}

/// `(a, b: i32, c: i64) -> i32` as parameter and result types; untyped
/// names take the next type written (`a, b: i32` is two i32s).
fn signature(text: &str) -> (Vec<String>, Vec<String>) {
    let (params, result) = text.split_once("->").expect("a signature with ->");
    let inner = params.trim().trim_start_matches('(').trim_end_matches(')');
    let mut types = Vec::new();
    let mut pending = 0;
    for p in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match p.split_once(':') {
            Some((_, t)) => {
                types.extend(std::iter::repeat_n(t.trim().to_owned(), pending + 1));
                pending = 0;
            }
            None => pending += 1,
        }
    }
    assert_eq!(pending, 0, "untyped parameters at the end of {text}");
    (types, vec![result.trim().to_owned()])
}

fn wasm_type(t: &ValType) -> String {
    match t {
        ValType::I32 => "i32".into(),
        ValType::I64 => "i64".into(),
        other => format!("{other}"),
    }
}

#[test]
fn the_function_table_is_the_export_list() {
    let engine = Engine::default();
    let module = Module::from_file(&engine, default_module_path()).unwrap();
    let exports: BTreeMap<String, ExternType> = module
        .exports()
        .map(|e| (e.name().to_owned(), e.ty()))
        .collect();
    let doc = doc();
    let mut documented = Vec::new();
    for row in table(&doc, "| export | signature | returns |") {
        let name = ticks(&row[0]).to_owned();
        let ty = exports
            .get(&name)
            .unwrap_or_else(|| panic!("{name} is documented but not exported"));
        let ExternType::Func(f) = ty else {
            panic!("{name} is not a function")
        };
        let (params, results) = signature(ticks(&row[1]));
        let actual: Vec<String> = f.params().map(|t| wasm_type(&t)).collect();
        assert_eq!(params, actual, "{name} parameters");
        let actual: Vec<String> = f.results().map(|t| wasm_type(&t)).collect();
        assert_eq!(results, actual, "{name} result");
        documented.push(name);
    }
    for row in table(&doc, "| other export | kind |") {
        let name = ticks(&row[0]).to_owned();
        let kind = match exports.get(&name) {
            Some(ExternType::Memory(_)) => "memory",
            Some(ExternType::Global(_)) => "global",
            other => panic!("{name}: documented as {} but is {other:?}", row[1]),
        };
        assert_eq!(kind, row[1], "{name}");
        documented.push(name);
    }
    let mut undocumented: Vec<&String> =
        exports.keys().filter(|e| !documented.contains(e)).collect();
    undocumented.sort();
    assert!(
        undocumented.is_empty(),
        "exported but not in docs/ABI.md: {undocumented:?}"
    );
}

#[test]
fn the_error_table_is_the_code_table() {
    let rows = table(&doc(), "| code | name | meaning |");
    let documented: Vec<(i32, String, String)> = rows
        .iter()
        .map(|r| (r[0].parse().unwrap(), r[1].clone(), r[2].clone()))
        .collect();
    let mut defined: Vec<(i32, String, String)> = Code::ALL
        .iter()
        .map(|c| (c.value(), c.name().to_owned(), c.meaning().to_owned()))
        .collect();
    defined.sort();
    assert_eq!(documented, defined, "docs/ABI.md's table, by code");
}

fn module() -> BrokerModule {
    BrokerModule::load(&default_module_path()).unwrap()
}

const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;

fn record(source: &str, pid: i64, salt: i64) -> (Vec<u8>, Option<Vec<u8>>) {
    let r = StateRecord {
        key: StateKey {
            topic_id: "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap(),
            partition: 0,
            source_cluster_id: source.into(),
            original_pid: pid,
        },
        value: Some(StateValue {
            salt,
            colliding_cluster_id: String::new(),
            timestamp_ms: 1,
        }),
    };
    (
        r.key.to_bytes().unwrap(),
        r.value.as_ref().map(|v| v.to_bytes().unwrap()),
    )
}

/// Finding 2: a bad topicId in the config is InvalidTopicId.
#[test]
fn finding_2_bad_topic_id_is_code_11() {
    let e = module()
        .mapper_new(r#"{"topicId":"nope","partition":0}"#)
        .unwrap_err();
    assert_eq!(e.kind(), Some(Code::InvalidTopicId), "{e}");
}

/// Finding 3: salts are 0 to 63; 64 is refused and the message says so.
#[test]
fn finding_3_salt_range() {
    let mut m = module();
    let h = m.mapper_new(CONFIG).unwrap();
    let (k, v) = record("A", 1, 63);
    assert_eq!(m.load_record(h, &k, v.as_deref()), Ok(abi::LOAD_BOUND));
    let (k, v) = record("A", 2, 64);
    let e = m.load_record(h, &k, v.as_deref()).unwrap_err();
    assert_eq!(e.kind(), Some(Code::InvalidSalt));
    assert!(e.message.contains("0 to 63"), "{e}");
}

/// Finding 4: a key with an empty source cluster is InvalidInput, as documented.
#[test]
fn finding_4_empty_source_cluster_in_a_key() {
    let mut m = module();
    let h = m.mapper_new(CONFIG).unwrap();
    let (k, v) = record("", 1, 0);
    let e = m.load_record(h, &k, v.as_deref()).unwrap_err();
    assert_eq!(e.kind(), Some(Code::InvalidInput), "{e}");
    let doc = doc().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(doc.contains("a key with an empty SourceClusterId `-19 InvalidInput`"));
}

/// Finding 5: a record that evicts another identity says so (3).
#[test]
fn finding_5_eviction_is_visible() {
    let mut m = module();
    let h = m.mapper_new(CONFIG).unwrap();
    // Two different sources whose salt-0 slots are the same: the second
    // record takes the slot from the first.
    assert_eq!(map_pid("cluster-2123", 5, 0), map_pid("cluster-2336", 5, 0));
    let (k, v) = record("cluster-2123", 5, 0);
    assert_eq!(m.load_record(h, &k, v.as_deref()), Ok(abi::LOAD_BOUND));
    let (k, v) = record("cluster-2336", 5, 0);
    assert_eq!(
        m.load_record(h, &k, v.as_deref()),
        Ok(abi::LOAD_BOUND_EVICTING)
    );
    assert_eq!(m.mapper_len(h), Ok(1));
}

/// Finding 9: the last error is cleared by a success; a failed call leaves
/// the output and the snapshot flag as the last success left them.
#[test]
fn finding_9_last_error_and_flags() {
    let mut m = module();
    let h = m.mapper_new(CONFIG).unwrap();
    assert!(m.mapper_len(999).is_err());
    assert!(!m.last_error().is_empty());
    assert_eq!(m.mapper_len(h), Ok(0));
    assert_eq!(m.last_error(), "", "a success clears the message");
    let batch = |pid| {
        mirrorpid::batch::BatchBuilder {
            producer_id: pid,
            ..Default::default()
        }
        .encode()
    };
    let mut b = batch(5);
    m.rewrite(h, "cluster-2123", &mut b, 1, 0).unwrap();
    let mut b = batch(5);
    let out = m.rewrite(h, "cluster-2336", &mut b, 1, 0).unwrap();
    assert!(out.snapshot_required, "a collision");
    let before = m.output(h).unwrap();
    let mut junk = vec![0u8; 20];
    junk[16] = 9;
    assert!(m.rewrite(h, "A", &mut junk, 1, 0).is_err());
    assert_eq!(
        m.output(h).unwrap(),
        before,
        "a failed call leaves the output"
    );
    let flag = m
        .call_raw("mp_snapshot_required", &[wasmtime::Val::I32(h)])
        .unwrap();
    assert_eq!(flag, 1, "and the flag");
}

/// Finding 10: mp_free of something that is not a block names it.
#[test]
fn finding_10_mp_free_errors() {
    let mut m = module();
    let e = m.free(-1).unwrap_err();
    assert_eq!(e.kind(), Some(Code::BadPointer));
    assert!(e.message.contains("4294967295 is not a live block"), "{e}");
}

/// Finding 8: the docs stand alone. They point to no contract outside the
/// repository, and the format page says what a salt-0 record carries.
#[test]
fn finding_8_the_contract_is_in_the_repository() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for page in [
        "README.md",
        "DEVELOPERS.md",
        "docs/ABI.md",
        "docs/DESIGN.md",
        "docs/FORMAT.md",
        "docs/PERFORMANCE.md",
    ] {
        let text = std::fs::read_to_string(format!("{root}/{page}")).unwrap();
        assert!(
            !text.contains("SPEC"),
            "{page} points to a spec outside the repository"
        );
    }
    let format = std::fs::read_to_string(format!("{root}/docs/FORMAT.md")).unwrap();
    assert!(format.contains("the empty string for a salt-0 binding"));
    assert!(doc().contains("`docs/FORMAT.md`"));
}

/// Issue 22: a value with a one-byte CollidingClusterId of `0xff` trapped
/// the module (the allocator inlined into `Reader::utf8`; see
/// `module_structure.rs`). Each string field of a record, and each of its
/// lengths, bad in every way a byte can make it: the module answers as the
/// native core does, and keeps serving.
#[test]
fn a_poison_record_is_an_error_and_the_module_keeps_serving() {
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let config = r#"{"topicId": "6f1c3b2a-9d4e-4b7f-8a1c-2d3e4f5a6b7c", "partition": 0}"#;
    let key = hex("00036f1c3b2a9d4e4b7f8a1c2d3e4f5a6b7c000000000001520000000000000005");
    let value = hex("0000000000000000000202ff0000018bcfe5680000");
    let mut m = module();
    let h = m.mapper_new(config).unwrap();
    let e = m.load_record(h, &key, Some(&value)).unwrap_err();
    assert_eq!(e.kind(), Some(Code::InvalidUtf8), "{e}");
    assert!(e.message.starts_with("InvalidUtf8: "), "{e}");
    // Every byte of both, replaced by each troublesome value.
    let native = |k: &[u8], v: Option<&[u8]>| {
        let mut n =
            mirrorpid::Mapper::new(mirrorpid::MapperConfig::from_json(config).unwrap()).unwrap();
        StateRecord::decode(k, v)
            .and_then(|r| n.load_record(&r))
            .map_err(|e| e.kind().value())
    };
    let mut cases = 0;
    for (which, original) in [(0, &key), (1, &value)] {
        for at in 0..original.len() {
            for byte in [0x00, 0x01, 0x7f, 0x80, 0xc0, 0xed, 0xfe, 0xff] {
                let mut bad = original.clone();
                bad[at] = byte;
                let (k, v) = if which == 0 {
                    (&bad, &value)
                } else {
                    (&key, &bad)
                };
                let h = m.mapper_new(config).unwrap();
                let got = m.load_record(h, k, Some(v)).map_err(|e| e.code);
                let want = native(k, Some(v)).map(|o| abi::load_status(&o));
                assert_eq!(
                    got,
                    want,
                    "{} byte {at} = {byte:#x}",
                    ["key", "value"][which]
                );
                m.mapper_free(h).unwrap();
                cases += 1;
            }
        }
    }
    assert_eq!(cases, (key.len() + value.len()) * 8);
    // The instance is alive: the first mapper still answers, frees work.
    assert_eq!(m.mapper_len(h).unwrap(), 0);
    let p = m.alloc(16).unwrap();
    m.free(p).unwrap();
}

/// `mp_map` maps as the native core does: the salt, the mapped PID, the
/// pending record (again on a retry, none once confirmed), the collision
/// flag, and a PID below 0 passed through.
#[test]
fn mp_map_answers_as_the_native_mapper() {
    let mut m = module();
    let h = m.mapper_new(CONFIG).unwrap();
    let mut native =
        mirrorpid::Mapper::new(mirrorpid::MapperConfig::from_json(CONFIG).unwrap()).unwrap();
    for (source, pid) in [
        ("cluster-2123", 4),
        ("cluster-2336", 4),
        ("cluster-2336", 4),
        ("A", -1),
        ("A", map_pid("B", 3, 0).unwrap()),
    ] {
        let got = m.map(h, source, pid, 7).unwrap();
        let want = native.map(source, pid, 7).unwrap();
        assert_eq!(got.mapped, want.mapped, "{source}/{pid}");
        assert_eq!(got.salt, want.salt);
        assert_eq!(got.snapshot_required, want.snapshot_required);
        let records: Vec<_> = want.record.iter().map(|r| r.encode().unwrap()).collect();
        let got_records: Vec<_> = got.records.into_iter().map(|r| (r.key, r.value)).collect();
        assert_eq!(got_records, records);
    }
    assert_eq!(m.pending(h).unwrap(), native.pending());
    m.confirm(h).unwrap();
    native.confirm();
    let again = m.map(h, "cluster-2336", 4, 8).unwrap();
    assert_eq!(again.salt, Some(1), "the second source collided");
    assert!(again.records.is_empty(), "confirmed: no record");
    assert_eq!(m.snapshot(h).unwrap(), {
        native.map("cluster-2336", 4, 8).unwrap();
        native.snapshot()
    });
    let e = m.map(h, "A", 1 << 41, 9).unwrap_err();
    assert_eq!(e.kind(), Some(Code::PidOutOfRange), "{e}");
    let e = m.map(h, "", 1, 9).unwrap_err();
    assert_eq!(e.kind(), Some(Code::InvalidInput), "{e}");
}
