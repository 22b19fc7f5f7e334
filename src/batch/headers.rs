//! A fetch seen through its batch headers only: what a host that keeps the
//! records in its own buffers (a JVM broker's `ByteBuffer`s) gathers and
//! hands over, so that a rewrite never copies the records
//! (`docs/ABI.md`, "`mp_rewrite_headers`").
//!
//! The host walks its buffer by batchLength alone and copies the first
//! [`WINDOW`] bytes of each entry into a slot of [`SLOT_BYTES`]:
//!
//! ```text
//! slot  @0 window: the entry's first min(WINDOW, fetch length - entry offset) bytes
//!       @112 i32 window length, written by the host
//!       @116 i32 changed: 1 when the rewrite changed the window, written by the rewrite
//! ```
//!
//! Entry `k + 1` starts at `offset(k) + 12 + batchLength(k)`; the host
//! stops gathering at the end of the fetch, at a window shorter than 12
//! bytes, or at a negative batchLength. Everything else (every check a
//! rewrite makes, which entries are batches, where a truncated tail
//! starts) is decided by the walker from the windows, exactly as it
//! decides it from the whole buffer. A changed window's bytes `[17, 21)`
//! (CRC) and `[43, 51)` (producer ID) go back into the host's buffer at
//! the entry's offset; nothing else changes.

// Without `broker` or `js` no host gathers headers: the view compiles, but
// nothing in the crate makes one.
#![cfg_attr(
    not(any(feature = "broker", feature = "js")),
    allow(dead_code, unused_imports)
)]

use super::{
    PidWrite, CONTROL_KEY_READ, CRC_OFFSET, HEADER_LEN, LENGTH_OFFSET, LOG_OVERHEAD,
    PRODUCER_ID_OFFSET,
};
use crate::error::{Error, Result};

/// Bytes of an entry a slot holds: the v2 header and as much of a control
/// batch's records as deciding its marker can read.
pub const WINDOW: usize = 112;
/// Offset in a slot of the window's length (big-endian i32, the host's).
pub const SLOT_LEN_OFFSET: usize = WINDOW;
/// Offset in a slot of the changed flag (big-endian i32, the rewrite's).
pub const SLOT_CHANGED_OFFSET: usize = WINDOW + 4;
/// Size of one slot.
pub const SLOT_BYTES: usize = WINDOW + 8;

const _: () = assert!(WINDOW >= HEADER_LEN + CONTROL_KEY_READ);
// The changed flag ends the slot (`HeaderView::write_all` finds it there).
const _: () = assert!(SLOT_CHANGED_OFFSET + 4 == SLOT_BYTES);

/// The gathered headers of one fetch: `slots` (a whole number of
/// [`SLOT_BYTES`]) for the first entries of a fetch of `fetch_len` bytes.
#[derive(Debug)]
pub struct HeaderView<'a> {
    slots: &'a mut [u8],
    fetch_len: usize,
}

impl<'a> HeaderView<'a> {
    /// A view of `slots` gathered from a fetch of `fetch_len` bytes; fails
    /// unless `slots` is a whole number of slots.
    pub fn new(slots: &'a mut [u8], fetch_len: usize) -> Result<HeaderView<'a>> {
        if slots.len() % SLOT_BYTES != 0 {
            return Err(Error::invalid(text!(
                "header slots are {} bytes, not a multiple of {SLOT_BYTES}",
                slots.len()
            )));
        }
        Ok(HeaderView { slots, fetch_len })
    }

    /// The same view, borrowed for a shorter time.
    pub fn reborrow(&mut self) -> HeaderView<'_> {
        HeaderView {
            slots: &mut *self.slots,
            fetch_len: self.fetch_len,
        }
    }

    /// The length of the fetch the headers were gathered from.
    #[cfg(feature = "broker")]
    pub fn fetch_len(&self) -> usize {
        self.fetch_len
    }

    /// How many slots there are.
    pub fn slots(&self) -> usize {
        self.slots.len() / SLOT_BYTES
    }

