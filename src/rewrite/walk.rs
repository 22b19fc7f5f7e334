//! The batch path: one pass over a fetch's entries, each v2 header read
//! once, its producer mapped on the call, its write decided.
//!
//! Two things repeat from batch to batch, and each is kept while it does.
//! A fetch's batches come from few producers, most often one after
//! another: a batch of the producer the batch before it had ([`Run`]),
//! in this call or the one before, needs no lookup and no read of the
//! table. And the 8 bytes a rewrite changes change by the same delta for
//! every producer of a source at the same salt (a PID's own 40 bits are
//! kept, only the region bits change): the call's list of changes
//! (`batch::Changes`) computes the delta's CRC once while it repeats, and
//! only its shift by the batch's length is new, and not even that when
//! the length repeats too.

use super::RewriteOptions;
use crate::batch::{
    be, step, Batch, Changes, ControlType, Entries, Gathered, Noted, Step, ATTRIBUTES_OFFSET,
    CONTROL, HEADER_LEN, PRODUCER_ID_OFFSET, TRANSACTIONAL,
};
use crate::error::{Error, Result};
use crate::mapper::{Call, SourceCluster, Wire};
use crate::vec::room;

/// What a rewrite names when there is no memory for its results.
const RESULTS: &str = "a rewrite's results";

/// A walk stopped by an error, which waits in the walk's `failed` slot
/// (made only by [`park`]). A walk's steps return only this, so that
/// passing an error up costs a test and a branch at each step instead of
/// a copy of the error into each caller's result, which would grow the
/// walk's loop (a JVM compiling the module to bytecode inlines less into
/// a larger method).
struct Stop;

/// Parks `e` in `failed`: the one place a walk's error is moved.
#[cold]
#[inline(never)]
fn park(failed: &mut Result<()>, e: Error) -> Stop {
    *failed = Err(e);
    Stop
}

/// A step's result, its error parked ([`Stop`]).
trait OrStop<T> {
    fn or_stop(self, failed: &mut Result<()>) -> std::result::Result<T, Stop>;
}

impl<T> OrStop<T> for Result<T> {
    #[inline(always)]
    fn or_stop(self, failed: &mut Result<()>) -> std::result::Result<T, Stop> {
        match self {
            Ok(v) => Ok(v),
            Err(e) => Err(park(failed, e)),
        }
    }
}

/// An entry that is not a whole v2 batch held in full.
enum Other<'e> {
    /// Where the walk ends (the fetch's end, a truncated tail, or the end
    /// of what was gathered).
    End,
    /// A legacy entry, passed untouched.
    Legacy { size: usize },
    /// A v2 batch after all (near a header view's end, with a shorter
    /// window).
    Batch { rest: &'e [u8], size: usize },
}

/// The binding the last batch had, when it took the common path (bound
/// and confirmed), with what the next batch of its producer needs.
/// Forgotten whenever a batch takes the other path, which may add or move
/// bindings.
struct Run {
    /// The producer ID as a batch holds it (compared undecoded).
    raw: [u8; 8],
    /// Where the binding is.
    idx: usize,
    /// The mapped PID as a batch will hold it, the binding's salt and
    /// whether its transaction is open, as this call left them (not read
    /// yet while `unseen`).
    mapped: [u8; 8],
    salt: u8,
    open: bool,
    /// Whether this call has not seen the binding yet (it was the last
    /// one of the call before).
    unseen: bool,
}

/// What a batch's attributes say of its producer's transaction: open (a
/// transactional data batch) or unchanged; a control batch's marker is
/// read by [`marker`].
#[inline(always)]
fn transaction(header: &[u8; HEADER_LEN]) -> Option<Option<bool>> {
    // The attributes' low byte holds both bits.
    let low = header[ATTRIBUTES_OFFSET + 1] as i16;
    if low & CONTROL != 0 {
        return None;
    }
    Some((low & TRANSACTIONAL != 0).then_some(true))
}

/// What a control batch's marker says of its producer's transaction:
/// ended by a COMMIT or ABORT, unchanged by any other marker.
#[inline(never)]
fn marker(batch: &Batch<'_>, offset: usize) -> Result<(Option<bool>, Option<ControlType>)> {
    let control = batch.control_type(offset)?;
    let ends = control.is_some_and(ControlType::ends_transaction);
    Ok((ends.then_some(false), control))
}

