//! Rewriting a fetch's batches in place (`docs/DESIGN.md`, "The batch path").
//!
//! For each complete v2 batch with an idempotent PID, the mapper maps the
//! PID, the new PID is written at offset 43 and the CRC at offset 17 is
//! patched from the old CRC and the 8 changed bytes:
//! the records are never read, so a compressed batch stays compressed and a
//! corrupt batch stays detectably corrupt. The mapper learns last-seen times
//! and transaction state from what passes through.
//!
//! A rewrite is one [`Call`]: the whole fetch is walked once, each batch
//! checked and mapped as it is reached, and the writes it decides are
//! made only at [`Rewrite::commit`], after the host has persisted what the
//! call returned. A [`Rewrite`] dropped before that changes nothing, the
//! fetch included. The fetch is its bytes or its gathered headers
//! (`HeaderView`, feature `broker`); the walk is the same for both.

mod walk;

pub use crate::batch::BatchOutcome;
use crate::batch::{write_all, HeaderView};
use crate::error::Result;
use crate::mapper::{Call, Mapper, Source};
use crate::record::StateRecord;

/// How a rewrite treats its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewriteOptions {
    /// Verify every v2 batch's CRC first and reject a mismatch (the
    /// records are read: only for a fetch's bytes, not its headers).
    pub strict_crc: bool,
    /// The input ends on a batch boundary: a truncated tail is an error
    /// instead of being left for the next fetch.
    pub complete: bool,
    /// Describe every batch in [`RewriteResult::batches`], for a tool
    /// that reports them; a broker reads only the bytes and the records.
    pub outcomes: bool,
}

/// The result of a committed rewrite.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RewriteResult {
    /// Bytes of complete entries; the rest is a truncated tail, untouched.
    pub consumed: usize,
    /// `__mirror_state` records to persist, in the order they arose.
    pub records: Vec<StateRecord>,
    /// Whether any batch caused a collision (snapshot the producer state).
    pub snapshot_required: bool,
    /// With [`RewriteOptions::outcomes`], one outcome per v2 batch, in
    /// fetch order; otherwise empty.
    pub batches: Vec<BatchOutcome>,
    /// How many legacy (magic 0/1) entries passed untouched.
    pub legacy_entries: usize,
}

/// What a rewrite writes into when it commits.
#[derive(Debug)]
enum Target<'a> {
    /// The fetch's bytes.
    Bytes(&'a mut [u8]),
    /// Its gathered headers.
    Headers(&'a mut HeaderView<'a>),
}

/// A fetch checked and mapped, its writes decided and not yet made: the
/// host persists [`Rewrite::records`], then [`Rewrite::commit`]s. Dropped
/// uncommitted, it changes nothing, neither the mapper nor the fetch.
#[derive(Debug)]
#[must_use = "a rewrite dropped without commit() changes nothing"]
pub struct Rewrite<'a> {
    call: Call<'a>,
    target: Target<'a>,
}

impl<'a> Rewrite<'a> {
    /// The `__mirror_state` records to persist before the batches are
    /// appended, in the order they arose.
    pub fn records(&self) -> &[StateRecord] {
        self.call.records()
    }

    /// Whether any batch caused a collision (snapshot the producer state).
    pub fn snapshot_required(&self) -> bool {
        self.call.snapshot_required()
    }

    /// Bytes of complete entries; the rest is a truncated tail.
    pub fn consumed(&self) -> usize {
        self.call.changes_ref().consumed
    }

    /// With [`RewriteOptions::outcomes`], one outcome per v2 batch, in
    /// fetch order, as noted (decoded at [`Rewrite::commit`]); otherwise
    /// empty.
    #[cfg(feature = "js")]
    pub(crate) fn noted(&self) -> &[crate::batch::Noted] {
        &self.call.changes_ref().outcomes
    }

    /// Makes the writes and keeps the call's changes; returns what it
    /// did.
    pub fn commit(self) -> RewriteResult {
        let Rewrite { mut call, target } = self;
        write(&call, target);
        let snapshot_required = call.snapshot_required();
        let changes = call.changes();
        let (consumed, legacy_entries) = (changes.consumed, changes.legacy_entries);
        let batches = changes.decode();
        RewriteResult {
            consumed,
            records: call.commit_records(),
            snapshot_required,
            batches,
            legacy_entries,
        }
    }

    /// The writes the rewrite decided, one a changed batch, in fetch order
    /// (they stay in the mapper until its next call).
    #[cfg(feature = "js")]
    pub(crate) fn writes(&self) -> &[crate::batch::PidWrite] {
        self.call.writes()
    }

