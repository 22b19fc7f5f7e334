//! Rewriting a buffer of mirrored batches in place (`docs/DESIGN.md`, "The batch path").
//!
//! For each complete v2 batch with an idempotent PID, the mapper maps the
//! PID, the new PID is written at offset 43 and the CRC at offset 17 is
//! patched from the old CRC and the 8 changed bytes ([`crate::crc::patch`]):
//! the records are never read, so a compressed batch stays compressed and a
//! corrupt batch stays detectably corrupt. The mapper learns last-seen times
//! and transaction state from what passes through.
//!
//! A buffer is all or nothing: the whole buffer is checked and mapped
//! before the first byte is written, and a failure undoes every binding.

use serde::Serialize;

use crate::batch::{BatchMut, Batches, ControlType, Entry, HeaderView};
use crate::error::Result;
use crate::mapper::table::room;
use crate::mapper::{Mapper, SourceCluster, TXN_OPEN};
use crate::record::StateRecord;

/// How [`Mapper::rewrite`] treats its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewriteOptions {
    /// Verify every v2 batch's CRC first and reject a mismatch.
    pub strict_crc: bool,
    /// The input ends on a batch boundary: a truncated tail is an error
    /// instead of being left for the next fetch.
    pub complete: bool,
    /// The rewrite leaves [`RewriteResult::batches`] empty: for a host
    /// that reads only the rewritten bytes or slots and the records (the
    /// broker module, whose ABI reports no outcome), building an outcome
    /// for every batch was a tenth of a batch's cost. The bytes, records
    /// and every other field are what they would be without it.
    pub skip_outcomes: bool,
}

/// What happened to one v2 batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchOutcome {
    /// Byte offset of the batch in the buffer.
    pub offset: usize,
    /// Its baseOffset.
    #[serde(with = "crate::json::i64_str")]
    pub base_offset: i64,
    /// The producer ID it arrived with.
    #[serde(with = "crate::json::i64_str")]
    pub original_pid: i64,
    /// The producer ID it leaves with.
    #[serde(with = "crate::json::i64_str")]
    pub mapped_pid: i64,
    /// The salt of the binding (`None` for PID < 0).
    pub salt: Option<u8>,
    /// Whether the batch is transactional.
    pub transactional: bool,
    /// For a control batch, its marker (`"commit"`, `"abort"` or
    /// `"other"` in JSON).
    pub control: Option<ControlType>,
}

/// The result of rewriting one buffer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RewriteResult {
    /// Bytes of complete entries; the rest is a truncated tail, untouched.
    pub consumed: usize,
    /// `__mirror_state` records to persist, in the order they arose.
    pub records: Vec<StateRecord>,
    /// Whether any batch caused a collision (snapshot the producer state).
    pub snapshot_required: bool,
    /// One outcome per v2 batch, in buffer order.
    pub batches: Vec<BatchOutcome>,
    /// How many legacy (magic 0/1) entries passed untouched.
    pub legacy_entries: usize,
}

impl RewriteResult {
    /// Empties it, keeping its buffers' capacity.
    fn clear(&mut self) {
        self.consumed = 0;
        self.records.clear();
        self.snapshot_required = false;
        self.batches.clear();
        self.legacy_entries = 0;
    }
}

/// What a rewrite reads and writes: a fetch's bytes, or its gathered
/// headers.
#[derive(Debug)]
pub enum Fetch<'a, 'b> {
    /// The whole fetch, rewritten in place.
    Bytes(&'a mut [u8]),
    /// Its headers ([`HeaderView`]), rewritten in their slots.
    Headers(&'a mut HeaderView<'b>),
}

/// What a rewrite names when there is no memory for its results.
const RESULTS: &str = "a rewrite's results";

impl Mapper {
    /// Rewrites, in place, every mirrored batch of `buf` that arrived from
    /// `source_cluster_id`, at host time `now_ms`.
    ///
    /// On error `buf` is unchanged and so is the mapper.
    pub fn rewrite(
        &mut self,
        source_cluster_id: &str,
        buf: &mut [u8],
        now_ms: i64,
        options: RewriteOptions,
    ) -> Result<RewriteResult> {
        let mut out = RewriteResult::default();
        self.rewrite_into(
            source_cluster_id,
            buf,
            now_ms,
            options,
            &mut out,
            |_| Ok(()),
        )?;
        Ok(out)
    }

    /// [`Mapper::rewrite`] into `out`, whose buffers are reused (a host
    /// that keeps one `RewriteResult` allocates nothing per call once every
    /// producer is bound), running `then` on the result before the call
    /// takes effect: if `then` fails, the rewrite fails with its error and
    /// changes nothing. The broker module writes its output there, so that
    /// running out of memory for it undoes the call. On error `out` holds
    /// nothing of use.
    ///
    /// One pass: each batch is checked and mapped as the walker reaches it
    /// (a later bad batch undoes the mapping of earlier ones); the bytes
    /// are written only once the whole buffer has passed.
    pub fn rewrite_into(
        &mut self,
        source_cluster_id: &str,
        buf: &mut [u8],
        now_ms: i64,
        options: RewriteOptions,
        out: &mut RewriteResult,
        then: impl FnOnce(&RewriteResult) -> Result<()>,
    ) -> Result<()> {
        let fetch = Fetch::Bytes(buf);
        self.rewrite_fetch_into(source_cluster_id, fetch, now_ms, options, out, then)
    }

