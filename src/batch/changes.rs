//! What a rewrite decides about a fetch before it writes anything: the
//! write of each batch whose PID changes ([`PidWrite`]), collected with
//! what the walk found in [`Changes`], and made once the whole fetch has
//! passed ([`write_all`], `HeaderView::write_all`).

use serde::Serialize;

use super::{be, put, ControlType, CRC_OFFSET, PRODUCER_ID_OFFSET};
use crate::error::Result;
use crate::vec::room;

/// What a rewrite names when there is no memory for its writes.
const RESULTS: &str = "a rewrite's results";

/// What happened to one v2 batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchOutcome {
    /// Byte offset of the batch in the buffer.
    pub offset: usize,
    /// Its baseOffset.
    #[serde(with = "crate::json::i64_str")]
    pub base_offset: i64,
    /// The producer ID it arrived with.
    #[serde(with = "crate::json::i64_str")]
    pub original_pid: i64,
    /// The producer ID it leaves with.
    #[serde(with = "crate::json::i64_str")]
    pub mapped_pid: i64,
    /// The salt of the binding (`None` for PID < 0).
    pub salt: Option<u8>,
    /// Whether the batch is transactional.
    pub transactional: bool,
    /// For a control batch, its marker (`"commit"`, `"abort"` or
    /// `"other"` in JSON).
    pub control: Option<ControlType>,
}

/// A batch's outcome as the walk notes it: the fields of [`BatchOutcome`]
/// as the batch holds them (big-endian) and a byte of flags, so that
/// noting one is a few stores and decoding it ([`Noted::outcome`]) waits
/// for a caller who reads it. Its layout is fixed (`repr(C)`, 32 bytes in
/// WebAssembly): the JS API reads these from the module's memory as they
/// are (`src/js/builders.js`, `outcomes`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Noted {
    /// Byte offset of the batch in the buffer.
    pub(crate) offset: usize,
    /// The binding's salt, meaningful with [`Noted::HAS_SALT`].
    pub(crate) salt: u8,
    /// [`Noted::HAS_SALT`], [`Noted::TRANSACTIONAL`], and the marker in
    /// the bits of [`Noted::MARKER`]: 0 none, 1 abort, 2 commit, 3 other.
    pub(crate) flags: u8,
    /// The control type of an "other" marker.
    pub(crate) other: i16,
    /// baseOffset, the producer ID it arrived with and the one it leaves
    /// with, big-endian.
    pub(crate) base_offset: [u8; 8],
    pub(crate) original_pid: [u8; 8],
    pub(crate) mapped_pid: [u8; 8],
}

// The layouts the JS API reads, as the constants that `src/js/layout.js`
// is generated from state them.
#[cfg(target_arch = "wasm32")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<Noted>() == Noted::BYTES && size_of::<PidWrite>() == PidWrite::BYTES);
    assert!(
        offset_of!(Noted, offset) == Noted::AT_OFFSET && offset_of!(Noted, salt) == Noted::AT_SALT
    );
    assert!(offset_of!(Noted, flags) == Noted::AT_FLAGS);
    assert!(offset_of!(Noted, base_offset) == Noted::AT_BASE_OFFSET);
    assert!(offset_of!(Noted, original_pid) == Noted::AT_ORIGINAL_PID);
    assert!(offset_of!(Noted, mapped_pid) == Noted::AT_MAPPED_PID);
    assert!(offset_of!(PidWrite, entry) == PidWrite::AT_ENTRY);
    assert!(offset_of!(PidWrite, offset) == PidWrite::AT_OFFSET);
};

/// The layout JS reads (`src/js/layout.js` is generated from it), which
/// the asserts above hold to the struct in WebAssembly.
#[allow(dead_code)]
impl Noted {
    /// Its size in WebAssembly, and where each field the JS API reads is
    /// (the offset a little-endian `u32`, the rest as the batch holds them).
    pub(crate) const BYTES: usize = 32;
    pub(crate) const AT_OFFSET: usize = 0;
    pub(crate) const AT_SALT: usize = 4;
    pub(crate) const AT_FLAGS: usize = 5;
    pub(crate) const AT_BASE_OFFSET: usize = 8;
    pub(crate) const AT_ORIGINAL_PID: usize = 16;
    pub(crate) const AT_MAPPED_PID: usize = 24;
}

impl Noted {
    /// The producer ID is not negative, so the binding's salt is the
    /// batch's.
    pub(crate) const HAS_SALT: u8 = 1;
    /// The batch is transactional.
    pub(crate) const TRANSACTIONAL: u8 = 2;
    /// Where the marker's code is: two bits from this one.
    pub(crate) const MARKER_SHIFT: u8 = 2;
    /// The marker's bits.
    pub(crate) const MARKER: u8 = 0b11 << Noted::MARKER_SHIFT;

