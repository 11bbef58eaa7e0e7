//! Two analyses to a verdict.

use nearcrawl_verify::{Verification, verify};
use serde::Serialize;

use crate::analyze::{Analyzer, PageAnalysis};

/// Whether two pages are the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Same tokens in the same order.
    Exact,
    /// Near-duplicates: the LCS verification says similar (or, with verification off, the
    /// simhashes are within the configured distance).
    Near,
    /// Different pages.
    Distinct,
}

/// Everything a comparison measured.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Hamming distance of the simhashes.
    pub distance: u32,
    /// The simhashes are within the configured distance.
    pub within_distance: bool,
    /// The exact-duplicate keys are equal.
    pub exact_key_equal: bool,
    /// Jaccard resemblance of the word shingles.
    pub shingle_resemblance: f64,
    /// Share of the smaller shingle set contained in the other.
    pub shingle_containment: f64,
    /// LCS resemble rate r (None when verification is off).
    pub lcs_resemblance: Option<f64>,
    /// LCS contain rate c.
    pub lcs_containment: Option<f64>,
    /// The verification was decided by the skeleton bound alone.
    pub rejected_by_skeleton: Option<bool>,
    /// The verdict.
    pub verdict: Verdict,
    #[serde(skip)]
    /// The full verification, for explanations.
    pub verification: Option<Verification>,
}

impl Analyzer {
    /// Compares two analysed pages.
    pub fn compare(&self, a: &PageAnalysis, b: &PageAnalysis) -> Comparison {
        let config = self.config();
        let distance = a.simhash.distance(b.simhash);
        let within_distance = distance <= config.max_distance;
        let exact_key_equal = a.exact_key == b.exact_key && !a.tokens.is_empty();
        let (sa, sb) = (a.shingles(config), b.shingles(config));
        let shingle_resemblance = sa.resemblance(&sb);
        let shingle_containment = if sa.len() <= sb.len() {
            sa.containment_in(&sb)
        } else {
            sb.containment_in(&sa)
        };
        let verification = config
            .verify
            .then(|| verify(&a.units(), &b.units(), &config.verify_config));
        let verdict = if exact_key_equal {
            Verdict::Exact
        } else if verification.as_ref().map_or(within_distance, |v| v.similar) {
            Verdict::Near
        } else {
            Verdict::Distinct
        };
        Comparison {
            distance,
            within_distance,
            exact_key_equal,
            shingle_resemblance,
            shingle_containment,
            lcs_resemblance: verification.as_ref().map(|v| v.resemblance),
            lcs_containment: verification.as_ref().map(|v| v.contained),
            rejected_by_skeleton: verification.as_ref().map(|v| v.rejected_by_skeleton),
            verdict,
            verification,
        }
    }
}
