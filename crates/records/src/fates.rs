//! What became of a page's links ([`LinkFates`]): each link the page named counted once,
//! under the fate the crawl chose for it, in one field of the page's record.

use serde::{Deserialize, Serialize};

/// A record's `link_fates`: what became of the links the page named (`outlinks` counts
/// them), each under one fate. Absent when the page's links were not followed (a page that
/// failed, a file that is no page, a page decided without a download). Counts of none are
/// left out, so `{"queued": 12, "parked": 3}` is a page that queued 12 links and parked 3.
///
/// Why a page itself was fetched, probed or skipped is in its `prediction` (the URL rule,
/// its support and record when asked, the fate it chose and whether it was right) and its
/// `probe` (the check made and its answer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkFates {
    /// Queued to be fetched: new and in scope, or a duplicate's link followed all the same
    /// (`via_hub` and `mirror_followed` count among these). A redirect
    /// queues its target here.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queued: u32,
    /// Queued to be asked with HEAD (and a sample) against the counterpart they copy, and
    /// fetched only if that says they changed (`dedup.probe_links`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub probed: u32,
    /// Parked until the page they depend on, queued or being fetched, is decided (that
    /// page's `released` says what became of them): a duplicate's links to where its
    /// original's lead, followed then if that page led to new pages (a hub) and dropped if
    /// not; links to a site that copies another path for path, followed then whatever that
    /// page is, so that the copy is judged against it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub parked: u32,
    /// Not queued because the page is a duplicate: new in-scope URLs its original's links
    /// lead to as well (matched as `matched_by` says), or past the duplicate-chain and
    /// duplicate-links trap rules (named in the record's `trap`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u32,
    /// Not queued because a pattern trap rule (named in the record's `trap`: next month,
    /// next page, a host's budget of a pattern) stopped them; left unseen for other paths to
    /// reach.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trapped: u32,
    /// Past `links.max_per_page`: not read.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub over_cap: u32,
    /// Focused crawls: links to URLs already queued that this page moved up (it gave them a
    /// better priority than the page that queued them; their records name it as `parent`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub raised: u32,
    /// Of `queued`: a duplicate's links followed although its original links to the same
    /// place, because that place on the original's site led to new pages (a hub,
    /// `dedup.hub_min_links`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub via_hub: u32,
    /// Of `probed`: links to the counterpart of a hub, probed instead of followed: what the
    /// hub led to weighed less than `dedup.hub_min_yield` times itself (a large table listing
    /// small pages), or, in a job shared through Redis, another worker counted it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hubs_declined: u32,
    /// Of `queued`: a mirror's copy's links whose text its original has, followed because a
    /// sample of the mirror's copies added a page of its own (until then they are `parked`
    /// on the pair of sites, candidates for its samples: [`crate::Released::sampled`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mirror_followed: u32,
    /// A duplicate: how its links were matched with its original's (`duplicate_outlinks =
    /// "new"`): `target` (where they lead, relative to each site) or `anchor` (by anchor
    /// text: the two sites' URL schemes differ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<nearcrawl_link_policy::LinkMatch>,
}

/// Whether a count is zero (left out of a record).
fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_none_are_left_out_and_read_back_as_zero() {
        let fates = LinkFates {
            queued: 12,
            parked: 3,
            matched_by: Some(nearcrawl_link_policy::LinkMatch::Target),
            ..LinkFates::default()
        };
        let json = serde_json::to_string(&fates).unwrap();
        assert_eq!(json, r#"{"queued":12,"parked":3,"matched_by":"target"}"#);
        assert_eq!(serde_json::from_str::<LinkFates>(&json).unwrap(), fates);
        assert_eq!(
            serde_json::from_str::<LinkFates>("{}").unwrap(),
            LinkFates::default()
        );
    }
}
