//! Cluster names that share a region at salt 0, found by search, so that
//! tests can force collisions.

use std::collections::HashMap;

use mirrorpid::pid::{region, Origin};

/// The pair from the reference vectors.
pub const VECTOR_PAIR: (&str, &str) = ("cluster-2123", "cluster-2336");

/// Pairs of `c-N` names (N below `limit`) that share a salt-0 region.
pub fn colliding_pairs(limit: u32) -> Vec<(String, String)> {
    let mut seen: HashMap<u32, String> = HashMap::new();
    let mut pairs = Vec::new();
    for n in 0..limit {
        let name = format!("c-{n}");
        let r = region(Origin::Cluster(&name), 0);
        match seen.get(&r) {
            Some(other) => pairs.push((other.clone(), name)),
            None => {
                seen.insert(r, name);
            }
        }
    }
    pairs
}
