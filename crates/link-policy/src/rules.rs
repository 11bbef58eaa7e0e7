//! A URL rule's predictions and what each is worth: [`LinkPolicy`] owns the rule book and
//! the exploration count; [`decide`] turns a rule's record and what the crawl holds of the
//! counterpart ([`Held`]) into a [`Decision`], and [`LinkPolicy::fate`] into a [`Fate`] with
//! its [`Evidence`].

use serde::{Deserialize, Serialize};
use url::Url;

use nearcrawl_url_rules::{RuleBook, RuleId, RuleStats};

/// What a trusted prediction is used for (`dedup.predict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Predict {
    /// Rules are neither learned nor asked: every link is fetched as before.
    Off,
    /// Rules are learned and checked against the pages fetched, never trusted: every link is
    /// fetched, its record says what was predicted and whether it was right.
    Check,
    /// A trusted rule's prediction is verified cheaply (HEAD, `Range`) against its
    /// counterpart before the page is fetched.
    #[default]
    Verify,
    /// A trusted rule's prediction is taken: the page is recorded as a duplicate of its
    /// counterpart without a request.
    Skip,
}

/// When a rule is trusted, and how often a trusted prediction is checked all the same.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PolicyConfig {
    /// What a trusted prediction is used for.
    pub predict: Predict,
    /// Pairs a rule must have been learned from.
    pub min_support: u32,
    /// The least [`RuleStats::trust`] (its checked predictions' rate, one right and one
    /// wrong assumed): 0.9 takes eight right of eight.
    pub min_trust: f64,
    /// One trusted prediction in this many is fetched whole to keep measuring its rule (0:
    /// none).
    pub explore: u32,
    /// The crawler probes (HEAD, `Range`) a link against its counterpart (`dedup.probe_links`):
    /// without probes, a prediction to verify or sample is only checked.
    #[serde(default = "probes_by_default")]
    pub probes: bool,
}

/// Probes are on unless a configuration says otherwise.
fn probes_by_default() -> bool {
    true
}

impl Default for PolicyConfig {
    fn default() -> PolicyConfig {
        PolicyConfig {
            predict: Predict::Verify,
            min_support: 3,
            min_trust: 0.9,
            explore: 8,
            probes: true,
        }
    }
}

/// Why a link's fate is what it is: the rule that named its counterpart, as it stood.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// The rule's id in the policy's book.
    pub rule: RuleId,
    /// The rule, `from -> to`.
    pub rule_text: String,
    /// The page the rule says the link's page copies.
    pub counterpart: Url,
    /// What the crawl holds of it.
    pub held: Held,
    /// The rule's support and checked predictions when it was asked.
    pub stats: RuleStats,
}

impl Evidence {
    /// The lengths a page must have for its sample to be asked: those the rule's copies have
    /// had, around the counterpart's ([`RuleStats::length_window`]).
    pub fn sample_window(&self) -> Option<(u64, u64)> {
        self.stats.length_window(self.held.length)
    }
}

/// A link's fate. See the crate's documentation.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// Fetched: no rule names a counterpart the crawl holds.
    Fetch,
    /// Fetched whole, its verdict checking the rule.
    Check(Evidence),
    /// Verified cheaply against the counterpart, fetched only if changed.
    Verify(Evidence),
    /// Recorded as a duplicate of the counterpart, not requested.
    Skip(Evidence),
    /// Sampled (parts asked with `Range`, their text compared with the counterpart's),
    /// fetched only if they differ.
    Sample(Evidence),
}

/// What the decision turns on, apart from the rule's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Fetched whole and checked.
    Check,
    /// Verified cheaply.
    Verify,
    /// Not requested.
    Skip,
    /// Sampled first.
    Sample,
}

