//! Encoding batches with the `kafka-protocol` crate, an implementation
//! independent of mirrorpid's (for the cross-checks of `tests/rewrite.rs`
//! and `cli/tests/cli.rs`).

use bytes::BytesMut;
use kafka_protocol::records::{Compression, Record, RecordBatchEncoder, RecordEncodeOptions};

/// `records` as magic-v2 batches, the way a Kafka client writes them.
pub fn kp_encode(records: &[Record], compression: Compression) -> Vec<u8> {
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        records,
        &RecordEncodeOptions {
            version: 2,
            compression,
        },
    )
    .unwrap();
    buf.to_vec()
}
