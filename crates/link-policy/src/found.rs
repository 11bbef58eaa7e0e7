//! The fate of a link when it is found, before any rule's prediction: dropped, fetched, fetched
//! as a hub's counterpart or as a mirror's page, probed against its counterpart, or parked
//! until a page or a mirror's samples are decided ([`found_link`]).
//!
//! A duplicate's link that leads where its original's link leads (relative to each site: its
//! counterpart) is not followed as new; what the crawl knows of the counterpart decides
//! whether it is followed all the same ([`matched_link`]). A link of a site found to copy
//! another path for path waits for its counterpart there to be judged first. A mirror's
//! link whose anchor text the original has waits for the mirror's samples. What the crawl
//! knows is asked through [`Crawl`], only when the fate turns on it (an answer may cost a
//! read of the store).

use nearcrawl_frontier::{CanonicalUrl, SessionParams};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::fate::{By, Fate, How, Until};
use crate::hubs::{HubRule, HubYield};
use crate::keys::Key;
use crate::matched::{HubWorth, Matched, follows_hub, matched_link};
use crate::mirrors::Mirrors;
use crate::released::Parked;
use crate::sites::{CopiedSites, same_site};

/// Whether the dedup stage's rule for a page's links follows a link, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Followed {
    /// Not followed.
    No,
    /// It leads somewhere new (or every link is followed).
    New,
    /// Only for leading beyond the original's count of places for its anchor text.
    Surplus,
}

/// What the crawl knows that a found link's fate may turn on.
pub trait Crawl {
    /// A URL as the crawler holds it (its canonical form).
    type Url: Clone;
    /// What asking may fail with.
    type Error;
    /// The URL `url` is.
    fn url<'u>(&self, url: &'u Self::Url) -> &'u Url;
    /// Its key: the key of the URL it is.
    fn key(&self, url: &Self::Url) -> Key {
        crate::key(self.url(url).as_str())
    }
    /// The counterpart of `target`, linked from the duplicate `page`, on the site of `page`'s
    /// `original` (the path the two pages do not share swapped), if there is one, without the
    /// `sessions` parameters the crawl learned ([`carried`]).
    fn counterpart(
        &self,
        sessions: &SessionParams,
        page: &Url,
        original: &Url,
        target: &Url,
    ) -> Option<Self::Url>;
    /// Whether the page at `url` is a hub: `Some(true)`, its decision queued many new links;
    /// `Some(false)`, decided and not; `None`, not decided yet.
    fn hub(&self, url: &Self::Url) -> Result<Option<bool>, Self::Error>;
    /// What the hub at `url` (its record's number) led to, as far as counted; `None` for a
    /// hub marked before what hubs led to was kept.
    fn hub_yield(&self, url: &Self::Url) -> Result<Option<(u64, HubYield)>, Self::Error>;
    /// Whether the job has seen `url` (queued or decided it).
    fn seen(&self, url: &Self::Url) -> Result<bool, Self::Error>;
    /// Whether this process's store has seen `url`.
    fn seen_here(&self, url: &Self::Url) -> Result<bool, Self::Error>;
    /// `url` as the crawler holds URLs, if it can hold it.
    fn canonical(&self, url: Url) -> Option<Self::Url>;
}

/// The counterpart of `target`, linked from the duplicate `page`, on the site of `page`'s
/// `original`: its path and query under the original's scheme, host and port, the start of the
/// path the two pages do not share swapped ([`nearcrawl_url_rules::carry`]), without the
/// `sessions` parameters learned on its host. Only for a `target` on the duplicate's own site.
pub fn carried(
    sessions: &SessionParams,
    page: &Url,
    original: &Url,
    target: &Url,
) -> Option<CanonicalUrl> {
    let counterpart = nearcrawl_url_rules::carry(target, page, original)?;
    let counterpart = CanonicalUrl::from_url(counterpart).ok()?;
    Some(match sessions.strip(&counterpart) {
        Some(stripped) => stripped.url,
        None => counterpart,
    })
}

/// What the crawl learned of its URLs, as a found link's fate asks it: the session
/// parameters, and the page the URL rules say a URL copies (whatever the rule's trust).
pub type LearnedUrls<'a> = (&'a SessionParams, &'a dyn Fn(&Url) -> Option<Url>);

