//! The words a sample is compared by, hashed straight from the page's bytes.
//!
//! A word is a run of alphanumeric characters other than Han, lower-cased; each Han
//! character is a word of its own; anything else (markup, spaces, punctuation) is a break.
//! The text is the one [`fragment_text`] reads (tags dropped, character references decoded),
//! but read in place, without making it: a page's filter is made from every large page a
//! crawl fetches, and making its text, normalising it and segmenting it by UAX #29 cost
//! about 13 CPU cycles a byte, a sixteenth of a text-rich crawl's CPU. Only the filter and
//! the samples compared with it use these words, so they need agree with nothing else; the
//! test reads the same words from [`fragment_text`]'s text a character at a time.

use nearcrawl_text::is_han;

use super::{Fragment, read_fragment};

/// The hashes of the words of a piece of HTML cut anywhere (raw bytes, markup included), in
/// their order.
pub(super) fn word_hashes(bytes: &[u8]) -> Vec<u64> {
    let mut words = Words {
        units: Vec::with_capacity(bytes.len() / 8),
        word: String::new(),
    };
    read_fragment(bytes, &mut words);
    words.end();
    words.units
}

/// The words read so far.
struct Words {
    units: Vec<u64>,
    /// The word being read, lower-cased, when it is not a run of ASCII inside one piece of
    /// text (it holds other characters, or a reference or the piece's end may continue it).
    word: String,
}

impl Fragment for Words {
    /// Reads a piece of text between markup.
    fn text(&mut self, text: &str, then_breaks: bool) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let byte = bytes[i];
            if byte.is_ascii_alphanumeric() {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let ends = match bytes.get(i) {
                    Some(&next) => next.is_ascii(),
                    None => then_breaks,
                };
                if ends && self.word.is_empty() {
                    self.units.push(ascii_word_hash(&bytes[start..i]));
                } else {
                    self.word.extend(
                        bytes[start..i]
                            .iter()
                            .map(|b| b.to_ascii_lowercase() as char),
                    );
                }
            } else if byte.is_ascii() {
                self.end();
                i += 1;
            } else {
                let c = text[i..].chars().next().expect("a character starts here");
                self.char(c);
                i += c.len_utf8();
            }
        }
    }

    fn tag(&mut self) {
        self.end();
    }

    /// Reads one character (not ASCII, or a reference's).
    fn char(&mut self, c: char) {
        if is_han(c) {
            self.end();
            self.units
                .push(word_hash(c.encode_utf8(&mut [0; 4]).as_bytes()));
        } else if c.is_alphanumeric() {
            self.word.extend(c.to_lowercase());
        } else {
            self.end();
        }
    }
}

impl Words {
    /// Ends the word being read, if any.
    fn end(&mut self) {
        if !self.word.is_empty() {
            self.units.push(word_hash(self.word.as_bytes()));
            self.word.clear();
        }
    }
}

/// The hash of a word already lower-cased.
fn word_hash(word: &[u8]) -> u64 {
    hash_chunks(word, 0)
}

/// The hash of a word of ASCII letters and digits, as [`word_hash`] of it lower-cased: a
/// letter's lower case is it with bit 0x20 set, which every digit has already.
fn ascii_word_hash(word: &[u8]) -> u64 {
    hash_chunks(word, 0x2020_2020_2020_2020)
}

/// A word's bytes hashed eight at a time, each byte or-ed with its byte of `case` first; the
/// last one to seven read as two overlapping loads (or three single bytes), not copied.
fn hash_chunks(word: &[u8], case: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, v: u64| {
        let h = (h ^ v).wrapping_mul(K);
        h ^ (h >> 29)
    };
    let mut h = 0x243f_6a88_85a3_08d3 ^ word.len() as u64;
    let mut chunks = word.chunks_exact(8);
    for chunk in &mut chunks {
        let v = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        h = mix(h, v | case);
    }
    let tail = chunks.remainder();
    let n = tail.len();
    let v = if n >= 4 {
        let four = |at: usize| {
            u64::from(u32::from_le_bytes(
                tail[at..at + 4].try_into().expect("four bytes"),
            ))
        };
        (four(0) | four(n - 4) << 32) | case
    } else if n > 0 {
        let byte = |at: usize| u64::from(tail[at]);
        (byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16) | (case & 0xff_ffff)
    } else {
        return h.wrapping_mul(K) ^ (h >> 32);
    };
    let h = mix(h, v);
    h.wrapping_mul(K) ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::super::fragment_text;
    use super::super::tests::cut_html;
    use super::*;

    /// The words of a text read a character at a time: the reference.
    fn words_by_char(text: &str) -> Vec<u64> {
        let (mut units, mut word) = (Vec::new(), String::new());
        let end = |units: &mut Vec<u64>, word: &mut String| {
            if !word.is_empty() {
                units.push(word_hash(word.as_bytes()));
                word.clear();
            }
        };
        for c in text.chars() {
            if is_han(c) {
                end(&mut units, &mut word);
                units.push(word_hash(c.to_string().as_bytes()));
            } else if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
            } else {
                end(&mut units, &mut word);
            }
        }
        end(&mut units, &mut word);
        units
    }

    #[test]
    fn words_are_lower_cased_runs_and_han_characters() {
        let hash = |w: &str| word_hash(w.as_bytes());
        assert_eq!(
            word_hashes("<p>Café&#x301;s ÉTÉ, x2 中文</p>".as_bytes()),
            ["café", "s", "été", "x2", "中", "文"].map(hash)
        );
        // A reference continues a word; a tag ends it; a tag cut at the start is skipped.
        assert_eq!(
            word_hashes(b"s=\"a\">caf&#233;s Ab</b>CD"),
            ["caf\u{e9}s", "ab", "cd"].map(hash)
        );
        assert_eq!(ascii_word_hash(b"AbCdEfGhIj09"), hash("abcdefghij09"));
        assert!(word_hashes(b"<p>, ;</p>").is_empty());
    }

    proptest::proptest! {
        /// The words read in place are the words of `fragment_text`'s text read a character
        /// at a time, on markup, references and multi-byte characters cut anywhere.
        #[test]
        fn words_read_in_place_are_the_texts_words(cut in cut_html()) {
            proptest::prop_assert_eq!(word_hashes(&cut), words_by_char(&fragment_text(&cut)));
        }

        /// Any bytes: no panic, and the same words as their text's.
        #[test]
        fn words_of_anything_are_read(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            proptest::prop_assert_eq!(word_hashes(&bytes), words_by_char(&fragment_text(&bytes)));
        }
    }
}
