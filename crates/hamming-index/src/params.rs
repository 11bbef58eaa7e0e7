//! Permuted-table designs: which bits lead each table.

use crate::IndexError;

/// One level of a design: split the bits not yet used into `blocks` near-equal blocks and make
/// every choice of `chosen` of them the next leading bits. With `chosen <= blocks - k`, the at
/// most k differing bits miss the chosen blocks of at least one choice (pigeonhole).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Level {
    /// How many blocks the remaining bits are split into.
    pub blocks: u32,
    /// How many blocks of each table lead its permutation.
    pub chosen: u32,
}

/// A validated permuted-table design for 64-bit fingerprints and Hamming radius k (Manku, Jain,
/// Das Sarma, WWW 2007, §3.1).
///
/// The number of tables is the product of C(blocks, chosen) over the levels; a table's prefix
/// length p is the number of bits in its chosen blocks. With 2^d stored fingerprints a probe of
/// one table examines about 2^(d - p) candidates.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexParams {
    k: u32,
    levels: Vec<Level>,
}

/// The bit positions (0 = most significant) of one table's permutation, leading bits first.
pub(crate) struct TableOrder {
    pub(crate) order: Vec<u8>,
    pub(crate) prefix_bits: u32,
}

impl IndexParams {
    /// Designs with more tables than this are rejected (memory grows with every table).
    pub const MAX_TABLES: u64 = 1024;

    /// A design from the radius k and its levels, checked: every level needs at least one chosen
    /// block, `chosen + k <= blocks`, and at least one bit per block.
    pub fn new(k: u32, levels: &[Level]) -> Result<IndexParams, IndexError> {
        let invalid = |reason: String| Err(IndexError::InvalidParams { reason });
        if levels.is_empty() {
            return invalid("a design needs at least one level".into());
        }
        if k >= 64 {
            return invalid(format!("k = {k} must be below 64"));
        }
        let mut remaining = 64u32;
        let mut tables = 1u64;
        for (i, level) in levels.iter().enumerate() {
            let Level { blocks, chosen } = *level;
            if chosen == 0 {
                return invalid(format!("level {i}: at least one block must be chosen"));
            }
            if chosen.checked_add(k).is_none_or(|need| need > blocks) {
                return invalid(format!(
                    "level {i}: choosing {chosen} of {blocks} blocks leaves fewer than k = {k} \
                     blocks for the differing bits (need chosen + k <= blocks)"
                ));
            }
            if blocks > remaining {
                return invalid(format!(
                    "level {i}: {blocks} blocks cannot be cut from the {remaining} remaining bits"
                ));
            }
            tables = tables.saturating_mul(binomial(blocks, chosen));
            if tables > Self::MAX_TABLES {
                return invalid(format!("more than {} tables", Self::MAX_TABLES));
            }
            // The largest blocks come first, so the worst case leaves the fewest bits.
            let sizes = block_sizes(remaining, blocks);
            remaining -= sizes[..chosen as usize].iter().sum::<u32>();
        }
        Ok(IndexParams {
            k,
            levels: levels.to_vec(),
        })
    }

    /// A one-level design: `blocks` blocks, `chosen` leading.
    pub fn single_level(k: u32, blocks: u32, chosen: u32) -> Result<IndexParams, IndexError> {
        Self::new(k, &[Level { blocks, chosen }])
    }

    /// Manku et al.'s 20-table design for k = 3: 6 blocks (11,11,11,11,10,10), 3 leading,
    /// p = 31..33.
    pub fn manku_20_tables() -> IndexParams {
        Self::known(3, &[(6, 3)])
    }

    /// Manku et al.'s 16-table design for k = 3: 4 blocks of 16, one leading; the other 48 bits
    /// in 4 blocks of 12, one more leading; p = 28.
    pub fn manku_16_tables() -> IndexParams {
        Self::known(3, &[(4, 1), (4, 1)])
    }

