//! Crawler traps: endless spaces of URLs a site generates (calendars, "next page", session
//! ids, relative links resolved against their own page). The rules, each a `[traps]` setting:
//!
//! - by the URL alone: paths that only ever get deeper (`max_path_segments`) and paths that
//!   repeat themselves, `/a/b/a/b/a/b/` (`max_repeats`); both are rules Heritrix ships
//!   (`TooManyPathSegmentsDecideRule`, `PathologicalPathDecideRule`);
//! - by the path of links that led to it: a URL is followed only while that path holds at
//!   most `max_pattern_on_path` pages of its [`UrlPattern`] (next month, next page:
//!   `/cal/2026/11` and `/cal/2026/12` are one pattern, `/cal/#/#`, and a path through month
//!   and day views alternately still counts each), and links are followed through at most
//!   `max_duplicate_chain` duplicate pages in a row;
//! - by budget, per host: at most `max_pages_per_pattern` URLs of one pattern queued, and
//!   `pattern_growth` more for every distinct page of the pattern fetched (a pattern of
//!   distinct pages is never capped: a site of 200,000 generated pages is crawled whole; a
//!   pattern of duplicates or near-empty pages earns nothing), and at most
//!   `max_duplicate_links` URLs queued from duplicates' links;
//! - by what pages say, per host: a page with too little text to be judged has its links
//!   followed only while at most `max_same_text` pages of its host said about the same
//!   ([`SameText`]: a path that branches below every page on letters, `/g/a/b/b/a/`, each
//!   page the same few words, escapes every rule above).
//!
//! Real documentation sites stay far from every default (docs/RELIABILITY.md has the
//! measurements).
//!
//! ```
//! use nearcrawl_frontier::{CanonicalUrl, Trap, TrapConfig, TrapRules};
//!
//! let rules = TrapRules::new(TrapConfig::default());
//! let fine = CanonicalUrl::parse("http://example.org/docs/3.11/library/os.path.html").unwrap();
//! assert_eq!(rules.check(&fine), Ok(()));
//! let looping = CanonicalUrl::parse("http://example.org/a/b/a/b/a/b/c").unwrap();
//! assert!(matches!(rules.check(&looping), Err(Trap::RepeatedSegments { .. })));
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::canonical::CanonicalUrl;

mod same_text;

pub use same_text::{SAME_TEXT_DISTANCE, SameText};

/// The `[traps]` section of a job configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrapConfig {
    /// A URL whose path has more segments than this is a trap (0: no limit).
    pub max_path_segments: u32,
    /// A segment, or a block of segments, repeated back to back more than this many times is
    /// a trap (`/a/a/a/` repeats `a` 3 times; 0: no limit).
    pub max_repeats: u32,
    /// A duplicate page reached through more duplicates in a row than this has none of its
    /// links followed (an endless calendar whose day pages copy each other; 0: no limit).
    pub max_duplicate_chain: u32,
    /// A URL is followed only while the path of links that leads to it, itself included,
    /// holds at most this many pages of its pattern (next month, next day, next page; 0: no
    /// limit).
    pub max_pattern_on_path: u32,
    /// At most this many URLs of one pattern are queued per host, and `pattern_growth` more
    /// for each distinct page of the pattern fetched; the rest are traps (0: no limit).
    pub max_pages_per_pattern: u32,
    /// URLs a pattern's budget grows by with every distinct page of it the crawl fetches
    /// (kept, not near-empty): a pattern whose pages keep being distinct is never capped (0:
    /// the budget is `max_pages_per_pattern` whatever the pages).
    pub pattern_growth: u32,
    /// At most this many URLs are queued per host from the links of duplicate pages; the
    /// rest are dropped as a trap (0: no limit).
    pub max_duplicate_links: u32,
    /// A page with too little text to be judged a duplicate has none of its links followed
    /// once this many pages of its host said about the same (their fingerprints within
    /// [`SAME_TEXT_DISTANCE`] bits; 0: no limit).
    pub max_same_text: u32,
}

