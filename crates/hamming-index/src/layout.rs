//! A table's bit permutation compiled into shift-and-mask moves.

use crate::params::TableOrder;

/// A run of consecutive bits moved as one piece: `len` bits ending `src` bits above bit 0 in the
/// fingerprint go to `dst` bits above bit 0 in the key.
#[derive(Clone, Copy, Debug)]
struct Move {
    src: u32,
    dst: u32,
    mask: u64,
}

/// A permutation as at most [`GATHERED_RUNS`] runs of the key, each holding some of the
/// fingerprint's bits in their own order: one bit-gather instruction (pext) per run computes
/// the key, where the moves take one shift, mask and shift per piece (4 to 6 in the 16- and
/// 20-table designs, whose keys are 3 runs at most).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GatherPlan {
    /// The fingerprint bits of each run; a run not used has mask 0 and gathers nothing.
    masks: [u64; GATHERED_RUNS],
    /// How far up the key each run's gathered bits go.
    shifts: [u32; GATHERED_RUNS],
}

/// The most runs a [`GatherPlan`] has; a permutation that needs more has no plan.
pub(crate) const GATHERED_RUNS: usize = 3;

impl GatherPlan {
    /// The plan of the permutation whose key position j (0 = most significant) holds
    /// fingerprint bit `63 - order[j]`, if it needs at most [`GATHERED_RUNS`] runs.
    fn new(order: &[u8]) -> Option<GatherPlan> {
        let mut plan = GatherPlan {
            masks: [0; GATHERED_RUNS],
            shifts: [0; GATHERED_RUNS],
        };
        let mut run = 0;
        for (j, &bit) in order.iter().enumerate() {
            if j > 0 && bit < order[j - 1] {
                run += 1;
            }
            *plan.masks.get_mut(run)? |= 1 << (63 - bit);
            // The run's last position so far is its lowest key bit.
            plan.shifts[run] = 63 - j as u32;
        }
        Some(plan)
    }

    /// π(fingerprint) with one bit gather per run.
    ///
    /// # Safety
    /// The processor has the BMI2 instructions.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi2")]
    #[inline]
    pub(crate) fn apply(&self, fp: u64) -> u64 {
        use std::arch::x86_64::_pext_u64;
        let mut key = 0;
        for run in 0..GATHERED_RUNS {
            key |= _pext_u64(fp, self.masks[run]) << self.shifts[run];
        }
        key
    }
}

/// One table's permutation π_i, prefix length p_i, and the radius k its probes search.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    moves: Vec<Move>,
    /// The same permutation for the bit-gather instruction, if it has few enough runs.
    pub(crate) gather: Option<GatherPlan>,
    /// p_i: the leading bits of the permuted key that a probe must match exactly.
    pub(crate) prefix_bits: u32,
    /// The prefix bits in the fingerprint's own bit positions: the table finds a stored x for a
    /// query q exactly when `(q ^ x) & prefix_mask == 0` (and the distance is within k).
    pub(crate) prefix_mask: u64,
    /// The Hamming radius k of the design.
    pub(crate) k: u32,
    /// The prefix masks of the design's earlier tables, in this table's key order: a stored key
    /// that agrees with the query key on one of them was reported by that earlier table.
    earlier_prefixes: Vec<u64>,
}

impl Layout {
    pub(crate) fn new(table: &TableOrder, k: u32) -> Layout {
        // Position j of the order (0 = most significant) holds fingerprint bit 63 - order[j].
        let mut moves: Vec<Move> = Vec::new();
        let mut j = 0;
        while j < table.order.len() {
            let start = j;
            while j + 1 < table.order.len() && table.order[j + 1] == table.order[j] + 1 {
                j += 1;
            }
            let len = (j - start + 1) as u32;
            let src_top = u32::from(table.order[start]);
            moves.push(Move {
                src: 64 - src_top - len,
                dst: 64 - start as u32 - len,
                mask: if len == 64 {
                    u64::MAX
                } else {
                    (1u64 << len) - 1
                },
            });
            j += 1;
        }
        let prefix_mask = table.order[..table.prefix_bits as usize]
            .iter()
            .fold(0u64, |m, &b| m | 1 << (63 - b));
        let gather = GatherPlan::new(&table.order);
        Layout {
            moves,
            gather,
            prefix_bits: table.prefix_bits,
            prefix_mask,
            k,
            earlier_prefixes: Vec::new(),
        }
    }

