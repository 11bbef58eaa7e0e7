//! Text to what fingerprints are made of: tokens, weighted features, exact-duplicate keys.
//!
//! - [`tokenize`]: NFKC normalisation and lower-casing, Unicode word segmentation (UAX #29)
//!   for space-delimited scripts, and jieba (loaded once per process, [`jieba`]) for runs of
//!   Han characters.
//! - [`is_stop_word`]: English and Chinese stop words.
//! - [`weighted_features`]: words, word n-grams and Han character n-grams
//!   ([`FeatureConfig`]) weighted by tf-idf ([`Weighting`]): jieba's built-in IDF table for
//!   Chinese ([`JiebaIdf`]) or one learned from a crawl's own pages ([`IdfTable`], saved
//!   and loaded as a text file).
//! - [`ExactKey`]: a 128-bit hash of the normalised token stream, so the same article with
//!   other punctuation, spacing or case is an exact duplicate.
//!
//! ```
//! use nearcrawl_text::{ExactKey, FeatureConfig, Weighting, tokenize, weighted_features, simhash_input};
//! use nearcrawl_fingerprint::simhash;
//!
//! let a = tokenize("Rivers carve valleys over thousands of years.");
//! let b = tokenize("RIVERS  carve valleys over thousands of years!");
//! assert_eq!(ExactKey::of(&a), ExactKey::of(&b));
//!
//! let features = weighted_features(&a, &FeatureConfig::default(), &Weighting::default());
//! assert_eq!(features.len(), 9); // rivers, carve, valleys, thousands, years and 4 bigrams
//! let fingerprint = simhash(simhash_input(&features));
//! # let _ = fingerprint;
//! ```

mod error;
mod exact;
mod features;
mod idf;
mod stop_words;
mod tokenize;

pub use crate::error::TextError;
pub use crate::exact::ExactKey;
pub use crate::features::{
    FeatureConfig, WeightedFeature, Weighting, content_tokens, feature_weights, simhash_input,
    token_hashes, weighted_features,
};
pub use crate::idf::{IdfTable, JiebaIdf};
pub use crate::stop_words::is_stop_word;
pub use crate::tokenize::{
    Token, TokenKind, Tokens, is_han, jieba, normalize, preload_jieba_for, token_unit_hashes,
    tokenize, unit_hashes,
};
