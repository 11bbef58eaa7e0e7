//! The fate of a duplicate's link that leads where its original's link leads (relative to
//! each site: its counterpart), so it is not followed as new: followed after all when the
//! counterpart is a hub (a release's table of contents, which lists the release's new
//! pages), probed when the counterpart's length can be compared, parked while what the
//! counterpart is or led to is not known yet, else dropped. [`matched_link`] decides it from
//! what the crawl knows ([`Matched`]); the crawler asks the store and the frontier for those
//! facts, and routes the link as the answer says.

use crate::fate::{By, Fate, How, Until};
use crate::keys::Key;

/// What the crawl knows of a duplicate's link's counterpart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matched {
    /// Whether the counterpart is a hub: `Some(true)`, its decision queued many new links
    /// (`hub_min_links`); `Some(false)`, it was decided and did not, or hubs are off;
    /// `None`, it is not decided yet.
    pub hub: Option<bool>,
    /// For a hub, when the links are probed: whether it is worth fetching again for what its
    /// links led to (`hub_min_yield`).
    pub worth: HubWorth,
    /// The crawl has seen the counterpart's URL (it can be probed against it).
    pub counterpart_seen: bool,
    /// Links are probed (`probe_links`, where the original's server declares its
    /// pages' lengths).
    pub probing: bool,
    /// A trap rule (the duplicate chain) stops this page's links.
    pub trapped: bool,
    /// The frontier is this process's: it tells an undecided page from a decided one, may
    /// hold a link until a hub's links are all decided, and counts what each hub led to (a
    /// shared job's worker does not know what another worker's hub led to: see
    /// [`follows_hub`]).
    pub local: bool,
}

/// What a hub led to, as far as it is known ([`Matched::worth`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HubWorth {
    /// Not asked (not a hub, or links not probed), or worth fetching again: the new pages
    /// its links led to weigh at least `hub_min_yield` times itself, or are not known (a
    /// hub marked before yields were kept, a link that redirected).
    Worth,
    /// Its links are all decided, and the new pages among them weigh less than
    /// `hub_min_yield` times itself.
    Declined,
    /// Its links are not all decided yet.
    Pending,
}

/// The fate of a duplicate's link matched with its original's, from what the crawl knows of
/// its `counterpart` ([`Matched`]): fetched as a hub's counterpart (a new chain of
/// duplicates starts there, fetched, not probed); checked by length against it; parked until
/// the counterpart is decided (key `on`; then followed if it turns out a hub, checked if it
/// carries a probe, dropped if not), or until a hub's links are all decided (key
/// `hub_links`, when its worth is to be known first); else dropped. A hub that led to less
/// than itself is [`By::LedToLess`] (counted in the page's `hubs_declined`).
pub fn matched_link<U: Clone>(
    facts: Matched,
    counterpart: U,
    (on, hub_links): (Key, Option<Key>),
) -> Fate<U> {
    let asks_worth = facts.hub == Some(true) && facts.probing;
    let probe = !facts.trapped && facts.probing && facts.counterpart_seen;
    let declined =
        asks_worth && (facts.worth == HubWorth::Declined || !follows_hub(facts.local, probe));
    // While a hub's links are not all decided, a link of this process's frontier waits for
    // them; one elsewhere follows the hub as before.
    let waits_for_links = asks_worth && facts.worth == HubWorth::Pending && facts.local;
    let by_hub = facts.hub == Some(true) && !declined && !waits_for_links;
    if by_hub {
        return Fate::Fetch { by: By::Hub };
    }
    let by = match declined {
        true => By::LedToLess,
        false => By::Original,
    };
    let wait = |on| Fate::Wait {
        until: Until::Page {
            page: counterpart.clone(),
            on,
        },
        probe: probe.then(|| counterpart.clone()),
        always: false,
    };
    if waits_for_links {
        wait(hub_links.unwrap_or(on))
    } else if facts.hub.is_none() && !facts.trapped {
        wait(on)
    } else if probe {
        Fate::Check {
            against: counterpart,
            how: How::Length,
            by,
        }
    } else {
        Fate::Drop { by }
    }
}

