//! The filter of the sentence keys the store has: one bit a key, so that a fingerprint no
//! kept page had (most of a new page's) costs no store read.

use std::sync::atomic::{AtomicU64, Ordering};

use nearcrawl_store::{CrawlStore, StoreError};

/// Bits of the key filter at most: 2^28 (32 MiB). Past about 16 million keys (half a
/// million pages) it answers "maybe" for a growing share of new keys, which then cost a
/// store read: slower, never wrong.
pub(super) const FILTER_BITS: u32 = 28;

/// Bits of the key filter at first: 2^22 (512 KiB). It grows four times over whenever more
/// than one bit in [`FILTER_LOAD`] is set, rebuilt from the store's keys: a short crawl does
/// not clear 32 MiB of memory it never uses (zeroing it cost 8 % of the CPU of a crawl of
/// the PostgreSQL manual's 1,169 pages).
pub(super) const INITIAL_FILTER_BITS: u32 = 22;

/// The filter grows when more than one bit in this many is set (a new key is then taken
/// for a stored one, and read, at most once in this many).
const FILTER_LOAD: u64 = 16;

/// Whether a filter of `2^bits` bits with `set` of them set (or as many keys) is past
/// [`FILTER_LOAD`] and could still grow.
fn over_load(bits: u32, set: u64) -> bool {
    bits < FILTER_BITS && set > (1u64 << bits) / FILTER_LOAD
}

/// Keys that may have a posting in the store: one bit each, by the key's top bits (keys are
/// hashes already). No false negatives. Its bits are atomic: the coordinator sets them, the
/// blocking pool reads them ([`PostingsReader`]).
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
        while over_load(bits, keys) {
            bits += 2;
        }
        KeyFilter::with_bits(bits)
    }

    fn bit(&self, key: u64) -> (usize, u64) {
        let bit = key >> (64 - self.bits);
        ((bit >> 6) as usize, 1 << (bit & 63))
    }

    pub(super) fn insert(&self, key: u64) {
        let (word, mask) = self.bit(key);
        if self.words[word].fetch_or(mask, Ordering::Relaxed) & mask == 0 {
            self.set.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn may_contain(&self, key: u64) -> bool {
        let (word, mask) = self.bit(key);
        self.words[word].load(Ordering::Relaxed) & mask != 0
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
