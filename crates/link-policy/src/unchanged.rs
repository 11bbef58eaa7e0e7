//! A page a cheap check found to have its counterpart's text, not downloaded: whether it is
//! fetched all the same for the links it may be alone in naming ([`unchanged_links`], which
//! asks the crawl about them through [`Named`], and [`unchanged_page`]).

use url::Url;

use crate::fate::{By, Fate, Until};

/// What the crawl knows of the pages a page's counterpart named first, and of where this
/// page's links to them would lead.
pub trait Named {
    /// A URL as the crawler holds it (its canonical form).
    type Url;
    /// What asking may fail with.
    type Error;
    /// `url` as the crawler holds it, if it can.
    fn canonical(&self, url: Url) -> Option<Self::Url>;
    /// What the URL `there` (on the counterpart's site) led to, in bytes: the page's length
    /// (or its redirect's target's), `undecided` while it is not decided, `None` when it led
    /// to no page.
    fn led_to(&self, there: &Self::Url, undecided: u64) -> Result<Option<u64>, Self::Error>;
    /// Whether the crawl would crawl `here` (on this page's site) and does not know it yet.
    fn unknown(&self, here: Self::Url) -> Result<bool, Self::Error>;
}

/// What a page at `at`, found to have the text of its `counterpart` (of `own` bytes, its
/// length or the counterpart's), is worth fetching for: of the URLs its counterpart named
/// first (`links`: path and query on its own site), those that led to a page there and
/// that, taken to this page's site ([`nearcrawl_url_rules::carry`]: the pair's paths say
/// where, a language's prefix for another's, else the same path), the crawl does not know
/// yet and would crawl. Their number, and the page's fate ([`unchanged_page`]: `min_yield`
/// times itself, or, once it waited (`deferred`), anything: that is the last word, and what
/// is still unnamed is named by nothing else). A counterpart's links that ended in an error
/// or were refused tell nothing about this site's.
pub fn unchanged_links<N: Named>(
    named: &N,
    at: &Url,
    counterpart: &Url,
    links: &[String],
    own: u64,
    (min_yield, deferred): (f64, bool),
) -> Result<(u32, Fate<N::Url>), N::Error> {
    let (mut unknown, mut worth) = (0u32, 0u64);
    for link in links {
        let Ok(there) = counterpart.join(link) else {
            continue;
        };
        let Some(here) = nearcrawl_url_rules::carry(&there, counterpart, at) else {
            continue;
        };
        let (Some(there), Some(here)) = (named.canonical(there), named.canonical(here)) else {
            continue;
        };
        let Some(weight) = named.led_to(&there, own)? else {
            continue;
        };
        if named.unknown(here)? {
            unknown += 1;
            worth = worth.saturating_add(weight);
        }
    }
    let min_yield = if deferred { 0.0 } else { min_yield };
    let fate = unchanged_page(unknown, worth, own, min_yield, !deferred);
    Ok((unknown, fate))
}