    /// The outcome of the batch at `offset` whose header is `header`,
    /// which arrived with producer ID `original` and leaves with `mapped`
    /// at `salt`, a control batch with `control`.
    #[inline(always)]
    pub(crate) fn new(
        offset: usize,
        header: &[u8; super::HEADER_LEN],
        original: [u8; 8],
        mapped: [u8; 8],
        salt: u8,
        control: Option<ControlType>,
    ) -> Noted {
        let (marker, other) = match control {
            None => (0, 0),
            Some(ControlType::Abort) => (1, 0),
            Some(ControlType::Commit) => (2, 0),
            Some(ControlType::Other(t)) => (3, t),
        };
        let attributes = i16::from(header[super::ATTRIBUTES_OFFSET + 1]);
        let salted = if original[0] & 0x80 == 0 {
            Noted::HAS_SALT
        } else {
            0
        };
        let transactional = if attributes & super::TRANSACTIONAL != 0 {
            Noted::TRANSACTIONAL
        } else {
            0
        };
        let flags = salted | transactional | marker << Noted::MARKER_SHIFT;
        Noted {
            offset,
            salt,
            flags,
            other,
            base_offset: be(header, super::BASE_OFFSET_OFFSET),
            original_pid: original,
            mapped_pid: mapped,
        }
    }

    /// The outcome, decoded.
    pub(crate) fn outcome(&self) -> BatchOutcome {
        BatchOutcome {
            offset: self.offset,
            base_offset: i64::from_be_bytes(self.base_offset),
            original_pid: i64::from_be_bytes(self.original_pid),
            mapped_pid: i64::from_be_bytes(self.mapped_pid),
            salt: (self.flags & Noted::HAS_SALT != 0).then_some(self.salt),
            transactional: self.flags & Noted::TRANSACTIONAL != 0,
            control: match (self.flags & Noted::MARKER) >> Noted::MARKER_SHIFT {
                0 => None,
                1 => Some(ControlType::Abort),
                2 => Some(ControlType::Commit),
                _ => Some(ControlType::Other(self.other)),
            },
        }
    }
}

/// The bytes of a batch of `size` bytes after its producer ID: what the
/// CRC patch shifts by. A batch is under 2^31 bytes (its batchLength is an
/// i32) and at least a header (a shorter size would wrap, never panic).
#[inline(always)]
pub(crate) fn bytes_after_pid(size: usize) -> u32 {
    (size as u32).wrapping_sub((PRODUCER_ID_OFFSET + 8) as u32)
}

/// A CRC's change ([`crate::crc::Patch::after`]) as a word of the stored
/// CRC's bytes read in the machine's order, to XOR into them without a
/// byte swap (WebAssembly has no instruction for one).
#[inline(always)]
pub(crate) fn crc_word(change: u32) -> u32 {
    u32::from_ne_bytes(change.to_be_bytes())
}

/// One batch's producer ID write, decided but not yet made: a rewrite
/// notes these while it checks a fetch and writes them only once all of
/// it has passed. Its layout is fixed (`repr(C)`, 20 bytes): the JS API
/// reads each write's offset, its second word, from the module's memory
/// (`src/js/builders.js`, `inPlace`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PidWrite {
    /// The batch's entry number (its slot in a [`HeaderView`]).
    pub(crate) entry: u32,
    /// The batch's offset in the fetch.
    pub(crate) offset: u32,
    /// The new producer ID, big-endian.
    pub(crate) pid: [u8; 8],
    /// The CRC's change, as a word of the stored CRC's bytes read in the
    /// machine's order: XORed into them without a byte swap in or out.
    crc_xor: u32,
}

/// The layout JS reads, as for [`Noted`].
#[allow(dead_code)]
impl PidWrite {
    /// Its size in WebAssembly, and where its entry number and its offset
    /// in the fetch are (native-endian `u32`s).
    pub(crate) const BYTES: usize = 20;
    pub(crate) const AT_ENTRY: usize = 0;
    pub(crate) const AT_OFFSET: usize = 4;
}

impl PidWrite {
    /// The write of `pid` into the batch at `offset` (entry `entry`),
    /// whose CRC changes by `crc_xor` ([`crc_word`] of the change).
    #[inline(always)]
    pub(crate) fn new(entry: usize, offset: usize, pid: [u8; 8], crc_xor: u32) -> PidWrite {
        PidWrite {
            entry: entry as u32,
            offset: offset as u32,
            pid,
            crc_xor,
        }
    }

