//! Pages written by scripts, rendered before they are judged (`render.mode`, crates/render):
//! the page task's render step, and the crawler's answers to the requests a page makes in the
//! browser ([`PageRequests`]: the crawl's scope, then the crawl's own fetcher, with its address
//! policy). The page's record says what the render cost (`rendered`); the WARC keeps the
//! response as fetched.

use std::sync::Arc;

use nearcrawl_fetch::{Fetch, Fetched};
use nearcrawl_frontier::{CanonicalUrl, Scope};
use nearcrawl_records::Rendered;
use nearcrawl_render::{Answer, Renderer, Requested, Subresources};
use url::Url;

/// What renders a job's pages: the browser, and what its pages' requests are answered with.
#[derive(Clone)]
pub(crate) struct RenderStage {
    renderer: Arc<Renderer>,
    requests: Arc<PageRequests>,
}

impl RenderStage {
    /// Pages rendered by `renderer`, their requests answered within `scope` by `fetcher`.
    pub(crate) fn new(renderer: Arc<Renderer>, fetcher: Arc<dyn Fetch>, scope: Scope) -> Self {
        RenderStage {
            renderer,
            requests: Arc::new(PageRequests { fetcher, scope }),
        }
    }

    /// Renders `page`, an HTML page fetched whole: the page as the browser showed it (its
    /// DOM for its body, for the analysis), or `None` when the render failed and the page is
    /// judged on its static HTML; and what the render cost, for its record.
    pub(super) async fn render(&self, page: &Fetched) -> (Option<Fetched>, Rendered) {
        let headers = page
            .content_type()
            .map(|ct| vec![("Content-Type".to_owned(), ct.to_owned())])
            .unwrap_or_default();
        let document = nearcrawl_render::Fetched {
            status: page.status,
            headers,
            body: page.body.clone(),
        };
        let requests = Arc::clone(&self.requests) as Arc<dyn Subresources>;
        match self.renderer.render(&page.url, document, requests).await {
            Ok(rendered) => {
                let cost = Rendered {
                    ms: u64::try_from(rendered.elapsed.as_millis()).unwrap_or(u64::MAX),
                    requests: u32::try_from(rendered.requests.len()).unwrap_or(u32::MAX),
                    refused: refused(&rendered.requests),
                    bytes: rendered.requests.iter().map(Requested::bytes).sum(),
                    error: None,
                };
                let shown = Fetched {
                    body: rendered.html.into_bytes(),
                    ..page.clone()
                };
                (Some(shown), cost)
            }
            Err(e) => {
                tracing::debug!(url = %page.url, error = %e, "not rendered");
                let cost = Rendered {
                    error: Some(e.to_string()),
                    ..Rendered::default()
                };
                (None, cost)
            }
        }
    }
}

/// Requests refused: by the crawl's rules, or past the page's budget.
fn refused(requests: &[Requested]) -> u32 {
    let refused = requests
        .iter()
        .filter(|r| !matches!(r, Requested::Fetched { .. }));
    u32::try_from(refused.count()).unwrap_or(u32::MAX)
}

/// The crawler's answers to a rendered page's requests: a URL the crawl's scope admits,
/// fetched by the crawl's fetcher (whose address policy refuses a private address unless the
/// job allows it); any other refused, with the reason.
struct PageRequests {
    fetcher: Arc<dyn Fetch>,
    scope: Scope,
}

impl Subresources for PageRequests {
    fn fetch(&self, url: Url) -> Answer<'_> {
        Box::pin(async move {
            let canonical = CanonicalUrl::from_url(url.clone()).map_err(|e| e.to_string())?;
            (self.scope.check(&canonical, 0)).map_err(|reason| format!("{url}: {reason}"))?;
            let page = (self.fetcher.fetch(&url).await).map_err(|e| format!("{url}: {e}"))?;
            let headers = ["content-type", "location"]
                .into_iter()
                .filter_map(|name| Some((name.to_owned(), page.header(name)?.to_owned())))
                .collect();
            Ok(nearcrawl_render::Fetched {
                status: page.status,
                headers,
                body: page.body,
            })
        })
    }
}
