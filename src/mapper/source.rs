//! A direct source cluster ID, checked where it enters.

use crate::error::{Error, Result};

/// A direct source cluster ID, checked once where it enters (a call's
/// argument, a record's key, a scenario): 1 to 32767 bytes of UTF-8, so it
/// fits a Kafka STRING in the records that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceCluster<'a>(&'a str);

impl<'a> SourceCluster<'a> {
    /// Checks `id`; [`Error::InvalidInput`] if it is empty or too long.
    pub fn new(id: &'a str) -> Result<SourceCluster<'a>> {
        if id.is_empty() || id.len() > i16::MAX as usize {
            return Err(Error::invalid(text!(
                "source cluster ID must be 1 to 32767 bytes of UTF-8, got {} bytes",
                id.len()
            )));
        }
        Ok(SourceCluster(id))
    }

    /// The ID.
    pub fn as_str(self) -> &'a str {
        self.0
    }
}
