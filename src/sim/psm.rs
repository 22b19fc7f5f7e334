//! A small model of Kafka's producer state (ProducerStateManager) at one
//! partition, appending with origin REPLICATION, used by the simulator to
//! count the seed's silent corruptions.
//!
//! Kafka tracks state per PID, and only for `pid > -1`. With append origin
//! REPLICATION it validates nothing: a batch continues whatever entry its
//! PID has. The model knows what Kafka cannot, the true producer behind
//! each batch, and counts every batch Kafka would accept silently although
//! the entry belongs to another producer.

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
}

impl Serialize for Corruption {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("Corruption", 6)?;
        out.serialize_field("sharedPids", &self.shared_pids)?;
        out.serialize_field("wrongSequenceAccepted", &self.wrong_sequence_accepted)?;
        out.serialize_field("lowerEpochAccepted", &self.lower_epoch_accepted)?;
        out.serialize_field("foreignMarker", &self.foreign_marker)?;
        out.serialize_field("psmBypass", &self.psm_bypass)?;
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
    /// Counts one corruption of `kind`.
    pub fn count(&mut self, kind: Kind) {
        *match kind {
            Kind::SharedPids => &mut self.shared_pids,
            Kind::WrongSequenceAccepted => &mut self.wrong_sequence_accepted,
            Kind::LowerEpochAccepted => &mut self.lower_epoch_accepted,
            Kind::ForeignMarker => &mut self.foreign_marker,
            Kind::PsmBypass => &mut self.psm_bypass,
        } += 1;
    }

    /// The sum of all kinds.
    pub fn total(&self) -> u32 {
        self.shared_pids
            + self.wrong_sequence_accepted
            + self.lower_epoch_accepted
            + self.foreign_marker
            + self.psm_bypass
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Corruption) {
        self.shared_pids += other.shared_pids;
        self.wrong_sequence_accepted += other.wrong_sequence_accepted;
        self.lower_epoch_accepted += other.lower_epoch_accepted;
        self.foreign_marker += other.foreign_marker;
        self.psm_bypass += other.psm_bypass;
    }
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
    /// The append time.
    pub now_ms: i64,
}

#[derive(Debug, Clone)]
struct Entry {
    owner: String,
    epoch: i16,
    last_sequence: i32,
    txn_owner: Option<String>,
    last_seen: i64,
}

/// Producer state at one partition.
#[derive(Debug, Clone, Default)]
pub struct ProducerState {
    entries: BTreeMap<i64, Entry>,
    owners: BTreeMap<i64, BTreeSet<String>>,
    /// What was counted so far.
    pub corruption: Corruption,
    /// Same-producer batches seen again (a diamond delivers twice): Kafka
    /// would deduplicate them; not a corruption.
    pub duplicates: u32,
}

impl ProducerState {
    /// Appends one batch; returns the silent corruptions it caused (also
    /// counted in [`ProducerState::corruption`]).
    pub fn append(&mut self, b: &Appended<'_>) -> Vec<Incident> {
        let mut found = Vec::new();
        let report = |found: &mut Vec<Incident>, kind: Kind, text: String| {
            found.push(Incident { kind, text })
        };
        let who = b.owner;
        let pid = b.pid;
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
            return self.counted(found);
        }
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
        let last = b.base_sequence.wrapping_add(b.count.max(1) - 1);
        let Some(e) = self.entries.get_mut(&pid) else {
            self.entries.insert(
                pid,
                Entry {
                    owner: who.to_owned(),
                    epoch: b.epoch,
                    last_sequence: if b.marker { -1 } else { last },
                    txn_owner: b.transactional.then(|| who.to_owned()),
                    last_seen: b.now_ms,
                },
            );
            return self.counted(found);
        };
        e.last_seen = b.now_ms;
        let foreign = e.owner != who;
        if b.marker {
            if let Some(t) = e.txn_owner.take() {
                if t != who {
                    report(
                        &mut found,
                        Kind::ForeignMarker,
                        format!("{who}'s COMMIT/ABORT marker closes {t}'s open transaction on PID {pid}"),
                    );
                }
            }
            found.extend(lower_epoch(b, e));
            e.owner = who.to_owned();
            e.epoch = b.epoch;
            return self.counted(found);
        }
        if !foreign && b.base_sequence <= e.last_sequence && b.epoch == e.epoch {
            self.duplicates += 1;
            return self.counted(found);
        }
        if foreign {
            if b.base_sequence != e.last_sequence.wrapping_add(1) {
                report(
                    &mut found,
                    Kind::WrongSequenceAccepted,
                    format!(
                        "{who}'s batch with sequence {} accepted as {}'s producer {pid} after sequence {}",
                        b.base_sequence, e.owner, e.last_sequence
                    ),
                );
            }
            found.extend(lower_epoch(b, e));
        }
        e.owner = who.to_owned();
        e.epoch = b.epoch;
        e.last_sequence = last;
        if b.transactional && e.txn_owner.is_none() {
            e.txn_owner = Some(who.to_owned());
        }
        self.counted(found)
    }

    /// Counts `found` and hands it back.
    fn counted(&mut self, found: Vec<Incident>) -> Vec<Incident> {
        for i in &found {
            self.corruption.count(i.kind);
        }
        found
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
            now_ms: 0,
        }
    }

    #[test]
    fn one_producer_is_clean_and_duplicates_are_not_corruption() {
        let mut s = ProducerState::default();
        s.append(&batch("a", 5, 0));
        s.append(&batch("a", 5, 1));
        s.append(&batch("a", 5, 1));
        assert_eq!(s.corruption, Corruption::default());
        assert_eq!(s.duplicates, 1);
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
            ..batch("a", 5, 1)
        });
        s.append(&batch("b", 5, 0));
        s.append(&Appended {
            marker: true,
            ..batch("b", 5, -1)
        });
        s.append(&batch("c", -7, 0));
        let c = s.corruption;
        assert_eq!(c.shared_pids, 1);
        assert_eq!(c.wrong_sequence_accepted, 1);
        assert_eq!(c.lower_epoch_accepted, 1);
        assert_eq!(c.foreign_marker, 1);
        assert_eq!(c.psm_bypass, 1);
        assert_eq!(c.total(), 5);
    }

    #[test]
    fn each_corruption_is_said_in_a_sentence() {
        let mut s = ProducerState::default();
        assert!(s.append(&batch("a5", 5, 0)).is_empty());
        assert!(s.append(&batch("a5", 5, 1)).is_empty());
        let found = s.append(&Appended {
            epoch: -1,
            ..batch("b5", 5, 0)
        });
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
                (
                    Kind::LowerEpochAccepted,
                    "b5's batch with epoch -1 accepted as a5's producer 5 at epoch 0"
                ),
            ]
        );
        assert_eq!(s.corruption.total(), 3, "each sentence is one count");
        let rows = s.entries();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].producer.as_str(), rows[0].last_sequence),
            ("b5", 0)
        );
        assert_eq!(rows[0].producers, ["a5", "b5"]);
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
