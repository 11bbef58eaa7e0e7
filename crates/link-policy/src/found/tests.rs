//! A found link's fate, one row per mechanism, against a crawl told what it knows.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;

use super::*;
use crate::mirrors::Budget;
use nearcrawl_frontier::SessionParams;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// What the crawl knows, by URL.
#[derive(Default)]
struct Known {
    /// Pages decided: whether each is a hub.
    hubs: HashMap<&'static str, bool>,
    /// Hubs' worth, and the key their links are waited for on while pending.
    worth: HashMap<&'static str, HubWorth>,
    /// Seen by the job.
    seen: HashSet<&'static str>,
    /// Seen by this process's store.
    seen_here: HashSet<&'static str>,
}

impl Crawl for Known {
    type Url = Url;
    type Error = Infallible;
    fn url<'u>(&self, url: &'u Url) -> &'u Url {
        url
    }
    fn counterpart(
        &self,
        _sessions: &SessionParams,
        page: &Url,
        original: &Url,
        target: &Url,
    ) -> Option<Url> {
        nearcrawl_url_rules::carry(target, page, original)
    }
    fn hub(&self, url: &Url) -> Result<Option<bool>, Infallible> {
        Ok(self.hubs.get(url.as_str()).copied())
    }
    fn hub_yield(&self, url: &Url) -> Result<Option<(u64, HubYield)>, Infallible> {
        // A hub of 10 kB that queued three links: all decided and 30 kB of new pages
        // (worth fetching again), 3 kB (declined), or one decided (pending).
        let (decided, page_bytes) = match self.worth.get(url.as_str()) {
            Some(HubWorth::Declined) => (3, 3_000),
            Some(HubWorth::Pending) => (1, 10_000),
            _ => (3, 30_000),
        };
        let yielded = HubYield {
            decided,
            pages: decided,
            page_bytes,
            ..HubYield::new(10_000, 3)
        };
        Ok(Some((1, yielded)))
    }
    fn seen(&self, url: &Url) -> Result<bool, Infallible> {
        Ok(self.seen.contains(url.as_str()))
    }
    fn seen_here(&self, url: &Url) -> Result<bool, Infallible> {
        Ok(self.seen_here.contains(url.as_str()))
    }
    fn canonical(&self, url: Url) -> Option<Url> {
        Some(url)
    }
}

/// The key a hub's links are waited for on (the hub's record is number 1).
fn hub_links() -> Key {
    crate::hub_links_key(1)
}

/// Hubs of three links, fetched again when they led to as much as themselves.
const HUBS: HubRule = HubRule {
    min_links: 3,
    min_yield: 1.0,
};

/// The new release's table of contents, a copy of the old one's.
const NEW: &str = "http://new.test/doc/index.html";
const OLD: &str = "http://old.test/doc/index.html";
/// Its link to a chapter, and the chapter's counterpart in the old release.
const LINK: &str = "http://new.test/doc/ch1.html";
const COUNTERPART: &str = "http://old.test/doc/ch1.html";

/// How the page is known: a unique page, a duplicate (with the switches), trapped or not.
#[derive(Clone, Copy)]
enum Page {
    Unique,
    /// A duplicate of OLD: hubs, probing, local, trapped.
    Copy(bool, bool, bool, bool),
    /// A mirror's copy of OLD at another path.
    Mirror,
}

fn on<'a>(page: Page, new: &'a Url, old: &'a Url) -> FoundOn<'a> {
    let unique = FoundOn {
        copy_of: None,
        trapped: false,
        hubs: HUBS,
        probing: true,
        local: true,
        mirror: false,
        page: None,
    };
    match page {
        Page::Unique => unique,
        Page::Copy(hubs, probing, local, trapped) => FoundOn {
            copy_of: Some((new, old)),
            trapped,
            hubs: if hubs { HUBS } else { HubRule::default() },
            probing,
            local,
            mirror: false,
            page: None,
        },
        // No hub or probe to follow its links by: only its samples.
        Page::Mirror => FoundOn {
            copy_of: Some((new, old)),
            mirror: true,
            hubs: HubRule::default(),
            probing: false,
            ..unique
        },
    }
}

const ALL: Page = Page::Copy(true, true, true, false);

#[derive(Debug, PartialEq, Eq)]
enum Want {
    Drop,
    Fetch,
    AsHub,
    Mirror,
    Probe,
    /// Parked on the counterpart (with a probe or not).
    OnCounterpart(bool),
    /// Parked on the hub's links (with a probe or not).
    OnHubLinks(bool),
    /// A copying site's link: parked on its counterpart, followed whatever it is.
    Always,
    /// A mirror's candidate.
    Sample,
}

