//! The rewrites of `PidMapper` beyond its fast path: the options read, the
//! header windows gathered where that pays, and the call made on the
//! mapper's scratch or on the caller's own array.

use super::*;

/// From this many bytes, the checked path (`rewriteBatches`, and
/// `rewriteBatchesInPlace` beside its fast path) copies only each batch's
/// header window into the module, and 12 bytes a changed batch back
/// (`mp_rewrite_headers`' way), whatever the batches' size, so that no
/// mapper keeps a copy of a larger fetch between calls. Below it, it does
/// so only where the batches are large on average (`fast::WINDOWS_FROM`).
pub(super) const HEADERS_FROM: usize = 64 << 10;

/// How the checked path gathers the header windows of the caller's array.
#[derive(Debug, Clone, Copy)]
pub(super) enum Gathering {
    /// By the builders in one call, into this many slots.
    Builders(u32),
    /// A call into JS a window (no builders).
    Calls,
}

impl PidMapper {
    /// How the checked path gathers the header windows of `view` (from
    /// [`HEADERS_FROM`] bytes, and with the builders also where the batches are
    /// large on average), or `None` where it copies every byte instead (always
    /// for a strict CRC check, which needs the records).
    pub(super) fn gathering(view: &Uint8Array, opts: RewriteOptions) -> Option<Gathering> {
        if opts.strict_crc {
            return None;
        }
        let large = view.length() as usize >= HEADERS_FROM;
        match build::with(|b| b.slots_of(view, large)) {
            Some(0) => None,
            Some(slots) => Some(Gathering::Builders(slots)),
            None => large.then_some(Gathering::Calls),
        }
    }

    /// The options of both rewrites (`RewriteOptions` in `types.d.ts`).
    pub(super) fn rewrite_options(options: Option<JsValue>) -> Result<RewriteOptions, JsError> {
        let o: RewriteOpts = args::options(
            options.unwrap_or(JsValue::UNDEFINED),
            "rewriteBatches options",
        )?;
        Ok(RewriteOptions {
            strict_crc: o.strict_crc,
            complete: o.complete,
            outcomes: o.outcomes,
        })
    }

    /// Both rewrites' copying path: the fetch copied into `scratch`,
    /// rewritten there, its result in `done`.
    pub(super) fn rewrite_scratch(
        &mut self,
        source: &str,
        now: i64,
        opts: RewriteOptions,
    ) -> Result<(), JsError> {
        let rewrite = self
            .inner
            .begin(now)
            .rewrite(source, &mut self.scratch, opts)
            .map_err(js_err)?;
        self.done.keep(rewrite, true);
        Ok(())
    }

    /// `rewriteBatchesInPlace` of a fetch through its headers: each entry's
    /// window read from `view` (the caller's array, read through the
    /// intrinsic getters) into a slot ([`Gathering`]), the
    /// slots rewritten (the same checks, mappings, records and outcomes as
    /// on the whole fetch, `Mapper::rewrite_headers_into`), and each
    /// changed batch's CRC and producer ID written into the array. A
    /// strict CRC check needs the records, so it takes the copying path.
    pub(super) fn rewrite_headers_in_place(
        &mut self,
        source: &str,
        view: &Uint8Array,
        now: i64,
        opts: RewriteOptions,
        gathering: Gathering,
    ) -> Result<(), JsError> {
        let len = view.length() as usize;
        let by_builders = match gathering {
            Gathering::Builders(slots) => {
                let size = (slots as usize).saturating_mul(SLOT_BYTES);
                self.slots.clear();
                self.slots.try_reserve(size).map_err(|_| {
                    js_err(crate::Error::OutOfMemory {
                        what: "the header slots",
                    })
                })?;
                self.slots.resize(size, 0);
                let base = self.slots.as_mut_ptr() as u32;
                let filled = build::with(|b| b.gather(view, base, slots)).ok_or_else(|| {
                    convert::invalid("the builders that counted the slots are gone".to_owned())
                })?;
                self.slots.truncate(filled as usize * SLOT_BYTES);
                true
            }
            Gathering::Calls => {
                let read = |pos: usize, window: &mut [u8]| {
                    view.subarray(pos as u32, (pos + window.len()) as u32)
                        .copy_to(window)
                };
                gather_with(len, usize::MAX, &mut self.slots, &mut self.offsets, read)
                    .map_err(js_err)?;
                false
            }
        };
        let mut headers = HeaderView::new(&mut self.slots, len).map_err(js_err)?;
        let mut headers = headers.reborrow();
        let rewrite = self
            .inner
            .begin(now)
            .rewrite_headers(source, &mut headers, opts)
            .map_err(js_err)?;
        self.done.keep(rewrite, true);
        if by_builders {
            // The builders that gathered the slots, with no JS run since.
            let (info, base) = (self.done.info_address(), self.slots.as_ptr() as u32);
            build::with(|b| b.write_back(view, info, base));
            return Ok(());
        }
        for (at, crc, pid) in changed_slots(&self.slots, &self.offsets) {
            for (start, part) in [(at + CRC_OFFSET, crc), (at + PRODUCER_ID_OFFSET, pid)] {
                view.subarray(start as u32, (start + part.len()) as u32)
                    .copy_from(part);
            }
        }
        Ok(())
    }

    /// `rewriteBatchesInPlace` once its source, time and options are read:
    /// the bytes checked, then rewritten through their headers or on a
    /// copy.
    pub(super) fn in_place(
        &mut self,
        source: (JsValue, String),
        bytes: &JsValue,
        now: i64,
        opts: RewriteOptions,
    ) -> Result<JsValue, JsError> {
        let Some(array) = bytes.dyn_ref::<Uint8Array>() else {
            return Err(convert::invalid("bytes must be a Uint8Array".to_owned()));
        };
        let view = args::plain_view(array)?;
        let bytes: &Uint8Array = bytes.unchecked_ref();
        // Whether the rewrite ran on a copy, which then goes back.
        let headers = view
            .as_ref()
            .and_then(|v| Some((v, Self::gathering(v, opts)?)));
        let copied = match headers {
            Some((v, gathering)) => self
                .rewrite_headers_in_place(&source.1, v, now, opts, gathering)
                .map(|()| false),
            None => args::copy_view(view.as_ref(), &mut self.scratch)
                .and_then(|()| self.rewrite_scratch(&source.1, now, opts))
                .map(|()| true),
        };
        self.source.keep(source);
        // Only what was consumed changed (the rest is a truncated tail); the
        // header path wrote the batches' CRCs and PIDs already.
        let copy = match copied? {
            true => &self.scratch[..self.done.consumed()],
            false => &[][..],
        };
        let out = convert::Output::InPlace {
            bytes,
            view: view.as_ref(),
            copy,
        };
        convert::rewrite_to_js(out, &mut self.done)
    }

    pub(super) fn wrap(inner: Mapper) -> PidMapper {
        PidMapper {
            inner,
            done: build::Done::default(),
            scratch: Vec::new(),
            slots: Vec::new(),
            offsets: Vec::new(),
            source: args::LastSource::default(),
            fast_source: KnownSource::new(),
            fast_error: None,
        }
    }
}
