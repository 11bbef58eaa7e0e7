//! What rendering pages cost a crawl, and the renders the link policy spared it
//! (`report.json`'s `render`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::kinds::Verdict;
use crate::record::Record;

/// A crawl's renders (`render.mode`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderFigures {
    /// Pages rendered.
    pub rendered: u64,
    /// Their render time, in all (milliseconds).
    pub ms: u64,
    /// Requests they made besides their documents ...
    pub requests: u64,
    /// ... of which refused (the crawl's rules, a page's budget) ...
    pub refused: u64,
    /// ... and the bytes of those fetched for them.
    pub bytes: u64,
    /// Pages whose render failed (judged on their static HTML).
    pub failed: u64,
    /// Pages `auto` would have rendered on a host whose renders added nothing.
    pub declined: u64,
    /// Pages decided without being fetched (predicted duplicates, pages a cheap check found
    /// unchanged) on hosts where pages were rendered: renders the link policy spared.
    pub spared: u64,
    /// Hosts whose pages were rendered, and hosts with pages decided without a fetch
    /// (counted into `spared` at the end).
    #[serde(skip)]
    hosts: BTreeSet<String>,
    #[serde(skip)]
    unfetched: Vec<String>,
}

impl RenderFigures {
    /// Counts one record.
    pub fn add(&mut self, record: &Record) {
        let host = authority(&record.url);
        if matches!(record.verdict, Verdict::Predicted | Verdict::Unchanged) {
            self.unfetched.push(host.to_owned());
        }
        let Some(rendered) = &record.rendered else {
            return;
        };
        if rendered.error.is_some() {
            self.failed += 1;
        } else if rendered.ms == 0 {
            self.declined += 1;
            return;
        } else {
            self.rendered += 1;
        }
        self.hosts.insert(host.to_owned());
        self.ms += rendered.ms;
        self.requests += u64::from(rendered.requests);
        self.refused += u64::from(rendered.refused);
        self.bytes += rendered.bytes;
    }

    /// The figures, once every record is counted; `None` when nothing was rendered.
    pub fn finish(mut self) -> Option<RenderFigures> {
        if self.rendered + self.failed + self.declined == 0 {
            return None;
        }
        let hosts = std::mem::take(&mut self.hosts);
        self.spared = (self.unfetched.drain(..))
            .filter(|h| hosts.contains(h))
            .count() as u64;
        Some(self)
    }

    /// One line of the summary.
    pub fn summary(&self) -> String {
        let mean = self.ms.checked_div(self.rendered).unwrap_or(0);
        format!(
            "renders: {} pages rendered ({mean} ms each on average), {} requests ({} refused, \
             {} bytes fetched), {} failed, {} declined on hosts whose renders added nothing; {} \
             renders spared by the link policy (pages decided without a fetch on rendered hosts)",
            self.rendered,
            self.requests,
            self.refused,
            self.bytes,
            self.failed,
            self.declined,
            self.spared
        )
    }
}

/// The authority of a URL as recorded (`http://a.test:8080/x` -> `a.test:8080`).
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Rendered;

    fn page(url: &str, verdict: Verdict, rendered: Option<Rendered>) -> Record {
        let mut record = Record::new(0, url.to_owned(), 0, verdict);
        record.rendered = rendered;
        record
    }

    fn rendered(ms: u64, requests: u32, refused: u32, bytes: u64) -> Option<Rendered> {
        Some(Rendered {
            ms,
            requests,
            refused,
            bytes,
            ..Rendered::default()
        })
    }

    #[test]
    fn renders_are_counted_and_the_policy_s_spared_ones_on_rendered_hosts() {
        let mut figures = RenderFigures::default();
        let records = [
            page("http://a.test/1", Verdict::Unique, rendered(200, 3, 1, 900)),
            page("http://a.test/2", Verdict::Near, rendered(100, 2, 0, 100)),
            page("http://a.test/3", Verdict::Predicted, None),
            page("http://a.test/4", Verdict::Unchanged, None),
            page("http://b.test/1", Verdict::Predicted, None),
            page(
                "http://c.test/1",
                Verdict::Unique,
                Some(Rendered {
                    error: Some("not rendered within 10000 ms".into()),
                    ..Rendered::default()
                }),
            ),
            page(
                "http://d.test/1",
                Verdict::Unique,
                Some(Rendered {
                    why: Some("not rendered: this host's first 3 renders added nothing".into()),
                    ..Rendered::default()
                }),
            ),
            page("http://d.test/2", Verdict::Predicted, None),
        ];
        for record in &records {
            figures.add(record);
        }
        let figures = figures.finish().unwrap_or_default();
        assert_eq!(
            (
                figures.rendered,
                figures.ms,
                figures.requests,
                figures.refused,
                figures.bytes
            ),
            (2, 300, 5, 1, 1_000)
        );
        assert_eq!((figures.failed, figures.declined), (1, 1));
        // a.test's two pages decided without a fetch; b.test and d.test were not rendered.
        assert_eq!(figures.spared, 2);
        assert!(
            figures.summary().contains("2 renders spared"),
            "{}",
            figures.summary()
        );
        let mut none = RenderFigures::default();
        none.add(&page("http://a.test/1", Verdict::Unique, None));
        assert_eq!(none.finish(), None);
        assert_eq!(authority("http://a.test:8080/x?y"), "a.test:8080");
    }
}
