//! A crawl's decisions replayed through a rule book: the rules its duplicates teach, and
//! what each would have saved (or lost) had its predictions been trusted before fetching.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::{Deserialize, Serialize};
use url::Url;

use crate::book::{RuleBook, RuleId, RuleStats};

/// A fetched page's decision, as a crawl's record gives it.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// The page's URL.
    pub url: &'a Url,
    /// Bytes fetched for it.
    pub bytes: u64,
    /// The kept page it was judged a duplicate of (`None`: kept as unique).
    pub duplicate_of: Option<&'a Url>,
    /// Its duplicate cluster, when it has one (a kept page with duplicates, or a duplicate).
    pub cluster: Option<u64>,
}

/// What one rule did over a replayed crawl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleReport {
    /// The rule, `from -> to` ([`crate::Rule`]'s display).
    pub rule: String,
    /// Its support and the predictions checked.
    pub stats: RuleStats,
    /// Bytes of the pages it predicted right: what skipping them would have saved.
    pub bytes_confirmed: u64,
    /// Bytes of the pages it predicted wrong: what skipping them would have lost.
    pub bytes_wrong: u64,
}

/// Decisions replayed in the order a crawl made them: before a page teaches its rule, the
/// rules learned from earlier pages predict it, and the prediction is checked against its
/// verdict. Only predictions of a counterpart the crawl had already fetched count: a crawl
/// could act on no other.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    book: RuleBook,
    /// Pages fetched so far: a hash of the URL -> its cluster (8 bytes a URL, not its text:
    /// a replay of a million pages holds a few tens of MB).
    fetched: HashMap<u64, Option<u64>>,
    /// Per rule: bytes predicted right, bytes predicted wrong.
    bytes: Vec<(u64, u64)>,
}

impl Replay {
    /// Nothing replayed yet.
    pub fn new() -> Replay {
        Replay::default()
    }

    /// The next decision: checks the prediction for it, then learns from it.
    pub fn observe(&mut self, page: Observation<'_>) {
        if let Some(prediction) = self.book.predict(page.url)
            && let Some(counterpart_cluster) = self.fetched.get(&url_hash(&prediction.counterpart))
        {
            let right = page.duplicate_of == Some(&prediction.counterpart)
                || (page.duplicate_of.is_some()
                    && page.cluster.is_some()
                    && *counterpart_cluster == page.cluster);
            self.book.check(prediction.rule, right);
            let (good, bad) = self.bytes_of(prediction.rule);
            match right {
                true => *good += page.bytes,
                false => *bad += page.bytes,
            }
        }
        self.fetched.insert(url_hash(page.url), page.cluster);
        if let Some(original) = page.duplicate_of {
            self.book.learn(page.url, original);
        }
    }

    fn bytes_of(&mut self, rule: RuleId) -> (&mut u64, &mut u64) {
        if self.bytes.len() <= rule.index() {
            self.bytes.resize(rule.index() + 1, (0, 0));
        }
        let (good, bad) = &mut self.bytes[rule.index()];
        (good, bad)
    }

    /// The rules learned, the most confirmed bytes first (then the best supported).
    pub fn report(&self) -> Vec<RuleReport> {
        let mut rules: Vec<RuleReport> = self
            .book
            .iter()
            .map(|(id, rule, stats)| {
                let (bytes_confirmed, bytes_wrong) =
                    self.bytes.get(id.index()).copied().unwrap_or_default();
                RuleReport {
                    rule: rule.to_string(),
                    stats,
                    bytes_confirmed,
                    bytes_wrong,
                }
            })
            .collect();
        rules.sort_by(|a, b| {
            (b.bytes_confirmed, b.stats.support).cmp(&(a.bytes_confirmed, a.stats.support))
        });
        rules
    }

    /// The book as it stands.
    pub fn book(&self) -> &RuleBook {
        &self.book
    }
}

fn url_hash(url: &Url) -> u64 {
    let mut hasher = DefaultHasher::new();
    url.as_str().hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("a URL")
    }

    #[test]
    fn a_rule_is_credited_with_the_pages_it_predicted_once_learned() {
        let mut replay = Replay::new();
        let page = |replay: &mut Replay, at: &str, bytes, of: Option<&str>, cluster| {
            let (at, of) = (url(at), of.map(url));
            replay.observe(Observation {
                url: &at,
                bytes,
                duplicate_of: of.as_ref(),
                cluster,
            });
        };
        for n in 1..=4 {
            page(
                &mut replay,
                &format!("http://o.example/a/{n}.html"),
                100,
                None,
                Some(n),
            );
        }
        // The first copy teaches the rule; the next two are predicted right, the fourth
        // wrong (the mirror's page of its own, unique).
        page(
            &mut replay,
            "http://m.example/story/1/",
            10,
            Some("http://o.example/a/1.html"),
            Some(1),
        );
        page(
            &mut replay,
            "http://m.example/story/2/",
            20,
            Some("http://o.example/a/2.html"),
            Some(2),
        );
        // Judged a duplicate of another member of the counterpart's cluster: right too.
        page(
            &mut replay,
            "http://m.example/story/3/",
            30,
            Some("http://m.example/other"),
            Some(3),
        );
        page(&mut replay, "http://m.example/story/4/", 40, None, None);
        // Its counterpart was never fetched: no prediction counted.
        page(&mut replay, "http://m.example/story/9/", 50, None, None);
        let report = replay.report();
        // The pairs teach an affix rule too (`story/*/`), second in rank: never asked.
        assert_eq!(report.len(), 2, "{report:?}");
        assert_eq!(
            report[1].rule,
            "http://m.example/story/*/ -> http://o.example/a/*.html"
        );
        assert_eq!((report[1].stats.support, report[1].stats.checked), (2, 0));
        let rule = &report[0];
        assert_eq!(
            rule.rule,
            "http://m.example/story/{1}/ -> http://o.example/a/{1}.html"
        );
        assert_eq!(
            (rule.stats.support, rule.stats.checked, rule.stats.confirmed),
            (2, 3, 2)
        );
        assert_eq!((rule.bytes_confirmed, rule.bytes_wrong), (50, 40));
    }
}
