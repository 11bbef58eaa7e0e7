//! Tokens to weighted features for simhash and to token hashes for shingling.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use nearcrawl_fingerprint::{Weight, feature_hash};

use crate::idf::{IdfTable, JiebaIdf};
use crate::stop_words::is_stop_word_at;
use crate::tokenize::{Token, TokenKind, Tokens};

/// Which features a document contributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureConfig {
    /// Single words.
    pub words: bool,
    /// Word n-grams of this length (0 or 1: none). Captures word order.
    pub word_ngrams: usize,
    /// Character n-grams of this length over Han tokens (0: none). Makes Chinese robust to
    /// segmentation differences.
    pub han_char_ngrams: usize,
    /// Drop English and Chinese stop words before building features.
    pub drop_stop_words: bool,
}

impl Default for FeatureConfig {
    /// Words and word bigrams, stop words dropped. Issue 5's labelled web is where this
    /// default is measured against the alternatives.
    fn default() -> Self {
        FeatureConfig {
            words: true,
            word_ngrams: 2,
            han_char_ngrams: 0,
            drop_stop_words: true,
        }
    }
}

/// Where term weights come from.
#[derive(Clone, Debug, Default)]
pub enum Weighting {
    /// Every feature weighs its (sublinear) term frequency.
    TermFrequency,
    /// tf-idf: Chinese words from jieba's built-in table, other words from a learned table
    /// when given (else IDF 1).
    #[default]
    TfIdf,
    /// tf-idf with this learned table for every word, Chinese included.
    Learned(IdfTable),
}

impl Weighting {
    fn idf(&self, token: Token<'_>) -> f32 {
        match (self, token.kind) {
            (Weighting::TermFrequency, _) => 1.0,
            (Weighting::TfIdf, TokenKind::Han) => JiebaIdf::get().idf(token.text),
            (Weighting::TfIdf, TokenKind::Word) => 1.0,
            (Weighting::Learned(table), _) => table.idf(token.text),
        }
    }
}

/// A feature: its hash (xxh3 of its text) and weight.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedFeature {
    /// The feature's text (a word, `w1 w2`, or a character n-gram).
    pub text: String,
    /// xxh3 of `text`.
    pub hash: u64,
    /// `(1 + ln tf) * idf`; for n-grams, idf is the mean of its words'.
    pub weight: f32,
}

/// The tokens features are built from, after stop-word removal when configured.
pub fn content_tokens<'a>(tokens: &'a Tokens, config: &FeatureConfig) -> Vec<Token<'a>> {
    if !config.drop_stop_words {
        return tokens.iter().collect();
    }
    let buffer = tokens.joined();
    let mut kept = Vec::with_capacity(tokens.len());
    kept.extend(
        tokens
            .placed()
            .filter(|(start, t)| !is_stop_word_at(buffer, *start, t.text.len()))
            .map(|(_, t)| t),
    );
    kept
}

/// Distinct weighted features of a token stream, heaviest first (ties by text).
pub fn weighted_features(
    tokens: &Tokens,
    config: &FeatureConfig,
    weighting: &Weighting,
) -> Vec<WeightedFeature> {
    let mut texts = Vec::new();
    let mut features: Vec<WeightedFeature> =
        count_features(tokens, config, weighting, Some(&mut texts))
            .into_iter()
            .zip(texts)
            .map(|(f, text)| WeightedFeature {
                hash: f.hash,
                weight: f.weight(),
                text,
            })
            .collect();
    features.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then_with(|| a.text.cmp(&b.text))
    });
    features
}

/// The simhash input of a token stream: the hash and weight of each feature of
/// [`weighted_features`] (the same features, the same weights), in no particular order and
/// without their text, which a crawl never reads.
pub fn feature_weights(
    tokens: &Tokens,
    config: &FeatureConfig,
    weighting: &Weighting,
) -> Vec<(u64, Weight)> {
    count_features(tokens, config, weighting, None)
        .into_iter()
        .map(|f| (f.hash, Weight::saturating(f.weight())))
        .collect()
}

/// A feature being counted.
struct Counted {
    hash: u64,
    tf: u32,
    idf: f32,
}

impl Counted {
    /// `(1 + ln tf) x idf`.
    fn weight(&self) -> f32 {
        if self.tf == 1 {
            // ln 1 is exactly 0: most features occur once, and need no logarithm.
            return self.idf;
        }
        (1.0 + (self.tf as f32).ln()) * self.idf
    }
}

