//! The batch walk: one table probed for every query of a batch, the probes moving forward
//! through the table (the order comes from [`super::walk_order`]) and each probe's memory
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
//! memory anyway, with one bit-gather instruction (BMI2's pext) per run of the key where the
//! processor runs it fast ([`crate::layout::GatherPlan`]). Each later step works out from what
//! has just arrived what the next one needs (whether the prefix is present, the slot, the keys
//! to scan) and keeps it with the key in a ring until the probe: worked out again at each step,
//! as the walk did before, it cost more instructions than the walk's memory waits (docs/
//! BENCHMARKS.md). In table 0, whose payloads the caller reads for every hit (most probes there
//! whose prefix is present find one), the payloads of a short slot are fetched with its keys.
//!
//! In a design with short prefixes (4 tables of 16 bits) every slot is long and is the whole of
//! its prefix's keys; the batch's probes of one prefix come one after another
//! ([`super::walk_order`]), and the first of them fetches the slot whole, for all of them.
//!
//! A probe into a hot range (a crowd with a design of its own, [`crate::table::HotRange`]) is left to the
//! end of the walk; then each range's probes are walked together through each table of its
//! design, sorted by their key there and fetched ahead like the walk's own, where one probe
//! after another waited for a few cache misses in every table of the design.
//!
//! Most probes find nothing, and whether a prefix is present is as good as random, so the walk
//! does not branch on it: a probe whose prefix is absent reads directory slot 0 (always in
//! cache) and scans no keys. A probe of a short slot scans it key by key; an AVX-512 probe of up
//! to eight keys in one masked vector step was faster with the tables in cache but slower at
//! 2^26 keys (docs/BENCHMARKS.md), so it is not kept.

use std::ops::ControlFlow;

use crate::layout::{GatherPlan, Layout};
use crate::prefetch::{
    FETCHED_RUN, PREFETCH_STRIDE, prefetch, prefetch_address, prefetch_every_line, prefetch_lines,
};
use crate::table::{
    HotRange, PrefixBitmap, PrefixKeys, SHORT_SLOT, SortedTable, scan, within_distance,
};

/// Directory slots up to this long are scanned whole by a batch walk (eight keys per
/// instruction where the processor can), all their cache lines fetched ahead with the first.
/// Such slots are a crowd spread over a table: a dense prefix whose shared bits fill only part
/// of the table's directory bits puts tens to hundreds of keys in each of many slots. Narrowing
/// one to the prefix instead would read its subdirectory or binary-search it, cache misses one
/// after another that the walk did not fetch ahead; on the clustered 2^26 set this made the
/// walks of the 16-table design's crowded tables a fifth slower.
const SCANNED_SLOT: usize = 256;
const _: () = assert!(
    SCANNED_SLOT <= FETCHED_RUN,
    "a walk fetches every line of a slot it scans whole"
);

/// A long slot that is the whole of its prefix's keys (a design with short prefixes) and up to
/// this long is fetched whole by a batch walk, ahead of the first of the probes into it that
/// come one after another ([`super::walk_order`] groups them so): 16 KB, half the first-level
/// cache of most processors. Longer ones are crowds that a probe descends or walks through a
/// hot range's design, reading only part of them.
const FETCHED_LONG_SLOT: usize = 2048;

/// The keys of a slot up to this long lie on at most two cache lines, its first key's and its
/// last key's.
const TWO_LINE_SLOT: usize = 8;

/// The instruction sets a batch walk is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WalkKernel {
    /// popcnt, and the bit gather of BMI2 for the keys (where the processor runs it fast and
    /// the table's permutation has a [`GatherPlan`]).
    Gather,
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
        [WalkKernel::Gather, WalkKernel::Popcnt, WalkKernel::Portable]
            .into_iter()
            .filter(|k| k.runs_here())
            .collect()
    }

    fn runs_here(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            WalkKernel::Gather => std::arch::is_x86_feature_detected!("popcnt") && gather_is_fast(),
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
    match (kernel, layout.gather) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has the popcnt and BMI2 instructions, checked just here.
        (WalkKernel::Gather, Some(plan)) if kernel.runs_here() => unsafe {
            walk.walk_with_gather(plan, order, examined, visit)
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the processor has the popcnt instruction, checked just here.
        (WalkKernel::Gather | WalkKernel::Popcnt, _) if WalkKernel::Popcnt.runs_here() => unsafe {
            walk.walk_with_popcnt(order, examined, visit)
        },
        _ => {
            walk.walk_with_hot_ranges(order, examined, visit, |fp| layout.apply(fp), Layout::apply)
        }
    }
}

