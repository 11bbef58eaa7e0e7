//! Batch mode (Manku et al. §3.3): many queries against a large set at once.

use nearcrawl_fingerprint::Fingerprint;

use crate::{HammingIndex, IndexParams, Match};

/// A match between query number `query` and a fingerprint of the streamed set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BatchMatch {
    /// Index of the query in the batch.
    pub query: usize,
    /// The streamed fingerprint, its payload and its distance to the query.
    pub found: Match,
}

/// A batch of query fingerprints with the permuted tables built over the batch (which is small),
/// so that a large set can be streamed through them chunk by chunk, as the paper's mappers do
/// with 64 MB chunks of the big file. Memory stays proportional to the batch, not the set.
///
/// ```
/// use nearcrawl_fingerprint::Fingerprint;
/// use nearcrawl_hamming_index::{BatchQuery, IndexParams};
///
/// let batch = BatchQuery::new(IndexParams::manku_16_tables(), &[Fingerprint::new(0b1111)]);
/// let mut out = Vec::new();
/// batch.scan(&[(Fingerprint::new(0b0111), 42), (Fingerprint::new(!0), 7)], &mut out);
/// assert_eq!(out.len(), 1);
/// assert_eq!((out[0].query, out[0].found.payload, out[0].found.distance), (0, 42, 1));
/// ```
#[derive(Clone, Debug)]
pub struct BatchQuery {
    tables: HammingIndex,
}

impl BatchQuery {
    /// Builds the tables over the query batch.
    pub fn new(params: IndexParams, queries: &[Fingerprint]) -> BatchQuery {
        let entries = queries.iter().enumerate().map(|(i, &q)| (q, i as u64));
        BatchQuery {
            tables: HammingIndex::from_entries(params, entries),
        }
    }

    /// The number of queries in the batch.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// True for an empty batch.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Streams one chunk of the large set through the batch's tables, appending every
    /// (query, streamed fingerprint) pair within distance k to `out`. Returns how many were added.
    pub fn scan(&self, chunk: &[(Fingerprint, u64)], out: &mut Vec<BatchMatch>) -> usize {
        let fingerprints: Vec<Fingerprint> = chunk.iter().map(|&(f, _)| f).collect();
        let hits = self.tables.query_batch(&fingerprints);
        out.extend(hits.iter().map(|hit| {
            let (fingerprint, payload) = chunk[hit.query];
            BatchMatch {
                query: hit.found.payload as usize,
                found: Match {
                    fingerprint,
                    payload,
                    distance: hit.found.distance,
                },
            }
        }));
        hits.len()
    }
}

/// All pairs `(i, j, distance)`, `i < j`, of fingerprints within distance k of each other: the
/// input of clustering near-duplicates. Builds the tables once over the set and queries each
/// member in one [`HammingIndex::query_batch`]; each pair is reported once, sorted.
pub fn near_pairs(params: IndexParams, fingerprints: &[Fingerprint]) -> Vec<(usize, usize, u32)> {
    let index = HammingIndex::from_entries(
        params,
        fingerprints.iter().enumerate().map(|(i, &f)| (f, i as u64)),
    );
    let mut out: Vec<(usize, usize, u32)> = index
        .query_batch(fingerprints)
        .into_iter()
        .filter(|hit| hit.found.payload as usize > hit.query)
        .map(|hit| (hit.query, hit.found.payload as usize, hit.found.distance))
        .collect();
    out.sort_unstable();
    out
}
