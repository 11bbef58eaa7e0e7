//! Steps 2 and 3 together: skeletons, LCS on the skeletons, the trustable LCS with iterative
//! passes for moved paragraphs, and the resemble and contain rates.

use crate::lcs::Lcs;
use crate::skeleton::{WindowSet, skeleton, skeleton_len, window_hashes, window_hashes_into};
use crate::trustable::trustable_region;

/// Thresholds and sizes of the verification.
///
/// `[dedup.lcs]` in a job configuration: every field is a key, unknown keys are errors.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
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
        VerifyConfig {
            window: 3,
            slope: 0.10,
            min_resemblance: 0.28,
            min_containment: 0.7,
            max_passes: 8,
            min_pass_share: 0.05,
        }
    }
}

impl VerifyConfig {
    /// Whether a pair with these resemble and contain rates is similar.
    fn passes(&self, (resemblance, contained): (f64, f64)) -> bool {
        resemblance >= self.min_resemblance || contained >= self.min_containment
    }
}

/// The resemble and contain rates of `t` units in common between documents of `len_a` and
/// `len_b` units: T / (|A| + |B| - T) and T / min(|A|, |B|).
fn rates(t: usize, len_a: usize, len_b: usize) -> (f64, f64) {
    (
        t as f64 / (len_a + len_b - t) as f64,
        t as f64 / len_a.min(len_b) as f64,
    )
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

/// Verifies two documents given as sequences of unit hashes (words, or characters). A
/// caller verifying many pairs keeps a [`Verifier`] instead, which reuses its work memory.
pub fn verify(a: &[u64], b: &[u64], config: &VerifyConfig) -> Verification {
    Verifier::new(*config).verify(a, b)
}

/// Verification with its work memory kept between pairs: the LCS search's arrays and the
/// passes' buffers grow to the largest pair seen and are reused, so verifying the next pair
/// allocates nothing.
#[derive(Default)]
pub struct Verifier {
    config: VerifyConfig,
    lcs: Lcs,
    pairs: Vec<(usize, usize)>,
    /// Units of A and B still unmatched (original positions), and of this pass.
    rest_a: Vec<usize>,
    rest_b: Vec<usize>,
    units_a: Vec<u64>,
    units_b: Vec<u64>,
    seq_a: Vec<u64>,
    seq_b: Vec<u64>,
    /// Per position of this pass's A: matched by the LCS, and to which position of B.
    matched: Vec<bool>,
    partner: Vec<usize>,
    used_b: Vec<bool>,
    /// [`Verifier::similarity`]'s bound: A's windows and their set, for the A (`bound_a`, at
    /// window `bound_window`) they were made of, kept while one page is compared with
    /// candidate after candidate; and B's windows.
    bound_a: Vec<u64>,
    bound_window: usize,
    windows_a: Vec<u64>,
    set_a: WindowSet,
    windows_b: Vec<u64>,
}

impl Verifier {
    /// A verifier under `config`.
    pub fn new(config: VerifyConfig) -> Verifier {
        Verifier {
            config,
            ..Verifier::default()
        }
    }

    /// [`Verifier::verify`]'s verdict alone: the resemble rate when `a` and `b` are similar.
    /// Most pairs a crawl verifies are not, and the first pass's skeleton bound rejects them;
    /// here the bound is taken from B's skeleton alone (the LCS is no longer than either
    /// skeleton), counted without listing it, against the set of A's windows, which is built
    /// once while the same `a` (a page) is compared with candidate after candidate: a rejected
    /// pair costs two passes over B, and no table.
    pub fn similarity(&mut self, a: &[u64], b: &[u64]) -> Option<f64> {
        let (len_a, len_b) = (a.len(), b.len());
        if len_a == 0 || len_b == 0 {
            return None;
        }
        let config = self.config;
        let window = config.window.max(1).min(len_a).min(len_b);
        if self.bound_window != window || self.bound_a != a {
            self.bound_a.clear();
            self.bound_a.extend_from_slice(a);
            self.bound_window = window;
            window_hashes_into(a, window, &mut self.windows_a);
            self.set_a.rebuild(&self.windows_a);
        }
        window_hashes_into(b, window, &mut self.windows_b);
        let t = skeleton_len(&self.windows_b, window, &self.set_a);
        if !config.passes(rates(t, len_a, len_b)) {
            return None;
        }
        let verification = self.verify(a, b);
        verification.similar.then_some(verification.resemblance)
    }

    /// Verifies documents `a` and `b`, given as sequences of unit hashes.
    pub fn verify(&mut self, a: &[u64], b: &[u64]) -> Verification {
        let config = self.config;
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

        // Remaining positions of A and B (original indices), shrinking pass by pass.
        refill(&mut self.rest_a, 0..len_a);
        refill(&mut self.rest_b, 0..len_b);
        let mut total = 0;
        for pass in 0..config.max_passes {
            refill(&mut self.units_a, self.rest_a.iter().map(|&i| a[i]));
            refill(&mut self.units_b, self.rest_b.iter().map(|&i| b[i]));
            let (units_a, units_b) = (&self.units_a, &self.units_b);
            let window = config.window.max(1).min(units_a.len()).min(units_b.len());
            if window == 0 {
                break;
            }
            let (hashes_a, hashes_b) = (
                window_hashes(units_a, window),
                window_hashes(units_b, window),
            );
            let skel_a = skeleton(&hashes_a, window, &WindowSet::new(&hashes_b));
            let skel_b = skeleton(&hashes_b, window, &WindowSet::new(&hashes_a));
            if pass == 0 {
                result.skeleton = (skel_a.len(), skel_b.len());
                // The LCS cannot be longer than the shorter skeleton.
                if !config.passes(rates(skel_a.len().min(skel_b.len()), len_a, len_b)) {
                    result.rejected_by_skeleton = true;
                    return result;
                }
            }
            refill(&mut self.seq_a, skel_a.iter().map(|&i| units_a[i]));
            refill(&mut self.seq_b, skel_b.iter().map(|&i| units_b[i]));
            self.lcs
                .pairs_into(&self.seq_a, &self.seq_b, &mut self.pairs);
            if pass == 0 {
                result.lcs = self.pairs.len();
            }
            result.passes = pass + 1;
            // Matched positions of this pass's A, in its own coordinates.
            refill(&mut self.matched, std::iter::repeat_n(false, units_a.len()));
            refill(
                &mut self.partner,
                std::iter::repeat_n(usize::MAX, units_a.len()),
            );
            for &(i, j) in &self.pairs {
                self.matched[skel_a[i]] = true;
                self.partner[skel_a[i]] = skel_b[j];
            }
            let Some((start, end, count)) = trustable_region(&self.matched, config.slope) else {
                break;
            };
            let minimum = (config.min_pass_share * len_a.min(len_b) as f64).ceil() as usize;
            if pass > 0 && count < minimum.max(1) {
                break;
            }
            total += count;
            // Remove the trustable region from A and its partners from B, then look again.
            refill(&mut self.used_b, std::iter::repeat_n(false, units_b.len()));
            for x in start..end {
                if self.matched[x] {
                    self.used_b[self.partner[x]] = true;
                }
            }
            retain_by_position(&mut self.rest_a, |x| !(start..end).contains(&x));
            let used_b = &self.used_b;
            retain_by_position(&mut self.rest_b, |y| !used_b[y]);
            if self.rest_a.is_empty() || self.rest_b.is_empty() || config.max_passes == 1 {
                break;
            }
        }
        result.trustable = total;
        (result.resemblance, result.contained) = rates(total, len_a, len_b);
        result.similar = config.passes((result.resemblance, result.contained));
        result
    }
}

/// Keeps the items whose position passes `keep`.
fn retain_by_position<T>(items: &mut Vec<T>, keep: impl Fn(usize) -> bool) {
    let mut position = 0;
    items.retain(|_| {
        position += 1;
        keep(position - 1)
    });
}

/// Replaces the contents of `buffer` with `items`, keeping its allocation.
fn refill<T>(buffer: &mut Vec<T>, items: impl IntoIterator<Item = T>) {
    buffer.clear();
    buffer.extend(items);
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
        assert_eq!(
            (same.trustable, same.resemblance, same.similar),
            (1000, 1.0, true)
        );

        // Different template around the same article, a few words changed.
        let mut copy = text(&mut rng, 150);
        let mut edited = article.clone();
        for i in (0..1000).step_by(97) {
            edited[i] = 9999;
        }
        copy.extend(&edited);
        copy.extend(text(&mut rng, 150));
        let near = verify(&article, &copy, &config);
        assert!(
            near.similar && near.contained > 0.9 && !near.rejected_by_skeleton,
            "{near:?}"
        );

        let other = text(&mut rng, 1000);
        let far = verify(&article, &other, &config);
        assert!(
            far.rejected_by_skeleton && !far.similar && far.lcs == 0,
            "{far:?}"
        );
    }

    #[test]
    fn moved_paragraphs_are_found_by_later_passes() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let paragraphs: Vec<Vec<u64>> = (0..5).map(|_| text(&mut rng, 200)).collect();
        let a: Vec<u64> = paragraphs.concat();
        let b: Vec<u64> = [4, 1, 2, 0, 3]
            .iter()
            .flat_map(|&i| paragraphs[i].clone())
            .collect();
        let one_pass = verify(
            &a,
            &b,
            &VerifyConfig {
                max_passes: 1,
                ..VerifyConfig::default()
            },
        );
        let iterated = verify(&a, &b, &VerifyConfig::default());
        assert!(
            iterated.trustable > one_pass.trustable,
            "{one_pass:?} {iterated:?}"
        );
        assert!(
            iterated.trustable >= 900 && iterated.passes >= 3,
            "{iterated:?}"
        );
    }

    #[test]
    fn containment_of_a_short_page_in_a_long_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let short = text(&mut rng, 300);
        let mut long = text(&mut rng, 1500);
        long.splice(700..700, short.iter().copied());
        let v = verify(&short, &long, &VerifyConfig::default());
        assert!(
            v.contained > 0.99 && v.resemblance < 0.28 && v.similar,
            "{v:?}"
        );
    }

    #[test]
    fn a_reused_verifier_answers_as_a_fresh_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut verifier = Verifier::new(VerifyConfig::default());
        let base = text(&mut rng, 800);
        for round in 0..20 {
            // Pairs of varying sizes and likeness, so buffers shrink and grow between calls.
            let size = 50 + (round * 137) % 700;
            let mut copy = base[..size].to_vec();
            for i in (round % 7..size).step_by(3 + round % 5) {
                copy[i] = rng.random_range(0..5000);
            }
            copy.rotate_left(size / (2 + round % 3));
            let (a, b) = if round % 2 == 0 {
                (&base[..size], &copy[..])
            } else {
                (&copy[..], &base[..])
            };
            assert_eq!(
                verifier.verify(a, b),
                verify(a, b, &VerifyConfig::default()),
                "round {round}"
            );
        }
    }

    #[test]
    fn empty_documents() {
        let v = verify(&[], &[1, 2, 3], &VerifyConfig::default());
        assert!(!v.similar && v.trustable == 0);
        let v = verify(&[1], &[1], &VerifyConfig::default());
        assert!(v.similar, "{v:?}");
    }

    proptest::proptest! {
        /// The fast verdict is the full verification's, on pairs from unrelated to copied
        /// with edits and moved paragraphs, at thresholds from lax to strict.
        #[test]
        fn similarity_is_the_verifications_verdict(
            seed in 0u64..1_000_000,
            size_a in 0usize..400,
            size_b in 0usize..400,
            shared in 0usize..400,
            edits in 1usize..20,
            vocabulary in 2u64..3000,
            min_resemblance in 0.05f64..0.9,
            min_containment in 0.3f64..1.0,
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let common: Vec<u64> = (0..shared).map(|_| rng.random_range(0..vocabulary)).collect();
            let mut a: Vec<u64> = (0..size_a).map(|_| rng.random_range(0..vocabulary)).collect();
            let mut b: Vec<u64> = (0..size_b).map(|_| rng.random_range(0..vocabulary)).collect();
            let at = rng.random_range(0..=a.len());
            a.splice(at..at, common.iter().copied());
            let mut edited = common.clone();
            for i in (0..edited.len()).step_by(edits) {
                edited[i] = rng.random_range(0..vocabulary);
            }
            let half = edited.len() / 2;
            edited.rotate_left(half);
            let at = rng.random_range(0..=b.len());
            b.splice(at..at, edited);
            let config = VerifyConfig { min_resemblance, min_containment, ..VerifyConfig::default() };
            let mut verifier = Verifier::new(config);
            let full = verify(&a, &b, &config);
            proptest::prop_assert_eq!(
                verifier.similarity(&a, &b),
                full.similar.then_some(full.resemblance)
            );
            // The same page against other candidates, and another page after it (A's window
            // set is kept between calls with the same A, and only then).
            let shorter = &b[..b.len() / 2];
            for (a, b) in [(&a[..], shorter), (&a[..], &a[..]), (&b[..], &a[..]), (shorter, &b[..])] {
                let full = verify(a, b, &config);
                proptest::prop_assert_eq!(
                    verifier.similarity(a, b),
                    full.similar.then_some(full.resemblance)
                );
            }
        }
    }
}
