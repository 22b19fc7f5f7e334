//! At most 64 bytes of mapper memory per bound producer, at 1 M and 10 M
//! producers, counted by a global allocator (live heap bytes), and checked
//! against the mapper's own accounting (`memory_bytes`).
#![cfg(not(target_arch = "wasm32"))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use mirrorpid::{Mapper, MapperConfig};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Live heap bytes per producer of a mapper holding `n` bound producers
/// from four sources, checked against the mapper's own accounting; and of
/// the same mapper restored from its snapshot.
fn per_producer(n: i64) -> (f64, f64) {
    let before = LIVE.load(Ordering::Relaxed);
    let mut m = Mapper::new(MapperConfig {
        max_bindings: n as u64,
        ..MapperConfig::new("bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap(), 0)
    })
    .unwrap();
    for i in 0..n {
        let source = ["east-1", "west-2", "eu-3", "ap-4"][(i % 4) as usize];
        m.map(source, i / 4, 0).unwrap();
        // A host confirms once the fetch's records are durable.
        if i % 1000 == 999 {
            m.confirm();
        }
    }
    m.confirm();
    let live = (LIVE.load(Ordering::Relaxed) - before) as f64;
    assert_eq!(m.len(), n as usize);
    let accounted = m.memory_bytes() as f64;
    println!(
        "{n}: {:.1} bytes per producer (live heap), {:.1} accounted",
        live / n as f64,
        accounted / n as f64
    );
    assert!(
        (live - accounted).abs() / live < 0.01,
        "memory_bytes() is within 1% of the heap"
    );
    // Restored mappers are sized exactly, so no larger.
    let snapshot = m.snapshot();
    drop(m);
    let before = LIVE.load(Ordering::Relaxed);
    let restored = Mapper::restore(&snapshot).unwrap();
    let restored_live = (LIVE.load(Ordering::Relaxed) - before) as f64;
    drop(restored);
    (live / n as f64, restored_live / n as f64)
}

/// One test, so no other test's allocations run on another thread while
/// the counter is read. Ten million producers take minutes unoptimised:
/// that size runs in the release build (`scripts/test.sh` runs both).
#[test]
fn at_most_64_bytes_per_bound_producer_up_to_ten_million() {
    let sizes: &[i64] = if cfg!(debug_assertions) {
        &[1_000_000]
    } else {
        &[1_000_000, 10_000_000]
    };
    for &n in sizes {
        let (live, restored) = per_producer(n);
        assert!(live <= 64.0, "{n}: {live:.1} bytes per producer");
        assert!(restored <= 64.0, "{n} restored: {restored:.1}");
    }
}
