//! Every decision about a link's fate, decided from what the crawl has learned about which
//! URLs copy which. Pure: no I/O, no clock; what the crawl holds or has decided is asked
//! through small traits ([`Crawl`], [`Known`], [`Named`]) or passed in.
//!
//! Every answer is one [`Fate`] (`fate.rs`): fetched whole; checked cheaply against a
//! counterpart (its HEAD's length, a `Range` sample), fetched only when that says it
//! differs; waiting until a page, a hub's links, a mirror's samples or the crawl's end is
//! decided; skipped as a duplicate of its counterpart; or dropped. Each names what decided it
//! ([`By`]: a mechanism, or a URL rule with its [`Evidence`]). One file per moment a link's
//! fate is decided:
//!
//! - when the link is found (`found.rs`, [`found_link`]): a duplicate's link matched with its
//!   original's (`matched.rs`, [`matched_link`]); the sites found to copy others, path for
//!   path (`sites.rs`, [`CopiedSites`]) or as a URL rule maps their pages, and the mirrors
//!   sampled (`mirrors.rs`, [`Mirrors`]), whose state the policy owns;
//! - when a link fetched as new is asked of the URL rules (`rules.rs`, [`LinkPolicy::fate`],
//!   below; what a rule's evidence is made of in `evidence.rs`);
//! - when a decision is applied: which keys it releases the parked links of, in order, and
//!   what each waited for was decided to be (`decider/decided.rs`, [`Decider::decided`]);
//! - when what a waiting link waited for is decided (`released.rs`, [`released_link`];
//!   [`Decider::released`]);
//! - when a cheap check's HEAD answered (`checks.rs`, [`Decider::after_head`]): sampled,
//!   unchanged by its length, or fetched;
//! - when a cheap check found a page unchanged (`unchanged.rs`, [`unchanged_links`]).
//! - when the links a hub queued are decided, what they count for it (`hubs.rs`,
//!   [`HubRule::credit`]).
//!
//! What the crawl learns as it goes is [`Learned`] (`learned.rs`): the URL rules its
//! duplicates teach and the session parameters, changed only by [`RuleEvent`]s, and when the
//! crawler's store keeps them again. A shared job's workers append their events to the job's
//! log and replay it, each its own included (`rule_log.rs`: the log is behind [`RuleLog`]).
//!
//! The crawler holds one [`Decider`] (`decider.rs`, `decider/learning.rs`): all the state
//! above (what was learned, the sites copied, the mirrors sampled) and the link settings
//! (`settings.rs`, [`LinkSettings`]); it asks it every fate and reads no link setting itself.
//! A crawl may journal the policy's input events (`journal.rs`, [`Event`]: what the crawl
//! knew, its answers to what the policy asked, the fate carried out), and [`Replay`]
//! (`replay.rs`) feeds a journal to the policy alone and names where it would decide
//! otherwise.
//!
//! Every page the dedup stage judges a duplicate of a kept page teaches a URL rule
//! ([`nearcrawl_url_rules`]: a mirror's `/story/{1}/` for the origin's `/a/{1}.html`, a new
//! release's host for the old one's). A link discovered afterwards, on a unique page as on a
//! duplicate, gets the counterpart its most trusted rule names, and [`LinkPolicy::fate`]
//! decides what that is worth ([`decide`], a pure function of the rule's record, the
//! configuration and the exploration turn):
//!
//! - fetched as new ([`By::New`]): no rule names a counterpart the crawl holds.
//! - fetched whole by the rule ([`By::Rule`]): a rule names one, but is not trusted yet (too
//!   few pairs, too few predictions checked, or too many wrong), or this is one of the
//!   predictions fetched whole to keep measuring a trusted rule (`explore`): its verdict
//!   checks the rule ([`LinkPolicy::checked`]).
//! - checked by [`How::Verify`]: trusted, `predict = "verify"`, and its copies keep their
//!   originals' length: asked cheaply first against its counterpart (the crawler's HEAD, then
//!   `Range` for a large page), fetched whole only when that says it changed. A large page
//!   of a length the rule's copies never had (once any is known) is fetched whole, not
//!   sampled: longer than its copies have been, it may hold new text and links.
//! - skipped: trusted, `predict = "skip"`: recorded as a duplicate of its counterpart without
//!   a request.
//! - checked by [`How::Sample`]: not trusted to be right (a language's host whose
//!   untranslated pages keep the English text, one in five or four in five), or trusted but
//!   its copies' lengths are not their originals', yet worth a probe: its HEAD first, and
//!   when the length is one the rule's copies have had ([`RuleStats::length_window`]), a few
//!   parts of the page asked with `Range` and their text compared with the counterpart's;
//!   fetched whole unless both agree. Worth it when the bytes a prediction is expected to
//!   save (the rule's rate times the counterpart's length, less the sample) exceed the
//!   HEAD's ([`Held`]).
//!
//! A page a cheap check found to have its counterpart's text is not downloaded, so it names
//! no link; [`unchanged_page`] decides whether it is fetched all the same for the pages it
//! may be alone in naming (a crawler asks only for URLs a page, a seed, a sitemap or a
//! redirect named, never for its counterpart's links taken to its site).
//!
//! A rule's [`Evidence`] (the rule, its support and checked predictions, the counterpart) is
//! recorded with the link's page; what the crawl holds is asked through [`Known`].
//!
//! ```
//! use nearcrawl_link_policy::{By, CopyFacts, Fate, Held, LinkPolicy, PolicyConfig, Predict};
//! use url::Url;
//!
//! let url = |s: &str| Url::parse(s).unwrap();
//! let config = PolicyConfig {
//!     predict: Predict::Skip,
//!     min_support: 2,
//!     min_trust: 0.75,
//!     explore: 0,
//!     probes: true,
//! };
//! let mut policy = LinkPolicy::new(config);
//! // Two of the mirror's stories were judged copies of the origin's articles.
//! for n in [1, 2] {
//!     policy.learn(
//!         &url(&format!("http://m.example/story/{n}/")),
//!         &url(&format!("http://o.example/a/{n}.html")),
//!         CopyFacts { same_length: Some(false), adds_pages: Some(false), ratio: None },
//!     );
//! }
//! // The crawl holds every article of the origin (of 2 kB: too short to sample).
//! let known = |u: &Url| {
//!     let held = Held { length: 2_000, sample_cost: None, head_cost: 256 };
//!     (u.host_str() == Some("o.example")).then_some(held)
//! };
//! // A third story: fetched to check the rule, which has predicted nothing yet.
//! let fate = policy.fate(&url("http://m.example/story/3/"), &known);
//! let Fate::Fetch { by: By::Rule(evidence) } = fate else {
//!     panic!("fetched to check the rule first");
//! };
//! assert_eq!(evidence.counterpart.as_str(), "http://o.example/a/3.html");
//! policy.checked(evidence.rule, true);
//! policy.checked(evidence.rule, true);
//! // Right twice: trusted, the next story is not requested at all.
//! let fate = policy.fate(&url("http://m.example/story/4/"), &known);
//! assert!(matches!(fate, Fate::Skip { by: By::Rule(_) }));
//! // A page of the mirror's own, with no counterpart: fetched as new.
//! let fate = policy.fate(&url("http://m.example/about"), &known);
//! assert_eq!(fate, Fate::Fetch { by: By::New });
//! ```

