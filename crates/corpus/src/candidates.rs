//! The Hamming index's answers for a batch of pages at once (Manku et al.'s batch mode): one
//! [`HammingIndex::query_batch`] of the batch's simhashes against the pages kept before the
//! batch, and the pages kept since, during the batch, compared one by one (a batch keeps at
//! most its own size). Together they are what [`HammingIndex::query`] would answer for each
//! page at its turn.

use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::{HammingIndex, Match};

/// Candidates of a batch's pages.
pub(crate) struct BatchCandidates {
    /// Per page of the batch: kept pages before the batch within the distance.
    before: Vec<Vec<Match>>,
    /// Pages kept during the batch.
    since: Vec<(Fingerprint, u64)>,
    k: u32,
}

impl BatchCandidates {
    /// Queries `simhashes` (the batch's pages, in order) against `index` at once.
    pub(crate) fn new(index: &HammingIndex, simhashes: &[Fingerprint]) -> BatchCandidates {
        let mut before = vec![Vec::new(); simhashes.len()];
        for hit in index.query_batch(simhashes) {
            before[hit.query].push(hit.found);
        }
        BatchCandidates {
            before,
            since: Vec::new(),
            k: index.params().k(),
        }
    }

    /// Every kept page within the distance of page `i` of the batch, whose simhash is
    /// `simhash`.
    pub(crate) fn of(&mut self, i: usize, simhash: Fingerprint) -> Vec<Match> {
        let mut found = std::mem::take(&mut self.before[i]);
        found.extend(self.since.iter().filter_map(|&(fingerprint, payload)| {
            let distance = fingerprint.distance(simhash);
            (distance <= self.k).then_some(Match {
                fingerprint,
                payload,
                distance,
            })
        }));
        found
    }

    /// A page kept during the batch (the index has it too, from now on).
    pub(crate) fn kept(&mut self, simhash: Fingerprint, seq: u64) {
        self.since.push((simhash, seq));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_hamming_index::IndexParams;
    use proptest::prelude::*;

    fn sorted(mut matches: Vec<Match>) -> Vec<(u64, u64, u32)> {
        let mut out: Vec<(u64, u64, u32)> = matches
            .drain(..)
            .map(|m| (m.payload, m.fingerprint.bits(), m.distance))
            .collect();
        out.sort_unstable();
        out
    }

    proptest! {
        /// Pages judged in batches, each kept or not, find what one query per page at its
        /// turn finds: the batch query plus the pages kept during the batch.
        #[test]
        fn batches_answer_as_one_query_per_page(
            bases in prop::collection::vec(any::<u64>(), 1..6),
            pages in prop::collection::vec((0usize..6, any::<u64>(), any::<bool>()), 1..120),
            batch in 1usize..20,
        ) {
            // Pages near a few bases (flipping up to 5 bits), so matches are frequent.
            let simhash = |base: usize, flips: u64| {
                let mut bits = bases[base % bases.len()];
                for i in 0..(flips % 6) {
                    bits ^= 1 << ((flips >> (8 * i)) % 64);
                }
                Fingerprint::new(bits)
            };
            let mut index = HammingIndex::new(IndexParams::manku_10_tables());
            let mut seq = 0u64;
            for chunk in pages.chunks(batch) {
                let simhashes: Vec<Fingerprint> =
                    chunk.iter().map(|&(b, f, _)| simhash(b, f)).collect();
                let mut candidates = BatchCandidates::new(&index, &simhashes);
                for (i, &(_, _, keep)) in chunk.iter().enumerate() {
                    let want = sorted(index.query(simhashes[i]));
                    prop_assert_eq!(sorted(candidates.of(i, simhashes[i])), want);
                    if keep {
                        index.insert(simhashes[i], seq);
                        candidates.kept(simhashes[i], seq);
                    }
                    seq += 1;
                }
            }
        }
    }
}
