//! The policy's input events, as a crawl journals them ([`crate::Decider::keep_journal`]):
//! every event carries what the crawl knew (the page's facts, the crawl's answers to what the
//! policy asked, [`Answer`]) and the fate the crawl carried out, so that the policy fed them
//! alone ([`crate::Replay`]) can tell where it would decide otherwise.
//!
//! A crawl writes one event per JSON line; a resumed crawl starts again with [`Event::Start`],
//! which carries the state it resumed from.

use std::cell::RefCell;

use nearcrawl_frontier::SessionParams;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::evidence::{CopyPair, Held, PolicyConfig};
use crate::fate::{By, Fate};
use crate::found::{Crawl, Followed, FoundOn};
use crate::hubs::{HubRule, HubYield};
use crate::keys::Key;
use crate::mirrors::{Cost, Drawn};
use crate::settings::LinkSettings;

/// One input to the policy, with what the crawl knew and what was decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The crawl started (or resumed) with these settings and, resumed, the mirrors it was
    /// sampling (their stored form).
    Start {
        /// The settings.
        settings: LinkSettings,
        /// The mirrors' stored form, when resumed with some.
        mirrors: Option<String>,
    },
    /// A resumed crawl's mirror candidates, read back from the links parked on each pair:
    /// per pair's key, the links (key and URL).
    Resume {
        /// See [`Event::Resume`].
        listed: Vec<(Key, Vec<(Key, String)>)>,
    },
    /// `page` was judged a copy of `original`.
    Copy {
        /// The copy.
        page: String,
        /// Its original.
        original: String,
    },
    /// A link found on a page, and its fate.
    Found(Box<FoundEvent>),
    /// A link parked as a candidate for the samples of the pair `pair`.
    Candidate {
        /// The pair.
        pair: usize,
        /// The link's key.
        link: Key,
        /// Its URL.
        url: String,
    },
    /// A mirror's samples drawn: what each candidate's sample cost, as the crawl answered,
    /// and what was drawn.
    Draw {
        /// Nothing else was left to crawl.
        now: bool,
        /// The crawl's answers, in the order asked: a candidate's URL and its cost.
        costs: Vec<(String, Cost)>,
        /// The samples drawn.
        drawn: Vec<Drawn>,
    },
    /// A drawn sample was queued.
    Sampled {
        /// Its pair.
        pair: usize,
        /// Its key.
        link: Key,
    },
    /// A page's links were followed; `adds`: it added a page of its own.
    LinksFollowed {
        /// The page's key.
        key: Key,
        /// See [`Event::LinksFollowed`].
        adds: bool,
    },
    /// The URL rules' policy started (or resumed) with this configuration and book (as
    /// stored), holding at most `limit` rules.
    Rules {
        /// The configuration.
        config: PolicyConfig,
        /// The book, as stored.
        book: String,
        /// See [`Event::Rules`].
        limit: Option<usize>,
    },
    /// The rules learned from a copy of a page.
    Learned(CopyPair),
    /// A prediction of the rule `rule` (its number) was checked: `right` or not.
    Checked {
        /// See [`Event::Checked`].
        rule: u32,
        /// See [`Event::Checked`].
        right: bool,
    },
    /// A verification of a right prediction of the rule `rule` ended: the length `told`.
    Verified {
        /// See [`Event::Verified`].
        rule: u32,
        /// See [`Event::Verified`].
        told: bool,
    },
    /// A copy noted as linking to pages its original does not did not after all: each page
    /// only it linked to turned out to be a copy ([`crate::LinkPolicy::retract`]).
    Retracted {
        /// The copy.
        copy: String,
        /// Its original.
        original: String,
    },
    /// A URL asked of the rules: what the crawl held of the counterparts the policy asked
    /// about, in order, and the fate.
    RuleFate {
        /// The URL.
        url: String,
        /// The counterparts asked about, and what the crawl held of each.
        held: Vec<(String, Option<Held>)>,
        /// The fate.
        fate: FateRecord,
    },
    /// A URL was decided (as a redirect, whose target was queued at `target`, or not), and
    /// what it settled of a mirror's samples.
    SampleDecided {
        /// Its key.
        key: Key,
        /// Decided as a redirect.
        redirect: bool,
        /// The redirect's target, queued with it.
        target: Option<Key>,
        /// The pair's key and whether its links are followed, when it settled one.
        settled: Option<(Key, bool)>,
    },
}

/// A rule's fate as journaled: its kind (`fetch`, `check`, `verify`, `sample`, `skip`), and
/// for all but `fetch` the rule (its number) and the counterpart it named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FateRecord {
    /// The kind.
    pub fate: String,
    /// The rule's number.
    pub rule: Option<u32>,
    /// The counterpart.
    pub counterpart: Option<String>,
}

impl FateRecord {
    /// The record of `fate`.
    pub fn of(fate: &Fate) -> FateRecord {
        let (name, evidence) = match fate.prediction() {
            Some((name, evidence)) => (name, Some(evidence)),
            None => ("fetch", None),
        };
        FateRecord {
            fate: name.to_owned(),
            rule: evidence.map(|e| e.rule.number()),
            counterpart: evidence.map(|e| e.counterpart.to_string()),
        }
    }
}