use serde::{Deserialize, Serialize};

pub use crate::checks::{
    AfterHead, Head, SAMPLE_MAX_GROWTH, SAMPLE_MIN_LENGTH, SAMPLE_MIN_LENGTH_RATIO,
    comparable_lengths, worth_sampling,
};
pub use crate::decider::{DecidedUrl, Decider, PageFacts};
pub use crate::evidence::{CopyFacts, CopyPair, Evidence, Held, PolicyConfig, Predict};
pub use crate::fate::{By, Fate, How, Until};
pub use crate::found::{
    Crawl, Followed, FoundOn, LearnedUrls, Parking, carried, follows, found_link, parking_answered,
};
pub use crate::hubs::{Credit, HubRule, HubYield, hub_links_key};
pub use crate::journal::{Answer, Event, FoundEvent};
pub use crate::keys::{Key, key};
pub use crate::learned::{Learned, RuleEvent};
pub use crate::matched::{HubWorth, Matched, follows_hub, matched_link};
pub use crate::mirrors::{Budget, Cost, Drawn, MIRRORS, Mirrors, draw};
pub use crate::released::{Parked, Waited, WaitedFor, decided_hub, released_link};
pub use crate::replay::{Diverged, Replay};
pub use crate::rule_log::RuleLog;
pub use crate::rules::{Known, LinkPolicy, decide};
pub use crate::settings::{LinkSettings, Tuning};
pub use crate::sites::{CopiedSites, same_site};
pub use crate::unchanged::{Named, unchanged_links, unchanged_page};
pub use nearcrawl_url_rules::{RuleBook, RuleId, RuleStats};

mod checks;
mod decider;
mod evidence;
mod fate;
mod found;
mod hubs;
mod journal;
mod keys;
mod learned;
mod matched;
mod mirrors;
mod released;
mod replay;
mod rule_log;
mod rules;
mod settings;
mod sites;
mod unchanged;

/// How a duplicate's links are matched with its original's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkMatch {
    /// By where they lead, relative to each site: the two sites share their URL scheme (most
    /// links with the same anchor text lead to the same path), so a link that leads to a path
    /// the original's links do not is new, whatever its text (a "next" arrow to a new part).
    Target,
    /// By anchor text: the sites' URL schemes differ (a mirror: the same texts lead to other
    /// paths), so only a link whose anchor text none of the original's links has is new.
    Anchor,
}
