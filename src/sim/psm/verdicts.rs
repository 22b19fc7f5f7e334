//! Kafka's verdict on one append, batch by batch: what it refuses, and the
//! lower epoch it takes silently.

use super::*;

/// What Kafka refuses `b` for on entry `e`, if anything: on every origin a
/// data batch outside a transaction while one is open; on CLIENT (and a
/// coordinator's marker) a lower epoch; on CLIENT a sequence that does not
/// follow, or a new epoch that does not start at 0.
pub(super) fn refusal(b: &Appended<'_>, e: &Entry) -> Option<(Kind, String)> {
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
    // A TV2 marker carries the coordinator's bumped epoch: one at the
    // entry's epoch is refused too, unless it repeats a marker that closed
    // the transaction already (Kafka accepts such a retry).
    let fenced = if b.marker && b.transaction_version >= 2 {
        b.epoch < e.epoch || (b.epoch == e.epoch && e.txn_owner.is_some())
    } else {
        b.epoch < e.epoch
    };
    if fenced {
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
pub(super) fn twice(who: &str, sequence: i32) -> String {
    format!(
        "{who}'s batch with sequence {sequence} arrives again by a second path and is written \
         again: follower appends are not deduplicated, so consumers read it twice"
    )
}

/// The lower-epoch corruption, when batch or marker `b` of one producer is
/// accepted on another producer's entry `e` with a lower epoch.
pub(super) fn lower_epoch(b: &Appended<'_>, e: &Entry) -> Option<Incident> {
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
