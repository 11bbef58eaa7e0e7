//! Sites: whether two URLs are on one, and the sites found to copy others path for path.

use std::collections::HashMap;

use url::Url;

/// Whether two URLs are on one site: same scheme, host and port.
pub fn same_site(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Sites found to copy others path for path (a mirror, a new release of a manual): once a
/// page of site B is judged a duplicate of the page at the same path (and query) on site A, a
/// link to B whose counterpart on A is queued waits for that page to be decided, so that the
/// page at B is judged against it rather than first: fetched first, a copy would be kept as an
/// original and its links followed, and both sites crawled in full. One such duplicate is
/// enough: taking a site for a copy costs nothing but order.
#[derive(Debug, Default)]
pub struct CopiedSites {
    /// Copying site -> the copied site's root URL (origins).
    copies: HashMap<String, Url>,
}

impl CopiedSites {
    /// `page` was judged a duplicate of `original`.
    pub fn note(&mut self, page: &Url, original: &Url) {
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
    /// `link`'s counterpart on, with `nearcrawl_url_rules::carry`).
    pub fn copied(&self, link: &Url) -> Option<&Url> {
        self.copies.get(&link.origin().ascii_serialization())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn a_site_copies_another_once_a_page_duplicates_the_one_at_its_path() {
        let cases: [(&str, &str, bool); 5] = [
            // Same path and query on another site: a copy.
            (
                "http://mirror.example/a/b.html",
                "http://origin.example/a/b.html",
                true,
            ),
            ("http://m.example/x?id=1", "http://o.example/x?id=1", true),
            // Another path, another query, or the same site: no evidence of a copied site.
            (
                "http://mirror.example/a/c.html",
                "http://origin.example/a/b.html",
                false,
            ),
            ("http://m.example/x?id=2", "http://o.example/x?id=1", false),
            (
                "http://origin.example/b.html",
                "http://origin.example/a/b.html",
                false,
            ),
        ];
        for (page, original, copies) in cases {
            let mut sites = CopiedSites::default();
            sites.note(&url(page), &url(original));
            let link = url(page).join("/elsewhere.html").unwrap();
            let copied = sites.copied(&link).map(Url::as_str);
            let expected = copies.then(|| url(original).join("/").unwrap());
            assert_eq!(
                copied,
                expected.as_ref().map(Url::as_str),
                "{page} {original}"
            );
        }
    }

    #[test]
    fn the_first_site_found_copied_stays() {
        let mut sites = CopiedSites::default();
        sites.note(&url("http://m.example/a"), &url("http://o.example/a"));
        sites.note(&url("http://m.example/b"), &url("http://p.example/b"));
        let copied = sites.copied(&url("http://m.example/c")).map(Url::as_str);
        assert_eq!(copied, Some("http://o.example/"));
        assert_eq!(sites.copied(&url("http://other.example/c")), None);
    }
}
