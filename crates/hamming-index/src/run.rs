//! A run: every table of the design built over one set of entries. The online index is a few
//! runs of geometrically growing size (a log-structured merge), a bulk-built index is one.

use std::ops::ControlFlow;

use crate::layout::Layout;
use crate::memory::{huge_filled, huge_vec};
use crate::table::SortedTable;

/// Tables of a design whose memory a query prefetches before probing (every design here has
/// at most 20; a larger one probes the rest without).
const MAX_PREFETCHED_TABLES: usize = 64;

/// One table's share of a query: the entries of table `table` within distance `k` of `fp`
/// (`key` is `fp` in that table's bit order); with `canonical`, only those no earlier table
/// reports (so every entry is reported once).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TableProbe {
    pub(crate) table: usize,
    pub(crate) fp: u64,
    pub(crate) key: u64,
    pub(crate) k: u32,
    pub(crate) canonical: bool,
}

/// Tables over one set of `(fingerprint, payload)` entries. Only table 0 stores payloads
/// (parallel to its keys); a hit in another table finds its payloads through table 0.
#[derive(Clone, Debug, Default)]
pub(crate) struct Run {
    pub(crate) tables: Vec<SortedTable>,
    pub(crate) payloads: Vec<u64>,
}

impl Run {
    pub(crate) fn build(layouts: &[Layout], entries: &[(u64, u64)]) -> Run {
        let mut tables = Vec::with_capacity(layouts.len());
        let mut first: Vec<(u64, u64)> =
            entries.iter().map(|&(fp, payload)| (layouts[0].apply(fp), payload)).collect();
        bucket_sort(&mut first, |e| e.0);
        let (keys, payloads) = unzip_huge(&first);
        tables.push(SortedTable::from_sorted(keys, &layouts[0]));
        for layout in &layouts[1..] {
            let mut keys: Vec<u64> = entries.iter().map(|&(fp, _)| layout.apply(fp)).collect();
            bucket_sort(&mut keys, |&k| k);
            tables.push(SortedTable::from_sorted(keys, layout));
        }
        Run { tables, payloads }
    }

    /// Raw parts read back from a file; the caller has checked that every key list is sorted
    /// and as long as `payloads`.
    pub(crate) fn from_parts(layouts: &[Layout], keys: Vec<Vec<u64>>, payloads: Vec<u64>) -> Run {
        let tables = keys
            .into_iter()
            .zip(layouts)
            .map(|(keys, layout)| SortedTable::from_sorted(keys, layout))
            .collect();
        Run { tables, payloads }
    }

    pub(crate) fn merge(layouts: &[Layout], a: Run, b: Run) -> Run {
        if a.len() == 0 {
            return b;
        }
        if b.len() == 0 {
            return a;
        }
        // Each pair of old tables is dropped as soon as it is merged, so the allocator hands
        // its memory to the next table instead of asking the kernel for fresh pages.
        let mut tables = Vec::with_capacity(layouts.len());
        let mut a_tables = a.tables.into_iter();
        let mut b_tables = b.tables.into_iter();
        let (a0, b0) = (a_tables.next().unwrap_or_default(), b_tables.next().unwrap_or_default());
        let pairs = |keys: Vec<u64>, payloads: Vec<u64>| -> Vec<(u64, u64)> { keys.into_iter().zip(payloads).collect() };
        let merged = merge_sorted(&pairs(a0.keys, a.payloads), &pairs(b0.keys, b.payloads), |e| e.0);
        let (keys, payloads) = unzip_huge(&merged);
        drop(merged);
        tables.push(SortedTable::from_sorted(keys, &layouts[0]));
        for ((x, y), layout) in a_tables.zip(b_tables).zip(&layouts[1..]) {
            let keys = merge_sorted(&x.keys, &y.keys, |&k| k);
            drop((x, y));
            tables.push(SortedTable::from_sorted(keys, layout));
        }
        Run { tables, payloads }
    }

    pub(crate) fn len(&self) -> usize {
        self.payloads.len()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.tables.iter().map(SortedTable::heap_bytes).sum::<usize>() + self.payloads.capacity() * 8
    }

    /// Every entry, as `(fingerprint, payload)`, in table 0's order.
    pub(crate) fn entries<'a>(&'a self, layouts: &'a [Layout]) -> impl Iterator<Item = (u64, u64)> + 'a {
        let keys = self.tables.first().map_or(&[][..], |t| &t.keys[..]);
        keys.iter().zip(&self.payloads).map(|(&key, &payload)| (layouts[0].invert(key), payload))
    }

