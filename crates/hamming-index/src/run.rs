//! A run: every table of the design built over one set of entries. The online index is a few
//! runs of geometrically growing size (a log-structured merge), a bulk-built index is one.

use std::ops::{ControlFlow, Range};

use crate::layout::Layout;
use crate::memory::{huge_filled, huge_vec};
use crate::presence::PrefixBitmap;
use crate::table::{FETCHED_RUN, SHORT_SLOT, SortedTable, prefetch, prefetch_lines, scan};

/// Tables of a design whose memory a query prefetches before probing (every design here has
/// at most 20; a larger one probes the rest without).
const MAX_PREFETCHED_TABLES: usize = 64;

/// How many probes ahead a batch walk fetches a table's memory: enough to cover a cache miss
/// with the probes in between.
const PREFETCH_STRIDE: usize = 16;

/// Directory slots up to this long are scanned whole by a batch walk (eight keys per
/// instruction where the processor can), all their cache lines fetched ahead with the first.
/// Such slots are a crowd spread over a table: a dense prefix whose shared bits fill only part
/// of the table's directory bits puts tens to hundreds of keys in each of many slots. Narrowing
/// one to the prefix instead would read its subdirectory or binary-search it, cache misses one
/// after another that the walk did not fetch ahead; on the clustered 2^26 set this made the
/// walks of the 16-table design's crowded tables a fifth slower.
const SCANNED_SLOT: usize = 256;
const _: () = assert!(SCANNED_SLOT <= FETCHED_RUN, "a walk fetches every line of a slot it scans whole");

/// One table's share of a query: the entries of table `table` within distance `k` of the query
/// whose key in that table's bit order is `key`; with `canonical`, only those no earlier table
/// reports (so every entry is reported once).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TableProbe {
    pub(crate) table: usize,
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
            self.table_matches(layouts, TableProbe { table: j, key, k, canonical }, examined, visit)?;
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
    #[inline]
    pub(crate) fn table_hits(
        &self,
        layouts: &[Layout],
        probe: TableProbe,
        examined: &mut u64,
        visit: &mut impl FnMut(usize, u64, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let prefix_bits = layouts[probe.table].prefix_bits;
        self.tables[probe.table].probe(probe.key, prefix_bits, probe.k, examined, &mut |index, distance| {
            match self.reported(layouts, probe, index) {
                Some(found) => visit(index, found, distance),
                None => ControlFlow::Continue(()),
            }
        })
    }

    /// The fingerprint of the entry at `index` of the probed table, if the probe reports it:
    /// with `canonical`, not when an earlier table's prefix also agrees with the query (that
    /// table reports it).
    #[inline(always)]
    fn reported(&self, layouts: &[Layout], probe: TableProbe, index: usize) -> Option<u64> {
        let (j, layout) = (probe.table, &layouts[probe.table]);
        let stored = self.tables[j].keys[index];
        if probe.canonical && layout.earlier_table_agrees(stored ^ probe.key) {
            return None;
        }
        Some(layout.invert(stored))
    }

    /// Probes table `j` for every `(key, query)` of `order` (keys in table j's bit order,
    /// grouped so that the walk moves forward through the table) and calls `visit(query, index,
    /// fingerprint, distance)` for the hits no earlier table reports: `index` is the hit's
    /// position in table j. Memory is fetched ahead of the walk.
    pub(crate) fn walk_table(
        &self,
        layouts: &[Layout],
        j: usize,
        order: &[(u64, usize)],
        examined: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the processor has the popcnt instruction, checked just above.
            return unsafe { self.walk_table_with_popcnt(layouts, j, order, examined, visit) };
        }
        self.walk_table_portable(layouts, j, order, examined, visit);
    }

    /// [`Run::walk_table`] compiled with the popcnt instruction enabled, so that the probes and
    /// scans inline into one loop instead of each checking for it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn walk_table_with_popcnt(
        &self,
        layouts: &[Layout],
        j: usize,
        order: &[(u64, usize)],
        examined: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        self.walk_table_portable(layouts, j, order, examined, visit);
    }

    /// The walk itself, inlined into each instruction-set version above. Its loop is written
    /// for the common probe, a short directory slot scanned whole: the table's parts, shifts
    /// and masks are set up once, and the keys ahead are read without bounds checks (the order
    /// is walked as four offset iterators). A probe whose prefix the table's bitmap of prefixes
    /// lacks is skipped, directory and keys unread. Slots longer than [`SCANNED_SLOT`] go
    /// through the full probe.
    #[inline(always)]
    fn walk_table_portable(
        &self,
        layouts: &[Layout],
        j: usize,
        order: &[(u64, usize)],
        examined: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        let walk = TableWalk::new(&layouts[j], &self.tables[j]);
        let mut compared = 0;
        // Keys ahead in the walk are fetched while this one is probed, each step's memory once
        // the step before has brought what it needs: their prefixes' bits three strides ahead,
        // the directory slots of those present two strides ahead, those slots' keys one stride
        // ahead.
        let prefetched = order.len().saturating_sub(3 * PREFETCH_STRIDE);
        let strides_ahead = |strides: usize| order.get(strides * PREFETCH_STRIDE..).unwrap_or_default();
        let ahead = strides_ahead(1).iter().zip(strides_ahead(2)).zip(strides_ahead(3));
        let probes = order[..prefetched].iter().zip(ahead);
        for (&(key, query), ((&(range_key, _), &(slot_key, _)), &(presence_key, _))) in probes {
            walk.prefetch_presence(presence_key);
            if walk.present(slot_key) {
                walk.prefetch_slot(slot_key);
            }
            if walk.present(range_key) {
                walk.prefetch_slot_keys(range_key);
            }
            if walk.present(key) {
                walk.probe(key, query, &mut compared, visit);
            }
        }
        for &(key, query) in &order[prefetched..] {
            if walk.present(key) {
                walk.probe(key, query, &mut compared, visit);
            }
        }
        *examined += compared;
    }

    /// Calls `visit(item, payload)` for each of `items`, sorted by their table-0 key, and
    /// each payload stored under that key: a forward walk through table 0 that fetches the
    /// memory of the keys and payloads ahead in four steps (directory slot; the slot's
    /// subdirectory entry or its keys; the subdirectory range's keys; the payloads of the keys
    /// equal to the item's), each a stride after the step before.
    pub(crate) fn payloads_in_key_order<T>(&self, items: &[T], key: impl Fn(&T) -> u64, visit: &mut impl FnMut(&T, u64)) {
        let table = &self.tables[0];
        for (position, item) in items.iter().enumerate() {
            if let Some(ahead) = items.get(position + 4 * PREFETCH_STRIDE) {
                table.prefetch_slot(key(ahead));
            }
            if let Some(ahead) = items.get(position + 3 * PREFETCH_STRIDE) {
                table.prefetch_slot_contents(key(ahead));
            }
            if let Some(ahead) = items.get(position + 2 * PREFETCH_STRIDE) {
                table.prefetch_subdirectory_range(key(ahead));
            }
            if let Some(ahead) = items.get(position + PREFETCH_STRIDE) {
                prefetch_lines(&self.payloads[table.equal_range(key(ahead))]);
            }
            for i in table.equal_range(key(item)) {
                visit(item, self.payloads[i]);
            }
        }
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
}