    /// [`Rewrite::commit`] for a host that has read the outcomes it needs
    /// ([`Rewrite::noted`], which stay in the mapper until its next call):
    /// returns the records.
    #[cfg(feature = "js")]
    pub(crate) fn finish_records(self) -> Vec<StateRecord> {
        let Rewrite { call, target, .. } = self;
        write(&call, target);
        call.commit_records()
    }

    /// [`Rewrite::commit`] for a host that has read what it needs
    /// ([`Rewrite::records`], [`Rewrite::consumed`]): returns nothing, and
    /// the call's buffers stay with the mapper for the next call.
    #[inline]
    pub fn finish(self) {
        let Rewrite { call, target, .. } = self;
        write(&call, target);
        call.commit();
    }
}

/// Makes a call's writes in `target`.
#[inline(always)]
fn write(call: &Call<'_>, target: Target<'_>) {
    match target {
        Target::Bytes(buf) => write_all(call.writes(), buf),
        Target::Headers(view) => view.write_all(call.writes()),
    }
}

impl<'a> Call<'a> {
    /// Walks `buf`, the fetch's bytes, mapping every mirrored batch that
    /// arrived from `source_cluster_id`, and decides its writes: made in
    /// `buf` at [`Rewrite::commit`].
    #[inline(always)]
    pub fn rewrite<'s>(
        self,
        source_cluster_id: impl Into<Source<'s>>,
        buf: &'a mut [u8],
        options: RewriteOptions,
    ) -> Result<Rewrite<'a>> {
        let mut call = self;
        let (source, cluster) = call.source(source_cluster_id.into())?;
        walk::walk(&mut call, source, cluster, &*buf, options)?;
        Ok(Rewrite {
            call,
            target: Target::Bytes(buf),
        })
    }

    broker_api! {
        /// [`Call::rewrite`] on a fetch seen through its gathered headers: the
        /// same checks, mappings, records and outcomes as on the whole fetch,
        /// each changed batch's new producer ID and CRC written into its slot
        /// (and the slot marked changed, every other slot unchanged) at
        /// commit. The records are never needed, so a host with the fetch in
        /// its own memory copies 112 bytes a batch whatever the batches' size.
        ///
        /// `options.strict_crc` needs the records, so it is refused
        /// ([`crate::Error::InvalidInput`]): verify CRCs where the records are
        /// (Kafka's `RecordBatch.ensureValid()`).
        #[inline(always)]
        pub fn rewrite_headers<'s>(
            self,
            source_cluster_id: impl Into<Source<'s>>,
            view: &'a mut HeaderView<'a>,
            options: RewriteOptions,
        ) -> Result<Rewrite<'a>> {
            let mut call = self;
            let (source, cluster) = call.source(source_cluster_id.into())?;
            if options.strict_crc {
                return Err(crate::Error::invalid(
                    "strict CRC needs the records: a header view holds none",
                ));
            }
            let (entries, complete) = (view.gathered(), options.complete);
            // The walk is a function of its own (`walk::walk_headers`), one
            // copy noting outcomes and one not; with no slot there is nothing
            // for it to find.
            match (entries.slots(), options.outcomes) {
                (0, _) => {}
                (_, true) => walk::walk_headers::<true>(&mut call, source, cluster, entries, complete)?,
                (_, false) => {
                    walk::walk_headers::<false>(&mut call, source, cluster, entries, complete)?
                }
            }
            Ok(Rewrite {
                call,
                target: Target::Headers(view),
            })
        }
    }
}

impl Mapper {
    /// Rewrites, in place, every mirrored batch of `buf` that arrived from
    /// `source_cluster_id`, at host time `now_ms`: one [`Call`], rewritten
    /// and committed.
    ///
    /// On error `buf` is unchanged and so is the mapper.
    pub fn rewrite(
        &mut self,
        source_cluster_id: &str,
        buf: &mut [u8],
        now_ms: i64,
        options: RewriteOptions,
    ) -> Result<RewriteResult> {
        Ok(self
            .begin(now_ms)
            .rewrite(source_cluster_id, buf, options)?
            .commit())
    }

    broker_api! {
        /// [`Mapper::rewrite`] on a fetch seen through its gathered headers
        /// ([`Call::rewrite_headers`]).
        pub fn rewrite_headers<'v>(
            &mut self,
            source_cluster_id: &str,
            view: &mut HeaderView<'v>,
            now_ms: i64,
            options: RewriteOptions,
        ) -> Result<RewriteResult> {
            let mut view = view.reborrow();
            let rewrite = self
                .begin(now_ms)
                .rewrite_headers(source_cluster_id, &mut view, options)?;
            Ok(rewrite.commit())
        }
    }
}
