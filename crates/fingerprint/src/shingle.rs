//! Broder's w-shingling with exact resemblance and containment.

use xxhash_rust::xxh3::xxh3_64;

use crate::{FingerprintError, feature_hash};

/// The set S(D, w) of a document's distinct w-shingles, each hashed to 64 bits and kept sorted.
///
/// A w-shingle is a run of w consecutive tokens. Hashing makes a shingle a fixed-size value (the
/// "random permutation" of the paper is the hash); two different shingles collide with
/// probability 2^-64.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShingleSet {
    hashes: Vec<u64>,
}

impl ShingleSet {
    /// The w-shingles of a token sequence. A document shorter than w tokens has one shingle (the
    /// whole document) so that short documents still compare; an empty one has none.
    pub fn from_tokens<T: AsRef<[u8]>>(
        tokens: &[T],
        w: usize,
    ) -> Result<ShingleSet, FingerprintError> {
        let token_hashes: Vec<u64> = tokens.iter().map(|t| feature_hash(t.as_ref())).collect();
        ShingleSet::from_token_hashes(&token_hashes, w)
    }

    /// The w-shingles of a sequence of already hashed tokens.
    pub fn from_token_hashes(
        token_hashes: &[u64],
        w: usize,
    ) -> Result<ShingleSet, FingerprintError> {
        if w == 0 {
            return Err(FingerprintError::ZeroShingleWidth);
        }
        let windows: Box<dyn Iterator<Item = &[u64]>> = if token_hashes.len() < w {
            Box::new(
                (!token_hashes.is_empty())
                    .then_some(token_hashes)
                    .into_iter(),
            )
        } else {
            Box::new(token_hashes.windows(w))
        };
        let hashes = windows.map(shingle_hash).collect();
        Ok(ShingleSet::from_hashes(hashes))
    }

    /// A shingle set from arbitrary 64-bit values (sorted and deduplicated here).
    pub fn from_hashes(mut hashes: Vec<u64>) -> ShingleSet {
        hashes.sort_unstable();
        hashes.dedup();
        ShingleSet { hashes }
    }

    /// The shingle hashes in increasing order.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// The number of distinct shingles.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when the document had no tokens.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// |A ∩ B|, by merging the sorted hashes.
    pub fn intersection_len(&self, other: &ShingleSet) -> usize {
        sorted_intersection_len(&self.hashes, &other.hashes)
    }

    /// Resemblance r(A, B) = |A ∩ B| / |A ∪ B| (Jaccard). Two empty documents resemble fully.
    pub fn resemblance(&self, other: &ShingleSet) -> f64 {
        let common = self.intersection_len(other);
        let union = self.len() + other.len() - common;
        if union == 0 {
            1.0
        } else {
            common as f64 / union as f64
        }
    }

    /// Containment c(A, B) = |A ∩ B| / |A|: how much of `self` is inside `other`. An empty
    /// document is contained in anything.
    pub fn containment_in(&self, other: &ShingleSet) -> f64 {
        if self.is_empty() {
            1.0
        } else {
            self.intersection_len(other) as f64 / self.len() as f64
        }
    }
}

fn shingle_hash(window: &[u64]) -> u64 {
    let mut bytes = [0u8; 8 * 16];
    if window.len() <= 16 {
        for (chunk, h) in bytes.chunks_exact_mut(8).zip(window) {
            chunk.copy_from_slice(&h.to_le_bytes());
        }
        xxh3_64(&bytes[..8 * window.len()])
    } else {
        let all: Vec<u8> = window.iter().flat_map(|h| h.to_le_bytes()).collect();
        xxh3_64(&all)
    }
}

/// The number of values two sorted, deduplicated slices share.
pub(crate) fn sorted_intersection_len(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shingles(text: &str, w: usize) -> ShingleSet {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        ShingleSet::from_tokens(&tokens, w).unwrap()
    }

    /// ALGORITHMS.md §2: `a rose is a rose is a rose` has exactly three distinct 4-shingles:
    /// (a,rose,is,a), (rose,is,a,rose), (is,a,rose,is).
    #[test]
    fn a_rose_is_a_rose() {
        let set = shingles("a rose is a rose is a rose", 4);
        assert_eq!(set.len(), 3);
        let expected = ShingleSet::from_hashes(
            [
                ["a", "rose", "is", "a"],
                ["rose", "is", "a", "rose"],
                ["is", "a", "rose", "is"],
            ]
            .iter()
            .map(|w| shingle_hash(&w.map(|t| feature_hash(t.as_bytes()))))
            .collect(),
        );
        assert_eq!(set, expected);
        // With w = 1 the distinct tokens: a, rose, is.
        assert_eq!(shingles("a rose is a rose is a rose", 1).len(), 3);
    }

    #[test]
    fn resemblance_and_containment() {
        let a = shingles("a rose is a rose is a rose", 4);
        let b = shingles("a rose is a flower which is a rose", 4);
        // b's shingles: (a,rose,is,a) (rose,is,a,flower) (is,a,flower,which) (a,flower,which,is)
        // (flower,which,is,a) (which,is,a,rose): one shared with a.
        assert_eq!(a.intersection_len(&b), 1);
        assert_eq!(a.resemblance(&b), 1.0 / 8.0);
        assert_eq!(a.containment_in(&b), 1.0 / 3.0);
        assert_eq!(b.containment_in(&a), 1.0 / 6.0);
        assert_eq!(a.resemblance(&a), 1.0);
    }

    #[test]
    fn a_contained_document() {
        let part = shingles("one two three four five six", 3);
        let whole = shingles("zero one two three four five six seven eight", 3);
        assert_eq!(part.containment_in(&whole), 1.0);
        assert!(whole.containment_in(&part) < 0.6);
    }

    #[test]
    fn short_and_empty_documents() {
        assert_eq!(shingles("two words", 4).len(), 1);
        assert!(shingles("", 4).is_empty());
        assert_eq!(shingles("", 4).resemblance(&shingles("", 4)), 1.0);
        assert_eq!(
            ShingleSet::from_tokens::<&str>(&[], 0),
            Err(FingerprintError::ZeroShingleWidth)
        );
    }
}
