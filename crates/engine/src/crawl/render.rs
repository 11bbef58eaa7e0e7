//! Pages written by scripts, rendered before they are judged (`render.mode`, crates/render):
//! the page task's render step, and the crawler's answers to the requests a page makes in the
//! browser ([`PageRequests`]: the crawl's scope, each origin's robots.txt when the crawl obeys
//! it, then the crawl's own fetcher, with its address policy). The page's record says what
//! the render cost (`rendered`); the WARC keeps the response as fetched. The browser
//! ([`Browser`]) is started with the crawl in `always` (one that cannot start is an error),
//! and in `auto` when the first page to render comes (one that cannot start is a warning, and
//! the crawl goes on judging static HTML).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use nearcrawl_dedup::PageAnalyzer;
use nearcrawl_fetch::{Fetch, Fetched, RobotsRules};
use nearcrawl_frontier::{CanonicalUrl, Scope};
use nearcrawl_records::Rendered;
use nearcrawl_render::{
    AUTO_MAX_TEXT, Answer, AutoHosts, Choice, GLANCE_MAX_TEXT, RenderConfig, RenderMode, Renderer,
    Requested, Shown, Subresources,
};
use tokio::sync::OnceCell;
use url::Url;

use crate::error::EngineError;

/// A job's browser: started at once, or when first needed.
pub(crate) struct Browser {
    config: RenderConfig,
    /// The browser, or why it did not start.
    started: OnceCell<Result<Arc<Renderer>, String>>,
}

impl Browser {
    /// The browser of a job whose pages are rendered as `mode` says (with `config`): started
    /// now in `always` (an error names what is missing), when first needed in `auto`.
    pub(crate) async fn of(
        mode: RenderMode,
        config: RenderConfig,
    ) -> Result<Option<Arc<Browser>>, EngineError> {
        let started = match mode {
            RenderMode::Never => return Ok(None),
            RenderMode::Auto => OnceCell::new(),
            RenderMode::Always => {
                let renderer = (Renderer::start(config.clone()).await)
                    .map_err(|e| EngineError::Render(e.to_string()))?;
                OnceCell::new_with(Some(Ok(Arc::new(renderer))))
            }
        };
        Ok(Some(Arc::new(Browser { config, started })))
    }

    /// The browser, started now if it was not (once: a browser that did not start is not
    /// tried again, and the crawl is warned once).
    async fn get(&self) -> Result<Arc<Renderer>, String> {
        let started = self.started.get_or_init(|| async {
            match Renderer::start(self.config.clone()).await {
                Ok(renderer) => Ok(Arc::new(renderer)),
                Err(e) => {
                    tracing::warn!(
                        "render.mode = auto: {e}; pages are judged on their static HTML"
                    );
                    Err(e.to_string())
                }
            }
        });
        started.await.clone()
    }

    /// Closes the browser, if it was started.
    pub(crate) async fn close(self) {
        if let Some(Ok(renderer)) = self.started.into_inner()
            && let Some(renderer) = Arc::into_inner(renderer)
        {
            renderer.close().await;
        }
    }
}

/// What renders a job's pages: the browser, and what its pages' requests are answered with.
#[derive(Clone)]
pub(crate) struct RenderStage {
    browser: Arc<Browser>,
    requests: Arc<PageRequests>,
    mode: RenderMode,
    /// In `auto`, what rendering each host's pages added.
    hosts: Arc<AutoHosts>,
}

impl RenderStage {
    /// Pages rendered by `browser` as `mode` says, their requests answered within `scope`
    /// (and robots.txt, when the crawl obeys it) by `fetcher`, at most `connections` at once
    /// to one origin.
    pub(crate) fn new(
        browser: Arc<Browser>,
        mode: RenderMode,
        fetcher: Arc<dyn Fetch>,
        (scope, obey_robots, connections): (Scope, bool, u32),
    ) -> Self {
        RenderStage {
            browser,
            requests: Arc::new(PageRequests {
                fetcher,
                scope,
                robots: obey_robots.then(Default::default),
                connections: usize::try_from(connections.max(1)).unwrap_or(1),
                origins: Mutex::default(),
            }),
            mode,
            hosts: Arc::default(),
        }
    }