    /// Manku et al.'s 10-table design for k = 3: 5 blocks (13,13,13,13,12), 2 leading, p = 25..26.
    pub fn manku_10_tables() -> IndexParams {
        Self::known(3, &[(5, 2)])
    }

    /// Manku et al.'s 4-table design for k = 3: 4 blocks of 16, one leading, p = 16.
    pub fn manku_4_tables() -> IndexParams {
        Self::known(3, &[(4, 1)])
    }

    /// The "4 x 16-bit keys" pigeonhole layout of the simhash blog (ALGORITHMS.md §4): each
    /// fingerprint is stored under each of its four 16-bit blocks, a query looks up its four
    /// keys. It is the 4-table design: a sorted table whose directory is keyed by the leading 16
    /// bits is that key-value store.
    pub fn pigeonhole_4x16() -> IndexParams {
        Self::manku_4_tables()
    }

    /// The paper's four designs for k = 3, by name, most tables first.
    pub fn manku_designs() -> [(&'static str, IndexParams); 4] {
        [
            ("20-tables", Self::manku_20_tables()),
            ("16-tables", Self::manku_16_tables()),
            ("10-tables", Self::manku_10_tables()),
            ("4-tables", Self::manku_4_tables()),
        ]
    }

    fn known(k: u32, levels: &[(u32, u32)]) -> IndexParams {
        let levels: Vec<Level> = levels
            .iter()
            .map(|&(blocks, chosen)| Level { blocks, chosen })
            .collect();
        match Self::new(k, &levels) {
            Ok(params) => params,
            Err(e) => unreachable!("built-in design is valid: {e}"),
        }
    }

    /// Chooses a design for about `expected_len` fingerprints within `memory_budget` bytes, as in
    /// the paper's "optimal number of tables" (§3.1.2): more tables mean longer prefixes and fewer
    /// candidates per query but more memory. Among the one- and two-level designs whose raw
    /// memory (8 bytes per fingerprint per table, plus payloads and directories) fits the budget,
    /// it picks the one with the lowest estimated query cost: a fixed cost per table probe plus
    /// the expected candidates, sum over tables of n / 2^p.
    pub fn auto(expected_len: u64, k: u32, memory_budget: u64) -> Result<IndexParams, IndexError> {
        let n = expected_len.max(1) as f64;
        let mut best: Option<(f64, IndexParams)> = None;
        let mut consider = |levels: &[Level]| {
            let Ok(params) = IndexParams::new(k, levels) else {
                return;
            };
            let tables = params.table_count() as u64;
            if params.estimated_bytes(expected_len) > memory_budget {
                return;
            }
            let candidates: f64 = params
                .prefix_lengths()
                .iter()
                .map(|&p| n / 2f64.powi(p as i32))
                .sum();
            let cost = tables as f64 * PROBE_COST + candidates;
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((cost, params));
            }
        };
        for b1 in k + 1..=k + 10 {
            for c1 in 1..=b1 - k {
                consider(&[Level {
                    blocks: b1,
                    chosen: c1,
                }]);
                for b2 in k + 1..=k + 6 {
                    for c2 in 1..=b2 - k {
                        consider(&[
                            Level {
                                blocks: b1,
                                chosen: c1,
                            },
                            Level {
                                blocks: b2,
                                chosen: c2,
                            },
                        ]);
                    }
                }
            }
        }
        best.map(|(_, p)| p).ok_or(IndexError::NoDesignFits {
            expected_len,
            budget: memory_budget,
        })
    }

    /// Estimated memory of an index of `len` fingerprints with this design: 8 bytes per
    /// fingerprint per table, 8 bytes of payload, the directories (about 2 bytes per
    /// fingerprint per table) and the bitmaps of prefixes (at most half a byte).
    pub fn estimated_bytes(&self, len: u64) -> u64 {
        let tables = self.table_count() as u64;
        len.saturating_mul(16 + tables * 21) / 2
    }

