//! The layer's failures: each error of the exports defined once, its
//! code travelling back up a call and its message parked beside it, and
//! the checked conversions of the ABI's integers that make them.

use crate::reserve;
use mirrorpid::{Code, Error};
use std::cell::Cell;
use std::fmt::Display;

/// An error of this layer: its code, with its message (which starts with
/// the code's name) parked until the call ends. Only a code travels back
/// up the call, so a call's path carries no message.
pub(crate) struct Failure(Code);

thread_local! {
    /// The message of the failure under way.
    static PARKED: Cell<String> = const { Cell::new(String::new()) };
}

impl Failure {
    /// A failure of `code`, its message parked.
    #[cold]
    #[inline(never)]
    fn new(code: Code, message: String) -> Failure {
        let _ = PARKED.try_with(|p| p.set(message));
        Failure(code)
    }

    /// Its code, and its message, taken from where it was parked.
    #[cold]
    #[inline(never)]
    pub(crate) fn take(self) -> (Code, String) {
        (self.0, PARKED.try_with(Cell::take).unwrap_or_default())
    }
}

impl From<Error> for Failure {
    #[cold]
    #[inline(never)]
    fn from(e: Error) -> Failure {
        Failure::new(e.kind(), text(format_args!("{e}")))
    }
}

/// A failure of this layer's own: `Name: detail`.
#[cold]
#[inline(never)]
pub(crate) fn fail(code: Code, detail: impl Display) -> Failure {
    Failure::new(code, text(format_args!("{}: {detail}", code.name())))
}

/// The failure of a call refused because the allocator's reserve is spent.
#[cold]
#[inline(never)]
pub(crate) fn memory_full() -> Failure {
    fail(
        Code::OutOfMemory,
        format_args!(
            "memory is full (the {} KiB reserve for small allocations is spent); \
             free blocks or mappers, or expire bindings",
            reserve::RESERVE_BYTES >> 10
        ),
    )
}

/// The failure of a handle no mapper has.
#[cold]
#[inline(never)]
pub(crate) fn bad_handle(handle: i32) -> Failure {
    fail(
        Code::BadHandle,
        format_args!("no mapper has handle {handle}"),
    )
}

/// A pointer: wasm32 addresses are unsigned, so an `i32` below zero is an
/// address at or above 2^31 (no block is there unless memory is that big).
#[inline(always)]
pub(crate) fn address(ptr: i32) -> usize {
    ptr as u32 as usize
}

/// A length: never negative.
#[inline(always)]
pub(crate) fn size(v: i32, what: &'static str) -> Result<usize, Failure> {
    match usize::try_from(v) {
        Ok(n) => Ok(n),
        Err(_) => Err(negative(what, v)),
    }
}

/// The failure of a negative length.
#[cold]
#[inline(never)]
fn negative(what: &'static str, v: i32) -> Failure {
    fail(Code::BadArgument, format_args!("{what} {v} is negative"))
}

/// A result count or length as the `i32` the ABI returns. Outputs live in
/// wasm32 memory, so they always fit; the check keeps a cast honest.
#[inline(always)]
pub(crate) fn count(n: usize) -> Result<i32, Failure> {
    match i32::try_from(n) {
        Ok(v) => Ok(v),
        Err(_) => Err(too_large(n)),
    }
}

/// The failure of a count over `i32::MAX`.
#[cold]
#[inline(never)]
fn too_large(n: usize) -> Failure {
    fail(
        Code::OutOfMemory,
        format_args!("result {n} does not fit an i32"),
    )
}

/// Formats as `format!` does, without its panic: `format!` unwraps the
/// formatter's result, and the module holds no reachable panic (none of
/// the `Display` impls it formats fails).
fn text(args: std::fmt::Arguments<'_>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = out.write_fmt(args);
    out
}
