//! One sorted table of permuted keys with a directory on its leading bits, and the probe that
//! finds the keys within distance k of a query key.

use std::ops::{ControlFlow, Range};

use crate::layout::Layout;
use crate::memory::huge_filled;
use crate::prefetch::{prefetch, prefetch_lines};

mod hot;
mod presence;
mod subdirectory;

pub(crate) use hot::{HOT_MIN, HotRange};
pub(crate) use presence::PrefixBitmap;
use subdirectory::{SUBDIRECTORY_MIN, Subdirectories, Subdirectory, long_slot_threshold};

/// Ranges at most this long are scanned; longer ones (dense prefixes) are descended bit by bit.
/// A scan streams through memory at about a nanosecond per key (an eighth of that with a vector
/// scan and the range in cache), while every split of a descent is a binary search with cache
/// misses, and a split of a range this short seldom saves a scan of both halves: the budget of k
/// differing bits prunes only deep down. On the clustered 2^24 set, dense queries took 24 us
/// (median) with 48 here, 18 us with 1,024; raising it from 1,024 to 4,096 made batches on the
/// clustered 2^26 set faster (docs/BENCHMARKS.md, the fourth run of 2026-11-22, bd48c42).
const SCAN_LIMIT: usize = 4096;

/// Directory slots at most this long are scanned whole by a probe, without narrowing them to
/// the prefix first: a slot holds about two keys on average, and a binary search costs more
/// than a few popcounts.
pub(crate) const SHORT_SLOT: usize = 16;

/// What a table is searched for, which decides the directory slots that get a subdirectory
/// ([`subdirectory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lookups {
    /// Prefixes only, by the probes of the other tables: a slot gets a subdirectory where it
    /// holds a crowd, far more keys than the average slot.
    Prefixes,
    /// Whole keys too: table 0, where every hit of another table looks up its payloads by its
    /// key. Every slot longer than [`SUBDIRECTORY_MIN`] gets a subdirectory, so that in a
    /// design with short prefixes (4 tables of 16 bits: a thousand keys per slot at 2^26) a
    /// lookup is two reads instead of a binary search with a cache miss per step. On the
    /// clustered 2^26 set this took the payload lookups of a 4-table batch of 2^20 queries
    /// from 305 to 85 ms, for 1.5 more bytes per fingerprint (docs/BENCHMARKS.md).
    WholeKeys,
}

impl Lookups {
    /// The lookups table `j` of a run serves: whole keys in table 0, prefixes elsewhere.
    pub(crate) fn of_table(j: usize) -> Lookups {
        if j == 0 {
            Lookups::WholeKeys
        } else {
            Lookups::Prefixes
        }
    }
}

/// Sorted permuted keys plus a directory: `offsets[b]..offsets[b + 1]` is the range of keys whose
/// top `dir_bits` bits equal b, so a probe costs a directory read and a short scan instead of a
/// binary search over the whole table. Hot ranges (far more keys sharing a prefix than the
/// average) carry a design of their own, see [`hot`].
#[derive(Clone, Debug, Default)]
pub(crate) struct SortedTable {
    pub(crate) keys: Vec<u64>,
    dir_bits: u32,
    offsets: Vec<u32>,
    /// For the long slots.
    subdirectories: Subdirectories,
    /// In key order.
    hot: Vec<HotRange>,
    /// The prefixes present, where most are absent; a batch walk reads it first.
    presence: Option<PrefixBitmap>,
}

impl SortedTable {
    /// The number of directory bits for `len` keys: about two keys per directory slot, never
    /// more bits than the table's prefix (a probe then needs no search inside the slot).
    pub(crate) fn directory_bits(len: usize, prefix_bits: u32) -> u32 {
        let log = usize::BITS - 1 - len.max(1).leading_zeros();
        log.saturating_sub(1).min(prefix_bits).min(30)
    }

    /// Wraps keys that are already sorted in `layout`'s order and builds the directory (with
    /// subdirectories for the `lookups` it serves) and the designs of hot ranges.
    pub(crate) fn from_sorted(keys: Vec<u64>, layout: &Layout, lookups: Lookups) -> SortedTable {
        let mut table = SortedTable::without_hot_ranges(keys, layout.prefix_bits, lookups);
        table.hot = HotRange::find_all(&table.keys, layout);
        table.presence =
            PrefixBitmap::worth_building(&table.keys, layout.prefix_bits, table.dir_bits);
        table
    }

