//! The broker module's instruction counts on the batch path, counted
//! exactly as wasmtime fuel: one unit for every WebAssembly operator but
//! the structural ones (`block`, `loop`, `end`, `nop`, `drop`, …), the same
//! on every machine and in every run. What a host pays for a rewrite is
//! these instructions (each runtime runs them at its own rate), so the host
//! tests hold them to a budget and `docs/PERFORMANCE.md` reports them.
//!
//! Every figure is of `mp_rewrite_headers_from` (the source named once by
//! `mp_source`) on bound, confirmed producers, the host's slots already
//! gathered, as a JVM broker calls it; the batch size only changes how
//! many digits the CRC patch shifts by.

use wasmtime::{Config, Engine, Module};

use crate::{AbiError, BrokerModule};

/// The mapper the counts run on.
const CONFIG: &str = r#"{"topicId":"bxw7Kp1OS3-KHC0-T1prfA","partition":0}"#;
/// A source cluster ID of the length Kafka's have (22 characters).
pub const SOURCE: &str = "Vq3zDRBqQ4SiNRzXcJuTrA";
/// The hash seed of the mapper the counts run on.
const SEED: i64 = 0x5eed_1234_5678_9abc;
/// Batches in the fetches whose difference gives a further batch's count.
const MANY: usize = 101;

/// The instruction counts of the batch path, at one batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instructions {
    /// A call that does nothing: `mp_pending` on a mapper.
    pub idle_call: u64,
    /// `mp_rewrite_headers_from` of an empty fetch: a rewrite's own cost.
    pub empty_rewrite: u64,
    /// `mp_rewrite_headers_from` of one batch.
    pub one_batch: u64,
    /// Each further batch of a fetch whose batches have a producer each
    /// (rounded up).
    pub further_batch: u64,
    /// Each further batch of a fetch whose batches are all one producer's
    /// (rounded up).
    pub further_batch_in_run: u64,
    /// [`Instructions::further_batch`] when no two batches in a row have
    /// the same size (each CRC patch shifts anew).
    pub further_batch_sizes_vary: u64,
    /// [`Instructions::further_batch_in_run`] when no two batches in a
    /// row have the same size.
    pub further_batch_in_run_sizes_vary: u64,
    /// `mp_rewrite` of one batch already in linear memory.
    pub one_batch_in_memory: u64,
}

/// What can go wrong counting: the module failed to load or a call failed.
#[derive(Debug)]
pub enum CountError {
    /// wasmtime could not compile or instantiate the module.
    Load(wasmtime::Error),
    /// A call into the module failed.
    Call(AbiError),
}

impl std::fmt::Display for CountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CountError::Load(e) => write!(f, "loading the module: {e:#}"),
            CountError::Call(e) => write!(f, "a call failed: {e}"),
        }
    }
}

impl std::error::Error for CountError {}

impl From<AbiError> for CountError {
    fn from(e: AbiError) -> CountError {
        CountError::Call(e)
    }
}

/// A fetch of `n` batches of `batch_bytes` each (or, with `vary`, a few
/// bytes more or less, never the same twice in a row): a producer each
/// (PIDs 0 to n - 1), or all of producer 5 with running sequences (`one`).
fn fetch_of(n: usize, batch_bytes: usize, one: bool, vary: bool) -> Vec<u8> {
    use mirrorpid::batch::{BatchBuilder, RecordSpec};
    let make = |i: usize, value: usize| {
        BatchBuilder {
            base_offset: i as i64,
            producer_id: if one { 5 } else { i as i64 },
            producer_epoch: 0,
            base_sequence: if one { i as i32 } else { 0 },
            records: vec![RecordSpec {
                key: None,
                value: Some(vec![7; value]),
            }],
            ..BatchBuilder::default()
        }
        .encode()
    };
    (0..n)
        .flat_map(|i| {
            let bytes = if vary {
                batch_bytes + i % 2 * 3
            } else {
                batch_bytes
            };
            // The record's varint lengths depend on its size: adjusted once.
            let first = make(i, bytes.saturating_sub(80));
            let value = (bytes + bytes.saturating_sub(80)).saturating_sub(first.len());
            make(i, value)
        })
        .collect()
}

/// [`fetch_of`] with every batch of one size.
fn fetch(n: usize, batch_bytes: usize, one: bool) -> Vec<u8> {
    fetch_of(n, batch_bytes, one, false)
}

/// A module instance that counts fuel, and a mapper on it with every
/// producer the counts use bound and confirmed.
struct Counter {
    m: BrokerModule,
    handle: i32,
    /// The source's block (for `mp_rewrite`) and its token.
    source: (i32, i32),
    token: i32,
    /// The host's clock: a millisecond later every call, so that each
    /// call records its producers' last-seen time, as a broker's do.
    pub(crate) now_ms: i64,
}

impl Counter {
    fn new(module_path: &std::path::Path, batch_bytes: usize) -> Result<Counter, CountError> {
        let mut config = Config::new();
        config.consume_fuel(true);
        let engine = Engine::new(&config).map_err(CountError::Load)?;
        let module = Module::from_file(&engine, module_path).map_err(CountError::Load)?;
        let mut m = BrokerModule::instantiate(&engine, &module).map_err(CountError::Load)?;
        // Fixed hash keys: a lookup's probes, and so its count, depend on
        // them.
        m.call_raw("mp_hash_seed", &[wasmtime::Val::I64(SEED)])
            .map_err(CountError::Load)?;
        let handle = m.mapper_new(CONFIG)?;
        for one in [false, true] {
            let mut all = fetch(MANY, batch_bytes, one);
            m.rewrite(handle, SOURCE, &mut all, 0, 0)?;
            m.confirm(handle)?;
        }
        let source = m.put(SOURCE.as_bytes())?;
        let token = m.source(handle, SOURCE)?;
        Ok(Counter {
            m,
            handle,
            source,
            token,
            now_ms: 0,
        })
    }

