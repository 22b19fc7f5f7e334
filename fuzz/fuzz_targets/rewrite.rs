//! The batch walker and rewrite on arbitrary bytes. A failed rewrite leaves
//! the buffer and the mapper unchanged; a successful one changes only bytes
//! 17..21 and 43..51 of each v2 batch, keeps a valid CRC valid and a wrong
//! one wrong, and abort() takes back every binding it made.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirrorpid::batch::{Batches, Entry};
use mirrorpid::RewriteOptions;
use mirrorpid_fuzz::{seeded_mapper, state};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, bytes)) = data.split_first() else {
        return;
    };
    let options = RewriteOptions {
        strict_crc: flags & 1 != 0,
        complete: flags & 2 != 0,
        outcomes: true,
    };
    let source = ["A", "cluster-2336", "B", "new"][usize::from(flags >> 2) & 3];
    let mut m = seeded_mapper();
    let before = state(&m);
    let mut buf = bytes.to_vec();
    match m.rewrite(source, &mut buf, 5_000, options) {
        Err(_) => {
            assert_eq!(buf, bytes, "a failed rewrite changed the buffer");
            assert_eq!(state(&m), before, "a failed rewrite changed the mapper");
        }
        Ok(result) => {
            // The walker, run independently, sees the same batches.
            let mut walker = Batches::new(bytes);
            let offsets: Vec<usize> = walker
                .by_ref()
                .filter_map(|e| match e {
                    Ok(Entry::Batch { offset, .. }) => Some(offset),
                    _ => None,
                })
                .collect();
            let seen: Vec<usize> = result.batches.iter().map(|b| b.offset).collect();
            assert_eq!(offsets, seen);
            assert_eq!(walker.consumed(), result.consumed);
            for (i, (a, b)) in bytes.iter().zip(&buf).enumerate() {
                if a != b {
                    let allowed = seen
                        .iter()
                        .any(|&o| (o + 17..o + 21).contains(&i) || (o + 43..o + 51).contains(&i));
                    assert!(allowed, "byte {i} changed outside a PID or CRC");
                }
            }
            for (offset, out) in seen.iter().zip(&result.batches) {
                let len = 12
                    + i32::from_be_bytes(bytes[offset + 8..offset + 12].try_into().unwrap())
                        as usize;
                let (old, new) = (&bytes[*offset..offset + len], &buf[*offset..offset + len]);
                let valid = |b: &[u8]| {
                    crc32c::crc32c(&b[21..]) == u32::from_be_bytes(b[17..21].try_into().unwrap())
                };
                assert_eq!(valid(old), valid(new), "CRC validity changed at {offset}");
                assert_eq!(
                    i64::from_be_bytes(new[43..51].try_into().unwrap()),
                    out.mapped_pid
                );
            }
            m.abort();
            assert_eq!(m.len(), before.1, "abort took back every new binding");
            assert_eq!(m.pending(), 0);
        }
    }
});
