//! A focused crawl's topic, built when the crawl starts: the texts of `focus.examples`
//! (URLs fetched once, files read), then the [`Relevance`] that scores pages against them.

use std::path::Path;

use nearcrawl_dedup::Analyzer;
use nearcrawl_fetch::Fetch;
use nearcrawl_frontier::{FocusConfig, Relevance};
use url::Url;

use crate::error::EngineError;

/// Redirects followed to reach an example URL.
const MAX_EXAMPLE_REDIRECTS: usize = 5;

/// The focus section's relevance scoring, its examples read: `None` for a breadth-first
/// crawl. An example that cannot be had stops the job with an error naming it.
pub(crate) async fn relevance(
    config: &FocusConfig,
    fetcher: &dyn Fetch,
    analyzer: &Analyzer,
) -> Result<Option<Relevance>, EngineError> {
    let mut texts = Vec::with_capacity(config.examples.len());
    for example in &config.examples {
        let text = example_text(example, fetcher, analyzer)
            .await
            .map_err(|reason| EngineError::Topic(format!("focus.examples: {example}: {reason}")))?;
        texts.push(text);
    }
    Relevance::new(config, &texts).map_err(|e| EngineError::Topic(e.0))
}

/// The title and main text of one example: a page fetched (`http(s)://`) or a file read
/// (HTML when it looks like HTML, else plain text).
async fn example_text(
    example: &str,
    fetcher: &dyn Fetch,
    analyzer: &Analyzer,
) -> Result<String, String> {
    let extracted = if example.starts_with("http://") || example.starts_with("https://") {
        let mut url = Url::parse(example).map_err(|e| e.to_string())?;
        let mut hops = 0;
        loop {
            let page = fetcher.fetch(&url).await.map_err(|f| f.message)?;
            match (page.status, page.location()) {
                (300..=399, Some(Ok(target))) if hops < MAX_EXAMPLE_REDIRECTS => {
                    hops += 1;
                    url = target;
                }
                (200, _) => {
                    break analyzer.extract_body(
                        &page.body,
                        page.header("content-type"),
                        &page.url,
                    );
                }
                (status, _) => return Err(format!("answered HTTP {status} ({url})")),
            }
        }
    } else {
        let path = Path::new(example.strip_prefix("file://").unwrap_or(example));
        let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
        analyzer.extract_file(path, &bytes)?
    };
    let title = extracted.facts.and_then(|f| f.title).unwrap_or_default();
    Ok(format!("{title}\n{}", extracted.text))
}