/// Walks `entries` once on `call` for batches from `source`, whose
/// cluster in the table is `cluster` (none: no binding named it yet), noting in
/// the call's list of changes what it finds and the writes it decides.
// One copy for a fetch's bytes and one for its headers: each keeps its
// entries' reads in the loop.
#[inline(always)]
pub(super) fn walk<'e>(
    call: &mut Call<'_>,
    source: SourceCluster<'_>,
    cluster: Option<u32>,
    entries: impl Entries<'e>,
    options: RewriteOptions,
) -> Result<()> {
    let mut failed = Ok(());
    match steps(call, source, cluster, entries, options, &mut failed) {
        Ok(()) => Ok(()),
        Err(Stop) => failed,
    }
}

/// [`walk`], its error parked in `failed` ([`Stop`]).
#[inline(always)]
fn steps<'e>(
    call: &mut Call<'_>,
    source: SourceCluster<'_>,
    mut cluster: Option<u32>,
    entries: impl Entries<'e>,
    options: RewriteOptions,
    failed: &mut Result<()>,
) -> std::result::Result<(), Stop> {
    // The last call's last binding, unread until its first batch here.
    let mut run: Option<Run> = cluster.and(call.last()).map(|(idx, pid)| Run {
        raw: pid.bytes(),
        idx,
        mapped: [0; 8],
        salt: 0,
        open: false,
        unseen: true,
    });
    // Room for every batch's saved state and write at once where the
    // batches are few (a header view's slots), else a batch at a time.
    let reserved = match entries.most() {
        Some(n) => {
            call.reserve(n).or_stop(failed)?;
            call.changes().reserve(n).or_stop(failed)?;
            true
        }
        None => false,
    };
    let (mut pos, mut index) = (0usize, 0usize);
    while entries.more(index, pos) {
        let (rest, size) = match entries.batch(index, pos) {
            Some(found) => found,
            None => match other_entry(call.changes(), entries, index, pos, options.complete)
                .or_stop(failed)?
            {
                Other::End => break,
                Other::Legacy { size } => {
                    pos += size;
                    index += 1;
                    continue;
                }
                Other::Batch { rest, size } => (rest, size),
            },
        };
        let (offset, entry) = (pos, index);
        pos += size;
        index += 1;
        let batch = Batch::new(rest.get(..size).unwrap_or(rest), size);
        let Some(header) = rest.first_chunk::<HEADER_LEN>() else {
            break;
        };
        if options.strict_crc {
            check_crc(&batch, offset).or_stop(failed)?;
        }
        let (txn, control) = match transaction(header) {
            Some(txn) => (txn, None),
            None => marker(&batch, offset).or_stop(failed)?,
        };
        let raw: [u8; 8] = be(header, PRODUCER_ID_OFFSET);
        let in_run = match &mut run {
            Some(r) if r.raw == raw => {
                let changes = txn.is_some_and(|open| open != r.open);
                if (r.unseen || changes) && !reserved {
                    call.reserve(1).or_stop(failed)?;
                }
                if r.unseen {
                    // The hint is checked here, where its binding is read.
                    let (c, pid) = (cluster.unwrap_or(u32::MAX), Wire::from_bytes(raw));
                    match call.see_hinted(r.idx, c, pid, txn) {
                        Some(b) => {
                            r.mapped = b.mapped.bytes();
                            (r.salt, r.open) = (b.salt, b.is_open());
                            r.unseen = false;
                            Some((r.mapped, r.salt))
                        }
                        None => None,
                    }
                } else {
                    if changes {
                        r.open = turn(call, r.idx, txn);
                    }
                    Some((r.mapped, r.salt))
                }
            }
            _ => None,
        };
        let (mapped, salt) = match in_run {
            Some(hit) => hit,
            None => {
                let pid = Wire::from_bytes(raw);
                let found = match cluster {
                    Some(c) if pid.is_producer() => call.find(c, pid),
                    _ => None,
                };
                match found {
                    Some(idx) if !call.is_pending(idx) => {
                        if !reserved {
                            call.reserve(1).or_stop(failed)?;
                        }
                        let binding = call.see(idx, txn);
                        let mapped = binding.mapped.bytes();
                        run = Some(Run {
                            raw,
                            idx,
                            mapped,
                            salt: binding.salt,
                            open: binding.is_open(),
                            unseen: false,
                        });
                        (mapped, binding.salt)
                    }
                    bound => {
                        run = None;
                        let (mapped, salt, named) =
                            map_other(call, bound, source, cluster, pid, txn).or_stop(failed)?;
                        cluster = named;
                        (mapped, salt)
                    }
                }
            }
        };
        if mapped != raw {
            call.changes()
                .note(entry, offset, raw, mapped, size, reserved)
                .or_stop(failed)?;
        }
        if options.outcomes {
            let noted = Noted::new(offset, header, raw, mapped, salt, control);
            describe(call.changes(), noted).or_stop(failed)?;
        }
    }
    if let Some(r) = run.filter(|r| !r.unseen) {
        call.set_last(r.idx, Wire::from_bytes(r.raw));
    }
    call.changes().consumed = pos;
    if options.outcomes {
        call.changes().reserve_decoded().or_stop(failed)?;
    }
    Ok(())
}

