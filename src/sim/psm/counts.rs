//! What the model counts: silent corruptions and refusals, by kind, and
//! each incident said in words.

use serde::Serialize;

/// The silent corruptions mirrorpid exists to prevent, counted per
/// partition. Serialised with its `total`, so no reader adds it up again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Corruption {
    /// PIDs used by more than one true producer at this partition.
    pub shared_pids: u32,
    /// Batches accepted whose sequence does not follow the entry's last
    /// sequence, because the entry was another producer's.
    pub wrong_sequence_accepted: u32,
    /// Batches accepted with an epoch below the entry's (another producer's).
    pub lower_epoch_accepted: u32,
    /// COMMIT/ABORT markers that closed another producer's transaction.
    pub foreign_marker: u32,
    /// Batches of an idempotent producer whose PID is negative: the producer
    /// state ignores them (no dedup, no transaction tracking).
    pub psm_bypass: u32,
    /// Local writes Kafka acknowledged and did not write, taking them for
    /// retries of another producer's batch under the same PID, epoch and
    /// sequences.
    pub lost_as_duplicate: u32,
    /// Batches that reached the partition by a second path (a diamond) and
    /// were written again: follower appends are not deduplicated, so
    /// consumers read them twice.
    pub written_twice: u32,
}

impl Serialize for Corruption {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Corruption", 8)?;
        out.serialize_field("sharedPids", &self.shared_pids)?;
        out.serialize_field("wrongSequenceAccepted", &self.wrong_sequence_accepted)?;
        out.serialize_field("lowerEpochAccepted", &self.lower_epoch_accepted)?;
        out.serialize_field("foreignMarker", &self.foreign_marker)?;
        out.serialize_field("psmBypass", &self.psm_bypass)?;
        out.serialize_field("lostAsDuplicate", &self.lost_as_duplicate)?;
        out.serialize_field("writtenTwice", &self.written_twice)?;
        out.serialize_field("total", &self.total())?;
        out.end()
    }
}

/// One kind of silent corruption (the field names of [`Corruption`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// A PID used by a second true producer.
    SharedPids,
    /// A sequence that does not follow another producer's last one, accepted.
    WrongSequenceAccepted,
    /// An epoch below another producer's, accepted.
    LowerEpochAccepted,
    /// A marker closing another producer's transaction.
    ForeignMarker,
    /// An idempotent producer's batch with a negative PID.
    PsmBypass,
    /// A local write acknowledged as a duplicate of another producer's.
    LostAsDuplicate,
    /// A second path's copy written again.
    WrittenTwice,
    /// Refused (loud): a sequence that does not follow, on a local produce.
    OutOfOrderSequence,
    /// Refused (loud): an epoch below the entry's, on a local produce.
    InvalidProducerEpoch,
    /// Refused (loud): a non-transactional batch under a PID with an open
    /// transaction; a mirror stalls on it.
    InvalidTxnState,
}

impl Kind {
    /// Whether Kafka says so (the append fails) rather than accepting it
    /// silently.
    pub fn is_refusal(self) -> bool {
        matches!(
            self,
            Kind::OutOfOrderSequence | Kind::InvalidProducerEpoch | Kind::InvalidTxnState
        )
    }
}

/// One silent corruption as it happened, said in a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incident {
    /// What kind.
    pub kind: Kind,
    /// What went wrong in the producer state, e.g. "b5's batch with
    /// sequence 0 accepted as a5's producer 5 after sequence 1".
    pub text: String,
}

impl Corruption {
    /// Counts one corruption of `kind` (a refusal is counted in
    /// [`Refusals`] instead).
    pub fn count(&mut self, kind: Kind) {
        match kind {
            Kind::SharedPids => self.shared_pids += 1,
            Kind::WrongSequenceAccepted => self.wrong_sequence_accepted += 1,
            Kind::LowerEpochAccepted => self.lower_epoch_accepted += 1,
            Kind::ForeignMarker => self.foreign_marker += 1,
            Kind::PsmBypass => self.psm_bypass += 1,
            Kind::LostAsDuplicate => self.lost_as_duplicate += 1,
            Kind::WrittenTwice => self.written_twice += 1,
            Kind::OutOfOrderSequence | Kind::InvalidProducerEpoch | Kind::InvalidTxnState => {}
        }
    }

    /// The sum of all kinds.
    pub fn total(&self) -> u32 {
        self.shared_pids
            + self.wrong_sequence_accepted
            + self.lower_epoch_accepted
            + self.foreign_marker
            + self.psm_bypass
            + self.lost_as_duplicate
            + self.written_twice
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Corruption) {
        self.shared_pids += other.shared_pids;
        self.wrong_sequence_accepted += other.wrong_sequence_accepted;
        self.lower_epoch_accepted += other.lower_epoch_accepted;
        self.foreign_marker += other.foreign_marker;
        self.psm_bypass += other.psm_bypass;
        self.lost_as_duplicate += other.lost_as_duplicate;
        self.written_twice += other.written_twice;
    }
}

/// The appends Kafka refused at a partition, loudly: a producer's
/// application sees an error (a local write is lost unless it retries), and
/// a mirror stalls. Serialised with its `total`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refusals {
    /// `OutOfOrderSequenceException` on local produces.
    pub out_of_order_sequence: u32,
    /// `InvalidProducerEpochException` on local produces.
    pub invalid_producer_epoch: u32,
    /// `InvalidTxnStateException`, local or mirrored (a stall).
    pub invalid_txn_state: u32,
}

impl Serialize for Refusals {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Refusals", 4)?;
        out.serialize_field("outOfOrderSequence", &self.out_of_order_sequence)?;
        out.serialize_field("invalidProducerEpoch", &self.invalid_producer_epoch)?;
        out.serialize_field("invalidTxnState", &self.invalid_txn_state)?;
        out.serialize_field("total", &self.total())?;
        out.end()
    }
}

impl Refusals {
    /// Counts one refusal of `kind` (anything else is not a refusal).
    pub fn count(&mut self, kind: Kind) {
        match kind {
            Kind::OutOfOrderSequence => self.out_of_order_sequence += 1,
            Kind::InvalidProducerEpoch => self.invalid_producer_epoch += 1,
            Kind::InvalidTxnState => self.invalid_txn_state += 1,
            _ => {}
        }
    }

    /// The sum of all kinds.
    pub fn total(&self) -> u32 {
        self.out_of_order_sequence + self.invalid_producer_epoch + self.invalid_txn_state
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Refusals) {
        self.out_of_order_sequence += other.out_of_order_sequence;
        self.invalid_producer_epoch += other.invalid_producer_epoch;
        self.invalid_txn_state += other.invalid_txn_state;
    }
}