/// A link found: the page's facts, the link, the crawl's answers, and its fate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundEvent {
    /// The duplicate's URL and its original's, when the page is one.
    pub copy_of: Option<(String, String)>,
    /// See [`FoundOn::trapped`].
    pub trapped: bool,
    /// See [`FoundOn::hubs`].
    pub hubs: HubRule,
    /// See [`FoundOn::probing`].
    pub probing: bool,
    /// See [`FoundOn::local`].
    pub local: bool,
    /// See [`FoundOn::mirror`].
    pub mirror: bool,
    /// See [`FoundOn::page`] (none in a journal written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<Key>,
    /// The link's URL.
    pub url: String,
    /// The dedup stage's rule for it.
    pub followed: Followed,
    /// What the policy asked the crawl, in order, and the answers.
    pub answers: Vec<Answer>,
    /// Its fate (URLs as the crawl wrote them).
    pub fate: Fate<String>,
}

/// A question the policy asked the crawl ([`Crawl`]), and the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "asked", rename_all = "kebab-case")]
pub enum Answer {
    /// [`Crawl::counterpart`].
    Counterpart {
        /// The target.
        target: String,
        /// The answer.
        answer: Option<String>,
    },
    /// [`Crawl::hub`].
    Hub {
        /// The URL.
        url: String,
        /// The answer.
        answer: Option<bool>,
    },
    /// [`Crawl::hub_yield`].
    HubYield {
        /// The URL.
        url: String,
        /// The answer.
        answer: Option<(u64, HubYield)>,
    },
    /// [`Crawl::seen`].
    Seen {
        /// The URL.
        url: String,
        /// The answer.
        answer: bool,
    },
    /// [`Crawl::seen_here`].
    SeenHere {
        /// The URL.
        url: String,
        /// The answer.
        answer: bool,
    },
    /// The page the URL rules map `target` to ([`crate::LearnedUrls`]): asked of what the
    /// crawl learned, journaled as an answer because the rules' changes are journaled after
    /// the links' of the same decision.
    Rule {
        /// The target.
        target: String,
        /// The answer.
        answer: Option<String>,
    },
}

impl FoundEvent {
    /// The event of a link to `url` found on `on`, before it is decided.
    pub(crate) fn new(on: &FoundOn<'_>, url: &Url, followed: Followed) -> FoundEvent {
        FoundEvent {
            copy_of: on
                .copy_of
                .map(|(page, original)| (page.to_string(), original.to_string())),
            trapped: on.trapped,
            hubs: on.hubs,
            probing: on.probing,
            local: on.local,
            mirror: on.mirror,
            page: on.page,
            url: url.to_string(),
            followed,
            answers: Vec::new(),
            fate: Fate::Drop { by: By::Original },
        }
    }
}

/// A crawl whose answers are noted ([`Answer`]) as it gives them.
pub(crate) struct Recorder<'c, C> {
    pub(crate) crawl: &'c C,
    pub(crate) answers: RefCell<Vec<Answer>>,
}

impl<C: Crawl> Recorder<'_, C> {
    fn text(&self, url: &C::Url) -> String {
        self.crawl.url(url).to_string()
    }

    pub(crate) fn note(&self, answer: Answer) {
        self.answers.borrow_mut().push(answer);
    }
}

impl<C: Crawl> Crawl for Recorder<'_, C> {
    type Url = C::Url;
    type Error = C::Error;

    fn url<'u>(&self, url: &'u C::Url) -> &'u Url {
        self.crawl.url(url)
    }

    fn counterpart(
        &self,
        sessions: &SessionParams,
        page: &Url,
        original: &Url,
        target: &Url,
    ) -> Option<C::Url> {
        let answer = self.crawl.counterpart(sessions, page, original, target);
        self.note(Answer::Counterpart {
            target: target.to_string(),
            answer: answer.as_ref().map(|u| self.text(u)),
        });
        answer
    }

    fn hub(&self, url: &C::Url) -> Result<Option<bool>, C::Error> {
        let answer = self.crawl.hub(url)?;
        self.note(Answer::Hub {
            url: self.text(url),
            answer,
        });
        Ok(answer)
    }

    fn hub_yield(&self, url: &C::Url) -> Result<Option<(u64, HubYield)>, C::Error> {
        let answer = self.crawl.hub_yield(url)?;
        self.note(Answer::HubYield {
            url: self.text(url),
            answer,
        });
        Ok(answer)
    }

    fn seen(&self, url: &C::Url) -> Result<bool, C::Error> {
        let answer = self.crawl.seen(url)?;
        self.note(Answer::Seen {
            url: self.text(url),
            answer,
        });
        Ok(answer)
    }

    fn seen_here(&self, url: &C::Url) -> Result<bool, C::Error> {
        let answer = self.crawl.seen_here(url)?;
        self.note(Answer::SeenHere {
            url: self.text(url),
            answer,
        });
        Ok(answer)
    }

    fn canonical(&self, url: Url) -> Option<C::Url> {
        self.crawl.canonical(url)
    }
}

/// The events a component of the policy was fed since last taken, once the crawl journals
/// them ([`Journal::start`]); off until then.
#[derive(Debug, Clone, Default)]
pub(crate) struct Journal(Option<Vec<Event>>);

impl Journal {
    /// From now on, events are journaled, the first `first`.
    pub(crate) fn start(&mut self, first: Event) {
        self.0 = Some(vec![first]);
    }

    /// Whether events are journaled.
    pub(crate) fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Journals the event `event` makes, when events are journaled.
    pub(crate) fn note(&mut self, event: impl FnOnce() -> Event) {
        if let Some(events) = &mut self.0 {
            events.push(event());
        }
    }

    /// The events journaled since last taken.
    pub(crate) fn take(&mut self) -> Vec<Event> {
        self.0.as_mut().map(std::mem::take).unwrap_or_default()
    }
}
