//! What the fuzz targets share: a mapper with some bindings, and the state
//! a failed call must leave unchanged.

use mirrorpid::{Mapper, MapperConfig};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, Module, PoolingAllocationConfig};

/// The broker module (`dist/`, scripts/build.sh) compiled once, on an engine
/// whose pooling allocator makes an instance per input cheap, each with at
/// most `max_memory` bytes of linear memory. The pages an input touched are
/// reset with a memset, not madvise.
pub fn pooled_module(max_memory: usize) -> (Engine, Module) {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_memories(4)
        .total_core_instances(4)
        .max_memory_size(max_memory)
        .linear_memory_keep_resident(2 << 20);
    let mut config = Config::new();
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    let engine = Engine::new(&config).expect("a pooling engine");
    let module = Module::from_file(&engine, mirrorpid_host::default_module_path())
        .expect("scripts/build.sh first");
    (engine, module)
}

/// The topic of every target's mapper.
pub const TOPIC: &str = "bxw7Kp1OS3-KHC0-T1prfA";

/// A mapper of partition 0 with confirmed bindings from two colliding
/// sources and a mirrored one, so that inputs meet salts and the
/// same-producer rule.
pub fn seeded_mapper() -> Mapper {
    let mut m = Mapper::new(MapperConfig::new(TOPIC.parse().unwrap(), 0)).unwrap();
    for pid in 0..4 {
        m.map("cluster-2123", pid, 1_000).unwrap();
        m.map("cluster-2336", pid, 1_000).unwrap();
        m.map("A", pid, 1_000).unwrap();
    }
    let mirrored = mirrorpid::map_pid("C", 7, 0).unwrap();
    m.map("B", mirrored, 1_000).unwrap();
    m.confirm();
    m
}

/// Everything observable about a mapper: its snapshot, its size, what is
/// pending, and every binding with its state.
pub fn state(m: &Mapper) -> (Vec<u8>, usize, usize, String) {
    let bindings: Vec<_> = m.bindings().collect();
    (m.snapshot(), m.len(), m.pending(), format!("{bindings:?}"))
}
