//! What each event of a scenario does to the simulated topology.

use super::scenario::Event;
use super::{Sim, Travelling, MAX_COUNT, STRATEGIES};
use crate::batch::{BatchBuilder, ControlType, RecordSpec};
use crate::error::{Error, Result};

impl Sim {
    /// Applies one event; returns what happened, in a line.
    pub(super) fn event(&mut self, event: &Event) -> Result<String> {
        Ok(match event {
            Event::Produce {
                producer,
                count,
                transactional,
            } => {
                let p = self.producer(producer)?;
                if *count > MAX_COUNT {
                    return Err(Error::invalid(format!(
                        "count {count} is over the simulator's {MAX_COUNT} batches per event"
                    )));
                }
                for _ in 0..*count {
                    self.produce(p, *transactional, None)?;
                }
                format!(
                    "{producer} writes {count} {}batch(es)",
                    if *transactional { "transactional " } else { "" }
                )
            }
            Event::Commit { producer } | Event::Abort { producer } => {
                let p = self.producer(producer)?;
                let commit = matches!(event, Event::Commit { .. });
                let marker = if commit {
                    ControlType::Commit
                } else {
                    ControlType::Abort
                };
                self.produce(p, true, Some(marker))?;
                format!("{producer} {}", if commit { "commits" } else { "aborts" })
            }
            Event::Restart { producer } => {
                let p = self.producer(producer)?;
                let epoch = next_epoch(&self.producers[p].id, self.producers[p].epoch)?;
                self.producers[p].epoch = epoch;
                self.producers[p].sequence = 0;
                format!("{producer} restarts: epoch {epoch}, sequences from 0")
            }
            Event::Failover { cluster } => {
                let c = self.cluster(cluster, "failover")?;
                self.writable[c] = true;
                self.links.retain(|l| l.1 != c);
                format!("failover: {cluster} is writable, mirroring into it stops")
            }
            Event::AddLink { from, to } => {
                self.add_link(from, to)?;
                format!("link {from} -> {to} added")
            }
            Event::RemoveLink { from, to } => {
                let context = format!("remove link {from} -> {to}");
                let (f, t) = (self.cluster(from, &context)?, self.cluster(to, &context)?);
                if !self.links.remove(&(f, t)) {
                    return Err(Error::invalid(format!("{context}: no such link")));
                }
                format!("link {from} -> {to} removed")
            }
            Event::Election { cluster, snapshot } => {
                let c = self.cluster(cluster, "election")?;
                self.elect(c, *snapshot)?;
                format!(
                    "leader election at {cluster}: {}replay of __mirror_state",
                    if *snapshot {
                        "snapshot restore, then "
                    } else {
                        ""
                    }
                )
            }
            Event::Advance { ms } => {
                self.advance(*ms)?;
                format!("{ms} ms pass")
            }
            Event::Expire { advance_ms } => {
                self.advance(*advance_ms)?;
                let (now, limit) = (self.now, self.config.producer_expiration_ms);
                for strategy in STRATEGIES {
                    for psm in &mut self.worlds.get_mut(strategy).psm {
                        psm.expire(now, limit);
                    }
                }
                let mut dropped = 0;
                let world = &mut self.worlds.mirrorpid;
                for (c, m) in world.mappers.iter_mut().enumerate() {
                    if let Some(m) = m {
                        let tombstones = m.expire(now)?;
                        dropped += tombstones.len();
                        world.state_topic[c].extend(tombstones);
                    }
                }
                format!(
                    "expiry after {advance_ms} ms: producer state drops idle producers; \
                     mirrorpid drops {dropped} binding(s)"
                )
            }
        })
    }

    /// One batch of producer `p`, written locally and mirrored everywhere.
    fn produce(
        &mut self,
        p: usize,
        transactional: bool,
        marker: Option<ControlType>,
    ) -> Result<()> {
        let (cluster, pid, mut epoch, seq) = {
            let pr = &self.producers[p];
            (pr.cluster, pr.pid, pr.epoch, pr.sequence)
        };
        if marker.is_some() && self.transaction_version >= 2 {
            // The coordinator bumps the epoch and writes the marker with it;
            // the producer goes on at that epoch, from sequence 0.
            epoch = next_epoch(&self.producers[p].id, epoch)?;
        }
        if !self.writable[cluster] {
            return Err(Error::invalid(format!(
                "cluster {:?} is a read-only mirror (add a failover event first)",
                self.clusters[cluster]
            )));
        }
        let is_marker = marker.is_some();
        let bytes = BatchBuilder {
            base_offset: 0,
            producer_id: pid,
            producer_epoch: epoch,
            base_sequence: if is_marker || pid < 0 { -1 } else { seq },
            timestamp: self.now,
            transactional,
            control: marker,
            records: vec![RecordSpec {
                key: Some(self.producers[p].id.clone().into_bytes()),
                value: Some(format!("seq {seq}").into_bytes()),
            }],
            ..BatchBuilder::default()
        }
        .encode();
        if !is_marker && pid >= 0 {
            self.producers[p].sequence += 1;
        }
        if self.producers[p].epoch != epoch {
            self.producers[p].epoch = epoch;
            self.producers[p].sequence = 0;
        }
        self.serials += 1;
        let batch = Travelling {
            bytes,
            owner: p,
            epoch,
            base_sequence: seq,
            transactional: transactional && !is_marker,
            marker: is_marker,
            commit: matches!(marker, Some(ControlType::Commit)),
            serial: self.serials,
            been: Vec::new(),
        };
        for strategy in STRATEGIES {
            self.deliver(strategy, cluster, batch.clone())?;
        }
        Ok(())
    }
}

/// The epoch after `epoch` for producer `id`; an error past Kafka's last.
fn next_epoch(id: &str, epoch: i16) -> Result<i16> {
    epoch
        .checked_add(1)
        .ok_or_else(|| Error::invalid(format!("producer {id:?}: its epoch {epoch} is the last")))
}

/// The event's type, as scenarios spell it.
pub(super) fn describe(e: &Event) -> &'static str {
    match e {
        Event::Produce { .. } => "produce",
        Event::Commit { .. } => "commit",
        Event::Abort { .. } => "abort",
        Event::Restart { .. } => "restart",
        Event::Failover { .. } => "failover",
        Event::AddLink { .. } => "addLink",
        Event::RemoveLink { .. } => "removeLink",
        Event::Election { .. } => "election",
        Event::Advance { .. } => "advance",
        Event::Expire { .. } => "expire",
    }
}
