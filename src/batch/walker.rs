//! Walking a buffer of concatenated batches, as a Fetch response returns
//! them: each complete entry, or where the buffer is truncated or broken.

use super::headers::Gathered;
use super::{
    be, Batch, HeaderView, HEADER_LEN, LENGTH_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET, MIN_BATCH_LENGTH,
    MIN_LEGACY_LENGTH, WINDOW,
};
use crate::error::{Error, Result};

/// One entry of a batch buffer.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    /// A magic-v2 record batch.
    Batch {
        /// Byte offset in the buffer.
        offset: usize,
        /// The batch.
        batch: Batch<'a>,
    },
    /// A magic 0 or 1 message set entry: no producer ID, passed untouched.
    Legacy {
        /// Byte offset in the buffer.
        offset: usize,
        /// Its magic (0 or 1).
        magic: i8,
        /// Its size in bytes.
        len: usize,
    },
}

/// Where a walk reads entries from: a fetch's bytes, or its gathered
/// headers. Both give the same entries, errors and tail, since the step
/// that decides them ([`step`]) is one.
pub(crate) trait Entries<'a>: Copy {
    /// The entry at byte `offset` of the fetch, the walk's `index`-th:
    /// its bytes from there as far as they are here (all of them, or its
    /// header's window), and how many bytes the fetch has from there.
    /// `None` where the fetch, or what was gathered of it, ends.
    fn at(self, index: usize, offset: usize) -> Result<Option<(&'a [u8], usize)>>;

    /// Whether there is an entry at `offset`, the walk's `index`-th, to
    /// ask [`Entries::at`] for: exactly when it would not say `None` at
    /// once.
    fn more(self, index: usize, offset: usize) -> bool;

    /// The common case of [`Entries::at`] and [`step`] together: the
    /// entry at `offset` when it is a whole v2 batch, its header held in
    /// full (its bytes from there, at least [`HEADER_LEN`], and its size).
    /// `None` for anything else (the end, a tail, a legacy entry, an
    /// error), which the two decide.
    fn batch(self, index: usize, offset: usize) -> Option<(&'a [u8], usize)>;

    /// The most batches a walk can find, when few enough that a call makes
    /// room for all of their changes before it starts (a header slot
    /// each), instead of one batch at a time.
    fn most(self) -> Option<usize>;
}

/// The size of the v2 batch whose header is `h`, if its magic is 2, its
/// batchLength legal, and it fits in the `available` bytes: what [`step`]
/// decides for a whole v2 batch, with no error to build.
#[inline(always)]
fn v2_size(h: &[u8; HEADER_LEN], available: usize) -> Option<usize> {
    let length = i32::from_be_bytes(be(h, LENGTH_OFFSET));
    // Wrapping: a negative batchLength makes a size that is never used, as
    // the length test below refuses it, where a checked add would panic.
    let size = LOG_OVERHEAD.wrapping_add(length as usize);
    (h[MAGIC_OFFSET] == 2 && length >= MIN_BATCH_LENGTH && size <= available).then_some(size)
}

impl<'a> Entries<'a> for &'a [u8] {
    #[inline(always)]
    fn at(self, _: usize, offset: usize) -> Result<Option<(&'a [u8], usize)>> {
        Ok(match self.get(offset..) {
            Some(rest) if !rest.is_empty() => Some((rest, rest.len())),
            _ => None,
        })
    }

    #[inline(always)]
    fn more(self, _: usize, offset: usize) -> bool {
        offset < self.len()
    }

    #[inline(always)]
    fn batch(self, _: usize, offset: usize) -> Option<(&'a [u8], usize)> {
        let rest = self.get(offset..)?;
        Some((rest, v2_size(rest.first_chunk()?, rest.len())?))
    }

    /// None: a fetch's bytes may hold one batch of many megabytes, for which
    /// room for as many batches as could fit would be wasted.
    #[inline(always)]
    fn most(self) -> Option<usize> {
        None
    }
}

impl<'a> Entries<'a> for Gathered<'a> {
    #[inline(always)]
    fn at(self, index: usize, offset: usize) -> Result<Option<(&'a [u8], usize)>> {
        let available = self.fetch_len() - offset;
        if available == 0 {
            return Ok(None);
        }
        Ok(self.window(index, offset)?.map(|w| (w, available)))
    }

    #[inline(always)]
    fn more(self, index: usize, offset: usize) -> bool {
        offset < self.fetch_len() && index < self.slots()
    }

    #[inline(always)]
    fn batch(self, index: usize, offset: usize) -> Option<(&'a [u8], usize)> {
        let available = self.fetch_len() - offset;
        if available < WINDOW {
            return None;
        }
        let window = self.full_window(index)?;
        Some((window, v2_size(window.first_chunk()?, available)?))
    }

    #[inline(always)]
    fn most(self) -> Option<usize> {
        Some(self.slots())
    }
}

