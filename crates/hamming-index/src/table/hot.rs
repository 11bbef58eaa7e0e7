//! Hot prefixes: a second permuted-table design over a long range of keys that share one
//! table's prefix.
//!
//! Real fingerprints are not uniform (Manku et al. observed it: empty pages hash to 0, login
//! pages of one bulletin-board engine collide). When many distinct keys share a table's prefix, that table's
//! leading bits no longer tell them apart, and a probe into the range would examine a large
//! part of it. Such a range gets its own small design over the bits the prefix leaves free:
//! Manku's construction applied once more, to the range alone. Each of its tables leads with
//! different free bits, so a probe costs a few short probes instead of a walk through the range,
//! and every key of the range within distance k is still found (the prefix bits agree, so the
//! pigeonhole argument runs over the free bits with the whole radius k).
//!
//! Only ranges far longer than the table's average (and with many distinct keys) are hot, so an
//! index over uniform fingerprints builds none. Memory: each distinct key of a hot range costs 12
//! bytes per table of its design (at most [`MAX_HOT_TABLES`]).

use std::ops::{ControlFlow, Range};

use super::{Lookups, SortedTable, within_distance};
use crate::layout::{Layout, design_layouts};
use crate::memory::huge_vec;
use crate::params::{Level, PROBE_COST, binomial, table_orders};
use crate::sort::bucket_sort;

/// The most tables a hot range's design may have.
pub(crate) const MAX_HOT_TABLES: usize = 10;
/// A range is hot when it holds more than this many keys and distinct keys ...
pub(crate) const HOT_MIN: usize = 2048;
/// ... and more than this many times the keys an average range of its table holds.
const HOT_FACTOR: f64 = 16.0;

/// A hot range of one table: `range` is its place in the table's keys, all sharing the table's
/// prefix; `tables` are its own permuted tables over its distinct keys.
#[derive(Clone, Debug)]
pub(crate) struct HotRange {
    pub(crate) range: Range<usize>,
    tables: Vec<HotTable>,
}

/// One table of a hot range's design: the distinct keys re-permuted by `layout` (from the
/// parent table's key to this table's key) and sorted, and for each the position of the first
/// equal key in the parent table.
#[derive(Clone, Debug)]
struct HotTable {
    layout: Layout,
    table: SortedTable,
    first: Vec<u32>,
}

impl HotRange {
    /// The hot ranges of a table's sorted `keys` whose prefix is `layout.prefix_bits` long, in
    /// key order, each with its design built.
    pub(crate) fn find_all(keys: &[u64], layout: &Layout) -> Vec<HotRange> {
        let prefix_bits = layout.prefix_bits;
        if layout.k == 0 || prefix_bits == 0 || prefix_bits >= 64 {
            // With k = 0 a probe is one binary search; with no prefix there is no range to split.
            return Vec::new();
        }
        let average = keys.len() as f64 / 2f64.powi(prefix_bits as i32);
        let threshold = HOT_MIN.max((HOT_FACTOR * average) as usize);
        let shift = 64 - prefix_bits;
        let prefix = |i: usize| keys[i] >> shift;
        // Any run of more than `threshold` equal prefixes holds two positions `step` apart at a
        // multiple of `step`, so checking those pairs finds every long run.
        let step = threshold / 2;
        let mut out = Vec::new();
        let mut i = 0;
        while i + step < keys.len() {
            if prefix(i) != prefix(i + step) {
                i += step;
                continue;
            }
            let want = prefix(i);
            let start = keys[..i].partition_point(|&key| key >> shift < want);
            let end = i + keys[i..].partition_point(|&key| key >> shift == want);
            if end - start > threshold
                && let Some(hot) = HotRange::build(keys, start..end, layout)
            {
                out.push(hot);
            }
            i = end.next_multiple_of(step.max(1));
        }
        out
    }

