//! Exact-duplicate keys.

use std::fmt;

use crate::tokenize::Token;

/// A 128-bit hash (xxh3) of a normalised token stream: two texts have the same key when they
/// have the same words in the same order, whatever their case, spacing and punctuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExactKey(pub u128);

impl ExactKey {
    /// The key of a token stream (stop words included: they are part of the text).
    pub fn of(tokens: &[Token]) -> ExactKey {
        // The tokens joined into one buffer and hashed at once: the same hash as feeding a
        // streaming hasher token by token, at a fraction of the cost for short words.
        let mut joined = Vec::with_capacity(tokens.iter().map(|t| t.text.len() + 1).sum());
        for token in tokens {
            joined.extend_from_slice(token.text.as_bytes());
            joined.push(0x1F); // unit separator: "ab c" and "a bc" differ
        }
        ExactKey(xxhash_rust::xxh3::xxh3_128(&joined))
    }
}

impl fmt::Display for ExactKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::tokenize;

    proptest::proptest! {
        /// Hashing the joined tokens at once is hashing them one by one with a streaming hasher
        /// (the key's definition, which stored keys were made with).
        #[test]
        fn joined_is_streamed(text in "[a-z ]{0,300}") {
            let tokens = tokenize(&text);
            let mut hasher = xxhash_rust::xxh3::Xxh3::new();
            for token in &tokens {
                hasher.update(token.text.as_bytes());
                hasher.update(&[0x1F]);
            }
            proptest::prop_assert_eq!(ExactKey::of(&tokens).0, hasher.digest128());
        }
    }

    #[test]
    fn same_words_same_key() {
        let key = |t: &str| ExactKey::of(&tokenize(t));
        assert_eq!(key("Hello, World!"), key("hello   world"));
        assert_ne!(key("ab c"), key("a bc"));
        assert_ne!(key("hello world"), key("world hello"));
        assert_eq!(key("").to_string().len(), 32);
    }
}
