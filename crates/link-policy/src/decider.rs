//! The link policy's state and settings in one place: the crawler holds one [`Decider`], asks
//! it every link's fate and what each of its settings means, and reads no link setting of its
//! own.

use serde::{Deserialize, Serialize};
use url::Url;

use crate::found::{Crawl, Followed, FoundFate, FoundOn, found_link};
use crate::hubs::HubRule;
use crate::keys::Key;
use crate::mirrors::{Budget, Mirrors};
use crate::sites::{CopiedSites, same_site};
use crate::{CopyFacts, LinkMatch};

/// The settings a link's fate turns on, apart from the URL rules' ([`crate::PolicyConfig`]);
/// the job file's `[dedup]` keys of the same names document each. The default has every
/// mechanism off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkSettings {
    /// A page whose links led to at least this many new pages is a hub (0: none is).
    pub hub_min_links: u32,
    /// A hub that led to less than this many times itself is not fetched again (0: every hub
    /// is).
    pub hub_min_yield: f64,
    /// The most samples a mirror takes (0: mirrors are not sampled).
    pub mirror_samples: u32,
    /// The share of a mirror's candidates it samples.
    pub mirror_sample_share: f64,
    /// A duplicate's link is probed (HEAD, then `Range` for a large page) against its
    /// counterpart.
    pub probe_links: bool,
    /// How far a probed page's length may be from its counterpart's, as a fraction of it,
    /// for the page to be taken as unchanged.
    pub probe_tolerance: f64,
    /// A large probed page is sampled before it is fetched.
    pub probe_samples: bool,
}

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
    sites: CopiedSites,
    mirrors: Mirrors,
}

impl Decider {
    /// A decider with `settings`, nothing learned yet.
    pub fn new(settings: LinkSettings) -> Decider {
        Decider {
            settings,
            ..Decider::default()
        }
    }

    fn settings(&self) -> LinkSettings {
        self.settings
    }

    /// The mirrors sampled, to read back or to keep ([`Mirrors::from_bytes`],
    /// [`Mirrors::take_changed`]) and to settle.
    pub fn mirrors(&mut self) -> &mut Mirrors {
        &mut self.mirrors
    }

    /// A resumed crawl goes on with the mirrors it was sampling.
    pub fn resume_mirrors(&mut self, mirrors: Mirrors) {
        self.mirrors = mirrors;
    }

    /// `page` was judged a copy of `original`: what the sites copied and the mirrors learn.
    pub fn note_copy(&mut self, page: &Url, original: &Url) {
        self.sites.note(page, original);
        self.mirrors.note_copy(page, original);
    }

    /// What the policy knows of a page whose links are followed, the same for each link.
    pub fn found_on<'a>(&self, page: PageFacts<'a>) -> FoundOn<'a> {
        let settings = self.settings();
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
    ) -> Result<FoundFate<C::Url>, C::Error> {
        found_link(crawl, &self.sites, &mut self.mirrors, on, url, followed)
    }

    /// The page at `key` had its links followed: when it is a mirror's sample, whether it
    /// added a page (`adds`: it was no copy at all, or it links where its original does not)
    /// is what the sample tells.
    pub fn links_followed(&mut self, key: &Key, adds: bool) {
        if adds && self.mirrors.is_pending(key) {
            self.mirrors.added(key);
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
        let settings = self.settings();
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
        self.settings().probe_links
    }

    /// Whether a large probed page is sampled before it is fetched.
    pub fn samples(&self) -> bool {
        self.settings().probe_samples
    }

    /// How far a probed page's length may be from its counterpart's, as a fraction of it, for
    /// the page to be taken as unchanged.
    pub fn probe_tolerance(&self) -> f64 {
        self.settings().probe_tolerance
    }

    /// What the lengths of a copy and its original say of the copy ([`CopyFacts::of_lengths`]
    /// at the probes' tolerance).
    pub fn copy_facts(&self, copy: Option<u64>, original: Option<u64>) -> CopyFacts {
        CopyFacts::of_lengths(copy, original, self.settings().probe_tolerance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    const ON: LinkSettings = LinkSettings {
        hub_min_links: 3,
        hub_min_yield: 1.0,
        mirror_samples: 8,
        mirror_sample_share: 0.25,
        probe_links: true,
        probe_tolerance: 0.02,
        probe_samples: true,
    };

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
            let crate::MirrorLink::Park { pair, .. } = decider.mirrors().link(&copy, &original)
            else {
                panic!("a candidate");
            };
            decider
                .mirrors()
                .candidate(pair, sample, "http://m.test/story/2/");
            let budget = decider.mirror_budget();
            let drawn =
                (decider.mirrors()).draws(budget, true, |_| Ok::<_, ()>(crate::Cost::Unknown));
            assert_eq!(drawn.map(|d| d.len()), Ok(1));
            decider.mirrors().sampled(pair, sample);
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
