//! The online index: inserts and queries interleave.

use std::ops::ControlFlow;

use nearcrawl_fingerprint::Fingerprint;

use crate::IndexParams;
use crate::layout::{Layout, layouts};
use crate::run::Run;

/// Inserts are buffered here and scanned directly until there are this many.
const PENDING_LIMIT: usize = 128;
/// Each level of runs holds up to this many times more entries than the one before.
const LEVEL_GROWTH: usize = 8;

/// A stored fingerprint within distance k of a query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Match {
    /// The stored fingerprint.
    pub fingerprint: Fingerprint,
    /// The payload stored with it (for the crawler, the document id).
    pub payload: u64,
    /// The Hamming distance to the query.
    pub distance: u32,
}

/// What one query cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Stored keys compared with the query (candidates), over every table and run.
    pub candidates: u64,
    /// Matches found.
    pub matches: u64,
    /// Table probes made (tables times non-empty runs).
    pub probes: u64,
}

/// Manku et al.'s permuted-table index over 64-bit fingerprints: finds every stored fingerprint
/// within Hamming distance k of a query, with a `u64` payload per entry.
///
/// Inserts and queries interleave: new entries wait in a small buffer that queries scan, then
/// move into sorted runs merged level by level (each level eight times larger), so an
/// insert costs a few amortised key moves per table and a query a handful of probes per table.
/// [`HammingIndex::from_entries`] bulk-builds one run, the fastest way to load a large set.
///
/// ```
/// use nearcrawl_fingerprint::Fingerprint;
/// use nearcrawl_hamming_index::{HammingIndex, IndexParams};
///
/// let mut index = HammingIndex::new(IndexParams::manku_10_tables());
/// index.insert(Fingerprint::new(0xdead_beef_0000_0000), 1);
/// let near = Fingerprint::new(0xdead_beef_0000_0007); // 3 bits away
/// assert_eq!(index.first_match(near).map(|m| (m.payload, m.distance)), Some((1, 3)));
/// assert!(index.first_match(Fingerprint::new(0xdead_beef_0000_000f)).is_none()); // 4 bits
/// ```
#[derive(Clone, Debug)]
pub struct HammingIndex {
    pub(crate) params: IndexParams,
    pub(crate) layouts: Vec<Layout>,
    /// `levels[i]` holds at most `PENDING_LIMIT * LEVEL_GROWTH^(i+1)` entries (the last level
    /// may hold more after a bulk build or a load).
    pub(crate) levels: Vec<Run>,
    /// Recent inserts not yet in a run, scanned by every query.
    pub(crate) pending: Vec<(u64, u64)>,
    len: usize,
}

impl HammingIndex {
    /// An empty index with the given design.
    pub fn new(params: IndexParams) -> HammingIndex {
        let layouts = layouts(&params);
        HammingIndex {
            params,
            layouts,
            levels: Vec::new(),
            pending: Vec::new(),
            len: 0,
        }
    }

    /// Builds an index over many entries at once (one sort per table).
    pub fn from_entries(
        params: IndexParams,
        entries: impl IntoIterator<Item = (Fingerprint, u64)>,
    ) -> HammingIndex {
        let mut index = HammingIndex::new(params);
        let entries: Vec<(u64, u64)> = entries.into_iter().map(|(f, p)| (f.bits(), p)).collect();
        index.len = entries.len();
        let run = Run::build(&index.layouts, &entries);
        index.place(run);
        index
    }

    pub(crate) fn from_run(params: IndexParams, run: Run) -> HammingIndex {
        let mut index = HammingIndex::new(params);
        index.len = run.len();
        index.place(run);
        index
    }

