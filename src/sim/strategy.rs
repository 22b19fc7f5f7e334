//! The three ways a mirror hop can treat producer IDs, and a value for each.

use serde::Serialize;

/// How a mirror hop treats producer IDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Strategy {
    /// PIDs copied as they are.
    Verbatim,
    /// `pid -> -(pid + 2)` at every hop.
    Kip,
    /// mirrorpid's mapper.
    Mirrorpid,
}

/// All strategies, in report order.
pub const STRATEGIES: [Strategy; 3] = [Strategy::Verbatim, Strategy::Kip, Strategy::Mirrorpid];

/// A value per strategy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PerStrategy<T> {
    /// Under verbatim mirroring.
    pub verbatim: T,
    /// Under `-(pid+2)`.
    pub kip: T,
    /// Under mirrorpid.
    pub mirrorpid: T,
}

impl<T> PerStrategy<T> {
    /// A value for each strategy, from `f`.
    pub fn from_fn(mut f: impl FnMut(Strategy) -> T) -> PerStrategy<T> {
        PerStrategy {
            verbatim: f(Strategy::Verbatim),
            kip: f(Strategy::Kip),
            mirrorpid: f(Strategy::Mirrorpid),
        }
    }

    /// The values, in [`STRATEGIES`] order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        [&self.verbatim, &self.kip, &self.mirrorpid].into_iter()
    }

    /// The value for `s`.
    pub fn get(&self, s: Strategy) -> &T {
        match s {
            Strategy::Verbatim => &self.verbatim,
            Strategy::Kip => &self.kip,
            Strategy::Mirrorpid => &self.mirrorpid,
        }
    }
    /// The value for `s`, mutably.
    pub fn get_mut(&mut self, s: Strategy) -> &mut T {
        match s {
            Strategy::Verbatim => &mut self.verbatim,
            Strategy::Kip => &mut self.kip,
            Strategy::Mirrorpid => &mut self.mirrorpid,
        }
    }
}