fn want(fate: &Fate<Url>) -> Want {
    let counterpart = url(COUNTERPART);
    let probed = |probe: &Option<Url>| {
        if let Some(p) = probe {
            assert_eq!(p, &counterpart);
        }
        probe.is_some()
    };
    match fate {
        Fate::Drop { .. } => Want::Drop,
        Fate::Fetch { by: By::New } => Want::Fetch,
        Fate::Fetch { by: By::Hub } => Want::AsHub,
        Fate::Fetch { by: By::Mirror } => Want::Mirror,
        Fate::Check {
            against,
            how: How::Length,
            ..
        } => {
            assert_eq!(against, &counterpart);
            Want::Probe
        }
        Fate::Wait {
            always: true,
            until: Until::Page { page, on },
            probe: None,
        } => {
            assert_eq!((page, *on), (&counterpart, crate::key(COUNTERPART)));
            Want::Always
        }
        Fate::Wait {
            until: Until::Samples { .. },
            ..
        } => Want::Sample,
        Fate::Wait {
            until: Until::Page { on, .. },
            probe,
            ..
        } if *on == hub_links() => Want::OnHubLinks(probed(probe)),
        Fate::Wait {
            until: Until::Page { on, page },
            probe,
            ..
        } => {
            assert_eq!((page, *on), (&counterpart, crate::key(COUNTERPART)));
            Want::OnCounterpart(probed(probe))
        }
        other => panic!("no fate a found link has: {other:?}"),
    }
}

/// The crawl's knowledge of the counterpart: decided a hub or not (or undecided), its worth,
/// seen by the job, seen by this store.
fn known(hub: Option<bool>, worth: HubWorth, seen: bool, here: bool) -> Known {
    let mut known = Known::default();
    if let Some(hub) = hub {
        known.hubs.insert(COUNTERPART, hub);
    }
    known.worth.insert(COUNTERPART, worth);
    if seen {
        known.seen.insert(COUNTERPART);
    }
    if here {
        known.seen_here.insert(COUNTERPART);
    }
    known
}

#[test]
fn a_found_link_s_fate_is_one_row_per_mechanism() {
    use Followed::{New, No, Surplus};
    use HubWorth::{Declined, Pending, Worth};
    let off = Page::Copy(false, false, true, false);
    let trapped = Page::Copy(true, true, true, true);
    let shared = Page::Copy(true, true, false, false);
    let undecided = || known(None, Worth, true, true);
    // (what it protects, the page, followed, what the crawl knows, fate, hub declined)
    let cases: Vec<(&str, Page, Followed, Known, Want, bool)> = vec![
        (
            "a unique page's link is fetched",
            Page::Unique,
            New,
            Known::default(),
            Want::Fetch,
            false,
        ),
        (
            "a copy's link to a place its original does not link to is fetched",
            ALL,
            New,
            undecided(),
            Want::Fetch,
            false,
        ),
        (
            "a copy's link where its original's leads, with no hub or probe to follow it, is dropped",
            off,
            No,
            undecided(),
            Want::Drop,
            false,
        ),
        (
            "a table of contents' counterpart that led to new pages is fetched as a hub",
            ALL,
            No,
            known(Some(true), Worth, true, true),
            Want::AsHub,
            false,
        ),
        (
            "a hub followed where links are not probed, whatever it led to",
            Page::Copy(true, false, true, false),
            No,
            known(Some(true), Declined, true, true),
            Want::AsHub,
            false,
        ),
        (
            "a table of contents that led to less than itself is probed, not fetched again",
            ALL,
            No,
            known(Some(true), Declined, true, true),
            Want::Probe,
            true,
        ),
        (
            "a hub whose links are not all decided: the link waits for them, with its probe",
            ALL,
            No,
            known(Some(true), Pending, true, true),
            Want::OnHubLinks(true),
            false,
        ),
        (
            "a shared job's worker cannot know what a hub led to: it probes",
            shared,
            No,
            known(Some(true), Pending, true, true),
            Want::Probe,
            true,
        ),
        (
            "a counterpart not decided yet: the link waits for it, with its probe",
            ALL,
            No,
            undecided(),
            Want::OnCounterpart(true),
            false,
        ),
        (
            "a counterpart not decided and never seen: the link waits, without a probe",
            ALL,
            No,
            known(None, Worth, false, false),
            Want::OnCounterpart(false),
            false,
        ),
        (
            "a trap stops the page's links: an undecided counterpart's link is dropped",
            trapped,
            No,
            undecided(),
            Want::Drop,
            false,
        ),
        (
            "a counterpart decided, no hub: the link is probed against it",
            ALL,
            No,
            known(Some(false), Worth, true, true),
            Want::Probe,
            false,
        ),
        (
            "a counterpart decided, no hub, never seen: nothing to probe against, dropped",
            ALL,
            No,
            known(Some(false), Worth, false, false),
            Want::Drop,
            false,
        ),
        (
            "a surplus link whose counterpart this crawl fetched goes the way of a matched link",
            ALL,
            Surplus,
            known(Some(false), Worth, true, true),
            Want::Probe,
            false,
        ),
        (
            "a surplus link whose counterpart this crawl never saw is fetched",
            ALL,
            Surplus,
            known(Some(false), Worth, true, false),
            Want::Fetch,
            false,
        ),
    ];
    let (new, old) = (url(NEW), url(OLD));
    for (what, page, followed, crawl, fate, declined) in cases {
        let on = on(page, &new, &old);
        let mut mirrors = Mirrors::default();
        let found = found_link(
            &crawl,
            (&SessionParams::default(), &|_: &Url| None),
            &CopiedSites::default(),
            &mut mirrors,
            &on,
            &url(LINK),
            followed,
        );
        let Ok(found) = found;
        // A hub that led to less than itself is what decided the fate.
        let led_to_less = matches!(found.by(), Some(By::LedToLess));
        assert_eq!((want(&found), led_to_less), (fate, declined), "{what}");
    }
}

