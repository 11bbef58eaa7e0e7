//! Broder's sketches: MIN_s (the s smallest shingle hashes), MOD_m (the hashes divisible by m)
//! and super-shingles of sorted sketch values.
//!
//! Shingle hashes are uniformly distributed, so ordering by hash value is the "random
//! permutation" of the paper and a sketch is a uniform sample of the shingle set.

use xxhash_rust::xxh3::xxh3_64;

use crate::shingle::sorted_intersection_len;
use crate::{FingerprintError, ShingleSet};

/// MIN_s: the s smallest shingle hashes of a document. Estimates resemblance with standard error
/// about sqrt(r(1 - r) / s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MinSketch {
    s: usize,
    /// Ascending, at most `s` values.
    values: Vec<u64>,
}

impl MinSketch {
    /// The MIN_s sketch of a shingle set.
    pub fn new(set: &ShingleSet, s: usize) -> Result<MinSketch, FingerprintError> {
        if s == 0 {
            return Err(FingerprintError::ZeroSketchParameter { name: "s" });
        }
        let values = set.hashes()[..s.min(set.len())].to_vec();
        Ok(MinSketch { s, values })
    }

    /// The sketch size parameter s.
    pub fn s(&self) -> usize {
        self.s
    }

    /// The kept hashes, ascending.
    pub fn values(&self) -> &[u64] {
        &self.values
    }

    /// Estimated resemblance: among the s smallest values of MIN_s(A) ∪ MIN_s(B), the share
    /// found in both sketches (Broder 1997).
    pub fn resemblance(&self, other: &MinSketch) -> Result<f64, FingerprintError> {
        if self.s != other.s {
            return Err(FingerprintError::SketchMismatch {
                left: self.s,
                right: other.s,
            });
        }
        let (a, b) = (&self.values, &other.values);
        let (mut i, mut j, mut taken, mut shared) = (0, 0, 0, 0);
        while taken < self.s && (i < a.len() || j < b.len()) {
            let (x, y) = (a.get(i), b.get(j));
            match (x, y) {
                (Some(x), Some(y)) if x == y => {
                    shared += 1;
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => i += 1,
                (Some(_), None) => i += 1,
                _ => j += 1,
            }
            taken += 1;
        }
        Ok(if taken == 0 {
            1.0
        } else {
            shared as f64 / taken as f64
        })
    }
}

/// MOD_m: the shingle hashes divisible by m, a variable-size sample of about |S|/m values. Unlike
/// MIN_s it also estimates containment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModSketch {
    m: u64,
    /// Ascending.
    values: Vec<u64>,
}

impl ModSketch {
    /// The MOD_m sketch of a shingle set (Broder's system used m = 25).
    pub fn new(set: &ShingleSet, m: u64) -> Result<ModSketch, FingerprintError> {
        if m == 0 {
            return Err(FingerprintError::ZeroSketchParameter { name: "m" });
        }
        let values = set
            .hashes()
            .iter()
            .copied()
            .filter(|h| h % m == 0)
            .collect();
        Ok(ModSketch { m, values })
    }

    /// The kept hashes, ascending.
    pub fn values(&self) -> &[u64] {
        &self.values
    }

    fn common(&self, other: &ModSketch) -> Result<usize, FingerprintError> {
        if self.m != other.m {
            return Err(FingerprintError::SketchMismatch {
                left: self.m as usize,
                right: other.m as usize,
            });
        }
        Ok(sorted_intersection_len(&self.values, &other.values))
    }

    /// Estimated resemblance |MOD(A) ∩ MOD(B)| / |MOD(A) ∪ MOD(B)|.
    pub fn resemblance(&self, other: &ModSketch) -> Result<f64, FingerprintError> {
        let common = self.common(other)?;
        let union = self.values.len() + other.values.len() - common;
        Ok(if union == 0 {
            1.0
        } else {
            common as f64 / union as f64
        })
    }

    /// Estimated containment of `self` in `other`: |MOD(A) ∩ MOD(B)| / |MOD(A)|.
    pub fn containment_in(&self, other: &ModSketch) -> Result<f64, FingerprintError> {
        let common = self.common(other)?;
        Ok(if self.values.is_empty() {
            1.0
        } else {
            common as f64 / self.values.len() as f64
        })
    }
}

