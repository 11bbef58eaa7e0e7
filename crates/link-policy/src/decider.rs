//! The link policy's state and settings in one place: the crawler holds one [`Decider`], asks
//! it every link's fate and what each of its settings means, and reads no link setting of its
//! own.

mod decided;
mod learning;

pub use decided::DecidedUrl;

use std::cell::RefCell;

use url::Url;

use crate::fate::Fate;
use crate::found::{Crawl, Followed, FoundOn, LearnedUrls, found_link};
use crate::hubs::HubRule;
use crate::journal::{Answer, Event, FoundEvent, Journal, Recorder};
use crate::keys::Key;
use crate::learned::Learned;
use crate::mirrors::{Budget, Cost, Drawn, Mirrors};
use crate::released::{Parked, Waited, WaitedFor, released_link};
use crate::rule_log::Shared;
use crate::settings::LinkSettings;
use crate::sites::{CopiedSites, same_site};
use crate::{CopyFacts, LinkMatch};

/// What the crawler knows of a page whose links it follows, for [`Decider::found_on`].
#[derive(Debug, Clone, Copy)]
pub struct PageFacts<'a> {
    /// A duplicate of a page this crawl kept: its URL (its links' base) and its original's.
    pub copy_of: Option<(&'a Url, &'a Url)>,
    /// How its links are matched with its original's, when it is a duplicate whose new links
    /// are followed.
    pub matched_by: Option<LinkMatch>,
    /// A trap rule (the chain of duplicates) stops its links.
    pub trapped: bool,
    /// It is a duplicate whose original's server declared the original's length (or, in a
    /// shared job, may yet): a link can be probed against what it links to.
    pub original_declared: bool,
    /// The frontier is this process's: it tells an undecided page from a decided one.
    pub local: bool,
    /// Its own URL's key: no link it names waits for it, decided by the decision that
    /// follows its links.
    pub page: Option<Key>,
}

/// The link policy's state (the sites found to copy others, the mirrors sampled) and its
/// settings: every decision about a link is asked of it.
#[derive(Debug, Default)]
pub struct Decider {
    settings: LinkSettings,
    pub(crate) sites: CopiedSites,
    pub(crate) mirrors: Mirrors,
    /// The events fed since last taken, when the crawl journals them
    /// ([`Decider::keep_journal`]).
    journal: Journal,
    /// What the crawl learned: the URL rules, the session parameters (`decider/learning.rs`).
    pub(crate) learned: Learned,
    /// A shared job's log of what the crawl learned, and how far this worker replayed it.
    shared: Option<Shared>,
    /// What the URL rules decided for the URL about to be handed out
    /// ([`Decider::at_dispatch`]), until its step is taken: its URL and that.
    dispatched: Option<(String, Fate)>,
}

impl Decider {
    /// A decider with `settings`, nothing learned yet.
    pub fn new(settings: LinkSettings) -> Decider {
        Decider {
            settings,
            ..Decider::default()
        }
    }

    /// The mirrors sampled, in their stored form, when they changed since last asked
    /// ([`Mirrors::take_changed`]).
    pub fn mirrors_to_keep(&mut self) -> Option<Vec<u8>> {
        self.mirrors.take_changed()
    }

    /// Whether a mirror was found (sampled or to be).
    pub fn has_mirrors(&self) -> bool {
        !self.mirrors.is_empty()
    }

    /// Whether a mirror's sample is not decided yet.
    pub fn samples_pending(&self) -> bool {
        self.mirrors.has_pending()
    }

    /// Whether a mirror has candidates to draw and takes more samples.
    pub fn wants_samples(&self) -> bool {
        self.mirrors.wants_samples(self.mirror_budget())
    }

    /// A resumed crawl goes on with the mirrors it was sampling.
    pub fn resume_mirrors(&mut self, mirrors: Mirrors) {
        self.mirrors = mirrors;
    }

    /// A resumed crawl's mirror candidates read back: `parked_on` lists the links parked on
    /// a pair's key, with their URLs ([`Mirrors::resume_candidates`]).
    pub fn resume_candidates<E>(
        &mut self,
        mut parked_on: impl FnMut(&Key) -> Result<Vec<(Key, String)>, E>,
    ) -> Result<(), E> {
        let mut listed = Vec::new();
        self.mirrors.resume_candidates(|on| {
            let links = parked_on(on)?;
            listed.push((*on, links.clone()));
            Ok(links)
        })?;
        self.note(|| Event::Resume { listed });
        Ok(())
    }

