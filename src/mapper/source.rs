//! A direct source cluster ID, checked where it enters, and one a host
//! keeps from call to call ([`KnownSource`]).

use std::cell::Cell;

use crate::error::{Error, Result};

/// A direct source cluster ID, checked once where it enters (a call's
/// argument, a record's key, a scenario): 1 to 32767 bytes of UTF-8, so it
/// fits a Kafka STRING in the records that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceCluster<'a>(&'a str);

impl<'a> SourceCluster<'a> {
    /// Checks `id`; [`Error::InvalidInput`] if it is empty or too long.
    #[inline]
    pub fn new(id: &'a str) -> Result<SourceCluster<'a>> {
        if id.is_empty() || id.len() > i16::MAX as usize {
            return Err(bad_length(id));
        }
        Ok(SourceCluster(id))
    }

    /// The ID.
    #[inline(always)]
    pub fn as_str(self) -> &'a str {
        self.0
    }
}

/// The error of an ID of the wrong length.
#[cold]
#[inline(never)]
fn bad_length(id: &str) -> Error {
    Error::invalid(text!(
        "source cluster ID must be 1 to 32767 bytes of UTF-8, got {} bytes",
        id.len()
    ))
}

/// Where a table found a source's cluster: the table's state then (its
/// clusters' version, unique to every table and every change of its
/// clusters, never 0) and the cluster's number, [`Found::NONE`] when it
/// had none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) version: u64,
    pub(crate) cluster: u32,
}

impl Found {
    /// The cluster number of a source the table does not name.
    pub(crate) const NONE: u32 = u32::MAX;
    /// Nothing found yet: no table's version is 0.
    const UNKNOWN: Found = Found {
        version: 0,
        cluster: Found::NONE,
    };
}

/// A source cluster ID a host keeps from call to call (a broker mirroring
/// one path passes the same ID on every fetch), with where the mapper last
/// found its cluster: a rewrite from it finds the cluster with one
/// comparison of the table's version, not a comparison of names. The ID
/// is checked by each call that takes it, as a plain ID is.
#[derive(Debug)]
pub struct KnownSource {
    id: String,
    found: Cell<Found>,
}

impl KnownSource {
    /// No ID yet (an empty one, which every call refuses).
    pub const fn new() -> KnownSource {
        KnownSource {
            id: String::new(),
            found: Cell::new(Found::UNKNOWN),
        }
    }

    /// Keeps `id` instead (its buffer reused) and forgets where it was
    /// found.
    pub fn set(&mut self, id: &str) {
        self.id.clear();
        self.id.push_str(id);
        self.found.set(Found::UNKNOWN);
    }

    /// The ID.
    #[inline(always)]
    pub fn as_str(&self) -> &str {
        &self.id
    }

    /// Where its cluster was found last.
    #[inline(always)]
    pub(crate) fn found(&self) -> &Cell<Found> {
        &self.found
    }
}

impl Default for KnownSource {
    fn default() -> KnownSource {
        KnownSource::new()
    }
}

/// The source cluster a call names: its ID, or a [`KnownSource`].
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// An ID, looked up afresh.
    Id(&'a str),
    /// An ID the host keeps between calls.
    Known(&'a KnownSource),
}

impl<'a> From<&'a str> for Source<'a> {
    #[inline(always)]
    fn from(id: &'a str) -> Source<'a> {
        Source::Id(id)
    }
}

impl<'a> From<&'a String> for Source<'a> {
    #[inline(always)]
    fn from(id: &'a String) -> Source<'a> {
        Source::Id(id)
    }
}

impl<'a> From<&'a KnownSource> for Source<'a> {
    #[inline(always)]
    fn from(k: &'a KnownSource) -> Source<'a> {
        Source::Known(k)
    }
}