    /// The Hamming radius k.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The levels of the design.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// The number of tables.
    pub fn table_count(&self) -> usize {
        self.levels
            .iter()
            .map(|l| binomial(l.blocks, l.chosen) as usize)
            .product()
    }

    /// The prefix length p of every table, in table order.
    pub fn prefix_lengths(&self) -> Vec<u32> {
        self.table_orders().iter().map(|t| t.prefix_bits).collect()
    }

    /// The bit order of every table: all choices at every level, leading blocks first, then the
    /// remaining bits in their original order.
    pub(crate) fn table_orders(&self) -> Vec<TableOrder> {
        table_orders(&self.levels, (0..64).collect(), &[])
    }
}

/// The tables of a design over the bit positions `free` only: every choice at every level,
/// leading blocks first, then the rest of `free` in order, then `last`. A whole design has all
/// 64 positions free; a hot range's design ([`crate::table::HotRange`]) leaves its shared prefix last.
pub(crate) fn table_orders(levels: &[Level], free: Vec<u8>, last: &[u8]) -> Vec<TableOrder> {
    let mut out = Vec::new();
    expand(levels, Vec::new(), free, last, &mut out);
    out
}

fn expand(
    levels: &[Level],
    prefix: Vec<u8>,
    rest: Vec<u8>,
    last: &[u8],
    out: &mut Vec<TableOrder>,
) {
    let Some((&Level { blocks, chosen }, deeper)) = levels.split_first() else {
        let prefix_bits = prefix.len() as u32;
        let mut order = prefix;
        order.extend(rest);
        order.extend_from_slice(last);
        out.push(TableOrder { order, prefix_bits });
        return;
    };
    let mut cuts = Vec::with_capacity(blocks as usize);
    let mut start = 0usize;
    for size in block_sizes(rest.len() as u32, blocks) {
        cuts.push(&rest[start..start + size as usize]);
        start += size as usize;
    }
    for choice in combinations(blocks as usize, chosen as usize) {
        let mut next_prefix = prefix.clone();
        let mut next_rest = Vec::with_capacity(rest.len());
        for (i, block) in cuts.iter().enumerate() {
            if choice.contains(&i) {
                next_prefix.extend_from_slice(block);
            } else {
                next_rest.extend_from_slice(block);
            }
        }
        expand(deeper, next_prefix, next_rest, last, out);
    }
}

/// Probe cost in units of one candidate check: a probe touches the directory and the first
/// cache line of its range (two likely cache misses), a candidate is a popcount on data already
/// streaming in.
pub(crate) const PROBE_COST: f64 = 4.0;

/// Near-equal block sizes, the larger blocks first: 64 bits in 6 blocks are 11,11,11,11,10,10.
fn block_sizes(bits: u32, blocks: u32) -> Vec<u32> {
    (0..blocks)
        .map(|i| bits / blocks + u32::from(i < bits % blocks))
        .collect()
}

pub(crate) fn binomial(n: u32, k: u32) -> u64 {
    let k = k.min(n - k) as u64;
    (0..k).fold(1u64, |acc, i| acc.saturating_mul(n as u64 - i) / (i + 1))
}