impl Default for TrapConfig {
    /// 24 segments (real documentation trees stay under 12; Heritrix's default is 20), a
    /// segment or block seen 3 times in a row (Heritrix's `PathologicalPathDecideRule`
    /// allows 2), links followed through at most 3 duplicate pages in a row and 12 pages of
    /// one pattern on a path, 50,000 URLs per pattern and 16 more for each of its distinct
    /// pages, 10,000 from duplicates' links per host, and the links of 100 pages of a host
    /// with the same few words.
    fn default() -> Self {
        TrapConfig {
            max_path_segments: 24,
            max_repeats: 2,
            max_duplicate_chain: 3,
            max_pattern_on_path: 12,
            max_pages_per_pattern: 50_000,
            pattern_growth: 16,
            max_duplicate_links: 10_000,
            max_same_text: 100,
        }
    }
}

/// Which rule a URL broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trap {
    /// More path segments than `max_path_segments`.
    TooDeep {
        /// Segments in the path.
        segments: usize,
        /// The limit.
        max: u32,
    },
    /// A block of segments repeated back to back more than `max_repeats` times.
    RepeatedSegments {
        /// The repeated block, `a/b`.
        block: String,
        /// How many times in a row.
        times: usize,
    },
    /// A duplicate page at the end of more duplicates in a row than `max_duplicate_chain`.
    DuplicateChain {
        /// Duplicates in a row, this page included.
        length: u32,
        /// The limit.
        max: u32,
    },
    /// A link that would make more than `max_pattern_on_path` pages of its pattern on the
    /// path of links to it.
    PatternOnPath {
        /// The pattern.
        pattern: UrlPattern,
        /// The limit.
        max: u32,
    },
    /// The host has queued as many URLs of this pattern as its budget allows:
    /// `max_pages_per_pattern`, and `pattern_growth` more for each distinct page of it.
    PatternBudget {
        /// The pattern.
        pattern: UrlPattern,
        /// `max_pages_per_pattern`.
        max: u32,
        /// Distinct pages of the pattern fetched.
        distinct: u64,
        /// The budget they make.
        budget: u64,
    },
    /// The host has queued `max_duplicate_links` URLs from duplicates' links.
    DuplicateLinks {
        /// The limit.
        max: u32,
    },
    /// A page with too little text to judge, whose host had more than `max_same_text` pages
    /// saying about the same.
    SameText {
        /// Pages of the host that said about the same, this one included.
        pages: u32,
        /// The limit.
        max: u32,
    },
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trap::TooDeep { segments, max } => write!(
                f,
                "trap: path of {segments} segments (traps.max_path_segments = {max})"
            ),
            Trap::DuplicateChain { length, max } => write!(
                f,
                "trap: links of a duplicate reached through {length} duplicates in a row not \
                 followed (traps.max_duplicate_chain = {max})"
            ),
            Trap::PatternOnPath { pattern, max } => write!(
                f,
                "trap: links to {pattern} not followed past {max} pages of that pattern on \
                 the path of links (traps.max_pattern_on_path = {max})"
            ),
            Trap::PatternBudget {
                pattern,
                max,
                distinct,
                budget,
            } => write!(
                f,
                "trap: the host has {budget} URLs of the pattern {pattern} queued already, \
                 {distinct} of its pages distinct (traps.max_pages_per_pattern = {max}, and \
                 traps.pattern_growth more for each distinct page)"
            ),
            Trap::DuplicateLinks { max } => write!(
                f,
                "trap: the host has {max} URLs queued from duplicates' links already, no \
                 more are followed (traps.max_duplicate_links = {max})"
            ),
            Trap::SameText { pages, max } => write!(
                f,
                "trap: links of a page with too little text to judge not followed: {pages} \
                 pages of its host say about the same (traps.max_same_text = {max})"
            ),
            Trap::RepeatedSegments { block, times } => {
                write!(
                    f,
                    "trap: path repeats \"{block}/\" {times} times in a row (traps.max_repeats)"
                )
            }
        }
    }
}

/// The trap rules of a job.
#[derive(Debug, Clone)]
pub struct TrapRules {
    config: TrapConfig,
}

