//! The fate of a duplicate's link that leads where its original's link leads (relative to
//! each site: its counterpart), so it is not followed as new: followed after all when the
//! counterpart is a hub (a release's table of contents, which lists the release's new
//! pages), probed when the counterpart's length can be compared, parked while what the
//! counterpart is or led to is not known yet, else dropped. [`matched_link`] decides it from
//! what the crawl knows ([`Matched`]); the crawler asks the store and the frontier for those
//! facts, and routes the link as the answer says.

/// What the crawl knows of a duplicate's link's counterpart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matched {
    /// Whether the counterpart is a hub: `Some(true)`, its decision queued many new links
    /// (`dedup.hub_min_links`); `Some(false)`, it was decided and did not, or hubs are off;
    /// `None`, it is not decided yet.
    pub hub: Option<bool>,
    /// For a hub, when the links are probed: whether it is worth fetching again for what its
    /// links led to (`dedup.hub_min_yield`).
    pub worth: HubWorth,
    /// The crawl has seen the counterpart's URL (it can be probed against it).
    pub counterpart_seen: bool,
    /// Links are probed (`dedup.probe_links`, where the original's server declares its
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

/// The fate of a duplicate's link matched with its original's ([`matched_link`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedLink {
    /// Followed as a hub's counterpart: a new chain of duplicates starts there, and it is
    /// fetched, not probed.
    FollowAsHub,
    /// Queued with a HEAD probe against its counterpart's length.
    Probe,
    /// Parked until the counterpart is decided (then followed if it turns out a hub, probed
    /// if `probe`, dropped if not).
    ParkOnCounterpart {
        /// It carries a probe.
        probe: bool,
    },
    /// Parked until the hub's links are all decided (then followed if the hub is worth
    /// fetching again, probed if `probe`, dropped if not).
    ParkOnHubLinks {
        /// It carries a probe.
        probe: bool,
    },
    /// Not followed (counted in the page's `dropped`).
    Drop,
}

/// Decides [`MatchedLink`] from [`Matched`]; also says whether a hub was declined (a hub
/// that led to less than itself, counted in the page's `hubs_declined`).
pub fn matched_link(facts: Matched) -> (MatchedLink, bool) {
    let asks_worth = facts.hub == Some(true) && facts.probing;
    let probe = !facts.trapped && facts.probing && facts.counterpart_seen;
    let declined =
        asks_worth && (facts.worth == HubWorth::Declined || !follows_hub(facts.local, probe));
    // While a hub's links are not all decided, a link of this process's frontier waits for
    // them; one elsewhere follows the hub as before.
    let waits_for_links = asks_worth && facts.worth == HubWorth::Pending && facts.local;
    let by_hub = facts.hub == Some(true) && !declined && !waits_for_links;
    if by_hub {
        return (MatchedLink::FollowAsHub, declined);
    }
    let fate = if waits_for_links {
        MatchedLink::ParkOnHubLinks { probe }
    } else if facts.hub.is_none() && !facts.trapped {
        MatchedLink::ParkOnCounterpart { probe }
    } else if probe {
        MatchedLink::Probe
    } else {
        MatchedLink::Drop
    };
    (fate, declined)
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
        use MatchedLink::*;
        let facts = |hub, worth, counterpart_seen, probing, trapped, local| Matched {
            hub,
            worth,
            counterpart_seen,
            probing,
            trapped,
            local,
        };
        // (facts: hub, worth, counterpart seen, probing, trapped, local), fate, declined
        let cases = [
            // A hub, worth fetching again: followed, whatever else.
            (
                facts(Some(true), Worth, true, true, false, true),
                FollowAsHub,
                false,
            ),
            (
                facts(Some(true), Worth, true, false, true, false),
                FollowAsHub,
                false,
            ),
            // Links not probed: its worth is not asked, and it is followed.
            (
                facts(Some(true), Declined, true, false, false, true),
                FollowAsHub,
                false,
            ),
            // A hub that led to less than itself: probed like any other page ...
            (
                facts(Some(true), Declined, true, true, false, true),
                Probe,
                true,
            ),
            // ... or dropped when a trap stops the page's links.
            (
                facts(Some(true), Declined, true, true, true, true),
                Drop,
                true,
            ),
            // A hub whose links are not all decided: the link waits for them, probe and all.
            (
                facts(Some(true), Pending, true, true, false, true),
                ParkOnHubLinks { probe: true },
                false,
            ),
            (
                facts(Some(true), Pending, true, true, true, true),
                ParkOnHubLinks { probe: false },
                false,
            ),
            // A shared job's worker does not know what another worker's hub led to: it probes
            // the link where it can ...
            (
                facts(Some(true), Pending, true, true, false, false),
                Probe,
                true,
            ),
            (
                facts(Some(true), Worth, true, true, false, false),
                Probe,
                true,
            ),
            // ... and follows the hub where it cannot (the counterpart not seen, a trap).
            (
                facts(Some(true), Worth, false, true, false, false),
                FollowAsHub,
                false,
            ),
            (
                facts(Some(true), Worth, true, true, true, false),
                FollowAsHub,
                false,
            ),
            (
                facts(Some(true), Worth, true, false, false, false),
                FollowAsHub,
                false,
            ),
            // A counterpart not decided yet: parked until it is, with its probe.
            (
                facts(None, Worth, true, true, false, true),
                ParkOnCounterpart { probe: true },
                false,
            ),
            (
                facts(None, Worth, false, true, false, true),
                ParkOnCounterpart { probe: false },
                false,
            ),
            // ... not when a trap stops the page's links.
            (facts(None, Worth, true, true, true, true), Drop, false),
            // A counterpart decided, no hub: probed when it can be compared, else dropped.
            (
                facts(Some(false), Worth, true, true, false, true),
                Probe,
                false,
            ),
            (
                facts(Some(false), Worth, false, true, false, true),
                Drop,
                false,
            ),
            (
                facts(Some(false), Worth, true, false, false, true),
                Drop,
                false,
            ),
            (
                facts(Some(false), Worth, true, true, true, true),
                Drop,
                false,
            ),
        ];
        for (facts, fate, declined) in cases {
            assert_eq!(matched_link(facts), (fate, declined), "{facts:?}");
        }
    }
}
