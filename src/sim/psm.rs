//! A small model of Kafka's producer state (ProducerStateManager) at one
//! partition, used by the simulator to count the seed's silent corruptions
//! and the appends Kafka refuses. Its rules are Kafka 4.4's
//! (`ProducerAppendInfo`), and `jvm/kafka` checks them against Kafka's own
//! log (`docs/KAFKA.md`):
//!
//! * Kafka tracks state per PID, and only for `pid > -1`.
//! * A mirrored batch is appended with origin REPLICATION: no epoch or
//!   sequence check and no duplicate check, so a batch continues whatever
//!   entry its PID has, and a copy that arrives by a second path is written
//!   again. A COMMIT or ABORT closes whatever transaction is open.
//! * A local produce is appended with origin CLIENT: a lower epoch is
//!   refused (`InvalidProducerEpochException`), a sequence that does not
//!   follow (or a new epoch not starting at 0) is refused
//!   (`OutOfOrderSequenceException`), and a batch matching the entry's last
//!   batch is taken for a retry: acknowledged, and not written.
//! * On every origin, a non-transactional batch under a PID with an open
//!   transaction is refused (`InvalidTxnStateException`); for a mirror that
//!   is a stall until the transaction ends.
//!
//! The model knows what Kafka cannot, the true producer behind each batch,
//! and counts every batch Kafka accepts silently although the entry belongs
//! to another producer, every write lost silently, and every refusal.

use std::collections::{BTreeMap, BTreeSet};

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

/// How Kafka appends a batch (`AppendOrigin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A produce request to the leader: checked and deduplicated.
    Client,
    /// A mirrored (follower) append: not checked.
    Replication,
}

/// What became of one append.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Everything it caused, silent corruptions and refusals, in order.
    pub incidents: Vec<Incident>,
    /// Whether the batch is in the log now (refused and duplicate batches
    /// are not).
    pub written: bool,
}

/// What a batch is, beyond its bytes: who really wrote it, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended<'a> {
    /// The true producer (a name unique in the topology).
    pub owner: &'a str,
    /// Whether the true producer is idempotent (had a PID >= 0).
    pub idempotent: bool,
    /// The PID in the batch as appended here.
    pub pid: i64,
    /// producerEpoch.
    pub epoch: i16,
    /// baseSequence.
    pub base_sequence: i32,
    /// Records in the batch (the last sequence is base + count - 1).
    pub count: i32,
    /// A transactional data batch.
    pub transactional: bool,
    /// A COMMIT or ABORT marker.
    pub marker: bool,
    /// For a marker: COMMIT (else ABORT).
    pub commit: bool,
    /// Which batch this is, the same on every path (a copy has its
    /// original's serial).
    pub serial: u64,
    /// How Kafka appends it.
    pub origin: Origin,
    /// The append time.
    pub now_ms: i64,
}

#[derive(Debug, Clone)]
struct Entry {
    owner: String,
    epoch: i16,
    last_sequence: i32,
    /// The sequences of the entry's last batches at its epoch (Kafka keeps
    /// five), for CLIENT's duplicate check.
    batches: Vec<(i32, i32)>,
    txn_owner: Option<String>,
    /// Records written in the open transaction, per true producer.
    txn_records: BTreeMap<String, u32>,
    last_seen: i64,
}

/// Producer state at one partition.
#[derive(Debug, Clone, Default)]
pub struct ProducerState {
    entries: BTreeMap<i64, Entry>,
    owners: BTreeMap<i64, BTreeSet<String>>,
    /// Every batch written here, by serial: a second path's copy is known.
    seen: BTreeSet<u64>,
    /// What was counted so far.
    pub corruption: Corruption,
    /// What Kafka refused so far.
    pub refusals: Refusals,
    /// Copies a host dropped before appending (mirrorpid's loop does):
    /// not a corruption.
    pub duplicates: u32,
}

impl ProducerState {
    /// Whether the batch `serial` is already in this log: a copy arriving
    /// by another path.
    pub fn holds(&self, serial: u64) -> bool {
        self.seen.contains(&serial)
    }

    /// Counts a copy a host dropped before appending it.
    pub fn drop_copy(&mut self) {
        self.duplicates += 1;
    }

    /// Whether Kafka would refuse a data batch (not `transactional`) under
    /// `pid` now because a transaction is open on it: a mirror holding such
    /// a batch retries once this is false.
    pub fn blocks(&self, pid: i64, transactional: bool) -> bool {
        !transactional
            && self
                .entries
                .get(&pid)
                .is_some_and(|e| e.txn_owner.is_some())
    }

