//! Sites found to copy others path for path, and where a link's counterpart is on them.

use std::collections::HashMap;

use url::Url;

/// Sites found to copy others path for path (a mirror, a new release of a manual): once a
/// page of site B is judged a duplicate of the page at the same path (and query) on site A, a
/// link to B whose counterpart on A is queued waits for that page to be decided, so that the
/// page at B is judged against it rather than first: fetched first, a copy would be kept as an
/// original and its links followed, and both sites crawled in full. One such duplicate is
/// enough: taking a site for a copy costs nothing but order.
#[derive(Debug, Default)]
pub(super) struct CopiedSites {
    /// Copying site -> the copied site's root URL (origins).
    copies: HashMap<String, Url>,
}

impl CopiedSites {
    /// `page` was judged a duplicate of `original`.
    pub(super) fn note(&mut self, page: &Url, original: &Url) {
        let b = page.origin().ascii_serialization();
        if b == original.origin().ascii_serialization()
            || page.path() != original.path()
            || page.query() != original.query()
        {
            return;
        }
        self.copies.entry(b).or_insert_with(|| {
            let mut root = original.clone();
            root.set_path("/");
            root.set_query(None);
            root
        });
    }

    /// A URL of the site `link`'s site copies, if it copies one (the place to build
    /// `link`'s counterpart on, with `Coordinator::counterpart`).
    pub(super) fn copied(&self, link: &Url) -> Option<&Url> {
        self.copies.get(&link.origin().ascii_serialization())
    }
}
