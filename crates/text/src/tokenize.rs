//! Text to normalised tokens: Unicode words for space-delimited scripts, jieba for Han.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use jieba_rs::Jieba;
use nearcrawl_fingerprint::feature_hash;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};
use unicode_segmentation::UnicodeSegmentation;

/// What a token is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// A word of a space-delimited script (Latin, Cyrillic, Greek, ...), or a number.
    Word,
    /// A word of Han characters, as jieba cut it.
    Han,
}

/// One normalised token, as [`Tokens`] holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Token<'a> {
    /// NFKC-normalised, lower-cased text.
    pub text: &'a str,
    /// Which segmenter produced it.
    pub kind: TokenKind,
}

/// The tokens of a text, in order ([`tokenize`]). Their texts are kept in one buffer, each
/// followed by U+001F (the unit separator, which no word holds), so making them copies each
/// token once and allocates nothing per token, and the exact key hashes the buffer as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Every token's text followed by U+001F.
    joined: String,
    /// Where each token's text ends in `joined` (the next starts one byte later), and its kind.
    ends: Vec<(usize, TokenKind)>,
}

impl Tokens {
    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The tokens in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Token<'_>> + Clone + '_ {
        self.placed().map(|(_, token)| token)
    }

    /// The tokens in order, each with where its text starts in [`Tokens::joined`].
    pub(crate) fn placed(&self) -> impl ExactSizeIterator<Item = (usize, Token<'_>)> + Clone + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&(end, kind)| {
            let at = start;
            start = end + 1;
            (
                at,
                Token {
                    text: &self.joined[at..end],
                    kind,
                },
            )
        })
    }

    /// Every token's text followed by U+001F, in order: what [`crate::ExactKey`] hashes.
    pub(crate) fn joined(&self) -> &[u8] {
        self.joined.as_bytes()
    }

    /// Appends a token.
    fn push(&mut self, text: &str, kind: TokenKind) {
        self.joined.push_str(text);
        self.ends.push((self.joined.len(), kind));
        self.joined.push('\u{1f}');
    }
}

/// The process-wide jieba segmenter. Loading its dictionary takes about a third of a second,
/// so it is loaded once, on first use, and shared by every thread.
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// Starts loading jieba's dictionary ([`jieba`]) on a thread of its own if `text` holds Han
/// and the load has not started yet. A caller that sees pages before it segments them (corpus
/// dedup extracts a window of pages ahead of analysing them) calls it, so the load overlaps
/// other work instead of holding up the first page with Han text. Text without Han, or any
/// text once the load has started, costs one check.
pub fn preload_jieba_for(text: &str) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.load(Ordering::Relaxed) || find_han(text) == text.len() {
        return;
    }
    if !STARTED.swap(true, Ordering::Relaxed) {
        std::thread::spawn(|| {
            jieba();
        });
    }
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
    // One pass: ASCII copied and lower-cased in place, each non-ASCII run normalised (when
    // it needs it) and lower-cased. A capital sigma, whose lower case depends on the word
    // around it, sends the whole text the long way.
    let mut out = String::with_capacity(text.len());
    let mut composed = String::new();
    let all_runs = for_each_run(text, |piece, ascii| {
        if ascii {
            let from = out.len();
            out.push_str(piece);
            out[from..].make_ascii_lowercase();
            return true;
        }
        let run = if is_nfkc_quick(piece.chars()) == IsNormalized::Yes {
            piece
        } else {
            composed.clear();
            composed.extend(piece.nfkc());
            &composed
        };
        if run.contains('Σ') {
            return false;
        }
        for c in run.chars() {
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        }
        true
    });
    if all_runs {
        out
    } else {
        lowercase(&nfkc_by_runs(text))
    }
}

/// Cuts `text` where NFKC may cut it ([`nfkc_by_runs`]): `each(piece, is_ascii)` for runs of
/// ASCII and for runs of other characters, each of the latter with the ASCII character before
/// it. Stops when `each` says `false`, and says whether it went to the end.
fn for_each_run(text: &str, mut each: impl FnMut(&str, bool) -> bool) -> bool {
    let bytes = text.as_bytes();
    let mut done = 0;
    while done < text.len() {
        let Some(offset) = bytes[done..].iter().position(|b| !b.is_ascii()) else {
            return each(&text[done..], true);
        };
        let run_start = done + offset;
        // The ASCII character before the run goes with it.
        let start = if run_start > done {
            run_start - 1
        } else {
            run_start
        };
        if start > done && !each(&text[done..start], true) {
            return false;
        }
        let end = bytes[run_start..]
            .iter()
            .position(u8::is_ascii)
            .map_or(text.len(), |n| run_start + n);
        if !each(&text[start..end], false) {
            return false;
        }
        done = end;
    }
    true
}

