//! The names a record gives: the decision on a URL ([`Verdict`]), how a page of a recrawl's
//! previous job came back ([`Change`]), and what became of the links parked on a URL
//! ([`Released`]).

use serde::{Deserialize, Serialize};

/// How a page of the previous job came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// 304: the server holds it unchanged; nothing downloaded.
    NotModified,
    /// 200 with the same payload (a server without validators, or one that ignored them).
    Unchanged,
    /// 200 with another payload (`change_distance`: its simhash distance to the previous).
    Changed,
    /// 404 or 410.
    Gone,
    /// A redirect.
    Moved,
}

impl Change {
    /// Every class, in report order.
    pub const ALL: [Change; 5] = [
        Change::NotModified,
        Change::Unchanged,
        Change::Changed,
        Change::Gone,
        Change::Moved,
    ];

    /// The name used in records and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::NotModified => "not-modified",
            Change::Unchanged => "unchanged",
            Change::Changed => "changed",
            Change::Gone => "gone",
            Change::Moved => "moved",
        }
    }
}

/// What was decided about a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Fetched, HTML or text, not a duplicate: indexed, outlinks followed.
    Unique,
    /// Same normalised main text as an earlier page.
    Exact,
    /// Near-duplicate of an earlier page.
    Near,
    /// robots.txt disallows it (or was unavailable until the host was given up).
    RobotsDisallowed,
    /// Outside the job's scope (host, pattern, depth, per-host limit, private address).
    OutOfScope,
    /// Fetched, but not HTML or text.
    NotHtml,
    /// No usable response: network error, HTTP error status, too many redirects.
    Error,
    /// A 3xx response; the target is queued as its own URL.
    Redirect,
    /// A sitemap (from robots.txt or a sitemap index); its URLs are queued.
    Sitemap,
    /// Not fetched: the URL gives a crawler trap away (`traps` rules; the rule in `error`).
    Trap,
    /// Not fetched: a duplicate linked here where its original links to `duplicate_of`
    /// (relative to each site), and a HEAD request found the same `Content-Length` as that
    /// page's (`probe`; `probe_links`).
    Unchanged,
    /// Not requested: a trusted URL rule learned from this crawl's duplicates says the page
    /// copies `duplicate_of`, a page the crawl holds (`prediction`; `dedup.predict = "skip"`).
    Predicted,
    /// A recrawl: asked again with its previous capture's validators, the server answered
    /// 304. Nothing downloaded; the previous capture stands (`change`: `not-modified`).
    NotModified,
}

impl Verdict {
    /// Every verdict, in report order.
    pub const ALL: [Verdict; 13] = [
        Verdict::Unique,
        Verdict::Exact,
        Verdict::Near,
        Verdict::RobotsDisallowed,
        Verdict::OutOfScope,
        Verdict::NotHtml,
        Verdict::Error,
        Verdict::Redirect,
        Verdict::Sitemap,
        Verdict::Trap,
        Verdict::Unchanged,
        Verdict::Predicted,
        Verdict::NotModified,
    ];

    /// The name used in records, reports and WARC metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Unique => "unique",
            Verdict::Exact => "exact",
            Verdict::Near => "near",
            Verdict::RobotsDisallowed => "robots-disallowed",
            Verdict::OutOfScope => "out-of-scope",
            Verdict::NotHtml => "not-html",
            Verdict::Error => "error",
            Verdict::Redirect => "redirect",
            Verdict::Sitemap => "sitemap",
            Verdict::Trap => "trap",
            Verdict::Unchanged => "unchanged",
            Verdict::Predicted => "predicted",
            Verdict::NotModified => "not-modified",
        }
    }

    /// Whether the page was skipped as a duplicate.
    pub fn is_duplicate(self) -> bool {
        matches!(self, Verdict::Exact | Verdict::Near)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_names_match_serde() {
        for v in Verdict::ALL {
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                format!("\"{}\"", v.as_str())
            );
        }
    }
}