impl TrapRules {
    /// The rules of this configuration.
    pub fn new(config: TrapConfig) -> TrapRules {
        TrapRules { config }
    }

    /// Whether `url` looks like a trap, and by which rule.
    pub fn check(&self, url: &CanonicalUrl) -> Result<(), Trap> {
        let segments: Vec<&str> = url
            .as_url()
            .path()
            .split('/')
            .filter(|s| !s.is_empty())
            .collect();
        let max = self.config.max_path_segments;
        if max > 0 && segments.len() > max as usize {
            return Err(Trap::TooDeep {
                segments: segments.len(),
                max,
            });
        }
        let repeats = self.config.max_repeats as usize;
        if repeats > 0
            && let Some((block, times)) = longest_repetition(&segments, repeats + 1)
        {
            return Err(Trap::RepeatedSegments { block, times });
        }
        Ok(())
    }

    /// Whether the links of a duplicate page, the `length`-th duplicate in a row on the path
    /// that led to it, may still be followed.
    pub fn check_chain(&self, length: u32) -> Result<(), Trap> {
        let max = self.config.max_duplicate_chain;
        if max > 0 && length > max {
            return Err(Trap::DuplicateChain { length, max });
        }
        Ok(())
    }

    /// The patterns on the path to `link`, found on a page whose path held `path`: `path`
    /// with one more page of `link`'s pattern; an error if that passes
    /// `max_pattern_on_path`.
    pub fn check_path(&self, path: &PatternPath, link: &UrlPattern) -> Result<PatternPath, Trap> {
        let key = link.key();
        let mut next = path.clone();
        let count = next.add(key);
        let max = self.config.max_pattern_on_path;
        if max > 0 && u32::from(count) > max {
            return Err(Trap::PatternOnPath {
                pattern: link.clone(),
                max,
            });
        }
        Ok(next)
    }

    /// Whether a pattern's budget grows with its distinct pages (a budget, and
    /// `pattern_growth` above 0).
    pub fn grows(&self) -> bool {
        self.config.max_pages_per_pattern > 0 && self.config.pattern_growth > 0
    }

    /// Whether one more URL of `pattern` may be queued on a host that has `queued` of them
    /// and fetched `distinct` distinct pages of it.
    pub fn check_pattern_budget(
        &self,
        pattern: &UrlPattern,
        queued: u64,
        distinct: u64,
    ) -> Result<(), Trap> {
        let max = self.config.max_pages_per_pattern;
        let budget = u64::from(max)
            .saturating_add(u64::from(self.config.pattern_growth).saturating_mul(distinct));
        if max > 0 && queued >= budget {
            return Err(Trap::PatternBudget {
                pattern: pattern.clone(),
                max,
                distinct,
                budget,
            });
        }
        Ok(())
    }

    /// Whether one more URL may be queued from a duplicate's links on a host that has
    /// `queued` of them.
    pub fn check_duplicate_links(&self, queued: u64) -> Result<(), Trap> {
        let max = self.config.max_duplicate_links;
        if max > 0 && queued >= u64::from(max) {
            return Err(Trap::DuplicateLinks { max });
        }
        Ok(())
    }

    /// Pages of a host saying about the same after which a page of too little text to judge
    /// has its links not followed ([`SameText::note`]; 0: no limit).
    pub fn max_same_text(&self) -> u32 {
        self.config.max_same_text
    }
}

/// The shape of a URL, the key of the pattern rules: its host and path with every run of
/// digits written `#` and every longer token that mixes digits in (an id, a hash, a session)
/// written `*`, then the names of its query parameters, their values written `*`.
///
/// ```
/// use nearcrawl_frontier::{CanonicalUrl, UrlPattern};
///
/// let shape = |u: &str| UrlPattern::of(&CanonicalUrl::parse(u).unwrap()).to_string();
/// assert_eq!(shape("http://a.org/cal/2026/11"), "a.org/cal/#/#");
/// assert_eq!(shape("http://a.org/list?page=7&sort=date"), "a.org/list?page=*&sort=*");
/// assert_eq!(shape("http://a.org/s/8f3a2c91d0/x.html"), "a.org/s/*/x.html");
/// assert_eq!(shape("http://a.org/docs/3.11/os.html"), "a.org/docs/#.#/os.html");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UrlPattern(String);

