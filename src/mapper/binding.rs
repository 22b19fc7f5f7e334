//! One binding and the values it holds: the producer ID as a batch holds
//! it ([`Wire`]), the mapped one, its last-seen time and flags.

/// Flag: a `__mirror_state` record exists for the binding.
pub(crate) const RECORDED: u8 = 1;
/// Flag: a transaction of the producer is open.
pub(crate) const TXN_OPEN: u8 = 2;
/// Flag (in memory only): the open stage saved this binding's state.
pub(crate) const STAGE_SAVED: u8 = 4;
/// The flags a snapshot carries.
pub(crate) const PERSISTED_FLAGS: u8 = RECORDED | TXN_OPEN;
/// `last_seen` of a binding loaded from a record: unknown until the next
/// batch, or until an expiry pass starts its idle clock.
pub(crate) const UNKNOWN_LAST_SEEN: i64 = i64::MIN;

/// A host time as a last-seen time: the one value that means "unknown"
/// counts as the earliest real time instead.
pub(crate) fn seen_at(now_ms: i64) -> i64 {
    now_ms.max(UNKNOWN_LAST_SEEN + 1)
}

/// A PID as a batch holds it: its 8 big-endian bytes read as a
/// little-endian word. The batch path compares, hashes and writes PIDs in
/// this form, with no byte swap (WebAssembly has no instruction for one);
/// everything else reads [`Wire::value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wire(u64);

impl Wire {
    /// The form of `pid`.
    #[inline(always)]
    pub(crate) fn of(pid: i64) -> Wire {
        Wire(u64::from_le_bytes(pid.to_be_bytes()))
    }

    /// The form of a PID's big-endian bytes, as a batch holds them.
    #[inline(always)]
    pub(crate) fn from_bytes(bytes: [u8; 8]) -> Wire {
        Wire(u64::from_le_bytes(bytes))
    }

    /// The PID.
    #[inline(always)]
    pub(crate) fn value(self) -> i64 {
        i64::from_be_bytes(self.0.to_le_bytes())
    }

    /// Its big-endian bytes, as a batch holds them.
    #[inline(always)]
    pub(crate) fn bytes(self) -> [u8; 8] {
        self.0.to_le_bytes()
    }

    /// Whether the PID is a producer's (not below 0): the sign bit is the
    /// top bit of the first byte.
    #[inline(always)]
    pub(crate) fn is_producer(self) -> bool {
        self.0 & 0x80 == 0
    }

    /// The word, for the indexes' hashes.
    #[inline(always)]
    pub(crate) fn word(self) -> u64 {
        self.0
    }
}

/// One binding: 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) pid: Wire,
    pub(crate) mapped: Wire,
    pub(crate) last_seen: i64,
    pub(crate) cluster: u32,
    pub(crate) salt: u8,
    pub(crate) flags: u8,
}

impl Binding {
    /// Whether a transaction of its producer is open.
    #[inline(always)]
    pub(crate) fn is_open(&self) -> bool {
        self.flags & TXN_OPEN != 0
    }

    /// What a position past the end reads as: no producer (PID and mapped
    /// PID -1, no mappable value; a cluster number no name has).
    pub(crate) const VACANT: Binding = Binding {
        pid: Wire(u64::MAX),
        mapped: Wire(u64::MAX),
        last_seen: i64::MIN,
        cluster: u32::MAX,
        salt: 0,
        flags: 0,
    };
}
