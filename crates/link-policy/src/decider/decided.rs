//! What a decision releases: the crawler tells the [`Decider`] the URLs one decision decided
//! ([`DecidedUrl`]), and it answers which keys the links parked on are released from, in
//! order, and what each waited for was decided to be ([`Waited`]): each URL decided (a hub, or
//! not); each hub whose links are all decided now, credited with what they turned out to be
//! ([`HubRule::credit`]); each mirror whose sample this decision settles
//! ([`Decider::sample_decided`]).

use super::Decider;
use crate::hubs::{Credit, HubYield, hub_links_key};
use crate::keys::Key;
use crate::released::Waited;

/// One URL a decision decided, as the link policy sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecidedUrl {
    /// Its key, when it was queued (a URL refused on discovery never was: no link waits on
    /// it, and it counts for no hub).
    pub key: Option<Key>,
    /// The record number of the page whose link queued it (for a redirect's target, the
    /// page that linked to the redirect): the hub it counts for, when that is a hub.
    pub found_on: Option<u64>,
    /// What it counts for that hub.
    pub credit: Credit,
    /// Decided as a redirect: `Some` with the key of its target when the target was queued
    /// with it (then the target counts in its place), `Some(None)` when it was not.
    pub redirect: Option<Option<Key>>,
}

impl Decider {
    /// The URLs one decision decided (`urls`, in the decision's order; `hub`: the key and
    /// record number of a URL it decided a hub): the releases it makes, each the position of
    /// the URL whose record counts it, the key released and what was decided. `yields`: the
    /// hubs' yields the decision changes, each read from `stored` the first time.
    pub fn decided<E>(
        &mut self,
        urls: &[DecidedUrl],
        hub: Option<(Key, u64)>,
        yields: &mut Vec<(u64, HubYield)>,
        stored: impl FnMut(u64) -> Result<Option<HubYield>, E>,
    ) -> Result<Vec<(usize, Key, Waited)>, E> {
        let mut releases = Vec::new();
        for (index, url) in urls.iter().enumerate() {
            if let Some(key) = url.key {
                let hub = hub.and_then(|(hub, seq)| (hub == key).then_some(seq));
                releases.push((index, key, Waited::Page { hub }));
            }
        }
        // A URL refused on discovery was never one of its page's links; a redirect whose
        // target was queued with it counts through its target.
        let credited = urls.iter().enumerate().filter_map(|(index, url)| {
            let counts = url.key.is_some() && !matches!(url.redirect, Some(Some(_)));
            counts.then_some((index, url.found_on?, url.credit))
        });
        for (index, seq, worth) in self.hubs().credit(yields, credited, stored)? {
            releases.push((index, hub_links_key(seq), Waited::HubLinks { worth }));
        }
        if self.samples_pending() {
            for (index, url) in urls.iter().enumerate() {
                let Some(key) = url.key else {
                    continue;
                };
                let target = url.redirect.flatten();
                if let Some((on, adds)) = self.sample_decided(&key, url.redirect.is_some(), target)
                {
                    releases.push((index, on, Waited::Mirror { adds }));
                }
            }
        }
        Ok(releases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decider::tests::sampling;
    use crate::key;

    /// A URL of the decision, queued as `key` from page 5, new or not.
    fn decided(key: Option<Key>, credit: Credit, redirect: Option<Option<Key>>) -> DecidedUrl {
        DecidedUrl {
            key,
            found_on: Some(5),
            credit,
            redirect,
        }
    }

    /// A row: what it protects, the decision's URLs, the hub it decides, the releases.
    type Case = (
        &'static str,
        Vec<DecidedUrl>,
        Option<(Key, u64)>,
        Vec<(usize, Key, Waited)>,
    );

    #[test]
    fn a_decision_releases_its_urls_then_the_hubs_it_completes_then_the_mirrors_it_settles() {
        let (a, b, target) = (key("a"), key("b"), key("target"));
        let pair = key("mirror http://m.test of http://o.test");
        // Hub 5 queued one link, hub 6 three; a new page is ten times a hub's size.
        let one_link = HubYield::new(10_000, 1);
        let page = Credit::New(100_000);
        // (what it protects, the decision's URLs, the hub it decides) -> releases
        let cases: [Case; 5] = [
            (
                "each URL queued releases its links, a hub's as a hub's; its hub is credited",
                vec![
                    decided(Some(a), Credit::Other, None),
                    decided(Some(b), page, None),
                ],
                Some((b, 9)),
                vec![
                    (0, a, Waited::Page { hub: None }),
                    (1, b, Waited::Page { hub: Some(9) }),
                    (0, hub_links_key(5), Waited::HubLinks { worth: false }),
                ],
            ),
            (
                "three new pages weighing more than their hub complete it: worth fetching again",
                [a, b, target]
                    .map(|k| DecidedUrl {
                        found_on: Some(6),
                        ..decided(Some(k), page, None)
                    })
                    .to_vec(),
                None,
                vec![
                    (0, a, Waited::Page { hub: None }),
                    (1, b, Waited::Page { hub: None }),
                    (2, target, Waited::Page { hub: None }),
                    (2, hub_links_key(6), Waited::HubLinks { worth: true }),
                ],
            ),
            (
                "a URL refused on discovery: nothing waits on it, no hub counts it",
                vec![decided(None, page, None)],
                None,
                vec![],
            ),
            (
                "a redirect whose target was queued with it counts through its target",
                vec![decided(Some(a), Credit::Redirect, Some(Some(target)))],
                None,
                vec![(0, a, Waited::Page { hub: None })],
            ),
            (
                "a mirror's sample decided settles its pair: its candidates released",
                vec![decided(Some(a), Credit::Other, None)],
                None,
                vec![
                    (0, a, Waited::Page { hub: None }),
                    (0, hub_links_key(5), Waited::HubLinks { worth: false }),
                    (0, pair, Waited::Mirror { adds: false }),
                ],
            ),
        ];
        for (what, urls, hub, want) in cases {
            let mut decider = sampling(if what.starts_with("a mirror") {
                a
            } else {
                key("none")
            });
            let mut yields = Vec::new();
            let stored = |seq: u64| {
                Ok::<_, ()>(match seq {
                    5 => Some(one_link),
                    6 => Some(HubYield::new(10_000, 3)),
                    _ => None,
                })
            };
            let releases = decider.decided(&urls, hub, &mut yields, stored);
            assert_eq!(releases, Ok(want), "{what}");
        }
        // With hubs off, no hub is credited.
        let mut off = Decider::default();
        let urls = [decided(Some(a), page, None)];
        let releases = off.decided(&urls, None, &mut Vec::new(), |_| {
            Ok::<_, ()>(Some(one_link))
        });
        assert_eq!(releases, Ok(vec![(0, a, Waited::Page { hub: None })]));
    }
}
