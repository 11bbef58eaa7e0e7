//! Every fast structure against the brute-force reference, on random and on clustered sets
//! (planted neighbours at every distance 0..=k+1), for every design and every k tested.

#![allow(clippy::unwrap_used)] // test helpers: a panic is a failure with a backtrace

use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::{
    BatchMatch, BatchQuery, BruteForceIndex, CompressedTables, HammingIndex, IndexParams, Level,
    Match, near_pairs, near_pairs_brute_force,
};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Designs covering k = 0..=5, one- and two-level, including the paper's four for k = 3.
fn designs() -> Vec<IndexParams> {
    let l = |blocks, chosen| Level { blocks, chosen };
    let mut out: Vec<IndexParams> = IndexParams::manku_designs()
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    for (k, levels) in [
        (0, vec![l(1, 1)]),
        (0, vec![l(4, 3)]),
        (1, vec![l(2, 1)]),
        (1, vec![l(4, 3)]),
        (2, vec![l(3, 1)]),
        (2, vec![l(4, 2)]),
        (2, vec![l(3, 1), l(3, 1)]),
        (4, vec![l(5, 1)]),
        (4, vec![l(6, 2), l(5, 1)]),
        (5, vec![l(7, 2)]),
    ] {
        out.push(IndexParams::new(k, &levels).unwrap());
    }
    out
}

fn flip_bits(rng: &mut ChaCha8Rng, fp: u64, count: u32) -> u64 {
    let mut out = fp;
    while (out ^ fp).count_ones() < count {
        out ^= 1 << rng.random_range(0..64);
    }
    out
}

/// Clustered set: a few centres, each with neighbours planted at every distance 0..=k+1 and
/// exact repeats, plus uniform noise; queries are centres, neighbours and fresh points.
fn clustered(seed: u64, k: u32, centres: usize) -> (Vec<u64>, Vec<u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut stored = Vec::new();
    let mut queries = Vec::new();
    for _ in 0..centres {
        // Some centres share a long prefix: a dense region like pages of one forum engine.
        let centre: u64 = if rng.random_bool(0.3) {
            rng.random::<u64>() & 0xFFFF
        } else {
            rng.random()
        };
        for d in 0..=k + 1 {
            for _ in 0..3 {
                stored.push(flip_bits(&mut rng, centre, d));
            }
        }
        stored.push(centre);
        queries.push(centre);
        let d = rng.random_range(0..=k + 2);
        queries.push(flip_bits(&mut rng, centre, d));
    }
    for _ in 0..centres * 4 {
        stored.push(rng.random());
        queries.push(rng.random());
    }
    (stored, queries)
}

fn sorted(mut v: Vec<Match>) -> Vec<Match> {
    v.sort_unstable();
    v
}

