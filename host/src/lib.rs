//! A broker-side host for the mirrorpid broker module, on wasmtime.
//!
//! [`BrokerModule`] loads `mirrorpid_broker.wasm` with **no imports**, the
//! way a partition leader would, and wraps the C-style ABI of `docs/ABI.md`
//! in Rust calls: it copies inputs into blocks from `mp_alloc`, calls the
//! export, checks the status, and reads outputs back from linear memory.
//! It is the reference host for the docs and the harness the tests drive.

use std::fmt;
use std::path::{Path, PathBuf};

use mirrorpid::Code;
use mirrorpid_abi as abi;
use wasmtime::error::Context;
use wasmtime::{
    bail, Engine, Instance, Memory, Module, Store, StoreLimits, StoreLimitsBuilder, TypedFunc, Val,
};

mod calls;
pub mod instructions;

/// A failed ABI call: the negative status turned into its code, plus the
/// module's `mp_last_error` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbiError {
    /// The error code (`-status`).
    pub code: i32,
    /// The message the module recorded.
    pub message: String,
}

impl AbiError {
    /// Its entry in mirrorpid's code table (`None` for a trap, reported as
    /// code -1, or a code this build does not know).
    pub fn kind(&self) -> Option<Code> {
        Code::from_value(self.code)
    }
}

impl fmt::Display for AbiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "code {}: {}", self.code, self.message)
    }
}

impl std::error::Error for AbiError {}

/// One `__mirror_state` record as the module returns it: Kafka key bytes
/// and value bytes (`None` = tombstone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// Key bytes.
    pub key: Vec<u8>,
    /// Value bytes, or `None` for a tombstone.
    pub value: Option<Vec<u8>>,
}

/// The result of `mp_rewrite`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// Bytes of complete batches.
    pub consumed: usize,
    /// Records to persist, in order.
    pub records: Vec<RawRecord>,
    /// The snapshot-required flag.
    pub snapshot_required: bool,
}

/// The result of `mp_map`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    /// The PID to write.
    pub mapped: i64,
    /// The binding's salt; `None` for a PID below 0.
    pub salt: Option<u8>,
    /// The binding's record while it is pending (none, or one).
    pub records: Vec<RawRecord>,
    /// The snapshot-required flag.
    pub snapshot_required: bool,
}

/// Where `scripts/build.sh` puts the module, or `$MIRRORPID_BROKER_WASM`.
pub fn default_module_path() -> PathBuf {
    std::env::var_os("MIRRORPID_BROKER_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist/mirrorpid_broker.wasm")
        })
}

type F1 = TypedFunc<i32, i32>;
type F2 = TypedFunc<(i32, i32), i32>;
/// `mp_rewrite(handle, src_ptr, src_len, buf_ptr, buf_len, now_ms, flags)`.
type RewriteFn = TypedFunc<(i32, i32, i32, i32, i32, i64, i32), i32>;
/// `mp_rewrite_headers(handle, src_ptr, src_len, slots_ptr, slot_count,
/// fetch_len, now_ms, flags)`.
type RewriteHeadersFn = TypedFunc<(i32, i32, i32, i32, i32, i32, i64, i32), i32>;
/// `mp_rewrite_headers_from(handle, source, slots_ptr, slot_count,
/// fetch_len, now_ms, flags)`.
type RewriteHeadersFromFn = TypedFunc<(i32, i32, i32, i32, i32, i64, i32), i32>;
/// `mp_load_record(handle, key_ptr, key_len, value_ptr, value_len)`.
type LoadFn = TypedFunc<(i32, i32, i32, i32, i32), i32>;

/// A loaded instance of the broker module.
pub struct BrokerModule {
    store: Store<StoreLimits>,
    instance: Instance,
    memory: Memory,
    abi_version: TypedFunc<(), i32>,
    alloc: F1,
    free: F1,
    mapper_new: F2,
    mapper_free: F1,
    rewrite: RewriteFn,
    rewrite_headers: RewriteHeadersFn,
    source: TypedFunc<(i32, i32, i32), i32>,
    rewrite_headers_from: RewriteHeadersFromFn,
    map: TypedFunc<(i32, i32, i32, i64, i64), i32>,
    snapshot_required: F1,
    output_ptr: F1,
    output_len: F1,
    /// Where `mp_output_info`'s bytes are (asked once).
    output_info: i32,
    load_record: LoadFn,
    snapshot: F1,
    restore: F2,
    expire: TypedFunc<(i32, i64), i32>,
    expire_pid: TypedFunc<(i32, i64), i32>,
    mapper_len: F1,
    confirm: F1,
    abort: F1,
    pending: F1,
    heap_bytes: TypedFunc<(), i32>,
    last_error_ptr: TypedFunc<(), i32>,
    last_error_len: TypedFunc<(), i32>,
}

