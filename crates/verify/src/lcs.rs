//! Longest common subsequence by Myers' O(ND) algorithm (linear space, middle snake), and the
//! textbook O(N·M) dynamic programme it is tested against.

/// The pairs `(i, j)` with `a[i] == b[j]` of one longest common subsequence, in order.
pub fn lcs_pairs<T: PartialEq>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut v = Vec::new();
    let mut w = Vec::new();
    diff(a, 0, b, 0, &mut v, &mut w, &mut pairs);
    pairs
}

/// Length of the LCS by the textbook dynamic programme, O(N·M) time, O(M) space.
pub fn lcs_len_reference<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y { diagonal + 1 } else { above.max(row[j]) };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Recursive divide and conquer on the middle snake (Myers 1986, section 4b).
fn diff<T: PartialEq>(
    a: &[T],
    a0: usize,
    b: &[T],
    b0: usize,
    v: &mut Vec<isize>,
    w: &mut Vec<isize>,
    out: &mut Vec<(usize, usize)>,
) {
    // Common prefix and suffix are matched directly.
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    for k in 0..prefix {
        out.push((a0 + k, b0 + k));
    }
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let (a0, b0) = (a0 + prefix, b0 + prefix);
    let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let (a_mid, b_mid) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    if !a_mid.is_empty() && !b_mid.is_empty() {
        let (x, y, u, vv) = middle_snake(a_mid, b_mid, v, w);
        diff(&a_mid[..x], a0, &b_mid[..y], b0, v, w, out);
        for k in 0..(u - x) {
            out.push((a0 + x + k, b0 + y + k));
        }
        diff(&a_mid[u..], a0 + u, &b_mid[vv..], b0 + vv, v, w, out);
    }
    let (a_end, b_end) = (a0 + a_mid.len(), b0 + b_mid.len());
    for k in 0..suffix {
        out.push((a_end + k, b_end + k));
    }
}

/// The middle snake of an optimal edit path: `(x, y)` to `(u, v)` on it, a diagonal run that
/// splits the problem in two halves of about D/2 edits each. `a` and `b` are non-empty and
/// differ in their first and in their last element (the caller trims common ends), so D >= 2.
///
/// `fwd[i]` and `bwd[i]` hold the furthest x reached on diagonal `k = i - offset` (forward
/// from (0, 0), backward from (n, m)). Myers' choice "from k + 1 if its x is further, else from
/// k - 1" is `max(fwd[k - 1] + 1, fwd[k + 1])` once the two diagonals just outside round d's
/// range hold sentinels, so the hot loop has no unpredictable branch.
fn middle_snake<T: PartialEq>(a: &[T], b: &[T], fwd: &mut Vec<isize>, bwd: &mut Vec<isize>) -> (usize, usize, usize, usize) {
    let n = a.len() as isize;
    let m = b.len() as isize;
    let delta = n - m;
    let odd = delta & 1 == 1;
    let max = (n + m + 1) / 2;
    // Diagonals k = x - y reach from -(max + 1) to max + 1, reverse ones shifted by delta.
    let offset = max + delta.abs() + 2;
    let size = (2 * offset + 1) as usize;
    // No clearing: every entry is written in round d before round d or d + 1 reads it, except
    // the sentinels, which each round writes first. (Zeroing per call would cost O(N) per
    // recursion, O(N·D) in all.)
    if fwd.len() < size {
        fwd.resize(size, 0);
    }
    if bwd.len() < size {
        bwd.resize(size, 0);
    }
    let (fwd, bwd) = (&mut fwd[..size], &mut bwd[..size]);
    // Far outside any reachable x, and far from overflowing when 1 is added or taken.
    let (low, high) = (-(n + m + 2), 2 * (n + m + 2));
    let at = |k: isize| (k + offset) as usize;
    for d in 0..=max {
        // Forward round d: diagonals -d, -d + 2, ..., d.
        fwd[at(-d - 1)] = low;
        fwd[at(d + 1)] = if d == 0 { 0 } else { low };
        let (check_from, check_to) = (delta - (d - 1), delta + (d - 1));
        let mut k = -d;
        while k <= d {
            let i = at(k);
            let x0 = (fwd[i - 1] + 1).max(fwd[i + 1]);
            let (mut x, mut y) = (x0, x0 - k);
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            fwd[i] = x;
            if odd && k >= check_from && k <= check_to && x >= bwd[i] {
                return (x0 as usize, (x0 - k) as usize, x as usize, y as usize);
            }
            k += 2;
        }
        // Backward round d: diagonals delta - d, ..., delta + d.
        bwd[at(delta - d - 1)] = high;
        bwd[at(delta + d + 1)] = if d == 0 { n + 1 } else { high };
        let mut kk = delta - d;
        while kk <= delta + d {
            let i = at(kk);
            let x1 = bwd[i - 1].min(bwd[i + 1] - 1);
            let (mut x, mut y) = (x1, x1 - kk);
            while x > 0 && y > 0 && a[(x - 1) as usize] == b[(y - 1) as usize] {
                x -= 1;
                y -= 1;
            }
            bwd[i] = x;
            if !odd && kk >= -d && kk <= d && x <= fwd[i] {
                return (x as usize, y as usize, x1 as usize, (x1 - kk) as usize);
            }
            kk += 2;
        }
    }
    unreachable!("an optimal path has at most n + m edits")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(a: &[u8], b: &[u8]) {
        let pairs = lcs_pairs(a, b);
        assert_eq!(pairs.len(), lcs_len_reference(a, b), "{a:?} {b:?}");
        for window in pairs.windows(2) {
            assert!(window[0].0 < window[1].0 && window[0].1 < window[1].1, "increasing: {pairs:?}");
        }
        for &(i, j) in &pairs {
            assert_eq!(a[i], b[j]);
        }
    }

    #[test]
    fn known_cases() {
        assert_eq!(lcs_len_reference(b"ABCABBA", b"CBABAC"), 4);
        check(b"ABCABBA", b"CBABAC");
        check(b"", b"abc");
        check(b"abc", b"");
        check(b"abc", b"abc");
        check(b"abc", b"xyz");
        check(b"a", b"b");
        check(b"xaxbxc", b"abc");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn myers_matches_the_textbook_lcs(a in proptest::collection::vec(0u8..4, 0..60), b in proptest::collection::vec(0u8..4, 0..60)) {
            check(&a, &b);
        }

        #[test]
        fn myers_on_edited_copies(a in proptest::collection::vec(0u8..20, 0..200), edits in proptest::collection::vec((0usize..200, 0u8..20, 0u8..3), 0..20)) {
            let mut b = a.clone();
            for (pos, value, op) in edits {
                let pos = if b.is_empty() { 0 } else { pos % b.len() };
                match op {
                    0 if !b.is_empty() => { b.remove(pos); }
                    1 => b.insert(pos, value),
                    _ if !b.is_empty() => b[pos] = value,
                    _ => {}
                }
            }
            check(&a, &b);
        }
    }
}