/// Whether a duplicate's link to a hub's counterpart is followed as the hub's, fetched for
/// the new pages it may list (`probe`: the link can be probed against its counterpart
/// instead). In this process, which counts what each hub led to, yes (unless the hub led to
/// less than itself: [`HubWorth::Declined`]). In a worker of a shared job, which cannot know
/// what another worker's hub led to, only when it cannot be probed: probed, a copy found
/// unchanged is fetched for its links only when what they lead to weighs more than itself,
/// as any unchanged page.
pub fn follows_hub(local: bool, probe: bool) -> bool {
    local || !probe
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_s_matched_link_is_followed_probed_parked_or_dropped() {
        use HubWorth::*;
        let (on, links) = (crate::key("counterpart"), crate::key("hub's links"));
        let by = |declined| match declined {
            true => By::LedToLess,
            false => By::Original,
        };
        let hub = || Fate::Fetch { by: By::Hub };
        let probe = |declined| Fate::Check {
            against: "counterpart",
            how: How::Length,
            by: by(declined),
        };
        let drop = |declined| Fate::Drop { by: by(declined) };
        let wait = |on, probe: bool| Fate::Wait {
            until: Until::Page {
                page: "counterpart",
                on,
            },
            probe: probe.then_some("counterpart"),
            always: false,
        };
        let on_links = |probe| wait(links, probe);
        let on_counterpart = |probe| wait(on, probe);
        let facts = |hub, worth, counterpart_seen, probing, trapped, local| Matched {
            hub,
            worth,
            counterpart_seen,
            probing,
            trapped,
            local,
        };
        // (facts: hub, worth, counterpart seen, probing, trapped, local), fate
        let cases = [
            // A hub, worth fetching again: followed, whatever else.
            (facts(Some(true), Worth, true, true, false, true), hub()),
            (facts(Some(true), Worth, true, false, true, false), hub()),
            // Links not probed: its worth is not asked, and it is followed.
            (facts(Some(true), Declined, true, false, false, true), hub()),
            // A hub that led to less than itself: probed like any other page ...
            (
                facts(Some(true), Declined, true, true, false, true),
                probe(true),
            ),
            // ... or dropped when a trap stops the page's links.
            (
                facts(Some(true), Declined, true, true, true, true),
                drop(true),
            ),
            // A hub whose links are not all decided: the link waits for them, probe and all.
            (
                facts(Some(true), Pending, true, true, false, true),
                on_links(true),
            ),
            (
                facts(Some(true), Pending, true, true, true, true),
                on_links(false),
            ),
            // A shared job's worker does not know what another worker's hub led to: it probes
            // the link where it can ...
            (
                facts(Some(true), Pending, true, true, false, false),
                probe(true),
            ),
            (
                facts(Some(true), Worth, true, true, false, false),
                probe(true),
            ),
            // ... and follows the hub where it cannot (the counterpart not seen, a trap).
            (facts(Some(true), Worth, false, true, false, false), hub()),
            (facts(Some(true), Worth, true, true, true, false), hub()),
            (facts(Some(true), Worth, true, false, false, false), hub()),
            // A counterpart not decided yet: parked until it is, with its probe.
            (
                facts(None, Worth, true, true, false, true),
                on_counterpart(true),
            ),
            (
                facts(None, Worth, false, true, false, true),
                on_counterpart(false),
            ),
            // ... not when a trap stops the page's links.
            (facts(None, Worth, true, true, true, true), drop(false)),
            // A counterpart decided, no hub: probed when it can be compared, else dropped.
            (
                facts(Some(false), Worth, true, true, false, true),
                probe(false),
            ),
            (
                facts(Some(false), Worth, false, true, false, true),
                drop(false),
            ),
            (
                facts(Some(false), Worth, true, false, false, true),
                drop(false),
            ),
            (
                facts(Some(false), Worth, true, true, true, true),
                drop(false),
            ),
        ];
        for (facts, fate) in cases {
            let got = matched_link(facts, "counterpart", (on, Some(links)));
            assert_eq!(got, fate, "{facts:?}");
        }
    }
}