impl BrokerModule {
    /// Compiles and instantiates the module at `path` with an empty import
    /// set; fails if the module imports anything.
    pub fn load(path: &Path) -> wasmtime::Result<BrokerModule> {
        let engine = Engine::default();
        let module = Module::from_file(&engine, path)
            .with_context(|| format!("loading {} (run scripts/build.sh first)", path.display()))?;
        BrokerModule::instantiate(&engine, &module)
    }

    /// A new instance of a compiled module (compile once, instantiate many
    /// times); fails if the module imports anything.
    pub fn instantiate(engine: &Engine, module: &Module) -> wasmtime::Result<BrokerModule> {
        BrokerModule::instantiate_limited(engine, module, usize::MAX)
    }

    /// [`BrokerModule::instantiate`] with linear memory capped at
    /// `max_memory` bytes (wasmtime's `StoreLimits`), as a broker that hosts
    /// many partitions would run it.
    pub fn instantiate_limited(
        engine: &Engine,
        module: &Module,
        max_memory: usize,
    ) -> wasmtime::Result<BrokerModule> {
        let imports: Vec<String> = module
            .imports()
            .map(|i| format!("{}::{}", i.module(), i.name()))
            .collect();
        if !imports.is_empty() {
            bail!("the broker module must import nothing, it imports {imports:?}");
        }
        let limits = StoreLimitsBuilder::new().memory_size(max_memory).build();
        let mut store = Store::new(engine, limits);
        store.limiter(|limits| limits);
        // An engine that counts fuel (`instructions`) starts a store with
        // none; any other refuses the call, which changes nothing.
        let _ = store.set_fuel(u64::MAX);
        let instance = Instance::new(&mut store, module, &[])?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .context("no `memory` export")?;
        macro_rules! f {
            ($name:literal) => {
                instance.get_typed_func(&mut store, $name).context($name)?
            };
        }
        // 64 random bits for the module's hash keys, as ABI.md asks of a
        // host (std's hash map keys come from the operating system).
        let seed = {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one(0u64)
        };
        let hash_seed: TypedFunc<i64, i32> = f!("mp_hash_seed");
        hash_seed.call(&mut store, seed as i64)?;
        let output_info: TypedFunc<(), i32> = f!("mp_output_info");
        let output_info = output_info.call(&mut store, ())?;
        Ok(BrokerModule {
            abi_version: f!("mp_abi_version"),
            alloc: f!("mp_alloc"),
            free: f!("mp_free"),
            mapper_new: f!("mp_mapper_new"),
            mapper_free: f!("mp_mapper_free"),
            rewrite: f!("mp_rewrite"),
            rewrite_headers: f!("mp_rewrite_headers"),
            source: f!("mp_source"),
            rewrite_headers_from: f!("mp_rewrite_headers_from"),
            map: f!("mp_map"),
            snapshot_required: f!("mp_snapshot_required"),
            output_ptr: f!("mp_output_ptr"),
            output_len: f!("mp_output_len"),
            output_info,
            load_record: f!("mp_load_record"),
            snapshot: f!("mp_snapshot"),
            restore: f!("mp_restore"),
            expire: f!("mp_expire"),
            expire_pid: f!("mp_expire_pid"),
            mapper_len: f!("mp_mapper_len"),
            confirm: f!("mp_confirm"),
            abort: f!("mp_abort"),
            pending: f!("mp_pending"),
            heap_bytes: f!("mp_heap_bytes"),
            last_error_ptr: f!("mp_last_error_ptr"),
            last_error_len: f!("mp_last_error_len"),
            store,
            instance,
            memory,
        })
    }

    /// Runs `f` on this instance and returns what it returned with the
    /// fuel it used: its WebAssembly instructions, exactly, on an engine
    /// configured to consume fuel (0 on any other).
    pub fn fuel_of<R>(&mut self, f: impl FnOnce(&mut BrokerModule) -> R) -> (R, u64) {
        let before = self.store.get_fuel().unwrap_or(0);
        let out = f(self);
        let after = self.store.get_fuel().unwrap_or(0);
        (out, before.saturating_sub(after))
    }

    /// `mp_heap_bytes`: what the instance's live allocations hold, the
    /// reserve aside.
    pub fn heap_bytes(&mut self) -> usize {
        self.heap_bytes
            .call(&mut self.store, ())
            .map_or(0, |n| n as usize)
    }

    /// Size of linear memory in bytes.
    pub fn memory_size(&self) -> usize {
        self.memory.data_size(&self.store)
    }

    fn check(&mut self, status: i32) -> Result<i32, AbiError> {
        if status >= 0 {
            return Ok(status);
        }
        Err(AbiError {
            code: -status,
            message: self.last_error(),
        })
    }

