//! Fetches for tests: one minimal idempotent v2 batch per PID (epoch 0,
//! sequence 0, no records), as a source cluster's fetch would carry them.

use mirrorpid::batch::BatchBuilder;

/// The bytes of one batch per PID, in order.
pub fn fetch(pids: impl IntoIterator<Item = i64>) -> Vec<u8> {
    pids.into_iter()
        .flat_map(|pid| {
            BatchBuilder {
                producer_id: pid,
                producer_epoch: 0,
                base_sequence: 0,
                ..BatchBuilder::default()
            }
            .encode()
        })
        .collect()
}