impl<'a> TableWalk<'a> {
    fn new(layout: &'a Layout, table: &'a SortedTable) -> TableWalk<'a> {
        let (keys, offsets, dir_bits, presence) = table.walk_parts();
        let prefix_mask = !u64::MAX.checked_shr(layout.prefix_bits).unwrap_or(0);
        TableWalk { layout, table, keys, offsets, dir_shift: 63 - dir_bits, prefix_mask, presence }
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> usize {
        ((key >> 1) >> self.dir_shift) as usize
    }

    /// The keys of `key`'s directory slot (whose directory entry was fetched before).
    #[inline(always)]
    fn slot_range(&self, key: u64) -> Range<usize> {
        let s = self.slot(key);
        self.offsets[s] as usize..self.offsets[s + 1] as usize
    }

    /// Asks for the word of the table's bitmap of prefixes that holds `key`'s prefix to be
    /// brought into cache (a table without a bitmap has nothing to fetch).
    #[inline(always)]
    fn prefetch_presence(&self, key: u64) {
        if let Some(presence) = self.presence {
            presence.prefetch(key);
        }
    }

    /// Whether some key of the table may share `key`'s prefix: false only where the table's
    /// bitmap of prefixes says none does (its word fetched before).
    #[inline(always)]
    fn present(&self, key: u64) -> bool {
        self.presence.is_none_or(|presence| presence.contains(key))
    }

    /// Asks for `key`'s directory slot to be brought into cache.
    #[inline(always)]
    fn prefetch_slot(&self, key: u64) {
        prefetch(&self.offsets[self.slot(key)]);
    }

    /// Asks for the keys of `key`'s directory slot to be brought into cache: every line of a
    /// slot the probe will scan whole, the first line of a longer one.
    #[inline(always)]
    fn prefetch_slot_keys(&self, key: u64) {
        prefetch_lines(&self.keys[self.slot_range(key)]);
    }

    /// Probes for `key` of query number `query` and calls `visit(query, index, fingerprint,
    /// distance)` for the hits this table reports. A short slot is scanned here, inline with the
    /// caller's instruction set, a slot up to [`SCANNED_SLOT`] long with the vector scan; a
    /// longer one goes through the full probe.
    #[inline(always)]
    fn probe(&self, key: u64, query: usize, compared: &mut u64, visit: &mut impl FnMut(usize, usize, u64, u32)) {
        let (layout, k) = (self.layout, self.layout.k);
        let Range { start, end } = self.slot_range(key);
        if end - start <= SHORT_SLOT {
            *compared += (end - start) as u64;
            for (i, &stored) in self.keys[start..end].iter().enumerate() {
                let differ = stored ^ key;
                let distance = differ.count_ones();
                if distance <= k && differ & self.prefix_mask == 0 {
                    self.report(query, start + i, differ, distance, visit);
                }
            }
        } else if end - start <= SCANNED_SLOT {
            *compared += (end - start) as u64;
            let _ = scan(&self.keys[start..end], start, key, k, &mut |index, distance| {
                let differ = self.keys[index] ^ key;
                if differ & self.prefix_mask == 0 {
                    self.report(query, index, differ, distance, visit);
                }
                ControlFlow::Continue(())
            });
        } else {
            let _ = self.table.probe_long_slot(key, layout.prefix_bits, k, compared, &mut |index, distance| {
                self.report(query, index, self.keys[index] ^ key, distance, visit);
                ControlFlow::Continue(())
            });
        }
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
/// millions of uniformly spread keys; skewed keys only make some buckets bigger. The sorted
/// items end up in memory advised for huge pages (they are often a table's keys).
pub(crate) fn bucket_sort<T: Copy + Default>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    if items.len() <= SMALL_SORT {
        items.sort_unstable_by_key(|item| key(item));
        return;
    }
    let mut out = huge_filled(items.len(), T::default());
    let bits = group_bits(items.len());
    let starts = count_and_scatter(items, &mut out, |item| (key(item) >> (64 - bits)) as usize, 1 << bits, &mut Vec::new());
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
