use super::*;
use proptest::prelude::*;

proptest! {
    /// The bounded descent (taken for long ranges) finds exactly what a scan finds, on
    /// keys dense enough that most ranges are long.
    #[test]
    fn descent_matches_a_scan(
        mut keys in prop::collection::vec(0u64..4096, 1_000..20_000),
        query in 0u64..4096,
        k in 0u32..5,
        prefix_bits in 1u32..52,
    ) {
        keys.sort_unstable();
        let table = SortedTable::without_hot_ranges(keys.clone(), prefix_bits, Lookups::Prefixes);
        let (mut found, _) = probed(&table, query, prefix_bits, k);
        found.sort_unstable();
        prop_assert_eq!(found, scanned(&keys, query, prefix_bits, k));
    }

    /// With keys crowded into a few prefixes (long slots with subdirectories, hot ranges
    /// with designs of their own), ranges and probes are exactly those of a scan.
    #[test]
    fn crowded_tables_match_a_scan(
        keys in crowded_keys(),
        queries in prop::collection::vec((any::<prop::sample::Index>(), 0u32..5, any::<u64>()), 1..12),
        k in 0u32..5,
        prefix_bits in 8u32..40,
        whole_keys in any::<bool>(),
    ) {
        let lookups = if whole_keys { Lookups::WholeKeys } else { Lookups::Prefixes };
        let table = SortedTable::from_sorted(keys.clone(), &identity(prefix_bits, k), lookups);
        for (pick, flips, noise) in queries {
            // Near a stored key: its bits flipped at `flips` places drawn from `noise`.
            let query = keys[pick.index(keys.len())] ^ spread_bits(noise, flips);
            for bits in [table.dir_bits, prefix_bits, prefix_bits + 7, 64] {
                let shift = 64 - bits;
                let start = keys.partition_point(|&key| key >> shift < query >> shift);
                let end = keys.partition_point(|&key| key >> shift <= query >> shift);
                prop_assert_eq!(table.shared_range(query, bits), start..end, "bits {}", bits);
            }
            let (mut found, _) = probed(&table, query, prefix_bits, k);
            found.sort_unstable();
            prop_assert_eq!(found, scanned(&keys, query, prefix_bits, k));
        }
    }
}

proptest! {
    /// Every scan the processor offers (eight or four keys at a time, popcnt, portable)
    /// visits exactly the keys within distance k, in order, with their distances.
    #[test]
    fn vector_scans_match_the_portable_scan(
        keys in prop::collection::vec((any::<u64>(), 0u32..6, any::<u64>()), 0..300),
        query in any::<u64>(),
        k in 0u32..8,
        base in 0usize..1000,
    ) {
        // Half the keys near the query, so that many lanes are within distance.
        let keys: Vec<u64> = keys.into_iter().map(|(key, flips, noise)| if noise % 2 == 0 { query ^ spread_bits(noise, flips) } else { key }).collect();
        let expected = scanned_with(&keys, base, query, k, |keys, base, query, k, mut visit| scan_portable(keys, base, query, k, &mut visit));
        prop_assert_eq!(scanned_with(&keys, base, query, k, |keys, base, query, k, mut visit| scan(keys, base, query, k, &mut visit)), expected.clone());
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512vpopcntdq") {
                // SAFETY: detected just above.
                let found = scanned_with(&keys, base, query, k, |keys, base, query, k, mut visit| unsafe { scan_with_avx512(keys, base, query, k, &mut visit) });
                prop_assert_eq!(found, expected.clone());
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: detected just above.
                let found = scanned_with(&keys, base, query, k, |keys, base, query, k, mut visit| unsafe { scan_with_avx2(keys, base, query, k, &mut visit) });
                prop_assert_eq!(found, expected.clone());
            }
        }
    }
}

type Visit<'a> = &'a mut dyn FnMut(usize, u32) -> ControlFlow<()>;

