//! Longest common subsequence by Myers' O(ND) algorithm, and the textbook O(N·M) dynamic
//! programme it is tested against.
//!
//! The search runs from both ends at once and stops where the two meet, after about D/2
//! rounds on each side (Myers 1986, section 4b). While the rounds are few enough to keep, each
//! side records the furthest x it reached per round and diagonal, and the path is read back
//! from those records: about D²/4 diagonal steps in all. Past that budget the search keeps
//! linear space and recurses on the two halves around the middle snake, which costs about
//! twice as many steps.

/// Rounds of each side whose furthest-reaching x values are kept for reading the path back:
/// up to 1,024 · 1,025 / 2 values per side (2 MB each), enough for D up to 2,048 at once.
const MAX_RECORDED_ROUNDS: usize = 1024;

/// The pairs `(i, j)` with `a[i] == b[j]` of one longest common subsequence, in order.
pub fn lcs_pairs<T: PartialEq>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    Lcs::default().pairs_into(a, b, &mut pairs);
    pairs
}

/// Myers' LCS with its work arrays kept between calls (they grow to the largest input seen).
#[derive(Default)]
pub struct Lcs {
    search: Search,
}

impl Lcs {
    /// Replaces `out` with the pairs `(i, j)` of one longest common subsequence, in order.
    pub fn pairs_into<T: PartialEq>(&mut self, a: &[T], b: &[T], out: &mut Vec<(usize, usize)>) {
        out.clear();
        diff(a, 0, b, 0, &mut self.search, out);
    }
}

/// Length of the LCS by the textbook dynamic programme, O(N·M) time, O(M) space.
pub fn lcs_len_reference<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Work arrays of the search, reused across the recursion.
struct Search {
    /// Furthest x per diagonal of the current forward round, and of the backward one.
    fwd: Vec<isize>,
    bwd: Vec<isize>,
    /// The recorded rounds: round d's values for its diagonals in increasing order, starting
    /// at index d(d + 1) / 2.
    fwd_rounds: Rounds,
    bwd_rounds: Rounds,
}

impl Search {
    /// A search that records up to `rounds` rounds per side.
    fn recording(rounds: usize) -> Search {
        let rounds = |centre| Rounds {
            values: Vec::new(),
            count: 0,
            centre,
            limit: rounds,
        };
        Search {
            fwd: Vec::new(),
            bwd: Vec::new(),
            fwd_rounds: rounds(0),
            bwd_rounds: rounds(0),
        }
    }
}

impl Default for Search {
    fn default() -> Search {
        Search::recording(MAX_RECORDED_ROUNDS)
    }
}

/// Recorded furthest-reaching x values, round by round.
struct Rounds {
    values: Vec<i32>,
    /// Rounds recorded, from round 0 on.
    count: usize,
    /// The diagonal whose value comes first in round 0 (0 forward, delta backward).
    centre: isize,
    /// Rounds it may record.
    limit: usize,
}

impl Rounds {
    fn reset(&mut self, centre: isize) {
        self.values.clear();
        self.count = 0;
        self.centre = centre;
    }

    /// Records round `d` from the current per-diagonal array, if the budget allows.
    fn record(&mut self, d: usize, current: &[isize], at: impl Fn(isize) -> usize) {
        if self.count != d || d >= self.limit {
            return;
        }
        let (first, last) = (at(self.centre - d as isize), at(self.centre + d as isize));
        self.values
            .extend(current[first..=last].iter().step_by(2).map(|&x| x as i32));
        self.count += 1;
    }

    /// The value of round `d` on diagonal `k` (which that round reached).
    fn get(&self, d: usize, k: isize) -> isize {
        let first = d * (d + 1) / 2;
        self.values[first + ((k - self.centre + d as isize) / 2) as usize] as isize
    }
}

