//! The truth about a real web, computed without the product: each page's main region as the
//! site's own markup marks it ([`main_words`], parsed with `scraper`), split into words (CJK
//! characters one by one), and two pages compared by the diff ratio of their word sequences
//! (the longest common subsequence, Myers' diff without heuristics, crate `similar`).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Mutex;

use scraper::{Html, Selector};
use similar::{Algorithm, capture_diff_slices_deadline, diff_ratio};

use super::RealWeb;
use crate::measure::Labels;
use crate::truth::{Kind, PageTruth};

/// Pages with fewer words than this in their main region are not scored.
pub const MIN_TRUTH_WORDS: usize = 8;
/// Diff ratio at or above which two pages are near-duplicates.
pub const NEAR_RATIO: f64 = 0.8;
/// Diff ratio at or below which two pages are distinct.
pub const DISTINCT_RATIO: f64 = 0.5;

/// The words of a page's main region (the whole body when the markup marks none).
pub(super) fn main_words(html: &str, main: &Selector) -> Vec<String> {
    let doc = Html::parse_document(html);
    let skip = |node: &scraper::ElementRef<'_>| {
        matches!(node.value().name(), "script" | "style" | "noscript")
    };
    let mut text = String::new();
    let mut regions: Vec<_> = doc.select(main).collect();
    if regions.is_empty() {
        regions = doc
            .select(&Selector::parse("body").expect("a valid selector"))
            .collect();
    }
    for region in regions {
        for node in region.descendants() {
            if let Some(t) = node.value().as_text() {
                let inside_skipped = node
                    .ancestors()
                    .filter_map(scraper::ElementRef::wrap)
                    .any(|e| skip(&e));
                if !inside_skipped {
                    text.push_str(t);
                    text.push(' ');
                }
            }
        }
    }
    words(&text)
}

/// Lowercased whitespace-separated words; characters of CJK scripts are words of their own.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split_whitespace() {
        let mut current = String::new();
        for c in word.chars().flat_map(char::to_lowercase) {
            if is_cjk(c) {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                out.push(c.to_string());
            } else {
                current.push(c);
            }
        }
        if !current.is_empty() {
            out.push(current);
        }
    }
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff)
}

/// One page of the truth.
#[derive(Debug)]
pub(super) struct TruthPage {
    pub(super) url: String,
    pub(super) site: usize,
    pub(super) rel: String,
    pub(super) words: Vec<String>,
}

/// The truth about a real web: per page its group and kind, and for any two pages whether the
/// second is truly a near-duplicate of the first.
#[derive(Debug)]
pub struct RealTruth {
    pages: HashMap<String, (PageTruth, usize)>,
    words: Vec<Vec<u64>>,
    rels: Vec<String>,
    ratios: Mutex<HashMap<(usize, usize), f64>>,
}

fn word_ids(words: &[String]) -> Vec<u64> {
    words
        .iter()
        .map(|w| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            w.hash(&mut h);
            h.finish()
        })
        .collect()
}

/// The diff ratio of two word sequences: 2 x matched words / total words (1 for two empty
/// texts). A multiset bound first: pages that cannot reach `DISTINCT_RATIO` are not diffed.
pub fn sequence_ratio(a: &[u64], b: &[u64]) -> f64 {
    bounded_ratio(a, b, DISTINCT_RATIO)
}

/// The diff ratio, or an upper bound of it at or under `floor` (the multiset bound) when it
/// cannot exceed `floor`.
fn bounded_ratio(a: &[u64], b: &[u64], floor: f64) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    let mut counts: HashMap<u64, i64> = HashMap::new();
    for w in a {
        *counts.entry(*w).or_default() += 1;
    }
    let mut common = 0usize;
    for w in b {
        if let Some(c) = counts.get_mut(w)
            && *c > 0
        {
            *c -= 1;
            common += 1;
        }
    }
    let bound = 2.0 * common as f64 / total as f64;
    if bound <= floor {
        return bound;
    }
    // Myers' diff without heuristics: the longest common subsequence itself (difflib's
    // matching blocks find a common subsequence, not always the longest).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let ops = capture_diff_slices_deadline(Algorithm::RawMyers, a, b, Some(deadline));
    f64::from(diff_ratio(&ops, a.len(), b.len()))
}

