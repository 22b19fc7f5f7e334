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

use crate::batch::{BatchMut, Batches, ControlType, Entry};
use crate::error::Result;
use crate::mapper::{Mapper, SourceCluster};
use crate::record::StateRecord;

/// How [`Mapper::rewrite`] treats its input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewriteOptions {
    /// Verify every v2 batch's CRC first and reject a mismatch.
    pub strict_crc: bool,
    /// The input ends on a batch boundary: a truncated tail is an error
    /// instead of being left for the next fetch.
    pub complete: bool,
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

struct Plan {
    offset: usize,
    pid: i64,
    transactional: bool,
    control: Option<ControlType>,
    base_offset: i64,
}

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
        self.rewrite_then(source_cluster_id, buf, now_ms, options, |_| Ok(()))
    }

    /// [`Mapper::rewrite`], running `then` on the result before the call
    /// takes effect: if `then` fails, the rewrite fails with its error and
    /// changes nothing. The broker module writes its output there, so that
    /// running out of memory for it undoes the call.
    pub fn rewrite_then(
        &mut self,
        source_cluster_id: &str,
        buf: &mut [u8],
        now_ms: i64,
        options: RewriteOptions,
        then: impl FnOnce(&RewriteResult) -> Result<()>,
    ) -> Result<RewriteResult> {
        let source = SourceCluster::new(source_cluster_id)?;
        let (plans, consumed, legacy_entries) = scan(buf, options)?;
        let result = self.atomically(|m| {
            let outcomes = m.map_plans(source, &plans, now_ms)?;
            let oom = |_| crate::mapper::table::out_of_memory("a rewrite's results");
            let mut result = RewriteResult {
                consumed,
                legacy_entries,
                ..RewriteResult::default()
            };
            result.batches.try_reserve_exact(plans.len()).map_err(oom)?;
            let new = outcomes.iter().filter(|o| o.record.is_some()).count();
            result.records.try_reserve_exact(new).map_err(oom)?;
            for (plan, outcome) in plans.iter().zip(outcomes) {
                result.snapshot_required |= outcome.snapshot_required;
                result.records.extend(outcome.record.map(|r| *r));
                result.batches.push(BatchOutcome {
                    offset: plan.offset,
                    base_offset: plan.base_offset,
                    original_pid: plan.pid,
                    mapped_pid: outcome.mapped,
                    salt: outcome.salt,
                    transactional: plan.transactional,
                    control: plan.control,
                });
            }
            then(&result)?;
            Ok(result)
        })?;
        // The bytes last, once nothing can fail.
        for (plan, outcome) in plans.iter().zip(&result.batches) {
            if outcome.mapped_pid != plan.pid {
                BatchMut::at(buf, plan.offset).set_producer_id(outcome.mapped_pid);
            }
        }
        Ok(result)
    }

    fn map_plans(
        &mut self,
        source: SourceCluster<'_>,
        plans: &[Plan],
        now_ms: i64,
    ) -> Result<Vec<crate::mapper::MapOutcome>> {
        // Room for every save this call can make (one per batch at most)
        // and for its results, so that no step below fails to allocate.
        let oom = |_| crate::mapper::table::out_of_memory("a rewrite's results");
        let mut outcomes = Vec::new();
        outcomes.try_reserve_exact(plans.len()).map_err(oom)?;
        self.reserve_saves(plans.len())?;
        for plan in plans {
            let (outcome, idx) = self.map_indexed(source, plan.pid, now_ms)?;
            if let Some(idx) = idx {
                match plan.control {
                    Some(c) if c.ends_transaction() => self.set_transaction(idx, false),
                    Some(_) => {}
                    None if plan.transactional => self.set_transaction(idx, true),
                    None => {}
                }
            }
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }
}

/// Checks the whole buffer and lists its v2 batches; changes nothing.
fn scan(buf: &[u8], options: RewriteOptions) -> Result<(Vec<Plan>, usize, usize)> {
    let mut walker = if options.complete {
        Batches::complete(buf)
    } else {
        Batches::new(buf)
    };
    let mut plans = Vec::new();
    let mut legacy = 0;
    for entry in walker.by_ref() {
        match entry? {
            Entry::Legacy { .. } => legacy += 1,
            Entry::Batch { offset, batch } => {
                if options.strict_crc {
                    let computed = batch.computed_crc();
                    if batch.crc() != computed {
                        return Err(crate::Error::CrcMismatch {
                            offset,
                            stored: batch.crc(),
                            computed,
                        });
                    }
                }
                plans
                    .try_reserve(1)
                    .map_err(|_| crate::mapper::table::out_of_memory("a rewrite's plan"))?;
                plans.push(Plan {
                    offset,
                    pid: batch.producer_id(),
                    transactional: batch.is_transactional(),
                    control: batch.control_type(offset)?,
                    base_offset: batch.base_offset(),
                });
            }
        }
    }
    Ok((plans, walker.consumed(), legacy))
}