/// What one scan implementation visits.
fn scanned_with(
    keys: &[u64],
    base: usize,
    query: u64,
    k: u32,
    scan: impl Fn(&[u64], usize, u64, u32, Visit<'_>) -> ControlFlow<()>,
) -> Vec<(usize, u32)> {
    let mut found = Vec::new();
    let _ = scan(keys, base, query, k, &mut |i, d| {
        found.push((i, d));
        ControlFlow::Continue(())
    });
    found
}

/// A probe of a hot range examines a few keys per table of its design, not the range.
#[test]
fn a_hot_range_is_probed_through_its_own_design() {
    let mut state = 1u64;
    let mut keys: Vec<u64> = (0..40_000)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 24 // 24 leading zero bits: one prefix of 20 bits holds every key
        })
        .collect();
    keys.sort_unstable();
    let table = SortedTable::from_sorted(keys.clone(), &identity(20, 3), Lookups::Prefixes);
    assert_eq!(table.hot.len(), 1);
    assert_eq!(table.hot[0].range, 0..keys.len());
    for &stored in keys.iter().step_by(997) {
        let query = stored ^ 0b1011;
        let (found, examined) = probed(&table, query, 20, 3);
        assert!(
            found.iter().any(|&(i, d)| keys[i] == stored && d == 3),
            "{query:x}"
        );
        assert!(examined < 2_000, "examined {examined} of {}", keys.len());
    }
}

/// In a design with short prefixes every directory slot is long. Table 0, searched by whole
/// keys for payloads, finds a key through a subdirectory; the other tables, searched by
/// prefix only, keep none (the probe scans the slot, which is the prefix's keys).
#[test]
fn whole_key_lookups_narrow_every_long_slot() {
    let mut state = 7u64;
    let mut keys: Vec<u64> = (0..1 << 16)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state
        })
        .collect();
    keys.sort_unstable();
    // Prefixes of 6 bits: 64 slots of about 1,000 keys, none longer than 16 times the average.
    let layout = identity(6, 3);
    let whole = SortedTable::from_sorted(keys.clone(), &layout, Lookups::WholeKeys);
    let prefixes = SortedTable::from_sorted(keys.clone(), &layout, Lookups::Prefixes);
    for &key in keys.iter().step_by(101) {
        let (slot, sub) = whole.slot_and_subdirectory(key);
        assert!(
            slot.len() > SUBDIRECTORY_MIN && sub.is_some(),
            "slot of {key:x}: {} keys",
            slot.len()
        );
        assert!(sub.unwrap().shared_range(key, 64).0.len() < 16);
        assert!(prefixes.slot_and_subdirectory(key).1.is_none());
        assert_eq!(whole.equal_range(key), prefixes.equal_range(key));
        assert_eq!(keys[whole.equal_range(key)], [key]);
    }
}

/// Sorted keys, most of them crowded: half share their top 24 bits or more (a hot range for
/// prefixes up to 24 bits), a quarter share another pattern over fewer low bits (with
/// repeats), the rest are uniform.
fn crowded_keys() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec((0u8..8, any::<u64>(), 20u32..40), 6_000..16_000).prop_map(|draws| {
        let mut keys: Vec<u64> = draws
            .into_iter()
            .map(|(crowd, bits, low_bits)| match crowd {
                0..4 => bits >> (64 - low_bits),
                4..6 => (1 << 61) | (bits >> (64 - low_bits / 2)),
                _ => bits,
            })
            .collect();
        keys.sort_unstable();
        keys
    })
}

fn identity(prefix_bits: u32, k: u32) -> Layout {
    Layout::new(
        &crate::params::TableOrder {
            order: (0..64).collect(),
            prefix_bits,
        },
        k,
    )
}

/// `count` distinct bit positions drawn from `seed`.
fn spread_bits(seed: u64, count: u32) -> u64 {
    let mut mask = 0u64;
    let mut state = seed;
    while mask.count_ones() < count {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        mask |= 1 << (state >> 58);
    }
    mask
}

/// What a probe reports, and how many keys it examined.
fn probed(table: &SortedTable, query: u64, prefix_bits: u32, k: u32) -> (Vec<(usize, u32)>, u64) {
    let mut found = Vec::new();
    let mut examined = 0;
    let _ = table.probe(query, prefix_bits, k, &mut examined, &mut |i, d| {
        found.push((i, d));
        ControlFlow::Continue(())
    });
    (found, examined)
}

/// The reference: every key sharing the prefix and within distance k, by a scan.
fn scanned(keys: &[u64], query: u64, prefix_bits: u32, k: u32) -> Vec<(usize, u32)> {
    let shift = 64 - prefix_bits;
    keys.iter()
        .enumerate()
        .filter(|(_, key)| *key >> shift == query >> shift && (*key ^ query).count_ones() <= k)
        .map(|(i, key)| (i, (key ^ query).count_ones()))
        .collect()
}