/// The fate of a link whose counterpart (`held`) a rule with `stats` names: checked until
/// the rule is trusted (`min_support` pairs and `min_trust`), then verified or skipped as
/// `config.predict` says, except on the exploration turn (`explore_turn`: this is the
/// `explore`-th prediction acted on since the last one checked), which is checked. A rule
/// one of whose copies linked to pages its original does not link to is never acted on:
/// its copies lead somewhere (a mirror's pages of its own). A rule a cheap check by length
/// does not work for (its copies had other lengths than their originals as often as not, as
/// a mirror's other template or a print view gives them) is not verified by length.
///
/// A rule with its pairs that is not trusted (or not by length) is sampled when its copies'
/// lengths are known ([`RuleStats::length_window`]) and that is worth it: its
/// [`RuleStats::trust`] times what a copy's sample saves (the counterpart's length less the
/// sample's cost) exceeds the HEAD asked of every page; else checked.
pub fn decide(stats: RuleStats, held: Held, config: &PolicyConfig, explore_turn: bool) -> Decision {
    let supported = stats.support >= config.min_support && stats.adding == 0;
    let trusted = supported && stats.trust() >= config.min_trust;
    let verifies = stats.same_length > stats.other_length;
    let samples = supported
        && stats.length_window(held.length).is_some()
        && held.sample_cost.is_some_and(|cost| {
            stats.trust() * (held.length as f64 - cost as f64) > held.head_cost as f64
        });
    match config.predict {
        Predict::Off | Predict::Check => Decision::Check,
        _ if explore_turn => Decision::Check,
        Predict::Verify if trusted && verifies => Decision::Verify,
        Predict::Skip if trusted => Decision::Skip,
        _ if samples => Decision::Sample,
        _ => Decision::Check,
    }
}

/// What is known of a copy a rule is learned from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyFacts {
    /// Whether it had about its original's length (`None`: not known).
    pub same_length: Option<bool>,
    /// Whether it linked to pages its original does not link to (`None`: not known, its
    /// links were not read).
    pub adds_pages: Option<bool>,
    /// Its length over its original's (`None`: not known).
    pub ratio: Option<f64>,
}

/// What the crawl holds of a page a link is predicted to copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Its length in bytes, as its response declared it.
    pub length: u64,
    /// What a sample of a page of about its length would cost, in bytes, when a sample can
    /// be compared with it (the crawl kept the shingles of its text); `None` when not.
    pub sample_cost: Option<u64>,
    /// What a HEAD costs, in bytes.
    pub head_cost: u64,
}

impl CopyFacts {
    /// What its length says of a copy of `copy` bytes whose original had `original` (either
    /// unknown: nothing; an original of 0 bytes is a redirect's): about the same within
    /// `tolerance` of the original's, and their ratio.
    pub fn of_lengths(copy: Option<u64>, original: Option<u64>, tolerance: f64) -> CopyFacts {
        match (copy, original) {
            (Some(copy), Some(original)) if original > 0 => CopyFacts {
                same_length: Some(copy.abs_diff(original) as f64 <= tolerance * original as f64),
                adds_pages: None,
                ratio: Some(copy as f64 / original as f64),
            },
            _ => CopyFacts::default(),
        }
    }
}

/// What the crawl holds: the page at a URL, fetched and kept, so that a link predicted to
/// copy it can be verified against it or recorded as its duplicate.
pub trait Known {
    /// What the crawl holds of the page at `url`, if it holds it.
    fn held(&self, url: &Url) -> Option<Held>;
}

impl<F: Fn(&Url) -> Option<Held>> Known for F {
    fn held(&self, url: &Url) -> Option<Held> {
        self(url)
    }
}

/// The policy: its rule book and its exploration count.
#[derive(Debug, Clone)]
pub struct LinkPolicy {
    config: PolicyConfig,
    book: RuleBook,
    /// Trusted predictions since the last one explored.
    trusted_since_explored: u32,
}

impl LinkPolicy {
    /// A policy with no rules yet.
    pub fn new(config: PolicyConfig) -> LinkPolicy {
        LinkPolicy::with_book(config, RuleBook::new())
    }

    /// A policy that goes on with `book` (a resumed crawl's).
    pub fn with_book(config: PolicyConfig, book: RuleBook) -> LinkPolicy {
        LinkPolicy {
            config,
            book,
            trusted_since_explored: 0,
        }
    }

    /// Whether rules are learned and asked at all.
    pub fn enabled(&self) -> bool {
        self.config.predict != Predict::Off
    }

    /// `copy` was judged to have the content of `original`: the rules between them gain
    /// support, and what is known of the copy: whether it had about its original's length
    /// (a cheap check by length tells for a rule whose copies do), and whether it linked to
    /// pages its original does not (a rule whose copies do is never acted on: its pages
    /// lead somewhere). The ids of the rules learned.
    pub fn learn(&mut self, copy: &Url, original: &Url, facts: CopyFacts) -> Vec<RuleId> {
        if !self.enabled() {
            return Vec::new();
        }
        let rules = self.book.learn(copy, original);
        for &rule in &rules {
            if let Some(same) = facts.same_length {
                self.book.note_length(rule, same);
            }
            if facts.adds_pages == Some(true) {
                self.book.note_adds(rule);
            }
            if let Some(ratio) = facts.ratio {
                self.book.note_ratio(rule, ratio);
            }
        }
        rules
    }