/// NFKC of `text`, normalising only its runs of non-ASCII characters, each with the ASCII
/// character before it (a letter a combining mark follows): ASCII characters are starters,
/// never the second of a composition, and NFKC leaves them as they are, so the text can be
/// cut before any of them. A run the quick check finds normal already (curly quotes, accented
/// letters, Han: most of them) is copied as it is; one that is not (a no-break space, a
/// ligature) is normalised alone, not the whole text around it.
fn nfkc_by_runs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for_each_run(text, |run, ascii| {
        if ascii || is_nfkc_quick(run.chars()) == IsNormalized::Yes {
            out.push_str(run);
        } else {
            out.extend(run.nfkc());
        }
        true
    });
    out
}

/// `str::to_lowercase`, with runs of ASCII lower-cased a byte at a time (most of a page, even
/// one with curly quotes). Text with a capital sigma, whose lower case depends on its place
/// in the word, goes to the standard library whole.
fn lowercase(text: &str) -> String {
    if text.contains('Σ') {
        return text.to_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let from = out.len();
        out.push_str(&rest[..ascii]);
        out[from..].make_ascii_lowercase();
        rest = &rest[ascii..];
        let other = rest.find(|c: char| c.is_ascii()).unwrap_or(rest.len());
        for c in rest[..other].chars() {
            out.extend(c.to_lowercase());
        }
        rest = &rest[other..];
    }
    out
}

/// Splits text into tokens: Unicode word boundaries (UAX #29) for runs of other scripts, jieba
/// (with its HMM for unknown words) for runs of Han characters. Punctuation and whitespace
/// are dropped; stop words are kept (features decide whether to use them).
pub fn tokenize(text: &str) -> Tokens {
    let normalized = normalize(text);
    let mut tokens = Tokens {
        // Words and their separators take at most the text's length and a half (one-letter
        // words between single spaces take it all, plus one).
        joined: String::with_capacity(normalized.len() + normalized.len() / 2 + 1),
        // Room for a token in four bytes: one in six was too few for prose, grown by doubling.
        ends: Vec::with_capacity(normalized.len() / 4 + 1),
    };
    runs(&normalized, |run| match run {
        Run::Word(word) => tokens.push(word, TokenKind::Word),
        Run::Han(han) => {
            for token in jieba().cut(han, true) {
                tokens.push(token.word, TokenKind::Han);
            }
        }
    });
    tokens
}

/// A piece of normalised text: a word (UAX #29), or a run of Han characters.
enum Run<'a> {
    Word(&'a str),
    Han(&'a str),
}

/// Normalised text cut into its words and its runs of Han characters, in order.
fn runs<'a>(normalized: &'a str, mut each: impl FnMut(Run<'a>)) {
    let mut rest = normalized;
    while !rest.is_empty() {
        let han_start = find_han(rest);
        words(&rest[..han_start], |word| each(Run::Word(word)));
        rest = &rest[han_start..];
        let han_end = rest.find(|c: char| !is_han(c)).unwrap_or(rest.len());
        if han_end > 0 {
            each(Run::Han(&rest[..han_end]));
        }
        rest = &rest[han_end..];
    }
}

/// Where the first Han character of `text` starts (its length when there is none), as
/// `text.find(is_han)`: only a byte that can lead a Han character is decoded (all of them are
/// at U+3400 or above, so their UTF-8 leads with 0xE3 or more; the curly quotes and dashes of
/// English text lead with 0xE2), so text in other scripts is skipped a byte at a time.
fn find_han(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = bytes[from..].iter().position(|&b| b >= 0xE3) {
        let at = from + offset;
        // A byte of 0xE3 or more always leads a character in valid UTF-8.
        let c = text[at..].chars().next().expect("a character starts here");
        if is_han(c) {
            return at;
        }
        from = at + c.len_utf8();
    }
    text.len()
}

/// The hashes ([`feature_hash`]) LCS verification compares: one per word of `text` and one
/// per Han character, in order: what hashing [`tokenize`]'s tokens gives (a Han token split
/// into its characters), without segmenting Han text or keeping the tokens.
pub fn unit_hashes(text: &str) -> Vec<u64> {
    let normalized = normalize(text);
    let mut units = Vec::with_capacity(normalized.len() / 6);
    runs(&normalized, |run| match run {
        Run::Word(word) => units.push(feature_hash(word.as_bytes())),
        Run::Han(han) => units.extend(han_unit_hashes(han)),
    });
    units
}

/// The units of tokens already made ([`unit_hashes`] of their text): one hash per word, one
/// per character of a Han token.
pub fn token_unit_hashes(tokens: &Tokens) -> Vec<u64> {
    let mut units = Vec::with_capacity(tokens.len());
    for token in tokens.iter() {
        match token.kind {
            TokenKind::Han => units.extend(han_unit_hashes(token.text)),
            TokenKind::Word => units.push(feature_hash(token.text.as_bytes())),
        }
    }
    units
}

/// One hash per character of Han text.
fn han_unit_hashes(han: &str) -> impl Iterator<Item = u64> + '_ {
    han.chars()
        .map(|c| feature_hash(c.encode_utf8(&mut [0u8; 4]).as_bytes()))
}

