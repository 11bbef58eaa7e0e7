//! The book of rules: each rule with what it has been seen to do ([`RuleStats`]), and the
//! predictions they give ([`RuleBook::predict`], [`RuleBook::ranked`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::rules::{Key, Rule};
use crate::template::Cut;

/// A rule's place in its [`RuleBook`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RuleId(u32);

impl RuleId {
    /// Its number, from 0 in the order the rules were learned.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id numbered `n` (as kept with a prediction; a book read back numbers its rules
    /// as they were).
    pub fn from_number(n: u32) -> RuleId {
        RuleId(n)
    }

    /// Its number, as [`RuleId::from_number`] takes it.
    pub fn number(self) -> u32 {
        self.0
    }
}

/// What a rule has been seen to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleStats {
    /// Pairs of URLs of the same content it was learned from (or learned again from).
    pub support: u32,
    /// Its predictions checked: a URL it gave a counterpart for, fetched and judged.
    pub checked: u32,
    /// Of those, judged duplicates of that counterpart.
    pub confirmed: u32,
    /// Its copies (pairs and right predictions) whose length was about their original's
    /// ([`RuleBook::note_length`]) ...
    #[serde(default)]
    pub same_length: u32,
    /// ... and whose length was not.
    #[serde(default)]
    pub other_length: u32,
    /// Its copies that linked to pages their originals do not link to (a mirror's pages of
    /// its own, a release's new chapter: [`RuleBook::note_adds`]).
    #[serde(default)]
    pub adding: u32,
    /// The least and the greatest length of its copies, per thousand of their originals'
    /// ([`RuleBook::note_ratio`]; 0: none known): a language's untranslated pages are 1 to
    /// 4 % longer than the English ones (their menus translated), its translated ones
    /// anything.
    #[serde(default)]
    pub ratio_low: u32,
    /// See `ratio_low`.
    #[serde(default)]
    pub ratio_high: u32,
}

impl RuleStats {
    /// The share of its checked predictions that were right, once one was checked.
    pub fn rate(&self) -> Option<f64> {
        (self.checked > 0).then(|| f64::from(self.confirmed) / f64::from(self.checked))
    }

    /// The lengths a page of a counterpart of `length` bytes may have to be one of its
    /// copies: those its copies had, give or take a hundredth of the original (`None` while
    /// none is known).
    pub fn length_window(&self, length: u64) -> Option<(u64, u64)> {
        (self.ratio_high > 0).then(|| {
            let at = |permille: f64| (length as f64 * permille / 1000.0).round() as u64;
            (
                at(f64::from(self.ratio_low) - 10.0),
                at(f64::from(self.ratio_high) + 10.0),
            )
        })
    }

    /// How far it is trusted, 0..1: its rate with one right and one wrong prediction
    /// assumed (so a rule never checked stands at 0.5, and one check moves it little).
    pub fn trust(&self) -> f64 {
        f64::from(self.confirmed + 1) / f64::from(self.checked + 2)
    }

    /// Orders rules for a prediction: the more trusted first, then the better supported,
    /// then the first learned.
    fn rank(&self, id: RuleId) -> (u64, u32, std::cmp::Reverse<RuleId>) {
        (
            (self.trust() * 1e9) as u64,
            self.support,
            std::cmp::Reverse(id),
        )
    }
}

/// A counterpart predicted for a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    /// The rule that gave it.
    pub rule: RuleId,
    /// The URL of the page it predicts `url` copies.
    pub counterpart: Url,
}

/// The rules learned so far, each with its stats, and the predictions they give. It is
/// kept (serde) as its rules and their stats, in the order they were learned, so a rule's
/// id is the same once read back.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "Vec<(Rule, RuleStats)>", into = "Vec<(Rule, RuleStats)>")]
pub struct RuleBook {
    rules: Vec<(Rule, RuleStats)>,
    ids: HashMap<Rule, RuleId>,
    by_key: HashMap<Key, Vec<RuleId>>,
    /// Rules held at most ([`RuleBook::set_limit`]): past it, pairs add support to the
    /// rules held and teach no new one.
    limit: Option<usize>,
}

impl From<Vec<(Rule, RuleStats)>> for RuleBook {
    fn from(rules: Vec<(Rule, RuleStats)>) -> RuleBook {
        let mut book = RuleBook::new();
        for (rule, stats) in rules {
            // A rule read twice (a damaged or hand-edited file) is kept once.
            let Ok(n) = u32::try_from(book.rules.len()) else {
                break;
            };
            if book.ids.contains_key(&rule) {
                continue;
            }
            let id = RuleId(n);
            book.by_key.entry(rule.key()).or_default().push(id);
            book.ids.insert(rule.clone(), id);
            book.rules.push((rule, stats));
        }
        book
    }
}