#[test]
fn a_mirror_s_link_whose_text_its_original_has_waits_for_the_mirror_s_samples() {
    let (new, old) = (url(NEW), url(OLD));
    let crawl = Known::default();
    let link = url(LINK);
    let fate = |mirrors: &mut Mirrors, page: Page| {
        let on = on(page, &new, &old);
        let Ok(found) = found_link(
            &crawl,
            (&SessionParams::default(), &|_: &Url| None),
            &CopiedSites::default(),
            mirrors,
            &on,
            &link,
            Followed::No,
        );
        want(&found)
    };
    // A release (its copies at their originals' paths) is no mirror: dropped.
    let mut release = Mirrors::default();
    release.note_copy(&new, &old);
    assert_eq!(fate(&mut release, Page::Mirror), Want::Drop, "a release");
    // A mirror (copies at other paths): a candidate for its samples ...
    let mut mirrors = Mirrors::default();
    mirrors.note_copy(&new, &url("http://old.test/doc/other.html"));
    assert_eq!(
        fate(&mut mirrors, Page::Mirror),
        Want::Sample,
        "a candidate"
    );
    // ... where the page is a mirror's copy to sample (else dropped) ...
    let not_sampled = Page::Copy(false, false, true, false);
    assert_eq!(
        fate(&mut mirrors, not_sampled),
        Want::Drop,
        "no samples asked"
    );
    // ... and followed once a sample added a page.
    let budget = Budget { cap: 8, share: 1.0 };
    let Fate::<Url>::Wait {
        until: Until::Samples { pair, .. },
        ..
    } = mirrors.link(&new, &old)
    else {
        panic!("parked");
    };
    let sample = crate::key(LINK);
    mirrors.candidate(pair, sample, LINK);
    let drawn = mirrors.draws(budget, true, |_| Ok::<_, ()>(crate::Cost::Unknown));
    assert_eq!(drawn.map(|d| d.len()), Ok(1));
    mirrors.sampled(pair, sample);
    mirrors.added(&sample);
    assert!(matches!(mirrors.decided(&sample, budget), Some((_, true))));
    assert_eq!(
        fate(&mut mirrors, Page::Mirror),
        Want::Mirror,
        "it adds pages"
    );
}

#[test]
fn a_link_that_would_wait_is_decided_by_what_the_frontier_found_of_its_page() {
    use Parking::{Decided, Hub};
    let counterpart = url(COUNTERPART);
    let link = |always, probe: bool| Parked {
        always,
        probe: probe.then(|| counterpart.clone()),
    };
    let check = |by| Fate::Check {
        against: counterpart.clone(),
        how: How::Length,
        by,
    };
    let fetch = |by| Fate::Fetch { by };
    // (what it protects, the frontier's answer, the link: always, probe; local), fate
    let cases = [
        (
            "a link whose page is not decided waits, parked",
            Parking::Parked,
            link(false, true),
            true,
            None,
        ),
        (
            "a table of contents' copy's link, its counterpart decided a hub meanwhile: a new chain",
            Hub,
            link(false, false),
            true,
            Some(fetch(By::Hub)),
        ),
        (
            "... probe and all, in this process, which counts what the hub led to",
            Hub,
            link(false, true),
            true,
            Some(fetch(By::Hub)),
        ),
        (
            "a shared job's worker cannot know what another's hub led to: it probes",
            Hub,
            link(false, true),
            false,
            Some(check(By::LedToLess)),
        ),
        (
            "... and follows the hub where it cannot probe",
            Hub,
            link(false, false),
            false,
            Some(fetch(By::Hub)),
        ),
        (
            "a copying site's link is followed as it is, its counterpart a hub or not",
            Hub,
            link(true, false),
            true,
            Some(fetch(By::CopiedSite)),
        ),
        (
            "a copying site's link whose counterpart was decided meanwhile is followed",
            Decided,
            link(true, false),
            true,
            Some(fetch(By::CopiedSite)),
        ),
        (
            "a copy's link whose counterpart was decided, no hub, is probed against it",
            Decided,
            link(false, true),
            true,
            Some(check(By::Original)),
        ),
        (
            "... or dropped, with no probe to tell",
            Decided,
            link(false, false),
            true,
            Some(Fate::Drop { by: By::Original }),
        ),
    ];
    for (what, answer, link, local, fate) in cases {
        assert_eq!(parking_answered(answer, link, local), fate, "{what}");
    }
}

mod copies;