    /// The read-only view the walker reads.
    pub(crate) fn gathered(&self) -> Gathered<'_> {
        Gathered {
            slots: self.slots,
            fetch_len: self.fetch_len,
        }
    }

    /// Makes `writes` in their slots' windows and marks those slots
    /// changed, every other slot unchanged.
    pub(crate) fn write_all(&mut self, writes: &[PidWrite]) {
        if writes.len() == self.slots() {
            // Every slot written (a fetch of mirrored batches): the writes
            // are in slot order, one a slot, so the i-th is slot i's.
            for (w, slot) in writes.iter().zip(self.slots.chunks_exact_mut(SLOT_BYTES)) {
                let (window, rest) = slot.split_at_mut(WINDOW);
                w.apply(window);
                if let Some(f) = rest.last_chunk_mut::<4>() {
                    *f = CHANGED;
                }
            }
            return;
        }
        // One pass: the writes are in slot order, each slot's flag set as
        // it is passed.
        let mut next = 0;
        for (entry, slot) in self.slots.chunks_exact_mut(SLOT_BYTES).enumerate() {
            let Some(slot) = slot.first_chunk_mut::<SLOT_BYTES>() else {
                continue;
            };
            // The window, then the length word and the changed flag.
            let (window, rest) = slot.split_at_mut(WINDOW);
            let mut flag = [0; 4];
            if let Some(w) = writes.get(next).filter(|w| w.entry as usize == entry) {
                w.apply(window);
                flag = CHANGED;
                next += 1;
            }
            if let Some(f) = rest.last_chunk_mut::<4>() {
                *f = flag;
            }
        }
    }
}

/// A slot's length word for a whole window (big-endian).
const FULL: [u8; 4] = (WINDOW as i32).to_be_bytes();

/// A slot's changed flag when set (big-endian 1).
const CHANGED: [u8; 4] = 1i32.to_be_bytes();

/// Gathers the headers of `fetch` into `slots` (cleared first), as a host
/// does (`docs/ABI.md` gives the same loop in prose and Java): a slot per
/// entry, until the end of the fetch, a window shorter than 12 bytes or a
/// negative batchLength, or `max_slots` slots. Returns the entries'
/// offsets, which [`write_back`] needs. (Should memory for the slots run
/// out, it stops there: fewer slots are a valid gather, whose rewrite
/// consumes less.)
#[cfg(feature = "broker")]
pub fn gather(fetch: &[u8], max_slots: usize, slots: &mut Vec<u8>) -> Vec<usize> {
    let mut offsets = Vec::new();
    let read = |pos: usize, dst: &mut [u8]| dst.copy_from_slice(&fetch[pos..pos + dst.len()]);
    // Out of memory: what was gathered so far.
    let _ = gather_with(fetch.len(), max_slots, slots, &mut offsets, read);
    offsets
}

/// [`gather`] from a fetch of `len` bytes held elsewhere (a JS array):
/// `read(pos, window)` fills `window` with the fetch's bytes from `pos`
/// (within the fetch). `offsets` gets the entries' offsets. Fails only when
/// memory for the slots runs out, with what was gathered so far kept.
#[cfg(any(feature = "broker", feature = "js"))]
pub(crate) fn gather_with(
    len: usize,
    max_slots: usize,
    slots: &mut Vec<u8>,
    offsets: &mut Vec<usize>,
    mut read: impl FnMut(usize, &mut [u8]),
) -> Result<()> {
    slots.clear();
    offsets.clear();
    let mut pos = 0usize;
    while pos < len && offsets.len() < max_slots {
        let n = WINDOW.min(len - pos);
        let start = slots.len();
        let no_room = |_| Error::OutOfMemory {
            what: "the header slots",
        };
        slots.try_reserve(SLOT_BYTES).map_err(no_room)?;
        offsets.try_reserve(1).map_err(no_room)?;
        slots.resize(start + SLOT_BYTES, 0);
        read(pos, &mut slots[start..start + n]);
        let held = (n as i32).to_be_bytes();
        slots[start + SLOT_LEN_OFFSET..start + SLOT_LEN_OFFSET + 4].copy_from_slice(&held);
        offsets.push(pos);
        if n < LOG_OVERHEAD {
            break;
        }
        let length = i32::from_be_bytes(super::be(slots, start + LENGTH_OFFSET));
        let Ok(length) = usize::try_from(length) else {
            break;
        };
        pos = pos.saturating_add(LOG_OVERHEAD + length);
    }
    Ok(())
}

