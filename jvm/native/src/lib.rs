//! The broker module on wasmtime inside a JVM: the native half of
//! `mirrorpid-jvm`'s `Mode.NATIVE` (`dev.mirrorpid.Wasmtime`), loaded from
//! the jar as `kafka-clients` loads zstd-jni.
//!
//! A thin shim, as the module's other hosts are: it compiles the module,
//! makes instances, calls their exports with the arguments Java gives and
//! hands Java the instance's linear memory as a direct `ByteBuffer`, so
//! that Java reads and writes the module's blocks in place. Every fact
//! about the ABI stays in `docs/ABI.md` and the Java library: this file
//! knows only the exports' names and signatures.
//!
//! The engine is configured for life inside a JVM. Linear memory never
//! moves, so that a `ByteBuffer` made over it stays valid as it grows (a
//! new one, of the new size, is asked for when it has). Out-of-bounds
//! accesses are caught by guard pages and wasmtime's signal handlers,
//! which pass every signal that does not come from the module's code on to
//! the handler before them, the JVM's (as `libjsig` would); or, with
//! `checked`, by explicit bounds checks in the compiled code and no signal
//! handler at all, for a JVM that must keep its handlers to itself, at the
//! cost of a check on every access.
//!
//! Java holds each compiled module and instance as a `long`, the address
//! of a box this file made; `dev.mirrorpid.Wasmtime` frees each once, and
//! never calls with one it freed.

#![allow(non_snake_case)]

use std::ffi::{c_void, CString};

use jni_sys::{jbyteArray, jclass, jint, jlong, jobject, JNIEnv};
use wasmtime::{
    Config, Engine, Instance, Memory, Module, Store, StoreLimits, StoreLimitsBuilder, TypedFunc,
    Val,
};

/// The exports Java calls, in the order of `dev.mirrorpid.Wasmtime.Export`:
/// an export is named by its index there.
const EXPORTS: [&str; 23] = [
    "mp_abi_version",
    "mp_hash_seed",
    "mp_alloc",
    "mp_free",
    "mp_mapper_new",
    "mp_mapper_free",
    "mp_restore",
    "mp_rewrite",
    "mp_rewrite_headers",
    "mp_source",
    "mp_rewrite_headers_from",
    "mp_map",
    "mp_load_record",
    "mp_snapshot",
    "mp_expire",
    "mp_expire_pid",
    "mp_confirm",
    "mp_abort",
    "mp_pending",
    "mp_mapper_len",
    "mp_output_info",
    "mp_last_error_ptr",
    "mp_last_error_len",
];

/// `mp_rewrite_headers_from(handle, source, slots_ptr, slot_count,
/// fetch_len, now_ms, flags)`.
type RewriteHeaders = TypedFunc<(i32, i32, i32, i32, i32, i64, i32), i32>;

/// A compiled module.
struct Compiled {
    engine: Engine,
    module: Module,
}

/// An export Java calls by number: typed where it takes a handle alone and
/// returns a status (confirm, abort and the like, called on every fetch),
/// which spares the untyped call's checks of its signature and values.
#[derive(Clone)]
enum Callable {
    Handle(TypedFunc<i32, i32>),
    Untyped(wasmtime::Func),
}

/// An instance and what Java calls on it.
struct Loaded {
    store: Store<StoreLimits>,
    memory: Memory,
    exports: Vec<Option<Callable>>,
    rewrite_headers: RewriteHeaders,
    pending: TypedFunc<i32, i32>,
}

/// Throws a `RuntimeException` (a trap, a module that cannot be loaded)
/// for Java to wrap.
unsafe fn throw(env: *mut JNIEnv, message: &str) {
    let class = c"java/lang/RuntimeException";
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let find = (**env).v1_1.FindClass;
    let cls = find(env, class.as_ptr());
    if !cls.is_null() {
        ((**env).v1_1.ThrowNew)(env, cls, message.as_ptr());
    }
}

