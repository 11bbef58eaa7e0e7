//! Text to normalised tokens: Unicode words for space-delimited scripts, jieba for Han.

use std::sync::OnceLock;

use jieba_rs::Jieba;
use unicode_normalization::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

/// What a token is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A word of a space-delimited script (Latin, Cyrillic, Greek, ...), or a number.
    Word,
    /// A word of Han characters, as jieba cut it.
    Han,
}

/// One normalised token.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    /// NFKC-normalised, lower-cased text.
    pub text: String,
    /// Which segmenter produced it.
    pub kind: TokenKind,
}

/// The process-wide jieba segmenter. Loading its dictionary takes about a third of a second,
/// so it is loaded once, on first use, and shared by every thread.
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// Whether `c` is a Han ideograph (CJK Unified Ideographs and their extensions, compatibility
/// ideographs).
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF | 0x2A700..=0x2EBEF | 0x30000..=0x3134F)
}

/// NFKC normalisation and lower-casing (full-width letters become ASCII, ligatures split).
pub fn normalize(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let composed: String = text.nfkc().collect();
    composed.to_lowercase()
}

/// Splits text into tokens: Unicode word boundaries (UAX #29) for runs of other scripts, jieba
/// (with its HMM for unknown words) for runs of Han characters. Punctuation and whitespace
/// are dropped; stop words are kept (features decide whether to use them).
pub fn tokenize(text: &str) -> Vec<Token> {
    let normalized = normalize(text);
    let mut tokens = Vec::with_capacity(normalized.len() / 6);
    let mut rest = normalized.as_str();
    while !rest.is_empty() {
        let han_start = rest.find(is_han).unwrap_or(rest.len());
        for word in rest[..han_start].unicode_words() {
            tokens.push(Token {
                text: word.to_owned(),
                kind: TokenKind::Word,
            });
        }
        rest = &rest[han_start..];
        let han_end = rest.find(|c: char| !is_han(c)).unwrap_or(rest.len());
        if han_end > 0 {
            for token in jieba().cut(&rest[..han_end], true) {
                tokens.push(Token {
                    text: token.word.to_owned(),
                    kind: TokenKind::Han,
                });
            }
        }
        rest = &rest[han_end..];
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn words_are_normalised_and_punctuation_dropped() {
        assert_eq!(
            texts("The Crawler's queue—don't panic! 3.5 GB, ok?"),
            [
                "the",
                "crawler's",
                "queue",
                "don't",
                "panic",
                "3.5",
                "gb",
                "ok"
            ]
        );
        assert_eq!(
            texts("ＦＵＬＬ　ｗｉｄｔｈ ﬁle Straße ÉCOLE"),
            ["full", "width", "file", "straße", "école"]
        );
        assert!(texts(" \n\t—!? ").is_empty());
    }

    #[test]
    fn han_runs_go_through_jieba() {
        let tokens = tokenize("我们在北京大学学习网页去重，Simhash很快。");
        let got: Vec<(&str, TokenKind)> =
            tokens.iter().map(|t| (t.text.as_str(), t.kind)).collect();
        assert!(got.contains(&("北京大学", TokenKind::Han)), "{got:?}");
        assert!(got.contains(&("simhash", TokenKind::Word)), "{got:?}");
        assert!(got.contains(&("学习", TokenKind::Han)), "{got:?}");
        assert!(
            !got.iter()
                .any(|(t, _)| t.contains('，') || t.contains('。')),
            "{got:?}"
        );
        let joined: String = tokens
            .iter()
            .filter(|t| t.kind == TokenKind::Han)
            .map(|t| t.text.as_str())
            .collect();
        assert_eq!(
            joined, "我们在北京大学学习网页去重很快",
            "jieba keeps every character"
        );
    }

    #[test]
    fn han_detection() {
        assert!(is_han('中') && is_han('𠀀') && !is_han('a') && !is_han('。') && !is_han('カ'));
    }
}