/// Super-shingles: the hashes of every run of `window` consecutive values of the sorted sketch.
/// Two documents share a super-shingle only when they share `window` consecutive sketch values,
/// so "shares most of its sketch" becomes an exact-match lookup on a handful of keys. A sketch
/// shorter than `window` yields one super-shingle of all its values (none when empty).
pub fn super_shingles(sketch: &MinSketch, window: usize) -> Result<Vec<u64>, FingerprintError> {
    if window == 0 {
        return Err(FingerprintError::ZeroSketchParameter { name: "window" });
    }
    let hash = |values: &[u64]| {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        xxh3_64(&bytes)
    };
    let values = sketch.values();
    let mut out: Vec<u64> = if values.len() < window {
        (!values.is_empty())
            .then(|| hash(values))
            .into_iter()
            .collect()
    } else {
        values.windows(window).map(hash).collect()
    };
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Two random sets with |A| = |B| = size and a chosen number of common elements.
    fn pair(seed: u64, size: usize, common: usize) -> (ShingleSet, ShingleSet) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let shared: Vec<u64> = (0..common).map(|_| rng.random()).collect();
        let mut a = shared.clone();
        let mut b = shared;
        a.extend((common..size).map(|_| rng.random::<u64>()));
        b.extend((common..size).map(|_| rng.random::<u64>()));
        (ShingleSet::from_hashes(a), ShingleSet::from_hashes(b))
    }

    /// Estimates of resemblance fall within 4 standard errors of the exact Jaccard for every
    /// seed, and their mean over the seeds within 4 standard errors of the mean.
    #[test]
    fn min_sketch_estimates_resemblance() {
        let s = 256;
        for common in [0, 100, 667, 900, 1000] {
            let mut sum = 0.0;
            let mut exact_r = 0.0;
            let seeds = 30;
            for seed in 0..seeds {
                let (a, b) = pair(seed, 1000, common);
                exact_r = a.resemblance(&b);
                let est = MinSketch::new(&a, s)
                    .unwrap()
                    .resemblance(&MinSketch::new(&b, s).unwrap())
                    .unwrap();
                let se = (exact_r * (1.0 - exact_r) / s as f64).sqrt().max(1e-9);
                assert!(
                    (est - exact_r).abs() <= 4.0 * se + 1e-12,
                    "common {common} seed {seed}: {est} vs {exact_r}"
                );
                sum += est;
            }
            let se_mean = (exact_r * (1.0 - exact_r) / s as f64).sqrt() / (seeds as f64).sqrt();
            assert!((sum / seeds as f64 - exact_r).abs() <= 4.0 * se_mean + 1e-12);
        }
    }

    #[test]
    fn mod_sketch_estimates_resemblance_and_containment() {
        let m = 25;
        for (size, common) in [(10_000, 5_000), (10_000, 9_000), (10_000, 1_000)] {
            for seed in 0..10 {
                let (a, b) = pair(seed, size, common);
                let (ma, mb) = (
                    ModSketch::new(&a, m).unwrap(),
                    ModSketch::new(&b, m).unwrap(),
                );
                // About size/m = 400 sampled values per document.
                let n = ma.values().len() as f64;
                assert!((n - 400.0).abs() < 4.0 * 400f64.sqrt(), "sample size {n}");
                let r = a.resemblance(&b);
                let se_r = (r * (1.0 - r) / (2.0 * n - r * n)).sqrt();
                let est_r = ma.resemblance(&mb).unwrap();
                assert!((est_r - r).abs() <= 4.0 * se_r, "r {est_r} vs {r}");
                let c = a.containment_in(&b);
                let se_c = (c * (1.0 - c) / n).sqrt();
                let est_c = ma.containment_in(&mb).unwrap();
                assert!((est_c - c).abs() <= 4.0 * se_c, "c {est_c} vs {c}");
            }
        }
    }

    #[test]
    fn mod_sketch_containment_of_a_subset() {
        let (whole, _) = pair(7, 20_000, 0);
        let part = ShingleSet::from_hashes(whole.hashes()[..5_000].to_vec());
        let (mp, mw) = (
            ModSketch::new(&part, 25).unwrap(),
            ModSketch::new(&whole, 25).unwrap(),
        );
        assert_eq!(mp.containment_in(&mw).unwrap(), 1.0);
        assert!((mw.containment_in(&mp).unwrap() - 0.25).abs() < 0.06);
    }

    #[test]
    fn super_shingles_match_near_copies_only() {
        let mut near_hits = 0;
        let mut far_hits = 0;
        for seed in 0..50 {
            let (a, b) = pair(seed, 1000, 980); // r ≈ 0.96
            let (c, _) = pair(seed + 1000, 1000, 0);
            let ss = |x: &ShingleSet| super_shingles(&MinSketch::new(x, 84).unwrap(), 14).unwrap();
            let (sa, sb, sc) = (ss(&a), ss(&b), ss(&c));
            near_hits += usize::from(sorted_intersection_len(&sa, &sb) > 0);
            far_hits += usize::from(sorted_intersection_len(&sa, &sc) > 0);
        }
        assert!(
            near_hits >= 45,
            "near copies share a super-shingle: {near_hits}/50"
        );
        assert_eq!(far_hits, 0);
    }

    #[test]
    fn parameters_are_checked() {
        let set = ShingleSet::from_hashes(vec![1, 2, 3]);
        assert!(MinSketch::new(&set, 0).is_err());
        assert!(ModSketch::new(&set, 0).is_err());
        let a = MinSketch::new(&set, 2).unwrap();
        let b = MinSketch::new(&set, 3).unwrap();
        assert_eq!(
            a.resemblance(&b),
            Err(FingerprintError::SketchMismatch { left: 2, right: 3 })
        );
        assert!(super_shingles(&a, 0).is_err());
        assert_eq!(super_shingles(&a, 5).unwrap().len(), 1);
    }

    #[test]
    fn identical_sets_resemble_fully() {
        let (a, _) = pair(3, 500, 0);
        let s = MinSketch::new(&a, 100).unwrap();
        assert_eq!(s.resemblance(&s).unwrap(), 1.0);
    }
}