impl From<RuleBook> for Vec<(Rule, RuleStats)> {
    fn from(book: RuleBook) -> Vec<(Rule, RuleStats)> {
        book.rules
    }
}

/// A prediction and the rank of the rule that gave it.
type Ranked = (Prediction, (u64, u32, std::cmp::Reverse<RuleId>));

impl RuleBook {
    /// An empty book.
    pub fn new() -> RuleBook {
        RuleBook::default()
    }

    /// Learns from `copy`, found to have the content of `original`: each rule between them
    /// (a template, [`Rule::learn`], and a prefix, [`Rule::learn_prefix`], or for two URLs
    /// that do not end alike an affix, [`Rule::learn_affix`]) gains one of support, added when new. Their ids (none when the pair teaches nothing).
    pub fn learn(&mut self, copy: &Url, original: &Url) -> Vec<RuleId> {
        (taught(copy, original).into_iter().flatten())
            .filter_map(|rule| self.support(rule))
            .collect()
    }

    /// The ids of the rules in the book that `copy` and `original` teach ([`RuleBook::learn`]),
    /// without learning them again.
    pub fn rules_of(&self, copy: &Url, original: &Url) -> Vec<RuleId> {
        (taught(copy, original).into_iter().flatten())
            .filter_map(|rule| self.ids.get(&rule).copied())
            .collect()
    }

    /// Learns the correspondences of `rules` (just learned from a pair) read the other way
    /// ([`Rule::reversed`]): each gains one of support, added when new. Their ids.
    pub fn learn_reversed(&mut self, rules: &[RuleId]) -> Vec<RuleId> {
        let reversed: Vec<Rule> = rules
            .iter()
            .filter_map(|id| self.rules.get(id.index()))
            .filter_map(|(rule, _)| rule.reversed())
            .collect();
        reversed
            .into_iter()
            .filter_map(|rule| self.support(rule))
            .collect()
    }

    /// `rule` gains one of support, added when new (unless the book is full). Its id.
    fn support(&mut self, rule: Rule) -> Option<RuleId> {
        let id = match self.ids.get(&rule) {
            Some(id) => *id,
            None => {
                if self.limit.is_some_and(|limit| self.rules.len() >= limit) {
                    return None;
                }
                let id = RuleId(u32::try_from(self.rules.len()).ok()?);
                self.by_key.entry(rule.key()).or_default().push(id);
                self.ids.insert(rule.clone(), id);
                self.rules.push((rule, RuleStats::default()));
                id
            }
        };
        self.rules[id.index()].1.support += 1;
        Some(id)
    }

    /// A copy under `rule` had about its original's length (`same`) or not.
    pub fn note_length(&mut self, rule: RuleId, same: bool) {
        if let Some((_, stats)) = self.rules.get_mut(rule.index()) {
            match same {
                true => stats.same_length += 1,
                false => stats.other_length += 1,
            }
        }
    }

    /// A copy under `rule` had `ratio` times its original's length.
    pub fn note_ratio(&mut self, rule: RuleId, ratio: f64) {
        if let Some((_, stats)) = self.rules.get_mut(rule.index()) {
            let permille = (ratio * 1000.0).round().clamp(1.0, f64::from(u32::MAX)) as u32;
            stats.ratio_low = match stats.ratio_low {
                0 => permille,
                low => low.min(permille),
            };
            stats.ratio_high = stats.ratio_high.max(permille);
        }
    }

    /// A copy under `rule` linked to pages its original does not link to.
    pub fn note_adds(&mut self, rule: RuleId) {
        if let Some((_, stats)) = self.rules.get_mut(rule.index()) {
            stats.adding += 1;
        }
    }

    /// A copy under `rule` noted as linking to pages its original does not
    /// ([`RuleBook::note_adds`]) did not after all: each page only it linked to turned out
    /// to be a copy too (a mirror's "related" link to another of its copies).
    pub fn retract_adds(&mut self, rule: RuleId) {
        if let Some((_, stats)) = self.rules.get_mut(rule.index()) {
            stats.adding = stats.adding.saturating_sub(1);
        }
    }