/// Each changed slot's entry offset, CRC and producer ID (`offsets` as
/// [`gather`] returned them): the 12 bytes a host writes back at
/// `offset + 17` and `offset + 43` after a header rewrite.
#[cfg(any(feature = "broker", feature = "js"))]
pub(crate) fn changed_slots<'s>(
    slots: &'s [u8],
    offsets: &'s [usize],
) -> impl Iterator<Item = (usize, &'s [u8], &'s [u8])> + 's {
    slots
        .chunks_exact(SLOT_BYTES)
        .zip(offsets)
        .filter(|(slot, _)| slot[SLOT_CHANGED_OFFSET..SLOT_CHANGED_OFFSET + 4] == CHANGED)
        .map(|(slot, &at)| {
            (
                at,
                &slot[CRC_OFFSET..CRC_OFFSET + 4],
                &slot[PRODUCER_ID_OFFSET..PRODUCER_ID_OFFSET + 8],
            )
        })
}

/// Writes each changed slot's CRC and producer ID back into `fetch` at
/// its entry's offset (`offsets` as [`gather`] returned them), as a host
/// does after a header rewrite.
#[cfg(feature = "broker")]
pub fn write_back(slots: &[u8], offsets: &[usize], fetch: &mut [u8]) {
    for (at, crc, pid) in changed_slots(slots, offsets) {
        for (start, bytes) in [(at + CRC_OFFSET, crc), (at + PRODUCER_ID_OFFSET, pid)] {
            // Offsets from another fetch: nothing is written out of it.
            if let Some(dst) = fetch.get_mut(start..start + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        }
    }
}

/// The slots as the walker reads them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gathered<'a> {
    slots: &'a [u8],
    fetch_len: usize,
}

impl<'a> Gathered<'a> {
    /// The fetch's length.
    pub(crate) fn fetch_len(&self) -> usize {
        self.fetch_len
    }

    /// How many slots there are.
    #[inline(always)]
    pub(crate) fn slots(&self) -> usize {
        self.slots.len() / SLOT_BYTES
    }

    /// The window of entry `index` if its slot says it holds a whole one
    /// ([`WINDOW`] bytes): the common case of [`Gathered::window`], for
    /// an entry at least that far from the fetch's end.
    #[inline(always)]
    pub(crate) fn full_window(&self, index: usize) -> Option<&'a [u8; WINDOW]> {
        // The walk asks only for slots it counted (`Gathered::slots`).
        let at = index.wrapping_mul(SLOT_BYTES);
        let slot: &[u8; SLOT_BYTES] = self.slots.get(at..)?.first_chunk()?;
        let (window, held) = slot.split_first_chunk::<WINDOW>()?;
        // One word compared, in the machine's order.
        let held = u32::from_ne_bytes(*held.first_chunk::<4>()?);
        (held == u32::from_ne_bytes(FULL)).then_some(window)
    }

    /// The window of entry `index`, which starts at `offset`: `None` when
    /// the host gathered fewer entries; an error when the slot does not
    /// hold what the layout says it must.
    pub(crate) fn window(&self, index: usize, offset: usize) -> Result<Option<&'a [u8]>> {
        // The slot by its offset, as `set_producer_id` finds it.
        let slot = index
            .checked_mul(SLOT_BYTES)
            .and_then(|at| self.slots.get(at..)?.get(..SLOT_BYTES));
        let Some(slot) = slot else {
            return Ok(None);
        };
        let mut len = [0u8; 4];
        len.copy_from_slice(&slot[SLOT_LEN_OFFSET..SLOT_LEN_OFFSET + 4]);
        let held = i32::from_be_bytes(len);
        let expected = WINDOW.min(self.fetch_len - offset);
        if usize::try_from(held) != Ok(expected) {
            return Err(Error::invalid(text!(
                "header slot {index} says it holds {held} bytes; the entry at byte \
                 {offset} of a {}-byte fetch has {expected} to gather",
                self.fetch_len
            )));
        }
        Ok(Some(&slot[..expected]))
    }
}