    /// Wraps keys that are already sorted and builds the directory only.
    pub(crate) fn without_hot_ranges(
        keys: Vec<u64>,
        prefix_bits: u32,
        lookups: Lookups,
    ) -> SortedTable {
        debug_assert!(keys.is_sorted());
        assert!(
            keys.len() < u32::MAX as usize,
            "a table holds fewer than 2^32 keys"
        );
        let dir_bits = Self::directory_bits(keys.len(), prefix_bits);
        let slots = 1usize << dir_bits;
        let mut offsets = huge_filled(slots + 1, 0u32);
        for &key in &keys {
            offsets[slot(key, dir_bits) + 1] += 1;
        }
        let mut long_slots = Vec::new();
        let long = match lookups {
            Lookups::Prefixes => long_slot_threshold(keys.len(), slots),
            Lookups::WholeKeys => SUBDIRECTORY_MIN,
        };
        for i in 0..slots {
            if offsets[i + 1] as usize > long {
                long_slots.push(i);
            }
            offsets[i + 1] += offsets[i];
        }
        let subdirectories = Subdirectories::new(&keys, &offsets, dir_bits, &long_slots);
        SortedTable {
            keys,
            dir_bits,
            offsets,
            subdirectories,
            hot: Vec::new(),
            presence: None,
        }
    }

    /// Heap bytes of keys, directory and hot ranges' designs.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.keys.capacity() * 8
            + self.offsets.capacity() * 4
            + self.subdirectories.heap_bytes()
            + self.hot.iter().map(HotRange::heap_bytes).sum::<usize>()
            + self.presence.as_ref().map_or(0, PrefixBitmap::heap_bytes)
    }

    /// The range of keys whose top `prefix_bits` bits equal those of `key`.
    #[inline]
    pub(crate) fn prefix_range(&self, key: u64, prefix_bits: u32) -> Range<usize> {
        self.shared_range(key, prefix_bits)
    }

    /// The range of keys whose top `bits` bits (at least the directory's) equal those of `key`:
    /// from the directory slot, narrowed by the slot's subdirectory if it has one, then by a
    /// binary search for the bits neither covers.
    #[inline]
    fn shared_range(&self, key: u64, bits: u32) -> Range<usize> {
        debug_assert!(bits >= self.dir_bits && bits <= 64);
        if bits == self.dir_bits {
            return self.slot_range(key);
        }
        let (slot, subdirectory) = self.slot_and_subdirectory(key);
        let (range, known) = match subdirectory {
            Some(sub) => sub.shared_range(key, bits),
            None => (slot, self.dir_bits),
        };
        if known >= bits {
            return range;
        }
        let shift = 64 - bits;
        offset(
            range.start,
            equal_run(&self.keys[range], |k| k >> shift, key >> shift),
        )
    }

    /// The directory slot holding `key`, and the slot's subdirectory if it is long enough to
    /// have one.
    #[inline]
    fn slot_and_subdirectory(&self, key: u64) -> (Range<usize>, Option<Subdirectory<'_>>) {
        let s = slot(key, self.dir_bits);
        let slot = self.offsets[s] as usize..self.offsets[s + 1] as usize;
        let subdirectory = if slot.len() > SUBDIRECTORY_MIN {
            self.subdirectories.get(s, self.dir_bits)
        } else {
            None
        };
        (slot, subdirectory)
    }

    /// The directory slot holding `key`: the keys sharing its top `dir_bits` bits.
    #[inline]
    fn slot_range(&self, key: u64) -> Range<usize> {
        let s = slot(key, self.dir_bits);
        self.offsets[s] as usize..self.offsets[s + 1] as usize
    }

    /// Asks for the directory slot of `key` to be brought into cache, without waiting for it.
    #[inline]
    pub(crate) fn prefetch_slot(&self, key: u64) {
        prefetch(&self.offsets[slot(key, self.dir_bits)]);
    }

    /// Reads the directory slot of `key` (prefetched before) and asks for the first keys of its
    /// range to be brought into cache, without waiting for them.
    #[inline]
    pub(crate) fn prefetch_range(&self, key: u64) {
        if let Some(first) = self.keys.get(self.slot_range(key).start) {
            prefetch(first);
        }
    }

    /// For a walk that looks keys up one after another ([`crate::run::Run::payloads_in_key_order`]),
    /// the second of its steps of fetching ahead, after [`SortedTable::prefetch_slot`]: reads
    /// the directory slot of `key` and asks for the slot's subdirectory entry if it has one,
    /// else for the slot's keys.
    #[inline]
    pub(crate) fn prefetch_slot_contents(&self, key: u64) {
        match self.slot_and_subdirectory(key) {
            (_, Some(sub)) => sub.prefetch_entry(key),
            (slot, None) => prefetch_lines(&self.keys[slot]),
        }
    }

    /// The third step after [`SortedTable::prefetch_slot_contents`]: for a slot with a
    /// subdirectory, reads its entry and asks for the keys of the narrowest range it gives
    /// for `key`'s top `bits` bits (a slot without one had its keys asked for in the second
    /// step). Then [`SortedTable::equal_range`] (`bits` 64) or a probe (the prefix's bits)
    /// finds them in cache.
    #[inline]
    pub(crate) fn prefetch_subdirectory_range(&self, key: u64, bits: u32) {
        if let (_, Some(sub)) = self.slot_and_subdirectory(key) {
            prefetch_lines(&self.keys[sub.shared_range(key, bits).0]);
        }
    }

    /// The parts a batch walk reads for every probe, so that its loop keeps them in registers
    /// instead of reloading them through the table.
    #[inline(always)]
    pub(crate) fn walk_parts(&self) -> (&[u64], &[u32], u32, Option<&PrefixBitmap>) {
        (
            &self.keys,
            &self.offsets,
            self.dir_bits,
            self.presence.as_ref(),
        )
    }

    /// The directory slot of `query` if it is short enough for a probe to scan it whole (see
    /// [`scan_prefix`]), as nearly all are.
    #[inline(always)]
    pub(crate) fn short_slot(&self, query: u64) -> Option<Range<usize>> {
        Some(self.slot_range(query)).filter(|slot| slot.len() <= SHORT_SLOT)
    }

    /// The range of keys equal to `key`.
    pub(crate) fn equal_range(&self, key: u64) -> Range<usize> {
        self.shared_range(key, 64)
    }

    /// Calls `visit(index, distance)` for every key within distance `k` of `query` among those
    /// sharing its top `prefix_bits` bits, equal keys one after another. `examined` counts the
    /// keys compared.
    #[inline]
    pub(crate) fn probe(
        &self,
        query: u64,
        prefix_bits: u32,
        k: u32,
        examined: &mut u64,
        visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        match self.short_slot(query) {
            Some(slot) => scan_prefix(&self.keys, slot, query, prefix_bits, k, examined, visit),
            None => self.probe_long_slot(query, prefix_bits, k, examined, visit),
        }
    }

    /// [`SortedTable::probe`] for a query whose directory slot is not short: its prefix range
    /// through the subdirectory, then the range's own design if it is hot, else a descent.
    pub(crate) fn probe_long_slot(
        &self,
        query: u64,
        prefix_bits: u32,
        k: u32,
        examined: &mut u64,
        visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        match self.locate_prefix(query, prefix_bits) {
            PrefixKeys::Hot(hot) => hot.probe(&self.keys, query, k, examined, visit),
            PrefixKeys::Range(range) => {
                within_distance(&self.keys, range, prefix_bits, query, k, k, examined, visit)
            }
        }
    }

    /// The keys sharing `query`'s top `prefix_bits` bits, or the hot range holding them.
    pub(crate) fn locate_prefix(&self, query: u64, prefix_bits: u32) -> PrefixKeys<'_> {
        let range = self.prefix_range(query, prefix_bits);
        if range.len() > HOT_MIN
            && let Ok(i) = self
                .hot
                .binary_search_by_key(&range.start, |hot| hot.range.start)
        {
            return PrefixKeys::Hot(&self.hot[i]);
        }
        PrefixKeys::Range(range)
    }
}