    /// Appends one batch as Kafka would; returns what it caused (also
    /// counted in [`ProducerState::corruption`] and
    /// [`ProducerState::refusals`]) and whether it was written.
    pub fn append(&mut self, b: &Appended<'_>) -> Outcome {
        let mut found = Vec::new();
        let report = |found: &mut Vec<Incident>, kind: Kind, text: String| {
            found.push(Incident { kind, text })
        };
        let who = b.owner;
        let pid = b.pid;
        let copy = self.seen.contains(&b.serial);
        let last = b.base_sequence.wrapping_add(b.count.max(1) - 1);
        if pid < 0 {
            if b.idempotent {
                report(
                    &mut found,
                    Kind::PsmBypass,
                    format!(
                        "{who}'s batch carries PID {pid}: the producer state ignores it \
                         (no sequence, epoch or transaction check)"
                    ),
                );
            }
            if copy && !b.marker {
                report(&mut found, Kind::WrittenTwice, twice(who, b.base_sequence));
            }
            self.seen.insert(b.serial);
            return self.counted(found, true);
        }
        if let Some(e) = self.entries.get(&pid) {
            // Kafka's order: the duplicate check (CLIENT only), then the
            // producer-state checks.
            if b.origin == Origin::Client
                && !b.marker
                && b.epoch == e.epoch
                && e.batches.contains(&(b.base_sequence, last))
            {
                if e.owner != who {
                    report(
                        &mut found,
                        Kind::LostAsDuplicate,
                        format!(
                            "{who}'s write is acknowledged and not written: Kafka takes it for a \
                             retry of {}'s batch with PID {pid}, epoch {} and sequence {}",
                            e.owner, b.epoch, b.base_sequence
                        ),
                    );
                }
                return self.counted(found, false);
            }
            if let Some(refusal) = refusal(b, e) {
                report(&mut found, refusal.0, refusal.1);
                return self.counted(found, false);
            }
        }
        self.seen.insert(b.serial);
        let owners = self.owners.entry(pid).or_default();
        if owners.insert(who.to_owned()) && owners.len() == 2 {
            let first = owners
                .iter()
                .find(|o| *o != who)
                .cloned()
                .unwrap_or_default();
            report(
                &mut found,
                Kind::SharedPids,
                format!("{who} writes as PID {pid}, which {first} already uses: one producer where there are two"),
            );
        }
        if copy && !b.marker {
            report(&mut found, Kind::WrittenTwice, twice(who, b.base_sequence));
        }
        let Some(e) = self.entries.get_mut(&pid) else {
            let mut txn_records = BTreeMap::new();
            if b.transactional {
                txn_records.insert(who.to_owned(), b.count.max(1) as u32);
            }
            self.entries.insert(
                pid,
                Entry {
                    owner: who.to_owned(),
                    epoch: b.epoch,
                    last_sequence: if b.marker { -1 } else { last },
                    batches: if b.marker {
                        Vec::new()
                    } else {
                        vec![(b.base_sequence, last)]
                    },
                    txn_owner: b.transactional.then(|| who.to_owned()),
                    txn_records,
                    last_seen: b.now_ms,
                },
            );
            return self.counted(found, true);
        };
        e.last_seen = b.now_ms;
        let foreign = e.owner != who;
        if b.marker {
            if let Some(t) = e.txn_owner.take() {
                let records = std::mem::take(&mut e.txn_records);
                if t != who {
                    let n = records.get(&t).copied().unwrap_or(0);
                    let (kind, effect) = if b.commit {
                        ("COMMIT", "become visible to read_committed consumers")
                    } else {
                        ("ABORT", "are hidden from read_committed consumers")
                    };
                    report(
                        &mut found,
                        Kind::ForeignMarker,
                        format!(
                            "{who}'s {kind} closes {t}'s open transaction on PID {pid}: its {n} \
                             record(s) so far {effect}, whether {t} commits or aborts"
                        ),
                    );
                }
            }
            found.extend(lower_epoch(b, e));
            if e.epoch != b.epoch {
                e.batches.clear();
            }
            e.owner = who.to_owned();
            e.epoch = b.epoch;
            return self.counted(found, true);
        }
        if foreign {
            if b.epoch < e.epoch {
                found.extend(lower_epoch(b, e));
            } else if (b.epoch == e.epoch && b.base_sequence != e.last_sequence.wrapping_add(1))
                || (b.epoch > e.epoch && b.base_sequence != 0)
            {
                report(
                    &mut found,
                    Kind::WrongSequenceAccepted,
                    format!(
                        "{who}'s batch with sequence {} accepted as {}'s producer {pid} after sequence {}",
                        b.base_sequence, e.owner, e.last_sequence
                    ),
                );
            }
        }
        if e.epoch != b.epoch {
            e.batches.clear();
        }
        e.owner = who.to_owned();
        e.epoch = b.epoch;
        e.last_sequence = last;
        if e.batches.len() == 5 {
            e.batches.remove(0);
        }
        e.batches.push((b.base_sequence, last));
        if b.transactional {
            if e.txn_owner.is_none() {
                e.txn_owner = Some(who.to_owned());
            }
            *e.txn_records.entry(who.to_owned()).or_default() += b.count.max(1) as u32;
        }
        self.counted(found, true)
    }