/// The engine a JVM hosts: memory that stays put; bounds checked by guard
/// pages, or in the code when `checked` (no signal handler).
fn engine(checked: bool) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config.memory_may_move(false);
    if checked {
        config.signals_based_traps(false);
        config.memory_guard_size(0);
        // The module's memory is at most 2 GiB: reserved whole, so that it
        // grows in place.
        config.memory_reservation(1 << 31);
        config.memory_reservation_for_growth(0);
        // Spectre mitigations of heap accesses rely on signals-based traps.
        // SAFETY: Cranelift settings that exist; they change how bounds
        // are checked, not whether.
        unsafe {
            config.cranelift_flag_set("enable_heap_access_spectre_mitigation", "false");
            config.cranelift_flag_set("enable_table_access_spectre_mitigation", "false");
        }
    }
    Engine::new(&config)
}

/// Compiles the module in `wasm` (a `byte[]`), its bounds checked in code
/// when `checked`; returns the compiled module's handle, or 0 having
/// thrown.
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_compile(
    env: *mut JNIEnv,
    _class: jclass,
    wasm: jbyteArray,
    checked: jni_sys::jboolean,
) -> jlong {
    let len = ((**env).v1_1.GetArrayLength)(env, wasm);
    let mut bytes = vec![0u8; len.max(0) as usize];
    ((**env).v1_1.GetByteArrayRegion)(env, wasm, 0, len, bytes.as_mut_ptr().cast());
    let compiled = engine(checked).and_then(|engine| {
        let module = Module::new(&engine, &bytes)?;
        Ok(Compiled { engine, module })
    });
    match compiled {
        Ok(c) => Box::into_raw(Box::new(c)) as jlong,
        Err(e) => {
            throw(
                env,
                &format!("wasmtime could not compile the module: {e:#}"),
            );
            0
        }
    }
}

/// Frees a compiled module (its instances keep what they need).
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_freeModule(
    _env: *mut JNIEnv,
    _class: jclass,
    compiled: jlong,
) {
    if compiled != 0 {
        drop(Box::from_raw(compiled as *mut Compiled));
    }
}

/// A new instance of a compiled module, its memory capped at `max_memory`
/// bytes; returns its handle, or 0 having thrown.
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_instantiate(
    env: *mut JNIEnv,
    _class: jclass,
    compiled: jlong,
    max_memory: jint,
) -> jlong {
    let c = &*(compiled as *const Compiled);
    match instantiate(c, max_memory.max(0) as usize) {
        Ok(loaded) => Box::into_raw(Box::new(loaded)) as jlong,
        Err(e) => {
            throw(
                env,
                &format!("wasmtime could not instantiate the module: {e:#}"),
            );
            0
        }
    }
}

fn instantiate(c: &Compiled, max_memory: usize) -> wasmtime::Result<Loaded> {
    let limits = StoreLimitsBuilder::new().memory_size(max_memory).build();
    let mut store = Store::new(&c.engine, limits);
    store.limiter(|limits| limits);
    let instance = Instance::new(&mut store, &c.module, &[])?;
    let memory = instance
        .get_memory(&mut store, "memory")
        .ok_or_else(|| wasmtime::format_err!("the module exports no memory"))?;
    let exports = EXPORTS
        .iter()
        .map(|name| {
            let func = instance.get_func(&mut store, name)?;
            Some(match func.typed::<i32, i32>(&store) {
                Ok(typed) => Callable::Handle(typed),
                Err(_) => Callable::Untyped(func),
            })
        })
        .collect();
    let rewrite_headers = instance.get_typed_func(&mut store, "mp_rewrite_headers_from")?;
    let pending = instance.get_typed_func(&mut store, "mp_pending")?;
    Ok(Loaded {
        store,
        memory,
        exports,
        rewrite_headers,
        pending,
    })
}

/// Frees an instance and its memory.
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_free(
    _env: *mut JNIEnv,
    _class: jclass,
    instance: jlong,
) {
    if instance != 0 {
        drop(Box::from_raw(instance as *mut Loaded));
    }
}

/// The instance's linear memory as it is now: a direct `ByteBuffer` over
/// it (its address never changes; its size grows).
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_memory(
    env: *mut JNIEnv,
    _class: jclass,
    instance: jlong,
) -> jobject {
    let loaded = &mut *(instance as *mut Loaded);
    let data = loaded.memory.data_mut(&mut loaded.store);
    ((**env).v1_4.NewDirectByteBuffer)(env, data.as_mut_ptr() as *mut c_void, data.len() as jlong)
}

