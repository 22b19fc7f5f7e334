//! The naive peer of [`Mapper::rewrite`], for the benchmarks that compare
//! the two (feature `peer`; never part of a release build).
//!
//! It is what the KIP prototype does: for each batch, read the header, map
//! the producer ID, write it, and recompute the CRC-32C over the whole rest
//! of the batch (`crc32c` crate, hardware instructions where the CPU has
//! them). No validation beyond the length, no transaction state, no
//! records, no all-or-nothing: only the work every rewrite must do, so
//! that mirrorpid's price for the rest shows.

use crate::batch::{CRC_OFFSET, PRODUCER_ID_OFFSET};
use crate::error::Result;
use crate::mapper::Mapper;

/// Rewrites the v2 batches of `buf` from `source` the naive way; returns
/// how many it rewrote.
pub fn rewrite_naive(m: &mut Mapper, source: &str, buf: &mut [u8], now_ms: i64) -> Result<usize> {
    let (mut pos, mut n) = (0, 0);
    while pos + 61 <= buf.len() {
        let len = 12 + i32::from_be_bytes(buf[pos + 8..pos + 12].try_into().expect("4")) as usize;
        let Some(batch) = buf.get_mut(pos..pos + len) else {
            break;
        };
        let at = PRODUCER_ID_OFFSET;
        let pid = i64::from_be_bytes(batch[at..at + 8].try_into().expect("8"));
        let mapped = m.map(source, pid, now_ms)?.mapped;
        batch[at..at + 8].copy_from_slice(&mapped.to_be_bytes());
        let crc = crc32c::crc32c(&batch[CRC_OFFSET + 4..]);
        batch[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        pos += len;
        n += 1;
    }
    Ok(n)
}
