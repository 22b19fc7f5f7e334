//! How a batch travels: appended at its cluster, rewritten by the
//! strategy at each mirror hop, checked by Kafka's producer state there,
//! and carried on along every link out of it that does not lead back to a
//! cluster it has been in.

use super::psm::{Appended, Origin};
use super::{Held, PerStrategy, Producer, Sim, Strategy, Travelling, MAX_DELIVERIES, STRATEGIES};
use crate::batch::{Batch, BatchMut};
use crate::error::{Error, Result};
use crate::mapper::Mapper;
use crate::rewrite::RewriteOptions;

impl Sim {
    /// Appends `batch` at its own `cluster` in world `w`, then mirrors it
    /// along every path out of it, depth first in link order. A worklist,
    /// not recursion, so a long chain cannot exhaust the stack; every
    /// append counts against [`MAX_DELIVERIES`].
    pub(super) fn deliver(
        &mut self,
        strategy: Strategy,
        cluster: usize,
        batch: Travelling,
    ) -> Result<()> {
        self.deliver_from(strategy, cluster, None, batch, 0)
    }

    /// [`Sim::deliver`] from `cluster`, where `batch` arrives from `from`.
    fn deliver_from(
        &mut self,
        strategy: Strategy,
        cluster: usize,
        from: Option<usize>,
        batch: Travelling,
        distance: u32,
    ) -> Result<()> {
        let mut work = vec![(cluster, from, batch, distance)];
        while let Some((cluster, from, batch, distance)) = work.pop() {
            self.deliveries += 1;
            if self.deliveries > MAX_DELIVERIES {
                return Err(Error::invalid(format!(
                    "the run needs more than {MAX_DELIVERIES} batch deliveries (each path \
                     through the topology counts once): make the topology or the counts smaller"
                )));
            }
            let Some(mut batch) = self.append_at(strategy, cluster, from, batch, distance)? else {
                continue; // refused, held, or a copy the host dropped: it goes no further
            };
            batch.been.push(cluster);
            let next: Vec<usize> = self
                .out_links(cluster)
                .filter(|to| !batch.been.contains(to))
                .collect();
            for to in next.into_iter().rev() {
                work.push((to, Some(cluster), batch.clone(), distance + 1));
            }
        }
        Ok(())
    }

    /// Retries every held batch whose transaction has ended, in the order
    /// they were held; a batch still blocked stays held.
    pub(super) fn retry_held(&mut self) -> Result<()> {
        for strategy in STRATEGIES {
            let held = std::mem::take(&mut self.worlds.get_mut(strategy).held);
            for h in held {
                let world = self.worlds.get_mut(strategy);
                if world.psm[h.cluster].blocks(h.pid, h.batch.transactional) {
                    world.held.push(h);
                    continue;
                }
                self.deliver_from(strategy, h.cluster, Some(h.from), h.batch, h.distance)?;
            }
        }
        Ok(())
    }

    /// Appends `batch` at `cluster` (arriving from `from`, or local, after
    /// the strategy's rewrite); returns it as appended there, or `None`
    /// when it was not written: Kafka refused it, the mirror holds it
    /// (a stall), or, under mirrorpid, the host dropped it as a copy that
    /// came by another path.
    fn append_at(
        &mut self,
        strategy: Strategy,
        cluster: usize,
        from: Option<usize>,
        mut batch: Travelling,
        distance: u32,
    ) -> Result<Option<Travelling>> {
        let original = batch.clone();
        if let Some(src) = from {
            let incoming = read_pid(&batch.bytes);
            match strategy {
                Strategy::Verbatim => {}
                Strategy::Kip => {
                    let to = incoming.wrapping_add(2).wrapping_neg();
                    BatchMut::whole(&mut batch.bytes).set_producer_id(to);
                }
                Strategy::Mirrorpid => {
                    let config = self.config.clone();
                    let world = self.worlds.get_mut(strategy);
                    let mapper = match &mut world.mappers[cluster] {
                        Some(m) => m,
                        slot => slot.insert(Mapper::new(config)?),
                    };
                    let out = mapper.rewrite(
                        &self.clusters[src],
                        &mut batch.bytes,
                        self.now,
                        RewriteOptions::default(),
                    )?;
                    // The host's protocol: records durable, then confirm,
                    // then append the batch.
                    world.state_topic[cluster].extend(out.records);
                    mapper.confirm();
                    self.who
                        .entry((cluster, self.clusters[src].clone(), incoming))
                        .or_default()
                        .insert(batch.owner);
                }
            }
        }
        let pid_here = read_pid(&batch.bytes);
        // What crossed where, whatever Kafka then does with it.
        if let Some(src) = from {
            *self
                .crossings
                .entry((src, cluster, batch.owner))
                .or_default()
                .get_mut(strategy) = pid_here;
        }
        let hop = self
            .hops
            .entry((batch.owner, cluster))
            .or_insert_with(|| (distance, PerStrategy::default()));
        hop.0 = hop.0.min(distance);
        *hop.1.get_mut(strategy) = pid_here;
        if let Some(src) = from {
            if strategy == Strategy::Mirrorpid
                && self.worlds.mirrorpid.psm[cluster].holds(batch.serial)
            {
                // The host's copy check after the rewrite (mirrorpid-kafka's
                // Copies): a batch the log already holds, come by another
                // path, is not appended again.
                self.worlds.mirrorpid.psm[cluster].drop_copy();
                return Ok(None);
            }
            if self.worlds.get(strategy).psm[cluster].blocks(pid_here, batch.transactional)
                && !batch.marker
            {
                // Kafka refuses it (counted once, here) and the mirror
                // stalls on it until the transaction ends.
                let appended = appended(
                    &self.producers,
                    &batch,
                    pid_here,
                    Origin::Replication,
                    self.now,
                    self.transaction_version,
                );
                let outcome = self.worlds.get_mut(strategy).psm[cluster].append(&appended);
                self.say(strategy, cluster, outcome.incidents);
                self.worlds.get_mut(strategy).held.push(Held {
                    cluster,
                    from: src,
                    batch: original,
                    distance,
                    pid: pid_here,
                });
                return Ok(None);
            }
        }
        let origin = if from.is_some() {
            Origin::Replication
        } else {
            Origin::Client
        };
        let appended = appended(
            &self.producers,
            &batch,
            pid_here,
            origin,
            self.now,
            self.transaction_version,
        );
        let world = self.worlds.get_mut(strategy);
        let outcome = world.psm[cluster].append(&appended);
        if outcome.written {
            world.logs[cluster] += 1;
        }
        self.say(strategy, cluster, outcome.incidents);
        Ok(outcome.written.then_some(batch))
    }
}

/// What the producer-state model needs of `batch`, carrying `pid` here.
fn appended<'a>(
    producers: &'a [Producer],
    batch: &Travelling,
    pid: i64,
    origin: Origin,
    now_ms: i64,
    transaction_version: u8,
) -> Appended<'a> {
    Appended {
        owner: &producers[batch.owner].id,
        idempotent: producers[batch.owner].pid >= 0,
        pid,
        epoch: batch.epoch,
        base_sequence: batch.base_sequence,
        count: 1,
        transactional: batch.transactional,
        marker: batch.marker,
        commit: batch.commit,
        serial: batch.serial,
        origin,
        now_ms,
        transaction_version,
    }
}

/// The producerId of a batch the simulator built (always complete).
fn read_pid(bytes: &[u8]) -> i64 {
    Batch::whole(bytes).producer_id()
}