/// All k-subsets of 0..n in lexicographic order.
fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(k);
    fn go(start: usize, n: usize, k: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if current.len() == k {
            out.push(current.clone());
            return;
        }
        for i in start..n {
            current.push(i);
            go(i + 1, n, k, current, out);
            current.pop();
        }
    }
    go(0, n, k, &mut current, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manku_designs_have_the_papers_shapes() {
        let shapes = |p: IndexParams| {
            let mut lengths = p.prefix_lengths();
            lengths.sort_unstable();
            lengths.dedup();
            (p.table_count(), lengths)
        };
        assert_eq!(
            shapes(IndexParams::manku_20_tables()),
            (20, vec![31, 32, 33])
        );
        assert_eq!(shapes(IndexParams::manku_16_tables()), (16, vec![28]));
        assert_eq!(shapes(IndexParams::manku_10_tables()), (10, vec![25, 26]));
        assert_eq!(shapes(IndexParams::manku_4_tables()), (4, vec![16]));
        assert_eq!(
            IndexParams::pigeonhole_4x16(),
            IndexParams::manku_4_tables()
        );
    }

    #[test]
    fn every_table_order_is_a_permutation() {
        for (_, params) in IndexParams::manku_designs() {
            for table in params.table_orders() {
                let mut sorted = table.order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..64).collect::<Vec<u8>>());
            }
        }
    }

    /// The pigeonhole guarantee, exhaustively for k <= 2 and for every 3-subset with k = 3: for
    /// any set of k differing positions, some table's prefix avoids all of them.
    #[test]
    fn some_table_avoids_every_k_subset() {
        let check = |params: &IndexParams| {
            let prefixes: Vec<u64> = params
                .table_orders()
                .iter()
                .map(|t| {
                    t.order[..t.prefix_bits as usize]
                        .iter()
                        .fold(0u64, |m, &b| m | 1 << b)
                })
                .collect();
            let k = params.k() as usize;
            for subset in combinations(64, k) {
                let diff = subset.iter().fold(0u64, |m, &b| m | 1 << b);
                assert!(
                    prefixes.iter().any(|p| p & diff == 0),
                    "{params:?} misses {subset:?}"
                );
            }
        };
        for (_, params) in IndexParams::manku_designs() {
            check(&params);
        }
        check(&IndexParams::single_level(1, 3, 2).unwrap());
        check(&IndexParams::single_level(2, 4, 2).unwrap());
        check(
            &IndexParams::new(
                2,
                &[
                    Level {
                        blocks: 3,
                        chosen: 1,
                    },
                    Level {
                        blocks: 4,
                        chosen: 2,
                    },
                ],
            )
            .unwrap(),
        );
    }

    #[test]
    fn invalid_designs_are_rejected() {
        let bad = [
            (3, vec![]),
            (
                3,
                vec![Level {
                    blocks: 4,
                    chosen: 2,
                }],
            ),
            (
                3,
                vec![Level {
                    blocks: 4,
                    chosen: 0,
                }],
            ),
            (
                64,
                vec![Level {
                    blocks: 65,
                    chosen: 1,
                }],
            ),
            (
                0,
                vec![Level {
                    blocks: 65,
                    chosen: 1,
                }],
            ),
            (
                3,
                vec![Level {
                    blocks: 20,
                    chosen: 10,
                }],
            ),
            (
                3,
                vec![
                    Level {
                        blocks: 40,
                        chosen: 37,
                    },
                    Level {
                        blocks: 4,
                        chosen: 1,
                    },
                ],
            ),
        ];
        for (k, levels) in bad {
            let err = IndexParams::new(k, &levels).unwrap_err();
            assert!(
                matches!(err, IndexError::InvalidParams { .. }),
                "{k} {levels:?}: {err}"
            );
        }
        assert!(IndexParams::single_level(0, 1, 1).is_ok());
    }

    #[test]
    fn auto_trades_memory_for_speed() {
        let n = 1u64 << 26;
        let roomy = IndexParams::auto(n, 3, 64 << 30).unwrap();
        let tight = IndexParams::auto(n, 3, 4 << 30).unwrap();
        assert!(roomy.table_count() > tight.table_count());
        assert!(roomy.estimated_bytes(n) <= 64 << 30);
        assert!(tight.estimated_bytes(n) <= 4 << 30);
        assert!(matches!(
            IndexParams::auto(n, 3, 1 << 20),
            Err(IndexError::NoDesignFits { .. })
        ));
        // Small sets need few tables whatever the budget.
        assert!(IndexParams::auto(1000, 3, 64 << 30).unwrap().table_count() <= 10);
    }
}