/// Recursive divide and conquer on the middle snake (Myers 1986, section 4b).
fn diff<T: PartialEq>(
    a: &[T],
    a0: usize,
    b: &[T],
    b0: usize,
    search: &mut Search,
    out: &mut Vec<(usize, usize)>,
) {
    // Common prefix and suffix are matched directly.
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    out.extend((0..prefix).map(|k| (a0 + k, b0 + k)));
    let (a, b) = (&a[prefix..], &b[prefix..]);
    let (a0, b0) = (a0 + prefix, b0 + prefix);
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[..a.len() - suffix], &b[..b.len() - suffix]);
    // The middle either is read back whole or splits around its middle snake.
    if !a_mid.is_empty()
        && !b_mid.is_empty()
        && let Some((x, y, u, v)) = middle_snake(a_mid, b_mid, search, (a0, b0), out)
    {
        diff(&a_mid[..x], a0, &b_mid[..y], b0, search, out);
        out.extend((0..(u - x)).map(|k| (a0 + x + k, b0 + y + k)));
        diff(&a_mid[u..], a0 + u, &b_mid[v..], b0 + v, search, out);
    }
    let (a_end, b_end) = (a0 + a_mid.len(), b0 + b_mid.len());
    out.extend((0..suffix).map(|k| (a_end + k, b_end + k)));
}

/// Searches from both ends until the forward and backward paths meet. When the rounds that
/// led there were recorded, appends the whole optimal path's pairs (offset by `origin`) to
/// `out` and returns `None`; otherwise returns the middle snake `(x, y)` to `(u, v)`, a
/// diagonal run on an optimal path that splits the problem in two halves of about D/2 edits.
/// `a` and `b` are non-empty and differ in their first and in their last element (the caller
/// trims common ends), so D >= 2.
///
/// `fwd[i]` and `bwd[i]` hold the furthest x reached on diagonal `k = i - offset` (forward
/// from (0, 0), backward from (n, m)). Myers' choice "from k + 1 if its x is further, else from
/// k - 1" is `max(fwd[k - 1] + 1, fwd[k + 1])` once the two diagonals just outside round d's
/// range hold sentinels, so the hot loop has no unpredictable branch.
fn middle_snake<T: PartialEq>(
    a: &[T],
    b: &[T],
    search: &mut Search,
    origin: (usize, usize),
    out: &mut Vec<(usize, usize)>,
) -> Option<(usize, usize, usize, usize)> {
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
    if search.fwd.len() < size {
        search.fwd.resize(size, 0);
    }
    if search.bwd.len() < size {
        search.bwd.resize(size, 0);
    }
    let Search {
        fwd,
        bwd,
        fwd_rounds,
        bwd_rounds,
    } = search;
    let (fwd, bwd) = (&mut fwd[..size], &mut bwd[..size]);
    // Records hold i32; longer inputs simply recurse.
    let recordable = n + m < i32::MAX as isize / 4;
    fwd_rounds.reset(0);
    bwd_rounds.reset(delta);
    // Far outside any reachable x, and far from overflowing when 1 is added or taken.
    let (low, high) = (-(n + m + 2), 2 * (n + m + 2));
    let at = |k: isize| (k + offset) as usize;
    // Where forward round `df` and backward round `db` meet on diagonal k: appends the whole
    // path, read back from the records, when the rounds before them were kept and their
    // snakes there overlap (true), else leaves the split to the caller (false).
    let mut read_back =
        |df: usize, db: usize, k: isize, fwd_rounds: &Rounds, bwd_rounds: &Rounds| {
            if fwd_rounds.count < df || bwd_rounds.count < db {
                return false;
            }
            let (x0, x1) = (
                forward_start(fwd_rounds, df, k).0,
                backward_start(bwd_rounds, n, db, k).0,
            );
            if x0 > x1 {
                return false;
            }
            let start = out.len();
            trace_forward(fwd_rounds, df, k, x1, origin, out);
            out[start..].reverse();
            trace_backward(bwd_rounds, n, db, k, x1, origin, out);
            true
        };
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
                if read_back(d as usize, (d - 1) as usize, k, fwd_rounds, bwd_rounds) {
                    return None;
                }
                return Some((x0 as usize, (x0 - k) as usize, x as usize, y as usize));
            }
            k += 2;
        }
        if recordable {
            fwd_rounds.record(d as usize, fwd, at);
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
                if read_back(d as usize, d as usize, kk, fwd_rounds, bwd_rounds) {
                    return None;
                }
                return Some((x as usize, y as usize, x1 as usize, (x1 - kk) as usize));
            }
            kk += 2;
        }
        if recordable {
            bwd_rounds.record(d as usize, bwd, at);
        }
    }
    unreachable!("an optimal path has at most n + m edits")
}

