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
    let flip = |rng: &mut ChaCha8Rng, fp: u64, bits: u32| {
        (0..bits).fold(fp, |f, _| f ^ 1 << rng.random_range(0..64))
    };
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
                let (base, bits) = (
                    stored[rng.random_range(0..stored.len())],
                    rng.random_range(0..=4),
                );
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
fn walk_hits(
    kernel: WalkKernel,
    run: &Run,
    layout: &Layout,
    j: usize,
    order: &[(u64, usize)],
) -> Vec<(usize, u64, u32)> {
    let mut hits = Vec::new();
    let mut examined = 0;
    walk_table(
        kernel,
        layout,
        &run.tables[j],
        &[],
        order,
        &mut examined,
        &mut |query, index, found, distance| {
            assert_eq!(
                layout.invert(run.tables[j].keys[index]),
                found,
                "the index is the hit's place in the table"
            );
            hits.push((query, found, distance));
        },
    );
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
