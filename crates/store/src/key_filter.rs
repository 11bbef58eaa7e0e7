//! A filter of the keys a table of the store holds, so that a key it does not hold costs no
//! read of it: a blocked Bloom filter, three bits a key, all in one 64-bit word (one cache
//! line's read for a lookup, as a filter of one bit a key). The crawl's sentence postings
//! keep one of their keys (`crawl/sentences.rs` in the engine); the store keeps layers of
//! them for its seen URLs ([`SeenFilter`]).
//!
//! For the same share of "maybe" answers to new keys (one in sixteen at most) it holds about
//! 2.5 times the keys of a filter of one bit a key in the same memory: the pool web's 4.2
//! million keys fit in 8 MiB, where one bit a key needed 32 (docs/BENCHMARKS.md, "Memory
//! over a million pages").

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use crate::{CrawlStore, StoreError, UrlKey};

/// Bits of the key filter at most: 2^28 (32 MiB). Past about 42 million keys (well over a
/// million pages) it answers "maybe" for a growing share of new keys, which then cost a
/// store read: slower, never wrong.
pub const FILTER_BITS: u32 = 28;

/// Bits of the key filter at first: 2^22 (512 KiB). It grows four times over whenever it is
/// past its load, rebuilt from the store's keys: a short crawl does not clear
/// 32 MiB of memory it never uses (zeroing it cost 8 % of the CPU of a crawl of the
/// PostgreSQL manual's 1,169 pages).
pub const INITIAL_FILTER_BITS: u32 = 22;

/// The bits a key sets, in its word.
const BITS_PER_KEY: u32 = 3;

/// The filter grows when more than this share of its bits, in sixteenths, is set: a new key
/// finds its three bits set, and is taken for a stored one and read, about once in sixteen
/// times then (0.375 cubed is 0.053; words loaded more than the mean add a little).
const FILTER_LOAD_SIXTEENTHS: u64 = 6;

/// Whether more than `sixteenths` of a filter of `2^bits` bits are set, `set` of them.
fn past(bits: u32, set: u64, sixteenths: u64) -> bool {
    set * 16 > (1u64 << bits) * sixteenths
}

