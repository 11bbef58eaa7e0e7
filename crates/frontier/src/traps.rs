//! Crawler traps that a URL alone gives away: paths that only ever get deeper, and paths that
//! repeat themselves (relative links resolved against their own page: `/a/b/a/b/a/b/`). Both
//! are rules Heritrix ships (`TooManyPathSegmentsDecideRule`, `PathologicalPathDecideRule`);
//! neither needs tuning per site, and real sites stay far from them.
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
}

impl Default for TrapConfig {
    /// 24 segments (real documentation trees stay under 12; Heritrix's default is 20), a
    /// segment or block seen 3 times in a row (Heritrix's `PathologicalPathDecideRule`
    /// allows 2), and links followed through at most 3 duplicate pages in a row.
    fn default() -> Self {
        TrapConfig {
            max_path_segments: 24,
            max_repeats: 2,
            max_duplicate_chain: 3,
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
mod tests {
    use super::*;

    fn check(path: &str) -> Result<(), Trap> {
        let url = CanonicalUrl::parse(&format!("http://example.org{path}")).unwrap();
        TrapRules::new(TrapConfig::default()).check(&url)
    }

    #[test]
    fn real_paths_pass() {
        for path in [
            "/",
            "/docs/3.11/library/os.path.html",
            "/manual/en/mod/mod_proxy_balancer.html",
            "/forum/thread/123456/page/2",
            "/a/a/b",                       // twice in a row is allowed
            "/cal/2026/11/23",              // the calendar is the pattern rules' business
            "/x/1/x/2/x/3",                 // similar, not repeated
            "/a/b/c/d/e/f/g/h/i/j/k/l/m/n", // deep but under 24
        ] {
            assert_eq!(check(path), Ok(()), "{path}");
        }
    }

    #[test]
    fn traps_are_named_by_their_rule() {
        let table: [(&str, Trap); 4] = [
            (
                "/a/a/a/page.html",
                Trap::RepeatedSegments {
                    block: "a".into(),
                    times: 3,
                },
            ),
            (
                "/docs/en/x/en/x/en/x/en/x/index.html",
                Trap::RepeatedSegments {
                    block: "en/x".into(),
                    times: 4,
                },
            ),
            (
                "/p/images/images/images/images/",
                Trap::RepeatedSegments {
                    block: "images".into(),
                    times: 4,
                },
            ),
            (
                &"/d".repeat(20),
                Trap::RepeatedSegments {
                    block: "d".into(),
                    times: 20,
                },
            ),
        ];
        for (path, trap) in table {
            assert_eq!(check(path), Err(trap), "{path}");
        }
        let deep: String = (0..25).map(|i| format!("/s{i}")).collect();
        assert_eq!(
            check(&deep),
            Err(Trap::TooDeep {
                segments: 25,
                max: 24
            })
        );
        let rules = TrapRules::new(TrapConfig::default());
        assert_eq!(rules.check_chain(3), Ok(()));
        assert_eq!(
            rules.check_chain(4),
            Err(Trap::DuplicateChain { length: 4, max: 3 })
        );
        let off = TrapRules::new(TrapConfig {
            max_path_segments: 0,
            max_repeats: 0,
            max_duplicate_chain: 0,
        });
        assert_eq!(off.check_chain(1000), Ok(()));
        let url = CanonicalUrl::parse("http://example.org/a/a/a/a/a").unwrap();
        assert_eq!(off.check(&url), Ok(()), "0 turns a rule off");
    }

    #[test]
    fn the_repetition_search_agrees_with_a_plain_one() {
        // Plain: every (width, start), counting repeats one block at a time.
        fn plain(segments: &[&str], at_least: usize) -> bool {
            (1..=segments.len()).any(|w| {
                (0..segments.len()).any(|s| {
                    let mut times = 0;
                    while s + (times + 1) * w <= segments.len()
                        && segments[s + times * w..s + (times + 1) * w] == segments[s..s + w]
                    {
                        times += 1;
                    }
                    times >= at_least
                })
            })
        }
        let alphabet = ["a", "b", "c"];
        for code in 0..3u32.pow(8) {
            let mut c = code;
            let segments: Vec<&str> = (0..8)
                .map(|_| {
                    let s = alphabet[(c % 3) as usize];
                    c /= 3;
                    s
                })
                .collect();
            for at_least in 2..=4 {
                assert_eq!(
                    longest_repetition(&segments, at_least).is_some(),
                    plain(&segments, at_least),
                    "{segments:?} {at_least}"
                );
            }
        }
    }
}
