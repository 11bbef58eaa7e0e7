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

/// One table's permutation π_i, prefix length p_i, and the radius k its probes search.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    moves: Vec<Move>,
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
                mask: if len == 64 { u64::MAX } else { (1u64 << len) - 1 },
            });
            j += 1;
        }
        let prefix_mask = table.order[..table.prefix_bits as usize]
            .iter()
            .fold(0u64, |m, &b| m | 1 << (63 - b));
        Layout { moves, prefix_bits: table.prefix_bits, prefix_mask, k, earlier_prefixes: Vec::new() }
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
        self.moves.iter().fold(0, |key, m| key | ((fp >> m.src) & m.mask) << m.dst)
    }

    /// The key's leading bits as one run of the fingerprint's bits: `(shift, len)`, the key's top
    /// `len` bits are the fingerprint's bits `shift..shift + len`, in order. Tables whose runs
    /// start at the same bit order their keys alike on their top bits.
    pub(crate) fn leading_run(&self) -> (u32, u32) {
        self.moves.first().map_or((0, 0), |m| (m.src, m.mask.count_ones()))
    }

    /// The function giving the top `bits` bits of π(fingerprint), right-aligned: two
    /// instructions on the fingerprint itself when they lie in the leading run, set up once
    /// for a pass over many fingerprints.
    #[inline]
    pub(crate) fn key_top_bits(&self, bits: u32) -> impl Fn(u64) -> u64 + '_ {
        let (shift, len) = self.leading_run();
        let in_run = (1..=len).contains(&bits);
        let (run_shift, mask) = if in_run { (shift + len - bits, u64::MAX >> (64 - bits)) } else { (0, 0) };
        move |fp| if in_run { (fp >> run_shift) & mask } else { self.apply(fp).checked_shr(64 - bits).unwrap_or(0) }
    }

    /// π⁻¹(key): the fingerprint a stored key came from.
    #[inline]
    pub(crate) fn invert(&self, key: u64) -> u64 {
        self.moves.iter().fold(0, |fp, m| fp | ((key >> m.dst) & m.mask) << m.src)
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
        let earlier = layouts[..j].iter().map(|l| layouts[j].apply(l.prefix_mask)).collect();
        layouts[j].earlier_prefixes = earlier;
    }
    layouts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexParams;
    use proptest::prelude::*;

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
}
