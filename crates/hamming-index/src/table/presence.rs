//! Which prefixes a table holds: one bit per value of its keys' top bits.
//!
//! A batch walk probes every table for every query, and most probes find nothing: in a table of
//! 2^26 keys with a 28-bit prefix, four prefixes in five hold no key, and a query that is not
//! near a stored fingerprint hits one of those. Each such probe still reads a directory slot
//! and a line of keys, two cache misses. A bitmap of the prefixes present is a quarter the
//! size of the directory (half a byte per key against two), and a walk of 2^20 probes moving
//! forward through it touches a new line about every second probe: reading it first, the walk
//! skips the directory and the keys of every probe whose prefix is absent.

use crate::memory::huge_filled;
use crate::prefetch::prefetch;

/// At most this many bits beyond the directory's: the bitmap then has eight bits per key of
/// the table (the directory has about two keys per slot), so that about four prefixes in five
/// are absent.
const BITS_BEYOND_DIRECTORY: u32 = 3;

/// One bit per value of the top `bits` bits of a table's keys, set where some key has that
/// prefix.
#[derive(Clone, Debug)]
pub(crate) struct PrefixBitmap {
    words: Vec<u64>,
    /// `64 - bits`, at most 63: a key's prefix is `key >> shift`.
    shift: u32,
}

impl PrefixBitmap {
    /// The bitmap over the top bits of sorted `keys` worth keeping for a table whose prefix has
    /// `prefix_bits` bits and whose directory `dir_bits`: on as many bits as the prefix has, at
    /// most [`BITS_BEYOND_DIRECTORY`] more than the directory. `None` where it would not tell a
    /// probe much: when there are fewer prefix values than keys (most prefixes are present),
    /// or no keys at all.
    pub(crate) fn worth_building(
        keys: &[u64],
        prefix_bits: u32,
        dir_bits: u32,
    ) -> Option<PrefixBitmap> {
        let bits = prefix_bits.min(dir_bits + BITS_BEYOND_DIRECTORY).min(32);
        if keys.is_empty() || bits == 0 || (1u64 << bits) < keys.len() as u64 {
            return None;
        }
        Some(PrefixBitmap::new(keys, bits))
    }

    /// The bitmap over the top `bits` bits (1 to 32) of `keys`.
    pub(crate) fn new(keys: &[u64], bits: u32) -> PrefixBitmap {
        debug_assert!((1..=32).contains(&bits));
        let shift = 64 - bits;
        let mut words = huge_filled((1usize << bits).div_ceil(64), 0u64);
        for &key in keys {
            let prefix = key >> shift;
            words[(prefix >> 6) as usize] |= 1 << (prefix & 63);
        }
        PrefixBitmap { words, shift }
    }

    /// Whether some key shares the top bits of `key`. If not, no key shares a longer prefix
    /// with it either.
    #[inline(always)]
    pub(crate) fn contains(&self, key: u64) -> bool {
        let prefix = key >> self.shift;
        self.words[(prefix >> 6) as usize] >> (prefix & 63) & 1 != 0
    }

    /// Asks for the word of `key` to be brought into cache, without waiting for it.
    #[inline(always)]
    pub(crate) fn prefetch(&self, key: u64) {
        prefetch(&self.words[(key >> self.shift >> 6) as usize]);
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A prefix is present exactly when some key has it.
        #[test]
        fn contains_exactly_the_prefixes_of_the_keys(
            mut keys in prop::collection::vec(any::<u64>(), 1..2_000),
            probes in prop::collection::vec(any::<u64>(), 1..200),
            bits in 1u32..=20,
        ) {
            keys.sort_unstable();
            let bitmap = PrefixBitmap::new(&keys, bits);
            let shift = 64 - bits;
            // Probes near the keys as well as anywhere: half of them share a key's prefix.
            let near = keys.iter().map(|k| k ^ (probes[0] >> bits));
            for probe in probes.iter().copied().chain(near) {
                let present = keys.iter().any(|k| k >> shift == probe >> shift);
                prop_assert_eq!(bitmap.contains(probe), present, "probe {:#x}", probe);
            }
        }
    }

    /// Built only where most prefixes are absent: a table with more keys than prefix values
    /// gets none, and the bitmap never has more than three bits beyond the directory.
    #[test]
    fn built_only_where_it_tells_probes_apart() {
        let keys: Vec<u64> = (0..1u64 << 12).map(|i| i << 40).collect();
        assert!(PrefixBitmap::worth_building(&keys, 10, 10).is_none());
        assert!(PrefixBitmap::worth_building(&[], 28, 10).is_none());
        let bitmap = PrefixBitmap::worth_building(&keys, 28, 11).expect("14 bits for 4,096 keys");
        assert_eq!(bitmap.shift, 64 - 14);
        assert_eq!(bitmap.heap_bytes(), (1 << 14) / 8);
    }
}
