//! The batch walk: one table probed for every query of a batch, the probes moving forward
//! through the table (the order comes from [`crate::walk_order`]) and each probe's memory
//! fetched a few probes ahead.
//!
//! A probe reads up to four things, each known only once the one before has arrived: the
//! word of the table's bitmap of prefixes present (where the table has one), the directory
//! slot, the slot's keys, or for a long slot (a crowd of keys under a dense prefix) its
//! subdirectory entry and then the keys of the probe's prefix. The walk asks for them in four
//! steps, each a stride of probes after the one before, so that by the time a probe runs its
//! memory is in cache. Without the last step, probes into long slots of the 20-table design's
//! crowded tables on the clustered 2^26 set waited for two cache misses each, and those tables
//! took 1.2 to 1.6 times as long (docs/BENCHMARKS.md).
//!
//! A probe's key in the table is computed at the first step, where the processor waits for
//! memory anyway, and kept in a ring until the probe. In table 0, whose payloads the caller
//! reads for every hit (most probes there whose prefix is present find one), the payloads of
//! a short slot are fetched with its keys.
//!
//! Most probes find nothing, and whether a prefix is present is as good as random, so the walk
//! does not branch on it: a probe whose prefix is absent reads directory slot 0 (always in
//! cache) and scans no keys. A probe of a short slot scans it key by key; an AVX-512 probe of up
//! to eight keys in one masked vector step was faster with the tables in cache but slower at
//! 2^26 keys (docs/BENCHMARKS.md), so it is not kept.

use std::ops::ControlFlow;

use crate::layout::Layout;
use crate::presence::PrefixBitmap;
use crate::table::{FETCHED_RUN, SHORT_SLOT, SortedTable, prefetch, prefetch_address, prefetch_lines, scan};

/// How many probes ahead a batch walk fetches a table's memory: enough to cover a cache miss
/// with the probes in between.
pub(crate) const PREFETCH_STRIDE: usize = 16;

/// Directory slots up to this long are scanned whole by a batch walk (eight keys per
/// instruction where the processor can), all their cache lines fetched ahead with the first.
/// Such slots are a crowd spread over a table: a dense prefix whose shared bits fill only part
/// of the table's directory bits puts tens to hundreds of keys in each of many slots. Narrowing
/// one to the prefix instead would read its subdirectory or binary-search it, cache misses one
/// after another that the walk did not fetch ahead; on the clustered 2^26 set this made the
/// walks of the 16-table design's crowded tables a fifth slower.
const SCANNED_SLOT: usize = 256;
const _: () = assert!(SCANNED_SLOT <= FETCHED_RUN, "a walk fetches every line of a slot it scans whole");

/// The keys of a slot up to this long lie on at most two cache lines, its first key's and its
/// last key's.
const TWO_LINE_SLOT: usize = 8;

/// The instruction sets a batch walk is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WalkKernel {
    /// The popcnt instruction: a short slot key by key.
    Popcnt,
    /// Any processor.
    Portable,
}

impl WalkKernel {
    /// The best kernel this processor runs.
    pub(crate) fn detect() -> WalkKernel {
        Self::available()[0]
    }

    /// Every kernel this processor runs, best first.
    pub(crate) fn available() -> Vec<WalkKernel> {
        [WalkKernel::Popcnt, WalkKernel::Portable].into_iter().filter(|k| k.runs_here()).collect()
    }