/// Where forward round `d`'s snake on diagonal `k` began, and the diagonal of round d - 1 it
/// came from (Myers' rule, ties as in the search; round 0 starts at x = 0). The rounds before
/// `d` are recorded.
fn forward_start(rounds: &Rounds, d: usize, k: isize) -> (isize, isize) {
    if d == 0 {
        return (0, k);
    }
    let di = d as isize;
    let from_above = k == -di || (k != di && rounds.get(d - 1, k - 1) < rounds.get(d - 1, k + 1));
    if from_above {
        (rounds.get(d - 1, k + 1), k + 1)
    } else {
        (rounds.get(d - 1, k - 1) + 1, k - 1)
    }
}

/// Where backward round `d`'s snake on diagonal `kk` began (going down from there; round 0
/// starts at x = n), and the diagonal of round d - 1 it came from.
fn backward_start(rounds: &Rounds, n: isize, d: usize, kk: isize) -> (isize, isize) {
    if d == 0 {
        return (n, kk);
    }
    let (di, k) = (d as isize, kk - rounds.centre);
    let from_left = k == di || (k != -di && rounds.get(d - 1, kk - 1) < rounds.get(d - 1, kk + 1));
    if from_left {
        (rounds.get(d - 1, kk - 1), kk - 1)
    } else {
        (rounds.get(d - 1, kk + 1) - 1, kk + 1)
    }
}

/// Appends, last first, the pairs of the forward path that reaches x = `end` on diagonal `k`
/// within round `d`'s snake there.
fn trace_forward(
    rounds: &Rounds,
    mut d: usize,
    mut k: isize,
    mut end: isize,
    origin: (usize, usize),
    out: &mut Vec<(usize, usize)>,
) {
    loop {
        let (x0, from) = forward_start(rounds, d, k);
        out.extend(
            (x0..end)
                .rev()
                .map(|x| (origin.0 + x as usize, origin.1 + (x - k) as usize)),
        );
        if d == 0 {
            return;
        }
        (d, k) = (d - 1, from);
        end = rounds.get(d, k);
    }
}

/// Appends, first first, the pairs of the backward path from x = `start` on diagonal `kk`
/// within round `d`'s snake there to (n, m).
fn trace_backward(
    rounds: &Rounds,
    n: isize,
    mut d: usize,
    mut kk: isize,
    mut start: isize,
    origin: (usize, usize),
    out: &mut Vec<(usize, usize)>,
) {
    loop {
        let (x1, from) = backward_start(rounds, n, d, kk);
        out.extend((start..x1).map(|x| (origin.0 + x as usize, origin.1 + (x - kk) as usize)));
        if d == 0 {
            return;
        }
        (d, kk) = (d - 1, from);
        start = rounds.get(d, kk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(a: &[u8], b: &[u8]) {
        check_recording(a, b, MAX_RECORDED_ROUNDS);
    }

    /// Checks the LCS found when each side may record `rounds` rounds: 0 recurses on every
    /// middle snake, small budgets mix reading paths back and recursing.
    fn check_recording(a: &[u8], b: &[u8], rounds: usize) {
        let mut pairs = Vec::new();
        diff(a, 0, b, 0, &mut Search::recording(rounds), &mut pairs);
        assert_eq!(pairs.len(), lcs_len_reference(a, b), "{a:?} {b:?}");
        for window in pairs.windows(2) {
            assert!(
                window[0].0 < window[1].0 && window[0].1 < window[1].1,
                "increasing: {pairs:?}"
            );
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
        fn myers_with_few_or_no_recorded_rounds(a in proptest::collection::vec(0u8..4, 0..80), b in proptest::collection::vec(0u8..4, 0..80), rounds in 0usize..6) {
            check_recording(&a, &b, rounds);
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
