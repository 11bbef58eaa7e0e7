//! The fate of a parked link once what it waited for is decided: the page its counterpart is
//! (a hub or not), a hub's links, a mirror's samples, or the crawl's end ([`released_link`]).
//! The crawler releases the links parked on a key as part of the decision that decided it,
//! and carries each [`Release`] out.

use crate::keys::Key;
use crate::matched::follows_hub;

/// What a parked link learns when the page it waited for is decided a hub: in this process,
/// a hub (whose links are still to be decided when `links_pending`); in a shared job's
/// worker, a hub whose worth it cannot know, which a link that carries a probe takes as one
/// that led to less ([`follows_hub`]).
pub fn decided_hub(local: bool, links_pending: bool, probe: bool) -> WaitedFor {
    match follows_hub(local, probe) {
        true => WaitedFor::Hub { links_pending },
        false => WaitedFor::HubLinks { worth: false },
    }
}

/// What was decided about what a parked link waited for ([`released_link`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitedFor {
    /// The page, a hub: its decision queued many new links. `links_pending`: what they lead
    /// to is to be known before a probed link is followed (`dedup.hub_min_yield`, this
    /// process's frontier).
    Hub {
        /// See [`WaitedFor::Hub`].
        links_pending: bool,
    },
    /// The links of a hub, all decided now: whether it is worth fetching again.
    HubLinks {
        /// See [`WaitedFor::HubLinks`].
        worth: bool,
    },
    /// The page, decided, not a hub.
    Page,
    /// A mirror's samples, settled: whether the mirror's copies add pages of their own.
    Mirror {
        /// See [`WaitedFor::Mirror`].
        adds: bool,
    },
    /// Nothing is left to crawl: what the link waited for can never be decided (which should
    /// not happen), so it is followed rather than lost.
    CrawlEnd,
}

/// What a parked link is, for its release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parked {
    /// A copying site's link, followed whatever its counterpart is (it waited only so that
    /// its counterpart is judged first).
    pub always: bool,
    /// It carries a probe against its counterpart.
    pub probe: bool,
}

/// The fate of a link released from its parking ([`released_link`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// Queued to be fetched; `new_chain`: as a hub's counterpart, where a new chain of
    /// duplicates starts (its count of duplicates in a row is reset), fetched rather than
    /// probed (its probe is taken off).
    Follow {
        /// See [`Release::Follow`].
        new_chain: bool,
    },
    /// Queued with its probe.
    Probe,
    /// Parked again on this key, until the hub's links are all decided.
    Park(Key),
    /// Not followed.
    Drop,
}

/// What becomes of a parked `link` once what it waited for is `decided`. `hub_links`: the
/// key a hub's links are waited for on, when the hub's worth is to be known first (this
/// process's frontier, `dedup.hub_min_yield`); without it, a link that would wait for them
/// follows the hub at once.
pub fn released_link(decided: WaitedFor, link: Parked, hub_links: Option<Key>) -> Release {
    let Parked { always, probe } = link;
    let follow = match decided {
        WaitedFor::Hub {
            links_pending: true,
        } if !always && probe => match hub_links {
            Some(on) => return Release::Park(on),
            None => Some(true),
        },
        WaitedFor::Hub { .. } => Some(true),
        WaitedFor::HubLinks { worth } => worth.then_some(true),
        WaitedFor::Page => always.then_some(false),
        WaitedFor::Mirror { adds } => {
            return match adds {
                true => Release::Follow { new_chain: false },
                false => Release::Drop,
            };
        }
        WaitedFor::CrawlEnd => Some(false),
    };
    match follow {
        Some(new_chain) => Release::Follow { new_chain },
        None if probe => Release::Probe,
        None => Release::Drop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parked_link_is_followed_probed_parked_again_or_dropped_when_released() {
        use Release::*;
        let hub = |links_pending| WaitedFor::Hub { links_pending };
        let links = |worth| WaitedFor::HubLinks { worth };
        let on = crate::key("hub 7");
        // (what was decided, always, probe, the key a hub's links are waited on), fate
        let cases = [
            // A hub: its copy's link is followed as a hub's counterpart ...
            ((hub(false), false, false, None), Follow { new_chain: true }),
            ((hub(false), false, true, None), Follow { new_chain: true }),
            ((hub(false), true, false, None), Follow { new_chain: true }),
            // ... unless it carries a probe and what the hub led to is to be known first:
            // parked again on the hub's links ...
            ((hub(true), false, true, Some(on)), Park(on)),
            // ... where they are waited for (else followed at once).
            ((hub(true), false, true, None), Follow { new_chain: true }),
            (
                (hub(true), false, false, Some(on)),
                Follow { new_chain: true },
            ),
            (
                (hub(true), true, true, Some(on)),
                Follow { new_chain: true },
            ),
            // A hub's links all decided: followed when it is worth fetching again, else
            // probed (or dropped, unprobed).
            ((links(true), false, true, None), Follow { new_chain: true }),
            ((links(false), false, true, None), Probe),
            ((links(false), false, false, None), Drop),
            // A page, no hub: a copying site's link is followed as it is; another is probed
            // or dropped.
            (
                (WaitedFor::Page, true, true, None),
                Follow { new_chain: false },
            ),
            (
                (WaitedFor::Page, true, false, None),
                Follow { new_chain: false },
            ),
            ((WaitedFor::Page, false, true, None), Probe),
            ((WaitedFor::Page, false, false, None), Drop),
            // A mirror's samples settled: its candidates followed when its copies add pages,
            // dropped when not.
            (
                (WaitedFor::Mirror { adds: true }, false, false, None),
                Follow { new_chain: false },
            ),
            (
                (WaitedFor::Mirror { adds: false }, false, false, None),
                Drop,
            ),
            ((WaitedFor::Mirror { adds: false }, false, true, None), Drop),
            // The crawl's end: followed rather than lost.
            (
                (WaitedFor::CrawlEnd, false, false, None),
                Follow { new_chain: false },
            ),
            (
                (WaitedFor::CrawlEnd, false, true, Some(on)),
                Follow { new_chain: false },
            ),
        ];
        for ((decided, always, probe, hub_links), fate) in cases {
            let link = Parked { always, probe };
            assert_eq!(
                released_link(decided, link, hub_links),
                fate,
                "{decided:?} {link:?} {hub_links:?}"
            );
        }
    }

    #[test]
    fn a_hub_decided_elsewhere_is_probed_where_its_link_can_be() {
        let on = crate::key("hub 7");
        // (local, links pending, probe), what the link learns, and its fate then (not
        // `always`, the hub's links waited for on `on` in this process)
        let cases = [
            (
                (true, false, true),
                WaitedFor::Hub {
                    links_pending: false,
                },
                Release::Follow { new_chain: true },
            ),
            (
                (true, true, true),
                WaitedFor::Hub {
                    links_pending: true,
                },
                Release::Park(on),
            ),
            (
                (false, false, true),
                WaitedFor::HubLinks { worth: false },
                Release::Probe,
            ),
            (
                (false, false, false),
                WaitedFor::Hub {
                    links_pending: false,
                },
                Release::Follow { new_chain: true },
            ),
        ];
        for ((local, pending, probe), learns, fate) in cases {
            let decided = decided_hub(local, pending, probe);
            assert_eq!(decided, learns, "{local} {pending} {probe}");
            let hub_links = (local && pending).then_some(on);
            let link = Parked {
                always: false,
                probe,
            };
            assert_eq!(released_link(decided, link, hub_links), fate);
        }
    }
}
