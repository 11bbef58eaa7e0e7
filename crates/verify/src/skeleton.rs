//! The filter skeleton (step 2): the parts of a document whose windows of S units also occur
//! in the other document.

/// A set of window hashes: open addressing with linear probing over a power-of-two table at
/// most half full, the slot taken from the top bits of the hash times an odd constant (so
/// small unit values spread too). Building and probing it costs a few nanoseconds per window,
/// a fraction of a general-purpose hash set.
#[derive(Clone, Debug, Default)]
pub struct WindowSet {
    slots: Vec<u64>,
    shift: u32,
    /// Whether the hash 0 is a member (0 marks an empty slot).
    has_zero: bool,
}

impl WindowSet {
    /// The set of `hashes`.
    pub fn new(hashes: &[u64]) -> WindowSet {
        let mut set = WindowSet::default();
        set.rebuild(hashes);
        set
    }

    /// Makes this the set of `hashes`, reusing its table when large enough.
    pub fn rebuild(&mut self, hashes: &[u64]) {
        let bits = (hashes.len().max(1) * 2)
            .next_power_of_two()
            .trailing_zeros()
            .max(4);
        self.slots.clear();
        self.slots.resize(1 << bits, 0);
        self.shift = 64 - bits;
        self.has_zero = false;
        let mask = self.slots.len() - 1;
        for &hash in hashes {
            if hash == 0 {
                self.has_zero = true;
                continue;
            }
            let mut slot = self.slot_of(hash);
            while self.slots[slot] != 0 && self.slots[slot] != hash {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = hash;
        }
    }

    fn slot_of(&self, hash: u64) -> usize {
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Whether `hash` is in the set.
    pub fn contains(&self, hash: u64) -> bool {
        if hash == 0 {
            return self.has_zero;
        }
        let mask = self.slots.len() - 1;
        let mut slot = self.slot_of(hash);
        loop {
            match self.slots[slot] {
                0 => return false,
                h if h == hash => return true,
                _ => slot = (slot + 1) & mask,
            }
        }
    }
}

/// Multiplier of the polynomial rolling hash (odd, so it is invertible modulo 2^64).
const BASE: u64 = 0x9E37_79B9_7F4A_7C15;

/// Hashes of every window of `window` consecutive units, by a Rabin-Karp rolling hash: each
/// step adds one unit and removes one, O(1).
pub fn window_hashes(units: &[u64], window: usize) -> Vec<u64> {
    let mut hashes = Vec::new();
    window_hashes_into(units, window, &mut hashes);
    hashes
}

/// [`window_hashes`] into `hashes` (its allocation reused).
pub fn window_hashes_into(units: &[u64], window: usize, hashes: &mut Vec<u64>) {
    hashes.clear();
    if window == 0 || units.len() < window {
        return;
    }
    let top = (1..window).fold(1u64, |p, _| p.wrapping_mul(BASE)); // BASE^(window-1)
    let mut hash = units[..window]
        .iter()
        .fold(0u64, |h, &u| h.wrapping_mul(BASE).wrapping_add(u));
    hashes.reserve(units.len() - window + 1);
    hashes.push(hash);
    for (&old, &new) in units.iter().zip(&units[window..]) {
        hash = hash
            .wrapping_sub(old.wrapping_mul(top))
            .wrapping_mul(BASE)
            .wrapping_add(new);
        hashes.push(hash);
    }
}

/// How many positions [`skeleton`] keeps, without listing them.
pub fn skeleton_len(hashes: &[u64], window: usize, other_windows: &WindowSet) -> usize {
    let (mut kept, mut covered_to) = (0, 0);
    for (start, &hash) in hashes.iter().enumerate() {
        if other_windows.contains(hash) {
            let to = start + window;
            kept += to - covered_to.max(start);
            covered_to = to;
        }
    }
    kept
}

/// Positions of a document covered by at least one window whose hash is in `other_windows`,
/// in increasing order, given the document's [`window_hashes`].
pub fn skeleton(hashes: &[u64], window: usize, other_windows: &WindowSet) -> Vec<usize> {
    let mut kept = Vec::with_capacity(hashes.len() + window);
    let mut covered_to = 0; // first position not yet kept
    for (start, &hash) in hashes.iter().enumerate() {
        if other_windows.contains(hash) {
            let to = start + window;
            kept.extend(covered_to.max(start)..to);
            covered_to = to;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn rolling_hash_equals_direct_hash() {
        let units: Vec<u64> = (0..50).map(|i| i * 7919 + 13).collect();
        for window in [1, 2, 5, 16] {
            let rolled = window_hashes(&units, window);
            for (start, hash) in rolled.iter().enumerate() {
                let direct = window_hashes(&units[start..start + window], window);
                assert_eq!(direct, [*hash]);
            }
        }
        assert!(window_hashes(&units[..3], 4).is_empty());
    }

    #[test]
    fn keeps_shared_runs_and_drops_short_islands() {
        // a: 0..20 with 100..105 inserted in the middle; b: 0..20 plus an island "7" alone.
        let a: Vec<u64> = (0..10).chain(100..105).chain(10..20).collect();
        let b: Vec<u64> = (0..20).chain([500, 7, 501]).collect();
        let window = 3;
        let b_windows = WindowSet::new(&window_hashes(&b, window));
        let kept: Vec<u64> = skeleton(&window_hashes(&a, window), window, &b_windows)
            .into_iter()
            .map(|i| a[i])
            .collect();
        assert_eq!(kept, (0..20).collect::<Vec<u64>>());
    }

    proptest! {
        #[test]
        fn skeleton_len_counts_the_skeleton(
            a in proptest::collection::vec(0u64..6, 0..200),
            b in proptest::collection::vec(0u64..6, 0..200),
            window in 1usize..5,
        ) {
            let (ha, hb) = (window_hashes(&a, window), window_hashes(&b, window));
            let set = WindowSet::new(&hb);
            prop_assert_eq!(skeleton_len(&ha, window, &set), skeleton(&ha, window, &set).len());
            // A set rebuilt from another's table answers as a new one.
            let mut reused = WindowSet::new(&ha);
            reused.rebuild(&hb);
            for hash in ha.iter().chain(&hb) {
                prop_assert_eq!(reused.contains(*hash), set.contains(*hash));
            }
        }

        #[test]
        fn window_set_agrees_with_a_hash_set(
            members in proptest::collection::vec(prop_oneof![Just(0u64), 0u64..64, any::<u64>()], 0..300),
            probes in proptest::collection::vec(prop_oneof![Just(0u64), 0u64..64, any::<u64>()], 0..300),
        ) {
            let set = WindowSet::new(&members);
            let reference: HashSet<u64> = members.iter().copied().collect();
            for hash in members.iter().chain(&probes) {
                prop_assert_eq!(set.contains(*hash), reference.contains(hash), "{}", hash);
            }
        }
    }
}
