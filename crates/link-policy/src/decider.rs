//! The link policy's state and settings in one place: the crawler holds one [`Decider`], asks
//! it every link's fate and what each of its settings means, and reads no link setting of its
//! own.

use std::cell::RefCell;

use url::Url;

use crate::fate::Fate;
use crate::found::{Crawl, Followed, FoundOn, found_link};
use crate::hubs::HubRule;
use crate::journal::{Event, FoundEvent, Journal, Recorder};
use crate::keys::Key;
use crate::mirrors::{Budget, Cost, Drawn, Mirrors};
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
    }

    /// The events journaled since last taken.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.journal.take()
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
    /// costs, as far as the crawl knows.
    pub fn draw<E>(
        &mut self,
        now: bool,
        mut cost: impl FnMut(&str) -> Result<Cost, E>,
    ) -> Result<Vec<Drawn>, E> {
        let budget = self.mirror_budget();
        let mut costs = Vec::new();
        let drawn = self.mirrors.draws(budget, now, |url| {
            let answer = cost(url)?;
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
            return found_link(crawl, &self.sites, &mut self.mirrors, on, url, followed);
        }
        let mut event = FoundEvent::new(on, crawl.url(url), followed);
        let recorder = Recorder {
            crawl,
            answers: RefCell::new(Vec::new()),
        };
        let found = found_link(&recorder, &self.sites, &mut self.mirrors, on, url, followed)?;
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
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    /// Every mechanism on, at the values a crawl runs with.
    const ON: LinkSettings = crate::settings::MEASURED;

    #[test]
    fn a_page_s_links_are_sampled_hubbed_and_probed_as_the_settings_and_the_page_say() {
        let (mirror, origin) = (url("http://m.test/story/1/"), url("http://o.test/a/1.html"));
        let (release, old) = (url("http://new.test/a.html"), url("http://old.test/a.html"));
        let page = |copy_of, matched_by, trapped, declared, local| PageFacts {
            copy_of,
            matched_by,
            trapped,
            original_declared: declared,
            local,
        };
        let anchor = Some(LinkMatch::Anchor);
        let off = LinkSettings::default();
        // (what it protects, settings, the page) -> (mirror, hubs on, probing)
        let cases = [
            (
                "a mirror's copy (links matched by anchor text, another site): its samples",
                ON,
                page(Some((&mirror, &origin)), anchor, false, true, true),
                (true, true, true),
            ),
            (
                "links matched by where they lead: no mirror",
                ON,
                page(
                    Some((&release, &old)),
                    Some(LinkMatch::Target),
                    false,
                    true,
                    true,
                ),
                (false, true, true),
            ),
            (
                "a copy on its original's site: no mirror",
                ON,
                page(Some((&mirror, &mirror)), anchor, false, true, true),
                (false, true, true),
            ),
            (
                "a trap stops the page's links: no samples",
                ON,
                page(Some((&mirror, &origin)), anchor, true, true, true),
                (false, true, true),
            ),
            (
                "a shared job's worker samples no mirror",
                ON,
                page(Some((&mirror, &origin)), anchor, false, true, false),
                (false, true, true),
            ),
            (
                "an original that declared no length: nothing to probe against",
                ON,
                page(Some((&mirror, &origin)), anchor, false, false, true),
                (true, true, false),
            ),
            (
                "every mechanism off",
                off,
                page(Some((&mirror, &origin)), anchor, false, true, true),
                (false, false, false),
            ),
        ];
        for (what, settings, facts, (mirror, hubs, probing)) in cases {
            let on = Decider::new(settings).found_on(facts);
            assert_eq!(
                (on.mirror, on.hubs.on(), on.probing),
                (mirror, hubs, probing),
                "{what}"
            );
        }
    }

    #[test]
    fn the_settings_are_answered_by_the_decider() {
        let decider = Decider::new(ON);
        assert_eq!(decider.mirror_budget().of(14), 4);
        assert!(decider.hubs().is_hub(3) && !decider.hubs().is_hub(2));
        assert!(decider.hubs().declines());
        assert!(decider.probes() && decider.samples());
        assert_eq!(
            decider.copy_facts(Some(1_020), Some(1_000)).same_length,
            Some(true)
        );
        assert_eq!(
            decider.copy_facts(Some(1_021), Some(1_000)).same_length,
            Some(false)
        );
        let off = Decider::default();
        assert!(!off.hubs().is_hub(1_000) && !off.hubs().declines());
        assert_eq!(off.mirror_budget().of(14), 0);
    }

    #[test]
    fn a_mirror_s_sample_settles_its_pair_when_decided() {
        let (copy, original) = (url("http://m.test/story/1/"), url("http://o.test/a/1.html"));
        // A mirror with one sample drawn of one candidate.
        let sampled = |sample: Key| {
            let mut decider = Decider::new(ON);
            decider.note_copy(&copy, &original);
            let on = decider.found_on(PageFacts {
                copy_of: Some((&copy, &original)),
                matched_by: Some(LinkMatch::Anchor),
                trapped: false,
                original_declared: false,
                local: true,
            });
            assert!(on.mirror);
            let crate::Fate::<Url>::Wait {
                until: crate::Until::Samples { pair, .. },
                ..
            } = decider.mirrors.link(&copy, &original)
            else {
                panic!("a candidate");
            };
            decider.candidate(pair, sample, "http://m.test/story/2/");
            let drawn = decider.draw(true, |_| Ok::<_, ()>(crate::Cost::Unknown));
            assert_eq!(drawn.map(|d| d.len()), Ok(1));
            decider.sampled(pair, sample);
            decider
        };
        let (sample, target) = (crate::key("sample"), crate::key("target"));
        let pair = crate::key("mirror http://m.test of http://o.test");
        // (what it protects, its links added a page, decided as a redirect, its queued target)
        let cases = [
            (
                "a sample that added nothing: the mirror's links dropped",
                false,
                false,
                None,
                Some((pair, false)),
            ),
            (
                "a sample that added a page: the mirror's links followed",
                true,
                false,
                None,
                Some((pair, true)),
            ),
            (
                "a sample that redirected elsewhere: taken as adding, nothing lost",
                false,
                true,
                None,
                Some((pair, true)),
            ),
            (
                "a sample that redirected to a URL queued with it: that page is the sample",
                false,
                true,
                Some(target),
                None,
            ),
        ];
        for (what, adds, redirect, queued_target, settled) in cases {
            let mut decider = sampled(sample);
            decider.links_followed(&sample, adds);
            assert_eq!(
                decider.sample_decided(&sample, redirect, queued_target),
                settled,
                "{what}"
            );
        }
        // The redirect's target decided in its place settles the pair.
        let mut decider = sampled(sample);
        assert_eq!(decider.sample_decided(&sample, true, Some(target)), None);
        decider.links_followed(&target, true);
        assert_eq!(
            decider.sample_decided(&target, false, None),
            Some((pair, true))
        );
        // A page that is no sample settles nothing.
        assert_eq!(
            decider.sample_decided(&crate::key("other"), false, None),
            None
        );
    }
}
