//! Batch mode (Manku et al. §3.3): many queries against a large set at once.

use nearcrawl_fingerprint::Fingerprint;

use crate::sort::bucket_sort;
use crate::{HammingIndex, IndexParams, Match};

mod walk;
mod walk_order;

use walk::WalkKernel;

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

impl HammingIndex {
    /// Every match of many queries at once, each (query, entry) pair exactly once, in no
    /// particular order. Table by table, the queries are grouped by their permuted key and
    /// probed in that order, so the probes walk each table in one direction instead of jumping
    /// at random: several times the throughput of one [`HammingIndex::query`] per fingerprint on
    /// large indexes.
    pub fn query_batch(&self, queries: &[Fingerprint]) -> Vec<BatchMatch> {
        let k = self.params.k();
        let mut out = Vec::new();
        for (query, q) in queries.iter().enumerate() {
            for &(stored, payload) in &self.pending {
                let distance = (stored ^ q.bits()).count_ones();
                if distance <= k {
                    let found = Match {
                        fingerprint: Fingerprint::new(stored),
                        payload,
                        distance,
                    };
                    out.push(BatchMatch { query, found });
                }
            }
        }
        // Hits of tables 1.. wait here as (table-0 key, query, distance): their payloads are
        // looked up in table 0 in key order at the end, a forward walk instead of a random jump
        // per hit. The fingerprint is the table-0 key's inverse.
        let mut deferred: Vec<(u64, usize, u32)> = Vec::new();
        let mut examined = 0;
        let kernel = WalkKernel::detect();
        for run in self.levels.iter().filter(|r| r.len() > 0) {
            walk_order::for_each_table(&self.layouts, queries, |j, order| {
                let mut previous = None;
                let (layout, table) = (&self.layouts[j], &run.tables[j]);
                let payloads = if j == 0 { &run.payloads[..] } else { &[] };
                walk::walk_table(
                    kernel,
                    layout,
                    table,
                    payloads,
                    order,
                    &mut examined,
                    &mut |query, index, found, distance| {
                        if j == 0 {
                            let found = Match {
                                fingerprint: Fingerprint::new(found),
                                payload: run.payloads[index],
                                distance,
                            };
                            out.push(BatchMatch { query, found });
                        } else if previous != Some((query, found)) {
                            // Equal fingerprints sit together; one lookup gives all their payloads.
                            previous = Some((query, found));
                            deferred.push((self.layouts[0].apply(found), query, distance));
                        }
                    },
                );
            });
            bucket_sort(&mut deferred, |e| e.0);
            run.payloads_in_key_order(
                &deferred,
                |e| e.0,
                &mut |&(key, query, distance), payload| {
                    let fingerprint = Fingerprint::new(self.layouts[0].invert(key));
                    out.push(BatchMatch {
                        query,
                        found: Match {
                            fingerprint,
                            payload,
                            distance,
                        },
                    });
                },
            );
            deferred.clear();
        }
        out
    }
}
