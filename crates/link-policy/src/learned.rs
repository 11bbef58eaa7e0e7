//! What a crawl learns of its URLs as it goes, and keeps: the URL rules its duplicates teach
//! (a [`LinkPolicy`] with its book) and the session parameters learned per host from
//! duplicates ([`SessionParams`]). Each change is a [`RuleEvent`]: made here, or in a job
//! shared through Redis appended to the job's log and made by replaying it, so that every
//! worker numbers the rules alike and a queued URL's rule is the same rule to whichever
//! worker takes it.
//!
//! The book is kept (by the crawler, in its store) with the decision that first relies on a
//! rule it has not kept yet (a queued URL naming that rule by its number), and otherwise every
//! so many changes ([`Learned::take_to_keep`]), so that a resumed crawl numbers its rules as
//! the queue it finds does; a resumed crawl may have lost the last few changes' counts, never
//! a rule a queued URL names.

use std::collections::HashSet;

use nearcrawl_frontier::{CanonicalUrl, SessionParams};
use nearcrawl_url_rules::{RuleBook, RuleId};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::evidence::{CopyFacts, CopyPair, PolicyConfig};
use crate::fate::Fate;
use crate::journal::Event;
use crate::rules::{Known, LinkPolicy};

/// Rules held at most: past it, pairs add support to the rules held and teach no new one.
const MAX_RULES: usize = 10_000;

/// Changes (pairs learned, predictions checked) after which the book is kept again, at
/// least; or an eighth of its rules, when more.
const KEEP_EVERY: u32 = 64;

/// One change to what the crawl learned, as a shared job's log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RuleEvent {
    /// A page was judged to have the content of another.
    Learned(CopyPair),
    /// A prediction of rule `rule` was checked: `right` or not, and when a verification by
    /// length of a right one, whether the length told (`verified`).
    Checked {
        /// The rule's number.
        rule: u32,
        /// See [`RuleEvent::Checked`].
        right: bool,
        /// See [`RuleEvent::Checked`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verified: Option<bool>,
    },
    /// A copy learned from as adding pages did not add any after all
    /// ([`LinkPolicy::retract`]).
    Retracted {
        /// The copy's URL, as rules name pages.
        copy: String,
        /// Its original's.
        original: String,
    },
    /// The query parameter `name` was learned to be a session parameter of `host` (an
    /// authority): stripped from its URLs by every worker from then on.
    Session {
        /// See [`RuleEvent::Session`].
        host: String,
        /// See [`RuleEvent::Session`].
        name: String,
    },
    /// A rendered page of `host` (an authority) showed text its static response did not
    /// carry: its pages' responses are shells, which no cheap check can tell apart.
    Shells {
        /// See [`RuleEvent::Shells`].
        host: String,
    },
}

/// The URL rules and session parameters learned, and what of them the store holds.
#[derive(Debug)]
pub struct Learned {
    policy: LinkPolicy,
    /// Session parameters learned per host from duplicates: a rule book of their own (a
    /// parameter whose value changes nothing).
    sessions: SessionParams,
    /// Rules in the book the store holds.
    kept_rules: usize,
    /// The highest rule number a queued URL relies on since the book was kept (+1).
    relied_on: usize,
    /// Changes since the book was kept.
    changes: u32,
    /// Whether a session parameter was learned since the store last kept them.
    sessions_changed: bool,
    /// Whether session parameters are learned at all (from duplicates: not in a baseline).
    learns_sessions: bool,
    /// A shared job: the job's log keeps what is learned, the store nothing.
    shared: bool,
    /// Copies learned from as adding pages, until the pages they added are decided (this
    /// process's: a page another worker decides, or one decided before a resume, lets none
    /// go).
    adders: Adders,
    /// The originals of the copies learned from, for a prediction's check.
    originals: Originals,
    /// Hosts (authorities) whose pages' responses are shells ([`RuleEvent::Shells`]).
    shells: HashSet<String>,
}