    /// [`Mapper::rewrite_into`] on a fetch seen through its gathered
    /// headers: the same checks, mappings, records and outcomes as on the
    /// whole fetch, with each changed batch's new producer ID and CRC
    /// written into its slot (and the slot marked changed) instead of the
    /// buffer. The records are never needed, so a host with the fetch in
    /// its own memory copies 112 bytes a batch whatever the batches' size.
    ///
    /// `options.strict_crc` needs the records, so it is refused
    /// ([`crate::Error::InvalidInput`]): verify CRCs where the records are
    /// (Kafka's `RecordBatch.ensureValid()`). On error the slots and the
    /// mapper are unchanged.
    pub fn rewrite_headers_into(
        &mut self,
        source_cluster_id: &str,
        view: &mut HeaderView<'_>,
        now_ms: i64,
        options: RewriteOptions,
        out: &mut RewriteResult,
        then: impl FnOnce(&RewriteResult) -> Result<()>,
    ) -> Result<()> {
        let fetch = Fetch::Headers(view);
        self.rewrite_fetch_into(source_cluster_id, fetch, now_ms, options, out, then)
    }

    /// [`Mapper::rewrite_into`] or [`Mapper::rewrite_headers_into`], as
    /// `fetch` says: one path for both, so they cannot differ.
    pub fn rewrite_fetch_into(
        &mut self,
        source_cluster_id: &str,
        fetch: Fetch<'_, '_>,
        now_ms: i64,
        options: RewriteOptions,
        out: &mut RewriteResult,
        then: impl FnOnce(&RewriteResult) -> Result<()>,
    ) -> Result<()> {
        let source = SourceCluster::new(source_cluster_id)?;
        out.clear();
        if options.strict_crc && matches!(fetch, Fetch::Headers(_)) {
            return Err(crate::Error::invalid(
                "strict CRC needs the records: a header view holds none",
            ));
        }
        let outcomes = !options.skip_outcomes;
        // The mapper's list of changed batches, its capacity kept between
        // calls: both paths note them while mapping and write them once
        // nothing can fail.
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        // One savepoint and one walk for both kinds of fetch, not a copy
        // of each per kind (the module 186 bytes smaller); only the
        // walker's source and the writes differ.
        let mapped = self.atomically(|m| {
            let (walker, strict) = match &fetch {
                Fetch::Bytes(buf) if options.complete => {
                    (Batches::complete(buf), options.strict_crc)
                }
                Fetch::Bytes(buf) => (Batches::new(buf), options.strict_crc),
                Fetch::Headers(view) => (Batches::headers(view, options.complete), false),
            };
            m.map_batches(source, walker, now_ms, strict, outcomes, out, &mut changed)?;
            then(out)
        });
        if mapped.is_ok() {
            match fetch {
                Fetch::Bytes(buf) => {
                    for c in &changed {
                        BatchMut::at(buf, c.offset).set_producer_id_bytes(c.pid);
                    }
                }
                Fetch::Headers(view) => {
                    view.clear_changed();
                    for c in &changed {
                        view.set_producer_id(c.entry, c.size, c.pid);
                    }
                }
            }
        }
        // The placeholder `take` left is empty: forgotten, not dropped (its
        // drop is a call that frees nothing).
        std::mem::forget(std::mem::replace(&mut self.changed, changed));
        mapped?;
        Ok(())
    }

    /// The batch path's other cases, out of its loop: a pending binding
    /// (`bound`), touched and described, or an identity not bound yet,
    /// mapped. (Split out while profiling the module in wasmtime; at
    /// `opt-level = "s"` it measured no faster than inline, and the shipped
    /// build was not measured both ways.)
    #[inline(never)]
    fn map_pending_or_new(
        &mut self,
        bound: Option<usize>,
        source: SourceCluster<'_>,
        pid: i64,
        now_ms: i64,
        txn: Option<bool>,
    ) -> Result<crate::mapper::MapOutcome> {
        let (outcome, idx) = match bound {
            // Bound: last-seen time and transaction state in one write.
            Some(idx) => {
                self.touch(idx, now_ms, txn);
                return Ok(self.describe(idx, pid));
            }
            None => self.map_indexed(source, pid, now_ms)?,
        };
        if let Some(idx) = idx {
            self.touch(idx, now_ms, txn);
        }
        Ok(outcome)
    }