/// What is known of the page whose links are being followed, the same for each of them.
#[derive(Debug, Clone, Copy)]
pub struct FoundOn<'a> {
    /// A duplicate of a page this crawl kept: its URL (its links' base) and its original's.
    pub copy_of: Option<(&'a Url, &'a Url)>,
    /// A trap rule (the chain of duplicates) stops its links.
    pub trapped: bool,
    /// When a duplicate's link may be followed as a hub's counterpart (`hub_min_links`,
    /// `hub_min_yield`).
    pub hubs: HubRule,
    /// A duplicate's link may be probed: where the original's server declares its pages'
    /// lengths (`probe_links`).
    pub probing: bool,
    /// The frontier is this process's: it tells an undecided page from a decided one.
    pub local: bool,
    /// A mirror's copy (links matched by anchor text, on another site than its original's):
    /// its links to its own site whose text the original has are the mirror's samples to
    /// decide (`mirror_samples`).
    pub mirror: bool,
    /// The page's own URL's key: no link it names waits for it (it is decided by the
    /// decision that follows its links, before any link it parks could be released).
    pub page: Option<Key>,
}

/// What the frontier found of the page a link would wait for ([`Until::Page`]), when it was
/// asked to park the link there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parking {
    /// The page was decided a hub (it led to new pages).
    Hub,
    /// The page is not decided yet: the link waits for it, parked.
    Parked,
    /// The page was decided (or never queued) and is not a hub.
    Decided,
}

/// The fate of a link that would wait for a page ([`Until::Page`]), once the frontier said
/// what it found of that page: `None` while it waits, parked; else as a parked link's once
/// released ([`crate::released_link`]): fetched as a hub's counterpart (a new chain) where a
/// hub is followed ([`follows_hub`]), else as it is (checked with its probe, if it carries
/// one, or followed as a copying site's link); a page decided and no hub drops it, unless it
/// is followed `always` or carries a probe.
pub fn parking_answered<U>(answer: Parking, link: Parked<U>, local: bool) -> Option<Fate<U>> {
    let Parked { always, probe } = link;
    let probed = probe.is_some();
    let as_it_is = |by| match probe {
        Some(against) => Fate::Check {
            against,
            how: How::Length,
            by,
        },
        None => Fate::Fetch { by: By::CopiedSite },
    };
    match answer {
        Parking::Parked => None,
        Parking::Hub if !always && follows_hub(local, probed) => Some(Fate::Fetch { by: By::Hub }),
        Parking::Hub => Some(as_it_is(By::LedToLess)),
        Parking::Decided if always || probed => Some(as_it_is(By::Original)),
        Parking::Decided => Some(Fate::Drop { by: By::Original }),
    }
}

/// Whether the link to `url`, found on the page `on`, is followed as new: as the dedup
/// stage's rule says (`followed`), except a link followed for leading beyond the original's
/// places for its text, on another site than the original's, when its counterpart there was
/// crawled (a release's copy judged against another page of the previous release): that
/// goes the way of any matched link (hub, probe, park).
pub fn follows<C: Crawl>(
    crawl: &C,
    sessions: &SessionParams,
    on: &FoundOn<'_>,
    url: &C::Url,
    followed: Followed,
) -> Result<bool, C::Error> {
    if followed == Followed::Surplus
        && let Some((base, original)) = on.copy_of
        && !same_site(base, original)
        && let Some(counterpart) = crawl.counterpart(sessions, base, original, crawl.url(url))
        && crawl.seen_here(&counterpart)?
    {
        return Ok(false);
    }
    Ok(followed != Followed::No)
}

