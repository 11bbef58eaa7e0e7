//! Charikar's simhash over weighted features.
//!
//! The textbook algorithm keeps 64 signed counters and, for every feature, adds its weight to
//! counter i when bit i of the feature's hash is 1 and subtracts it otherwise. We keep instead the
//! sum of weights whose bit i is 1 (`ones[i]`) and the total weight: counter i is then
//! `ones[i] - (total - ones[i])`, so the per-feature work is one masked add per lane, which
//! compilers turn into a handful of vector instructions. Weights are fixed point (1/1024 units)
//! so the fast path and [`simhash_reference`] agree exactly, not just up to rounding.

use xxhash_rust::xxh3::xxh3_64;

use crate::{Fingerprint, FingerprintError};

/// Fixed-point scale of weights: a weight is stored as a whole number of 1/1024 units.
const WEIGHT_SCALE: f32 = 1024.0;
/// Largest quantised weight: 256 of them must fit in a `u32` lane (see `BLOCK`).
const MAX_QUANTA: u32 = (1 << 24) - 1;
/// Features accumulated in 32-bit lanes before the lanes are folded into 64-bit sums.
const BLOCK: usize = 256;

/// The hash of a feature's bytes (xxh3, 64 bits). Use it to pre-hash features once.
#[inline]
pub fn feature_hash(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// A feature weight: finite, non-negative, at most [`Weight::MAX`], kept in units of 1/1024.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Weight(u32);

impl Weight {
    /// Weight 1: every occurrence of a feature counts once (term-frequency weighting).
    pub const ONE: Weight = Weight(1024);
    /// The largest weight a feature can carry (just under 16384).
    pub const MAX: Weight = Weight(MAX_QUANTA);

    /// Checks and quantises `weight` (rounded to the nearest 1/1024).
    pub fn new(weight: f32) -> Result<Weight, FingerprintError> {
        let quanta = (weight * WEIGHT_SCALE).round();
        if weight.is_finite() && weight >= 0.0 && quanta <= MAX_QUANTA as f32 {
            Ok(Weight(quanta as u32))
        } else {
            Err(FingerprintError::InvalidWeight { weight })
        }
    }

    /// Like [`Weight::new`] but clamps out-of-range values (NaN becomes 0) instead of failing:
    /// for weights computed by formulas such as tf-idf, where an extreme value is not an error.
    pub fn saturating(weight: f32) -> Weight {
        if weight.is_nan() || weight <= 0.0 {
            return Weight(0);
        }
        let scaled = weight * WEIGHT_SCALE;
        if scaled >= MAX_QUANTA as f32 {
            return Weight::MAX;
        }
        // `scaled.round()` without the library call it compiles to on x86-64 (no SSE4.1 in the
        // baseline): below 2^24 the integer part and the fraction are exact.
        let whole = scaled as u32;
        Weight(whole + u32::from(scaled - whole as f32 >= 0.5))
    }

    /// The weight as a float.
    pub fn get(self) -> f32 {
        self.0 as f32 / WEIGHT_SCALE
    }

    /// The weight in 1/1024 units.
    pub fn quanta(self) -> u32 {
        self.0
    }
}

/// Incremental simhash: add weighted features, then [`SimHasher::finish`].
///
/// Features are buffered and folded in blocks by a vectorised kernel.
#[derive(Clone)]
pub struct SimHasher {
    /// `ones[i]`: total weight of the features whose hash has bit i set.
    ones: [u64; 64],
    /// Total weight of all features.
    total: u64,
    /// Features not yet folded into `ones`.
    pending: [(u64, u32); BLOCK],
    pending_len: usize,
}

impl Default for SimHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl SimHasher {
    /// An empty hasher. With no features, [`SimHasher::finish`] gives fingerprint 0.
    pub fn new() -> Self {
        SimHasher {
            ones: [0; 64],
            total: 0,
            pending: [(0, 0); BLOCK],
            pending_len: 0,
        }
    }

    /// Adds a feature by its 64-bit hash.
    #[inline]
    pub fn add_hashed(&mut self, hash: u64, weight: Weight) {
        self.pending[self.pending_len] = (hash, weight.0);
        self.pending_len += 1;
        if self.pending_len == BLOCK {
            self.flush();
        }
    }

    /// Adds a feature by its bytes (hashed with [`feature_hash`]).
    #[inline]
    pub fn add(&mut self, feature: &[u8], weight: Weight) {
        self.add_hashed(feature_hash(feature), weight);
    }

    /// The fingerprint of the features added so far.
    pub fn finish(mut self) -> Fingerprint {
        self.flush();
        let mut bits = 0u64;
        for (i, &ones) in self.ones.iter().enumerate() {
            // counter_i = ones - (total - ones) > 0
            if 2 * u128::from(ones) > u128::from(self.total) {
                bits |= 1 << i;
            }
        }
        Fingerprint::new(bits)
    }

    fn flush(&mut self) {
        let block = &self.pending[..self.pending_len];
        let mut lanes = [0u32; 64];
        accumulate(&mut lanes, block);
        for (sum, lane) in self.ones.iter_mut().zip(lanes) {
            *sum += u64::from(lane);
        }
        self.total += block.iter().map(|&(_, w)| u64::from(w)).sum::<u64>();
        self.pending_len = 0;
    }
}

/// Simhash of `(feature hash, weight)` pairs.
pub fn simhash<I: IntoIterator<Item = (u64, Weight)>>(features: I) -> Fingerprint {
    let mut hasher = SimHasher::new();
    for (hash, weight) in features {
        hasher.add_hashed(hash, weight);
    }
    hasher.finish()
}

/// The textbook simhash with signed counters, one feature and one bit at a time. It is the
/// reference [`simhash`] is tested against; use [`simhash`] in real code.
pub fn simhash_reference<I: IntoIterator<Item = (u64, Weight)>>(features: I) -> Fingerprint {
    let mut counters = [0i128; 64];
    for (hash, weight) in features {
        for (i, counter) in counters.iter_mut().enumerate() {
            if hash >> i & 1 == 1 {
                *counter += i128::from(weight.0);
            } else {
                *counter -= i128::from(weight.0);
            }
        }
    }
    let bits = counters
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .fold(0u64, |bits, (i, _)| bits | 1 << i);
    Fingerprint::new(bits)
}

/// Adds each feature's weight to the lanes of its set bits. At most `BLOCK` features, so the
/// 32-bit lanes cannot overflow (`BLOCK * MAX_QUANTA < 2^32`).
#[inline]
fn accumulate(lanes: &mut [u32; 64], features: &[(u64, u32)]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            unsafe { accumulate_avx2(lanes, features) };
            return;
        }
    }
    accumulate_portable(lanes, features);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_avx2(lanes: &mut [u32; 64], features: &[(u64, u32)]) {
    accumulate_portable(lanes, features);
}