    /// Calls `visit(fingerprint, payload, distance)` for stored entries within distance k of
    /// `fp`. With `canonical`, every entry is visited exactly once: a hit in table j is dropped
    /// when an earlier table's prefix also agrees with the query (that table reported it).
    /// Without it (first-match queries) an entry may be visited more than once.
    pub(crate) fn for_each_match(
        &self,
        layouts: &[Layout],
        fp: u64,
        k: u32,
        canonical: bool,
        examined: &mut u64,
        visit: &mut impl FnMut(u64, u64, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.len() == 0 {
            return ControlFlow::Continue(());
        }
        // Fetch every table's memory at once instead of one table after another: first all
        // directory slots, then (slots arriving) the first keys of all ranges, then probe. Each
        // table costs two dependent cache misses; this way a query pays about two in all.
        // The query's key in each table is computed once for all three passes.
        let mut keys = [0u64; MAX_PREFETCHED_TABLES];
        let ahead = layouts.len().min(MAX_PREFETCHED_TABLES);
        for j in 0..ahead {
            keys[j] = layouts[j].apply(fp);
            self.tables[j].prefetch_slot(keys[j]);
        }
        for (table, &key) in self.tables.iter().zip(&keys[..ahead]) {
            table.prefetch_range(key);
        }
        for (j, layout) in layouts.iter().enumerate() {
            let key = if j < ahead { keys[j] } else { layout.apply(fp) };
            self.table_matches(layouts, TableProbe { table: j, fp, key, k, canonical }, examined, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// [`Run::for_each_match`] restricted to one table.
    pub(crate) fn table_matches(
        &self,
        layouts: &[Layout],
        probe: TableProbe,
        examined: &mut u64,
        visit: &mut impl FnMut(u64, u64, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let j = probe.table;
        let mut previous_key = None;
        self.table_hits(layouts, probe, examined, &mut |index, found, distance| {
            if j == 0 {
                return visit(found, self.payloads[index], distance);
            }
            // Equal keys sit together; table 0 gives all their payloads at once.
            let key = self.tables[j].keys[index];
            if previous_key == Some(key) {
                return ControlFlow::Continue(());
            }
            previous_key = Some(key);
            self.payloads_of(layouts, found, &mut |payload| visit(found, payload, distance))
        })
    }

    /// Calls `visit(index, fingerprint, distance)` for the keys of the probed table within
    /// distance k of the query: `index` is the key's position in that table. Payloads are left
    /// to the caller.
    pub(crate) fn table_hits(
        &self,
        layouts: &[Layout],
        probe: TableProbe,
        examined: &mut u64,
        visit: &mut impl FnMut(usize, u64, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let TableProbe { table: j, fp, key, k, canonical } = probe;
        let (layout, table) = (&layouts[j], &self.tables[j]);
        table.probe(key, layout.prefix_bits, k, examined, &mut |index, distance| {
            let found = layout.invert(table.keys[index]);
            if canonical && layouts[..j].iter().any(|l| (fp ^ found) & l.prefix_mask == 0) {
                return ControlFlow::Continue(());
            }
            visit(index, found, distance)
        })
    }

    /// Calls `visit` with the payload of every entry stored with fingerprint `found`.
    pub(crate) fn payloads_of(
        &self,
        layouts: &[Layout],
        found: u64,
        visit: &mut impl FnMut(u64) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for i in self.tables[0].equal_range(layouts[0].apply(found)) {
            visit(self.payloads[i])?;
        }
        ControlFlow::Continue(())
    }
}

/// Table 0's keys and payloads, each in memory advised for huge pages.
fn unzip_huge(entries: &[(u64, u64)]) -> (Vec<u64>, Vec<u64>) {
    let (mut keys, mut payloads) = (huge_vec(entries.len()), huge_vec(entries.len()));
    keys.extend(entries.iter().map(|e| e.0));
    payloads.extend(entries.iter().map(|e| e.1));
    (keys, payloads)
}

/// Merges two lists sorted by `key` (ties from `a` first).
fn merge_sorted<T: Copy + Default>(a: &[T], b: &[T], key: impl Fn(&T) -> u64) -> Vec<T> {
    let mut out = huge_filled(a.len() + b.len(), T::default());
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let from_a = key(&x) <= key(&y);
        out[n] = if from_a { x } else { y };
        n += 1;
        i += usize::from(from_a);
        j += usize::from(!from_a);
    }
    out[n..n + a.len() - i].copy_from_slice(&a[i..]);
    out[n + a.len() - i..].copy_from_slice(&b[j..]);
    out
}

/// Sorts by a u64 key: one counting pass on the top bits scatters the items into about
/// len / 64 buckets, each then sorted in cache. Much faster than a comparison sort on tens of
/// millions of uniformly spread keys; skewed keys only make some buckets bigger.
pub(crate) fn bucket_sort<T: Copy + Default>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    bucket_order(items, &key, true);
}

/// Groups items by the top bits of their key (about 64 per group, groups in key order) without
/// sorting inside a group: enough order for a walk through a sorted table to move forward,
/// at the cost of one scatter pass.
pub(crate) fn bucket_group<T: Copy + Default>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    bucket_order(items, &key, false);
}

fn bucket_order<T: Copy + Default>(items: &mut Vec<T>, key: &impl Fn(&T) -> u64, sort_groups: bool) {
    const SMALL: usize = 1 << 14;
    if items.len() <= SMALL {
        items.sort_unstable_by_key(|item| key(item));
        return;
    }
    let log = usize::BITS - 1 - items.len().leading_zeros();
    let bits = log.saturating_sub(6).clamp(1, 22);
    let shift = 64 - bits;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for item in items.iter() {
        starts[(key(item) >> shift) as usize + 1] += 1;
    }
    for i in 0..1 << bits {
        starts[i + 1] += starts[i];
    }
    let mut next = starts.clone();
    let mut out = huge_filled(items.len(), T::default());
    for item in items.iter() {
        let slot = &mut next[(key(item) >> shift) as usize];
        out[*slot] = *item;
        *slot += 1;
    }
    if sort_groups {
        for w in starts.windows(2) {
            out[w[0]..w[1]].sort_unstable_by_key(|item| key(item));
        }
    }
    *items = out;
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

        #[test]
        fn bucket_group_keeps_the_items_in_groups_of_rising_top_bits(mut v in prop::collection::vec(any::<u64>(), 20_000..40_000)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            bucket_group(&mut v, |&k| k);
            // The groups are the scatter's buckets: by the top `bits` bits, rising.
            let bits = (usize::BITS - 1 - v.len().leading_zeros()).saturating_sub(6).clamp(1, 22);
            prop_assert!(v.windows(2).all(|w| w[0] >> (64 - bits) <= w[1] >> (64 - bits)));
            v.sort_unstable();
            prop_assert_eq!(v, expected);
        }
    }
}
