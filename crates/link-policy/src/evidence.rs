//! What a URL rule's fate is made of: the configuration ([`PolicyConfig`]), what the crawl
//! holds of a counterpart ([`Held`]), what is known of a copy ([`CopyFacts`]), and a rule's
//! evidence ([`Evidence`]).

use serde::{Deserialize, Serialize};
use url::Url;

use nearcrawl_url_rules::{RuleId, RuleStats};

/// What a trusted prediction is used for (`dedup.predict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Predict {
    /// Rules are neither learned nor asked: every link is fetched as before.
    Off,
    /// Rules are learned and checked against the pages fetched, never trusted: every link is
    /// fetched, its record says what was predicted and whether it was right.
    Check,
    /// A trusted rule's prediction is verified cheaply (HEAD, `Range`) against its
    /// counterpart before the page is fetched.
    #[default]
    Verify,
    /// A trusted rule's prediction is taken: the page is recorded as a duplicate of its
    /// counterpart without a request.
    Skip,
}

/// When a rule is trusted, and how often a trusted prediction is checked all the same.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PolicyConfig {
    /// What a trusted prediction is used for.
    pub predict: Predict,
    /// Pairs a rule must have been learned from.
    pub min_support: u32,
    /// The least [`RuleStats::trust`] (its checked predictions' rate, one right and one
    /// wrong assumed): 0.9 takes eight right of eight.
    pub min_trust: f64,
    /// One trusted prediction in this many is fetched whole to keep measuring its rule (0:
    /// none).
    pub explore: u32,
    /// The crawler probes (HEAD, `Range`) a link against its counterpart (`probe_links`):
    /// without probes, a prediction to verify or sample is only checked.
    #[serde(default = "probes_by_default")]
    pub probes: bool,
}

/// Probes are on unless a configuration says otherwise.
fn probes_by_default() -> bool {
    true
}

impl Default for PolicyConfig {
    fn default() -> PolicyConfig {
        PolicyConfig {
            predict: Predict::Verify,
            min_support: 3,
            min_trust: 0.9,
            explore: 8,
            probes: true,
        }
    }
}

/// Why a link's fate is what it is: the rule that named its counterpart, as it stood.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The rule's id in the policy's book.
    pub rule: RuleId,
    /// The rule, `from -> to`.
    pub rule_text: String,
    /// The page the rule says the link's page copies.
    pub counterpart: Url,
    /// What the crawl holds of it.
    pub held: Held,
    /// The rule's support and checked predictions when it was asked.
    pub stats: RuleStats,
}

impl Evidence {
    /// The lengths a page must have for its sample to be asked (a rule's sample's or its
    /// verification's): those the rule's copies have had, around the counterpart's
    /// ([`RuleStats::length_window`]).
    pub fn sample_window(&self) -> Option<(u64, u64)> {
        self.stats.length_window(self.held.length)
    }

    /// The counterpart as the crawl writes URLs (canonical), so that it compares with a
    /// record's `duplicate_of` and finds the counterpart's stored length.
    pub fn page(&self) -> String {
        nearcrawl_frontier::CanonicalUrl::from_url(self.counterpart.clone())
            .map_or_else(|_| self.counterpart.to_string(), |c| c.to_string())
    }
}

/// What is known of a copy a rule is learned from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyFacts {
    /// Whether it had about its original's length (`None`: not known).
    pub same_length: Option<bool>,
    /// Whether it linked to pages its original does not link to (`None`: not known, its
    /// links were not read).
    pub adds_pages: Option<bool>,
    /// Its length over its original's (`None`: not known).
    pub ratio: Option<f64>,
}

/// A page judged to have the content of another, as the policy learns rules from it (in a
/// crawl's journal, [`crate::Event::Learned`], and a shared job's log,
/// [`crate::RuleEvent::Learned`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyPair {
    /// The copy's URL, as rules name pages (no session parameter learned).
    pub copy: String,
    /// Its original's.
    pub original: String,
    /// What is known of the copy.
    pub facts: CopyFacts,
}

/// What the crawl holds of a page a link is predicted to copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    /// Its length in bytes, as its response declared it.
    pub length: u64,
    /// What a sample of a page of about its length would cost, in bytes, when a sample can
    /// be compared with it (the crawl kept the shingles of its text); `None` when not.
    pub sample_cost: Option<u64>,
    /// What a HEAD costs, in bytes.
    pub head_cost: u64,
}

impl CopyFacts {
    /// What its length says of a copy of `copy` bytes whose original had `original` (either
    /// unknown: nothing; an original of 0 bytes is a redirect's): about the same within
    /// `tolerance` of the original's, and their ratio.
    pub fn of_lengths(copy: Option<u64>, original: Option<u64>, tolerance: f64) -> CopyFacts {
        match (copy, original) {
            (Some(copy), Some(original)) if original > 0 => CopyFacts {
                same_length: Some(copy.abs_diff(original) as f64 <= tolerance * original as f64),
                adds_pages: None,
                ratio: Some(copy as f64 / original as f64),
            },
            _ => CopyFacts::default(),
        }
    }
}