/// Rules off, nothing learned.
impl Default for Learned {
    fn default() -> Learned {
        let config = PolicyConfig {
            predict: crate::Predict::Off,
            ..PolicyConfig::default()
        };
        Learned::with_book(config, RuleBook::new())
    }
}

impl Learned {
    /// The policy of `config`, going on with the book a store kept (`kept`), if any; learning
    /// no session parameter until [`Learned::start`].
    pub fn new(config: PolicyConfig, kept: Option<&[u8]>) -> Result<Learned, String> {
        let book: RuleBook = match kept {
            Some(bytes) => serde_json::from_slice(bytes).map_err(|e| e.to_string())?,
            None => RuleBook::new(),
        };
        Ok(Learned::with_book(config, book))
    }

    fn with_book(config: PolicyConfig, mut book: RuleBook) -> Learned {
        book.set_limit(MAX_RULES);
        Learned {
            kept_rules: book.len(),
            policy: LinkPolicy::with_book(config, book),
            sessions: SessionParams::default(),
            relied_on: 0,
            changes: 0,
            sessions_changed: false,
            learns_sessions: false,
            shared: false,
            adders: Adders::default(),
            originals: Originals::default(),
            shells: HashSet::new(),
        }
    }

    /// Goes on with the session parameters a store kept ([`Learned::sessions_to_keep`]).
    pub fn adopt_sessions(&mut self, kept: &[u8]) -> Result<(), String> {
        let learned: Vec<(String, String)> =
            serde_json::from_slice(kept).map_err(|e| e.to_string())?;
        for (host, name) in learned {
            self.sessions.adopt(&host, &name);
        }
        Ok(())
    }

    /// From now on session parameters are learned; `shared`: in a job whose log keeps what
    /// is learned (the store keeps nothing).
    pub fn start(&mut self, shared: bool) {
        self.learns_sessions = true;
        self.shared = shared;
    }

    /// Makes the change `event` (this process's, or replayed from a shared job's log).
    pub fn apply(&mut self, event: RuleEvent) {
        self.changes += 1;
        match event {
            RuleEvent::Learned(pair) => {
                let CopyPair {
                    copy,
                    original,
                    facts,
                } = pair;
                self.originals.note(&copy, &original);
                if let (Ok(copy), Ok(original)) = (Url::parse(&copy), Url::parse(&original)) {
                    self.policy.learn(&copy, &original, facts);
                }
            }
            RuleEvent::Checked {
                rule,
                right,
                verified,
            } => {
                let rule = RuleId::from_number(rule);
                self.policy.checked(rule, right);
                if let Some(told) = verified {
                    self.policy.verified(rule, told);
                }
            }
            RuleEvent::Retracted { copy, original } => {
                if let (Ok(copy), Ok(original)) = (Url::parse(&copy), Url::parse(&original)) {
                    self.policy.retract(&copy, &original);
                }
            }
            RuleEvent::Session { host, name } => {
                self.sessions.adopt(&host, &name);
            }
            RuleEvent::Shells { host } => {
                self.shells.insert(host);
            }
        }
    }

    /// Whether the pages of `host` (an authority) are served as shells, as far as the
    /// crawl's renders said ([`RuleEvent::Shells`]; in a shared job, any worker's).
    pub fn serves_shells(&self, host: &str) -> bool {
        self.shells.contains(host)
    }

    /// Whether any host is known to serve shells ([`Learned::serves_shells`]).
    pub fn knows_shells(&self) -> bool {
        !self.shells.is_empty()
    }

    /// The session parameters learned (in a shared job, the other workers' too).
    pub fn sessions(&self) -> &SessionParams {
        &self.sessions
    }

    /// A duplicate at `duplicate` of the page at `original`: evidence of a session
    /// parameter ([`SessionParams::observe`]). Returns the name of one it makes learned: the
    /// job's, kept with the next decision (or appended to a shared job's log as a
    /// [`RuleEvent::Session`]).
    pub fn observe_session(
        &mut self,
        duplicate: &CanonicalUrl,
        original: &CanonicalUrl,
    ) -> Option<String> {
        let name = self.sessions.observe(duplicate, original)?;
        self.sessions_changed = true;
        Some(name)
    }