/// What a page found to have its counterpart's text, not downloaded, is worth fetching for:
/// a page not downloaded names no link, so when its counterpart was the first to name pages
/// (`unknown` of them, weighing `worth` bytes) whose counterparts here nothing has named yet,
/// those may be reached only through it. It is fetched for them ([`By::NamesNew`]) unless
/// they weigh less than `min_yield` times the page itself (`own` bytes), as a hub that led to
/// less than itself is not fetched again (`hub_min_yield`; 0: always): then it is
/// decided unchanged all the same ([`By::LedToLess`]). When it `may_wait` (not waited
/// before, and the crawl can hold it), it waits for the crawl's end instead ([`Until::End`]):
/// other pages of its site, still queued, may name them meanwhile (two releases crawled side
/// by side). Naming nothing new, it is decided unchanged ([`By::Unchanged`]).
pub fn unchanged_page<U>(
    unknown: u32,
    worth: u64,
    own: u64,
    min_yield: f64,
    may_wait: bool,
) -> Fate<U> {
    match unknown {
        0 => Fate::Skip { by: By::Unchanged },
        _ if (worth as f64) < min_yield * own as f64 => Fate::Skip { by: By::LedToLess },
        _ if may_wait => Fate::Wait {
            until: Until::End,
            probe: None,
            always: false,
        },
        _ => Fate::Fetch { by: By::NamesNew },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::convert::Infallible;

    use super::*;

    const UNCHANGED: Fate<Url> = Fate::Skip { by: By::Unchanged };
    const LED_TO_LESS: Fate<Url> = Fate::Skip { by: By::LedToLess };
    const FETCH_FOR_LINKS: Fate<Url> = Fate::Fetch { by: By::NamesNew };
    const WAIT: Fate<Url> = Fate::Wait {
        until: Until::End,
        probe: None,
        always: false,
    };

    /// What the crawl knows: what each URL of the counterpart's site led to (absent: nothing),
    /// and the URLs of this site it knows or would not crawl.
    struct Crawl {
        led_to: HashMap<&'static str, Option<u64>>,
        known_here: Vec<&'static str>,
    }

    impl Named for Crawl {
        type Url = Url;
        type Error = Infallible;
        fn canonical(&self, url: Url) -> Option<Url> {
            Some(url)
        }
        fn led_to(&self, there: &Url, undecided: u64) -> Result<Option<u64>, Infallible> {
            Ok(match self.led_to.get(there.as_str()) {
                Some(Some(0)) => Some(undecided),
                Some(led) => *led,
                None => None,
            })
        }
        fn unknown(&self, here: Url) -> Result<bool, Infallible> {
            Ok(!self.known_here.contains(&here.as_str()))
        }
    }

    #[test]
    fn an_unchanged_page_counts_what_only_it_may_name_here() {
        let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let (at, counterpart) = (
            url("http://new.test/doc/a.html"),
            url("http://old.test/doc/a.html"),
        );
        let links: Vec<String> = ["b.html", "c.html", "d.html", "/elsewhere.html"]
            .map(String::from)
            .to_vec();
        // The counterpart's links: b led to 4 kB, c is not decided yet (weighs as the page),
        // d led nowhere (an error), elsewhere to 1 kB.
        let crawl = |known_here: Vec<&'static str>| Crawl {
            led_to: HashMap::from([
                ("http://old.test/doc/b.html", Some(4_000)),
                ("http://old.test/doc/c.html", Some(0)),
                ("http://old.test/doc/d.html", None),
                ("http://old.test/elsewhere.html", Some(1_000)),
            ]),
            known_here,
        };
        // (what it protects, known here, own bytes, (min_yield, deferred)) -> (unknown, fate)
        let cases = [
            (
                "a page whose counterpart's pages are all named here is unchanged",
                vec![
                    "http://new.test/doc/b.html",
                    "http://new.test/doc/c.html",
                    "http://new.test/elsewhere.html",
                ],
                3_000,
                (1.0, false),
                (0, UNCHANGED),
            ),
            (
                "a chapter naming a larger one first waits for the crawl's end",
                vec![
                    "http://new.test/doc/c.html",
                    "http://new.test/elsewhere.html",
                ],
                3_000,
                (1.0, false),
                (1, WAIT),
            ),
            (
                "... and is fetched for it once it waited",
                vec![
                    "http://new.test/doc/c.html",
                    "http://new.test/elsewhere.html",
                ],
                3_000,
                (1.0, true),
                (1, FETCH_FOR_LINKS),
            ),
            (
                "a page not decided yet weighs as much as the page itself",
                vec![],
                2_900_000,
                (1.0, false),
                (3, WAIT),
            ),
            (
                "a 2.9 MB reference naming two short pages first is not fetched for them",
                vec!["http://new.test/doc/c.html"],
                2_900_000,
                (1.0, false),
                (2, LED_TO_LESS),
            ),
            (
                "... unless it waited: the last word, whatever it weighs",
                vec!["http://new.test/doc/c.html"],
                2_900_000,
                (1.0, true),
                (2, FETCH_FOR_LINKS),
            ),
        ];
        for (what, known, own, rule, want) in cases {
            let got = unchanged_links(&crawl(known), &at, &counterpart, &links, own, rule);
            let Ok(got) = got;
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn an_unchanged_page_is_fetched_for_links_worth_more_than_itself() {
        // (unknown links, their bytes, the page's bytes, hub_min_yield, may wait, decision)
        let cases = [
            (0, 0, 3_000, 1.0, false, UNCHANGED),
            (0, 1_000_000, 3_000, 1.0, false, UNCHANGED),
            (0, 1_000_000, 3_000, 1.0, true, UNCHANGED),
            // A chapter naming the next one, larger than itself.
            (1, 4_000, 3_000, 1.0, false, FETCH_FOR_LINKS),
            // ... which other pages may name before the crawl's end: it waits for that.
            (1, 4_000, 3_000, 1.0, true, WAIT),
            // A 2.9 MB reference naming two short pages first: never worth it, no wait.
            (2, 30_000, 2_900_000, 1.0, false, LED_TO_LESS),
            (2, 30_000, 2_900_000, 1.0, true, LED_TO_LESS),
            // Just under, and at, its own weight.
            (5, 2_999, 3_000, 1.0, false, LED_TO_LESS),
            (5, 3_000, 3_000, 1.0, false, FETCH_FOR_LINKS),
            // hub_min_yield 0: always fetched for them.
            (1, 0, 2_900_000, 0.0, false, FETCH_FOR_LINKS),
            // Its length unknown (0): fetched.
            (1, 0, 0, 1.0, false, FETCH_FOR_LINKS),
        ];
        for (unknown, worth, own, min_yield, may_wait, want) in cases {
            assert_eq!(
                unchanged_page(unknown, worth, own, min_yield, may_wait),
                want,
                "{unknown} {worth} {own} {min_yield} {may_wait}"
            );
        }
    }
}
