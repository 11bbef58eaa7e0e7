//! The reference every fast structure is tested against.

use nearcrawl_fingerprint::Fingerprint;

use crate::Match;

/// Compares the query with every stored fingerprint. Obviously correct and O(n) per query: the
/// reference for property tests and the baseline for benchmarks.
#[derive(Clone, Debug)]
pub struct BruteForceIndex {
    k: u32,
    entries: Vec<(Fingerprint, u64)>,
}

impl BruteForceIndex {
    /// An empty reference index with radius `k`.
    pub fn new(k: u32) -> BruteForceIndex {
        BruteForceIndex {
            k,
            entries: Vec::new(),
        }
    }

    /// Stores an entry.
    pub fn insert(&mut self, fingerprint: Fingerprint, payload: u64) {
        self.entries.push((fingerprint, payload));
    }

    /// Every entry within distance k, sorted.
    pub fn query(&self, query: Fingerprint) -> Vec<Match> {
        let mut out: Vec<Match> = self
            .entries
            .iter()
            .map(|&(fingerprint, payload)| Match {
                fingerprint,
                payload,
                distance: query.distance(fingerprint),
            })
            .filter(|m| m.distance <= self.k)
            .collect();
        out.sort_unstable();
        out
    }
}

/// Every pair `(i, j, distance)` with `i < j` and `fingerprints[i]`, `fingerprints[j]` within
/// distance k, by comparing all pairs: the reference for [`crate::near_pairs`].
pub fn near_pairs_brute_force(fingerprints: &[Fingerprint], k: u32) -> Vec<(usize, usize, u32)> {
    let mut out = Vec::new();
    for (i, a) in fingerprints.iter().enumerate() {
        for (j, b) in fingerprints.iter().enumerate().skip(i + 1) {
            let d = a.distance(*b);
            if d <= k {
                out.push((i, j, d));
            }
        }
    }
    out
}