/// Where the keys of a prefix are: a range of the table, or a hot range with its own design.
pub(crate) enum PrefixKeys<'a> {
    Range(Range<usize>),
    Hot(&'a HotRange),
}

/// Calls `visit(index, distance)` for the keys of `keys[range]` within distance `k` of `query`
/// that share its top `prefix_bits` bits. For a short directory slot this is cheaper than
/// narrowing the slot to the prefix first: the keys whose prefix differs are dropped after the
/// distance test, which few pass. Inlined with the caller's instruction set (popcnt or not).
#[inline(always)]
pub(crate) fn scan_prefix(
    keys: &[u64],
    range: Range<usize>,
    query: u64,
    prefix_bits: u32,
    k: u32,
    examined: &mut u64,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    *examined += range.len() as u64;
    let shift = 64 - prefix_bits;
    for i in range {
        let differ = keys[i] ^ query;
        let distance = differ.count_ones();
        if distance <= k && differ.checked_shr(shift).unwrap_or(0) == 0 {
            visit(i, distance)?;
        }
    }
    ControlFlow::Continue(())
}

/// The range of `sorted` whose projection equals `want`; the projection must keep the order
/// (a prefix of the key, or the key itself).
#[inline]
fn equal_run(sorted: &[u64], project: impl Fn(u64) -> u64, want: u64) -> Range<usize> {
    let start = sorted.partition_point(|&k| project(k) < want);
    start..start + sorted[start..].partition_point(|&k| project(k) == want)
}