    /// `page`, an HTML page fetched whole, rendered when the job's mode says so
    /// ([`nearcrawl_render::choose`] in `auto`, from its static HTML read by `pages`, off the
    /// runtime's threads): the page as the browser showed it, or `None` (not rendered, or the
    /// render failed); and for its record what the render cost, or why a page `auto` would
    /// render was not.
    pub(super) async fn page(&self, page: &Fetched, pages: &PageAnalyzer) -> RenderedPage {
        let host = nearcrawl_frontier::authority(&page.url);
        let (choice, before) = match self.mode {
            RenderMode::Never => return RenderedPage::default(),
            RenderMode::Always => (Choice::Render("render.mode = always".to_owned()), None),
            RenderMode::Auto if !nearcrawl_render::has_script(&page.body) => {
                return RenderedPage::default();
            }
            RenderMode::Auto => {
                // A glance first: a page of much text, or of little, needs no extraction.
                let glanced = nearcrawl_render::glance(&page.body, GLANCE_MAX_TEXT);
                let before = match glanced.text {
                    n if n >= GLANCE_MAX_TEXT => return RenderedPage::default(),
                    n if n <= AUTO_MAX_TEXT => glanced,
                    _ => shown(pages, page).await.0,
                };
                let so_far = self.hosts.of(&host);
                (nearcrawl_render::choose(true, before, so_far), Some(before))
            }
        };
        let why = match choice {
            Choice::Static(None) => return RenderedPage::default(),
            Choice::Static(Some(why)) => return RenderedPage::declined(why),
            // A body cut at the cap is no page a browser can show whole.
            Choice::Render(_) if page.truncated => {
                let why = "not rendered: its body was cut at fetch.max_body_bytes";
                return RenderedPage::declined(why.to_owned());
            }
            Choice::Render(why) => why,
        };
        let (shown_page, mut cost, subresources) = self.render(page).await;
        cost.why = Some(why);
        if let Some(after) = &shown_page {
            let (after, text) = shown(pages, after).await;
            cost.static_text = Some(nearcrawl_render::static_carries(&page.body, &text));
            if let Some(before) = before {
                (self.hosts).learn(&host, nearcrawl_render::added(before, after));
            }
        }
        RenderedPage {
            shown: shown_page,
            cost: Some(cost),
            subresources,
        }
    }

    /// Renders `page`, an HTML page fetched whole: the page as the browser showed it (its
    /// DOM for its body, for the analysis), or `None` when the render failed and the page is
    /// judged on its static HTML; and what the render cost, for its record.
    async fn render(&self, page: &Fetched) -> (Option<Fetched>, Rendered, Vec<Fetched>) {
        let headers = page
            .content_type()
            .map(|ct| vec![("Content-Type".to_owned(), ct.to_owned())])
            .unwrap_or_default();
        let document = nearcrawl_render::Fetched {
            status: page.status,
            headers,
            body: page.body.clone(),
        };
        let this_page = Arc::new(PageFetches {
            requests: Arc::clone(&self.requests),
            fetched: Mutex::default(),
        });
        let requests = Arc::clone(&this_page) as Arc<dyn Subresources>;
        let rendered = match self.browser.get().await {
            Ok(renderer) => renderer.render(&page.url, document, requests).await,
            Err(e) => Err(nearcrawl_render::RenderError::Start(e)),
        };
        let fetched = std::mem::take(&mut *lock(&this_page.fetched));
        match rendered {
            Ok(rendered) => {
                let cost = Rendered {
                    why: None,
                    ms: u64::try_from(rendered.elapsed.as_millis()).unwrap_or(u64::MAX),
                    requests: u32::try_from(rendered.requests.len()).unwrap_or(u32::MAX),
                    refused: refused(&rendered.requests),
                    bytes: rendered.requests.iter().map(Requested::bytes).sum(),
                    static_text: None,
                    error: None,
                };
                let shown = Fetched {
                    body: rendered.html.into_bytes(),
                    ..page.clone()
                };
                (Some(shown), cost, fetched)
            }
            Err(e) => {
                tracing::debug!(url = %page.url, error = %e, "not rendered");
                let cost = Rendered {
                    error: Some(e.to_string()),
                    ..Rendered::default()
                };
                (None, cost, fetched)
            }
        }
    }
}

