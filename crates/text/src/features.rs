//! Tokens to weighted features for simhash and to token hashes for shingling.

use std::collections::HashMap;

use nearcrawl_fingerprint::{Weight, feature_hash};

use crate::idf::{IdfTable, JiebaIdf};
use crate::stop_words::is_stop_word;
use crate::tokenize::{Token, TokenKind};

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
    fn idf(&self, token: &Token) -> f32 {
        match (self, token.kind) {
            (Weighting::TermFrequency, _) => 1.0,
            (Weighting::TfIdf, TokenKind::Han) => JiebaIdf::get().idf(&token.text),
            (Weighting::TfIdf, TokenKind::Word) => 1.0,
            (Weighting::Learned(table), _) => table.idf(&token.text),
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
pub fn content_tokens<'a>(tokens: &'a [Token], config: &FeatureConfig) -> Vec<&'a Token> {
    tokens
        .iter()
        .filter(|t| !(config.drop_stop_words && is_stop_word(&t.text)))
        .collect()
}

/// Distinct weighted features of a token stream, heaviest first (ties by text).
pub fn weighted_features(
    tokens: &[Token],
    config: &FeatureConfig,
    weighting: &Weighting,
) -> Vec<WeightedFeature> {
    let kept = content_tokens(tokens, config);
    let idfs: Vec<f32> = kept.iter().map(|t| weighting.idf(t)).collect();
    // text -> (term frequency, idf)
    let mut counts: HashMap<String, (u32, f32)> = HashMap::new();
    let mut add = |text: String, idf: f32| {
        let entry = counts.entry(text).or_insert((0, idf));
        entry.0 += 1;
    };
    if config.words {
        for (token, idf) in kept.iter().zip(&idfs) {
            add(token.text.clone(), *idf);
        }
    }
    if config.word_ngrams >= 2 {
        let n = config.word_ngrams;
        for (window, idf_window) in kept.windows(n).zip(idfs.windows(n)) {
            let text = window
                .iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            add(text, idf_window.iter().sum::<f32>() / n as f32);
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
        for window in han.windows(n) {
            add(format!("#{}", window.iter().collect::<String>()), mean_idf);
        }
    }
    let mut features: Vec<WeightedFeature> = counts
        .into_iter()
        .map(|(text, (tf, idf))| WeightedFeature {
            hash: feature_hash(text.as_bytes()),
            weight: (1.0 + (tf as f32).ln()) * idf,
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

/// The features as simhash input: `(hash, weight)` with weights saturated to [`Weight::MAX`].
pub fn simhash_input(features: &[WeightedFeature]) -> impl Iterator<Item = (u64, Weight)> + '_ {
    features
        .iter()
        .map(|f| (f.hash, Weight::saturating(f.weight)))
}

/// One hash per content token, in order: the input of shingling.
pub fn token_hashes(tokens: &[Token], config: &FeatureConfig) -> Vec<u64> {
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
