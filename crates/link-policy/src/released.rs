//! The fate of a parked link once what it waited for is decided: the page its counterpart is
//! (a hub or not), a hub's links, a mirror's samples, or the crawl's end ([`released_link`]).
//! The crawler releases the links parked on a key as part of the decision that decided it,
//! and carries each [`Fate`] out.

use crate::fate::{By, Fate, How, Until};
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
    /// to is to be known before a probed link is followed (`hub_min_yield`, this
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

/// What a decision decided that the links parked on a key waited for, as the crawler tells
/// it ([`crate::Decider::released`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// The page they waited on, decided: a hub (its record's number), or not.
    Page {
        /// See [`Waited::Page`].
        hub: Option<u64>,
    },
    /// The links of a hub, all decided now: whether it is worth fetching again.
    HubLinks {
        /// See [`Waited::HubLinks`].
        worth: bool,
    },
    /// A mirror's samples, settled: whether the mirror's copies add pages of their own.
    Mirror {
        /// See [`Waited::Mirror`].
        adds: bool,
    },
    /// Nothing else is left to crawl.
    CrawlEnd,
}

impl Waited {
    /// Whether what was waited on is followed by the links parked on it from now on: a hub,
    /// a hub worth fetching again, a mirror whose copies add pages, the crawl's end. (A
    /// shared job's frontier notes it for the links parked there later.)
    pub fn followed(self) -> bool {
        match self {
            Waited::Page { hub } => hub.is_some(),
            Waited::HubLinks { worth } => worth,
            Waited::Mirror { adds } => adds,
            Waited::CrawlEnd => true,
        }
    }
}

/// What a parked link is, for its release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parked<U> {
    /// A copying site's link, followed whatever its counterpart is (it waited only so that
    /// its counterpart is judged first).
    pub always: bool,
    /// The page it is checked against by length, when it carries a probe.
    pub probe: Option<U>,
}

/// What becomes of a parked `link` once what it waited for is `decided`: fetched (as a hub's
/// counterpart, [`By::Hub`], where a new chain of duplicates starts: its count of duplicates
/// in a row is reset, and it is fetched rather than checked), checked by length with its
/// probe, parked again until a hub's links are all decided, or dropped. `hub_links`: the key a
/// hub's links are waited for on, when the hub's worth is to be known first (this process's
/// frontier, `hub_min_yield`); without it, a link that would wait for them follows the
/// hub at once.
pub fn released_link<U>(decided: WaitedFor, link: Parked<U>, hub_links: Option<Key>) -> Fate<U> {
    let Parked { always, probe } = link;
    let follow = match decided {
        WaitedFor::Hub {
            links_pending: true,
        } if !always && probe.is_some() => match hub_links {
            Some(on) => {
                return Fate::Wait {
                    until: Until::HubLinks { on },
                    probe,
                    always,
                };
            }
            None => Some(By::Hub),
        },
        WaitedFor::Hub { .. } => Some(By::Hub),
        WaitedFor::HubLinks { worth } => worth.then_some(By::Hub),
        WaitedFor::Page => always.then_some(By::CopiedSite),
        WaitedFor::Mirror { adds } => {
            let by = By::Mirror;
            return match adds {
                true => Fate::Fetch { by },
                false => Fate::Drop { by },
            };
        }
        WaitedFor::CrawlEnd => Some(By::CrawlEnd),
    };
    if let Some(by) = follow {
        return Fate::Fetch { by };
    }
    let by = match decided {
        WaitedFor::HubLinks { .. } => By::LedToLess,
        _ => By::Original,
    };
    match probe {
        Some(against) => Fate::Check {
            against,
            how: How::Length,
            by,
        },
        None => Fate::Drop { by },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "counterpart";

    /// Fetched by `by`.
    fn fetch(by: By) -> Fate<&'static str> {
        Fate::Fetch { by }
    }

    /// Checked by length against [`C`], by `by`.
    fn check(by: By) -> Fate<&'static str> {
        Fate::Check {
            against: C,
            how: How::Length,
            by,
        }
    }

    #[test]
    fn a_parked_link_is_followed_probed_parked_again_or_dropped_when_released() {
        use By::*;
        let hub = |links_pending| WaitedFor::Hub { links_pending };
        let links = |worth| WaitedFor::HubLinks { worth };
        let on = crate::key("hub 7");
        let again = Fate::Wait {
            until: Until::HubLinks { on },
            probe: Some(C),
            always: false,
        };
        let drop = |by| Fate::Drop { by };
        // (what was decided, always, probe, the key a hub's links are waited on), fate
        let cases = [
            // A hub: its copy's link is followed as a hub's counterpart ...
            ((hub(false), false, false, None), fetch(Hub)),
            ((hub(false), false, true, None), fetch(Hub)),
            ((hub(false), true, false, None), fetch(Hub)),
            // ... unless it carries a probe and what the hub led to is to be known first:
            // parked again on the hub's links ...
            ((hub(true), false, true, Some(on)), again),
            // ... where they are waited for (else followed at once).
            ((hub(true), false, true, None), fetch(Hub)),
            ((hub(true), false, false, Some(on)), fetch(Hub)),
            ((hub(true), true, true, Some(on)), fetch(Hub)),
            // A hub's links all decided: followed when it is worth fetching again, else
            // checked (or dropped, unprobed): it led to less than itself.
            ((links(true), false, true, None), fetch(Hub)),
            ((links(false), false, true, None), check(LedToLess)),
            ((links(false), false, false, None), drop(LedToLess)),
            // A page, no hub: a copying site's link is followed as it is; another is checked
            // or dropped.
            ((WaitedFor::Page, true, true, None), fetch(CopiedSite)),
            ((WaitedFor::Page, true, false, None), fetch(CopiedSite)),
            ((WaitedFor::Page, false, true, None), check(Original)),
            ((WaitedFor::Page, false, false, None), drop(Original)),
            // A mirror's samples settled: its candidates followed when its copies add pages,
            // dropped when not.
            (
                (WaitedFor::Mirror { adds: true }, false, false, None),
                fetch(Mirror),
            ),
            (
                (WaitedFor::Mirror { adds: false }, false, false, None),
                drop(Mirror),
            ),
            (
                (WaitedFor::Mirror { adds: false }, false, true, None),
                drop(Mirror),
            ),
            // The crawl's end: followed rather than lost.
            ((WaitedFor::CrawlEnd, false, false, None), fetch(CrawlEnd)),
            (
                (WaitedFor::CrawlEnd, false, true, Some(on)),
                fetch(CrawlEnd),
            ),
        ];
        for ((decided, always, probe, hub_links), fate) in cases {
            let link = Parked {
                always,
                probe: probe.then_some(C),
            };
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
                fetch(By::Hub),
            ),
            (
                (true, true, true),
                WaitedFor::Hub {
                    links_pending: true,
                },
                Fate::Wait {
                    until: Until::HubLinks { on },
                    probe: Some(C),
                    always: false,
                },
            ),
            (
                (false, false, true),
                WaitedFor::HubLinks { worth: false },
                check(By::LedToLess),
            ),
            (
                (false, false, false),
                WaitedFor::Hub {
                    links_pending: false,
                },
                fetch(By::Hub),
            ),
        ];
        for ((local, pending, probe), learns, fate) in cases {
            let decided = decided_hub(local, pending, probe);
            assert_eq!(decided, learns, "{local} {pending} {probe}");
            let hub_links = (local && pending).then_some(on);
            let link = Parked {
                always: false,
                probe: probe.then_some(C),
            };
            assert_eq!(released_link(decided, link, hub_links), fate);
        }
    }
}