    /// The most rules it holds, if it was given a limit ([`RuleBook::set_limit`]).
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// Holds at most `limit` rules: a crawl of a million duplicates whose URLs share nothing
    /// (each pair its own rule) does not grow without bound.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = Some(limit);
    }

    /// Records what became of a prediction of `rule`'s: the URL was fetched and judged a
    /// duplicate of the counterpart it gave (`confirmed`) or not.
    pub fn check(&mut self, rule: RuleId, confirmed: bool) {
        if let Some((_, stats)) = self.rules.get_mut(rule.index()) {
            stats.checked += 1;
            stats.confirmed += u32::from(confirmed);
        }
    }

    /// The counterpart of `url` by the most trusted rule that matches it (ties: the best
    /// supported, then the first learned), with that rule.
    pub fn predict(&self, url: &Url) -> Option<Prediction> {
        if self.rules.is_empty() {
            return None;
        }
        let cut = Cut::of(url)?;
        let shape = Key::Shape {
            origin: cut.origin.clone(),
            path: cut.path.len(),
            query: cut.query.len(),
        };
        let origin = Key::Origin(cut.origin.clone());
        let candidates = [shape, origin]
            .into_iter()
            .filter_map(|key| self.by_key.get(&key))
            .flatten();
        let mut best: Option<Ranked> = None;
        for &id in candidates {
            let (rule, stats) = &self.rules[id.index()];
            let rank = stats.rank(id);
            if best.as_ref().is_some_and(|(_, r)| *r >= rank) {
                continue;
            }
            if let Some(counterpart) = rule.apply_cut(&cut) {
                best = Some((
                    Prediction {
                        rule: id,
                        counterpart,
                    },
                    rank,
                ));
            }
        }
        best.map(|(prediction, _)| prediction)
    }

    /// Every counterpart the rules that match `url` give, the most trusted rule's first (as
    /// [`RuleBook::predict`] ranks them), each counterpart once, by the best rule that gives
    /// it: a crawl that does not hold the first may hold another (a mirror crawled side by
    /// side with its origin, whose best rule names a third site's page).
    pub fn ranked(&self, url: &Url) -> Vec<Prediction> {
        let Some(cut) = Cut::of(url).filter(|_| !self.rules.is_empty()) else {
            return Vec::new();
        };
        let shape = Key::Shape {
            origin: cut.origin.clone(),
            path: cut.path.len(),
            query: cut.query.len(),
        };
        let origin = Key::Origin(cut.origin.clone());
        let mut all: Vec<Ranked> = [shape, origin]
            .into_iter()
            .filter_map(|key| self.by_key.get(&key))
            .flatten()
            .filter_map(|&id| {
                let (rule, stats) = &self.rules[id.index()];
                let counterpart = rule.apply_cut(&cut)?;
                Some((
                    Prediction {
                        rule: id,
                        counterpart,
                    },
                    stats.rank(id),
                ))
            })
            .collect();
        all.sort_by_key(|(_, rank)| std::cmp::Reverse(*rank));
        let mut seen = std::collections::HashSet::new();
        all.into_iter()
            .map(|(prediction, _)| prediction)
            .filter(|p| seen.insert(p.counterpart.clone()))
            .collect()
    }

    /// [`RuleBook::predict`] by trying every rule in turn: the reference the indexed lookup
    /// is tested against.
    pub fn predict_by_scan(&self, url: &Url) -> Option<Prediction> {
        let mut best: Option<Ranked> = None;
        for (id, rule, stats) in self.iter() {
            let Some(counterpart) = rule.apply(url) else {
                continue;
            };
            let rank = stats.rank(id);
            if best.as_ref().is_none_or(|(_, r)| rank > *r) {
                best = Some((
                    Prediction {
                        rule: id,
                        counterpart,
                    },
                    rank,
                ));
            }
        }
        best.map(|(prediction, _)| prediction)
    }

    /// The rule with this id.
    pub fn rule(&self, id: RuleId) -> Option<&Rule> {
        self.rules.get(id.index()).map(|(rule, _)| rule)
    }

    /// The stats of the rule with this id.
    pub fn stats(&self, id: RuleId) -> Option<RuleStats> {
        self.rules.get(id.index()).map(|(_, stats)| *stats)
    }

    /// Every rule with its id and stats, in the order they were learned.
    pub fn iter(&self) -> impl Iterator<Item = (RuleId, &Rule, RuleStats)> {
        self.rules
            .iter()
            .enumerate()
            .map(|(n, (rule, stats))| (RuleId(n as u32), rule, *stats))
    }

    /// How many rules it holds.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// The rules a pair of URLs of the same content teaches: a template ([`Rule::learn`]), and a
/// prefix ([`Rule::learn_prefix`]) or, for two URLs that do not end alike, an affix
/// ([`Rule::learn_affix`]).
fn taught(copy: &Url, original: &Url) -> [Option<Rule>; 2] {
    [
        Rule::learn(copy, original),
        Rule::learn_prefix(copy, original).or_else(|| Rule::learn_affix(copy, original)),
    ]
}
