//! Exact-duplicate keys.

use std::fmt;

use crate::tokenize::Tokens;

/// A 128-bit hash (xxh3) of a normalised token stream: two texts have the same key when they
/// have the same words in the same order, whatever their case, spacing and punctuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExactKey(pub u128);

impl ExactKey {
    /// The key of a token stream (stop words included: they are part of the text).
    pub fn of(tokens: &Tokens) -> ExactKey {
        // The tokens as they are kept, each followed by the unit separator ("ab c" and "a bc"
        // differ), hashed at once: the same hash as feeding a streaming hasher token by token.
        ExactKey(xxhash_rust::xxh3::xxh3_128(tokens.joined()))
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
            for token in tokens.iter() {
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
