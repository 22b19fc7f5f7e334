//! Inputs an attacker would choose against mirrorpid's hash tables, and
//! random ones of the same shape, for the benchmarks that compare them
//! (`benches/adversary.rs` natively, `host/benches/wasm.rs` in wasmtime).
//!
//! The tables' hash keys are secret (seeded per mapper), so the best an
//! attacker can do is choose keys against a hash function it can compute:
//! the tables' first, fixed-key functions (version 1 here), which an
//! attacker who read the source could compute. [`colliding_pids`] finds, by brute force as an attacker would,
//! local PIDs whose version-1 identity hash agrees in its low 12 bits (so
//! that 100,000 of them share 32 of a 2^17-bucket table's home slots), and
//! [`colliding_names`] makes 23-byte cluster IDs that differ only in the
//! bytes version 1's name hash never read.

/// Version 1's folded multiply.
fn fold(x: u64, k: u64) -> u64 {
    let p = u128::from(x) * u128::from(k);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Version 1's identity hash of a PID from the first cluster a mapper saw.
fn v1_identity_hash(pid: i64) -> u64 {
    fold(pid as u64, 0x9e37_79b9_7f4a_7c15)
}

/// `n` local PIDs whose version-1 hashes share their low 12 bits.
pub fn colliding_pids(n: usize) -> Vec<i64> {
    (0i64..)
        .filter(|&pid| v1_identity_hash(pid) & 0xfff == 0)
        .take(n)
        .collect()
}

/// `n` random local PIDs (below 2^40), distinct.
pub fn random_pids(n: usize) -> Vec<i64> {
    let mut seen = std::collections::HashSet::new();
    let mut state = 0x1234_5678_u64;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let pid = ((z ^ (z >> 31)) >> 24) as i64;
        if seen.insert(pid) {
            out.push(pid);
        }
    }
    out
}

/// `n` 23-byte cluster IDs equal but for bytes 8 to 14, which version 1's
/// name hash skipped (identical hashes under it).
pub fn colliding_names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("cluster-{i:07}-suffix!")).collect()
}

/// `n` random 23-byte cluster IDs.
pub fn random_names(n: usize) -> Vec<String> {
    random_pids(2 * n)
        .chunks(2)
        .map(|p| format!("{:013x}{:010x}", p[0], p[1]))
        .map(|s| s[s.len() - 23..].to_owned())
        .collect()
}

/// The two shapes of 100,000 identities each benchmark maps: one source
/// with 100,000 PIDs, and 1,000 sources with PIDs 0 to 99 each.
pub struct Identities {
    /// (source, PIDs) per source.
    pub sources: Vec<(String, Vec<i64>)>,
}

impl Identities {
    /// Every set a benchmark compares, named: adversarial PIDs and cluster
    /// IDs, then random ones of the same shapes.
    pub fn sets() -> Vec<(String, Identities)> {
        let named = |kind: &str, sets: [(&str, Identities); 2]| {
            sets.into_iter()
                .map(|(what, ids)| (format!("{kind} {what}"), ids))
                .collect::<Vec<_>>()
        };
        let mut all = named("adversarial", Identities::adversarial());
        all.extend(named("random", Identities::random()));
        all
    }

    /// The attacker's choice: colliding PIDs, then colliding names.
    pub fn adversarial() -> [(&'static str, Identities); 2] {
        [
            ("PIDs", Identities::one_source(colliding_pids(100_000))),
            (
                "cluster IDs",
                Identities::many_sources(colliding_names(1_000)),
            ),
        ]
    }

    /// Random identities of the same shapes.
    pub fn random() -> [(&'static str, Identities); 2] {
        [
            ("PIDs", Identities::one_source(random_pids(100_000))),
            ("cluster IDs", Identities::many_sources(random_names(1_000))),
        ]
    }

    fn one_source(pids: Vec<i64>) -> Identities {
        Identities {
            sources: vec![("attacker".to_owned(), pids)],
        }
    }

    fn many_sources(names: Vec<String>) -> Identities {
        Identities {
            sources: names.into_iter().map(|n| (n, (0..100).collect())).collect(),
        }
    }

    /// Each source's PIDs as fetches of at most 1,000 small batches.
    pub fn fetches(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for (source, pids) in &self.sources {
            for chunk in pids.chunks(1_000) {
                let bytes = chunk
                    .iter()
                    .flat_map(|&pid| {
                        mirrorpid::batch::BatchBuilder {
                            producer_id: pid,
                            producer_epoch: 0,
                            base_sequence: 0,
                            ..mirrorpid::batch::BatchBuilder::default()
                        }
                        .encode()
                    })
                    .collect();
                out.push((source.clone(), bytes));
            }
        }
        out
    }
}