    /// The message of the last failed call.
    pub fn last_error(&mut self) -> String {
        let ptr = self.last_error_ptr.call(&mut self.store, ()).unwrap_or(0);
        let len = self.last_error_len.call(&mut self.store, ()).unwrap_or(0);
        String::from_utf8_lossy(&self.read(ptr, len)).into_owned()
    }

    /// `mp_output_info`'s 12 bytes, read without a call: where the output
    /// of the last successful call that wrote one is, and its mapper's
    /// snapshot flag. `None` if they are not a valid info.
    pub fn output_info(&self) -> Option<abi::OutputInfo> {
        let bytes = self.read(self.output_info, abi::OutputInfo::BYTES as i32);
        abi::OutputInfo::decode(bytes.as_slice().try_into().ok()?)
    }

    /// Reads `len` bytes of guest memory at `ptr` (empty if out of range).
    pub fn read(&self, ptr: i32, len: i32) -> Vec<u8> {
        let mut out = vec![0u8; len.max(0) as usize];
        if self
            .memory
            .read(&self.store, ptr.max(0) as usize, &mut out)
            .is_err()
        {
            out.clear();
        }
        out
    }

    /// The guest's linear memory, for a host that writes into its blocks in
    /// place (valid until the next call into the module, which may grow it).
    pub fn memory_mut(&mut self) -> &mut [u8] {
        self.memory.data_mut(&mut self.store)
    }

    /// Writes into guest memory (as a host writes into a block it allocated).
    pub fn write(&mut self, ptr: i32, bytes: &[u8]) -> wasmtime::Result<()> {
        Ok(self.memory.write(&mut self.store, ptr as usize, bytes)?)
    }

    /// Calls any export with raw arguments and returns its `i32` status, for
    /// tests that pass deliberately wrong pointers, lengths and handles. A
    /// trap is an `Err`.
    pub fn call_raw(&mut self, name: &str, args: &[Val]) -> wasmtime::Result<i32> {
        let f = self
            .instance
            .get_func(&mut self.store, name)
            .with_context(|| format!("no export {name}"))?;
        let mut out = [Val::I32(0)];
        f.call(&mut self.store, args, &mut out)?;
        out[0].i32().context("export returned no i32")
    }

    /// An export as a typed function, for calls in a loop (benchmarks)
    /// without the lookup by name that [`BrokerModule::call_raw`] makes.
    pub fn typed_func<P: wasmtime::WasmParams, R: wasmtime::WasmResults>(
        &mut self,
        name: &str,
    ) -> wasmtime::Result<TypedFunc<P, R>> {
        self.instance.get_typed_func(&mut self.store, name)
    }

    /// Calls a function from [`BrokerModule::typed_func`].
    pub fn call_typed<P: wasmtime::WasmParams, R: wasmtime::WasmResults>(
        &mut self,
        f: &TypedFunc<P, R>,
        args: P,
    ) -> wasmtime::Result<R> {
        f.call(&mut self.store, args)
    }

    /// `mp_abi_version`.
    pub fn abi_version(&mut self) -> i32 {
        self.abi_version.call(&mut self.store, ()).unwrap_or(-1)
    }

    /// `mp_alloc`.
    pub fn alloc(&mut self, len: i32) -> Result<i32, AbiError> {
        let s = self.alloc.call(&mut self.store, len).map_err(trap)?;
        self.check(s)
    }

    /// `mp_free`.
    pub fn free(&mut self, ptr: i32) -> Result<(), AbiError> {
        let s = self.free.call(&mut self.store, ptr).map_err(trap)?;
        self.check(s).map(drop)
    }

    /// Copies `bytes` into a new guest block; returns (ptr, len). An empty
    /// slice gives (0, 0), which every export accepts as empty input.
    pub fn put(&mut self, bytes: &[u8]) -> Result<(i32, i32), AbiError> {
        if bytes.is_empty() {
            return Ok((0, 0));
        }
        let ptr = self.alloc(bytes.len() as i32)?;
        self.write(ptr, bytes).map_err(|e| AbiError {
            code: -1,
            message: e.to_string(),
        })?;
        Ok((ptr, bytes.len() as i32))
    }

    fn release(&mut self, ptr: i32) {
        if ptr != 0 {
            let _ = self.free(ptr);
        }
    }
}

/// A trap is never expected: report it as code -1 so tests fail loudly.
fn trap(e: wasmtime::Error) -> AbiError {
    AbiError {
        code: -1,
        message: format!("TRAP: {e}"),
    }
}

/// Parses the record-list layout of an output (`mirrorpid_abi`).
pub fn parse_records(bytes: &[u8]) -> Option<Vec<RawRecord>> {
    abi::parse_records(bytes).map(|records| {
        records
            .into_iter()
            .map(|(key, value)| RawRecord { key, value })
            .collect()
    })
}