    /// A prediction of `rule`'s was checked: the page was judged a duplicate of the
    /// counterpart it named (`right`), or not.
    pub fn checked(&mut self, rule: RuleId, right: bool) {
        self.book.check(rule, right);
    }

    /// A verification of a right prediction of `rule`'s ended: it found the page unchanged
    /// (`told`), or said it changed and the page, fetched, was a copy of the counterpart all
    /// the same (not `told`).
    pub fn verified(&mut self, rule: RuleId, told: bool) {
        self.book.note_length(rule, told);
    }

    /// The fate of a link to `url` not seen before.
    pub fn fate(&mut self, url: &Url, known: &dyn Known) -> Fate {
        if !self.enabled() {
            return Fate::Fetch;
        }
        let Some(prediction) = self.book.predict(url) else {
            return Fate::Fetch;
        };
        let Some(held) = known.held(&prediction.counterpart) else {
            return Fate::Fetch;
        };
        let stats = self.book.stats(prediction.rule).unwrap_or_default();
        let trusted = decide(stats, held, &self.config, false) != Decision::Check;
        let explore_turn = trusted && {
            self.trusted_since_explored += 1;
            self.config.explore > 0 && self.trusted_since_explored >= self.config.explore
        };
        if explore_turn {
            self.trusted_since_explored = 0;
        }
        let evidence = Evidence {
            rule: prediction.rule,
            rule_text: self
                .book
                .rule(prediction.rule)
                .map(ToString::to_string)
                .unwrap_or_default(),
            counterpart: prediction.counterpart,
            held,
            stats,
        };
        match decide(stats, held, &self.config, explore_turn) {
            Decision::Check => Fate::Check(evidence),
            Decision::Verify if self.config.probes => Fate::Verify(evidence),
            Decision::Sample if self.config.probes => Fate::Sample(evidence),
            // Trusted (or worth a sample) all the same, but nothing to check cheaply with.
            Decision::Verify | Decision::Sample => Fate::Check(evidence),
            Decision::Skip => Fate::Skip(evidence),
        }
    }

    /// The rule book, as it stands.
    pub fn book(&self) -> &RuleBook {
        &self.book
    }

    /// The configuration.
    pub fn config(&self) -> &PolicyConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule's record: (support, checked, confirmed, copies of the same length and of
    /// another, copies adding pages).
    fn stats(
        (support, checked, confirmed, same, other, adding): (u32, u32, u32, u32, u32, u32),
    ) -> RuleStats {
        RuleStats {
            support,
            checked,
            confirmed,
            same_length: same,
            other_length: other,
            adding,
            // Copies 1 to 3 % longer than their originals.
            ratio_low: 1010,
            ratio_high: 1030,
        }
    }

    #[test]
    fn a_rule_is_checked_until_trusted_then_used_as_configured() {
        use Decision::*;
        let config = |predict| PolicyConfig {
            predict,
            ..PolicyConfig::default()
        };
        // (the rule's record, predict, exploration turn, decision)
        let cases = [
            // Too few pairs, however right.
            ((2, 20, 20, 5, 0, 0), Predict::Verify, false, Check),
            // Too few predictions checked: 7 of 7 is a trust of 0.89.
            ((3, 7, 7, 5, 0, 0), Predict::Verify, false, Check),
            // 8 of 8: 0.9.
            ((3, 8, 8, 5, 0, 0), Predict::Verify, false, Verify),
            ((3, 8, 8, 5, 0, 0), Predict::Skip, false, Skip),
            ((3, 8, 8, 5, 0, 0), Predict::Check, false, Check),
            ((3, 8, 8, 5, 0, 0), Predict::Off, false, Check),
            // Its copies' lengths are not their originals': a length tells nothing, fetched
            // whole; skipping needs no check.
            ((3, 8, 8, 2, 2, 0), Predict::Verify, false, Check),
            ((3, 8, 8, 0, 0, 0), Predict::Verify, false, Check),
            ((3, 8, 8, 0, 5, 0), Predict::Skip, false, Skip),
            // A copy that added a page of its own: never trusted.
            ((3, 8, 8, 5, 0, 1), Predict::Skip, false, Check),
            ((30, 30, 30, 30, 0, 1), Predict::Verify, false, Check),
            // The exploration turn: checked.
            ((3, 8, 8, 5, 0, 0), Predict::Skip, true, Check),
            // One wrong in ten: 10/12 = 0.83, checked again until it earns its trust back.
            ((30, 10, 9, 5, 0, 0), Predict::Skip, false, Check),
            ((30, 30, 29, 5, 0, 0), Predict::Skip, false, Skip),
        ];
        // A counterpart too short to sample.
        let held = Held {
            length: 3_000,
            sample_cost: None,
            head_cost: 256,
        };
        for (record, predict, explore, want) in cases {
            let stats = stats(record);
            let got = decide(stats, held, &config(predict), explore);
            assert_eq!(got, want, "{stats:?} {predict:?} {explore}");
        }
    }