/// Whether a filter of `2^bits` bits with `set` of them set is past its load and could
/// still grow.
fn over_load(bits: u32, set: u64) -> bool {
    bits < FILTER_BITS && past(bits, set, FILTER_LOAD_SIXTEENTHS)
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

/// Keys that may be in a table of the store: three bits each, in the word the key's top bits
/// pick (keys are hashes already). No false negatives. Its bits are atomic: one thread sets
/// them (the coordinator, committing), others read them (the engine's `PostingsReader` on
/// the blocking pool).
pub struct KeyFilter {
    words: Box<[AtomicU64]>,
    /// Its size: `2^bits` bits.
    pub bits: u32,
    /// Bits set (by one thread at a time).
    pub set: AtomicU64,
}

impl KeyFilter {
    /// An empty filter of `2^bits` bits.
    pub fn with_bits(bits: u32) -> KeyFilter {
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
    pub fn for_keys(keys: u64, bits: u32) -> KeyFilter {
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

    /// Adds `key` (a hash: its top bits pick its word).
    pub fn insert(&self, key: u64) {
        let mask = word_mask(key);
        let old = self.words[self.word(key)].fetch_or(mask, Ordering::Relaxed);
        let new = (mask & !old).count_ones();
        if new > 0 {
            self.set.fetch_add(u64::from(new), Ordering::Relaxed);
        }
    }

    /// Whether `key` may have been added: `false` means it was not.
    pub fn may_contain(&self, key: u64) -> bool {
        let mask = word_mask(key);
        self.words[self.word(key)].load(Ordering::Relaxed) & mask == mask
    }

    /// Whether it should grow: too many bits set, and room to grow.
    pub fn crowded(&self) -> bool {
        over_load(self.bits, self.set.load(Ordering::Relaxed))
    }

    /// Whether more than `sixteenths` of its bits are set, grown as far as it can be or not.
    fn loaded(&self, sixteenths: u64) -> bool {
        past(self.bits, self.set.load(Ordering::Relaxed), sixteenths)
    }

    /// Adds the keys of the store's sentence postings.
    pub fn fill(&self, store: &dyn CrawlStore) -> Result<(), StoreError> {
        store.for_each_sentence_key(&mut |key| self.insert(key))
    }
}

/// Bits of the seen URLs' first filter: 2^20 (128 KiB, about 100,000 keys).
const SEEN_FIRST_BITS: u32 = 20;

/// A layer of the seen URLs' filter is full when more than this share of its bits, in
/// sixteenths, is set: a new key finds its three bits set in it about once in 64 times
/// (0.25 cubed), and a key never seen is looked for in every layer. A full layer holds a
/// key in about 10 bits; all of them, 10 to 40 by how full the newest one is.
const SEEN_LOAD_SIXTEENTHS: u64 = 4;

/// The URL keys the store's `seen` table holds, so that a URL never seen (most of the links
/// a new page names) costs no read of the table: the coordinator asked the table for every
/// link, and a key it lacked was a search of the memtable and a look at every table's filter
/// (4 % of its CPU over 100,000 pages, docs/BENCHMARKS.md). Layers of [`KeyFilter`]s, each
/// four times the last (a scalable Bloom filter, Almeida et al. 2007): a key goes in the
/// newest, and the next is added when that one is loaded, so it grows with the crawl without
/// reading the table again. No false negatives: a key the table holds is always in a layer.
pub(crate) struct SeenFilter {
    layers: RwLock<Vec<KeyFilter>>,
}

impl SeenFilter {
    pub(crate) fn new() -> SeenFilter {
        SeenFilter {
            layers: RwLock::new(vec![KeyFilter::with_bits(SEEN_FIRST_BITS)]),
        }
    }

    fn word_key(key: &UrlKey) -> u64 {
        let mut top = [0u8; 8];
        top.copy_from_slice(&key[..8]);
        u64::from_be_bytes(top)
    }

    pub(crate) fn insert(&self, key: &UrlKey) {
        let layers = self.layers.read().unwrap_or_else(PoisonError::into_inner);
        let newest = layers.last().expect("a layer at least");
        newest.insert(SeenFilter::word_key(key));
        if newest.loaded(SEEN_LOAD_SIXTEENTHS) {
            let bits = (newest.bits + 2).min(FILTER_BITS);
            drop(layers);
            let mut layers = self.layers.write().unwrap_or_else(PoisonError::into_inner);
            if layers
                .last()
                .is_some_and(|l| l.loaded(SEEN_LOAD_SIXTEENTHS))
            {
                layers.push(KeyFilter::with_bits(bits));
            }
        }
    }

    /// Whether the table may hold `key`: `false` means it does not.
    pub(crate) fn may_hold(&self, key: &[u8]) -> bool {
        let Ok(key) = <&UrlKey>::try_from(key) else {
            return true;
        };
        let key = SeenFilter::word_key(key);
        let layers = self.layers.read().unwrap_or_else(PoisonError::into_inner);
        layers.iter().rev().any(|layer| layer.may_contain(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_filter_has_no_false_negatives() {
        let filter = KeyFilter::with_bits(FILTER_BITS);
        let keys: Vec<u64> = (0..10_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        keys.iter().for_each(|&k| filter.insert(k));
        assert!(keys.iter().all(|&k| filter.may_contain(k)));
        let set = filter.set.load(Ordering::Relaxed);
        assert!((29_000..=30_000).contains(&set), "three bits each: {set}");
        let others = (10_000..20_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .filter(|&k| filter.may_contain(k))
            .count();
        assert!(others < 10, "{others} false positives of 10,000");
    }

    /// Filled up to the load it grows at, the filter takes about one new key in sixteen for a
    /// stored one (what a key costs in store reads), and holds about 2.5 times the keys a
    /// filter of one bit a key would at the same share; a filter made for a number of keys
    /// is not past its load with them.
    #[test]
    fn the_key_filter_at_its_load_answers_maybe_once_in_sixteen() {
        let key = |i: u64| {
            let mut n = i
                .wrapping_add(0x1234_5678)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15);
            n ^= n >> 29;
            n.wrapping_mul(0xbf58_476d_1ce4_e5b9)
        };
        for bits in [12u32, 16, 20] {
            let filter = KeyFilter::with_bits(bits);
            let mut keys = 0u64;
            while !filter.crowded() {
                filter.insert(key(keys));
                keys += 1;
            }
            assert!((0..keys).all(|i| filter.may_contain(key(i))), "{bits} bits");
            // Taken for the 1-bit filter's 2^bits / 16 keys at its load: 2.5 times as many.
            let per_bit = keys as f64 / (1u64 << bits) as f64;
            assert!(
                (0.14..0.17).contains(&per_bit),
                "{bits} bits: {per_bit} keys a bit"
            );
            let tried = 200_000u64;
            let maybe = (0..tried)
                .filter(|&i| filter.may_contain(key(1 << 40 | i)))
                .count() as f64
                / tried as f64;
            assert!((0.04..0.07).contains(&maybe), "{bits} bits: {maybe} maybe");
            // Made for as many keys as it held short of its load: big enough for them.
            let held = keys - 1;
            let made = KeyFilter::for_keys(held, 6);
            assert!(made.bits >= bits, "{} bits for {held} keys", made.bits);
            (0..held).for_each(|i| made.insert(key(i)));
            assert!(!made.crowded(), "{} bits for {held} keys", made.bits);
        }
    }

    /// The seen URLs' filter grows by layers as keys come, never losing one, and takes a key
    /// it never had for a held one about once in 64 times a full layer (three here: 5 % at most).
    #[test]
    fn the_seen_filter_grows_by_layers_and_loses_no_key() {
        let key =
            |i: u64| -> UrlKey { xxhash_rust::xxh3::xxh3_128(&i.to_le_bytes()).to_be_bytes() };
        let seen = SeenFilter::new();
        let held = 600_000u64;
        for i in 0..held {
            seen.insert(&key(i));
        }
        let layers = seen.layers.read().unwrap().len();
        assert!(layers >= 2, "{layers} layers for {held} keys");
        assert!((0..held).all(|i| seen.may_hold(&key(i))));
        let tried = 100_000u64;
        let maybe = (0..tried)
            .filter(|&i| seen.may_hold(&key(1 << 40 | i)))
            .count();
        assert!(
            maybe < 5_000,
            "{maybe} of {tried} new keys taken for held ones"
        );
        assert!(
            seen.may_hold(b"not a URL key"),
            "a key of another size is read"
        );
    }
}
