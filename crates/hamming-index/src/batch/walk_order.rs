//! The order in which a batch of queries walks the tables of a run.
//!
//! A batch walk probes a table for every query, and the probes should move forward through the
//! table instead of jumping at random: then a table's directory and keys are read in one pass,
//! with their memory fetched ahead. A full sort of the batch per table is not needed for that;
//! grouping the queries by the top bits of their key (about 64 queries per group) is enough and
//! costs two counting passes.
//!
//! Even the grouping is shared where it can be. In Manku's designs several tables lead with the
//! same block of the fingerprint (in the 10-table design, four tables lead with block 1, three
//! with block 2, two with block 3): their keys agree on their top bits, so one grouping of the
//! batch by those bits serves them all. The walk of each table computes its keys in that order.

use nearcrawl_fingerprint::Fingerprint;

use crate::layout::Layout;
use crate::sort::{SMALL_SORT, count_and_scatter, group_bits};

/// A grouping may use up to this many bits fewer than [`group_bits`] asks for (groups up to
/// eight times as large) to be shared by tables whose shared leading run is that short: the
/// 20-table design's blocks are 11 bits, and a batch of 2^20 asks for 14.
const SHARED_SLACK: u32 = 3;

/// A table whose prefix is at most this many bits longer than [`group_bits`] asks for is
/// grouped by its whole prefix: then the probes into one prefix's keys come one after another.
/// Where those keys are a long range (a design with short prefixes: the 4-table design's
/// 16-bit prefixes hold a thousand keys each at 2^26), the walk fetches the range once, ahead of
/// its first probe, and the probes after it scan it in cache; grouped by two bits fewer, the
/// probes of four ranges took turns. On the random 2^26 set, a batch of 2^20 queries, this
/// made the 4-table design's walks 16 % faster (docs/BENCHMARKS.md).
const WHOLE_PREFIX_SLACK: u32 = 2;

/// A group longer than this many times the average group is sorted (see
/// [`for_each_table`]).
const CROWDED_FACTOR: usize = 4;

/// Tables of a design that share one grouping of a batch, and the number of top key bits the
/// grouping uses.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Grouping {
    tables: Vec<usize>,
    bits: u32,
    /// The fingerprint bit the shared leading run starts from (its top bit plus one), for
    /// tables that may share; `None` for a table grouped on its own.
    run_top: Option<u32>,
}

/// Which tables share a grouping of a batch of `len` queries, in walking order: tables whose
/// keys lead with the same run of fingerprint bits, at least [`group_bits`] less
/// [`SHARED_SLACK`] long. A grouping uses the bits [`group_bits`] asks for, or a table's whole
/// prefix if it is at most [`WHOLE_PREFIX_SLACK`] longer, and no more than the shared run.
fn plan(layouts: &[Layout], len: usize) -> Vec<Grouping> {
    let asked = group_bits(len);
    let least = asked.saturating_sub(SHARED_SLACK).max(1);
    let mut groupings: Vec<Grouping> = Vec::new();
    for (j, layout) in layouts.iter().enumerate() {
        let prefix = layout.prefix_bits;
        let wanted = if prefix > asked && prefix <= asked + WHOLE_PREFIX_SLACK {
            prefix
        } else {
            asked
        };
        let (shift, run) = layout.leading_run();
        if run < least {
            groupings.push(Grouping {
                tables: vec![j],
                bits: wanted,
                run_top: None,
            });
            continue;
        }
        let run_top = Some(shift + run);
        match groupings.iter_mut().find(|g| g.run_top == run_top) {
            Some(grouping) => {
                grouping.tables.push(j);
                grouping.bits = grouping.bits.min(run);
            }
            None => groupings.push(Grouping {
                tables: vec![j],
                bits: wanted.min(run),
                run_top,
            }),
        }
    }
    groupings
}