    #[test]
    fn a_rule_not_trusted_is_sampled_where_its_rate_pays_for_the_sample() {
        use Decision::*;
        let config = |predict| PolicyConfig {
            predict,
            ..PolicyConfig::default()
        };
        // A sample of 3,700 bytes, a HEAD of 256.
        let held = |length| Held {
            length,
            sample_cost: Some(3_700),
            head_cost: 256,
        };
        // (the rule's record, predict, counterpart's length, exploration turn, decision)
        let cases = [
            // A language's host, four pages in five untranslated: 0.77 x (20 - 3.7 kB) >
            // 256 bytes.
            (
                (10, 20, 16, 5, 5, 0),
                Predict::Verify,
                20_000,
                false,
                Sample,
            ),
            ((10, 20, 16, 5, 5, 0), Predict::Skip, 20_000, false, Sample),
            // One in twenty: 1/22 x 16.3 kB = 741 bytes, still worth a HEAD; one in a
            // hundred is not, nor a page hardly larger than its sample.
            ((10, 20, 0, 5, 5, 0), Predict::Verify, 20_000, false, Sample),
            ((10, 100, 0, 5, 5, 0), Predict::Verify, 20_000, false, Check),
            ((10, 20, 16, 5, 5, 0), Predict::Verify, 4_000, false, Check),
            // Never checked (0.5 assumed), once it has its pairs: with one pair, sampled
            // predictions on the held-out languages wasted more than they saved (item 19).
            ((3, 0, 0, 0, 0, 0), Predict::Verify, 20_000, false, Sample),
            ((2, 0, 0, 0, 0, 0), Predict::Verify, 20_000, false, Check),
            // Trusted, its copies' lengths telling nothing (another template): sampled.
            ((3, 8, 8, 0, 5, 0), Predict::Verify, 20_000, false, Sample),
            // Trusted, and lengths tell: verified by length first; skipped with "skip".
            ((3, 8, 8, 5, 0, 0), Predict::Verify, 20_000, false, Verify),
            ((3, 8, 8, 5, 0, 0), Predict::Skip, 20_000, false, Skip),
            // Copies with pages of their own, the exploration turn, "check" and "off":
            // fetched whole.
            ((10, 20, 16, 5, 5, 1), Predict::Verify, 20_000, false, Check),
            ((10, 20, 16, 5, 5, 0), Predict::Verify, 20_000, true, Check),
            ((10, 20, 16, 5, 5, 0), Predict::Check, 20_000, false, Check),
            ((10, 20, 16, 5, 5, 0), Predict::Off, 20_000, false, Check),
        ];
        for (record, predict, length, explore, want) in cases {
            let stats = stats(record);
            let got = decide(stats, held(length), &config(predict), explore);
            assert_eq!(got, want, "{stats:?} {predict:?} {length} {explore}");
        }
        // No shingles kept of the counterpart: nothing to sample against.
        let unsampled = Held {
            length: 20_000,
            sample_cost: None,
            head_cost: 256,
        };
        let record = stats((10, 20, 16, 5, 5, 0));
        assert_eq!(
            decide(record, unsampled, &config(Predict::Verify), false),
            Check
        );
        // No copy's length known: no window to tell copies by.
        let unknown = RuleStats {
            ratio_low: 0,
            ratio_high: 0,
            ..record
        };
        assert_eq!(
            decide(unknown, held(20_000), &config(Predict::Verify), false),
            Check
        );
    }