    /// From now on, every event the policy is fed is journaled, for [`Decider::take_events`]
    /// (a crawl writes them to a file, and [`crate::Replay`] feeds them to the policy alone),
    /// starting with the settings and, when resumed, the mirrors it goes on with.
    pub fn keep_journal(&mut self) {
        let mirrors = (!self.mirrors.is_empty())
            .then(|| String::from_utf8_lossy(&self.mirrors.to_bytes()).into_owned());
        self.journal.start(Event::Start {
            settings: self.settings,
            mirrors,
        });
        self.learned.keep_journal();
    }

    /// The events journaled since last taken: the links' and the mirrors', then the URL
    /// rules'.
    pub fn take_events(&mut self) -> Vec<Event> {
        let mut events = self.journal.take();
        events.extend(self.learned.take_events());
        events
    }

    /// Journals the event `event` makes, when the crawl journals.
    fn note(&mut self, event: impl FnOnce() -> Event) {
        self.journal.note(event);
    }

    /// `page` was judged a copy of `original`: what the sites copied and the mirrors learn.
    pub fn note_copy(&mut self, page: &Url, original: &Url) {
        self.sites.note(page, original);
        self.mirrors.note_copy(page, original);
        self.note(|| Event::Copy {
            page: page.to_string(),
            original: original.to_string(),
        });
    }

    /// The link to `url` (key `link`) was parked as a candidate for the samples of the pair
    /// `pair` ([`Mirrors::candidate`]).
    pub fn candidate(&mut self, pair: usize, link: Key, url: &str) {
        self.mirrors.candidate(pair, link, url);
        self.note(|| Event::Candidate {
            pair,
            link,
            url: url.to_owned(),
        });
    }

    /// The mirrors' samples to draw now, as the mirror budget allows ([`Mirrors::draws`]);
    /// `now`: nothing else is left to crawl; `cost`: what sampling a candidate (by URL)
    /// costs, as far as the crawl knows, told the counterpart a URL rule predicts for it
    /// ([`Learned::counterpart_of`]).
    pub fn draw<E>(
        &mut self,
        now: bool,
        mut cost: impl FnMut(&str, Option<Url>) -> Result<Cost, E>,
    ) -> Result<Vec<Drawn>, E> {
        let budget = self.mirror_budget();
        let mut costs = Vec::new();
        let learned = &self.learned;
        let drawn = self.mirrors.draws(budget, now, |url| {
            let counterpart = Url::parse(url)
                .ok()
                .and_then(|u| learned.counterpart_of(&u));
            let answer = cost(url, counterpart)?;
            costs.push((url.to_owned(), answer));
            Ok(answer)
        })?;
        self.note(|| Event::Draw {
            now,
            costs,
            drawn: drawn.clone(),
        });
        Ok(drawn)
    }

    /// The drawn sample `link` of the pair `pair` was queued ([`Mirrors::sampled`]).
    pub fn sampled(&mut self, pair: usize, link: Key) {
        self.mirrors.sampled(pair, link);
        self.note(|| Event::Sampled { pair, link });
    }

