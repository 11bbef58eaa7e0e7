//! What a record says of the link policy's prediction of a page ([`Prediction`]) and of the
//! cheap checks made before it was fetched ([`Probe`], [`Sample`]).

use serde::{Deserialize, Serialize};

/// What the link policy made of a link's predicted counterpart (`dedup.predict`): the URL
/// rule that named it, as the rule stood when the link was found, and, once the page was
/// decided, whether the prediction was right.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Prediction {
    /// What the prediction is used for, as the crawl carries it out (a queued URL's):
    /// `check` (fetched whole, its verdict checking the rule), `verify` or `sample` (checked
    /// cheaply against the counterpart first, fetched only if changed) or `skip` (not
    /// requested). Left out of a record, whose `fate` says it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fate: String,
    /// The rule, `from -> to`, and its id in the crawl's rule book.
    pub rule: String,
    /// See `rule`.
    pub rule_id: u32,
    /// The page the rule says this one copies.
    pub counterpart: String,
    /// Pairs the rule was learned from, when it was asked ...
    pub support: u32,
    /// ... its predictions checked by then ...
    pub checked: u32,
    /// ... and of those, right.
    pub confirmed: u32,
    /// Once the page was decided: whether it was a duplicate of `counterpart` (absent: not
    /// known, e.g. the page failed, or was not requested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right: Option<bool>,
}

impl Prediction {
    /// What a link's record and queue entry keep of the evidence of a `fate` (`check`,
    /// `verify`, `sample`, `skip`) a URL rule decided.
    pub fn of(fate: &str, evidence: &nearcrawl_link_policy::Evidence) -> Prediction {
        Prediction {
            fate: fate.to_string(),
            rule: evidence.rule_text.clone(),
            rule_id: evidence.rule.number(),
            counterpart: evidence.page(),
            support: evidence.stats.support,
            checked: evidence.stats.checked,
            confirmed: evidence.stats.confirmed,
            right: None,
        }
    }
}

/// A probe of a URL that a duplicate links to where its original links to `counterpart`
/// (relative to each site): a HEAD request whose `Content-Length` is compared with the one
/// the counterpart's response declared. About the same length (within the crawl's
/// tolerance, a release's changed version string or date): the page is taken to be unchanged
/// and is not fetched; anything else (another length, none, another status, a failure): it
/// is fetched. While the counterpart is not fetched yet (its release is crawled at the same
/// time), the probe waits, asked again later, a few times at most.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Probe {
    /// The original's link target this URL corresponds to.
    pub counterpart: String,
    /// The `Content-Length` the counterpart's response declared, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterpart_length: Option<u64>,
    /// Times the probe waited for its counterpart to be fetched.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waits: u8,
    /// Set once the HEAD was answered: its status (absent when it failed) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// ... the `Content-Length` it declared ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    /// ... and the bytes it received (every time it was asked; 0 until then).
    #[serde(default)]
    pub bytes: u64,
    /// The HEAD was asked (its answer is in the fields above).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asked: bool,
    /// A URL rule's sample (its prediction's fate `sample`): the lengths its copies have had
    /// for a counterpart of this one's length (`RuleStats::length_window`). A HEAD that
    /// finds one of them has parts of the page asked with `Range` (`sample`), whatever its
    /// length; any other answer has it fetched whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<(u64, u64)>,
    /// A URL rule's verification (its prediction's fate `verify`): the lengths its copies
    /// have had, when known. A HEAD that finds another length has the page fetched whole,
    /// never sampled: it may hold text and links its counterpart does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<(u64, u64)>,
    /// When the HEAD said the length changed, on a large page (or one in a URL rule's
    /// `window`): parts of it asked with `Range`, their text compared with the
    /// counterpart's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<Sample>,
    /// The probe found the counterpart's text, but this many of the counterpart's links,
    /// taken to this site, were named by no page yet: the page was fetched whole for its own
    /// links, since a page not downloaded names none (0: not so).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub links_unknown: u32,
    /// With `links_unknown`: the pages those links led to on the counterpart's site weigh
    /// less than the page itself (`hub_min_yield` times its length), so it was not
    /// fetched for them, as a hub that led to less than itself is not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub led_to_less: bool,
    /// The probe found the counterpart's text but `links_unknown` was not 0 then: rather than
    /// fetching the page for links that other pages may yet name (the two sites crawled side
    /// by side, this one's own table of contents still queued), its decision waited for the
    /// crawl's end, when it was probed again and decided (`links_unknown` counts what was
    /// still unnamed then).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferred: bool,
}

/// A probe's second step (see `nearcrawl_dedup::check_sample`): parts of the page asked with
/// `Range`, their text compared with the counterpart's shingles (`nearcrawl_store::Declared::shingles`). Its
/// bytes count in its probe's.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Sample {
    /// The parts were asked (the answer is in the fields below).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asked: bool,
    /// The answer's status (absent when the request failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Parts received ...
    #[serde(default)]
    pub parts: u8,
    /// ... with enough text to tell ...
    #[serde(default)]
    pub informative: u8,
    /// ... and whose text the counterpart has.
    #[serde(default)]
    pub matched: u8,
}

/// Whether a count is zero (left out of a record).
fn is_zero<N: Default + PartialEq>(n: &N) -> bool {
    *n == N::default()
}
