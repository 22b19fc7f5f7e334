//! Walking a buffer of concatenated batches, as a Fetch response returns
//! them: each complete entry, or where the buffer is truncated or broken.

use super::headers::Gathered;
use super::{
    be, Batch, HeaderView, LOG_OVERHEAD, MAGIC_OFFSET, MIN_BATCH_LENGTH, MIN_LEGACY_LENGTH,
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

/// Walks a buffer of concatenated batches, as a Fetch response returns them,
/// or the same fetch through its gathered headers ([`HeaderView`]): one
/// walker, so both see the same entries, errors and tail.
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

    /// A walker over a fetch's gathered headers (a truncated tail is
    /// allowed unless `complete`). Its batches hold their windows only.
    pub fn headers(view: &'a HeaderView<'_>, complete: bool) -> Batches<'a> {
        Batches {
            src: Source::Headers(view.gathered()),
            complete,
            ..Batches::new(&[])
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

    // Out of line in the module: inlined, it made the batch loop a method so
    // large that a JVM's C2 stopped inlining the runtime's memory helpers
    // into it (docs/PERFORMANCE.md, "Keeping the batch loop small").
    #[cfg_attr(target_family = "wasm", inline(never))]
    fn next_entry(&mut self) -> Result<Option<Entry<'a>>> {
        let offset = self.pos;
        // `rest`: the entry's bytes from here (a header's window of them);
        // `available`: how many the fetch has from here.
        let (rest, available) = match self.src {
            Source::Buffer(buf) => match buf.get(offset..) {
                Some(rest) => (rest, rest.len()),
                None => return Ok(None),
            },
            Source::Headers(h) => {
                let available = h.fetch_len() - offset;
                if available == 0 {
                    return Ok(None);
                }
                match h.window(self.index, offset)? {
                    Some(window) => (window, available),
                    None => return Ok(None),
                }
            }
        };
        if available == 0 {
            return Ok(None);
        }
        let overrun = |needed: usize| Error::BatchOverrun {
            offset,
            needed,
            available,
        };
        if available <= MAGIC_OFFSET {
            return if self.complete {
                Err(overrun(MAGIC_OFFSET + 1))
            } else {
                Ok(None)
            };
        }
        let length = i32::from_be_bytes(be(rest, 8));
        // A header's window holds the magic of every entry it has.
        let Some(&magic) = rest.get(MAGIC_OFFSET) else {
            return Err(overrun(MAGIC_OFFSET + 1));
        };
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
            return if self.complete {
                Err(overrun(size))
            } else {
                Ok(None)
            };
        }
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

    // Natively inlined into the batch loop (as `Batch::control_type`).
    #[cfg_attr(not(target_family = "wasm"), inline)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = self.next_entry();
        self.failed = next.is_err();
        next.transpose()
    }
}