fn check_against_brute(
    params: &IndexParams,
    stored: &[u64],
    queries: &[u64],
) -> Result<(), TestCaseError> {
    let mut brute = BruteForceIndex::new(params.k());
    for (i, &fp) in stored.iter().enumerate() {
        brute.insert(Fingerprint::new(fp), i as u64);
    }
    let bulk = HammingIndex::from_entries(
        params.clone(),
        stored
            .iter()
            .enumerate()
            .map(|(i, &f)| (Fingerprint::new(f), i as u64)),
    );
    let compressed = CompressedTables::new(&bulk);
    for &q in queries.iter().chain(stored.iter().take(50)) {
        let q = Fingerprint::new(q);
        let expected = brute.query(q);
        prop_assert_eq!(
            sorted(bulk.query(q)),
            expected.clone(),
            "{:?} query {}",
            params,
            q
        );
        prop_assert_eq!(
            sorted(compressed.query(q)),
            expected.clone(),
            "compressed {:?}",
            params
        );
        for first in [bulk.first_match(q), compressed.first_match(q)] {
            match first {
                Some(m) => prop_assert!(
                    expected.contains(&m),
                    "first match {:?} not in {:?}",
                    m,
                    expected
                ),
                None => prop_assert!(expected.is_empty()),
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_design_matches_brute_force_on_clustered_sets(seed in any::<u64>()) {
        for params in designs() {
            let (stored, queries) = clustered(seed, params.k(), 30);
            check_against_brute(&params, &stored, &queries)?;
        }
    }

    #[test]
    fn every_design_matches_brute_force_on_random_sets(
        stored in prop::collection::vec(any::<u64>(), 0..400),
        queries in prop::collection::vec(any::<u64>(), 1..40),
    ) {
        for params in designs() {
            // Random points are rarely within k: add queries near stored points.
            let mut queries = queries.clone();
            queries.extend(stored.iter().take(20).map(|s| s ^ 0b101));
            check_against_brute(&params, &stored, &queries)?;
        }
    }

    /// The crawler's pattern: query, then insert, thousands of times (so inserts go through the
    /// buffer and several levels of merged runs).
    #[test]
    fn interleaved_inserts_and_queries_match_brute_force(seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for params in [IndexParams::manku_10_tables(), IndexParams::manku_16_tables(), IndexParams::single_level(1, 3, 2).unwrap()] {
            let (stored, _) = clustered(seed, params.k(), 80);
            let mut index = HammingIndex::new(params.clone());
            let mut brute = BruteForceIndex::new(params.k());
            for (i, &fp) in stored.iter().enumerate() {
                let fp = Fingerprint::new(fp);
                if rng.random_bool(0.2) {
                    prop_assert_eq!(sorted(index.query(fp)), brute.query(fp));
                    prop_assert_eq!(index.first_match(fp).is_some(), !brute.query(fp).is_empty());
                }
                index.insert(fp, i as u64);
                brute.insert(fp, i as u64);
            }
            prop_assert_eq!(index.len(), stored.len());
            for &fp in stored.iter().step_by(7) {
                prop_assert_eq!(sorted(index.query(Fingerprint::new(fp))), brute.query(Fingerprint::new(fp)));
            }
            index.compact();
            for &fp in stored.iter().step_by(11) {
                prop_assert_eq!(sorted(index.query(Fingerprint::new(fp))), brute.query(Fingerprint::new(fp)));
            }
        }
    }

    #[test]
    fn near_pairs_and_batch_match_brute_force(seed in any::<u64>()) {
        for params in [IndexParams::manku_20_tables(), IndexParams::manku_4_tables(), IndexParams::single_level(2, 4, 2).unwrap()] {
            let (set, queries) = clustered(seed, params.k(), 20);
            let fps: Vec<Fingerprint> = set.iter().map(|&f| Fingerprint::new(f)).collect();
            prop_assert_eq!(near_pairs(params.clone(), &fps), near_pairs_brute_force(&fps, params.k()));

            let qs: Vec<Fingerprint> = queries.iter().map(|&f| Fingerprint::new(f)).collect();
            let batch = BatchQuery::new(params.clone(), &qs);
            let stream: Vec<(Fingerprint, u64)> = fps.iter().enumerate().map(|(i, &f)| (f, i as u64)).collect();
            let mut got = Vec::new();
            for chunk in stream.chunks(37) {
                batch.scan(chunk, &mut got);
            }
            got.sort_unstable();
            let mut brute = BruteForceIndex::new(params.k());
            for &(f, p) in &stream {
                brute.insert(f, p);
            }
            let mut expected: Vec<BatchMatch> = qs.iter().enumerate()
                .flat_map(|(qi, &q)| brute.query(q).into_iter().map(move |found| BatchMatch { query: qi, found }))
                .collect();
            expected.sort_unstable();
            prop_assert_eq!(got, expected);
        }
    }
}

/// The paper's hot spot: many empty pages hash to 0. A query near (but not within k of) the
/// dense value must not scan them, and a query within k must still find them all.
#[test]
fn dense_prefix_does_not_degrade_to_a_scan() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut entries: Vec<(Fingerprint, u64)> =
        (0..50_000).map(|i| (Fingerprint::new(0), i)).collect();
    // A dense neighbourhood of distinct values sharing 40 leading zero bits.
    entries.extend((0..50_000).map(|i| {
        (
            Fingerprint::new(rng.random::<u64>() & 0xFF_FFFF),
            100_000 + i,
        )
    }));
    entries.extend((0..50_000).map(|i| (Fingerprint::new(rng.random()), 200_000 + i)));
    for params in [
        IndexParams::manku_4_tables(),
        IndexParams::manku_16_tables(),
    ] {
        let index = HammingIndex::from_entries(params, entries.iter().copied());
        let far = Fingerprint::new(0b1111 << 60); // distance 4 from 0, outside the dense block
        let stats = index.query_stats(far);
        assert!(stats.candidates < 20_000, "{stats:?}");
        assert!(index.first_match(Fingerprint::new(0b111)).is_some());
        let exact_zero = index
            .query(Fingerprint::new(0b1))
            .iter()
            .filter(|m| m.fingerprint.bits() == 0)
            .count();
        assert_eq!(exact_zero, 50_000);
    }
}

/// A crowd under one prefix, as in the clustered set of the index_scale bench at a smaller
/// scale: 12,000 distinct fingerprints sharing their top 24 bits, some with near copies, among
/// 18,000 uniform ones. The crowded ranges get designs of their own (and long directory slots
/// subdirectories); bulk-built, inserted one by one, batch-queried and reloaded, the index still
/// answers exactly as brute force does.
#[test]
fn crowded_prefixes_match_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut stored: Vec<u64> = Vec::new();
    for i in 0..30_000 {
        let fp = if i % 5 < 2 {
            rng.random::<u64>() >> 24
        } else {
            rng.random()
        };
        stored.push(fp);
        if i % 10 == 0 {
            let d = rng.random_range(0..=5);
            stored.push(flip_bits(&mut rng, fp, d));
        }
    }
    let queries: Vec<u64> = (0..300)
        .map(|i| match i % 3 {
            0 => rng.random(),
            _ => {
                let (d, base) = (
                    rng.random_range(0..=4),
                    stored[rng.random_range(0..stored.len())],
                );
                flip_bits(&mut rng, base, d)
            }
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("nearcrawl-crowded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("index.nchi");
    for params in [
        IndexParams::manku_10_tables(),
        IndexParams::manku_4_tables(),
        IndexParams::single_level(1, 3, 2).unwrap(),
        IndexParams::new(
            4,
            &[Level {
                blocks: 6,
                chosen: 2,
            }],
        )
        .unwrap(),
    ] {
        let mut brute = BruteForceIndex::new(params.k());
        let mut online = HammingIndex::new(params.clone());
        for (i, &fp) in stored.iter().enumerate() {
            brute.insert(Fingerprint::new(fp), i as u64);
            online.insert(Fingerprint::new(fp), i as u64);
        }
        let bulk = HammingIndex::from_entries(params.clone(), brute_entries(&stored));
        bulk.save(&file).unwrap();
        let loaded = HammingIndex::load(&file).unwrap();
        let qs: Vec<Fingerprint> = queries.iter().map(|&q| Fingerprint::new(q)).collect();
        let mut expected_batch = Vec::new();
        for (qi, &q) in qs.iter().enumerate() {
            let expected = brute.query(q);
            for index in [&bulk, &online, &loaded] {
                assert_eq!(sorted(index.query(q)), expected, "{params:?} query {q}");
                assert_eq!(
                    index.first_match(q).is_some(),
                    !expected.is_empty(),
                    "{params:?} query {q}"
                );
            }
            expected_batch.extend(
                expected
                    .into_iter()
                    .map(|found| BatchMatch { query: qi, found }),
            );
        }
        let mut batch = bulk.query_batch(&qs);
        batch.sort_unstable();
        expected_batch.sort_unstable();
        assert_eq!(batch, expected_batch, "{params:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn brute_entries(stored: &[u64]) -> impl Iterator<Item = (Fingerprint, u64)> + '_ {
    stored
        .iter()
        .enumerate()
        .map(|(i, &f)| (Fingerprint::new(f), i as u64))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Batch queries against an index (not compacted: buffer plus runs) give exactly the
    /// brute-force pairs.
    #[test]
    fn query_batch_matches_brute_force(seed in any::<u64>()) {
        for params in designs() {
            let (stored, queries) = clustered(seed, params.k(), 12);
            let mut index = HammingIndex::new(params.clone());
            let mut brute = BruteForceIndex::new(params.k());
            for (i, &fp) in stored.iter().enumerate() {
                index.insert(Fingerprint::new(fp), i as u64);
                brute.insert(Fingerprint::new(fp), i as u64);
            }
            let qs: Vec<Fingerprint> = queries.iter().map(|&q| Fingerprint::new(q)).collect();
            let mut got = index.query_batch(&qs);
            got.sort_unstable();
            let mut expected: Vec<BatchMatch> = qs.iter().enumerate()
                .flat_map(|(qi, &q)| brute.query(q).into_iter().map(move |found| BatchMatch { query: qi, found }))
                .collect();
            expected.sort_unstable();
            prop_assert_eq!(got, expected);
        }
    }
}