/// Whether the processor has BMI2's bit gather (pext) and runs it in a few cycles: AMD's
/// before Zen 3 (family 0x19) run it in microcode, up to hundreds of cycles.
#[cfg(target_arch = "x86_64")]
fn gather_is_fast() -> bool {
    use std::arch::x86_64::__cpuid;
    if !std::arch::is_x86_feature_detected!("bmi2") {
        return false;
    }
    let vendor = __cpuid(0);
    let amd = [vendor.ebx, vendor.edx, vendor.ecx] == [0x6874_7541, 0x6974_6e65, 0x444d_4163] // "AuthenticAMD"
        || [vendor.ebx, vendor.edx, vendor.ecx] == [0x6f67_7948, 0x6e65_476e, 0x656e_6975]; // "HygonGenuine"
    let signature = __cpuid(1).eax;
    let base = (signature >> 8) & 0xf;
    let family = if base == 0xf {
        base + ((signature >> 20) & 0xff)
    } else {
        base
    };
    !amd || family >= 0x19
}

/// How many probes ahead of a probe the walk computes its key and asks for its first line.
const LEAD: usize = 4 * PREFETCH_STRIDE;

/// The walk's ring of probes between their first step and the probe itself.
const RING: usize = (LEAD + 1).next_power_of_two();

/// A probe on its way through the walk's steps, what each step found out kept for the next.
#[derive(Clone, Copy, Debug, Default)]
struct StagedProbe {
    /// The query's key in the table.
    key: u64,
    /// All ones if the table may hold the key's prefix, zero if its bitmap says not.
    present: usize,
    /// The key's directory slot, or 0 if its prefix is absent.
    slot: usize,
    /// The keys the probe scans: the slot's, none if the prefix is absent.
    start: usize,
    len: usize,
}

/// What a walk gathers besides its hits.
#[derive(Default)]
struct WalkState<'a> {
    /// Keys compared.
    compared: u64,
    /// The probes into hot ranges, left to the end of the walk.
    hot_probes: Vec<HotProbe<'a>>,
}

