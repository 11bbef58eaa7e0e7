//! The filter skeleton (step 2): the parts of a document whose windows of S units also occur
//! in the other document.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A set of window hashes. They are already well mixed, so the set hashes them by identity
/// (SipHash would cost more than the rest of the skeleton).
pub type WindowSet = HashSet<u64, BuildHasherDefault<IdentityHasher>>;

/// The identity hasher of [`WindowSet`].
#[derive(Default)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Multiplier of the polynomial rolling hash (odd, so it is invertible modulo 2^64).
const BASE: u64 = 0x9E37_79B9_7F4A_7C15;

/// Hashes of every window of `window` consecutive units, by a Rabin-Karp rolling hash: each
/// step adds one unit and removes one, O(1).
pub fn window_hashes(units: &[u64], window: usize) -> Vec<u64> {
    if window == 0 || units.len() < window {
        return Vec::new();
    }
    let top = (1..window).fold(1u64, |p, _| p.wrapping_mul(BASE)); // BASE^(window-1)
    let mut hash = units[..window].iter().fold(0u64, |h, &u| h.wrapping_mul(BASE).wrapping_add(u));
    let mut hashes = Vec::with_capacity(units.len() - window + 1);
    hashes.push(hash);
    for i in window..units.len() {
        hash = hash.wrapping_sub(units[i - window].wrapping_mul(top)).wrapping_mul(BASE).wrapping_add(units[i]);
        hashes.push(hash);
    }
    hashes
}

/// Positions of `units` covered by at least one window whose hash is in `other_windows`, in
/// increasing order.
pub fn skeleton(units: &[u64], window: usize, other_windows: &WindowSet) -> Vec<usize> {
    let mut kept = Vec::new();
    let mut covered_to = 0; // first position not yet kept
    for (start, hash) in window_hashes(units, window).into_iter().enumerate() {
        if other_windows.contains(&hash) {
            let from = covered_to.max(start);
            let to = start + window;
            kept.extend(from..to);
            covered_to = to;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
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
        let b_windows: WindowSet = window_hashes(&b, window).into_iter().collect();
        let kept: Vec<u64> = skeleton(&a, window, &b_windows).into_iter().map(|i| a[i]).collect();
        assert_eq!(kept, (0..20).collect::<Vec<u64>>());
    }
}