/// The size of the instance's linear memory in bytes.
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_memorySize(
    _env: *mut JNIEnv,
    _class: jclass,
    instance: jlong,
) -> jlong {
    let loaded = &*(instance as *const Loaded);
    loaded.memory.data_size(&loaded.store) as jlong
}

/// Calls export number `export` with up to five arguments (each read as
/// the export's parameter says: i32 or i64); returns its result (every
/// export Java calls returns an i32) in the low 32 bits and the memory's
/// size in pages in the high ones, or throws on a trap.
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_call(
    env: *mut JNIEnv,
    _class: jclass,
    instance: jlong,
    export: jint,
    a0: jlong,
    a1: jlong,
    a2: jlong,
    a3: jlong,
    a4: jlong,
) -> jlong {
    let loaded = &mut *(instance as *mut Loaded);
    let func = match loaded.exports.get(export as usize).cloned() {
        Some(Some(Callable::Untyped(func))) => func,
        Some(Some(Callable::Handle(typed))) => {
            return match typed.call(&mut loaded.store, a0 as i32) {
                Ok(status) => with_pages(loaded, status),
                Err(e) => {
                    throw(env, &format!("TRAP in {}: {e:#}", EXPORTS[export as usize]));
                    0
                }
            };
        }
        _ => {
            throw(env, &format!("the module has no export #{export}"));
            return 0;
        }
    };
    let ty = func.ty(&loaded.store);
    let args: Vec<Val> = ty
        .params()
        .zip([a0, a1, a2, a3, a4])
        .map(|(t, a)| match t {
            wasmtime::ValType::I64 => Val::I64(a),
            _ => Val::I32(a as i32),
        })
        .collect();
    let mut out = [Val::I32(0)];
    let results = &mut out[..ty.results().len().min(1)];
    match func.call(&mut loaded.store, &args, results) {
        Ok(()) => {
            let status = match results.first() {
                Some(Val::I32(v)) => *v,
                _ => 0,
            };
            with_pages(loaded, status)
        }
        Err(e) => {
            throw(env, &format!("TRAP in {}: {e:#}", EXPORTS[export as usize]));
            0
        }
    }
}

/// `mp_rewrite_headers_from`, the batch path's one call, typed. Returns its
/// status in the low 32 bits and the memory's size in 64 KiB pages in the
/// high ones, so that Java learns in the same crossing whether its
/// `ByteBuffer` is still the whole memory.
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_rewriteHeaders(
    env: *mut JNIEnv,
    _class: jclass,
    instance: jlong,
    handle: jint,
    source: jint,
    slots_ptr: jint,
    slot_count: jint,
    fetch_len: jint,
    now_ms: jlong,
    flags: jint,
) -> jlong {
    let loaded = &mut *(instance as *mut Loaded);
    let args = (
        handle, source, slots_ptr, slot_count, fetch_len, now_ms, flags,
    );
    match loaded.rewrite_headers.call(&mut loaded.store, args) {
        Ok(status) => with_pages(loaded, status),
        Err(e) => {
            throw(env, &format!("TRAP in mp_rewrite_headers_from: {e:#}"));
            0
        }
    }
}

/// `mp_pending`, typed: a call that does nothing, the fixed cost of any.
///
/// # Safety
///
/// Called by the JVM: `env` is its environment, and every handle is one
/// this library made and has not freed (the module doc).
#[no_mangle]
pub unsafe extern "system" fn Java_dev_mirrorpid_Wasmtime_pending(
    env: *mut JNIEnv,
    _class: jclass,
    instance: jlong,
    handle: jint,
) -> jint {
    let loaded = &mut *(instance as *mut Loaded);
    match loaded.pending.call(&mut loaded.store, handle) {
        Ok(status) => status,
        Err(e) => {
            throw(env, &format!("TRAP in mp_pending: {e:#}"));
            0
        }
    }
}

/// `status` with the memory's size in pages above it.
fn with_pages(loaded: &Loaded, status: i32) -> jlong {
    let pages = (loaded.memory.data_size(&loaded.store) >> 16) as i64;
    (pages << 32) | i64::from(status as u32)
}