impl UrlPattern {
    /// The pattern of `url`.
    pub fn of(url: &CanonicalUrl) -> UrlPattern {
        let url = url.as_url();
        let mut out = url.host_str().unwrap_or_default().to_string();
        if let Some(port) = url.port() {
            out.push(':');
            out.push_str(&port.to_string());
        }
        mask_ids(url.path(), &mut out);
        if let Some(query) = url.query() {
            for (i, pair) in query.split('&').enumerate() {
                out.push(if i == 0 { '?' } else { '&' });
                let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
                out.push_str(name);
                if !value.is_empty() {
                    out.push_str("=*");
                }
            }
        }
        UrlPattern(out)
    }

    /// The pattern as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the pattern can match more than one URL: it masks a number, an id or a query
    /// value. A pattern that masks nothing is one URL, and needs no budget.
    pub fn is_family(&self) -> bool {
        self.0.contains(['#', '*'])
    }

    /// A 32-bit key of the pattern, as [`PatternPath`] keeps it.
    pub fn key(&self) -> u32 {
        xxhash_rust::xxh3::xxh3_64(self.0.as_bytes()) as u32
    }
}

/// The patterns on a path of links and how many pages of each, the [`PATH_PATTERNS`] most
/// recently seen; what a queued URL carries for [`TrapRules::check_path`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatternPath(Vec<(u32, u16)>);

/// Patterns a [`PatternPath`] remembers: a calendar's year, month, week, day and event views
/// with room to spare.
pub const PATH_PATTERNS: usize = 8;

impl PatternPath {
    /// A path as stored: (pattern key, pages) pairs, least recent first.
    pub fn from_pairs(pairs: Vec<(u32, u16)>) -> PatternPath {
        PatternPath(pairs)
    }

    /// The stored form.
    pub fn into_pairs(self) -> Vec<(u32, u16)> {
        self.0
    }

    /// Counts one more page of pattern `key`, now the most recent; its new count.
    fn add(&mut self, key: u32) -> u16 {
        let count = match self.0.iter().position(|(k, _)| *k == key) {
            Some(at) => self.0.remove(at).1.saturating_add(1),
            None => 1,
        };
        self.0.push((key, count));
        if self.0.len() > PATH_PATTERNS {
            self.0.remove(0);
        }
        count
    }
}

impl fmt::Display for UrlPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Tokens this long or longer that hold a digit are ids: written `*` whole.
const ID_LEN: usize = 8;

/// Appends `text` to `out` with each alphanumeric token masked: `*` for an id (at least
/// [`ID_LEN`] characters, a digit among them), digit runs as `#` otherwise.
fn mask_ids(text: &str, out: &mut String) {
    let mut rest = text;
    while !rest.is_empty() {
        let token_len = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if token_len == 0 {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let token = &rest[..token_len];
        if token_len >= ID_LEN && token.bytes().any(|b| b.is_ascii_digit()) {
            out.push('*');
        } else {
            let mut in_digits = false;
            for c in token.chars() {
                if c.is_ascii_digit() {
                    if !in_digits {
                        out.push('#');
                    }
                    in_digits = true;
                } else {
                    out.push(c);
                    in_digits = false;
                }
            }
        }
        rest = &rest[token_len..];
    }
}

/// The first block of segments that occurs at least `at_least` times back to back, with how
/// many times it does.
fn longest_repetition(segments: &[&str], at_least: usize) -> Option<(String, usize)> {
    let n = segments.len();
    for width in 1..=n / at_least {
        for start in 0..=n - width * at_least {
            let block = &segments[start..start + width];
            let times = 1 + segments[start + width..]
                .chunks_exact(width)
                .take_while(|chunk| *chunk == block)
                .count();
            if times >= at_least {
                return Some((block.join("/"), times));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