/// A probe whose prefix's keys are a hot range of the table.
struct HotProbe<'a> {
    range: &'a HotRange,
    key: u64,
    query: usize,
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
    /// Whether the prefix is longer than the directory's bits, so that a long slot is
    /// narrowed to the prefix's keys through its subdirectory; where they are as long, the
    /// slot is the prefix's keys (table 0 of a design with short prefixes has subdirectories
    /// for its payload lookups, which a probe does not need).
    narrows: bool,
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
        let narrows = layout.prefix_bits > dir_bits;
        TableWalk {
            layout,
            table,
            keys,
            offsets,
            dir_shift: 63 - dir_bits,
            prefix_mask,
            narrows,
            presence,
            payloads,
        }
    }

    /// The walk, inlined into each instruction-set version: for every `(fingerprint, query)`
    /// of `order` (its key in the table given by `key_of`), a probe calling `visit` for its hits
    /// once its memory has been asked for in four steps, a stride apart: the prefix's word of
    /// the bitmap, the directory slot, the slot's keys (or a long slot's subdirectory entry), a
    /// long slot's keys of the prefix. Each step works out what the next one needs from what
    /// has just arrived, once, and keeps it in a ring until the probe.
    #[inline(always)]
    fn walk(
        &self,
        order: &[(u64, usize)],
        state: &mut WalkState<'a>,
        visit: &mut impl FnMut(usize, usize, u64, u32),
        key_of: impl Fn(u64) -> u64,
    ) {
        // A start no slot has, where the first probe looks for the probe before it.
        let mut ring = [StagedProbe {
            start: usize::MAX,
            ..StagedProbe::default()
        }; RING];
        let n = order.len();
        // Step t asks for probe t's first line and runs probe t - LEAD; the first and last
        // LEAD steps check which of their probes exist.
        let head = LEAD.min(n);
        for t in 0..head {
            self.advance::<true>(t, order, &mut ring, state, visit, &key_of);
        }
        for t in head..n {
            self.advance::<false>(t, order, &mut ring, state, visit, &key_of);
        }
        for t in n.max(head)..n + LEAD {
            self.advance::<true>(t, order, &mut ring, state, visit, &key_of);
        }
    }

    /// Step `t` of [`TableWalk::walk`]: each probe of `order` due at one of the five stages
    /// advances a stage. Unless `GUARDED`, all five are known to exist.
    #[inline(always)]
    fn advance<const GUARDED: bool>(
        &self,
        t: usize,
        order: &[(u64, usize)],
        ring: &mut [StagedProbe; RING],
        state: &mut WalkState<'a>,
        visit: &mut impl FnMut(usize, usize, u64, u32),
        key_of: &impl Fn(u64) -> u64,
    ) {
        let due = |lag: usize| {
            if GUARDED {
                t.checked_sub(lag).filter(|&i| i < order.len())
            } else {
                Some(t - lag)
            }
        };
        let at = |i: usize| i & (RING - 1);
        if let Some(i) = due(0) {
            ring[at(i)] = self.stage_key(key_of(order[i].0));
        }
        if let Some(i) = due(LEAD - 3 * PREFETCH_STRIDE) {
            self.stage_slot(&mut ring[at(i)]);
        }
        if let Some(i) = due(LEAD - 2 * PREFETCH_STRIDE) {
            // The ring's slot before holds the probe before, at this step one step earlier
            // (for the first probe, no probe: a start no slot has).
            let previous_start = ring[at(i.wrapping_sub(1))].start;
            self.stage_contents(&mut ring[at(i)], previous_start);
        }
        if let Some(i) = due(LEAD - PREFETCH_STRIDE) {
            self.stage_long_slot_range(&ring[at(i)]);
        }
        if let Some(i) = due(LEAD) {
            self.probe_key_by_key(&ring[at(i)], order[i].1, state, visit);
        }
    }

    /// [`TableWalk::walk`] with the popcnt instruction enabled, so that the probes and scans
    /// inline into one loop instead of each checking for it.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn walk_with_popcnt(
        &self,
        order: &[(u64, usize)],
        examined: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        self.walk_with_hot_ranges(
            order,
            examined,
            visit,
            |fp| self.layout.apply(fp),
            Layout::apply,
        );
    }

    /// [`TableWalk::walk`] with the popcnt instruction enabled and the keys computed by
    /// `plan`'s bit gathers.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi2")]
    fn walk_with_gather(
        &self,
        plan: GatherPlan,
        order: &[(u64, usize)],
        examined: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        let sub_key = |layout: &Layout, key| match layout.gather {
            Some(plan) => plan.apply(key),
            None => layout.apply(key),
        };
        self.walk_with_hot_ranges(order, examined, visit, |fp| plan.apply(fp), sub_key);
    }

    /// The walk, then the probes into hot ranges it left aside, each range's probes walked
    /// through its tables together: `key_of` gives a fingerprint's key in this table,
    /// `sub_key(layout, key)` a key's in a table of a hot range's design.
    #[inline(always)]
    fn walk_with_hot_ranges(
        &self,
        order: &[(u64, usize)],
        examined: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
        key_of: impl Fn(u64) -> u64,
        sub_key: impl Fn(&Layout, u64) -> u64,
    ) {
        let mut state = WalkState::default();
        self.walk(order, &mut state, visit, key_of);
        *examined += state.compared;
        self.walk_hot_ranges(state.hot_probes, examined, visit, sub_key);
    }

    /// Probes the hot ranges for `probes`, a range at a time: for each table of the range's
    /// design, its probes sorted by their key there and walked through it like a table of the
    /// run, fetched ahead; a probe one after another ([`HotRange::probe`]) waits for a few
    /// cache misses in every table. A hit of a hot table gives the first of the equal keys in
    /// this table, each reported as the walk's own hits are.
    #[inline(always)]
    fn walk_hot_ranges(
        &self,
        mut probes: Vec<HotProbe<'a>>,
        examined: &mut u64,
        visit: &mut impl FnMut(usize, usize, u64, u32),
        sub_key: impl Fn(&Layout, u64) -> u64,
    ) {
        probes.sort_unstable_by_key(|probe| probe.range.range.start);
        for group in probes.chunk_by(|a, b| std::ptr::eq(a.range, b.range)) {
            let hot = group[0].range;
            let mut order: Vec<(u64, usize)> = Vec::with_capacity(group.len());
            for (layout, table, first) in hot.tables() {
                order.clear();
                // The order holds each probe's key in the hot table itself, computed once for
                // the sort and the walk.
                order.extend(
                    group
                        .iter()
                        .enumerate()
                        .map(|(i, probe)| (sub_key(layout, probe.key), i)),
                );
                order.sort_unstable_by_key(|&(key, _)| key);
                let mut state = WalkState::default();
                let hot_walk = TableWalk::new(layout, table, &[]);
                hot_walk.walk(
                    &order,
                    &mut state,
                    &mut |i, index, key, distance| {
                        let probe = &group[i];
                        for index in hot.equal_keys(self.keys, first[index], key) {
                            self.report(probe.query, index, key ^ probe.key, distance, visit);
                        }
                    },
                    |key| key,
                );
                debug_assert!(
                    state.hot_probes.is_empty(),
                    "the tables of a hot range have none"
                );
                *examined += state.compared;
            }
        }
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

    /// First step: the query's key kept, and its word of the table's bitmap of prefixes asked
    /// for (a table without a bitmap has nothing to fetch).
    #[inline(always)]
    fn stage_key(&self, key: u64) -> StagedProbe {
        if let Some(presence) = self.presence {
            presence.prefetch(key);
        }
        StagedProbe {
            key,
            ..StagedProbe::default()
        }
    }

    /// Second step, the bitmap's word in cache: whether the prefix is present, and the
    /// directory slot asked for (slot 0 if the prefix is absent).
    #[inline(always)]
    fn stage_slot(&self, staged: &mut StagedProbe) {
        staged.present = self.presence_mask(staged.key);
        staged.slot = self.slot(staged.key) & staged.present;
        prefetch(&self.offsets[staged.slot]);
    }

    /// Third step, the directory slot in cache: the keys to scan (none if the prefix is
    /// absent) and their lines asked for, every line of a slot the probe will scan whole; for
    /// a longer slot, the entry of its subdirectory, or where the slot is the prefix's keys,
    /// every line of it up to [`FETCHED_LONG_SLOT`] keys unless the probe before (whose slot
    /// begins at `previous_start`) has asked for them.
    #[inline(always)]
    fn stage_contents(&self, staged: &mut StagedProbe, previous_start: usize) {
        let start = self.offsets[staged.slot] as usize;
        let len = (self.offsets[staged.slot + 1] as usize - start) & staged.present;
        (staged.start, staged.len) = (start, len);
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
            if self.narrows {
                self.table.prefetch_slot_contents(staged.key);
            } else if start != previous_start && len <= FETCHED_LONG_SLOT {
                prefetch_every_line(&self.keys[start..start + len]);
            }
        } else if len > TWO_LINE_SLOT {
            prefetch_lines(&self.keys[start..start + len]);
        }
    }

    /// Fourth step, for a slot longer than [`SCANNED_SLOT`] only: its subdirectory entry in
    /// cache, the keys sharing the prefix asked for as far as the entry narrows them down.
    #[inline(always)]
    fn stage_long_slot_range(&self, staged: &StagedProbe) {
        if staged.len > SCANNED_SLOT && self.narrows {
            self.table
                .prefetch_subdirectory_range(staged.key, self.layout.prefix_bits);
        }
    }

    /// Probes for the staged key of query number `query`, calling `visit(query, index,
    /// fingerprint, distance)` for the hits this table reports: a short slot key by key, inline
    /// with the caller's instruction set.
    #[inline(always)]
    fn probe_key_by_key(
        &self,
        staged: &StagedProbe,
        query: usize,
        state: &mut WalkState<'a>,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        let StagedProbe {
            key, start, len, ..
        } = *staged;
        if len > SHORT_SLOT {
            return self.probe_long_slot(key, start, len, query, state, visit);
        }
        state.compared += len as u64;
        for (i, &stored) in self.keys[start..start + len].iter().enumerate() {
            let differ = stored ^ key;
            let distance = differ.count_ones();
            if distance <= self.layout.k && differ & self.prefix_mask == 0 {
                self.report(query, start + i, differ, distance, visit);
            }
        }
    }

    /// Probes a slot too long for the probes above: one up to [`SCANNED_SLOT`] long with the
    /// vector scan; in a longer one the prefix's keys by a descent, or if they are a hot range,
    /// the probe left for [`TableWalk::walk_hot_ranges`].
    fn probe_long_slot(
        &self,
        key: u64,
        start: usize,
        len: usize,
        query: usize,
        state: &mut WalkState<'a>,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        let (prefix_bits, k) = (self.layout.prefix_bits, self.layout.k);
        if len > SCANNED_SLOT {
            match self.table.locate_prefix(key, prefix_bits) {
                PrefixKeys::Hot(range) => state.hot_probes.push(HotProbe { range, key, query }),
                PrefixKeys::Range(range) => {
                    let compared = &mut state.compared;
                    let _ = within_distance(
                        self.keys,
                        range,
                        prefix_bits,
                        key,
                        k,
                        k,
                        compared,
                        &mut |index, distance| {
                            self.report(query, index, self.keys[index] ^ key, distance, visit);
                            ControlFlow::Continue(())
                        },
                    );
                }
            }
            return;
        }
        state.compared += len as u64;
        let _ = scan(
            &self.keys[start..start + len],
            start,
            key,
            k,
            &mut |index, distance| {
                let differ = self.keys[index] ^ key;
                if differ & self.prefix_mask == 0 {
                    self.report(query, index, differ, distance, visit);
                }
                ControlFlow::Continue(())
            },
        );
    }

    /// Visits the hit at `index` (whose key differs from the query's in `differ`) unless an
    /// earlier table reports it.
    #[inline(always)]
    fn report(
        &self,
        query: usize,
        index: usize,
        differ: u64,
        distance: u32,
        visit: &mut impl FnMut(usize, usize, u64, u32),
    ) {
        if !self.layout.earlier_table_agrees(differ) {
            visit(query, index, self.layout.invert(self.keys[index]), distance);
        }
    }
}

#[cfg(test)]
mod tests;