    /// Counts `found` and hands it back with whether the batch was written.
    fn counted(&mut self, found: Vec<Incident>, written: bool) -> Outcome {
        for i in &found {
            if i.kind.is_refusal() {
                self.refusals.count(i.kind);
            } else {
                self.corruption.count(i.kind);
            }
        }
        Outcome {
            incidents: found,
            written,
        }
    }

    /// What the producer state holds, one row per PID, in PID order.
    pub fn entries(&self) -> Vec<EntryRow> {
        self.entries
            .iter()
            .map(|(pid, e)| EntryRow {
                pid: pid.to_string(),
                producer: e.owner.clone(),
                producers: self
                    .owners
                    .get(pid)
                    .map(|o| o.iter().cloned().collect())
                    .unwrap_or_default(),
                epoch: e.epoch,
                last_sequence: e.last_sequence,
                open_transaction: e.txn_owner.clone(),
            })
            .collect()
    }
}

/// What Kafka refuses `b` for on entry `e`, if anything: on every origin a
/// data batch outside a transaction while one is open; on CLIENT (and a
/// coordinator's marker) a lower epoch; on CLIENT a sequence that does not
/// follow, or a new epoch that does not start at 0.
fn refusal(b: &Appended<'_>, e: &Entry) -> Option<(Kind, String)> {
    let (who, pid) = (b.owner, b.pid);
    if !b.marker && !b.transactional {
        if let Some(t) = &e.txn_owner {
            let then = match b.origin {
                Origin::Replication => "the mirror stalls until that transaction ends",
                Origin::Client => "the write fails",
            };
            return Some((
                Kind::InvalidTxnState,
                format!(
                    "{who}'s batch refused (InvalidTxnStateException): PID {pid} has {t}'s \
                     transaction open, and {then}"
                ),
            ));
        }
    }
    if b.origin == Origin::Replication {
        return None;
    }
    if b.epoch < e.epoch {
        return Some((
            Kind::InvalidProducerEpoch,
            format!(
                "{who}'s {} with epoch {} refused (InvalidProducerEpochException): PID {pid} is at \
                 epoch {}, {}'s",
                if b.marker { "marker" } else { "write" },
                b.epoch,
                e.epoch,
                e.owner
            ),
        ));
    }
    if b.marker {
        return None;
    }
    let follows = if b.epoch > e.epoch {
        b.base_sequence == 0
    } else {
        b.base_sequence == e.last_sequence.wrapping_add(1)
    };
    (!follows).then(|| {
        (
            Kind::OutOfOrderSequence,
            format!(
                "{who}'s write with sequence {} refused (OutOfOrderSequenceException): PID {pid} \
                 is at sequence {}, {}'s",
                b.base_sequence, e.last_sequence, e.owner
            ),
        )
    })
}

/// The sentence for a copy written a second time.
fn twice(who: &str, sequence: i32) -> String {
    format!(
        "{who}'s batch with sequence {sequence} arrives again by a second path and is written \
         again: follower appends are not deduplicated, so consumers read it twice"
    )
}

/// The lower-epoch corruption, when batch or marker `b` of one producer is
/// accepted on another producer's entry `e` with a lower epoch.
fn lower_epoch(b: &Appended<'_>, e: &Entry) -> Option<Incident> {
    (e.owner != b.owner && b.epoch < e.epoch).then(|| Incident {
        kind: Kind::LowerEpochAccepted,
        text: format!(
            "{}'s {} with epoch {} accepted as {}'s producer {} at epoch {}",
            b.owner,
            if b.marker { "marker" } else { "batch" },
            b.epoch,
            e.owner,
            b.pid,
            e.epoch
        ),
    })
}

