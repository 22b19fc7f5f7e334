//! What the module's code is, read from the build that keeps its function
//! names (`dist/named/`, the shipped build before `strip` and `wasm-opt`).
//!
//! **The allocator stays out of line.** Where LLVM inlines dlmalloc's
//! `free` into a function right after the allocation it frees (as into
//! `wire::Reader::utf8`, which frees a CollidingClusterId of bad UTF-8),
//! its read of the chunk header (the word before the pointer, outside the
//! allocation as LLVM sees it) is undefined behaviour, which LLVM folds
//! into the buffer's length: the size check fails on a valid free, and the
//! module traps. The allocator's methods are `#[inline(never)]`
//! (`broker/src/reserve.rs`), so no function that sees an allocation also
//! sees the allocator's header reads: this test holds every build to that.

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
///
/// An indirect call (a `dyn` method: formatting, mostly) is taken as a
/// call of every function in the table with the type it calls through, so
/// the graph over-approximates: whatever the module can call is in it.
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
    // The type of each function, the functions in the table, and the
    // types each function calls indirectly through.
    let mut types: Vec<u32> = Vec::new();
    let mut table: BTreeSet<u32> = BTreeSet::new();
    let mut indirect: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.unwrap() {
            Payload::ImportSection(s) => imported = s.count(),
            Payload::FunctionSection(s) => {
                types = s.into_iter().map(Result::unwrap).collect();
            }
            Payload::ElementSection(s) => {
                for e in s {
                    if let wasmparser::ElementItems::Functions(fs) = e.unwrap().items {
                        table.extend(fs.into_iter().map(Result::unwrap));
                    }
                }
            }
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
                    match ops.read().unwrap() {
                        Operator::Call { function_index } => {
                            callees.insert(function_index);
                        }
                        Operator::CallIndirect { type_index, .. } => {
                            indirect.entry(index).or_default().insert(type_index);
                        }
                        _ => {}
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
    for (caller, through) in indirect {
        let targets = table
            .iter()
            .filter(|f| through.contains(&types[(**f - imported) as usize]));
        code.calls.entry(caller).or_default().extend(targets);
    }
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

/// The functions that start a panic (or, for `RefCell`, a failed borrow's).
fn panics(name: &str) -> bool {
    [
        "core::panicking::",
        "core::option::expect_failed",
        "core::option::unwrap_failed",
        "core::result::unwrap_failed",
        "core::slice::index::",
        "core::str::slice_error_fail",
        "core::cell::panic_already",
        "assert_failed",
        "std::panicking::",
        "rust_begin_unwind",
        "alloc::raw_vec::capacity_overflow",
        "alloc::alloc::handle_alloc_error",
        "alloc::raw_vec::handle_error",
        "std::process::abort",
        "abort_internal",
    ]
    .iter()
    .any(|part| name.contains(part))
}

/// Where an allocation that cannot be met ends: the only way into the
/// panic machinery the module keeps (see `docs/RELIABILITY.md`).
fn allocation_failure(name: &str) -> bool {
    [
        "alloc::alloc::handle_alloc_error",
        "alloc::raw_vec::capacity_overflow",
        "alloc::raw_vec::handle_error",
    ]
    .iter()
    .any(|part| name.contains(part))
}

fn demangled(code: &Code, i: u32) -> String {
    code.names.get(&i).map_or_else(
        || format!("#{i}"),
        |n| format!("{:#}", rustc_demangle::demangle(n)),
    )
}

/// Each panic entry point reachable from an export, with the functions
/// that call it. The walk goes into every callee but, when
/// `allow_allocation_failure`, not into an allocation's failure: not into
/// [`allocation_failure`], nor from the allocator into its own heap checks
/// (it panics only on a heap that safe code cannot corrupt, and it stays
/// out of line: the test above), nor from hashbrown's growth into its
/// "capacity overflow" panic (a table larger than memory).
fn reachable_panics(
    code: &Code,
    allow_allocation_failure: bool,
) -> BTreeMap<String, BTreeSet<String>> {
    let allowed = |caller: u32, callee: u32| {
        let (from, to) = (demangled(code, caller), demangled(code, callee));
        let raw = code.names.get(&caller).map_or("", String::as_str);
        allow_allocation_failure
            && (allocation_failure(&to)
                || (panics(&to) && allocator(raw))
                || (panics(&to)
                    && from.contains("hashbrown::raw::RawTable")
                    && from.contains("reserve_rehash")))
    };
    let mut seen: BTreeSet<u32> = code.exports.values().copied().collect();
    let mut queue: Vec<u32> = seen.iter().copied().collect();
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    while let Some(f) = queue.pop() {
        for &callee in code.calls.get(&f).into_iter().flatten() {
            if allowed(f, callee) {
                continue;
            }
            let to = demangled(code, callee);
            let from = demangled(code, f);
            if panics(&to) && !panics(&from) {
                found.entry(to).or_default().insert(from);
            }
            if seen.insert(callee) {
                queue.push(callee);
            }
        }
    }
    found
}

/// The module's build shows that no export can panic but when an
/// allocation cannot be met (which `reserve.rs` turns into `OutOfMemory`
/// for the small, infallible ones): no bounds check, `unwrap`, `expect`,
/// failed borrow, assertion or `format!` failure is reachable. An indirect
/// call counts as a call of every function it could reach, so this
/// over-approximates; what it finds is a real path in the code, and the
/// report names its callers (`docs/RELIABILITY.md`).
#[test]
fn no_export_reaches_a_panic_but_through_a_failed_allocation() {
    let code = read(&named_module());
    let found = reachable_panics(&code, true);
    for (panic, callers) in &found {
        eprintln!("{panic}:");
        for c in callers {
            eprintln!("    {c}");
        }
    }
    let report: Vec<String> = found
        .iter()
        .map(|(panic, callers)| format!("{panic} <- {} function(s)", callers.len()))
        .collect();
    assert!(
        found.is_empty(),
        "panics reachable from an export: {report:#?}"
    );
    // The walk sees what it checks: without the allowance for allocation
    // failure it reaches the panic machinery, through the allocation
    // failure paths, from the exports that allocate.
    let unallowed = reachable_panics(&code, false);
    assert!(
        unallowed.keys().any(|p| allocation_failure(p)),
        "{unallowed:#?}"
    );
    assert!(
        unallowed
            .values()
            .flatten()
            .any(|caller| caller == "mp_alloc" || caller.contains("mirrorpid")),
        "{unallowed:#?}"
    );
}

/// The header walk stays a function of its own, called by both header
/// exports: a JVM compiles each function to one method, and C2 inlines a
/// method's memory accesses only up to a budget of bytecode, which the
/// export's own checks and set-up would spend (`docs/PERFORMANCE.md`,
/// `COMPILER`). The broker never asks for outcomes, so the copy that notes
/// them is not in the module.
#[test]
fn the_header_walk_is_a_function_of_its_own() {
    let code = read(&named_module());
    let walks: Vec<u32> = code
        .names
        .keys()
        .copied()
        .filter(|&i| demangled(&code, i).contains("mirrorpid::rewrite::walk::walk_headers"))
        .collect();
    assert_eq!(walks.len(), 1, "one copy of the header walk: {walks:?}");
    for export in ["mp_rewrite_headers", "mp_rewrite_headers_from"] {
        let f = code.exports[export];
        assert!(
            code.calls[&f].contains(&walks[0]),
            "{export} calls the header walk"
        );
    }
}
