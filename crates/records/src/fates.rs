//! What became of a page's links ([`LinkFates`]): each link the page named counted once, under
//! the one fate the link policy decided for it ([`nearcrawl_link_policy::Fate`]) and what
//! decided it, in one field of the page's record; and why a URL itself was requested as it was
//! ([`UrlFate`], the record's `fate`).

use std::collections::BTreeMap;

use nearcrawl_link_policy::{Fate, LinkMatch};
use serde::{Deserialize, Serialize};

use crate::probe::{Prediction, Probe};

/// Links counted by what decided their fate: its name ([`nearcrawl_link_policy::By::name`]:
/// `new`, `original`, `hub`, `rule`, `trap`, ...) and how many links it decided so.
pub type Counts = BTreeMap<String, u32>;

/// A record's `link_fates`: what became of the links the page named (`outlinks` counts them),
/// each counted once under its fate and what decided it, the links that get no record of their
/// own (dropped, waiting, skipped) included. Absent when the page's links were not followed (a
/// page that failed, a file that is no page, a page decided without a download). Fates and
/// counts of none are left out, so `{"fetch": {"new": 12}, "wait": {"counterpart": 3}}` is a
/// page that queued 12 new links and parked 3 until their counterparts are decided.
///
/// A record's `released` has the same form: the links parked on that URL (counted under
/// `wait` by the pages that named them) and what became of them when it was decided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkFates {
    /// Queued to be fetched whole: by `new` (it leads somewhere new), `rule` (a URL rule's
    /// prediction, fetched to check it), `hub` (a duplicate's link to a hub's counterpart,
    /// `hub_min_links`), `mirror` (a mirror whose copies add pages of their own;
    /// `sample`: drawn as one of its samples), `copied-site`, `crawl-end`, `redirect` (a
    /// redirect's target), `sitemap` (a sitemap's URLs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fetch: Counts,
    /// Queued to be checked cheaply against the page they copy (HEAD, a `Range` sample) and
    /// fetched only if that says they changed: by `original` (a duplicate's link that leads
    /// where its original's does, `probe_links`), `led-to-less` (to a hub that led to
    /// less than itself, `hub_min_yield`), `rule` (a URL rule's prediction).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub check: Counts,
    /// Parked until what they wait for is decided (that URL's record's `released` says what
    /// became of them): their `counterpart` (a duplicate's links to where its original's
    /// lead), a `copied-site`'s counterpart (a site that copies another path for path, or as
    /// a URL rule maps its pages), a hub's links (`hub-links`), a `mirror`'s samples
    /// (`mirror_samples`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wait: Counts,
    /// Not requested, recorded as duplicates of the page a URL rule names (`rule`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skip: Counts,
    /// Not followed: by `original` (a duplicate's link to where its original's leads, matched
    /// as `matched_by` says), `led-to-less`, `mirror` (its samples added nothing), `trap` (a
    /// trap rule, named in the record's `trap`: the duplicate chain, a duplicate's links, next
    /// month, next page, a host's budget of a pattern; left unseen for other paths to reach).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub drop: Counts,
    /// Past `links.max_per_page`: not read.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub over_cap: u32,
    /// Focused crawls: links to URLs already queued that this page moved up (it gave them a
    /// better priority than the page that queued them; their records name it as `parent`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub raised: u32,
    /// A duplicate: how its links were matched with its original's (`duplicate_outlinks =
    /// "new"`): `target` (where they lead, relative to each site) or `anchor` (by anchor
    /// text: the two sites' URL schemes differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<LinkMatch>,
    /// A record written before 2026-12-07: its counters as it had them, until
    /// [`LinkFates::upgraded`] counts them by fate.
    #[serde(default, flatten, skip_serializing)]
    pub legacy: Legacy,
}

impl Legacy {
    /// No counts.
    pub const NONE: Legacy = Legacy {
        queued: 0,
        probed: 0,
        parked: 0,
        dropped: 0,
        trapped: 0,
        via_hub: 0,
        hubs_declined: 0,
        mirror_followed: 0,
        followed: 0,
        sampled: 0,
    };
}

/// The counters of `link_fates` and `released` before 2026-12-07.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Legacy {
    #[serde(default)]
    queued: u32,
    #[serde(default)]
    probed: u32,
    #[serde(default)]
    parked: u32,
    #[serde(default)]
    dropped: u32,
    #[serde(default)]
    trapped: u32,
    #[serde(default)]
    via_hub: u32,
    #[serde(default)]
    hubs_declined: u32,
    #[serde(default)]
    mirror_followed: u32,
    #[serde(default)]
    followed: u32,
    #[serde(default)]
    sampled: u32,
}

impl LinkFates {
    /// Counts one link whose fate is `fate`.
    pub fn add<U>(&mut self, fate: &Fate<U>) {
        self.add_named(fate.name(), fate.by_name(), 1);
    }

    /// Counts `n` links of the fate named `fate` (`fetch`, `check`, `wait`, `skip`, `drop`),
    /// decided by the mechanism named `by`.
    pub fn add_named(&mut self, fate: &str, by: &str, n: u32) {
        if n == 0 {
            return;
        }
        if let Some(counts) = self.counts_mut(fate) {
            *counts.entry(by.to_owned()).or_default() += n;
        }
    }

    /// The links of the fate named `fate`, by what decided it (none for a name no fate has).
    pub fn counts(&self, fate: &str) -> Option<&Counts> {
        Some(match fate {
            "fetch" => &self.fetch,
            "check" => &self.check,
            "wait" => &self.wait,
            "skip" => &self.skip,
            "drop" => &self.drop,
            _ => return None,
        })
    }