/// The fate of the link to `url`, not seen before, found on the page `on` and `followed` (or
/// not) by the dedup stage's rule for it: what the crawl knows of its counterpart
/// ([`matched_link`]), the sites found to copy others, path for path (`sites`) or as the URL
/// rules map their pages (`counterpart_of`, beside the `sessions` parameters learned), and
/// the mirrors sampled (`mirrors`) decide it: dropped,
/// fetched (as new, a hub's counterpart or a mirror's page), checked by length against its
/// counterpart, or waiting for a page or a mirror's samples. A link fetched as new
/// ([`By::New`]) is asked of the URL rules next (when it waited for its counterpart, once it
/// is handed out).
pub fn found_link<C: Crawl>(
    crawl: &C,
    (sessions, counterpart_of): LearnedUrls<'_>,
    sites: &CopiedSites,
    mirrors: &mut Mirrors,
    on: &FoundOn<'_>,
    url: &C::Url,
    followed: Followed,
) -> Result<Fate<C::Url>, C::Error> {
    let target = crawl.url(url);
    let follows = follows(crawl, sessions, on, url, followed)?;
    let mut fate = match follows {
        true => Fate::Fetch { by: By::New },
        false => Fate::Drop { by: By::Original },
    };
    // Where the original's link to the same place (relative to each site) led, for a new
    // link not followed as new, when a hub or a probe could still follow it.
    let counterpart = match (follows, on.copy_of) {
        (false, Some((base, original))) if on.hubs.on() || on.probing => {
            crawl.counterpart(sessions, base, original, target)
        }
        _ => None,
    };
    if let Some(counterpart) = counterpart {
        fate = matched(crawl, on, counterpart)?;
    } else if follows
        && !on.trapped
        && on.local
        && let Some(first) =
            copied_counterpart(crawl, (sessions, counterpart_of), sites, on, target)?
    {
        let on = crawl.key(&first);
        fate = Fate::Wait {
            until: Until::Page { page: first, on },
            probe: None,
            always: true,
        };
    }
    // A mirror's copy's link to its own site whose text the original has.
    if matches!(fate, Fate::Drop { .. })
        && on.mirror
        && let Some((base, original)) = on.copy_of
        && same_site(base, target)
    {
        fate = mirrors.link(base, original);
    }
    Ok(fate)
}

/// The page a link to `target` of a site found to copy another waits for, to be judged
/// first: its counterpart path for path on the site it copies (`sites`), not decided yet;
/// else the page the URL rules map it to (a mirror under its own URL scheme, a language's
/// copy), queued and not decided yet, but the page `on` that names it (a calendar's day,
/// mapped to its month by a rule, found on the month). (A link waits only for a page seen
/// before it, so no two links wait for each other.)
fn copied_counterpart<C: Crawl>(
    crawl: &C,
    (sessions, counterpart_of): LearnedUrls<'_>,
    sites: &CopiedSites,
    on: &FoundOn<'_>,
    target: &Url,
) -> Result<Option<C::Url>, C::Error> {
    if let Some(first) = sites.copied(target).and_then(|copied| {
        // Path for path: from the copying site's root to the copied one's.
        let mut root = target.clone();
        root.set_path("/");
        root.set_query(None);
        crawl.counterpart(sessions, &root, copied, target)
    }) && crawl.hub(&first)?.is_none()
    {
        return Ok(Some(first));
    }
    match counterpart_of(target).and_then(|c| crawl.canonical(c)) {
        Some(first)
            if on.page != Some(crawl.key(&first))
                && crawl.seen(&first)?
                && crawl.hub(&first)?.is_none() =>
        {
            Ok(Some(first))
        }
        _ => Ok(None),
    }
}

/// The fate of a duplicate's link matched with its original's, whose counterpart is
/// `counterpart`.
fn matched<C: Crawl>(
    crawl: &C,
    on: &FoundOn<'_>,
    counterpart: C::Url,
) -> Result<Fate<C::Url>, C::Error> {
    let hub = match on.hubs.on() {
        true => crawl.hub(&counterpart)?,
        false => Some(false),
    };
    // What a hub led to is counted by the process that decided it (a shared job's worker
    // asks nothing: `matched_link` knows it cannot know).
    let (worth, hub_links) = match hub == Some(true) && on.probing && on.local {
        true => on.hubs.worth(crawl.hub_yield(&counterpart)?),
        false => (HubWorth::Worth, None),
    };
    // Seen by the job: a shared job's seen set is its frontier's, not this store's.
    let seen = on.probing && !on.trapped && crawl.seen(&counterpart)?;
    let facts = Matched {
        hub,
        worth,
        counterpart_seen: seen,
        probing: on.probing,
        trapped: on.trapped,
        local: on.local,
    };
    let key = crawl.key(&counterpart);
    Ok(matched_link(facts, counterpart, (key, hub_links)))
}

#[cfg(test)]
mod tests;
