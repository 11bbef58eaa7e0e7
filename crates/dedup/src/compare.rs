//! Two pages side by side: everything measured between them, and the dedup stage's verdict
//! on the second with only the first kept (what `nearcrawl compare` prints).

use std::sync::Arc;

use nearcrawl_hamming_index::IndexError;
use nearcrawl_verify::{Verification, verify};
use serde::{Serialize, Serializer};

use crate::analyze::{Analyzer, Extracted, PageAnalysis};
use crate::config::DedupStageConfig;
use crate::stage::{DedupStage, Likeness, MemoryOriginals};

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
    /// The dedup stage's verdict on the second page with the first kept; a second page it
    /// would keep as unique is reported as `distinct`.
    #[serde(serialize_with = "pair_verdict")]
    pub verdict: Likeness,
    #[serde(skip)]
    /// The full verification, for explanations.
    pub verification: Option<Verification>,
    /// Each page's [`PageAnalysis::little_text`]: too little text of its own to compare, so
    /// judged by exact key only.
    pub little_text: (Option<usize>, Option<usize>),
    /// Blocks of each page that extraction set aside as boilerplate: what a crawl's host
    /// template model would also learn from the host's other pages, which `compare` lacks.
    #[serde(skip)]
    pub boilerplate_blocks: (usize, usize),
}

fn pair_verdict<S: Serializer>(verdict: &Likeness, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match verdict {
        Likeness::Unique => "distinct",
        Likeness::Exact => "exact",
        Likeness::Near => "near",
    })
}

impl Analyzer {
    /// Measures two analysed pages: distance, exact key, shingles, LCS rates. The verdict
    /// is the one a dedup stage would give `b` with only `a` kept.
    pub fn measure(&self, a: &PageAnalysis, b: &PageAnalysis, verdict: Likeness) -> Comparison {
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
            little_text: (a.little_text, b.little_text),
            boilerplate_blocks: (boilerplate(a), boilerplate(b)),
        }
    }
}

/// Blocks of a page extraction set aside as boilerplate.
fn boilerplate(page: &PageAnalysis) -> usize {
    page.extraction
        .as_ref()
        .map_or(0, |e| e.blocks.iter().filter(|b| !b.in_content).count())
}

/// Compares two pages as the crawl would see them: a fresh dedup stage keeps `a`, then
/// judges `b`. Each page counts as a host of its own: two pages are too few to learn a
/// template from (the crawl's template model needs a host's pages to repeat a block).
/// Fails only when no index design supports the configured distance.
pub fn compare(
    analyzer: Arc<Analyzer>,
    a: Extracted,
    b: Extracted,
) -> Result<Comparison, IndexError> {
    let mut originals = MemoryOriginals::default();
    let config = DedupStageConfig::default();
    let mut stage = DedupStage::new(Arc::clone(&analyzer), config, [], [], 1 << 63)?;
    let Ok(first) = stage.judge("first", a, &originals);
    originals.keep(stage.admit(0, "first", &first));
    let Ok(second) = stage.judge("second", b, &originals);
    Ok(analyzer.measure(&first.analysis, &second.analysis, second.verdict))
}