    #[test]
    fn one_trusted_prediction_in_explore_is_checked() {
        let config = PolicyConfig {
            predict: Predict::Skip,
            min_support: 1,
            min_trust: 0.5,
            explore: 4,
            probes: true,
        };
        let mut policy = LinkPolicy::new(config);
        let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        policy.learn(
            &url("http://n.example/1"),
            &url("http://o.example/1"),
            CopyFacts::default(),
        );
        let known = |_: &Url| Some(Held::default());
        let fates: Vec<bool> = (2..14)
            .map(|n| {
                let fate = policy.fate(&url(&format!("http://n.example/{n}")), &known);
                matches!(fate, Fate::Check(_))
            })
            .collect();
        let checked: Vec<usize> = (0..fates.len()).filter(|&i| fates[i]).collect();
        assert_eq!(checked, [3, 7, 11]);
        // A counterpart the crawl does not hold: fetched, no evidence to act on.
        let nothing = |_: &Url| None;
        assert_eq!(
            policy.fate(&url("http://n.example/99"), &nothing),
            Fate::Fetch
        );
    }

    #[test]
    fn what_its_copies_were_decides_how_a_rule_is_used() {
        let config = PolicyConfig {
            predict: Predict::Verify,
            min_support: 1,
            min_trust: 0.5,
            explore: 0,
            probes: true,
        };
        let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let (n1, o1) = (url("http://n.example/1"), url("http://o.example/1"));
        let known = |_: &Url| Some(Held::default());
        let fate = |policy: &mut LinkPolicy| policy.fate(&url("http://n.example/2"), &known);
        let facts = |same, adds| CopyFacts {
            same_length: Some(same),
            adds_pages: Some(adds),
            ratio: None,
        };

        let mut policy = LinkPolicy::new(config);
        let rule = policy.learn(&n1, &o1, facts(true, false))[0];
        assert!(
            matches!(fate(&mut policy), Fate::Verify(_)),
            "the same length"
        );
        policy.verified(rule, false);
        assert!(matches!(fate(&mut policy), Fate::Check(_)), "as often not");
        policy.verified(rule, true);
        assert!(
            matches!(fate(&mut policy), Fate::Verify(_)),
            "it told once more"
        );

        // A mirror's other template: its copies' lengths tell nothing.
        let mut policy = LinkPolicy::new(config);
        policy.learn(&n1, &o1, facts(false, false));
        assert!(matches!(fate(&mut policy), Fate::Check(_)));

        // A copy with a page of its own: the rule's pages are fetched.
        let mut policy = LinkPolicy::new(config);
        policy.learn(&n1, &o1, facts(true, false));
        policy.learn(&n1, &o1, facts(true, true));
        assert!(matches!(fate(&mut policy), Fate::Check(_)));
    }

    #[test]
    fn without_probes_a_prediction_to_verify_or_sample_is_only_checked() {
        let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let config = |probes| PolicyConfig {
            predict: Predict::Verify,
            min_support: 1,
            min_trust: 0.5,
            explore: 0,
            probes,
        };
        let same = CopyFacts {
            same_length: Some(true),
            adds_pages: Some(false),
            ratio: None,
        };
        let known = |_: &Url| Some(Held::default());
        for (probes, verified) in [(true, true), (false, false)] {
            let mut policy = LinkPolicy::new(config(probes));
            policy.learn(&url("http://n.example/1"), &url("http://o.example/1"), same);
            let fate = policy.fate(&url("http://n.example/2"), &known);
            assert_eq!(matches!(fate, Fate::Verify(_)), verified, "probes {probes}");
            assert_eq!(matches!(fate, Fate::Check(_)), !verified, "probes {probes}");
        }
    }

    #[test]
    fn a_copy_s_length_says_whether_it_kept_its_original_s() {
        let facts = |copy, original| CopyFacts::of_lengths(copy, original, 0.02);
        let same = facts(Some(1_020), Some(1_000));
        assert_eq!((same.same_length, same.ratio), (Some(true), Some(1.02)));
        assert_eq!(facts(Some(1_021), Some(1_000)).same_length, Some(false));
        assert_eq!(facts(Some(1_000), None), CopyFacts::default());
        assert_eq!(facts(None, Some(1_000)), CopyFacts::default());
        // A redirect's original.
        assert_eq!(facts(Some(1_000), Some(0)), CopyFacts::default());
    }
}
