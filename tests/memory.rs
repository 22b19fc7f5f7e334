//! At most 64 bytes of mapper memory per bound producer, at 1 M
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

#[test]
fn at_most_64_bytes_per_bound_producer_at_one_million() {
    const N: i64 = 1_000_000;
    let before = LIVE.load(Ordering::Relaxed);
    let mut m = Mapper::new(MapperConfig::new(
        "bxw7Kp1OS3-KHC0-T1prfA".parse().unwrap(),
        0,
    ))
    .unwrap();
    for i in 0..N {
        let source = ["east-1", "west-2", "eu-3", "ap-4"][(i % 4) as usize];
        m.map(source, i / 4, 0).unwrap();
        // A host confirms once the fetch's records are durable.
        if i % 1000 == 999 {
            m.confirm();
        }
    }
    m.confirm();
    let live = (LIVE.load(Ordering::Relaxed) - before) as f64;
    assert_eq!(m.len(), N as usize);
    let per_producer = live / N as f64;
    let accounted = m.memory_bytes() as f64;
    println!(
        "{per_producer:.1} bytes per producer (live heap), {:.1} accounted",
        accounted / N as f64
    );
    assert!(per_producer <= 64.0, "{per_producer:.1} bytes per producer");
    assert!(
        (live - accounted).abs() / live < 0.01,
        "memory_bytes() is within 1% of the heap"
    );
    // Restored mappers are sized exactly, so no larger.
    let before = LIVE.load(Ordering::Relaxed);
    let restored = Mapper::restore(&m.snapshot()).unwrap();
    let live = (LIVE.load(Ordering::Relaxed) - before) as f64;
    assert!(live / N as f64 <= 64.0, "restored: {:.1}", live / N as f64);
    drop(restored);
}
