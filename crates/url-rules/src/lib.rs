//! URL correspondences learned from pairs of URLs with the same content: which URL a page
//! at an unfetched URL copies, before it is fetched.
//!
//! The idea is DUST's (Bar-Yossef, Keidar, Schonfeld, "Do not crawl in the DUST: different
//! URLs with similar text", WWW 2007): the URLs of a site's duplicates follow rewrite rules
//! (a mirror's `/story/{id}/` for the origin's `/a/{id}.html`, a new release's host for the
//! old one's, a parameter whose value changes nothing), and once learned, a rule names a
//! link's counterpart before anything is fetched. Here the pairs come from a crawl's own
//! verdicts: every page the dedup stage judged a duplicate of a kept one teaches
//! [`Rule::learn`] a rule, the words the two URLs share (the longest common subsequence of
//! their path words and query values) becoming variables, and [`Rule::learn_prefix`] the
//! start of one URL put in place of the other's where the two end alike (a new release's
//! host for the old one's, a language's path prefix for another's), or where they do not end
//! alike [`Rule::learn_affix`] their starts and ends around the longest run they share (a
//! mirror's `/story/*/` for its origin's `/en/*.html`, one rule whatever a path's depth or
//! words, where templates are one per shape of path). [`RuleBook`] keeps each rule with
//! its support (pairs it was learned from) and what its predictions turned out to be
//! ([`RuleStats`]: checked, confirmed), and [`RuleBook::predict`] gives a URL's counterpart
//! by the most trusted rule that matches it. Two URLs of the same content copy each other:
//! [`RuleBook::learn_reversed`] teaches the rules a pair taught read the other way
//! ([`Rule::reversed`]: where neither side takes any value of its own), so a mirror crawled
//! side by side with its origin, its pairs found in both directions, is one correspondence.
//!
//! [`carry`] takes a link of one page to where its copy is, by what the pair alone makes
//! plain (the start of the path they do not share).
//!
//! [`Replay`] runs a crawl's decisions through a book in their order, each page predicted by
//! the rules learned before it and then taught: the rules a crawl's duplicates make plain,
//! with what each would have saved had it been trusted ([`RuleReport`]).
//!
//! Pure: no I/O, no clock. [`RuleBook::predict_by_scan`] is the plain reference its indexed
//! lookup is tested against.
//!
//! ```
//! use nearcrawl_url_rules::RuleBook;
//! use url::Url;
//!
//! let url = |s: &str| Url::parse(s).unwrap();
//! let mut book = RuleBook::new();
//! // The mirror's story 17 was judged a duplicate of the origin's article 17.
//! let rules = book.learn(
//!     &url("http://mirror.example/story/17/"),
//!     &url("http://news.example/a/17.html"),
//! );
//! let rule = rules[0];
//! assert_eq!(
//!     book.rule(rule).unwrap().to_string(),
//!     "http://mirror.example/story/{1}/ -> http://news.example/a/{1}.html"
//! );
//! // A link to story 42, not fetched yet: its counterpart is the origin's article 42.
//! let predicted = book.predict(&url("http://mirror.example/story/42/")).unwrap();
//! assert_eq!(predicted.counterpart.as_str(), "http://news.example/a/42.html");
//! // Fetched and judged a duplicate of it: the rule's prediction was right.
//! book.check(predicted.rule, true);
//! assert_eq!(book.stats(rule).unwrap().rate(), Some(1.0));
//! ```

mod book;
mod carry;
mod replay;
mod rules;
mod template;

pub use crate::book::{Prediction, RuleBook, RuleId, RuleStats};
pub use crate::carry::carry;
pub use crate::replay::{Observation, Replay, RuleReport};
pub use crate::rules::Rule;