    /// The page at `url` was fetched whole: remembered for a session parameter learned
    /// later ([`SessionParams::fetched`]).
    pub fn fetched(&mut self, url: &str) {
        if self.learns_sessions {
            self.sessions.fetched(url);
        }
    }

    /// The URLs, without a session parameter learned since, of pages fetched under it
    /// before: seen already, to be taken with the decision being applied.
    pub fn take_stripped(&mut self) -> Vec<CanonicalUrl> {
        self.sessions.take_stripped()
    }

    /// The session parameters to keep with the decision being applied, when one was
    /// learned since they were last kept (a shared job's log keeps them).
    pub fn sessions_to_keep(&mut self) -> Option<Vec<u8>> {
        if !std::mem::take(&mut self.sessions_changed) || self.shared {
            return None;
        }
        // Strings only: serialising cannot fail.
        Some(serde_json::to_vec(&self.sessions.learned()).unwrap_or_default())
    }

    /// The book to keep with the decision being applied, when a queued URL relies on a rule
    /// the store does not hold yet, or enough changed.
    pub fn take_to_keep(&mut self) -> Option<Vec<u8>> {
        if self.shared {
            // The job's log is the book.
            return None;
        }
        let book = self.policy.book();
        let due = KEEP_EVERY.max(u32::try_from(book.len() / 8).unwrap_or(u32::MAX));
        if self.relied_on <= self.kept_rules && self.changes < due {
            return None;
        }
        self.kept_rules = book.len();
        self.relied_on = 0;
        self.changes = 0;
        // Strings and integers only: serialising cannot fail.
        Some(serde_json::to_vec(book).unwrap_or_default())
    }

    /// From now on, the policy journals what it is fed ([`LinkPolicy::keep_journal`]).
    pub fn keep_journal(&mut self) {
        self.policy.keep_journal();
    }