#[inline]
fn offset(base: usize, range: Range<usize>) -> Range<usize> {
    base + range.start..base + range.end
}

#[inline]
fn slot(key: u64, dir_bits: u32) -> usize {
    key.checked_shr(64 - dir_bits).unwrap_or(0) as usize
}

/// Calls `visit(base + i, distance)` for every key `keys[i]` within distance `k` of `query`.
/// The popcount is one instruction where the processor has it (nearly every x86-64 since 2008,
/// checked once and cached by std); the portable build would count bits with a dozen shifts
/// and masks per key.
#[inline]
pub(crate) fn scan(
    keys: &[u64],
    base: usize,
    query: u64,
    k: u32,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    #[cfg(target_arch = "x86_64")]
    if keys.len() >= VECTOR_SCAN_MIN && std::arch::is_x86_feature_detected!("avx512vpopcntdq") {
        // SAFETY: the processor has AVX-512 with its popcount extension, checked just above
        // (the extension implies AVX-512F).
        return unsafe { scan_with_avx512(keys, base, query, k, visit) };
    }
    #[cfg(target_arch = "x86_64")]
    if keys.len() >= VECTOR_SCAN_MIN && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { scan_with_avx2(keys, base, query, k, visit) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the processor has the popcnt instruction, checked just above.
        return unsafe { scan_with_popcnt(keys, base, query, k, visit) };
    }
    scan_portable(keys, base, query, k, visit)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
#[inline]
fn scan_with_popcnt(
    keys: &[u64],
    base: usize,
    query: u64,
    k: u32,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    scan_portable(keys, base, query, k, visit)
}

/// Ranges at least this long are scanned eight keys at a time where the processor can.
const VECTOR_SCAN_MIN: usize = 32;

/// [`scan`] eight keys per instruction: XOR with the query, count the bits of each 64-bit lane,
/// compare with k; only lanes within distance are visited. Long ranges (the crowds of dense
/// prefixes, the short-prefix designs) are scanned several times faster this way. The keys go
/// by blocks of 64, and only the least of each lane's eight distances is compared with k: most
/// blocks hold no key within distance, and their loop is nothing but vector steps, where a
/// mask tested for every eight keys took a third more time (docs/BENCHMARKS.md).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
fn scan_with_avx512(
    keys: &[u64],
    base: usize,
    query: u64,
    k: u32,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    use std::arch::x86_64::{
        __m512i, _mm512_cmple_epu64_mask, _mm512_loadu_si512, _mm512_min_epu64,
        _mm512_popcnt_epi64, _mm512_set1_epi64, _mm512_xor_si512,
    };
    let (wanted, radius) = (
        _mm512_set1_epi64(query as i64),
        _mm512_set1_epi64(i64::from(k)),
    );
    let distances = |chunk: &[u64]| -> __m512i {
        // SAFETY: `chunk` is eight initialised u64s, 64 bytes; the load is unaligned.
        let lanes = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
        _mm512_popcnt_epi64(_mm512_xor_si512(lanes, wanted))
    };
    let within_of = |chunk: &[u64]| u64::from(_mm512_cmple_epu64_mask(distances(chunk), radius));
    let blocks = keys.chunks_exact(64);
    let tail = blocks.remainder();
    for (b, block) in blocks.enumerate() {
        let nearest = block
            .chunks_exact(8)
            .map(distances)
            .reduce(|a, b| _mm512_min_epu64(a, b));
        if nearest.is_some_and(|nearest| _mm512_cmple_epu64_mask(nearest, radius) != 0) {
            for (c, chunk) in block.chunks_exact(8).enumerate() {
                visit_lanes(chunk, base + b * 64 + c * 8, query, within_of(chunk), visit)?;
            }
        }
    }
    let chunks = tail.chunks_exact(8);
    let rest = chunks.remainder();
    let tail_base = base + keys.len() - tail.len();
    for (c, chunk) in chunks.enumerate() {
        visit_lanes(chunk, tail_base + c * 8, query, within_of(chunk), visit)?;
    }
    scan_portable(rest, base + keys.len() - rest.len(), query, k, visit)
}

/// [`scan`] four keys at a time with AVX2, which has no 64-bit popcount: the bits of each byte
/// are counted by table lookup on its two nibbles, and the bytes of each lane summed.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_with_avx2(
    keys: &[u64],
    base: usize,
    query: u64,
    k: u32,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    use std::arch::x86_64::{
        _mm256_add_epi8, _mm256_and_si256, _mm256_castsi256_pd, _mm256_cmpgt_epi64,
        _mm256_loadu_si256, _mm256_movemask_pd, _mm256_sad_epu8, _mm256_set1_epi8,
        _mm256_set1_epi64x, _mm256_setr_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
        _mm256_srli_epi16, _mm256_xor_si256,
    };
    #[rustfmt::skip]
    let bits_of_nibble = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
    );
    let nibble = _mm256_set1_epi8(0x0f);
    let (wanted, radius) = (
        _mm256_set1_epi64x(query as i64),
        _mm256_set1_epi64x(i64::from(k)),
    );
    let chunks = keys.chunks_exact(4);
    let rest = chunks.remainder();
    for (c, chunk) in chunks.enumerate() {
        // SAFETY: `chunk` is four initialised u64s, 32 bytes; the load is unaligned.
        let lanes = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
        let differ = _mm256_xor_si256(lanes, wanted);
        let low = _mm256_shuffle_epi8(bits_of_nibble, _mm256_and_si256(differ, nibble));
        let high = _mm256_shuffle_epi8(
            bits_of_nibble,
            _mm256_and_si256(_mm256_srli_epi16(differ, 4), nibble),
        );
        let distances = _mm256_sad_epu8(_mm256_add_epi8(low, high), _mm256_setzero_si256());
        let beyond = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(distances, radius)));
        visit_lanes(chunk, base + c * 4, query, !beyond as u64 & 0b1111, visit)?;
    }
    scan_portable(rest, base + keys.len() - rest.len(), query, k, visit)
}

