//! Directories of their own for the long slots of a table's directory.
//!
//! A table's directory has about two keys per slot, but a dense prefix (many near-empty pages,
//! one site engine's pages) puts thousands or millions of keys in one slot. Finding a key's
//! payload or a prefix's range in such a slot would be a binary search with a cache miss per
//! step; a subdirectory on the bits below the directory's makes it one lookup. The
//! subdirectories are found by slot number in an open-addressing table, so a long slot costs
//! one more cache miss, not a search.

use std::ops::Range;

use super::SortedTable;
use crate::memory::huge_filled;
use crate::prefetch::prefetch;

/// Slots longer than this get a subdirectory ...
pub(crate) const SUBDIRECTORY_MIN: usize = 64;
/// ... if they are also this many times longer than the average slot, in a table searched by
/// prefix only (a design with short prefixes, such as 4 tables of 16 bits, has long slots
/// everywhere, and a probe scans the slot whole); in table 0, searched by whole keys, every slot
/// this long gets one ([`crate::table::Lookups`]).
const LONG_FACTOR: usize = 16;

/// The length above which a slot of a directory with `slots` slots over `len` keys gets a
/// subdirectory.
pub(crate) fn long_slot_threshold(len: usize, slots: usize) -> usize {
    SUBDIRECTORY_MIN.max(LONG_FACTOR * len / slots.max(1))
}

/// The subdirectories of one table's long slots.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subdirectories {
    /// Open addressing on the slot number, a power of two long (empty when no slot is long).
    entries: Vec<Entry>,
    /// Every subdirectory's offsets, one after another.
    offsets: Vec<u32>,
}

/// Where one slot's subdirectory is: `slot + 1` (0 marks an empty entry), its number of bits,
/// and the start of its `2^bits + 1` offsets.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    slot_plus_one: u32,
    bits: u32,
    start: u32,
}

/// One long slot's subdirectory: `offsets[b]..offsets[b + 1]` are the positions of the slot's
/// keys whose `bits` bits below the table's `dir_bits` equal b.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subdirectory<'a> {
    bits: u32,
    dir_bits: u32,
    offsets: &'a [u32],
}

impl Subdirectories {
    /// The subdirectories of the slots `long` of `directory` (prefix sums of slot lengths over
    /// sorted `keys`, `dir_bits` bits): those longer than [`long_slot_threshold`].
    pub(crate) fn new(
        keys: &[u64],
        directory: &[u32],
        dir_bits: u32,
        long: &[usize],
    ) -> Subdirectories {
        if long.is_empty() {
            return Subdirectories::default();
        }
        // About two keys per entry, as in the directory itself.
        let bits_of = |s: usize| {
            let len = (directory[s + 1] - directory[s]) as usize;
            SortedTable::directory_bits(len, (64 - dir_bits).min(24)).max(1)
        };
        let total: usize = long.iter().map(|&s| (1 << bits_of(s)) + 1).sum();
        let mut offsets = huge_filled(total, 0u32);
        let mut entries = vec![Entry::default(); (2 * long.len()).next_power_of_two()];
        let mut start = 0;
        for &s in long {
            let range = directory[s] as usize..directory[s + 1] as usize;
            let bits = bits_of(s);
            let sub = &mut offsets[start..start + (1 << bits) + 1];
            sub[0] = range.start as u32;
            for &key in &keys[range] {
                sub[sub_slot(key, dir_bits, bits) + 1] += 1;
            }
            for i in 0..1 << bits {
                sub[i + 1] += sub[i];
            }
            let mut at = home(s, entries.len());
            while entries[at].slot_plus_one != 0 {
                at = (at + 1) & (entries.len() - 1);
            }
            entries[at] = Entry {
                slot_plus_one: s as u32 + 1,
                bits,
                start: start as u32,
            };
            start += sub.len();
        }
        Subdirectories { entries, offsets }
    }

    /// The subdirectory of slot `slot` of a directory with `dir_bits` bits, if it has one.
    #[inline]
    pub(crate) fn get(&self, slot: usize, dir_bits: u32) -> Option<Subdirectory<'_>> {
        if self.entries.is_empty() {
            return None;
        }
        let mut at = home(slot, self.entries.len());
        loop {
            let entry = self.entries[at];
            if entry.slot_plus_one == 0 {
                return None;
            }
            if entry.slot_plus_one as usize == slot + 1 {
                let start = entry.start as usize;
                let offsets = &self.offsets[start..start + (1 << entry.bits) + 1];
                return Some(Subdirectory {
                    bits: entry.bits,
                    dir_bits,
                    offsets,
                });
            }
            at = (at + 1) & (self.entries.len() - 1);
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.entries.capacity() * size_of::<Entry>() + self.offsets.capacity() * 4
    }
}

impl Subdirectory<'_> {
    /// Asks for the entry of `key` to be brought into cache, without waiting for it.
    #[inline]
    pub(crate) fn prefetch_entry(&self, key: u64) {
        prefetch(&self.offsets[sub_slot(key, self.dir_bits, self.bits)]);
    }

    /// The narrowest range it knows of keys sharing `key`'s top `bits` bits (at least the
    /// directory's), and how many bits that range shares: `bits` itself, or fewer when `bits`
    /// reaches below the subdirectory.
    #[inline]
    pub(crate) fn shared_range(&self, key: u64, bits: u32) -> (Range<usize>, u32) {
        let entry = sub_slot(key, self.dir_bits, self.bits);
        let known = self.dir_bits + self.bits;
        // The entries agreeing with `key` on the wanted bits are 2^(known - bits) in a row.
        let spread = known.saturating_sub(bits);
        let first = entry >> spread << spread;
        let range = self.offsets[first] as usize..self.offsets[first + (1 << spread)] as usize;
        (range, known.min(bits))
    }
}

/// The `bits` bits of `key` below its top `dir_bits` bits.
#[inline]
fn sub_slot(key: u64, dir_bits: u32, bits: u32) -> usize {
    ((key << dir_bits) >> (64 - bits)) as usize
}

/// Where slot `slot` starts looking in a table of `len` (a power of two) entries.
#[inline]
fn home(slot: usize, len: usize) -> usize {
    ((slot as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - len.trailing_zeros()).min(63))
        as usize
        & (len - 1)
}
