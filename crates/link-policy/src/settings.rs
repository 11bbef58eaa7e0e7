//! The values a link's fate turns on: [`LinkSettings`] (hubs, mirrors' samples, probes) and,
//! with the URL rules' trust, [`Tuning`], fixed at the values measured on the real webs
//! (docs/QUALITY.md, item 32). A job file sets none of them since 2026-12-07; the evaluation
//! harness varies them for its measurements (`nearcrawl-lab quality --tune KEY=VALUE`).

use serde::{Deserialize, Serialize};

/// The settings a link's fate turns on, apart from the URL rules' ([`crate::PolicyConfig`]).
/// The default has every mechanism off; a crawl runs with [`Tuning::default`]'s.
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

/// Every fixed value of the link policy: its [`LinkSettings`] and when a URL rule is trusted.
/// The default is what a crawl runs with, each value measured (docs/QUALITY.md, item 32 for
/// the held-out figures).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    /// Hubs, mirrors' samples and probes.
    pub links: LinkSettings,
    /// Pairs a rule must have been learned from before it is trusted.
    pub min_support: u32,
    /// The least trust (right + 1 over checked + 2) a rule must have.
    pub min_trust: f64,
}

/// The link settings a crawl runs with, each measured (docs/QUALITY.md).
pub(crate) const MEASURED: LinkSettings = LinkSettings {
    // What keeps coverage at 1.000 on `llvm-14-15` (item 28).
    hub_min_links: 3,
    // Chosen on `llvm-14-15` (item 15).
    hub_min_yield: 1.0,
    // A mirror adding a page to one copy in five goes unnoticed one time in six (0.8^8)
    // (item 16).
    mirror_samples: 8,
    // A language's fourteen chapters sampled four times, not eight (item 31).
    mirror_sample_share: 0.25,
    // Coverage 0.996 to 1.000 on `llvm-15-16` (item 11).
    probe_links: true,
    // Measured on `llvm-14-15` (item 11).
    probe_tolerance: 0.02,
    // Without, the releases save 0.6 to 0.7 of the oracle instead of 1.05 to 1.23 (item 20).
    probe_samples: true,
};

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            links: MEASURED,
            // Item 19.
            min_support: 3,
            // Eight right of eight (item 18).
            min_trust: 0.9,
        }
    }
}

impl Tuning {
    /// The names [`Tuning::set`] takes, each the job file's former `[dedup]` key.
    pub const KEYS: [&'static str; 9] = [
        "hub_min_links",
        "hub_min_yield",
        "mirror_samples",
        "mirror_sample_share",
        "probe_links",
        "probe_tolerance",
        "probe_samples",
        "predict_min_support",
        "predict_min_trust",
    ];

    /// Sets the value named `key` (one of [`Tuning::KEYS`]) to `value`, for a measurement;
    /// an unknown key or a value of the wrong kind is an error naming it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        fn parse<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, String> {
            value
                .parse()
                .map_err(|_| format!("{key} = {value:?}: not a value {key} takes"))
        }
        match key {
            "hub_min_links" => self.links.hub_min_links = parse(key, value)?,
            "hub_min_yield" => self.links.hub_min_yield = parse(key, value)?,
            "mirror_samples" => self.links.mirror_samples = parse(key, value)?,
            "mirror_sample_share" => self.links.mirror_sample_share = parse(key, value)?,
            "probe_links" => self.links.probe_links = parse(key, value)?,
            "probe_tolerance" => self.links.probe_tolerance = parse(key, value)?,
            "probe_samples" => self.links.probe_samples = parse(key, value)?,
            "predict_min_support" => self.min_support = parse(key, value)?,
            "predict_min_trust" => self.min_trust = parse(key, value)?,
            _ => {
                return Err(format!(
                    "{key}: no such value of the link policy (one of {})",
                    Tuning::KEYS.join(", ")
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measurement_sets_a_value_by_its_former_key_and_a_bad_one_is_named() {
        let mut tuning = Tuning::default();
        tuning.set("hub_min_links", "0").unwrap();
        tuning.set("predict_min_trust", "0.5").unwrap();
        tuning.set("probe_samples", "false").unwrap();
        assert_eq!((tuning.links.hub_min_links, tuning.min_trust), (0, 0.5));
        assert!(!tuning.links.probe_samples);
        let err = tuning.set("hub_min_links", "many").unwrap_err();
        assert!(err.contains("hub_min_links = \"many\""), "{err}");
        let err = tuning.set("duplicate_outlinks", "skip").unwrap_err();
        assert!(
            err.starts_with("duplicate_outlinks: no such value"),
            "{err}"
        );
        for key in Tuning::KEYS {
            assert!(
                Tuning::default().set(key, "x").is_err(),
                "{key} takes no \"x\""
            );
        }
    }
}