    fn runs_here(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            WalkKernel::Popcnt => std::arch::is_x86_feature_detected!("popcnt"),
            WalkKernel::Portable => true,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// Probes `table` (whose layout is `layout`) for every `(fingerprint, query)` of `order`
/// (grouped so that the walk moves forward through the table) and calls
/// `visit(query, index, fingerprint, distance)` for the hits no earlier table reports: `index`
/// is the hit's position in the table. `kernel` is one this processor runs; another falls back
/// to the portable one.
pub(crate) fn walk_table(
    kernel: WalkKernel,
    layout: &Layout,
    table: &SortedTable,
    payloads: &[u64],
    order: &[(u64, usize)],
    examined: &mut u64,
    visit: &mut impl FnMut(usize, usize, u64, u32),
) {
    let walk = TableWalk::new(layout, table, payloads);
    match kernel {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has the popcnt instruction, checked just here.
        WalkKernel::Popcnt if kernel.runs_here() => unsafe { walk.walk_with_popcnt(order, examined, visit) },
        _ => walk.walk(order, examined, |key, query, compared| walk.probe_key_by_key(key, query, compared, visit)),
    }
}

/// One table as a batch walk reads it: its parts, shifts and masks set up once per walk, so
/// that the loop keeps them in registers.
struct TableWalk<'a> {
    layout: &'a Layout,
    table: &'a SortedTable,
    keys: &'a [u64],
    offsets: &'a [u32],
    /// `63 - dir_bits`: a key's slot is `(key >> 1) >> dir_shift`, defined also for 0 bits.
    dir_shift: u32,
    /// The key bits of the table's prefix.
    prefix_mask: u64,
    /// The table's bitmap of the prefixes present, if it has one.
    presence: Option<&'a PrefixBitmap>,
    /// The payloads parallel to the keys, where the walk's caller reads them for every hit
    /// (table 0); empty elsewhere.
    payloads: &'a [u64],
}

impl<'a> TableWalk<'a> {
    fn new(layout: &'a Layout, table: &'a SortedTable, payloads: &'a [u64]) -> TableWalk<'a> {
        let (keys, offsets, dir_bits, presence) = table.walk_parts();
        let prefix_mask = !u64::MAX.checked_shr(layout.prefix_bits).unwrap_or(0);
        TableWalk { layout, table, keys, offsets, dir_shift: 63 - dir_bits, prefix_mask, presence, payloads }
    }

    /// The walk, inlined into each instruction-set version: for every `(fingerprint, query)`
    /// of `order`, `probe(key, query, compared)` with the fingerprint's key in the table, once
    /// its memory has been asked for in four steps, a stride apart: the prefix's word of the
    /// bitmap, the directory slot, the slot's keys (or a long slot's subdirectory entry), a long
    /// slot's keys of the prefix. Each key is computed once, at the first step, and kept in a
    /// ring until its probe.
    #[inline(always)]
    fn walk(&self, order: &[(u64, usize)], examined: &mut u64, mut probe: impl FnMut(u64, usize, &mut u64)) {
        const LEAD: usize = 4 * PREFETCH_STRIDE;
        const RING: usize = (LEAD + 1).next_power_of_two();
        let at = |i: usize| i & (RING - 1);
        let mut keys = [0u64; RING];
        let mut compared = 0;
        for (i, &(fp, _)) in order.iter().take(LEAD).enumerate() {
            keys[i] = self.layout.apply(fp);
            self.prefetch_presence(keys[i]);
        }
        // Probe i while fetching for i + LEAD (its key computed here), i + 3, 2 and 1 strides.
        let split = order.len().saturating_sub(LEAD);
        let ahead = order.get(LEAD..).unwrap_or_default();
        for (i, (&(_, query), &(fp_ahead, _))) in order[..split].iter().zip(ahead).enumerate() {
            let key_ahead = self.layout.apply(fp_ahead);
            keys[at(i + LEAD)] = key_ahead;
            self.prefetch_presence(key_ahead);
            self.prefetch_slot(keys[at(i + 3 * PREFETCH_STRIDE)]);
            self.prefetch_slot_contents(keys[at(i + 2 * PREFETCH_STRIDE)]);
            self.prefetch_long_slot_range(keys[at(i + PREFETCH_STRIDE)]);
            probe(keys[at(i)], query, &mut compared);
        }
        for (i, &(_, query)) in order.iter().enumerate().skip(split) {
            probe(keys[at(i)], query, &mut compared);
        }
        *examined += compared;
    }

    /// [`TableWalk::walk`] with the popcnt instruction enabled, so that the probes and scans
    /// inline into one loop instead of each checking for it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn walk_with_popcnt(&self, order: &[(u64, usize)], examined: &mut u64, visit: &mut impl FnMut(usize, usize, u64, u32)) {
        self.walk(order, examined, |key, query, compared| self.probe_key_by_key(key, query, compared, visit));
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> usize {
        ((key >> 1) >> self.dir_shift) as usize
    }

    /// All ones where the table may hold keys with `key`'s prefix, zero where its bitmap says
    /// it holds none (the bitmap's word fetched before).
    #[inline(always)]
    fn presence_mask(&self, key: u64) -> usize {
        match self.presence {
            Some(presence) => usize::from(presence.contains(key)).wrapping_neg(),
            None => usize::MAX,
        }
    }

    /// The start and length of `key`'s directory slot (fetched before), or of no keys where
    /// its prefix is absent: slot 0's start is read then, without a branch.
    #[inline(always)]
    fn slot_if_present(&self, key: u64) -> (usize, usize) {
        let present = self.presence_mask(key);
        let s = self.slot(key) & present;
        let start = self.offsets[s] as usize;
        (start, (self.offsets[s + 1] as usize - start) & present)
    }

    /// Asks for the word of the table's bitmap of prefixes that holds `key`'s prefix to be
    /// brought into cache (a table without a bitmap has nothing to fetch).
    #[inline(always)]
    fn prefetch_presence(&self, key: u64) {
        if let Some(presence) = self.presence {
            presence.prefetch(key);
        }
    }

    /// Asks for `key`'s directory slot to be brought into cache, slot 0's if its prefix is
    /// absent.
    #[inline(always)]
    fn prefetch_slot(&self, key: u64) {
        prefetch(&self.offsets[self.slot(key) & self.presence_mask(key)]);
    }

    /// Asks for the keys of `key`'s directory slot to be brought into cache, every line of a
    /// slot the probe will scan whole; for a longer slot, the entry of its subdirectory.
    #[inline(always)]
    fn prefetch_slot_contents(&self, key: u64) {
        let (start, len) = self.slot_if_present(key);
        // The lines of the first and last key are all the lines of a short slot; an empty
        // slot asks for a line it does not need, which is cheaper than a branch.
        let first = self.keys.as_ptr().wrapping_add(start);
        prefetch_address(first);
        prefetch_address(first.wrapping_add(len.saturating_sub(1)));
        if !self.payloads.is_empty() && len <= TWO_LINE_SLOT {
            // Most probes of table 0 whose prefix is present find a hit, whose payload the
            // caller reads at once.
            let payload = self.payloads.as_ptr().wrapping_add(start);
            prefetch_address(payload);
            prefetch_address(payload.wrapping_add(len.saturating_sub(1)));
        }
        if len > SCANNED_SLOT {
            self.table.prefetch_slot_contents(key);
        } else if len > TWO_LINE_SLOT {
            prefetch_lines(&self.keys[start..start + len]);
        }
    }

    /// For a slot longer than [`SCANNED_SLOT`], asks for the keys sharing `key`'s prefix as far
    /// as the slot's subdirectory (fetched before) narrows them down.
    #[inline(always)]
    fn prefetch_long_slot_range(&self, key: u64) {
        if self.slot_if_present(key).1 > SCANNED_SLOT {
            self.table.prefetch_subdirectory_range(key, self.layout.prefix_bits);
        }
    }

    /// Probes for `key` of query number `query`, calling `visit(query, index, fingerprint,
    /// distance)` for the hits this table reports: a short slot key by key, inline with the
    /// caller's instruction set.
    #[inline(always)]
    fn probe_key_by_key(&self, key: u64, query: usize, compared: &mut u64, visit: &mut impl FnMut(usize, usize, u64, u32)) {
        let (start, len) = self.slot_if_present(key);
        if len > SHORT_SLOT {
            return self.probe_long_slot(key, start, len, query, compared, visit);
        }
        *compared += len as u64;
        for (i, &stored) in self.keys[start..start + len].iter().enumerate() {
            let differ = stored ^ key;
            let distance = differ.count_ones();
            if distance <= self.layout.k && differ & self.prefix_mask == 0 {
                self.report(query, start + i, differ, distance, visit);
            }
        }
    }

    /// Probes a slot too long for the probes above: one up to [`SCANNED_SLOT`] long with the
    /// vector scan, a longer one through the table's full probe.
    fn probe_long_slot(
        &self,
        key: u64,
        start: usize,
        len: usize,
        query: usize,
        compared: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        let (prefix_bits, k) = (self.layout.prefix_bits, self.layout.k);
        if len > SCANNED_SLOT {
            let _ = self.table.probe_long_slot(key, prefix_bits, k, compared, &mut |index, distance| {
                self.report(query, index, self.keys[index] ^ key, distance, visit);
                ControlFlow::Continue(())
            });
            return;
        }
        *compared += len as u64;
        let _ = scan(&self.keys[start..start + len], start, key, k, &mut |index, distance| {
            let differ = self.keys[index] ^ key;
            if differ & self.prefix_mask == 0 {
                self.report(query, index, differ, distance, visit);
            }
            ControlFlow::Continue(())
        });
    }

    /// Visits the hit at `index` (whose key differs from the query's in `differ`) unless an
    /// earlier table reports it.
    #[inline(always)]
    fn report(&self, query: usize, index: usize, differ: u64, distance: u32, visit: &mut impl FnMut(usize, usize, u64, u32)) {
        if !self.layout.earlier_table_agrees(differ) {
            visit(query, index, self.layout.invert(self.keys[index]), distance);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexParams;
    use crate::layout::layouts;
    use crate::run::Run;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A set with every kind of slot a walk meets: uniform keys, near copies, and a crowd of
    /// keys sharing their top 40 bits, long enough for hot ranges, long and scanned slots.
    /// Queries are stored keys with up to k + 1 bits flipped, crowd members and fresh keys.
    fn set_and_queries(seed: u64, uniform: usize, crowd: usize) -> (Vec<u64>, Vec<u64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let flip = |rng: &mut ChaCha8Rng, fp: u64, bits: u32| (0..bits).fold(fp, |f, _| f ^ 1 << rng.random_range(0..64));
        let mut stored: Vec<u64> = (0..uniform).map(|_| rng.random()).collect();
        for i in 0..uniform / 4 {
            let bits = rng.random_range(0..=4);
            let copy = flip(&mut rng, stored[i], bits);
            stored.push(copy);
        }
        stored.extend((0..crowd).map(|_| rng.random::<u64>() >> 40));
        let queries = (0..stored.len())
            .map(|i| match i % 3 {
                0 => {
                    let (base, bits) = (stored[rng.random_range(0..stored.len())], rng.random_range(0..=4));
                    flip(&mut rng, base, bits)
                }
                1 => rng.random::<u64>() >> if rng.random_bool(0.3) { 40 } else { 0 },
                _ => rng.random(),
            })
            .collect();
        (stored, queries)
    }

    /// Every hit of table `j` for `order` (sorted by key), as (query, fingerprint, distance),
    /// sorted.
    /// The design's k must be 3.
    fn walk_hits(kernel: WalkKernel, run: &Run, layout: &Layout, j: usize, order: &[(u64, usize)]) -> Vec<(usize, u64, u32)> {
        let mut hits = Vec::new();
        let mut examined = 0;
        walk_table(kernel, layout, &run.tables[j], &[], order, &mut examined, &mut |query, index, found, distance| {
            assert_eq!(layout.invert(run.tables[j].keys[index]), found, "the index is the hit's place in the table");
            hits.push((query, found, distance));
        });
        hits.sort_unstable();
        hits
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

        /// Every kernel this processor runs reports for every table exactly the stored
        /// fingerprints within distance k of each query that share the table's prefix and no
        /// earlier table's, as a brute-force pass over the set says.
        #[test]
        fn every_kernel_matches_brute_force_per_table(seed in any::<u64>(), crowd in prop::sample::select(vec![0usize, 300, 5000])) {
            let (stored, queries) = set_and_queries(seed, 3000, crowd);
            let entries: Vec<(u64, u64)> = stored.iter().enumerate().map(|(i, &fp)| (fp, i as u64)).collect();
            // Every (query, stored fingerprint) pair within distance 3, the k of every design here.
            let near: Vec<(usize, u64)> = queries
                .iter()
                .enumerate()
                .flat_map(|(query, &q)| stored.iter().filter(move |&&fp| (q ^ fp).count_ones() <= 3).map(move |&fp| (query, fp)))
                .collect();
            prop_assert!(near.len() > queries.len() / 6, "a third of the queries are near stored keys");
            for (_, params) in IndexParams::manku_designs() {
                let layouts = layouts(&params);
                let run = Run::build(&layouts, &entries);
                for (j, layout) in layouts.iter().enumerate() {
                    let agrees = |differ: u64, l: &Layout| differ & l.prefix_mask == 0;
                    let mut expected: Vec<(usize, u64, u32)> = near
                        .iter()
                        .map(|&(query, fp)| (query, fp, queries[query] ^ fp))
                        .filter(|&(_, _, differ)| agrees(differ, layout) && !layouts[..j].iter().any(|l| agrees(differ, l)))
                        .map(|(query, fp, differ)| (query, fp, differ.count_ones()))
                        .collect();
                    expected.sort_unstable();
                    let mut order: Vec<(u64, usize)> = queries.iter().copied().zip(0..).collect();
                    order.sort_unstable_by_key(|&(fp, query)| (layout.apply(fp), query));
                    for kernel in WalkKernel::available() {
                        prop_assert_eq!(&walk_hits(kernel, &run, layout, j, &order), &expected, "{:?}, table {}", kernel, j);
                    }
                }
            }
        }
    }
}