/// Calls `visit(base + lane, distance)` for each lane of `chunk` whose bit is set in `within`
/// (the lanes a vector scan found within distance), in order.
#[inline(always)]
fn visit_lanes(
    chunk: &[u64],
    base: usize,
    query: u64,
    mut within: u64,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    while within != 0 {
        let lane = within.trailing_zeros() as usize;
        visit(base + lane, (chunk[lane] ^ query).count_ones())?;
        within &= within - 1;
    }
    ControlFlow::Continue(())
}

#[inline(always)]
fn scan_portable(
    keys: &[u64],
    base: usize,
    query: u64,
    k: u32,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    for (i, &key) in keys.iter().enumerate() {
        let distance = (key ^ query).count_ones();
        if distance <= k {
            visit(base + i, distance)?;
        }
    }
    ControlFlow::Continue(())
}

/// Visits the keys of `keys[range]` within distance `k` of `query`. All keys in the range agree
/// with each other on their top `depth` bits; `budget` is how many more differing bits the keys
/// below `depth` may have (k minus the differing bits above `depth`).
///
/// A short range is scanned. A long one, a dense prefix such as the many empty pages whose
/// fingerprints are all 0, is split at bit `depth`: the half that agrees with the query keeps
/// the budget, the other half costs one bit of it, and with no budget left only one key value
/// can match (one binary search). The work is bounded by the number of bit patterns within the
/// budget, whatever the number of keys, so a hot prefix never turns a probe into a table scan.
#[allow(clippy::too_many_arguments)]
pub(crate) fn within_distance(
    keys: &[u64],
    range: Range<usize>,
    depth: u32,
    query: u64,
    k: u32,
    budget: u32,
    examined: &mut u64,
    visit: &mut impl FnMut(usize, u32) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let slice = &keys[range.clone()];
    if slice.len() <= SCAN_LIMIT || depth >= 64 {
        *examined += slice.len() as u64;
        return scan(slice, range.start, query, k, visit);
    }
    let steps = u64::from(usize::BITS - slice.len().leading_zeros());
    *examined += steps;
    if budget == 0 {
        // The only key value left: the range's shared top bits, the query's bits below.
        let high = !(u64::MAX >> depth);
        let target = (slice[0] & high) | (query & !high);
        let distance = (target ^ query).count_ones();
        for i in offset(range.start, equal_run(slice, |k| k, target)) {
            visit(i, distance)?;
        }
        return ControlFlow::Continue(());
    }
    let bit = 1u64 << (63 - depth);
    let split = range.start + slice.partition_point(|&key| key & bit == 0);
    let (zeros, ones) = (range.start..split, split..range.end);
    let (same, other) = if query & bit == 0 {
        (zeros, ones)
    } else {
        (ones, zeros)
    };
    within_distance(keys, same, depth + 1, query, k, budget, examined, visit)?;
    within_distance(
        keys,
        other,
        depth + 1,
        query,
        k,
        budget - 1,
        examined,
        visit,
    )
}

#[cfg(test)]
mod tests;