/// Written so that the inner loops vectorise: each lane gets `weight & mask`, where the mask is
/// all ones when the lane's bit is set.
#[inline(always)]
fn accumulate_portable(lanes: &mut [u32; 64], features: &[(u64, u32)]) {
    let (low_lanes, high_lanes) = lanes.split_at_mut(32);
    for &(hash, weight) in features {
        let low = hash as u32;
        let high = (hash >> 32) as u32;
        for (i, lane) in low_lanes.iter_mut().enumerate() {
            let mask = ((low >> i) & 1).wrapping_neg();
            *lane = lane.wrapping_add(weight & mask);
        }
        for (i, lane) in high_lanes.iter_mut().enumerate() {
            let mask = ((high >> i) & 1).wrapping_neg();
            *lane = lane.wrapping_add(weight & mask);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn w(x: f32) -> Weight {
        Weight::new(x).unwrap()
    }

    /// ALGORITHMS.md §3's 8-bit example: 12306 (weight 5) hashes to 10011100 and contributes
    /// +5 -5 -5 +5 +5 +5 -5 -5. We put the 8-bit patterns in the top byte of a 64-bit hash
    /// (bit 63 is the first printed bit) and check every counter's sign.
    #[test]
    fn worked_example_mechanics() {
        let top = |pattern: u64| pattern << 56;
        let features = [
            (top(0b1001_1100), w(5.0)), // 12306
            (top(0b0101_0110), w(4.0)), // 服务器
            (top(0b1100_0011), w(4.0)), // 故障
        ];
        // Column sums, first printed bit first:
        // 12306: +5 -5 -5 +5 +5 +5 -5 -5
        // 服务器: -4 +4 -4 +4 -4 +4 +4 -4
        // 故障:   +4 +4 -4 -4 -4 -4 +4 +4
        // sum:   +5 +3 -13 +5 -3 +5 +3 -5  -> 1 1 0 1 0 1 1 0
        let fp = simhash(features);
        assert_eq!(fp.bits() >> 56, 0b1101_0110);
        assert_eq!(simhash_reference(features), fp);
        // The low 56 bits are all zero in every feature: every counter negative, bit 0.
        assert_eq!(fp.bits() & ((1 << 56) - 1), 0);
    }

    #[test]
    fn empty_document_hashes_to_zero() {
        assert_eq!(simhash(std::iter::empty()), Fingerprint::new(0));
        assert_eq!(SimHasher::new().finish(), Fingerprint::new(0));
    }

    #[test]
    fn a_tie_gives_bit_zero() {
        // Two features with complementary hashes and equal weight: every counter is 0.
        let fp = simhash([
            (0xF0F0_F0F0_F0F0_F0F0, Weight::ONE),
            (0x0F0F_0F0F_0F0F_0F0F, Weight::ONE),
        ]);
        assert_eq!(fp.bits(), 0);
    }

    #[test]
    fn weight_is_checked() {
        assert!(Weight::new(-1.0).is_err());
        assert!(Weight::new(f32::NAN).is_err());
        assert!(Weight::new(f32::INFINITY).is_err());
        assert!(Weight::new(20000.0).is_err());
        assert_eq!(Weight::new(0.5).unwrap().quanta(), 512);
        assert_eq!(Weight::saturating(1e9), Weight::MAX);
        assert_eq!(Weight::saturating(f32::NAN).quanta(), 0);
        assert_eq!(Weight::saturating(-3.0).quanta(), 0);
    }

    #[test]
    fn similar_texts_are_close_and_different_texts_are_not() {
        let text = "near duplicate detection for web crawling uses simhash fingerprints of page \
                    text so that pages differing only in a few words get fingerprints that differ \
                    in only a few bits while unrelated pages differ in about half of the bits";
        let edited = text.replace("a few words", "some words");
        let other = "the permuted tables answer hamming distance queries over billions of \
                     fingerprints by probing sorted tables with a prefix of the permuted bits";
        let fp = |t: &str| {
            simhash(
                t.split(' ')
                    .map(|x| (feature_hash(x.as_bytes()), Weight::ONE)),
            )
        };
        assert!(fp(text).distance(fp(&edited)) <= 8);
        assert!(fp(text).distance(fp(other)) >= 16);
    }

    /// [`Weight::saturating`] as first written: `round`, then the clamp.
    fn saturating_reference(weight: f32) -> Weight {
        if weight.is_nan() || weight <= 0.0 {
            Weight(0)
        } else {
            Weight(((weight * WEIGHT_SCALE).round()).min(MAX_QUANTA as f32) as u32)
        }
    }

    #[test]
    fn saturating_rounds_halves_up_and_clamps() {
        for weight in [
            0.0,
            -1.0,
            f32::NAN,
            f32::INFINITY,
            0.5 / 1024.0,
            0.499_999_97 / 1024.0,
            1.0,
            16383.999,
            16384.0,
            1e30,
            f32::MIN_POSITIVE,
        ] {
            assert_eq!(
                Weight::saturating(weight),
                saturating_reference(weight),
                "{weight}"
            );
        }
    }

    proptest! {
        #[test]
        fn saturating_is_round_then_clamp(bits in any::<u32>()) {
            let weight = f32::from_bits(bits);
            prop_assert_eq!(Weight::saturating(weight), saturating_reference(weight));
        }

        #[test]
        fn saturating_is_round_then_clamp_in_range(weight in 0.0f32..20_000.0) {
            prop_assert_eq!(Weight::saturating(weight), saturating_reference(weight));
        }

        #[test]
        fn fast_path_matches_reference(
            features in prop::collection::vec((any::<u64>(), 0u32..=MAX_QUANTA), 0..700)
        ) {
            let features: Vec<(u64, Weight)> =
                features.into_iter().map(|(h, q)| (h, Weight(q))).collect();
            prop_assert_eq!(simhash(features.iter().copied()), simhash_reference(features));
        }

        #[test]
        fn fast_path_matches_reference_with_small_weights(
            features in prop::collection::vec((any::<u64>(), 0u32..4), 0..600)
        ) {
            // Small integer weights produce many ties (counter exactly 0).
            let features: Vec<(u64, Weight)> =
                features.into_iter().map(|(h, q)| (h, Weight(q * 1024))).collect();
            prop_assert_eq!(simhash(features.iter().copied()), simhash_reference(features));
        }
    }
}
