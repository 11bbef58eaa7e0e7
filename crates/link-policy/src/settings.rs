//! The settings a link's fate turns on ([`LinkSettings`]).

use serde::{Deserialize, Serialize};

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
