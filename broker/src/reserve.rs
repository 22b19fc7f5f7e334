//! The module's allocator: the system allocator (dlmalloc) with an
//! emergency reserve, so that running out of memory is an error code and
//! never a trap.
//!
//! Rust aborts (a trap in WebAssembly) when an allocation that cannot fail
//! does fail. mirrorpid makes every allocation that grows with the work
//! fallible (`try_reserve`: the binding table, savepoints, a rewrite's
//! results, snapshots, `mp_alloc` blocks), so those return
//! `OutOfMemory`. What remains are small allocations (a record, a name, a
//! message); for them this allocator holds [`RESERVE_BYTES`] back: when a
//! small allocation fails, it frees the reserve and tries again, and the
//! module refuses new work (`OutOfMemory`) until the reserve can be taken
//! again, which freeing blocks, mappers or bindings makes possible.
//!
//! This file is the module's only `unsafe` code: implementing `GlobalAlloc`
//! requires it. Every call forwards to `System` with the caller's layout.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Bytes held back for small allocations.
pub const RESERVE_BYTES: usize = 1 << 20;
/// The largest allocation the reserve is released for: larger ones are the
/// fallible kind, and fail instead.
const SMALL: usize = 64 << 10;

static RESERVE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

/// The bytes live allocations hold, the reserve aside: what a host reads
/// with `mp_heap_bytes` to learn what its mappers hold (an instance is
/// single-threaded, so `Relaxed` is a plain load and store).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The bytes live allocations hold, the reserve aside (their sizes as
/// asked, not the allocator's rounding or headers).
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Counts an allocation of `size` bytes, or a freed one, if it succeeded.
#[inline(always)]
fn counted(p: *mut u8, add: usize, sub: usize) -> *mut u8 {
    if !p.is_null() {
        LIVE.store(LIVE.load(Ordering::Relaxed) + add - sub, Ordering::Relaxed);
    }
    p
}

fn reserve_layout() -> Layout {
    // Checked when the module is compiled, not when it runs.
    const LAYOUT: Layout = match Layout::from_size_align(RESERVE_BYTES, 16) {
        Ok(layout) => layout,
        Err(_) => panic!("the reserve's layout"),
    };
    LAYOUT
}

/// Takes the reserve if it is not held; whether it is held now.
#[inline(always)]
pub fn ensure() -> bool {
    !RESERVE.load(Ordering::Relaxed).is_null() || take()
}

/// [`ensure`] when the reserve is not held.
#[inline(never)]
fn take() -> bool {
    // SAFETY: a non-zero size and valid alignment.
    let p = unsafe { System.alloc(reserve_layout()) };
    RESERVE.store(p, Ordering::Relaxed);
    !p.is_null()
}

/// Frees the reserve; whether there was one to free.
fn release() -> bool {
    let p = RESERVE.swap(std::ptr::null_mut(), Ordering::Relaxed);
    if p.is_null() {
        return false;
    }
    // SAFETY: `p` came from `System.alloc(reserve_layout())` and is freed once.
    unsafe { System.dealloc(p, reserve_layout()) };
    true
}

/// The allocator installed in the module.
pub struct WithReserve;

// SAFETY: every method forwards to `System` with the same arguments; the
// reserve is an ordinary `System` allocation.
unsafe impl GlobalAlloc for WithReserve {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut p = System.alloc(layout);
        if p.is_null() && layout.size() <= SMALL && release() {
            p = System.alloc(layout);
        }
        counted(p, layout.size(), 0)
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let mut p = System.alloc_zeroed(layout);
        if p.is_null() && layout.size() <= SMALL && release() {
            p = System.alloc_zeroed(layout);
        }
        counted(p, layout.size(), 0)
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        counted(ptr, 0, layout.size());
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let mut p = System.realloc(ptr, layout, new_size);
        if p.is_null() && new_size <= SMALL && release() {
            p = System.realloc(ptr, layout, new_size);
        }
        counted(p, new_size, layout.size())
    }
}