/// [`walk`] over a header view's slots, kept out of its caller: a JVM
/// compiles each WebAssembly function to one method, and one that holds
/// the call's set-up and the walk both is too large for HotSpot to inline
/// the memory accesses into. One copy notes outcomes and one does not, so
/// neither tests the option in its loop.
#[inline(never)]
pub(super) fn walk_headers<const OUTCOMES: bool>(
    call: &mut Call<'_>,
    source: SourceCluster<'_>,
    cluster: Option<u32>,
    entries: Gathered<'_>,
    complete: bool,
) -> Result<()> {
    let options = RewriteOptions {
        strict_crc: false,
        complete,
        outcomes: OUTCOMES,
    };
    // A fetch of one batch makes one lookup: nothing to read at once.
    if entries.slots() > 1 {
        call.warm(entries.slots());
    }
    walk(call, source, cluster, entries, options)
}

/// [`Call::see`] of a binding whose transaction a batch in a run opens or
/// ends: whether it is open now. Rare within a run, so kept out of the
/// walk's loop.
#[inline(never)]
fn turn(call: &mut Call<'_>, idx: usize, txn: Option<bool>) -> bool {
    call.see(idx, txn).is_open()
}

/// A batch off the common path: its producer's binding pending (`bound`)
/// or not made yet, or no producer at all. Returns the mapped PID as a
/// batch holds it, the salt, and the source's cluster (a new binding may
/// name it for the first time). Kept out of the walk's loop, so that
/// nothing it needs is computed before the loop on every call.
#[inline(never)]
fn map_other(
    call: &mut Call<'_>,
    bound: Option<usize>,
    source: SourceCluster<'_>,
    cluster: Option<u32>,
    pid: Wire,
    txn: Option<bool>,
) -> Result<([u8; 8], u8, Option<u32>)> {
    let o = call.map_pending_or_new(bound, source, pid.value(), txn)?;
    let cluster = cluster.or_else(|| call.cluster(source));
    Ok((o.mapped.to_be_bytes(), o.salt.unwrap_or(0), cluster))
}

/// The entry at `offset` when it is not a whole v2 batch held in full
/// ([`Entries::batch`]): the end of the walk, a legacy entry (counted),
/// a v2 batch near the fetch's end, or the error the walk stops on.
#[inline(never)]
fn other_entry<'e>(
    changes: &mut Changes,
    entries: impl Entries<'e>,
    index: usize,
    offset: usize,
    complete: bool,
) -> Result<Other<'e>> {
    let Some((rest, available)) = entries.at(index, offset)? else {
        return Ok(Other::End);
    };
    Ok(match step(rest, offset, available, complete)? {
        None => Other::End,
        Some(Step { magic: 2, size }) => Other::Batch { rest, size },
        Some(Step { size, .. }) => {
            changes.legacy_entries += 1;
            Other::Legacy { size }
        }
    })
}

/// Notes a batch's outcome.
#[inline(always)]
fn describe(changes: &mut Changes, noted: Noted) -> Result<()> {
    room(&mut changes.outcomes, 1, RESULTS)?;
    changes.outcomes.push(noted);
    Ok(())
}

/// Checks a whole batch's stored CRC against its records.
#[inline(never)]
fn check_crc(batch: &Batch<'_>, offset: usize) -> Result<()> {
    let Some(computed) = batch.computed_crc() else {
        return Err(Error::invalid("strict CRC needs the whole batch"));
    };
    if batch.crc() != computed {
        return Err(Error::CrcMismatch {
            offset,
            stored: batch.crc(),
            computed,
        });
    }
    Ok(())
}
