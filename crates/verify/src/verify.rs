//! Steps 2 and 3 together: skeletons, LCS on the skeletons, the trustable LCS with iterative
//! passes for moved paragraphs, and the resemble and contain rates.

use crate::lcs::lcs_pairs;
use crate::skeleton::{WindowSet, skeleton, window_hashes};
use crate::trustable::trustable_region;

/// Thresholds and sizes of the verification.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VerifyConfig {
    /// Window of the filter skeleton, in units (the paper's S = 16 bytes is about three
    /// English words or five Chinese characters).
    pub window: usize,
    /// Slope threshold θ of the trustable region (paper: 0.10).
    pub slope: f64,
    /// Similar when the resemble rate reaches this (paper: 0.28 on whole pages).
    pub min_resemblance: f64,
    /// ... or when the contain rate reaches this (paper: 0.7).
    pub min_containment: f64,
    /// Passes of the trustable-region search (1: no paragraph moves).
    pub max_passes: usize,
    /// A pass stops the iteration when it adds less than this share of the shorter document.
    pub min_pass_share: f64,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig { window: 3, slope: 0.10, min_resemblance: 0.28, min_containment: 0.7, max_passes: 8, min_pass_share: 0.05 }
    }
}

/// What the verification of a pair found.
#[derive(Clone, Debug, PartialEq)]
pub struct Verification {
    /// Units of A and B.
    pub len_a: usize,
    /// Units of B.
    pub len_b: usize,
    /// Units of A and B kept by the first pass's skeletons.
    pub skeleton: (usize, usize),
    /// Length of the first pass's LCS (0 when rejected by the skeleton bound).
    pub lcs: usize,
    /// Length of the trustable LCS, summed over passes.
    pub trustable: usize,
    /// Passes run (0 when rejected by the skeleton bound).
    pub passes: usize,
    /// r = T / (|A| + |B| - T).
    pub resemblance: f64,
    /// c = T / min(|A|, |B|): how much of the shorter one the longer contains.
    pub contained: f64,
    /// True when the skeletons were too short for the pair to be similar, so no LCS ran.
    pub rejected_by_skeleton: bool,
    /// The verdict under the configured thresholds.
    pub similar: bool,
}

