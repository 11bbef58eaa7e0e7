//! Seeded text: pseudo-words with a Zipf distribution, so pages read like prose to a tokenizer
//! (frequent short words, a long tail) and distinct articles share no more than real ones do.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "ch",
    "st", "tr", "pl", "gr", "sh", "th",
];
const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "ou", "io"];
const CODAS: &[&str] = &["", "", "", "n", "r", "s", "t", "l", "nd", "st", "m"];

/// A seeded writer of paragraphs.
#[derive(Debug, Clone)]
pub struct Writer {
    rng: ChaCha8Rng,
    vocabulary: Vec<String>,
    /// Cumulative Zipf weights of `vocabulary`.
    cumulative: Vec<f64>,
}

impl Writer {
    /// A writer with a vocabulary of `size` words, seeded.
    pub fn new(seed: u64, size: usize) -> Writer {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut vocabulary = Vec::with_capacity(size);
        let mut seen = std::collections::HashSet::new();
        while vocabulary.len() < size.max(1) {
            let syllables =
                1 + usize::from(vocabulary.len() > 60) + usize::from(vocabulary.len() > 600);
            let mut word = String::new();
            for _ in 0..rng.random_range(1..=syllables) {
                word.push_str(ONSETS[rng.random_range(0..ONSETS.len())]);
                word.push_str(VOWELS[rng.random_range(0..VOWELS.len())]);
                word.push_str(CODAS[rng.random_range(0..CODAS.len())]);
            }
            if seen.insert(word.clone()) {
                vocabulary.push(word);
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=vocabulary.len())
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Writer {
            rng,
            vocabulary,
            cumulative,
        }
    }

    fn word(&mut self) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let x = self.rng.random_range(0.0..total);
        let i = self
            .cumulative
            .partition_point(|c| *c < x)
            .min(self.vocabulary.len() - 1);
        &self.vocabulary[i]
    }

    /// A sentence of `min..=max` words, capitalised, with a full stop.
    pub fn sentence(&mut self, min: usize, max: usize) -> String {
        let n = self.rng.random_range(min..=max);
        let mut out = String::new();
        for i in 0..n {
            let word = self.word().to_string();
            if i == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    out.extend(first.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(&word);
            }
        }
        out.push('.');
        out
    }

    /// Paragraph number `n` of this vocabulary: the same text for the same `n` whatever was
    /// written before (the writer's randomness is reseeded from `n`).
    pub fn numbered_paragraph(&mut self, n: u64) -> String {
        self.rng = ChaCha8Rng::seed_from_u64(n);
        self.paragraph()
    }

    /// A paragraph of 3 to 5 sentences.
    pub fn paragraph(&mut self) -> String {
        let n = self.rng.random_range(3..=5);
        (0..n)
            .map(|_| self.sentence(8, 18))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// An article: a title and 6 to 9 paragraphs.
    pub fn article(&mut self) -> Article {
        let title = self.sentence(4, 7).trim_end_matches('.').to_string();
        let n = self.rng.random_range(6..=9);
        Article {
            title,
            paragraphs: (0..n).map(|_| self.paragraph()).collect(),
        }
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n.max(1))
    }

    /// Replaces about `share` of the words of `text` with other words.
    pub fn change_words(&mut self, text: &str, share: f64) -> String {
        text.split(' ')
            .map(|w| {
                if self.rng.random_bool(share.clamp(0.0, 1.0)) {
                    self.word().to_string()
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A generated article.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    /// Its title.
    pub title: String,
    /// Its paragraphs.
    pub paragraphs: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numbered_paragraph_does_not_depend_on_what_was_written_before() {
        let mut fresh = Writer::new(7, 500);
        let mut used = Writer::new(7, 500);
        for _ in 0..5 {
            used.paragraph();
        }
        assert_eq!(fresh.numbered_paragraph(42), used.numbered_paragraph(42));
        assert_ne!(fresh.numbered_paragraph(42), fresh.numbered_paragraph(43));
        let other_vocabulary = Writer::new(8, 500).numbered_paragraph(42);
        assert_ne!(fresh.numbered_paragraph(42), other_vocabulary);
    }
}