/// The words of `text` (no Han in it) by UAX #29, as `unicode_words` finds them. ASCII
/// whitespace is a word boundary in every case, and never occurs inside a longer UTF-8
/// sequence, so the text is cut at the whitespace around each non-ASCII character: the piece
/// between goes to `unicode_words`, the all-ASCII text between such pieces to the fast path.
fn words<'a>(text: &'a str, mut each: impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let mut done = 0;
    while let Some(offset) = bytes[done..].iter().position(|b| !b.is_ascii()) {
        let at = done + offset;
        let start = bytes[done..at]
            .iter()
            .rposition(u8::is_ascii_whitespace)
            .map_or(done, |i| done + i + 1);
        let end = bytes[at..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .map_or(text.len(), |i| at + i);
        ascii_words(&text[done..start], &mut each);
        text[start..end].unicode_words().for_each(&mut each);
        done = end;
    }
    ascii_words(&text[done..], &mut each);
}

/// An ASCII byte's word-break properties (UAX #29, as far as ASCII has them), as bits.
mod class {
    /// `A-Z`, `a-z` (ALetter).
    pub(super) const LETTER: u8 = 1;
    /// `0-9` (Numeric).
    pub(super) const DIGIT: u8 = 2;
    /// `_` (ExtendNumLet).
    pub(super) const UNDERSCORE: u8 = 4;
    /// What words are made of (WB5, WB8 to WB10, WB13a, WB13b join any two of these).
    pub(super) const WORD: u8 = LETTER | DIGIT | UNDERSCORE;
    /// Joins two letters (WB6, WB7): `:` (MidLetter), `.` and `'` (MidNumLet, Single_Quote).
    pub(super) const JOINS_LETTERS: u8 = 8;
    /// Joins two digits (WB11, WB12): `,` and `;` (MidNum), `.` and `'` (MidNumLet).
    pub(super) const JOINS_DIGITS: u8 = 16;

    /// Each byte's bits; bytes outside ASCII have none (the text is ASCII).
    pub(super) const OF: [u8; 256] = {
        let mut table = [0u8; 256];
        let mut b = 0;
        while b < 128 {
            let c = b as u8;
            table[b] = if c.is_ascii_alphabetic() {
                LETTER
            } else if c.is_ascii_digit() {
                DIGIT
            } else {
                match c {
                    b'_' => UNDERSCORE,
                    b':' => JOINS_LETTERS,
                    b'.' | b'\'' => JOINS_LETTERS | JOINS_DIGITS,
                    b',' | b';' => JOINS_DIGITS,
                    _ => 0,
                }
            };
            b += 1;
        }
        table
    };
}