    /// Writes the producer ID and patches the CRC of the batch whose first
    /// bytes (its header at least) are `header`.
    #[inline(always)]
    pub(crate) fn apply(&self, header: &mut [u8]) {
        let stored = u32::from_ne_bytes(be(header, CRC_OFFSET));
        put(header, PRODUCER_ID_OFFSET, self.pid);
        put(header, CRC_OFFSET, (stored ^ self.crc_xor).to_ne_bytes());
    }
}

/// What a rewrite decided about a fetch: the batch writes, what the walk
/// found (bytes consumed, legacy entries passed, each batch's outcome when
/// asked for), and the CRC patch of the last delta kept for the next (old
/// PID XOR new: the same for every producer of a source at one salt,
/// since only the region bits change). Kept by the mapper between calls,
/// so that a call allocates nothing and the patch is reused while the
/// delta repeats.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    writes: Vec<PidWrite>,
    /// Bytes of complete entries.
    pub(crate) consumed: usize,
    /// Legacy (magic 0/1) entries passed untouched.
    pub(crate) legacy_entries: usize,
    /// Each batch's outcome, when asked for, as noted; and room for them
    /// decoded, made before the call commits.
    pub(crate) outcomes: Vec<Noted>,
    pub(crate) decoded: Vec<BatchOutcome>,
    /// The last delta, as a word of the batch's bytes (0, which no write
    /// has, before the first), and its patch.
    delta: u64,
    patch: crate::crc::Patch,
    /// The last length after the PID the patch was shifted by, and the
    /// change it made ([`crc_word`]).
    after: u32,
    change: u32,
}

impl Changes {
    /// Forgets the last call's (a new call), keeping the patch and the
    /// buffers.
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.writes.clear();
        self.consumed = 0;
        self.legacy_entries = 0;
        if !self.outcomes.is_empty() {
            self.outcomes.clear();
        }
    }

    /// The writes, in fetch order.
    #[inline(always)]
    pub(crate) fn writes(&self) -> &[PidWrite] {
        &self.writes
    }

    /// Makes room for every noted outcome decoded, so that
    /// [`Changes::decode`] cannot fail.
    pub(crate) fn reserve_decoded(&mut self) -> Result<()> {
        room(&mut self.decoded, self.outcomes.len(), RESULTS)
    }

    /// The noted outcomes, decoded (in the room [`Changes::reserve_decoded`]
    /// made).
    pub(crate) fn decode(&mut self) -> Vec<BatchOutcome> {
        self.decoded.clear();
        self.decoded
            .extend(self.outcomes.iter().map(Noted::outcome));
        std::mem::take(&mut self.decoded)
    }

    /// Makes room for `n` more writes.
    #[inline(always)]
    pub(crate) fn reserve(&mut self, n: usize) -> Result<()> {
        room(&mut self.writes, n, RESULTS)
    }

    /// Notes that the batch at `offset` (entry `entry`) of `size` bytes
    /// has its PID `old` written as `new`, having made room for it unless
    /// [`Changes::reserve`] made it already (`reserved`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn note(
        &mut self,
        entry: usize,
        offset: usize,
        old: [u8; 8],
        new: [u8; 8],
        size: usize,
        reserved: bool,
    ) -> Result<()> {
        let change = self.change(old, new, size);
        if !reserved {
            self.reserve(1)?;
        }
        self.writes.push(PidWrite::new(entry, offset, new, change));
        Ok(())
    }

    /// The CRC change of a batch of `size` bytes whose PID goes from `old`
    /// to `new`.
    #[inline(always)]
    fn change(&mut self, old: [u8; 8], new: [u8; 8], size: usize) -> u32 {
        let delta = u64::from_le_bytes(old) ^ u64::from_le_bytes(new);
        let after = bytes_after_pid(size);
        if delta != self.delta || after != self.after {
            self.recompute(old, new, delta, after);
        }
        self.change
    }

    /// [`Changes::change`] when the delta or the length is new. Out of line
    /// in the module: the multiplications it may take keep every function
    /// of the batch path one a JVM's JIT compiles (Chicory makes each a
    /// method).
    #[cfg_attr(target_family = "wasm", inline(never))]
    fn recompute(&mut self, old: [u8; 8], new: [u8; 8], delta: u64, after: u32) {
        if delta != self.delta {
            self.patch = crate::crc::Patch::new(old, new);
        }
        self.delta = delta;
        let patch = self.patch;
        self.after = after;
        self.change = crc_word(patch.after(after));
    }
}

/// Makes `writes` in a fetch's bytes (each batch at its offset).
pub(crate) fn write_all(writes: &[PidWrite], buf: &mut [u8]) {
    for w in writes {
        match buf.get_mut(w.offset as usize..) {
            Some(header) => w.apply(header),
            None => {
                crate::error::invariant_broken("a write past the fetch's end", &());
            }
        }
    }
}
