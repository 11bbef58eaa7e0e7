//! The trustable part of an LCS (step 3): the longest central region of document A whose
//! edit slope stays under θ. Templates and ads sit at the head and tail of a page; the
//! article in the middle is where a real copy agrees continuously.

/// Blocks A is cut into for the base regions (the paper's k; O(k²) regions are tried).
const MAX_BLOCKS: usize = 64;

/// The trustable region `[start, end)` of A and how many matched positions it holds, given
/// which positions of A are part of the LCS. `None` when no region keeps the slope under θ.
pub fn trustable_region(matched: &[bool], slope: f64) -> Option<(usize, usize, usize)> {
    let n = matched.len();
    if n == 0 {
        return None;
    }
    // edits[x] = unmatched positions in [0, x): the SES curve of A.
    let mut edits = Vec::with_capacity(n + 1);
    edits.push(0usize);
    for &m in matched {
        edits.push(edits.last().copied().unwrap_or(0) + usize::from(!m));
    }
    let slope_of = |l: usize, r: usize| (edits[r] - edits[l]) as f64 / (r - l) as f64;

    // Base regions: runs of whole blocks, centre-weighted; the heaviest, then the shortest.
    let k = n.min(MAX_BLOCKS);
    let size = n.div_ceil(k);
    let k = n.div_ceil(size);
    let centre = k.div_ceil(2) as i64;
    let weight = |i: usize| centre - (centre - (i as i64 + 1)).abs();
    let bounds = |i: usize| (i * size, ((i + 1) * size).min(n));
    let mut best: Option<(i64, usize, usize, usize)> = None; // (weight, -blocks, first, last)
    for i in 0..k {
        let mut total = 0;
        for j in i..k {
            total += weight(j);
            let (l, r) = (bounds(i).0, bounds(j).1);
            if slope_of(l, r) > slope {
                continue;
            }
            let blocks = j - i + 1;
            let better = match best {
                None => true,
                Some((w, b, _, _)) => total > w || (total == w && blocks < b),
            };
            if better {
                best = Some((total, blocks, i, j));
            }
        }
    }
    let (_, _, first, last) = best?;
    let (l, r) = (bounds(first).0, bounds(last).1);
    // Extend: the smallest start, then the largest end, that keep the slope under θ.
    let start = (0..=l).find(|&x| slope_of(x, r) <= slope).unwrap_or(l);
    let end = (r..=n)
        .rev()
        .find(|&x| slope_of(start, x) <= slope)
        .unwrap_or(r);
    let matched_in = (end - start) - (edits[end] - edits[start]);
    Some((start, end, matched_in))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(s: &str) -> Vec<bool> {
        s.chars().map(|c| c == 'm').collect()
    }

    #[test]
    fn noisy_head_and_tail_are_cut() {
        // 20 template edits, 200 matched with a few edits, 20 template edits.
        let middle: String = (0..200)
            .map(|i| if i % 50 == 25 { 'x' } else { 'm' })
            .collect();
        let matched = pattern(&format!("{}{middle}{}", "x".repeat(20), "x".repeat(20)));
        let (start, end, count) = trustable_region(&matched, 0.10).expect("region");
        // The region may take in some template edits as long as its slope stays under θ.
        assert!(start <= 20 && end >= 220, "{start}..{end}");
        let edits_taken = (end - start) - count;
        assert!(edits_taken as f64 <= 0.10 * (end - start) as f64);
        assert_eq!(count, 196);
    }

    #[test]
    fn all_matched_and_none_matched() {
        assert_eq!(
            trustable_region(&pattern(&"m".repeat(100)), 0.1),
            Some((0, 100, 100))
        );
        assert_eq!(trustable_region(&pattern(&"x".repeat(100)), 0.1), None);
        assert_eq!(trustable_region(&[], 0.1), None);
    }

    #[test]
    fn slope_is_respected() {
        // Alternating 9 matches and 1 edit has slope exactly 0.1.
        let s: String = (0..300)
            .map(|i| if i % 10 == 9 { 'x' } else { 'm' })
            .collect();
        let (start, end, count) = trustable_region(&pattern(&s), 0.10).expect("region");
        assert_eq!((start, end, count), (0, 300, 270));
        assert_eq!(
            trustable_region(&pattern(&s), 0.05).map(|r| r.2 < 30),
            Some(true)
        );
    }
}
