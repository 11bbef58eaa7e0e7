//! Document fingerprints for near-duplicate detection.
//!
//! This crate is the pure core of nearcrawl's dedup stage: it turns a stream of features (tokens,
//! word n-grams, anything hashable) into compact fingerprints whose similarity approximates the
//! similarity of the documents. It has no I/O, no async and no allocation in the hot path.
//!
//! - [`Fingerprint`]: a 64-bit simhash with [`Fingerprint::distance`] (Hamming distance).
//! - [`SimHasher`] / [`simhash`]: Charikar's simhash over weighted features (Manku et al. use it
//!   with f = 64 and k = 3 for web pages). The counter update runs in a SIMD-friendly kernel,
//!   checked bit for bit against [`simhash_reference`].
//! - [`ShingleSet`]: Broder's w-shingles with exact resemblance and containment.
//! - [`MinSketch`] (MIN_s), [`ModSketch`] (MOD_m) and [`super_shingles`]: sketches that estimate
//!   resemblance and containment from a few dozen hashes per document.
//!
//! ```
//! use nearcrawl_fingerprint::{simhash, feature_hash, Weight, ShingleSet};
//!
//! let a = "the quick brown fox jumps over the lazy dog near the river bank";
//! let b = "the quick brown fox jumps over the lazy dog near the river shore";
//! let fp = |text: &str| simhash(text.split(' ').map(|t| (feature_hash(t.as_bytes()), Weight::ONE)));
//! assert!(fp(a).distance(fp(b)) < 32);
//!
//! let tokens_a: Vec<&str> = a.split(' ').collect();
//! let tokens_b: Vec<&str> = b.split(' ').collect();
//! let sa = ShingleSet::from_tokens(&tokens_a, 4).unwrap();
//! let sb = ShingleSet::from_tokens(&tokens_b, 4).unwrap();
//! assert_eq!(sa.resemblance(&sb), 9.0 / 11.0);
//! ```

mod error;
mod fingerprint;
mod shingle;
mod simhash;
mod sketch;

pub use crate::error::FingerprintError;
pub use crate::fingerprint::Fingerprint;
pub use crate::shingle::ShingleSet;
pub use crate::simhash::{SimHasher, Weight, feature_hash, simhash, simhash_reference};
pub use crate::sketch::{MinSketch, ModSketch, super_shingles};