/// Each distinct feature of a token stream (by the xxh3 hash of its text) with its term
/// frequency and idf, in order of first appearance; their texts, in the same order, pushed
/// to `texts` when given.
fn count_features(
    tokens: &Tokens,
    config: &FeatureConfig,
    weighting: &Weighting,
    mut texts: Option<&mut Vec<String>>,
) -> Vec<Counted> {
    let kept = content_tokens(tokens, config);
    let idfs: Vec<f32> = kept.iter().map(|t| weighting.idf(*t)).collect();
    let mut counted: Vec<Counted> = Vec::with_capacity(kept.len() * 2);
    // Feature hashes come from the page's text: a seeded hasher, so no page can be written
    // to make them collide in the table.
    let mut at: HashMap<u64, usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(kept.len() * 2, Default::default());
    let mut add = |text: &str, idf: f32| {
        let hash = feature_hash(text.as_bytes());
        match at.entry(hash) {
            Entry::Occupied(e) => counted[*e.get()].tf += 1,
            Entry::Vacant(e) => {
                e.insert(counted.len());
                counted.push(Counted { hash, tf: 1, idf });
                if let Some(texts) = texts.as_deref_mut() {
                    texts.push(text.to_owned());
                }
            }
        }
    };
    if config.words {
        for (token, idf) in kept.iter().zip(&idfs) {
            add(token.text, *idf);
        }
    }
    if config.word_ngrams >= 2 {
        let n = config.word_ngrams;
        let mut text = String::new();
        for (window, idf_window) in kept.windows(n).zip(idfs.windows(n)) {
            text.clear();
            for (k, token) in window.iter().enumerate() {
                if k > 0 {
                    text.push(' ');
                }
                text.push_str(token.text);
            }
            add(&text, idf_window.iter().sum::<f32>() / n as f32);
        }
    }
    if config.han_char_ngrams >= 1 {
        let n = config.han_char_ngrams;
        let han: Vec<char> = kept
            .iter()
            .filter(|t| t.kind == TokenKind::Han)
            .flat_map(|t| t.text.chars())
            .collect();
        let mean_idf = {
            let han_idfs: Vec<f32> = kept
                .iter()
                .zip(&idfs)
                .filter(|(t, _)| t.kind == TokenKind::Han)
                .map(|(_, i)| *i)
                .collect();
            if han_idfs.is_empty() {
                1.0
            } else {
                han_idfs.iter().sum::<f32>() / han_idfs.len() as f32
            }
        };
        let mut text = String::new();
        for window in han.windows(n) {
            text.clear();
            text.push('#');
            text.extend(window);
            add(&text, mean_idf);
        }
    }
    counted
}

/// The features as simhash input: `(hash, weight)` with weights saturated to [`Weight::MAX`].
pub fn simhash_input(features: &[WeightedFeature]) -> impl Iterator<Item = (u64, Weight)> + '_ {
    features
        .iter()
        .map(|f| (f.hash, Weight::saturating(f.weight)))
}

/// One hash per content token, in order: the input of shingling.
pub fn token_hashes(tokens: &Tokens, config: &FeatureConfig) -> Vec<u64> {
    content_tokens(tokens, config)
        .into_iter()
        .map(|t| feature_hash(t.text.as_bytes()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::tokenize;

    fn texts(features: &[WeightedFeature]) -> Vec<&str> {
        features.iter().map(|f| f.text.as_str()).collect()
    }

    proptest::proptest! {
        /// The crawl's path (hashes and weights only) gives the simhash of the full features,
        /// for every feature configuration.
        #[test]
        fn feature_weights_are_the_features(
            words in proptest::collection::vec("(the|a|river|stone|valley|3.5|北京|大学|学习|网页)", 0..60),
            ngrams in 0usize..4,
            han in 0usize..3,
            drop_stop_words: bool,
        ) {
            let tokens = tokenize(&words.join(" "));
            let config = FeatureConfig { words: true, word_ngrams: ngrams, han_char_ngrams: han, drop_stop_words };
            for weighting in [Weighting::TermFrequency, Weighting::TfIdf] {
                let full = weighted_features(&tokens, &config, &weighting);
                let mut fast = feature_weights(&tokens, &config, &weighting);
                let mut reference: Vec<(u64, Weight)> = simhash_input(&full).collect();
                fast.sort_unstable();
                reference.sort_unstable();
                proptest::prop_assert_eq!(&fast, &reference);
                proptest::prop_assert_eq!(
                    nearcrawl_fingerprint::simhash(fast),
                    nearcrawl_fingerprint::simhash(reference)
                );
            }
        }
    }

    #[test]
    fn words_and_bigrams_without_stop_words() {
        let tokens = tokenize("The river and the river valley");
        let features = weighted_features(
            &tokens,
            &FeatureConfig::default(),
            &Weighting::TermFrequency,
        );
        assert_eq!(
            texts(&features),
            ["river", "river river", "river valley", "valley"]
        );
        assert!((features[0].weight - (1.0 + 2f32.ln())).abs() < 1e-6);
        assert_eq!(features[3].weight, 1.0);
        assert_eq!(features[0].hash, feature_hash(b"river"));
    }

    #[test]
    fn configurable_shapes() {
        let tokens = tokenize("网页去重 the crawler");
        let only_chars = FeatureConfig {
            words: false,
            word_ngrams: 0,
            han_char_ngrams: 2,
            drop_stop_words: false,
        };
        let features = weighted_features(&tokens, &only_chars, &Weighting::TermFrequency);
        assert_eq!(texts(&features), ["#去重", "#网页", "#页去"]);
        let trigrams = FeatureConfig {
            words: false,
            word_ngrams: 3,
            han_char_ngrams: 0,
            drop_stop_words: false,
        };
        let features =
            weighted_features(&tokenize("a b c d"), &trigrams, &Weighting::TermFrequency);
        assert_eq!(texts(&features), ["a b c", "b c d"]);
    }

    #[test]
    fn idf_weights_rare_words_up() {
        let tokens = tokenize("中国 劳动防护");
        let config = FeatureConfig {
            word_ngrams: 0,
            ..FeatureConfig::default()
        };
        let features = weighted_features(&tokens, &config, &Weighting::TfIdf);
        assert_eq!(texts(&features), ["劳动防护", "中国"]);

        let mut table = IdfTable::new();
        table.add_document(["common", "rare"]);
        table.add_document(["common"]);
        let features = weighted_features(
            &tokenize("common rare"),
            &config,
            &Weighting::Learned(table),
        );
        assert_eq!(texts(&features), ["rare", "common"]);
    }
}