/// Calls `walk(j, order)` once for every table j of `layouts`, with `order` holding every query
/// of the batch as `(fingerprint, query number)`, grouped by the top bits of its key in table j
/// in rising order: at least [`group_bits`] less [`SHARED_SLACK`] of them (a small batch is
/// simply sorted by key). Inside a group the order is the grouping's, except that a crowded
/// group (queries into a dense prefix of the table) is sorted by key: its queries probe the
/// same long ranges, and one after another they find them in cache. Tables may be visited out
/// of index order. The keys themselves are left to the walk, which computes each once, a few
/// probes ahead of its probe, where the processor is waiting for memory anyway.
pub(crate) fn for_each_table(
    layouts: &[Layout],
    queries: &[Fingerprint],
    mut walk: impl FnMut(usize, &[(u64, usize)]),
) {
    let len = queries.len();
    let mut order: Vec<(u64, usize)> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| (q.bits(), i))
        .collect();
    if len <= SMALL_SORT {
        for (j, layout) in layouts.iter().enumerate() {
            order.sort_by_cached_key(|&(fp, _)| layout.apply(fp));
            walk(j, &order);
        }
        return;
    }
    // Every place of `scratch` is written before it is read: it needs the length, not the values.
    let mut scratch = vec![(0, 0); len];
    for grouping in plan(layouts, len) {
        let bits = grouping.bits;
        let top = layouts[grouping.tables[0]].key_top_bits(bits);
        let starts = group_by_top_bits(&mut order, &mut scratch, bits, |&(fp, _)| top(fp));
        let crowded = CROWDED_FACTOR * (len >> bits);
        for &j in &grouping.tables {
            sort_crowded_groups(&mut order, &starts, crowded, &layouts[j]);
            walk(j, &order);
        }
    }
}

/// Sorts by key in `layout`'s table each group of `order` (groups start at `starts`) longer
/// than `crowded`.
fn sort_crowded_groups(
    order: &mut [(u64, usize)],
    starts: &[usize],
    crowded: usize,
    layout: &Layout,
) {
    for w in starts.windows(2).filter(|w| w[1] - w[0] > crowded) {
        order[w[0]..w[1]].sort_by_cached_key(|&(fp, _)| layout.apply(fp));
    }
}