    /// What the policy knows of a page whose links are followed, the same for each link.
    pub fn found_on<'a>(&self, page: PageFacts<'a>) -> FoundOn<'a> {
        let settings = self.settings;
        let mirror = match (page.matched_by, page.copy_of) {
            (Some(by), Some((base, original))) => {
                by == LinkMatch::Anchor
                    && settings.mirror_samples > 0
                    && !page.trapped
                    && page.local
                    && !same_site(base, original)
            }
            _ => false,
        };
        FoundOn {
            copy_of: page.copy_of,
            trapped: page.trapped,
            hubs: self.hubs(),
            probing: settings.probe_links && page.original_declared,
            local: page.local,
            mirror,
            page: page.page,
        }
    }

    /// The fate of a link found on a page ([`found_link`]).
    pub fn found<C: Crawl>(
        &mut self,
        crawl: &C,
        on: &FoundOn<'_>,
        url: &C::Url,
        followed: Followed,
    ) -> Result<Fate<C::Url>, C::Error> {
        if !self.journal.is_on() {
            let (sites, learned) = (&self.sites, &self.learned);
            let counterpart_of = |u: &Url| learned.counterpart_of(u);
            let rules: LearnedUrls<'_> = (learned.sessions(), &counterpart_of);
            return found_link(crawl, rules, sites, &mut self.mirrors, on, url, followed);
        }
        let mut event = FoundEvent::new(on, crawl.url(url), followed);
        let recorder = Recorder {
            crawl,
            answers: RefCell::new(Vec::new()),
        };
        let (sites, learned) = (&self.sites, &self.learned);
        let counterpart_of = |target: &Url| {
            let answer = learned.counterpart_of(target);
            recorder.note(Answer::Rule {
                target: target.to_string(),
                answer: answer.as_ref().map(Url::to_string),
            });
            answer
        };
        let found = found_link(
            &recorder,
            (learned.sessions(), &counterpart_of),
            sites,
            &mut self.mirrors,
            on,
            url,
            followed,
        )?;
        event.answers = recorder.answers.into_inner();
        event.fate = found.clone().map(|u| crawl.url(&u).to_string());
        self.note(|| Event::Found(Box::new(event)));
        Ok(found)
    }

    /// The page at `key` had its links followed: when it is a mirror's sample, whether it
    /// added a page (`adds`: it was no copy at all, or it links where its original does not)
    /// is what the sample tells.
    pub fn links_followed(&mut self, key: &Key, adds: bool) {
        if adds && self.mirrors.is_pending(key) {
            self.mirrors.added(key);
            self.note(|| Event::LinksFollowed { key: *key, adds });
        }
    }

    /// The URL at `key` was decided; `redirect`: as a redirect, whose target was queued with
    /// it at `queued_target`, or not. When it was a mirror's sample that settles its pair of
    /// sites: the key the pair's links wait on, and whether they are followed (the mirror's
    /// copies add pages) or dropped. A sample that redirected to a URL queued with it passes
    /// its part to that URL's page; one whose target is another URL's to tell (seen already,
    /// refused) is taken as adding a page, so that nothing is lost for it.
    pub fn sample_decided(
        &mut self,
        key: &Key,
        redirect: bool,
        queued_target: Option<Key>,
    ) -> Option<(Key, bool)> {
        if !self.mirrors.is_pending(key) {
            return None;
        }
        let settled = self.settle(key, redirect, queued_target);
        self.note(|| Event::SampleDecided {
            key: *key,
            redirect,
            target: queued_target,
            settled,
        });
        settled
    }

    /// See [`Decider::sample_decided`], for a sample not decided yet.
    fn settle(
        &mut self,
        key: &Key,
        redirect: bool,
        queued_target: Option<Key>,
    ) -> Option<(Key, bool)> {
        if redirect {
            if let Some(target) = queued_target
                && self.mirrors.moved(key, target)
            {
                return None;
            }
            self.mirrors.added(key);
        }
        let budget = self.mirror_budget();
        self.mirrors.decided(key, budget)
    }

    /// How many samples a mirror takes.
    pub fn mirror_budget(&self) -> Budget {
        let settings = self.settings;
        Budget {
            cap: settings.mirror_samples,
            share: settings.mirror_sample_share,
        }
    }

    /// When a page is a hub, and when a hub is worth fetching again.
    pub fn hubs(&self) -> HubRule {
        HubRule {
            min_links: self.settings.hub_min_links,
            min_yield: self.settings.hub_min_yield,
        }
    }

    /// What becomes of a parked `link` once what it waited for was decided (`waited`): as
    /// the hub rule says of a page decided ([`HubRule::page_decided`]: in this process,
    /// `local`, a probed link of a hub that is declined waits for the hub's links), then
    /// [`released_link`].
    pub fn released<U>(&self, waited: Waited, link: Parked<U>, local: bool) -> Fate<U> {
        let (decided, hub_links) = match waited {
            Waited::Page { hub } => self.hubs().page_decided(hub, local, link.probe.is_some()),
            Waited::HubLinks { worth } => (WaitedFor::HubLinks { worth }, None),
            Waited::Mirror { adds } => (WaitedFor::Mirror { adds }, None),
            Waited::CrawlEnd => (WaitedFor::CrawlEnd, None),
        };
        released_link(decided, link, hub_links)
    }

    /// Whether a duplicate's links are probed against their counterparts.
    pub fn probes(&self) -> bool {
        self.settings.probe_links
    }

    /// Whether a large probed page is sampled before it is fetched.
    pub fn samples(&self) -> bool {
        self.settings.probe_samples
    }

    /// How far a probed page's length may be from its counterpart's, as a fraction of it, for
    /// the page to be taken as unchanged.
    pub fn probe_tolerance(&self) -> f64 {
        self.settings.probe_tolerance
    }

    /// What the lengths of a copy and its original say of the copy ([`CopyFacts::of_lengths`]
    /// at the probes' tolerance).
    pub fn copy_facts(&self, copy: Option<u64>, original: Option<u64>) -> CopyFacts {
        CopyFacts::of_lengths(copy, original, self.settings.probe_tolerance)
    }
}

#[cfg(test)]
mod tests;