/// One entry of a partition's producer state, as the playground lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryRow {
    /// The PID (decimal).
    pub pid: String,
    /// The true producer of the last batch the entry took.
    pub producer: String,
    /// Every true producer that ever wrote with this PID here (two or more:
    /// a shared PID).
    pub producers: Vec<String>,
    /// The entry's epoch.
    pub epoch: i16,
    /// The entry's last sequence (-1: none yet).
    pub last_sequence: i32,
    /// The producer whose transaction is open on it, if any.
    pub open_transaction: Option<String>,
}

impl ProducerState {
    /// Drops entries idle for at least `expiration_ms` with no open
    /// transaction, as Kafka does after `producer.id.expiration.ms`.
    pub fn expire(&mut self, now_ms: i64, expiration_ms: i64) {
        self.entries.retain(|_, e| {
            e.txn_owner.is_some() || now_ms.saturating_sub(e.last_seen) < expiration_ms
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mirrored data batch; `serial` is what makes a copy a copy.
    fn batch<'a>(owner: &'a str, pid: i64, seq: i32) -> Appended<'a> {
        Appended {
            owner,
            idempotent: true,
            pid,
            epoch: 0,
            base_sequence: seq,
            count: 1,
            transactional: false,
            marker: false,
            commit: false,
            serial: owner.bytes().fold(7u64, |h, b| h * 31 + b as u64) << 32 | seq as u32 as u64,
            origin: Origin::Replication,
            now_ms: 0,
        }
    }

    fn local<'a>(owner: &'a str, pid: i64, seq: i32) -> Appended<'a> {
        Appended {
            origin: Origin::Client,
            ..batch(owner, pid, seq)
        }
    }

    fn kinds(o: &Outcome) -> Vec<Kind> {
        o.incidents.iter().map(|i| i.kind).collect()
    }

    #[test]
    fn one_producer_is_clean_and_a_copy_is_written_twice() {
        let mut s = ProducerState::default();
        s.append(&batch("a", 5, 0));
        s.append(&batch("a", 5, 1));
        assert_eq!(s.corruption, Corruption::default());
        let again = s.append(&batch("a", 5, 1));
        assert!(again.written, "follower appends are not deduplicated");
        assert_eq!(kinds(&again), [Kind::WrittenTwice]);
        assert!(s.holds(batch("a", 5, 1).serial));
    }

    #[test]
    fn two_producers_on_one_pid() {
        let mut s = ProducerState::default();
        s.append(&Appended {
            epoch: 3,
            transactional: true,
            ..batch("a", 5, 0)
        });
        s.append(&Appended {
            epoch: 3,
            transactional: true,
            ..batch("a", 5, 1)
        });
        s.append(&Appended {
            transactional: true,
            ..batch("b", 5, 0)
        });
        s.append(&Appended {
            marker: true,
            ..batch("b", 5, -1)
        });
        s.append(&batch("c", -7, 0));
        let c = s.corruption;
        assert_eq!(c.shared_pids, 1);
        assert_eq!(
            c.wrong_sequence_accepted, 0,
            "a lower epoch is counted as that"
        );
        assert_eq!(
            c.lower_epoch_accepted, 1,
            "b's batch; b's marker then follows b's own epoch"
        );
        assert_eq!(c.foreign_marker, 1);
        assert_eq!(c.psm_bypass, 1);
        assert_eq!(c.total(), 4);
        assert_eq!(s.refusals, Refusals::default());
    }

    #[test]
    fn each_corruption_is_said_in_a_sentence() {
        let mut s = ProducerState::default();
        assert!(s.append(&batch("a5", 5, 0)).incidents.is_empty());
        assert!(s.append(&batch("a5", 5, 1)).incidents.is_empty());
        let found = s.append(&batch("b5", 5, 0)).incidents;
        let said: Vec<(Kind, &str)> = found.iter().map(|i| (i.kind, i.text.as_str())).collect();
        assert_eq!(
            said,
            [
                (
                    Kind::SharedPids,
                    "b5 writes as PID 5, which a5 already uses: one producer where there are two"
                ),
                (
                    Kind::WrongSequenceAccepted,
                    "b5's batch with sequence 0 accepted as a5's producer 5 after sequence 1"
                ),
            ]
        );
        assert_eq!(s.corruption.total(), 2, "each sentence is one count");
        let rows = s.entries();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].producer.as_str(), rows[0].last_sequence),
            ("b5", 0)
        );
        assert_eq!(rows[0].producers, ["a5", "b5"]);
    }

    #[test]
    fn a_new_epoch_starting_at_zero_is_not_a_wrong_sequence() {
        let mut s = ProducerState::default();
        s.append(&batch("a", 5, 0));
        s.append(&batch("a", 5, 1));
        let bump = s.append(&Appended {
            epoch: 1,
            ..batch("b", 5, 0)
        });
        assert_eq!(
            kinds(&bump),
            [Kind::SharedPids],
            "to Kafka this is a's own epoch bump: only the shared PID is wrong"
        );
    }

    #[test]
    fn a_local_write_is_checked_refused_or_taken_for_a_retry() {
        // A mirrored producer took PID 0 with sequences 0 and 1.
        let mut s = ProducerState::default();
        s.append(&batch("a", 0, 0));
        s.append(&batch("a", 0, 1));
        // The local producer 0 writes sequences 0 and 1: to Kafka, retries
        // of a's batches, acknowledged and not written (what jvm/kafka's
        // chain shows).
        for seq in 0..2 {
            let o = s.append(&local("local", 0, seq));
            assert!(!o.written);
            assert_eq!(kinds(&o), [Kind::LostAsDuplicate]);
            assert!(o.incidents[0]
                .text
                .starts_with("local's write is acknowledged and not written"));
        }
        let gap = s.append(&local("local", 0, 5));
        assert_eq!(kinds(&gap), [Kind::OutOfOrderSequence]);
        let lower = s.append(&Appended {
            epoch: -1,
            ..local("local", 0, 2)
        });
        assert_eq!(kinds(&lower), [Kind::InvalidProducerEpoch]);
        assert_eq!(s.refusals.total(), 2);
        assert_eq!(s.corruption.lost_as_duplicate, 2);
        assert_eq!(
            s.entries()[0].producers,
            ["a"],
            "nothing of local's was written"
        );
    }

    #[test]
    fn a_batch_outside_an_open_transaction_is_refused_on_every_origin() {
        let mut s = ProducerState::default();
        s.append(&Appended {
            transactional: true,
            ..batch("t", 0, 0)
        });
        assert!(s.blocks(0, false));
        let mirrored = s.append(&batch("i", 0, 0));
        assert!(!mirrored.written);
        assert_eq!(kinds(&mirrored), [Kind::InvalidTxnState]);
        assert!(mirrored.incidents[0].text.contains("the mirror stalls"));
        // (Sequence 0 would match t's batch: Kafka's duplicate check comes
        // first and takes it for a retry.)
        let produced = s.append(&local("j", 0, 1));
        assert_eq!(kinds(&produced), [Kind::InvalidTxnState]);
        assert_eq!(s.refusals.invalid_txn_state, 2);
        s.append(&Appended {
            marker: true,
            commit: true,
            ..batch("t", 0, -1)
        });
        assert!(
            !s.blocks(0, false),
            "the transaction ended: the mirror goes on"
        );
    }

    #[test]
    fn a_foreign_marker_says_what_consumers_gain_or_lose() {
        let mut s = ProducerState::default();
        for seq in 0..2 {
            s.append(&Appended {
                transactional: true,
                ..batch("west", 0, seq)
            });
        }
        let abort = s.append(&Appended {
            marker: true,
            ..batch("east", 0, -1)
        });
        let marker = abort
            .incidents
            .iter()
            .find(|i| i.kind == Kind::ForeignMarker)
            .unwrap();
        assert_eq!(
            marker.text,
            "east's ABORT closes west's open transaction on PID 0: its 2 record(s) so far are \
             hidden from read_committed consumers, whether west commits or aborts"
        );
    }

    #[test]
    fn expired_entries_start_fresh() {
        let mut s = ProducerState::default();
        s.append(&batch("a", 5, 0));
        s.expire(1000, 1000);
        s.append(&Appended {
            now_ms: 1000,
            ..batch("b", 5, 0)
        });
        assert_eq!(s.corruption.wrong_sequence_accepted, 0);
        assert_eq!(
            s.corruption.shared_pids, 1,
            "still two producers on one PID"
        );
    }
}