    /// True when keys of this table that differ in the bits of `differ` (a XOR of two keys)
    /// agree on an earlier table's prefix: that table reports the pair, this one skips it.
    #[inline(always)]
    pub(crate) fn earlier_table_agrees(&self, differ: u64) -> bool {
        self.earlier_prefixes.iter().any(|&mask| differ & mask == 0)
    }

    /// π(fingerprint): the key stored in this table.
    #[inline]
    pub(crate) fn apply(&self, fp: u64) -> u64 {
        self.moves
            .iter()
            .fold(0, |key, m| key | ((fp >> m.src) & m.mask) << m.dst)
    }

    /// The key's leading bits as one run of the fingerprint's bits: `(shift, len)`, the key's top
    /// `len` bits are the fingerprint's bits `shift..shift + len`, in order. Tables whose runs
    /// start at the same bit order their keys alike on their top bits.
    pub(crate) fn leading_run(&self) -> (u32, u32) {
        self.moves
            .first()
            .map_or((0, 0), |m| (m.src, m.mask.count_ones()))
    }

    /// The function giving the top `bits` bits of π(fingerprint), right-aligned: two
    /// instructions on the fingerprint itself when they lie in the leading run, set up once
    /// for a pass over many fingerprints.
    #[inline]
    pub(crate) fn key_top_bits(&self, bits: u32) -> impl Fn(u64) -> u64 + '_ {
        let (shift, len) = self.leading_run();
        let in_run = (1..=len).contains(&bits);
        let (run_shift, mask) = if in_run {
            (shift + len - bits, u64::MAX >> (64 - bits))
        } else {
            (0, 0)
        };
        move |fp| {
            if in_run {
                (fp >> run_shift) & mask
            } else {
                self.apply(fp).checked_shr(64 - bits).unwrap_or(0)
            }
        }
    }

    /// π⁻¹(key): the fingerprint a stored key came from.
    #[inline]
    pub(crate) fn invert(&self, key: u64) -> u64 {
        self.moves
            .iter()
            .fold(0, |fp, m| fp | ((key >> m.dst) & m.mask) << m.src)
    }

    /// The prefix of a key, right-aligned.
    #[cfg(test)]
    pub(crate) fn prefix_of(&self, key: u64) -> u64 {
        key >> (64 - self.prefix_bits)
    }
}

/// All tables' layouts for a design.
pub(crate) fn layouts(params: &crate::IndexParams) -> Vec<Layout> {
    design_layouts(&params.table_orders(), params.k())
}

