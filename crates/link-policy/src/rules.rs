//! A URL rule's predictions and what each is worth: [`LinkPolicy`] owns the rule book and
//! the exploration count; [`decide`] turns a rule's record and what the crawl holds of the
//! counterpart ([`Held`]), its [`Evidence`], into a [`Fate`], as [`LinkPolicy::fate`] does
//! for a link.

use std::cell::RefCell;

use nearcrawl_url_rules::{RuleBook, RuleId};
use url::Url;

use crate::evidence::{CopyFacts, CopyPair, Evidence, Held, PolicyConfig, Predict};
use crate::fate::{By, Fate, How};
use crate::journal::{Event, FateRecord, Journal};

/// The fate of a link whose counterpart a rule names (`evidence`: the rule's record and what
/// the crawl holds of the counterpart): fetched whole to check the rule until it is trusted
/// (`min_support` pairs and `min_trust`), then verified or skipped as `config.predict` says,
/// except on the exploration turn (`explore_turn`: this is the `explore`-th prediction acted
/// on since the last one checked), which is checked. A rule one of whose copies linked to
/// pages its original does not link to is never acted on: its copies lead somewhere (a
/// mirror's pages of its own). A rule a cheap check by length does not work for (its copies
/// had other lengths than their originals as often as not, as a mirror's other template or a
/// print view gives them) is not verified by length.
///
/// A rule with its pairs that is not trusted (or not by length) is sampled when its copies'
/// lengths are known ([`RuleStats::length_window`](nearcrawl_url_rules::RuleStats::length_window)) and that is worth it: its
/// [`RuleStats::trust`](nearcrawl_url_rules::RuleStats::trust) times what a copy's sample saves (the counterpart's length less the
/// sample's cost) exceeds the HEAD asked of every page; else checked.
pub fn decide(evidence: Evidence, config: &PolicyConfig, explore_turn: bool) -> Fate {
    let (stats, held) = (evidence.stats, evidence.held);
    let supported = stats.support >= config.min_support && stats.adding == 0;
    let trusted = supported && stats.trust() >= config.min_trust;
    let verifies = stats.same_length > stats.other_length;
    let samples = supported
        && stats.length_window(held.length).is_some()
        && held.sample_cost.is_some_and(|cost| {
            stats.trust() * (held.length as f64 - cost as f64) > held.head_cost as f64
        });
    let how = match config.predict {
        Predict::Off | Predict::Check => None,
        _ if explore_turn => None,
        Predict::Verify if trusted && verifies => Some(How::Verify),
        Predict::Skip if trusted => {
            let by = By::Rule(Box::new(evidence));
            return Fate::Skip { by };
        }
        _ if samples => Some(How::Sample),
        _ => None,
    };
    let against = evidence.counterpart.clone();
    let by = By::Rule(Box::new(evidence));
    match how {
        Some(how) => Fate::Check { against, how, by },
        None => Fate::Fetch { by },
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
    /// The events fed since last taken, when the crawl journals them
    /// ([`LinkPolicy::keep_journal`]).
    journal: Journal,
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
            journal: Journal::default(),
        }
    }

    /// From now on, every event the policy is fed is journaled, for
    /// [`LinkPolicy::take_events`], starting with its configuration and the book it goes on
    /// with (see [`crate::Decider::keep_journal`]).
    pub fn keep_journal(&mut self) {
        self.journal.start(Event::Rules {
            config: self.config,
            // Strings and integers only: serialising cannot fail.
            book: serde_json::to_string(&self.book).unwrap_or_default(),
            limit: self.book.limit(),
        });
    }

    /// The events journaled since last taken.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.journal.take()
    }

    /// Journals the event `event` makes, when the crawl journals.
    fn note(&mut self, event: impl FnOnce() -> Event) {
        self.journal.note(event);
    }

    /// Whether rules are learned and asked at all.
    pub fn enabled(&self) -> bool {
        self.config.predict != Predict::Off
    }

    /// `copy` was judged to have the content of `original`: the rules between them gain
    /// support, and what is known of the copy: whether it had about its original's length
    /// (a cheap check by length tells for a rule whose copies do), and whether it linked to
    /// pages its original does not (a rule whose copies do is never acted on: its pages
    /// lead somewhere). The rules read the other way ([`RuleBook::learn_reversed`]) gain the
    /// support and the lengths, read the other way too. The ids of the rules learned (read
    /// this way).
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
        // The pair read the other way: the original a copy of the copy (whichever of a
        // mirror's page and its origin's is fetched first is the original of that pair).
        // What the original links to beside the copy's is not known.
        for rule in self.book.learn_reversed(&rules) {
            if let Some(same) = facts.same_length {
                self.book.note_length(rule, same);
            }
            if let Some(ratio) = facts.ratio.filter(|r| *r > 0.0) {
                self.book.note_ratio(rule, 1.0 / ratio);
            }
        }
        self.note(|| {
            Event::Learned(CopyPair {
                copy: copy.to_string(),
                original: original.to_string(),
                facts,
            })
        });
        rules
    }

    /// `copy`, learned from as having `original`'s content and linking to pages `original`
    /// does not ([`LinkPolicy::learn`]), did not add any after all: each page only it linked
    /// to turned out to be a copy too (a mirror's "related" links to its other copies). The
    /// rules between them are no longer held back by it.
    pub fn retract(&mut self, copy: &Url, original: &Url) {
        if !self.enabled() {
            return;
        }
        for rule in self.book.rules_of(copy, original) {
            self.book.retract_adds(rule);
        }
        self.note(|| Event::Retracted {
            copy: copy.to_string(),
            original: original.to_string(),
        });
    }

    /// A prediction of `rule`'s was checked: the page was judged a duplicate of the
    /// counterpart it named (`right`), or not.
    pub fn checked(&mut self, rule: RuleId, right: bool) {
        self.book.check(rule, right);
        self.note(|| Event::Checked {
            rule: rule.number(),
            right,
        });
    }

    /// A verification of a right prediction of `rule`'s ended: it found the page unchanged
    /// (`told`), or said it changed and the page, fetched, was a copy of the counterpart all
    /// the same (not `told`).
    pub fn verified(&mut self, rule: RuleId, told: bool) {
        self.book.note_length(rule, told);
        self.note(|| Event::Verified {
            rule: rule.number(),
            told,
        });
    }

    /// The fate of a link to `url` not seen before.
    pub fn fate(&mut self, url: &Url, known: &dyn Known) -> Fate {
        if !self.journal.is_on() {
            return self.fate_of(url, known);
        }
        let asked = RefCell::new(Vec::new());
        let noting = |counterpart: &Url| {
            let held = known.held(counterpart);
            asked.borrow_mut().push((counterpart.to_string(), held));
            held
        };
        let fate = self.fate_of(url, &noting);
        let event = Event::RuleFate {
            url: url.to_string(),
            held: asked.into_inner(),
            fate: FateRecord::of(&fate),
        };
        self.note(|| event);
        fate
    }

    /// See [`LinkPolicy::fate`].
    fn fate_of(&mut self, url: &Url, known: &dyn Known) -> Fate {
        let new = Fate::Fetch { by: By::New };
        if !self.enabled() {
            return new;
        }
        // The most trusted rule whose counterpart the crawl holds: a mirror crawled side by
        // side with its origin may have a better rule to a third site's page not fetched.
        let held = (self.book.ranked(url).into_iter())
            .find_map(|p| known.held(&p.counterpart).map(|held| (p, held)));
        let Some((prediction, held)) = held else {
            return new;
        };
        let stats = self.book.stats(prediction.rule).unwrap_or_default();
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
        let trusted = !matches!(
            decide(evidence.clone(), &self.config, false),
            Fate::Fetch { .. }
        );
        let explore_turn = trusted && {
            self.trusted_since_explored += 1;
            self.config.explore > 0 && self.trusted_since_explored >= self.config.explore
        };
        if explore_turn {
            self.trusted_since_explored = 0;
        }
        match decide(evidence, &self.config, explore_turn) {
            // Trusted (or worth a sample) all the same, but nothing to check cheaply with.
            Fate::Check { by, .. } if !self.config.probes => Fate::Fetch { by },
            fate => fate,
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
mod tests;