    /// The policy's events journaled since last taken.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.policy.take_events()
    }

    /// Whether rules are learned and asked at all.
    pub fn enabled(&self) -> bool {
        self.policy.enabled()
    }

    /// Whether a URL may have a rule to ask: rules on, and some learned.
    pub fn has_rules(&self) -> bool {
        self.enabled() && !self.policy.book().is_empty()
    }

    /// The policy's fate for a URL not fetched yet ([`LinkPolicy::fate`]), noting the rule a
    /// queued URL will rely on: the counterpart a rule names counts when the crawl holds that
    /// page (`known`). A rule learned before a session parameter was (its counterpart
    /// carrying one) names the page without it.
    pub fn fate(&mut self, url: &Url, known: &dyn Known) -> Fate {
        if !self.enabled() {
            return Fate::Fetch { by: crate::By::New };
        }
        let sessions = &self.sessions;
        let page = |counterpart: &Url| match sessions.strip_str(counterpart.as_str()) {
            Some(stripped) => stripped.url.into_url(),
            None => counterpart.clone(),
        };
        let held = |counterpart: &Url| known.held(&page(counterpart));
        let mut fate = self.policy.fate(url, &held);
        if let Some(e) = fate.rule() {
            self.relied_on = self.relied_on.max(e.rule.index() + 1);
        }
        if let Some(e) = fate.rule_mut() {
            e.counterpart = page(&e.counterpart);
        }
        if let Fate::Check { against, .. } = &mut fate {
            *against = page(against);
        }
        fate
    }

    /// The page the most trusted rule says `url` copies, whatever its trust (`None` with
    /// rules off or none matching).
    pub fn counterpart_of(&self, url: &Url) -> Option<Url> {
        if !self.has_rules() {
            return None;
        }
        self.policy.book().predict(url).map(|p| p.counterpart)
    }

    /// `copy` was judged to have the content of `original` (the two URLs as recorded), with
    /// what is known of it: the change to make, with rules on and both URLs valid. A session
    /// parameter the crawl learned is no part of either URL: the rule maps the pages, not the
    /// visits.
    pub fn learned(&self, copy: &str, original: &str, facts: CopyFacts) -> Option<RuleEvent> {
        if !self.enabled() || Url::parse(copy).is_err() || Url::parse(original).is_err() {
            return None;
        }
        Some(RuleEvent::Learned(CopyPair {
            copy: self.without_sessions(copy),
            original: self.without_sessions(original),
            facts,
        }))
    }

    /// `copy` (of `original`, as [`Learned::learned`] names them) linked to `added`, pages
    /// its original does not link to: its rules are held back until each of them is decided
    /// ([`Learned::copy_decided`]).
    pub fn added(&mut self, copy: &str, original: &str, added: &[String]) {
        if self.enabled() {
            let (copy, original) = (self.without_sessions(copy), self.without_sessions(original));
            self.adders.added(&copy, &original, added);
        }
    }

    /// The page at `url` was judged a copy: the changes that let go the rules of the copies
    /// each of whose added pages is now known to be one ([`RuleEvent::Retracted`]).
    pub fn copy_decided(&mut self, url: &str) -> Vec<RuleEvent> {
        (self.adders.copy_decided(url).into_iter())
            .map(|(copy, original)| RuleEvent::Retracted { copy, original })
            .collect()
    }

    /// A page predicted by rule `rule` (its number) to copy `counterpart` was decided: a
    /// duplicate of `duplicate_of`, or not (`None`); by a cheap check that found it unchanged
    /// (`unchanged`), or fetched whole; `verify`: the prediction was to be verified by length
    /// (a right one tells whether the length did). Whether it was right (the page has its
    /// counterpart's content: judged a copy of it, or of the original it was judged a copy
    /// of), and the change.
    pub fn checked(
        &self,
        (rule, counterpart): (u32, &str),
        verify: bool,
        duplicate_of: Option<&str>,
        unchanged: bool,
    ) -> (bool, RuleEvent) {
        let counterpart = self.without_sessions(counterpart);
        let right = duplicate_of.is_some_and(|of| {
            (self.originals).same_content(&self.without_sessions(of), &counterpart)
        });
        let verified = (right && verify).then_some(unchanged);
        let event = RuleEvent::Checked {
            rule,
            right,
            verified,
        };
        (right, event)
    }

    /// The counterpart of `target`, linked from the duplicate `page`, on the site of `page`'s
    /// `original`, without the session parameters learned ([`crate::carried`]).
    pub fn carried(&self, page: &Url, original: &Url, target: &Url) -> Option<CanonicalUrl> {
        crate::found::carried(&self.sessions, page, original, target)
    }

    /// Whether the `original` of the duplicate at `page` (its links' base) links to the
    /// counterpart of its link to `target` (`links_to`): the page a URL rule says `target`
    /// copies (a language's `ch02.pt-br.html` for `ch02.pt.html`), or the one the pair's
    /// paths say ([`Learned::carried`]). Such a link leads to no page its original does not.
    pub fn leads_as_original(
        &self,
        page: Option<&Url>,
        original: &Url,
        target: &Url,
        links_to: impl Fn(&Url) -> bool,
    ) -> bool {
        let by_rule = self.counterpart_of(target);
        let by_pair = page
            .and_then(|page| self.carried(page, original, target))
            .map(CanonicalUrl::into_url);
        by_rule.into_iter().chain(by_pair).any(|c| links_to(&c))
    }

    /// `url` as a URL rule names pages: without the session parameters the crawl learned (a
    /// rule maps pages, not visits).
    fn without_sessions(&self, url: &str) -> String {
        (self.sessions)
            .strip_str(url)
            .map_or_else(|| url.to_string(), |s| s.url.to_string())
    }

    /// The book, as it stands.
    pub fn book(&self) -> &RuleBook {
        self.policy.book()
    }
}

mod adders;
mod originals;

use adders::Adders;
use originals::Originals;

#[cfg(test)]
mod tests;