/// The layouts of the tables `orders`, each knowing the earlier tables' prefixes.
pub(crate) fn design_layouts(orders: &[TableOrder], k: u32) -> Vec<Layout> {
    let mut layouts: Vec<Layout> = orders.iter().map(|order| Layout::new(order, k)).collect();
    for j in 0..layouts.len() {
        let earlier = layouts[..j]
            .iter()
            .map(|l| layouts[j].apply(l.prefix_mask))
            .collect();
        layouts[j].earlier_prefixes = earlier;
    }
    layouts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexParams;
    use crate::params::{Level, table_orders};
    use proptest::prelude::*;

    /// Four blocks in reverse order are four runs: no plan. Three are a plan.
    #[test]
    fn a_permutation_of_more_runs_than_a_plan_holds_has_none() {
        let blocks =
            |order: &[u8]| -> Vec<u8> { order.iter().flat_map(|&b| b * 16..b * 16 + 16).collect() };
        let four = TableOrder {
            order: blocks(&[3, 2, 1, 0]),
            prefix_bits: 16,
        };
        assert_eq!(GatherPlan::new(&four.order), None);
        // Runs 1 | 0, 3 | 2: block 0 is the fingerprint's top 16 bits.
        let block = |b: u32| 0xffffu64 << (48 - 16 * b);
        let three = GatherPlan::new(&blocks(&[1, 0, 3, 2]));
        let expected = GatherPlan {
            masks: [block(1), block(0) | block(3), block(2)],
            shifts: [48, 16, 0],
        };
        assert_eq!(three, Some(expected));
    }

    proptest! {
        #[test]
        fn apply_and_invert_are_inverse_bit_permutations(fp in any::<u64>(), other in any::<u64>()) {
            for (_, params) in IndexParams::manku_designs() {
                for layout in layouts(&params) {
                    let key = layout.apply(fp);
                    prop_assert_eq!(layout.invert(key), fp);
                    prop_assert_eq!(key.count_ones(), fp.count_ones());
                    // Distances survive the permutation, so candidates are checked on keys.
                    prop_assert_eq!((key ^ layout.apply(other)).count_ones(), (fp ^ other).count_ones());
                    // The key's prefix is made of exactly the prefix-mask bits.
                    let same_prefix = layout.prefix_of(key) == layout.prefix_of(layout.apply(other));
                    prop_assert_eq!(same_prefix, (fp ^ other) & layout.prefix_mask == 0);
                }
                // The top bits of a key come from its leading run, as the full permutation says.
                for layout in layouts(&params) {
                    for bits in [0, 1, 7, 13, 14, 16, 30, 64] {
                        prop_assert_eq!(layout.key_top_bits(bits)(fp), layout.apply(fp).checked_shr(64 - bits).unwrap_or(0));
                    }
                }
                // Where the processor has the bit gather, a plan's keys are the moves' keys.
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("bmi2") {
                    for layout in layouts(&params) {
                        let plan = layout.gather.expect("Manku's designs have keys of at most three runs");
                        // SAFETY: the processor has BMI2, checked just above.
                        prop_assert_eq!(unsafe { plan.apply(fp) }, layout.apply(fp));
                    }
                }
                // The check in key order agrees with the check on fingerprints.
                let layouts = layouts(&params);
                for (j, layout) in layouts.iter().enumerate() {
                    let by_fingerprint = layouts[..j].iter().any(|l| (fp ^ other) & l.prefix_mask == 0);
                    let differ = layout.apply(fp) ^ layout.apply(other);
                    prop_assert_eq!(layout.earlier_table_agrees(differ), by_fingerprint);
                }
            }
        }
    }

    proptest! {
        /// A permutation of any few runs, several levels deep, gathers the moves' keys; one of
        /// more runs than a plan holds has none.
        #[test]
        fn a_gather_plan_computes_the_moves_keys(
            fp in any::<u64>(),
            levels in prop::collection::vec((2u32..=6, 1u32..=2), 1..=3),
        ) {
            let levels: Vec<Level> =
                levels.into_iter().map(|(blocks, chosen)| Level { blocks, chosen: chosen.min(blocks - 1) }).collect();
            for order in table_orders(&levels, (0..64).collect(), &[]) {
                let layout = Layout::new(&order, 1);
                let runs = 1 + order.order.windows(2).filter(|w| w[1] < w[0]).count();
                prop_assert_eq!(layout.gather.is_some(), runs <= GATHERED_RUNS);
                #[cfg(target_arch = "x86_64")]
                if let Some(plan) = layout.gather && std::arch::is_x86_feature_detected!("bmi2") {
                    // SAFETY: the processor has BMI2, checked just above.
                    prop_assert_eq!(unsafe { plan.apply(fp) }, layout.apply(fp));
                }
            }
        }
    }
}