impl RealTruth {
    pub(super) fn new(web: RealWeb, pages: Vec<TruthPage>) -> RealTruth {
        let words: Vec<Vec<u64>> = pages.iter().map(|p| word_ids(&p.words)).collect();
        let mut truth = RealTruth {
            pages: HashMap::new(),
            words,
            rels: pages.iter().map(|p| p.rel.clone()).collect(),
            ratios: Mutex::new(HashMap::new()),
        };
        // Pages of one site that nearly match each other: unknown.
        let mut ambiguous: HashSet<usize> = HashSet::new();
        let mut by_site: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, p) in pages.iter().enumerate() {
            by_site.entry(p.site).or_default().push(i);
        }
        for members in by_site.values() {
            let mut sorted = members.clone();
            sorted.sort_by_key(|&i| truth.words[i].len());
            for (x, &i) in sorted.iter().enumerate() {
                for &j in &sorted[x + 1..] {
                    let (li, lj) = (truth.words[i].len(), truth.words[j].len());
                    // ratio <= 2 li / (li + lj): past this, no longer page can be near.
                    if (2 * li) as f64 / ((li + lj).max(1)) as f64 <= NEAR_RATIO {
                        break;
                    }
                    // Only whether they are near matters here: no diff when they cannot be.
                    if bounded_ratio(&truth.words[i], &truth.words[j], NEAR_RATIO) >= NEAR_RATIO {
                        ambiguous.insert(i);
                        ambiguous.insert(j);
                    }
                }
            }
        }
        // Counterparts: the same page on other sites; near ones share a group.
        let mut by_rel: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, p) in pages.iter().enumerate() {
            by_rel.entry(p.rel.as_str()).or_default().push(i);
        }
        let mut parent: Vec<usize> = (0..pages.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut kinds: Vec<Kind> = vec![Kind::RealFirst; pages.len()];
        for members in by_rel.values() {
            for (x, &i) in members.iter().enumerate() {
                if x == 0 {
                    kinds[i] = if pages[i].site == 0 {
                        Kind::RealFirst
                    } else {
                        Kind::RealNew
                    };
                }
                for &j in &members[..x] {
                    let r = truth.ratio(j, i);
                    let kind = if r >= NEAR_RATIO {
                        let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                        parent[a.max(b)] = a.min(b);
                        web.copy_kind()
                    } else if r > DISTINCT_RATIO {
                        Kind::Edited
                    } else {
                        Kind::Rewritten
                    };
                    // The closest relation to an earlier site wins.
                    if x > 0 && kind_rank(kind) > kind_rank(kinds[i]) {
                        kinds[i] = kind;
                    }
                }
            }
        }
        // A page without counterpart may be an earlier page renamed: near any page of an
        // earlier site.
        for i in 0..pages.len() {
            if kinds[i] != Kind::RealNew {
                continue;
            }
            let li = truth.words[i].len();
            let renamed = (0..pages.len()).find(|&j| {
                let lj = truth.words[j].len();
                pages[j].site < pages[i].site
                    && (2 * li.min(lj)) as f64 / ((li + lj).max(1)) as f64 > NEAR_RATIO
                    && bounded_ratio(&truth.words[i], &truth.words[j], NEAR_RATIO) >= NEAR_RATIO
            });
            if let Some(j) = renamed {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
                kinds[i] = Kind::Renamed;
                if ambiguous.contains(&j) {
                    ambiguous.insert(i);
                }
            }
        }
        for (i, p) in pages.iter().enumerate() {
            let group = root(&mut parent, i) as u64;
            let scored = !ambiguous.contains(&i)
                && truth.words[i].len() >= MIN_TRUTH_WORDS
                && kinds[i] != Kind::Edited;
            let kind = if ambiguous.contains(&i) {
                Kind::Ambiguous
            } else if truth.words[i].len() < MIN_TRUTH_WORDS {
                Kind::Empty
            } else {
                kinds[i]
            };
            truth.pages.insert(
                p.url.clone(),
                (
                    PageTruth {
                        group,
                        kind,
                        scored,
                    },
                    i,
                ),
            );
        }
        truth
    }

    fn ratio(&self, i: usize, j: usize) -> f64 {
        let key = (i.min(j), i.max(j));
        if let Some(r) = self.ratios.lock().ok().and_then(|m| m.get(&key).copied()) {
            return r;
        }
        let r = sequence_ratio(&self.words[key.0], &self.words[key.1]);
        if let Ok(mut m) = self.ratios.lock() {
            m.insert(key, r);
        }
        r
    }

    /// The diff ratio of two pages' main texts, if both are pages of the web.
    pub fn pair_ratio(&self, a: &str, b: &str) -> Option<f64> {
        let (_, i) = self.pages.get(a)?;
        let (_, j) = self.pages.get(b)?;
        Some(self.ratio(*i, *j))
    }

    /// Every page with its truth, by URL.
    pub fn pages(&self) -> Vec<(String, PageTruth)> {
        let mut pages: Vec<(String, PageTruth)> = self
            .pages
            .iter()
            .map(|(url, (t, _))| (url.clone(), *t))
            .collect();
        pages.sort_by(|a, b| a.0.cmp(&b.0));
        pages
    }

    /// The counterparts of a page: the same page on the other sites.
    pub fn counterparts(&self, url: &str) -> Vec<String> {
        let Some((_, i)) = self.pages.get(url) else {
            return Vec::new();
        };
        let rel = &self.rels[*i];
        let mut found: Vec<String> = self
            .pages
            .iter()
            .filter(|(u, (_, j))| *j != *i && self.rels[*j] == *rel && u.as_str() != url)
            .map(|(u, _)| u.clone())
            .collect();
        found.sort();
        found
    }

    /// Pages in the truth.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Writes the truth as JSON lines (`{"url", "group", "kind", "scored", "words"}`).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut lines: Vec<String> = self
            .pages
            .iter()
            .map(|(url, (t, i))| {
                serde_json::json!({"url": url, "group": t.group, "kind": t.kind,
                    "scored": t.scored, "words": self.words[*i].len()})
                .to_string()
            })
            .collect();
        lines.sort();
        std::fs::write(path, lines.join("\n") + "\n")
    }
}

