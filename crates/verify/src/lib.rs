//! Content-level verification of near-duplicates, after Huang, Wang and Li (Peking
//! University, 2007).
//!
//! Fingerprints say "probably similar"; this crate measures similarity on the content itself.
//! A document is a sequence of units (hashes of words, or of characters for Chinese), so the
//! crate needs no tokenizer of its own.
//!
//! - [`sentence_fingerprints`] and [`CandidateIndex`] (step 1): up to 112 fingerprints per
//!   document from combinations of its long sentences' hashes; documents sharing one are
//!   candidates; fingerprints seen too often (templates, spam) are cut off. The index lives
//!   in memory, or one [`SentencePosting`] per fingerprint in a store.
//! - [`skeleton`] (step 2): keep only the parts of each document whose windows of S units
//!   occur in the other (Rabin-Karp rolling hash, O(N)). The shorter skeleton bounds the LCS,
//!   so clearly different pairs are rejected without computing it.
//! - [`lcs_pairs`] (step 3): Myers' O(ND) LCS in linear space, property-tested against
//!   [`lcs_len_reference`]; [`trustable_region`]: the longest central region whose edit
//!   slope stays under θ; [`verify`] runs it all, iterating for moved paragraphs, and reports
//!   the resemble rate r = T / (|A| + |B| - T) and contain rate c = T / min(|A|, |B|).
//!
//! ```
//! use nearcrawl_verify::{VerifyConfig, verify};
//!
//! let article: Vec<u64> = (0..500).collect();
//! let mut copy: Vec<u64> = (10_000..10_050).collect(); // another site's header
//! copy.extend(&article[..480]);                         // the article, slightly cut
//! let v = verify(&article, &copy, &VerifyConfig::default());
//! assert!(v.similar && v.contained > 0.95);
//!
//! let other: Vec<u64> = (20_000..20_500).collect();
//! let v = verify(&article, &other, &VerifyConfig::default());
//! assert!(!v.similar && v.rejected_by_skeleton);
//! ```

mod lcs;
mod sentences;
mod skeleton;
mod trustable;
mod verify;

pub use crate::lcs::{Lcs, lcs_len_reference, lcs_pairs};
pub use crate::sentences::{
    CandidateIndex, FrequencyCutoff, SentenceConfig, SentencePosting, SiteHash, rank_candidates,
    sentence_fingerprints, sentence_key, sentences,
};
pub use crate::skeleton::{WindowSet, skeleton, skeleton_len, window_hashes, window_hashes_into};
pub use crate::trustable::trustable_region;
pub use crate::verify::{Verification, Verifier, VerifyConfig, verify};
