//! What the module's code is, read from the build that keeps its function
//! names (`dist/named/`, the shipped build before `strip` and `wasm-opt`).
//!
//! **The allocator stays out of line.** A `__mirror_state` value with a
//! CollidingClusterId of bad UTF-8 trapped the module (issue 22): LLVM had
//! inlined dlmalloc's `free` into `wire::Reader::utf8`, right after the
//! allocation it frees, and there its read of the chunk header (the word
//! before the pointer, outside the allocation as LLVM sees it) is
//! undefined behaviour, which LLVM folded into the buffer's length. The
//! size check then failed on a valid free. The allocator's methods are now
//! `#[inline(never)]` (`broker/src/reserve.rs`), so no function that sees
//! an allocation also sees the allocator's header reads: this test holds
//! every build to that.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use wasmparser::{Name, Operator, Parser, Payload};

fn named_module() -> Vec<u8> {
    let path = std::env::var_os("MIRRORPID_BROKER_NAMED_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dist/named/mirrorpid_broker.wasm")
        });
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (scripts/build.sh builds it beside the shipped module)",
            path.display()
        )
    })
}

/// Function names, the call graph (by function index) and the exports.
struct Code {
    names: BTreeMap<u32, String>,
    calls: BTreeMap<u32, BTreeSet<u32>>,
    exports: BTreeMap<String, u32>,
}

fn read(bytes: &[u8]) -> Code {
    let mut imported = 0u32;
    let mut next = 0u32;
    let mut code = Code {
        names: BTreeMap::new(),
        calls: BTreeMap::new(),
        exports: BTreeMap::new(),
    };
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.unwrap() {
            Payload::ImportSection(s) => imported = s.count(),
            Payload::ExportSection(s) => {
                for e in s {
                    let e = e.unwrap();
                    if e.kind == wasmparser::ExternalKind::Func {
                        code.exports.insert(e.name.to_owned(), e.index);
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                let index = imported + next;
                next += 1;
                let callees = code.calls.entry(index).or_default();
                let mut ops = body.get_operators_reader().unwrap();
                while !ops.eof() {
                    if let Operator::Call { function_index } = ops.read().unwrap() {
                        callees.insert(function_index);
                    }
                }
            }
            Payload::CustomSection(c) => {
                if let wasmparser::KnownCustom::Name(names) = c.as_known() {
                    for n in names {
                        if let Name::Function(map) = n.unwrap() {
                            for f in map {
                                let f = f.unwrap();
                                code.names.insert(f.index, f.name.to_owned());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    assert_eq!(imported, 0, "the module imports nothing");
    assert!(code.names.len() > 100, "the named build has its names");
    code
}

/// Whether a function belongs to the allocator: dlmalloc itself, std's
/// `System` on wasm32 that wraps it, or the module's reserve around that.
fn allocator(name: &str) -> bool {
    [
        "dlmalloc",
        "3std3sys5alloc",
        "16mirrorpid_broker7reserve",
        "WithReserve",
    ]
    .iter()
    .any(|part| name.contains(part))
}

#[test]
fn no_function_outside_the_allocator_calls_into_dlmalloc() {
    let code = read(&named_module());
    let name = |i: &u32| code.names.get(i).map_or("?", String::as_str);
    let mut offenders = Vec::new();
    for (caller, callees) in &code.calls {
        for callee in callees {
            if name(callee).contains("dlmalloc") && !allocator(name(caller)) {
                offenders.push(format!("{} -> {}", name(caller), name(callee)));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "dlmalloc inlined outside the allocator: {offenders:#?}"
    );
    // The check sees what it checks: dlmalloc is there, called by the
    // allocator, and every export reaches it only through that.
    let dlmalloc_callers: Vec<&str> = code
        .calls
        .iter()
        .filter(|(_, callees)| callees.iter().any(|c| name(c).contains("dlmalloc")))
        .map(|(caller, _)| name(caller))
        .collect();
    assert!(
        dlmalloc_callers.iter().any(|n| n.contains("WithReserve")),
        "{dlmalloc_callers:?}"
    );
    assert!(code.exports.contains_key("mp_load_record"));
}