fn kind_rank(kind: Kind) -> u8 {
    match kind {
        Kind::Unchanged | Kind::Untranslated | Kind::Renamed => 4,
        Kind::Edited => 3,
        Kind::Rewritten => 2,
        Kind::RealFirst => 1,
        _ => 0,
    }
}

impl Labels for RealTruth {
    fn get(&self, url: &str) -> Option<PageTruth> {
        self.pages.get(url).map(|(t, _)| *t)
    }

    fn copies(&self, copy: &str, original: &str) -> Option<bool> {
        let (page, _) = self.pages.get(copy)?;
        if !page.scored {
            return None;
        }
        let r = self.pair_ratio(copy, original)?;
        if r >= NEAR_RATIO {
            Some(true)
        } else if r <= DISTINCT_RATIO {
            Some(false)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_characters_are_words_of_their_own() {
        assert_eq!(
            words("Hello, 世界 and Déjà-vu"),
            ["hello,", "世", "界", "and", "déjà-vu"]
        );
    }

    #[test]
    fn the_ratio_counts_matched_words_in_order() {
        let ids = |s: &str| word_ids(&words(s));
        assert_eq!(sequence_ratio(&ids("a b c d"), &ids("a b c d")), 1.0);
        // Three of four words in order on each side: 2 x 3 / 8.
        assert_eq!(sequence_ratio(&ids("a b c d"), &ids("a b c e")), 0.75);
        // Reversed: the bound says 1, the diff says one word in order.
        assert_eq!(sequence_ratio(&ids("a b c d"), &ids("d c b a")), 0.25);
        assert_eq!(sequence_ratio(&ids("a b"), &ids("c d")), 0.0);
    }

    #[test]
    fn the_main_region_is_what_the_markup_marks() {
        let selector = Selector::parse("div[role=main]").unwrap();
        let html = "<html><body><div class=nav>Home Next</div><div role=main><h1>Title</h1>\
                    <p>Body <b>text</b></p><script>var x;</script></div></body></html>";
        assert_eq!(main_words(html, &selector), ["title", "body", "text"]);
        let selector = Selector::parse("body > div:not(#banner)").unwrap();
        let html = "<body><div id=banner>Logo</div><div class=section><p>One</p></div>\
                    <ul class=docnav><li>Prev</li></ul><div class=chapter>Two</div></body>";
        assert_eq!(main_words(html, &selector), ["one", "two"]);
    }
}
