//! The filter of the sentence keys the store has, so that a fingerprint no kept page had
//! (most of a new page's) costs no store read: a blocked Bloom filter, three bits a key, all
//! in one 64-bit word (one cache line's read for a lookup, as a filter of one bit a key).
//! For the same share of "maybe" answers to new keys (one in sixteen at most) it holds about
//! 2.5 times the keys of a filter of one bit a key in the same memory: the pool web's 4.2
//! million keys fit in 8 MiB, where one bit a key needed 32 (docs/BENCHMARKS.md, "Memory
//! over a million pages").

use std::sync::atomic::{AtomicU64, Ordering};

use nearcrawl_store::{CrawlStore, StoreError};

/// Bits of the key filter at most: 2^28 (32 MiB). Past about 42 million keys (well over a
/// million pages) it answers "maybe" for a growing share of new keys, which then cost a
/// store read: slower, never wrong.
pub(super) const FILTER_BITS: u32 = 28;

/// Bits of the key filter at first: 2^22 (512 KiB). It grows four times over whenever it is
/// past its load ([`over_load`]), rebuilt from the store's keys: a short crawl does not clear
/// 32 MiB of memory it never uses (zeroing it cost 8 % of the CPU of a crawl of the
/// PostgreSQL manual's 1,169 pages).
pub(super) const INITIAL_FILTER_BITS: u32 = 22;

/// The bits a key sets, in its word.
const BITS_PER_KEY: u32 = 3;

/// The filter grows when more than this share of its bits, in sixteenths, is set: a new key
/// finds its three bits set, and is taken for a stored one and read, about once in sixteen
/// times then (0.375 cubed is 0.053; words loaded more than the mean add a little).
const FILTER_LOAD_SIXTEENTHS: u64 = 6;

/// Whether a filter of `2^bits` bits with `set` of them set is past its load and could
/// still grow.
fn over_load(bits: u32, set: u64) -> bool {
    bits < FILTER_BITS && set * 16 > (1u64 << bits) * FILTER_LOAD_SIXTEENTHS
}

/// The bits `keys` keys are expected to set in a filter of `2^bits` bits (fewer than three
/// a key: some fall on bits set already).
fn expected_set(bits: u32, keys: u64) -> u64 {
    let size = (1u64 << bits) as f64;
    (size * (1.0 - (-(f64::from(BITS_PER_KEY)) * keys as f64 / size).exp())).ceil() as u64
}

/// The three bits `key` sets in its word: from its low bits, mixed (the word is chosen by its
/// top bits, which the mix keeps apart from these).
fn word_mask(key: u64) -> u64 {
    // splitmix64's finaliser: keys are hashes already, but their low bits need not be
    // independent of their top ones.
    let mut n = key;
    n = (n ^ (n >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    n = (n ^ (n >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    n ^= n >> 31;
    (0..BITS_PER_KEY).fold(0, |mask, i| mask | 1 << ((n >> (6 * i)) & 63))
}

/// Keys that may have a posting in the store: three bits each, in the word the key's top
/// bits pick (keys are hashes already). No false negatives. Its bits are atomic: the
/// coordinator sets them, the blocking pool reads them ([`PostingsReader`]).
pub(super) struct KeyFilter {
    words: Box<[AtomicU64]>,
    pub(super) bits: u32,
    /// Bits set (by the coordinator only).
    pub(super) set: AtomicU64,
}

impl KeyFilter {
    /// An empty filter of `2^bits` bits.
    pub(super) fn with_bits(bits: u32) -> KeyFilter {
        let bits = bits.clamp(6, FILTER_BITS);
        KeyFilter {
            words: (0..1usize << (bits - 6))
                .map(|_| AtomicU64::new(0))
                .collect(),
            bits,
            set: AtomicU64::new(0),
        }
    }

    /// An empty filter large enough for `keys` keys, at least `2^bits` bits.
    pub(super) fn for_keys(keys: u64, bits: u32) -> KeyFilter {
        let mut bits = bits;
        while over_load(bits, expected_set(bits, keys)) {
            bits += 2;
        }
        KeyFilter::with_bits(bits)
    }

    fn word(&self, key: u64) -> usize {
        // A filter of one word (2^6 bits) has every key in it: a shift by 64 is none.
        key.checked_shr(64 - (self.bits - 6)).unwrap_or(0) as usize
    }

    pub(super) fn insert(&self, key: u64) {
        let mask = word_mask(key);
        let old = self.words[self.word(key)].fetch_or(mask, Ordering::Relaxed);
        let new = (mask & !old).count_ones();
        if new > 0 {
            self.set.fetch_add(u64::from(new), Ordering::Relaxed);
        }
    }

    pub(super) fn may_contain(&self, key: u64) -> bool {
        let mask = word_mask(key);
        self.words[self.word(key)].load(Ordering::Relaxed) & mask == mask
    }

    /// Whether it should grow: too many bits set, and room to grow.
    pub(super) fn crowded(&self) -> bool {
        over_load(self.bits, self.set.load(Ordering::Relaxed))
    }

    /// Adds the store's keys.
    pub(super) fn fill(&self, store: &dyn CrawlStore) -> Result<(), StoreError> {
        store.for_each_sentence_key(&mut |key| self.insert(key))
    }
}
