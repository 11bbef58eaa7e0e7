//! Stop words: function words that say nothing about what a page is about.
//!
//! jieba ships 31 English stop words; these lists are fuller. English: articles, pronouns,
//! auxiliaries, prepositions, conjunctions and the commonest adverbs, with the contracted forms
//! the tokenizer produces (`don't` stays one token). Chinese: particles, pronouns, conjunctions,
//! prepositions and measure-word compounds that jieba cuts as words.

use rustc_hash::FxHashSet;
use std::sync::OnceLock;

const ENGLISH: &str = "a about above after again against all also am an and any are aren't as at be \
because been before being below between both but by can can't cannot could couldn't did didn't do \
does doesn't doing don't down during each either else ever every few for from further had hadn't \
has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how \
how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's like may me \
might more most much must mustn't my myself neither no nor not now of off on once only or other \
ought our ours ourselves out over own per rather same shall shan't she she'd she'll she's should \
shouldn't since so some such than that that's the their theirs them themselves then there there's \
these they they'd they'll they're they've this those though through thus to too under until up upon \
us very via was wasn't we we'd we'll we're we've were weren't what what's when when's where where's \
whether which while who who's whom whose why why's will with within without won't would wouldn't \
yet you you'd you'll you're you've your yours yourself yourselves";

const CHINESE: &str = "的 了 和 是 在 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 她们 它们 我 你 他 \
她 它 这 那 这个 那个 这些 那些 这样 那样 之 其 此 并 并且 也 还 又 但 但是 而且 因为 所以 如果 虽然 \
然而 因此 于是 以及 以 于 对 对于 把 被 让 给 从 向 到 由 为 为了 关于 按照 根据 通过 随着 除了 \
之后 之前 以后 以前 时候 的话 所 所有 什么 怎么 怎样 哪 哪里 哪些 谁 吗 呢 吧 啊 呀 哦 嗯 么 \
得 地 过 个 些 每 各 某 该 本 很 更 最 太 非常 已经 曾经 正在 将 会 能 可以 可能 应该 要 想 \
不 没 无 非 别 只 只是 只有 就是 还是 而是 不是 即 即使 甚至 然后 接着 另外 此外 其中 其他 \
其它 自己 大家 一些 一样 一直 一切 有的 有些 等 等等 啦 嘛 罢了 而已 来 去 上 下 中 里 内 外";

/// The stop words, each packed into an integer ([`packed`]).
fn set() -> &'static FxHashSet<u128> {
    static SET: OnceLock<FxHashSet<u128>> = OnceLock::new();
    SET.get_or_init(|| {
        ENGLISH
            .split_whitespace()
            .chain(CHINESE.split_whitespace())
            .map(packed)
            .collect()
    })
}

/// A word of at most [`MAX_STOP_WORD_BYTES`] bytes as one integer: its bytes and its length,
/// so that looking it up hashes and compares two words at once instead of byte by byte.
fn packed(word: &str) -> u128 {
    let mut bytes = [0u8; 16];
    bytes[..word.len()].copy_from_slice(word.as_bytes());
    bytes[15] = word.len() as u8;
    u128::from_le_bytes(bytes)
}

/// Whether a normalised (lower-cased) token is an English or Chinese stop word.
pub fn is_stop_word(token: &str) -> bool {
    // No stop word is longer than 10 bytes ("yourselves").
    token.len() <= MAX_STOP_WORD_BYTES && set().contains(&packed(token))
}

/// [`is_stop_word`] of the `len` bytes at `start` of `buffer` (a word of it). When 16 bytes
/// follow `start`, the word is read with one load and masked, instead of copied a byte at a
/// time into the packed key and read back (a stalled load, the most of the lookup's time).
pub(crate) fn is_stop_word_at(buffer: &[u8], start: usize, len: usize) -> bool {
    if len > MAX_STOP_WORD_BYTES {
        return false;
    }
    let bytes = match buffer.get(start..start + 16) {
        Some(sixteen) => u128::from_le_bytes(sixteen.try_into().expect("16 bytes")),
        None => {
            let mut padded = [0u8; 16];
            padded[..len].copy_from_slice(&buffer[start..start + len]);
            u128::from_le_bytes(padded)
        }
    };
    // `len` is at most 10: the word's bytes, then its length in the last byte ([`packed`]).
    set().contains(&((bytes & ((1u128 << (8 * len)) - 1)) | ((len as u128) << 120)))
}

/// The longest stop word's length in bytes.
const MAX_STOP_WORD_BYTES: usize = 10;

#[cfg(test)]
mod tests {
    use super::is_stop_word;

    #[test]
    fn no_stop_word_is_longer_than_the_bound() {
        let longest = super::ENGLISH
            .split_whitespace()
            .chain(super::CHINESE.split_whitespace())
            .map(str::len)
            .max();
        assert_eq!(longest, Some(super::MAX_STOP_WORD_BYTES));
    }

    fn listed(word: &str) -> bool {
        super::ENGLISH
            .split_whitespace()
            .chain(super::CHINESE.split_whitespace())
            .any(|w| w == word)
    }

    #[test]
    fn packed_lookup_is_the_lists() {
        for word in super::ENGLISH
            .split_whitespace()
            .chain(super::CHINESE.split_whitespace())
        {
            assert!(is_stop_word(word), "{word}");
            // Prefixes and extensions: the length is part of the packed key.
            let last = word.char_indices().last().map_or(0, |(i, _)| i);
            for other in [&word[..last], &format!("{word}s"), &format!("{word}\0")] {
                assert_eq!(is_stop_word(other), listed(other), "{other:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn packed_lookup_agrees_on_any_word(word in "[a-z'\0]{0,12}") {
            proptest::prop_assert_eq!(is_stop_word(&word), listed(&word));
        }

        /// Read in place, with any bytes around it (or none after it), a word is a stop word
        /// when the lists say so.
        #[test]
        fn lookup_in_place_agrees(
            before in "[a-z ]{0,3}",
            word in "(the|a|yourselves|don't|我们|[a-z']{0,12})",
            after in "[a-z \u{1f}]{0,20}",
        ) {
            let buffer = format!("{before}{word}{after}");
            proptest::prop_assert_eq!(
                super::is_stop_word_at(buffer.as_bytes(), before.len(), word.len()),
                listed(&word)
            );
        }
    }

    #[test]
    fn lists_cover_both_languages_and_not_content_words() {
        for word in [
            "the",
            "and",
            "don't",
            "yourselves",
            "的",
            "我们",
            "因为",
            "而且",
        ] {
            assert!(is_stop_word(word), "{word}");
        }
        for word in ["river", "crawler", "The", "网页", "搜索"] {
            assert!(!is_stop_word(word), "{word}");
        }
    }
}