/// Verifies two documents given as sequences of unit hashes (words, or characters).
pub fn verify(a: &[u64], b: &[u64], config: &VerifyConfig) -> Verification {
    let (len_a, len_b) = (a.len(), b.len());
    let mut result = Verification {
        len_a,
        len_b,
        skeleton: (0, 0),
        lcs: 0,
        trustable: 0,
        passes: 0,
        resemblance: 0.0,
        contained: 0.0,
        rejected_by_skeleton: false,
        similar: false,
    };
    if len_a == 0 || len_b == 0 {
        return result;
    }
    let rates = |t: usize| (t as f64 / (len_a + len_b - t) as f64, t as f64 / len_a.min(len_b) as f64);
    let passes_rate = |(r, c): (f64, f64)| r >= config.min_resemblance || c >= config.min_containment;

    // Remaining positions of A and B (original indices), shrinking pass by pass.
    let mut rest_a: Vec<usize> = (0..len_a).collect();
    let mut rest_b: Vec<usize> = (0..len_b).collect();
    let mut total = 0;
    for pass in 0..config.max_passes {
        let units_a: Vec<u64> = rest_a.iter().map(|&i| a[i]).collect();
        let units_b: Vec<u64> = rest_b.iter().map(|&i| b[i]).collect();
        let window = config.window.max(1).min(units_a.len()).min(units_b.len());
        if window == 0 {
            break;
        }
        let (hashes_a, hashes_b) = (window_hashes(&units_a, window), window_hashes(&units_b, window));
        let skel_a = skeleton(&hashes_a, window, &WindowSet::new(&hashes_b));
        let skel_b = skeleton(&hashes_b, window, &WindowSet::new(&hashes_a));
        if pass == 0 {
            result.skeleton = (skel_a.len(), skel_b.len());
            // The LCS cannot be longer than the shorter skeleton.
            if !passes_rate(rates(skel_a.len().min(skel_b.len()))) {
                result.rejected_by_skeleton = true;
                return result;
            }
        }
        let seq_a: Vec<u64> = skel_a.iter().map(|&i| units_a[i]).collect();
        let seq_b: Vec<u64> = skel_b.iter().map(|&i| units_b[i]).collect();
        let pairs = lcs_pairs(&seq_a, &seq_b);
        if pass == 0 {
            result.lcs = pairs.len();
        }
        result.passes = pass + 1;
        // Matched positions of this pass's A, in its own coordinates.
        let mut matched = vec![false; units_a.len()];
        let mut partner = vec![usize::MAX; units_a.len()];
        for &(i, j) in &pairs {
            matched[skel_a[i]] = true;
            partner[skel_a[i]] = skel_b[j];
        }
        let Some((start, end, count)) = trustable_region(&matched, config.slope) else { break };
        let minimum = (config.min_pass_share * len_a.min(len_b) as f64).ceil() as usize;
        if pass > 0 && count < minimum.max(1) {
            break;
        }
        total += count;
        // Remove the trustable region from A and its partners from B, then look again.
        let mut used_b = vec![false; units_b.len()];
        for x in start..end {
            if matched[x] {
                used_b[partner[x]] = true;
            }
        }
        rest_a = rest_a.iter().enumerate().filter(|(x, _)| *x < start || *x >= end).map(|(_, &i)| i).collect();
        rest_b = rest_b.iter().enumerate().filter(|(y, _)| !used_b[*y]).map(|(_, &i)| i).collect();
        if rest_a.is_empty() || rest_b.is_empty() || config.max_passes == 1 {
            break;
        }
    }
    result.trustable = total;
    (result.resemblance, result.contained) = rates(total);
    result.similar = passes_rate((result.resemblance, result.contained));
    result
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn text(rng: &mut ChaCha8Rng, n: usize) -> Vec<u64> {
        (0..n).map(|_| rng.random_range(0..5000)).collect()
    }

    #[test]
    fn identical_edited_and_different_documents() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let config = VerifyConfig::default();
        let article = text(&mut rng, 1000);

        let same = verify(&article, &article, &config);
        assert_eq!((same.trustable, same.resemblance, same.similar), (1000, 1.0, true));

        // Different template around the same article, a few words changed.
        let mut copy = text(&mut rng, 150);
        let mut edited = article.clone();
        for i in (0..1000).step_by(97) {
            edited[i] = 9999;
        }
        copy.extend(&edited);
        copy.extend(text(&mut rng, 150));
        let near = verify(&article, &copy, &config);
        assert!(near.similar && near.contained > 0.9 && !near.rejected_by_skeleton, "{near:?}");

        let other = text(&mut rng, 1000);
        let far = verify(&article, &other, &config);
        assert!(far.rejected_by_skeleton && !far.similar && far.lcs == 0, "{far:?}");
    }

    #[test]
    fn moved_paragraphs_are_found_by_later_passes() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let paragraphs: Vec<Vec<u64>> = (0..5).map(|_| text(&mut rng, 200)).collect();
        let a: Vec<u64> = paragraphs.concat();
        let b: Vec<u64> = [4, 1, 2, 0, 3].iter().flat_map(|&i| paragraphs[i].clone()).collect();
        let one_pass = verify(&a, &b, &VerifyConfig { max_passes: 1, ..VerifyConfig::default() });
        let iterated = verify(&a, &b, &VerifyConfig::default());
        assert!(iterated.trustable > one_pass.trustable, "{one_pass:?} {iterated:?}");
        assert!(iterated.trustable >= 900 && iterated.passes >= 3, "{iterated:?}");
    }

    #[test]
    fn containment_of_a_short_page_in_a_long_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let short = text(&mut rng, 300);
        let mut long = text(&mut rng, 1500);
        long.splice(700..700, short.iter().copied());
        let v = verify(&short, &long, &VerifyConfig::default());
        assert!(v.contained > 0.99 && v.resemblance < 0.28 && v.similar, "{v:?}");
    }

    #[test]
    fn empty_documents() {
        let v = verify(&[], &[1, 2, 3], &VerifyConfig::default());
        assert!(!v.similar && v.trustable == 0);
        let v = verify(&[1], &[1], &VerifyConfig::default());
        assert!(v.similar, "{v:?}");
    }
}
