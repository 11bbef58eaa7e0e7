//! A page a cheap check found to have its counterpart's text, not downloaded: whether it is
//! fetched all the same for the links it may be alone in naming.

/// What a page found to have its counterpart's text, not downloaded, is worth fetching for:
/// a page not downloaded names no link, so when its counterpart was the first to name pages
/// (`unknown` of them, weighing `worth` bytes) whose counterparts here nothing has named yet,
/// those may be reached only through it. It is fetched for them unless they weigh less than
/// `min_yield` times the page itself (`own` bytes), as a hub that led to less than itself is
/// not fetched again (`dedup.hub_min_yield`; 0: always). When it `may_wait` (not waited
/// before, and the crawl can hold it), it waits for the crawl's end instead: other pages of
/// its site, still queued, may name them meanwhile (two releases crawled side by side).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnchangedPage {
    /// Decided unchanged: nothing it might name is new here.
    Unchanged,
    /// Fetched whole for its own links.
    FetchForLinks,
    /// Decided unchanged all the same: what it might name weighs less than itself.
    LedToLess,
    /// Decided at the crawl's end, asked again then: what it might name may be named by
    /// other pages meanwhile.
    Wait,
}

/// See [`UnchangedPage`].
pub fn unchanged_page(
    unknown: u32,
    worth: u64,
    own: u64,
    min_yield: f64,
    may_wait: bool,
) -> UnchangedPage {
    match unknown {
        0 => UnchangedPage::Unchanged,
        _ if (worth as f64) < min_yield * own as f64 => UnchangedPage::LedToLess,
        _ if may_wait => UnchangedPage::Wait,
        _ => UnchangedPage::FetchForLinks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unchanged_page_is_fetched_for_links_worth_more_than_itself() {
        use UnchangedPage::*;
        // (unknown links, their bytes, the page's bytes, hub_min_yield, may wait, decision)
        let cases = [
            (0, 0, 3_000, 1.0, false, Unchanged),
            (0, 1_000_000, 3_000, 1.0, false, Unchanged),
            (0, 1_000_000, 3_000, 1.0, true, Unchanged),
            // A chapter naming the next one, larger than itself.
            (1, 4_000, 3_000, 1.0, false, FetchForLinks),
            // ... which other pages may name before the crawl's end: it waits for that.
            (1, 4_000, 3_000, 1.0, true, Wait),
            // A 2.9 MB reference naming two short pages first: never worth it, no wait.
            (2, 30_000, 2_900_000, 1.0, false, LedToLess),
            (2, 30_000, 2_900_000, 1.0, true, LedToLess),
            // Just under, and at, its own weight.
            (5, 2_999, 3_000, 1.0, false, LedToLess),
            (5, 3_000, 3_000, 1.0, false, FetchForLinks),
            // hub_min_yield 0: always fetched for them.
            (1, 0, 2_900_000, 0.0, false, FetchForLinks),
            // Its length unknown (0): fetched.
            (1, 0, 0, 1.0, false, FetchForLinks),
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
