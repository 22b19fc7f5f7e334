//! The Rust half of `rewriteBatchesInPlace`'s fast path (`fast.js`, the
//! JS half, is added to the generated glue by `scripts/finish-glue.py`,
//! and takes these entry points off `PidMapper` for itself alone).
//!
//! A call from JS into WebAssembly is cheap when its arguments are
//! numbers; every JS value passed, and every call back into JS for a
//! check, a view or a result, costs as much as a small rewrite. So the
//! common call (a string source, a safe 64-bit time, no options or plain
//! boolean ones, a `Uint8Array`) is recognised in JS,
//! which copies the bytes into the buffer kept here, makes one call of
//! numbers to rewrite them, writes the changed bytes back and builds the
//! result with the same builders as the checked path. Where the batches
//! are large (an average of [`WINDOWS_FROM`] bytes or more), JS copies
//! only each batch's header window into the buffer instead, as slots of a
//! [`HeaderView`] (`mp_rewrite_headers`' way), and the call rewrites
//! those. Every other call, and every error's wording, is the checked
//! path's ([`PidMapper::rewrite_batches_in_place`]).

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::convert::{js_err, records_to_js};
use super::options::REWRITE_OPTIONS;
use super::PidMapper;
use crate::batch::{HeaderView, SLOT_BYTES};
use crate::error::Error;
use crate::rewrite::RewriteOptions;

/// From this many bytes a batch on average, the fast path copies each
/// batch's header window (the v2 header, and what a control batch's marker
/// needs) instead of the whole fetch: a window copied by JS costs what a
/// copy of a few KiB does, so below it one copy of every byte costs less.
#[allow(dead_code)] // JS reads it (src/js/layout.js)
pub(super) const WINDOWS_FROM: usize = 8 << 10;

/// The fast path's rewrite options, as bits (`fastFlags` in `builders.js`
/// sets them from an options object, by [`REWRITE_OPTIONS`]).
const FLAG_STRICT_CRC: u32 = REWRITE_OPTIONS[0].1;
const FLAG_COMPLETE: u32 = REWRITE_OPTIONS[1].1;
const FLAG_OUTCOMES: u32 = REWRITE_OPTIONS[2].1;

/// The rewrite options of `flags`.
fn options(flags: u32) -> RewriteOptions {
    RewriteOptions {
        strict_crc: flags & FLAG_STRICT_CRC != 0,
        complete: flags & FLAG_COMPLETE != 0,
        outcomes: flags & FLAG_OUTCOMES != 0,
    }
}

thread_local! {
    /// The room every mapper's fast rewrites copy the caller's bytes into,
    /// rewritten there: one for the instance, at an address only
    /// [`PidMapper::fast_room`] changes, so JS keeps the address between
    /// calls and never writes into a freed mapper's memory.
    static ROOM: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl PidMapper {
    /// `rewrite` on the first `len` bytes of the room, which holds `what`:
    /// its number back, or 0 for an error, kept for
    /// [`PidMapper::fast_error`] (the room too small for `len` is one).
    fn in_room(
        &mut self,
        len: usize,
        what: &str,
        rewrite: impl FnOnce(&mut PidMapper, &mut [u8]) -> Result<u32, Error>,
    ) -> u32 {
        let done = ROOM.with_borrow_mut(|room| match room.get_mut(..len) {
            Some(buf) => rewrite(self, buf),
            None => Err(Error::invalid(format!("no room was made for {what}"))),
        });
        done.unwrap_or_else(|e| {
            self.fast_error = Some(e);
            0
        })
    }
}

#[wasm_bindgen(js_class = PidMapper)]
impl PidMapper {
    /// Names the source of the fast path's next rewrites; checked by each
    /// rewrite, as the checked path checks it.
    #[wasm_bindgen(js_name = __fastSource, skip_typescript)]
    pub fn fast_source(&mut self, source_cluster_id: &str) {
        self.fast_source.set(source_cluster_id);
    }

    /// The address of room for `len` bytes to rewrite, made if needed (an
    /// `OutOfMemory` error if there is none); it stays valid until the
    /// next call of this function that makes more.
    #[wasm_bindgen(js_name = __fastRoom, skip_typescript)]
    pub fn fast_room(len: u32) -> Result<u32, JsError> {
        ROOM.with_borrow_mut(|room| {
            let len = len as usize;
            if room.len() < len {
                room.try_reserve(len - room.len()).map_err(|_| {
                    js_err(Error::OutOfMemory {
                        what: "a copy of the bytes",
                    })
                })?;
                room.resize(len, 0);
            }
            Ok(room.as_ptr() as u32)
        })
    }

    /// Rewrites the first `len` bytes of the room ([`PidMapper::fast_room`])
    /// at `now_ms`, from the source last named, with the options of
    /// `flags` ([`FLAG_STRICT_CRC`], [`FLAG_COMPLETE`], [`FLAG_OUTCOMES`]);
    /// returns the address of the result's numbers (`Done`), or 0 for an
    /// error, which changes nothing and which [`PidMapper::fast_error`]
    /// then throws. (One number back, not a `Result`: wasm-bindgen returns
    /// a `Result` as several values, which JS receives in a new array.)
    #[wasm_bindgen(js_name = __fastRewrite, skip_typescript)]
    pub fn fast_rewrite(&mut self, now_ms: i64, len: u32, flags: u32) -> u32 {
        self.in_room(len as usize, "these bytes", |m, buf| {
            let rewrite = m
                .inner
                .begin(now_ms)
                .rewrite(&m.fast_source, buf, options(flags))?;
            m.done.keep(rewrite, false);
            Ok(m.done.info_address())
        })
    }

    /// [`PidMapper::fast_rewrite`] of a fetch of `len` bytes seen through
    /// the first `slots` header slots in the room (each entry's window and
    /// its length, gathered by JS as `batch::gather_with` gathers them):
    /// the changed batches' new CRCs and producer IDs are written into
    /// their slots' windows, for JS to write back. A strict CRC check,
    /// which needs the records, is an error here; JS never asks for it.
    #[wasm_bindgen(js_name = __fastRewriteHeaders, skip_typescript)]
    pub fn fast_rewrite_headers(&mut self, now_ms: i64, len: u32, slots: u32, flags: u32) -> u32 {
        let size = (slots as usize).saturating_mul(SLOT_BYTES);
        self.in_room(size, "these header slots", |m, buf| {
            let mut headers = HeaderView::new(buf, len as usize)?;
            let mut headers = headers.reborrow();
            let rewrite = m.inner.begin(now_ms).rewrite_headers(
                &m.fast_source,
                &mut headers,
                options(flags),
            )?;
            m.done.keep(rewrite, false);
            Ok(m.done.info_address())
        })
    }

    /// Throws the error of the last fast rewrite that returned 0.
    #[wasm_bindgen(js_name = __fastError, skip_typescript)]
    pub fn fast_error(&mut self) -> Result<(), JsError> {
        let error = self
            .fast_error
            .take()
            .unwrap_or_else(|| Error::invalid("no fast rewrite failed on this mapper".to_owned()));
        Err(js_err(error))
    }

    /// The last fast rewrite's records (`{key, value}` each), taken.
    #[wasm_bindgen(js_name = __fastRecords, skip_typescript)]
    pub fn fast_records(&mut self) -> Result<JsValue, JsError> {
        let records = records_to_js(&self.done.records)?;
        self.done.records.clear();
        Ok(records.into())
    }
}
