//! A small model of Kafka's producer state (ProducerStateManager) at one
//! partition, used by the simulator to count the seed's silent corruptions
//! and the appends Kafka refuses. Its rules are Kafka 4.4's
//! (`ProducerAppendInfo`), and `jvm/judge` checks them against Kafka's own
//! log (`docs/KAFKA.md`):
//!
//! * Kafka tracks state per PID, and only for `pid > -1`.
//! * A mirrored batch is appended with origin REPLICATION: no epoch or
//!   sequence check and no duplicate check, so a batch continues whatever
//!   entry its PID has, and a copy that arrives by a second path is written
//!   again. A COMMIT or ABORT closes whatever transaction is open.
//! * A local produce is appended with origin CLIENT: a lower epoch is
//!   refused (`InvalidProducerEpochException`; under transaction version
//!   2 a marker at the entry's own epoch too), a sequence that does not
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

mod counts;
mod verdicts;
pub use counts::{Corruption, Incident, Kind, Refusals};
use verdicts::{lower_epoch, refusal, twice};

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
    /// Kafka's `transaction.version` the marker was written under: from
    /// 2, a coordinator's marker must carry an epoch above the entry's.
    pub transaction_version: u8,
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
                // Kafka's entry forgets its batches at a new epoch, and
                // with them its last sequence.
                e.batches.clear();
                e.last_sequence = -1;
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
mod tests;