    fn counts_mut(&mut self, fate: &str) -> Option<&mut Counts> {
        Some(match fate {
            "fetch" => &mut self.fetch,
            "check" => &mut self.check,
            "wait" => &mut self.wait,
            "skip" => &mut self.skip,
            "drop" => &mut self.drop,
            _ => return None,
        })
    }

    /// The links of the fate named `fate` decided by `by`.
    pub fn count(&self, fate: &str, by: &str) -> u32 {
        self.counts(fate)
            .and_then(|counts| counts.get(by))
            .copied()
            .unwrap_or(0)
    }

    /// The links of the fate named `fate`, whatever decided it.
    pub fn total(&self, fate: &str) -> u32 {
        self.counts(fate).map_or(0, |counts| counts.values().sum())
    }

    /// The links queued: fetched or checked.
    pub fn queued(&self) -> u32 {
        self.total("fetch") + self.total("check")
    }

    /// The counts of a record written before 2026-12-07 by fate: links queued by `queued_by`
    /// (`new`, or a redirect's or a sitemap's), by `hub` or `mirror` where the old counters
    /// said so; probed as checked by length (`led-to-less` for a declined hub's); parked as
    /// waiting for their counterpart; dropped as a duplicate's links, trapped by a trap rule;
    /// released ones as `followed`, `sampled` (by `sample`). This version's counts stay.
    pub(crate) fn upgraded(mut self, queued_by: &str) -> LinkFates {
        let old = std::mem::take(&mut self.legacy);
        let fetched = old.queued.saturating_sub(old.via_hub + old.mirror_followed);
        self.add_named("fetch", queued_by, fetched + old.followed);
        self.add_named("fetch", "hub", old.via_hub);
        self.add_named("fetch", "mirror", old.mirror_followed);
        self.add_named("fetch", "sample", old.sampled);
        self.add_named("check", "led-to-less", old.hubs_declined);
        self.add_named(
            "check",
            "original",
            old.probed.saturating_sub(old.hubs_declined),
        );
        self.add_named("wait", "counterpart", old.parked);
        self.add_named("drop", "original", old.dropped);
        self.add_named("drop", "trap", old.trapped);
        self
    }

    /// The same counts and `other`'s (links released on one URL for two reasons, a
    /// counterpart's and a mirror's).
    pub fn plus(mut self, other: &LinkFates) -> LinkFates {
        for fate in ["fetch", "check", "wait", "skip", "drop"] {
            for (by, n) in other.counts(fate).into_iter().flatten() {
                self.add_named(fate, by, *n);
            }
        }
        self.over_cap += other.over_cap;
        self.raised += other.raised;
        self
    }
}

/// A record's `fate`: what the link policy decided for this URL before it was requested, and
/// what came of it. Absent for a URL no page's link named (a seed, a sitemap's URL, a
/// redirect's target).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlFate {
    /// `fetch` (requested whole), `check` (asked cheaply against its counterpart first,
    /// fetched whole only when that said it changed) or `skip` (not requested: a predicted
    /// duplicate).
    pub fate: String,
    /// What decided it, as [`LinkFates`] names it (`new`, `original`, `hub`, `rule`, ...).
    pub by: String,
    /// For a check: `length` (its HEAD's length against its counterpart's, and for a large
    /// page a sample), `verify` (a trusted rule's prediction verified by length) or `sample`
    /// (a rule's prediction sampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub how: Option<String>,
    /// The URL rule that named the page this one copies (`dedup.predict`): the rule, its
    /// record when asked, and whether it was right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Prediction>,
    /// The check made (a HEAD, and a sample) and its answer, when it was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<Probe>,
}

impl UrlFate {
    /// What its URL rule's prediction was used for, as `report.json`'s `predictions` counts it:
    /// `check` (fetched whole, checking the rule), `verify`, `sample` (checked cheaply),
    /// `skip`; none when no rule decided it.
    pub fn predicted(&self) -> Option<&'static str> {
        self.rule.as_ref()?;
        match (self.fate.as_str(), self.how.as_deref()) {
            ("fetch", _) => Some("check"),
            ("check", Some("verify")) => Some("verify"),
            ("check", _) => Some("sample"),
            ("skip", _) => Some("skip"),
            _ => None,
        }
    }
}

/// Whether a count is zero (left out of a record).
fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_link_policy::{By, Until};

    #[test]
    fn links_are_counted_by_fate_and_what_decided_it_and_counts_of_none_left_out() {
        let mut fates = LinkFates {
            matched_by: Some(LinkMatch::Target),
            ..LinkFates::default()
        };
        for _ in 0..12 {
            fates.add::<String>(&Fate::Fetch { by: By::New });
        }
        let wait = Fate::Wait {
            until: Until::Page {
                page: "http://o.test/a".to_owned(),
                on: nearcrawl_link_policy::key("http://o.test/a"),
            },
            probe: None,
            always: false,
        };
        for _ in 0..3 {
            fates.add(&wait);
        }
        fates.add_named("drop", "trap", 2);
        fates.add_named("no such fate", "new", 1);
        let json = serde_json::to_string(&fates).unwrap();
        assert_eq!(
            json,
            r#"{"fetch":{"new":12},"wait":{"counterpart":3},"drop":{"trap":2},"matched_by":"target"}"#
        );
        assert_eq!(serde_json::from_str::<LinkFates>(&json).unwrap(), fates);
        assert_eq!(
            serde_json::from_str::<LinkFates>("{}").unwrap(),
            LinkFates::default()
        );
        assert_eq!(
            (fates.total("fetch"), fates.count("wait", "counterpart")),
            (12, 3)
        );
        assert_eq!((fates.queued(), fates.total("skip")), (12, 0));
        let twice = fates.clone().plus(&fates);
        assert_eq!(
            (twice.total("drop"), twice.matched_by),
            (4, Some(LinkMatch::Target))
        );
    }
}
