//! The batches the rewrite benchmarks share (native and in wasmtime).

use mirrorpid::batch::{BatchBuilder, Batches, Entry, RecordSpec};

/// The single-batch sizes compared with the naive peer.
pub const SIZES: [(&str, usize); 6] = [
    ("256B", 256),
    ("1KiB", 1 << 10),
    ("4KiB", 4 << 10),
    ("16KiB", 16 << 10),
    ("64KiB", 64 << 10),
    ("1MiB", 1 << 20),
];

/// One v2 batch of exactly `size` bytes from producer 5.
pub fn single(size: usize) -> Vec<u8> {
    let make = |value: usize| {
        BatchBuilder {
            producer_id: 5,
            producer_epoch: 0,
            base_sequence: 0,
            records: vec![RecordSpec {
                key: None,
                value: Some((0..value).map(|i| i as u8).collect()),
            }],
            ..BatchBuilder::default()
        }
        .encode()
    };
    // The record's varint lengths depend on the value's size: adjust once.
    let first = make(size - 80);
    let b = make(size - 80 + size - first.len());
    assert_eq!(b.len(), size);
    b
}

/// A fetch of `n` small batches (one 32-byte record each), producers 0 to
/// n - 1.
pub fn fetch(n: usize) -> Vec<u8> {
    (0..n as i64)
        .flat_map(|pid| {
            BatchBuilder {
                base_offset: pid,
                producer_id: pid,
                producer_epoch: 0,
                base_sequence: 0,
                records: vec![RecordSpec {
                    key: None,
                    value: Some(vec![1; 32]),
                }],
                ..BatchBuilder::default()
            }
            .encode()
        })
        .collect()
}

/// The offsets of the v2 batches of `buf`.
pub fn offsets(buf: &[u8]) -> Vec<usize> {
    Batches::new(buf)
        .filter_map(|e| match e {
            Ok(Entry::Batch { offset, .. }) => Some(offset),
            _ => None,
        })
        .collect()
}

/// Puts back the CRC and producer ID of the batches at `offsets` from
/// `original` (12 bytes each), so that each iteration really rewrites.
pub fn restore_headers(buf: &mut [u8], original: &[u8], offsets: &[usize]) {
    for &o in offsets {
        buf[o + 17..o + 21].copy_from_slice(&original[o + 17..o + 21]);
        buf[o + 43..o + 51].copy_from_slice(&original[o + 43..o + 51]);
    }
}