    /// Puts a run at the first level large enough for it.
    fn place(&mut self, run: Run) {
        let mut level = 0;
        while level_capacity(level) < run.len() {
            level += 1;
        }
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, Run::default);
        }
        let existing = std::mem::take(&mut self.levels[level]);
        self.levels[level] = Run::merge(&self.layouts, existing, run);
    }

    /// The design.
    pub fn params(&self) -> &IndexParams {
        &self.params
    }

    /// The number of stored entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores `fingerprint` with `payload`. Equal fingerprints may be stored many times; each
    /// entry is returned by queries with its own payload.
    pub fn insert(&mut self, fingerprint: Fingerprint, payload: u64) {
        self.pending.push((fingerprint.bits(), payload));
        self.len += 1;
        if self.pending.len() >= PENDING_LIMIT {
            self.flush_pending();
        }
    }

    fn flush_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let run = Run::build(&self.layouts, &self.pending);
        self.pending.clear();
        if self.levels.is_empty() {
            self.levels.push(Run::default());
        }
        let first = std::mem::take(&mut self.levels[0]);
        self.levels[0] = Run::merge(&self.layouts, first, run);
        let mut level = 0;
        while self.levels[level].len() > level_capacity(level) {
            if self.levels.len() == level + 1 {
                self.levels.push(Run::default());
            }
            let full = std::mem::take(&mut self.levels[level]);
            let next = std::mem::take(&mut self.levels[level + 1]);
            self.levels[level + 1] = Run::merge(&self.layouts, next, full);
            level += 1;
        }
    }

    /// Merges every entry into one run: the fastest layout for queries, and what
    /// [`HammingIndex::save`](crate::HammingIndex::save) writes.
    pub fn compact(&mut self) {
        let mut all = Run::build(&self.layouts, &self.pending);
        self.pending.clear();
        for run in std::mem::take(&mut self.levels) {
            all = Run::merge(&self.layouts, run, all);
        }
        self.place(all);
    }

    /// Every stored entry within distance k of `fingerprint`, each exactly once, in no
    /// particular order.
    pub fn query(&self, fingerprint: Fingerprint) -> Vec<Match> {
        let mut out = Vec::new();
        self.query_into(fingerprint, &mut out);
        out
    }

    /// Like [`HammingIndex::query`], appending to `out` (reuse its allocation across queries).
    pub fn query_into(&self, fingerprint: Fingerprint, out: &mut Vec<Match>) -> QueryStats {
        self.search(fingerprint, true, &mut |m| {
            out.push(m);
            ControlFlow::Continue(())
        })
    }

    /// Some stored entry within distance k, if there is one: the crawler's hot path, which stops
    /// at the first hit. Exact copies are found before anything is scanned further.
    pub fn first_match(&self, fingerprint: Fingerprint) -> Option<Match> {
        let mut found = None;
        self.search(fingerprint, false, &mut |m| {
            found = Some(m);
            ControlFlow::Break(())
        });
        found
    }

    /// The cost of answering `query` for `fingerprint` (candidates examined, probes, matches).
    pub fn query_stats(&self, fingerprint: Fingerprint) -> QueryStats {
        self.search(fingerprint, true, &mut |_| ControlFlow::Continue(()))
    }

    fn search(
        &self,
        fingerprint: Fingerprint,
        canonical: bool,
        visit: &mut impl FnMut(Match) -> ControlFlow<()>,
    ) -> QueryStats {
        let fp = fingerprint.bits();
        let k = self.params.k();
        let mut stats = QueryStats::default();
        let mut emit = |found: u64, payload: u64, distance: u32| {
            stats.matches += 1;
            visit(Match {
                fingerprint: Fingerprint::new(found),
                payload,
                distance,
            })
        };
        stats.candidates += self.pending.len() as u64;
        for &(stored, payload) in &self.pending {
            let distance = (stored ^ fp).count_ones();
            if distance <= k && emit(stored, payload, distance).is_break() {
                return stats;
            }
        }
        let mut candidates = 0;
        let mut probes = 0;
        for run in self.levels.iter().rev().filter(|r| r.len() > 0) {
            probes += self.layouts.len() as u64;
            if run
                .for_each_match(&self.layouts, fp, k, canonical, &mut candidates, &mut emit)
                .is_break()
            {
                break;
            }
        }
        stats.candidates += candidates;
        stats.probes = probes;
        stats
    }

    /// Every stored entry, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = (Fingerprint, u64)> + '_ {
        let runs = self
            .levels
            .iter()
            .flat_map(|run| run.entries(&self.layouts));
        self.pending
            .iter()
            .copied()
            .chain(runs)
            .map(|(f, p)| (Fingerprint::new(f), p))
    }

    /// Heap bytes held: tables, directories, payloads and the insert buffer.
    pub fn heap_bytes(&self) -> usize {
        self.levels.iter().map(Run::heap_bytes).sum::<usize>() + self.pending.capacity() * 16
    }

    pub(crate) fn layouts(&self) -> &[Layout] {
        &self.layouts
    }

    /// All entries as one run: borrowed when the index is compacted, built otherwise. What
    /// saving and compression work from.
    pub(crate) fn as_one_run(&self) -> std::borrow::Cow<'_, Run> {
        let mut nonempty = self.levels.iter().filter(|r| r.len() > 0);
        match (self.pending.is_empty(), nonempty.next(), nonempty.next()) {
            (true, Some(run), None) => std::borrow::Cow::Borrowed(run),
            (true, None, None) => std::borrow::Cow::Owned(Run::build(&self.layouts, &[])),
            _ => {
                let entries: Vec<(u64, u64)> = self.entries().map(|(f, p)| (f.bits(), p)).collect();
                std::borrow::Cow::Owned(Run::build(&self.layouts, &entries))
            }
        }
    }
}

fn level_capacity(level: usize) -> usize {
    PENDING_LIMIT.saturating_mul(LEVEL_GROWTH.saturating_pow(level as u32 + 1))
}