    /// Walks the fetch, mapping each v2 batch's producer and recording its
    /// outcome in `out` (with `outcomes`), and in `changed` each batch
    /// whose PID changes ([`Change`]); writes nothing to the fetch.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn map_batches(
        &mut self,
        source: SourceCluster<'_>,
        mut walker: Batches<'_>,
        now_ms: i64,
        strict_crc: bool,
        outcomes: bool,
        out: &mut RewriteResult,
        changed: &mut Changed,
    ) -> Result<()> {
        // The source's cluster index, looked up once per call, not per batch.
        let mut cluster = self.table.find_cluster(source.as_str());
        // The confirmed binding the last batch had, if it took the common
        // path: a fetch's batches come from few producers, most often one
        // after another, and the next batch of the same producer then
        // needs no lookup and no read of the table. Forgotten whenever a
        // batch takes the other path, which may add or move bindings.
        let mut recent: Option<Recent> = None;
        while let Some(entry) = walker.next() {
            let (offset, batch) = match entry? {
                Entry::Legacy { .. } => {
                    out.legacy_entries += 1;
                    continue;
                }
                Entry::Batch { offset, batch } => (offset, batch),
            };
            if strict_crc {
                let Some(computed) = batch.computed_crc() else {
                    return Err(crate::Error::invalid("strict CRC needs the whole batch"));
                };
                if batch.crc() != computed {
                    return Err(crate::Error::CrcMismatch {
                        offset,
                        stored: batch.crc(),
                        computed,
                    });
                }
            }
            let control = batch.control_type(offset)?;
            let pid_bytes = batch.producer_id_bytes();
            // Room for this batch's outcome, its save and its record
            // first, so that nothing below fails to allocate.
            if outcomes {
                room(&mut out.batches, 1, RESULTS)?;
            }
            self.reserve_saves(1)?;
            let txn = match control {
                Some(c) if c.ends_transaction() => Some(false),
                Some(_) => None,
                None if batch.is_transactional() => Some(true),
                None => None,
            };
            let (pid, mapped, mapped_bytes, salt, record, snapshot_required) = match &mut recent {
                // The last batch's producer again: touched already in this
                // call (so its last-seen time stands), touched again only
                // if its transaction state changes.
                Some(r) if r.pid_bytes == pid_bytes => {
                    if let Some(open) = txn.filter(|&open| open != r.open) {
                        self.touch(r.idx, now_ms, txn);
                        r.open = open;
                    }
                    (r.pid, r.mapped, r.mapped_bytes, Some(r.salt), None, false)
                }
                _ => {
                    let pid = i64::from_be_bytes(pid_bytes);
                    let bound = match cluster {
                        Some(c) if pid >= 0 => self.table.find_identity(c, pid),
                        _ => None,
                    };
                    match bound {
                        // Bound and confirmed (the common case): nothing to
                        // say but the PID, so no outcome is built.
                        Some(idx) if !self.is_pending(idx) => {
                            let b = self.touch(idx, now_ms, txn);
                            let r = Recent {
                                pid_bytes,
                                pid,
                                idx,
                                mapped: b.mapped,
                                mapped_bytes: b.mapped.to_be_bytes(),
                                salt: b.salt,
                                open: txn.unwrap_or(b.flags & TXN_OPEN != 0),
                            };
                            recent = Some(r);
                            (pid, r.mapped, r.mapped_bytes, Some(r.salt), None, false)
                        }
                        _ => {
                            recent = None;
                            let o = self.map_pending_or_new(bound, source, pid, now_ms, txn)?;
                            if cluster.is_none() {
                                cluster = self.table.find_cluster(source.as_str());
                            }
                            let bytes = o.mapped.to_be_bytes();
                            (pid, o.mapped, bytes, o.salt, o.record, o.snapshot_required)
                        }
                    }
                }
            };
            out.snapshot_required |= snapshot_required;
            if let Some(record) = record {
                room(&mut out.records, 1, RESULTS)?;
                out.records.push(*record);
            }
            if mapped != pid {
                room(changed, 1, RESULTS)?;
                changed.push(Change {
                    entry: walker.entries() - 1,
                    offset,
                    size: batch.size(),
                    pid: mapped_bytes,
                });
            }
            if outcomes {
                out.batches.push(BatchOutcome {
                    offset,
                    base_offset: batch.base_offset(),
                    original_pid: pid,
                    mapped_pid: mapped,
                    salt,
                    transactional: batch.is_transactional(),
                    control,
                });
            }
        }
        out.consumed = walker.consumed();
        Ok(())
    }
}

/// A confirmed binding that [`Mapper::map_batches`] touched in the call
/// under way, with what the next batch of its producer needs.
#[derive(Debug, Clone, Copy)]
struct Recent {
    /// The producer ID it binds (of the call's source cluster), as a
    /// batch holds it (compared undecoded) and decoded.
    pid_bytes: [u8; 8],
    pid: i64,
    /// Its position in the table.
    idx: usize,
    /// The producer ID it maps to, and as a batch will hold it.
    mapped: i64,
    mapped_bytes: [u8; 8],
    salt: u8,
    /// Whether its transaction is open, as the call left it.
    open: bool,
}

/// A batch whose producer ID the rewrite changes, as [`Mapper::map_batches`]
/// notes it for the write that follows: where it is (its entry's index,
/// which is its slot in a header view, and its offset in the fetch), its
/// size, and its new producer ID's big-endian bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Change {
    entry: usize,
    offset: usize,
    size: usize,
    pid: [u8; 8],
}

/// The batches a rewrite changes, in fetch order.
type Changed = Vec<Change>;