/// UAX #29 words of ASCII text (rules WB5 to WB13b; ASCII has no Extend, Format or Katakana),
/// those holding a letter or digit, as `unicode_words` gives them: one pass over the bytes,
/// each classified by a table.
fn ascii_words<'a>(text: &'a str, each: &mut impl FnMut(&'a str)) {
    use class::*;
    let bytes = text.as_bytes();
    let class = |i: usize| bytes.get(i).map_or(0, |&b| OF[usize::from(b)]);
    let mut i = 0;
    while i < bytes.len() {
        if OF[usize::from(bytes[i])] & WORD == 0 {
            i += 1;
            continue;
        }
        let start = i;
        // Which kinds of bytes the word holds: a word of underscores alone is no word.
        let mut holds = 0;
        loop {
            while let Some(&b) = bytes.get(i) {
                let c = OF[usize::from(b)];
                if c & WORD == 0 {
                    break;
                }
                holds |= c;
                i += 1;
            }
            // `i` is past the word's last byte: a middle character joins it to what follows
            // when the characters on both sides allow it (WB6, WB7; WB11, WB12).
            let middle = class(i);
            if middle == 0 {
                break;
            }
            let (before, after) = (class(i - 1), class(i + 1));
            let joins = (middle & JOINS_LETTERS != 0 && before & after & LETTER != 0)
                || (middle & JOINS_DIGITS != 0 && before & after & DIGIT != 0);
            if !joins {
                break;
            }
            i += 1;
        }
        if holds & (LETTER | DIGIT) != 0 {
            each(&text[start..i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        tokenize(text).iter().map(|t| t.text.into()).collect()
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

        /// The fast paths (ASCII words, NFKC quick check) agree with the reference: NFKC, lower
        /// case, `unicode_words` over the whole run.
        /// NFKC run by run is NFKC of the whole, whatever the combining marks, compatibility
        /// characters and scripts around the ASCII.
        #[test]
        fn nfkc_by_runs_is_nfkc(text in "[a-eA-E ,.\u{300}-\u{36f}\u{a0}-\u{17f}\u{1100}-\u{1112}\u{1161}-\u{1175}\u{11a8}-\u{11c2}\u{ac00}-\u{ac10}\u{fb00}-\u{fb06}\u{ff01}-\u{ff5e}\u{3099}\u{309a}\u{304b}-\u{3053}\u{0b3e}\u{0b47}\u{1e00}-\u{1e10}]{0,30}") {
            proptest::prop_assert_eq!(nfkc_by_runs(&text), text.nfkc().collect::<String>());
        }

        #[test]
        fn fast_paths_agree_with_unicode(text in "[a-zA-Z0-9 .,;:'_\\-\n\t\"!?()é’“ﬁＡΣİÉ\u{301}\u{200d}\u{a0}\u{3f9}ο]{0,40}") {
            proptest::prop_assert_eq!(lowercase(&text), text.to_lowercase());
            let reference: String = text.nfkc().collect::<String>().to_lowercase();
            proptest::prop_assert_eq!(normalize(&text), reference.clone());
            proptest::prop_assert_eq!(nfkc_by_runs(&text), text.nfkc().collect::<String>());
            let want: Vec<&str> = reference.unicode_words().collect();
            let mut got = Vec::new();
            words(&reference, |w| got.push(w));
            proptest::prop_assert_eq!(got, want, "{:?}", reference);
        }

        /// The ASCII word scanner cuts as UAX #29 does, around every kind of middle character.
        #[test]
        fn ascii_words_are_unicode_words(text in "[a-c0-2_ .,;:'\\-]{0,40}") {
            let mut got = Vec::new();
            ascii_words(&text, &mut |w| got.push(w));
            let want: Vec<&str> = text.unicode_words().collect();
            proptest::prop_assert_eq!(got, want);
        }

        /// The byte scan finds the first Han character where decoding every character does,
        /// among the characters whose UTF-8 leads with the same bytes (kana, Hangul, CJK
        /// punctuation, full-width forms).
        #[test]
        fn find_han_is_find(text in "[a-z \u{e9}\u{2019}\u{3000}-\u{3002}\u{3041}-\u{3045}\u{33ff}\u{3400}\u{4dbf}\u{4dc0}\u{4e00}-\u{4e05}\u{9fff}\u{a000}\u{ac00}\u{f8ff}\u{f900}\u{faff}\u{fb00}\u{ff01}\u{20000}\u{2a6df}\u{2a6e0}\u{1f600}]{0,20}") {
            proptest::prop_assert_eq!(find_han(&text), text.find(is_han).unwrap_or(text.len()));
        }
    }

    #[test]
    fn han_runs_go_through_jieba() {
        let tokens = tokenize("我们在北京大学学习网页去重，Simhash很快。");
        let got: Vec<(&str, TokenKind)> = tokens.iter().map(|t| (t.text, t.kind)).collect();
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
            .map(|t| t.text)
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