/// Regroups `items` in place by `top(item)` (their key's top `bits` bits, right-aligned), groups
/// in rising order, using `scratch` (as long) as the other buffer, and returns where each group
/// starts (plus the end). Two counting passes of half the bits each: one pass over all the bits
/// would write to tens of thousands of places at once, each a cache miss; a pass over half of
/// them writes to a few hundred, and the second pass works on one group of the first at a
/// time, in cache.
fn group_by_top_bits<T: Copy>(
    items: &mut [T],
    scratch: &mut [T],
    bits: u32,
    top: impl Fn(&T) -> u64,
) -> Vec<usize> {
    let (high, low) = (bits.div_ceil(2), bits / 2);
    let low_mask = (1u64 << low) - 1;
    let mut counts = Vec::new();
    let outer = count_and_scatter(
        items,
        scratch,
        |item| (top(item) >> low) as usize,
        1 << high,
        &mut counts,
    );
    let mut starts = Vec::with_capacity((1 << bits) + 1);
    for w in outer.windows(2) {
        let (from, to) = (&scratch[w[0]..w[1]], &mut items[w[0]..w[1]]);
        let inner = count_and_scatter(
            from,
            to,
            |item| (top(item) & low_mask) as usize,
            1 << low,
            &mut counts,
        );
        starts.extend(inner[..1 << low].iter().map(|start| w[0] + start));
    }
    starts.push(items.len());
    starts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexParams;
    use crate::layout::layouts;
    use proptest::prelude::*;

    /// The paper's 10- and 20-table designs share four groupings each: their tables lead with
    /// blocks 1, 2, 3 and 4 of the fingerprint.
    #[test]
    fn tables_leading_with_one_block_share_a_grouping() {
        let plan = plan(&layouts(&IndexParams::manku_10_tables()), 1 << 20);
        let tables: Vec<Vec<usize>> = plan.iter().map(|g| g.tables.clone()).collect();
        assert_eq!(
            tables,
            [vec![0, 1, 2, 3], vec![4, 5, 6], vec![7, 8], vec![9]]
        );
        assert!(
            plan.iter()
                .all(|g| g.bits >= group_bits(1 << 20) - SHARED_SLACK)
        );
        // The 20-table design's tables lead with blocks 1 (ten tables), 2 (six), 3 (three) and
        // 4 (one) of six 11- and 10-bit blocks: three groupings on 11 bits, and the last table
        // (blocks 4, 5 and 6 in a row) on the 14 bits the batch asks for.
        let plan = super::plan(&layouts(&IndexParams::manku_20_tables()), 1 << 20);
        let sizes: Vec<(usize, u32)> = plan.iter().map(|g| (g.tables.len(), g.bits)).collect();
        assert_eq!(sizes, [(10, 11), (6, 11), (3, 11), (1, 14)]);
    }

    /// A table whose prefix is a little longer than a batch's grouping asks for is grouped by its
    /// whole prefix: the 4-table design's 16 bits for a batch of 2^20 (which asks for 14), not
    /// for one of 2^16 (10).
    #[test]
    fn short_prefixes_are_grouped_whole() {
        let layouts = layouts(&IndexParams::manku_4_tables());
        assert!(layouts.iter().all(|layout| layout.prefix_bits == 16));
        let bits = |len: usize| {
            plan(&layouts, len)
                .iter()
                .map(|g| g.bits)
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(1 << 20), [16; 4]);
        assert_eq!(bits(1 << 16), [10; 4]);
        // A batch that asks for more bits than the prefix: the other tables' keys lead with
        // their 16-bit block and then bits from elsewhere, a run no longer than the block.
        assert_eq!(bits(1 << 23), [17, 16, 16, 16]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

        /// Every table gets every query once, grouped by the top bits of its key in that table
        /// in rising order; a crowd of queries sharing their top bits is kept in order too.
        #[test]
        fn every_table_gets_every_query_grouped_by_its_key(
            fps in prop::collection::vec(any::<u64>(), 1 << 14..1 << 15),
            crowd in any::<bool>(),
        ) {
            let queries: Vec<Fingerprint> = fps
                .iter()
                .enumerate()
                .map(|(i, &fp)| Fingerprint::new(if crowd && i % 3 == 0 { fp >> 30 } else { fp }))
                .collect();
            // With 2^14 to 2^15 queries a grouping asks for 8 bits; the last design's 10-bit
            // prefixes (of 6 blocks of 10 and 11 bits, one chosen) are grouped whole.
            let designs = IndexParams::manku_designs().map(|(_, params)| params);
            let short = IndexParams::single_level(5, 6, 1).expect("valid");
            for params in designs.into_iter().chain([short]) {
                let layouts = layouts(&params);
                let planned = plan(&layouts, queries.len());
                let mut walked: Vec<(usize, Vec<(u64, usize)>)> = Vec::new();
                for_each_table(&layouts, &queries, |j, order| walked.push((j, order.to_vec())));
                let mut tables: Vec<usize> = walked.iter().map(|w| w.0).collect();
                tables.sort_unstable();
                prop_assert_eq!(tables, (0..layouts.len()).collect::<Vec<_>>());
                for (j, mut order) in walked {
                    let bits = planned.iter().find(|g| g.tables.contains(&j)).expect("every table planned").bits;
                    prop_assert!(bits >= group_bits(queries.len()) - SHARED_SLACK);
                    let top = |&(fp, _): &(u64, usize)| layouts[j].apply(fp) >> (64 - bits);
                    prop_assert!(order.windows(2).all(|w| top(&w[0]) <= top(&w[1])));
                    order.sort_unstable();
                    let mut expected: Vec<(u64, usize)> = queries.iter().enumerate().map(|(i, q)| (q.bits(), i)).collect();
                    expected.sort_unstable();
                    prop_assert_eq!(order, expected);
                }
            }
        }
    }
}