/// What [`step`] found at an offset.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    /// The entry's magic: 2 for a batch, 0 or 1 for a legacy entry.
    pub(crate) magic: i8,
    /// The entry's size in bytes.
    pub(crate) size: usize,
}

/// The one decision of a walk: what the entry at `offset` is, given its
/// bytes from there (`rest`, possibly only a window of them) and the
/// fetch's bytes from there (`available`). `None` at a truncated tail
/// (an error instead when the input is `complete`).
#[inline(always)]
pub(crate) fn step(
    rest: &[u8],
    offset: usize,
    available: usize,
    complete: bool,
) -> Result<Option<Step>> {
    let overrun = |needed: usize| Error::BatchOverrun {
        offset,
        needed,
        available,
    };
    if available <= MAGIC_OFFSET {
        return if complete {
            Err(overrun(MAGIC_OFFSET + 1))
        } else {
            Ok(None)
        };
    }
    // A window holds the magic of every entry it has.
    let Some(&magic) = rest.get(MAGIC_OFFSET) else {
        return Err(overrun(MAGIC_OFFSET + 1));
    };
    let length = i32::from_be_bytes(be(rest, LENGTH_OFFSET));
    let magic = magic as i8;
    let min = match magic {
        2 => MIN_BATCH_LENGTH,
        0 | 1 => MIN_LEGACY_LENGTH,
        _ => return Err(Error::UnknownMagic { offset, magic }),
    };
    if length < min {
        return Err(Error::BatchTooShort { offset, length });
    }
    let size = LOG_OVERHEAD + length as usize;
    if size > available {
        return if complete {
            Err(overrun(size))
        } else {
            Ok(None)
        };
    }
    Ok(Some(Step { magic, size }))
}

/// Walks a buffer of concatenated batches, as a Fetch response returns them,
/// or the same fetch through its gathered headers (`HeaderView`): one
/// step for both, so both see the same entries, errors and tail.
///
/// Yields every complete entry; stops at a truncated trailing batch (normal
/// at the end of a fetch) or, when the input is declared complete, reports
/// it as [`Error::BatchOverrun`]. [`Batches::consumed`] tells how many bytes
/// the complete entries cover. Walking headers, it also stops where the
/// host gathered no more entries.
#[derive(Debug, Clone)]
pub struct Batches<'a> {
    src: Source<'a>,
    pos: usize,
    /// How many entries were yielded (a header view's slot index).
    index: usize,
    complete: bool,
    failed: bool,
}

/// What a walker reads.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    /// The whole fetch.
    Buffer(&'a [u8]),
    /// Its gathered headers.
    Headers(Gathered<'a>),
}

impl<'a> Batches<'a> {
    /// A walker over a fetch's bytes (a truncated tail is allowed).
    pub fn new(buf: &'a [u8]) -> Batches<'a> {
        Batches {
            src: Source::Buffer(buf),
            pos: 0,
            index: 0,
            complete: false,
            failed: false,
        }
    }

    broker_api! {
        /// A walker over a fetch's gathered headers (a truncated tail is
        /// allowed unless `complete`). Its batches hold their windows only.
        pub fn headers(view: &'a HeaderView<'_>, complete: bool) -> Batches<'a> {
            Batches {
                src: Source::Headers(view.gathered()),
                complete,
                ..Batches::new(&[])
            }
        }
    }

    /// A walker over input that must end on a batch boundary (a produce
    /// request, a file): a truncated tail is an error.
    pub fn complete(buf: &'a [u8]) -> Batches<'a> {
        Batches {
            complete: true,
            ..Batches::new(buf)
        }
    }

    /// Bytes covered by the entries yielded so far.
    pub fn consumed(&self) -> usize {
        self.pos
    }

    /// How many entries were yielded so far.
    pub fn entries(&self) -> usize {
        self.index
    }

    fn next_entry(&mut self) -> Result<Option<Entry<'a>>> {
        let offset = self.pos;
        let found = match self.src {
            Source::Buffer(buf) => buf.at(self.index, offset)?,
            Source::Headers(h) => h.at(self.index, offset)?,
        };
        let Some((rest, available)) = found else {
            return Ok(None);
        };
        let Some(Step { magic, size }) = step(rest, offset, available, self.complete)? else {
            return Ok(None);
        };
        self.pos += size;
        self.index += 1;
        Ok(Some(if magic == 2 {
            Entry::Batch {
                offset,
                batch: Batch::new(&rest[..size.min(rest.len())], size),
            }
        } else {
            Entry::Legacy {
                offset,
                magic,
                len: size,
            }
        }))
    }
}

impl<'a> Iterator for Batches<'a> {
    type Item = Result<Entry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = self.next_entry();
        self.failed = next.is_err();
        next.transpose()
    }
}