    /// The design for `keys[range]` if one pays: among one-level designs over the free bits with
    /// at most [`MAX_HOT_TABLES`] tables, the cheapest by the cost [`crate::IndexParams::auto`]
    /// uses, and only if its expected candidates are well below the range's distinct keys.
    fn build(keys: &[u64], range: Range<usize>, layout: &Layout) -> Option<HotRange> {
        let mut distinct: Vec<(u64, u32)> = Vec::new();
        for i in range.clone() {
            if distinct.last().is_none_or(|&(key, _)| key != keys[i]) {
                distinct.push((keys[i], i as u32));
            }
        }
        if distinct.len() <= HOT_MIN {
            return None;
        }
        let (k, prefix_bits) = (layout.k, layout.prefix_bits);
        let free: Vec<u8> = (prefix_bits as u8..64).collect();
        let shared: Vec<u8> = (0..prefix_bits as u8).collect();
        let n = distinct.len() as f64;
        let mut best: Option<(f64, Vec<crate::params::TableOrder>)> = None;
        for blocks in k + 1..=(k + 10).min(free.len() as u32) {
            for chosen in 1..=blocks - k {
                if binomial(blocks, chosen) > MAX_HOT_TABLES as u64 {
                    continue;
                }
                let orders = table_orders(&[Level { blocks, chosen }], free.clone(), &shared);
                let candidates: f64 = orders
                    .iter()
                    .map(|o| n / 2f64.powi(o.prefix_bits as i32))
                    .sum();
                let cost = PROBE_COST * orders.len() as f64 + candidates;
                if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                    best = Some((cost, orders));
                }
            }
        }
        let (cost, orders) = best?;
        if cost > n / 4.0 {
            return None;
        }
        let tables = design_layouts(&orders, k)
            .into_iter()
            .map(|layout| {
                let mut entries: Vec<(u64, u32)> = distinct
                    .iter()
                    .map(|&(key, at)| (layout.apply(key), at))
                    .collect();
                bucket_sort(&mut entries, |e| e.0);
                let mut sub_keys = huge_vec(entries.len());
                sub_keys.extend(entries.iter().map(|e| e.0));
                let first = entries.iter().map(|e| e.1).collect();
                let table = SortedTable::without_hot_ranges(
                    sub_keys,
                    layout.prefix_bits,
                    Lookups::Prefixes,
                );
                HotTable {
                    layout,
                    table,
                    first,
                }
            })
            .collect();
        Some(HotRange { range, tables })
    }

    /// The tables of the range's design, each as `(layout, table, first)`: `layout` takes a
    /// key of the parent table to its key in `table`, and `first[i]` is the position in the
    /// parent table of the first key equal to `table`'s key `i`.
    pub(crate) fn tables(&self) -> impl Iterator<Item = (&Layout, &SortedTable, &[u32])> {
        self.tables
            .iter()
            .map(|hot| (&hot.layout, &hot.table, &hot.first[..]))
    }

    /// The positions in the parent table's `keys` of the keys equal to `key`, the first of
    /// them at `first` (as a table of the range's design gives it).
    pub(crate) fn equal_keys(&self, keys: &[u64], first: u32, key: u64) -> Range<usize> {
        let first = first as usize;
        first
            ..first
                + keys[first..self.range.end]
                    .iter()
                    .take_while(|&&other| other == key)
                    .count()
    }

    /// Heap bytes of the range's tables.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(|t| t.table.heap_bytes() + t.first.capacity() * 4)
            .sum()
    }

    /// Calls `visit(index, distance)` for every key of the range (`keys` are the parent table's)
    /// within distance `k` of `query`, each exactly once, equal keys one after another.
    pub(crate) fn probe(
        &self,
        keys: &[u64],
        query: u64,
        k: u32,
        examined: &mut u64,
        visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        // As for a run's tables: every table's memory is requested before any is probed.
        let mut sub_queries = [0u64; MAX_HOT_TABLES];
        for (sub_query, hot) in sub_queries.iter_mut().zip(&self.tables) {
            *sub_query = hot.layout.apply(query);
            hot.table.prefetch_slot(*sub_query);
        }
        for (&sub_query, hot) in sub_queries.iter().zip(&self.tables) {
            hot.table.prefetch_range(sub_query);
        }
        for (hot, &sub_query) in self.tables.iter().zip(&sub_queries) {
            // Within the range's own tables the keys are distinct and the range is not looked
            // up again: a long sub-range is descended.
            let bits = hot.layout.prefix_bits;
            let sub_range = hot.table.prefix_range(sub_query, bits);
            within_distance(
                &hot.table.keys,
                sub_range,
                bits,
                sub_query,
                k,
                k,
                examined,
                &mut |i, distance| {
                    // An earlier table of the range whose prefix also agrees has reported it.
                    if hot
                        .layout
                        .earlier_table_agrees(hot.table.keys[i] ^ sub_query)
                    {
                        return ControlFlow::Continue(());
                    }
                    let key = hot.layout.invert(hot.table.keys[i]);
                    self.equal_keys(keys, hot.first[i], key)
                        .try_for_each(|index| visit(index, distance))
                },
            )?;
        }
        ControlFlow::Continue(())
    }
}
