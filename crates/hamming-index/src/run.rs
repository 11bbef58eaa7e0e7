//! A run: every table of the design built over one set of entries. The online index is a few
//! runs of geometrically growing size (a log-structured merge), a bulk-built index is one.

use std::ops::ControlFlow;

use crate::layout::Layout;
use crate::memory::{huge_filled, huge_vec};
use crate::prefetch::{PREFETCH_STRIDE, prefetch_lines};
use crate::sort::bucket_sort;
use crate::table::{Lookups, SortedTable};

/// Tables of a design whose memory a query prefetches before probing (every design here has
/// at most 20; a larger one probes the rest without).
const MAX_PREFETCHED_TABLES: usize = 64;

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
        let mut first: Vec<(u64, u64)> = entries
            .iter()
            .map(|&(fp, payload)| (layouts[0].apply(fp), payload))
            .collect();
        bucket_sort(&mut first, |e| e.0);
        let (keys, payloads) = unzip_huge(&first);
        tables.push(SortedTable::from_sorted(
            keys,
            &layouts[0],
            Lookups::WholeKeys,
        ));
        for layout in &layouts[1..] {
            let mut keys: Vec<u64> = entries.iter().map(|&(fp, _)| layout.apply(fp)).collect();
            bucket_sort(&mut keys, |&k| k);
            tables.push(SortedTable::from_sorted(keys, layout, Lookups::Prefixes));
        }
        Run { tables, payloads }
    }

    /// Raw parts read back from a file; the caller has checked that every key list is sorted
    /// and as long as `payloads`.
    pub(crate) fn from_parts(layouts: &[Layout], keys: Vec<Vec<u64>>, payloads: Vec<u64>) -> Run {
        let tables = keys
            .into_iter()
            .zip(layouts)
            .enumerate()
            .map(|(j, (keys, layout))| SortedTable::from_sorted(keys, layout, Lookups::of_table(j)))
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
        let (a0, b0) = (
            a_tables.next().unwrap_or_default(),
            b_tables.next().unwrap_or_default(),
        );
        let pairs = |keys: Vec<u64>, payloads: Vec<u64>| -> Vec<(u64, u64)> {
            keys.into_iter().zip(payloads).collect()
        };
        let merged = merge_sorted(
            &pairs(a0.keys, a.payloads),
            &pairs(b0.keys, b.payloads),
            |e| e.0,
        );
        let (keys, payloads) = unzip_huge(&merged);
        drop(merged);
        tables.push(SortedTable::from_sorted(
            keys,
            &layouts[0],
            Lookups::WholeKeys,
        ));
        for ((x, y), layout) in a_tables.zip(b_tables).zip(&layouts[1..]) {
            let keys = merge_sorted(&x.keys, &y.keys, |&k| k);
            drop((x, y));
            tables.push(SortedTable::from_sorted(keys, layout, Lookups::Prefixes));
        }
        Run { tables, payloads }
    }

    pub(crate) fn len(&self) -> usize {
        self.payloads.len()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(SortedTable::heap_bytes)
            .sum::<usize>()
            + self.payloads.capacity() * 8
    }

    /// Every entry, as `(fingerprint, payload)`, in table 0's order.
    pub(crate) fn entries<'a>(
        &'a self,
        layouts: &'a [Layout],
    ) -> impl Iterator<Item = (u64, u64)> + 'a {
        let keys = self.tables.first().map_or(&[][..], |t| &t.keys[..]);
        keys.iter()
            .zip(&self.payloads)
            .map(|(&key, &payload)| (layouts[0].invert(key), payload))
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
            self.table_matches(
                layouts,
                TableProbe {
                    table: j,
                    key,
                    k,
                    canonical,
                },
                examined,
                visit,
            )?;
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
            self.payloads_of(layouts, found, &mut |payload| {
                visit(found, payload, distance)
            })
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
        self.tables[probe.table].probe(
            probe.key,
            prefix_bits,
            probe.k,
            examined,
            &mut |index, distance| match self.reported(layouts, probe, index) {
                Some(found) => visit(index, found, distance),
                None => ControlFlow::Continue(()),
            },
        )
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

    /// Calls `visit(item, payload)` for each of `items`, sorted by their table-0 key, and
    /// each payload stored under that key: a forward walk through table 0 that fetches the
    /// memory of the keys and payloads ahead in four steps (directory slot; the slot's
    /// subdirectory entry or its keys; the subdirectory range's keys; the payloads of the keys
    /// equal to the item's), each a stride after the step before.
    pub(crate) fn payloads_in_key_order<T>(
        &self,
        items: &[T],
        key: impl Fn(&T) -> u64,
        visit: &mut impl FnMut(&T, u64),
    ) {
        let table = &self.tables[0];
        for (position, item) in items.iter().enumerate() {
            if let Some(ahead) = items.get(position + 4 * PREFETCH_STRIDE) {
                table.prefetch_slot(key(ahead));
            }
            if let Some(ahead) = items.get(position + 3 * PREFETCH_STRIDE) {
                table.prefetch_slot_contents(key(ahead));
            }
            if let Some(ahead) = items.get(position + 2 * PREFETCH_STRIDE) {
                table.prefetch_subdirectory_range(key(ahead), 64);
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