    /// The fuel the second of two calls of `name` uses, each on `input`
    /// written at `ptr` first (nothing when 0) and a millisecond after the
    /// call before, with the arguments `args` makes of that time: the first
    /// call takes any one-time growth, which is not counted.
    fn second_call(
        &mut self,
        name: &str,
        ptr: i32,
        input: &[u8],
        args: impl Fn(i64) -> (i32, i32, i32, i32, i32, i64, i32),
    ) -> Result<u64, CountError> {
        let f = self
            .m
            .typed_func::<(i32, i32, i32, i32, i32, i64, i32), i32>(name)
            .map_err(CountError::Load)?;
        let mut used = 0;
        for _ in 0..2 {
            if ptr != 0 {
                self.m.write(ptr, input).map_err(CountError::Load)?;
            }
            self.now_ms += 1;
            let call = args(self.now_ms);
            let (status, fuel) = self.m.fuel_of(|m| m.call_typed(&f, call));
            let status = status.map_err(CountError::Load)?;
            if status < 0 {
                return Err(CountError::Call(AbiError {
                    code: -status,
                    message: self.m.last_error(),
                }));
            }
            used = fuel;
        }
        Ok(used)
    }

    /// The fuel one call of `mp_rewrite_headers_from` on `fetch`'s gathered
    /// headers uses.
    fn headers(&mut self, fetch: &[u8]) -> Result<u64, CountError> {
        let mut slots = Vec::new();
        let offsets = mirrorpid::batch::gather(fetch, usize::MAX, &mut slots);
        let (ptr, _) = self.m.put(&slots)?;
        let (fetch_len, count) = (fetch.len() as i32, offsets.len() as i32);
        let (handle, token) = (self.handle, self.token);
        let used = self.second_call("mp_rewrite_headers_from", ptr, &slots, |now| {
            (handle, token, ptr, count, fetch_len, now, 0)
        })?;
        if ptr != 0 {
            self.m.free(ptr)?;
        }
        Ok(used)
    }

    /// The fuel of `mp_rewrite` on `fetch` copied into linear memory.
    fn bytes(&mut self, fetch: &[u8]) -> Result<u64, CountError> {
        let (ptr, len) = self.m.put(fetch)?;
        let (handle, (source, source_len)) = (self.handle, self.source);
        let used = self.second_call("mp_rewrite", ptr, fetch, |now| {
            (handle, source, source_len, ptr, len, now, 0)
        })?;
        self.m.free(ptr)?;
        Ok(used)
    }
}

/// Counts [`Instructions`] for batches of `batch_bytes` on the module at
/// `module_path`.
pub fn count(
    module_path: &std::path::Path,
    batch_bytes: usize,
) -> Result<Instructions, CountError> {
    let mut c = Counter::new(module_path, batch_bytes)?;
    let handle = c.handle;
    let pending =
        c.m.typed_func::<i32, i32>("mp_pending")
            .map_err(CountError::Load)?;
    let (status, idle_call) = c.m.fuel_of(|m| m.call_typed(&pending, handle));
    status.map_err(CountError::Load)?;
    let empty_rewrite = c.headers(&[])?;
    let one_batch = c.headers(&fetch(1, batch_bytes, false))?;
    let each = c.headers(&fetch(MANY, batch_bytes, false))?;
    let run_one = c.headers(&fetch(1, batch_bytes, true))?;
    let run = c.headers(&fetch(MANY, batch_bytes, true))?;
    let each_varying = c.headers(&fetch_of(MANY, batch_bytes, false, true))?;
    let run_varying = c.headers(&fetch_of(MANY, batch_bytes, true, true))?;
    let one_batch_in_memory = c.bytes(&fetch(1, batch_bytes, false))?;
    let per = |many: u64, one: u64| many.saturating_sub(one).div_ceil(MANY as u64 - 1);
    Ok(Instructions {
        idle_call,
        empty_rewrite,
        one_batch,
        further_batch: per(each, one_batch),
        further_batch_in_run: per(run, run_one),
        further_batch_sizes_vary: per(each_varying, one_batch),
        further_batch_in_run_sizes_vary: per(run_varying, run_one),
        one_batch_in_memory,
    })
}

/// The counts at each of `sizes` as `docs/perf/instructions.json` holds
/// them (`{"rows": [...]}`, one row per size, keys as
/// `scripts/perf-doc.py` reads them).
pub fn table_json(module_path: &std::path::Path, sizes: &[usize]) -> Result<String, CountError> {
    let mut rows = Vec::new();
    for &size in sizes {
        let c = count(module_path, size)?;
        rows.push(serde_json::json!({
            "batch_bytes": size,
            "idle": c.idle_call,
            "empty": c.empty_rewrite,
            "one": c.one_batch,
            "further": c.further_batch,
            "run": c.further_batch_in_run,
            "further_sizes_vary": c.further_batch_sizes_vary,
            "run_sizes_vary": c.further_batch_in_run_sizes_vary,
            "mp_rewrite_one": c.one_batch_in_memory,
        }));
    }
    Ok(serde_json::json!({ "rows": rows }).to_string())
}
