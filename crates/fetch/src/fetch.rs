//! What a crawl needs of HTTP, as a trait: the crawl takes any [`Fetch`], so its scheduling can
//! be tested with scripted answers and paused time, without sockets.

use std::future::Future;
use std::pin::Pin;

use url::Url;

use crate::fetched::Fetched;
use crate::fetcher::{FetchFailure, Fetcher, Resolved, Validators};
use crate::robots::RobotsFetch;

/// A boxed future that can move between threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One GET (or HEAD) per call, and a host's robots.txt. [`Fetcher`] is the real one.
pub trait Fetch: Send + Sync + 'static {
    /// GETs `url` once (no redirects followed).
    fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Fetched, FetchFailure>>;
    /// Asks for `url` with HEAD once: the response without its body.
    fn head<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Fetched, FetchFailure>>;
    /// GETs these byte ranges of `url` (inclusive offsets) once: a `206` holding them, or (a
    /// fetcher or server without ranges, as by default) a `200` with the whole page.
    fn fetch_ranges<'a>(
        &'a self,
        url: &'a Url,
        ranges: &'a [(u64, u64)],
    ) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        let _ = ranges;
        self.fetch(url)
    }
    /// GETs `url` once, conditionally on these validators of an earlier capture
    /// (`If-None-Match`, `If-Modified-Since`): a `304` when the server holds the page
    /// unchanged. A fetcher without conditional requests GETs the page whole.
    fn fetch_revisit<'a>(
        &'a self,
        url: &'a Url,
        validators: &'a Validators,
    ) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        let _ = validators;
        self.fetch(url)
    }
    /// Fetches and parses the robots.txt of the host of `site` (RFC 9309).
    fn fetch_robots<'a>(&'a self, site: &'a Url) -> BoxFuture<'a, RobotsFetch>;
    /// The addresses requests to the name `host` will connect to, the first first (for
    /// politeness per address), and how long they hold, or why it has none. A fetcher that
    /// cannot tell answers with none, for a day: its names are then polite per name only.
    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, Result<Resolved, String>> {
        let _ = host;
        Box::pin(async {
            Ok(Resolved {
                addresses: Vec::new(),
                ttl: std::time::Duration::from_secs(86_400),
            })
        })
    }
}

impl Fetch for Fetcher {
    fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        Box::pin(Fetcher::fetch(self, url))
    }

    fn head<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        Box::pin(Fetcher::head(self, url))
    }

    fn fetch_ranges<'a>(
        &'a self,
        url: &'a Url,
        ranges: &'a [(u64, u64)],
    ) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        Box::pin(Fetcher::fetch_ranges(self, url, ranges))
    }

    fn fetch_revisit<'a>(
        &'a self,
        url: &'a Url,
        validators: &'a Validators,
    ) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        Box::pin(Fetcher::fetch_revisit(self, url, validators))
    }

    fn fetch_robots<'a>(&'a self, site: &'a Url) -> BoxFuture<'a, RobotsFetch> {
        Box::pin(Fetcher::fetch_robots(self, site))
    }

    fn resolve<'a>(&'a self, host: &'a str) -> BoxFuture<'a, Result<Resolved, String>> {
        Box::pin(Fetcher::resolve(self, host))
    }
}
