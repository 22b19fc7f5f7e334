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
use std::sync::atomic::{AtomicPtr, Ordering};

/// Bytes held back for small allocations.
pub const RESERVE_BYTES: usize = 1 << 20;
/// The largest allocation the reserve is released for: larger ones are the
/// fallible kind, and fail instead.
const SMALL: usize = 64 << 10;

static RESERVE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

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
        let p = System.alloc(layout);
        if p.is_null() && layout.size() <= SMALL && release() {
            return System.alloc(layout);
        }
        p
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() && layout.size() <= SMALL && release() {
            return System.alloc_zeroed(layout);
        }
        p
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() && new_size <= SMALL && release() {
            return System.realloc(ptr, layout, new_size);
        }
        p
    }
}
