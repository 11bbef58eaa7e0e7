//! Sorting many fingerprints fast: a counting pass on the top bits, then small sorts in
//! cache.

use crate::memory::huge_filled;

/// Sorts by a u64 key: one counting pass on the top bits scatters the items into about
/// len / 64 buckets, each then sorted in cache. Much faster than a comparison sort on tens of
/// millions of uniformly spread keys; skewed keys only make some buckets bigger. The sorted
/// items end up in memory advised for huge pages (they are often a table's keys).
pub(crate) fn bucket_sort<T: Copy + Default>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    if items.len() <= SMALL_SORT {
        items.sort_unstable_by_key(|item| key(item));
        return;
    }
    let mut out = huge_filled(items.len(), T::default());
    let bits = group_bits(items.len());
    let starts = count_and_scatter(
        items,
        &mut out,
        |item| (key(item) >> (64 - bits)) as usize,
        1 << bits,
        &mut Vec::new(),
    );
    for w in starts.windows(2) {
        out[w[0]..w[1]].sort_unstable_by_key(|item| key(item));
    }
    *items = out;
}

/// The number of top key bits that split `len` items into groups of about 64.
pub(crate) fn group_bits(len: usize) -> u32 {
    let log = usize::BITS - 1 - len.max(1).leading_zeros();
    log.saturating_sub(6).clamp(2, 22)
}

/// Up to this many items are sorted directly instead of grouped first.
pub(crate) const SMALL_SORT: usize = 1 << 14;

/// Writes `from` into `to` (as long) ordered by `bucket` (below `buckets`), stable, and returns
/// where each bucket starts (plus the end); `next` is a reusable buffer.
pub(crate) fn count_and_scatter<T: Copy>(
    from: &[T],
    to: &mut [T],
    bucket: impl Fn(&T) -> usize,
    buckets: usize,
    next: &mut Vec<usize>,
) -> Vec<usize> {
    let mut starts = vec![0usize; buckets + 1];
    for item in from {
        starts[bucket(item) + 1] += 1;
    }
    for i in 0..buckets {
        starts[i + 1] += starts[i];
    }
    next.clear();
    next.extend_from_slice(&starts[..buckets]);
    for item in from {
        let slot = &mut next[bucket(item)];
        to[*slot] = *item;
        *slot += 1;
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bucket_sort_sorts(mut v in prop::collection::vec(any::<u64>(), 0..40_000), skew in any::<bool>()) {
            if skew {
                for x in v.iter_mut().step_by(2) { *x &= 0xFF; }
            }
            let mut expected = v.clone();
            expected.sort_unstable();
            bucket_sort(&mut v, |&k| k);
            prop_assert_eq!(v, expected);
        }
    }
}