/// What `page`'s HTML shows (its main text's characters, its links), read on the blocking
/// pool, and its main text.
async fn shown(pages: &PageAnalyzer, page: &Fetched) -> (Shown, String) {
    let (analyzer, body, url) = (
        Arc::clone(pages.analyzer()),
        page.body.clone(),
        page.url.clone(),
    );
    let content_type = page.content_type().map(str::to_owned);
    let read = tokio::task::spawn_blocking(move || {
        let extracted = analyzer.extract_html(&body, content_type.as_deref(), &url);
        let shown = Shown {
            text: extracted.text.chars().count(),
            links: extracted.facts.map_or(0, |facts| facts.links.len()),
        };
        (shown, extracted.text)
    });
    read.await.unwrap_or_default()
}

/// Requests refused: by the crawl's rules, or past the page's budget.
fn refused(requests: &[Requested]) -> u32 {
    let refused = requests
        .iter()
        .filter(|r| !matches!(r, Requested::Fetched { .. }));
    u32::try_from(refused.count()).unwrap_or(u32::MAX)
}

/// The crawler's answers to a rendered page's requests: a URL the crawl's scope admits and
/// its origin's robots.txt allows (when the crawl obeys it), fetched by the crawl's fetcher
/// (whose address policy refuses a private address unless the job allows it); any other
/// refused, with the reason.
struct PageRequests {
    fetcher: Arc<dyn Fetch>,
    scope: Scope,
    /// Each origin's robots.txt, fetched the first time one of its URLs is asked for.
    robots: Option<Mutex<HashMap<String, Arc<OnceCell<RobotsRules>>>>>,
    /// Requests in flight to one origin at once, all rendered pages' together (the crawl's
    /// `politeness.max_connections_per_host`; no delay between them).
    connections: usize,
    /// Each origin's connections.
    origins: Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>,
}

impl PageRequests {
    /// Whether `url`'s origin's robots.txt allows it (fetched and kept the first time).
    async fn robots_allow(&self, url: &Url) -> bool {
        let Some(robots) = &self.robots else {
            return true;
        };
        // One fetch per origin; requests to other origins do not wait for it.
        let origin = url.origin().ascii_serialization();
        let once = Arc::clone(lock(robots).entry(origin).or_default());
        let rules =
            (once.get_or_init(|| async { self.fetcher.fetch_robots(url).await.rules })).await;
        rules.allows(url)
    }
}

impl PageRequests {
    /// `url` fetched under the crawl's rules, or why it was refused.
    async fn fetch(&self, url: &Url) -> Result<Fetched, String> {
        let canonical = CanonicalUrl::from_url(url.clone()).map_err(|e| e.to_string())?;
        (self.scope.check(&canonical, 0)).map_err(|reason| format!("{url}: {reason}"))?;
        if !self.robots_allow(url).await {
            return Err(format!("{url}: robots.txt disallows it"));
        }
        let origin = url.origin().ascii_serialization();
        let connections = Arc::clone(
            lock(&self.origins)
                .entry(origin)
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(self.connections))),
        );
        let _connection = connections.acquire().await.map_err(|e| e.to_string())?;
        (self.fetcher.fetch(url).await).map_err(|e| format!("{url}: {e}"))
    }
}

/// What one rendered page's requests were answered with: fetched by [`PageRequests`], and
/// kept for the page's WARC records.
struct PageFetches {
    requests: Arc<PageRequests>,
    fetched: Mutex<Vec<Fetched>>,
}

impl Subresources for PageFetches {
    fn fetch(&self, url: Url) -> Answer<'_> {
        Box::pin(async move {
            let page = self.requests.fetch(&url).await?;
            let headers = ["content-type", "location"]
                .into_iter()
                .filter_map(|name| Some((name.to_owned(), page.header(name)?.to_owned())))
                .collect();
            let answer = nearcrawl_render::Fetched {
                status: page.status,
                headers,
                body: page.body.clone(),
            };
            lock(&self.fetched).push(page);
            Ok(answer)
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A page's render step: the page as the browser showed it (`None`: not rendered, or the
/// render failed), what the render cost or why the page was not rendered (for its record),
/// and the responses its requests were answered with (for its WARC records).
#[derive(Default)]
pub(super) struct RenderedPage {
    pub(super) shown: Option<Fetched>,
    pub(super) cost: Option<Rendered>,
    pub(super) subresources: Vec<Fetched>,
}

impl RenderedPage {
    /// A page `auto` would render, not rendered, for this reason.
    fn declined(why: String) -> RenderedPage {
        RenderedPage {
            cost: Some(Rendered {
                why: Some(why),
                ..Rendered::default()
            }),
            ..RenderedPage::default()
        }
    }
}
