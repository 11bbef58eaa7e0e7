//! The stage's fixed settings: how sentence fingerprints are taken and cut off, and when a
//! block is a host's template. A module of its own, importing nothing of the crate, so that
//! the analysis (which takes a page's fingerprints) and the stage (which indexes them) both
//! use it without importing each other.

use nearcrawl_extract::TemplateConfig;
use nearcrawl_verify::{FrequencyCutoff, SentenceConfig};

/// Sentence fingerprints as the crawler takes them: the paper's X, m, Y, Z with 4 rotations
/// instead of 16, which keeps the in-memory index near 30 fingerprints per page.
pub fn stage_sentence_config() -> SentenceConfig {
    SentenceConfig {
        rotations: 4,
        per_fingerprint: 2,
        min_cover_chars: 60,
        ..SentenceConfig::default()
    }
}

/// When the stage's sentence fingerprints are too common to make candidates: the paper's
/// cut-off.
pub fn stage_sentence_cutoff() -> FrequencyCutoff {
    FrequencyCutoff::default()
}

/// The host template model as the stage keeps it: a block is the host's template once it is
/// on most of its pages, and on 3 at least (a story copied once on its own host is not).
pub fn stage_template_config() -> TemplateConfig {
    TemplateConfig {
        min_pages: 2,
        min_block_pages: 3,
        min_share: 0.6,
        ..TemplateConfig::default()
    }
}
