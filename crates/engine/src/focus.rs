//! A focused crawl's topic, built when the crawl starts: the texts of `focus.examples`
//! (URLs fetched once, files read), then the [`Relevance`] that scores pages against them;
//! and [`Focus`], which owns it through the crawl and keeps in the store what a resumed crawl
//! goes on with.

use std::borrow::Cow;
use std::path::Path;

use nearcrawl_dedup::Analyzer;
use nearcrawl_fetch::Fetch;
use nearcrawl_frontier::{DocFrequencies, FocusConfig, Relevance};
use nearcrawl_store::CrawlStore;
use url::Url;

use crate::error::EngineError;

/// The store's name for a focused crawl's document frequencies.
const FOCUS_FREQUENCIES: &str = "focus_df";
/// The store's name for the best relevance a focused crawl found (4 bytes, an `f32`
/// little-endian): what its tunnels' bar follows while no page reaches the threshold.
const FOCUS_BEST: &str = "focus_best";

/// A focused crawl's topic through the crawl: the [`Relevance`] that scores its pages, and
/// what of it was last kept in the store (its document frequencies, kept when they have
/// grown by a tenth and 16 pages; the best relevance found, kept when it grew).
#[derive(Debug)]
pub(crate) struct Focus {
    relevance: Relevance,
    /// Pages counted in the document frequencies last kept.
    saved: u64,
    /// The best relevance last kept.
    best_saved: f32,
}

impl Focus {
    /// The topic of a crawl that kept nothing yet.
    pub(crate) fn new(relevance: Relevance) -> Focus {
        Focus {
            relevance,
            saved: 0,
            best_saved: 0.0,
        }
    }

    /// The scoring.
    pub(crate) fn relevance(&self) -> &Relevance {
        &self.relevance
    }

    /// The scoring, to assess a page with (which counts it in the document frequencies).
    pub(crate) fn relevance_mut(&mut self) -> &mut Relevance {
        &mut self.relevance
    }

    /// A resumed crawl goes on with the document frequencies and the best relevance its
    /// earlier runs kept in `store` (at `state`, named in errors): at most a tenth of the
    /// pages, and 16, are counted again.
    pub(crate) fn resume(
        &mut self,
        store: &dyn CrawlStore,
        state: &Path,
    ) -> Result<(), EngineError> {
        if let Some(bytes) = store.blob(FOCUS_FREQUENCIES)? {
            let df = DocFrequencies::from_bytes(&bytes).map_err(|e| {
                EngineError::Topic(format!("{}: the focused crawl's {e}", state.display()))
            })?;
            self.saved = df.documents();
            self.relevance.resume_with(df);
        }
        if let Some(bytes) = store.blob(FOCUS_BEST)? {
            let best = <[u8; 4]>::try_from(bytes.as_slice())
                .map(f32::from_le_bytes)
                .map_err(|_| {
                    EngineError::Topic(format!(
                        "{}: the focused crawl's best relevance is {} bytes, not 4",
                        state.display(),
                        bytes.len()
                    ))
                })?;
            self.relevance.resume_best(best);
            self.best_saved = self.relevance.best();
        }
        Ok(())
    }

    /// What to keep in the store with the decision being made (its blobs): the document
    /// frequencies when they have grown by a tenth (and 16 pages) since they were last kept,
    /// the best relevance when it grew.
    pub(crate) fn take_to_keep(&mut self) -> Vec<(Cow<'static, str>, Vec<u8>)> {
        let mut blobs = Vec::new();
        let df = self.relevance.frequencies();
        let n = df.documents();
        if n >= self.saved + 16.max(self.saved / 10) {
            self.saved = n;
            blobs.push((FOCUS_FREQUENCIES.into(), df.to_bytes()));
        }
        let best = self.relevance.best();
        if best > self.best_saved {
            self.best_saved = best;
            blobs.push((FOCUS_BEST.into(), best.to_le_bytes().to_vec()));
        }
        blobs
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_frontier::TermCounts;
    use nearcrawl_store::{Commit, MemoryStore};

    fn topic() -> Relevance {
        let config = FocusConfig {
            terms: [("apache".to_string(), 1.0)].into(),
            ..FocusConfig::default()
        };
        Relevance::new(&config, &[]).unwrap().expect("focused")
    }

    /// Assesses `n` pages, the `relevant`-th one about the topic.
    fn assess(focus: &mut Focus, n: usize, relevant: Option<usize>) {
        for i in 0..n {
            let text = match Some(i) == relevant {
                true => "apache httpd modules: the apache server's configuration".to_string(),
                false => format!("page {i} about gardening and the weather in spring"),
            };
            focus
                .relevance_mut()
                .assess(&TermCounts::of(&text), 0, Some(0.5), false);
        }
    }

    #[test]
    fn a_focused_crawl_keeps_its_frequencies_by_tenths_and_its_best_when_it_grows() {
        let mut focus = Focus::new(topic());
        let names = |blobs: &[(Cow<'static, str>, Vec<u8>)]| -> Vec<String> {
            blobs.iter().map(|(name, _)| name.to_string()).collect()
        };
        // Fewer than 16 pages: nothing kept yet.
        assess(&mut focus, 15, None);
        assert_eq!(names(&focus.take_to_keep()), Vec::<String>::new());
        // The 16th page, on the topic: both.
        assess(&mut focus, 1, Some(0));
        assert_eq!(
            names(&focus.take_to_keep()),
            [FOCUS_FREQUENCIES, FOCUS_BEST]
        );
        // Asked again at once: nothing grew.
        assert_eq!(names(&focus.take_to_keep()), Vec::<String>::new());
        // 15 more off-topic pages: under 16 new ones, nothing; the 16th, the frequencies.
        assess(&mut focus, 15, None);
        assert_eq!(names(&focus.take_to_keep()), Vec::<String>::new());
        assess(&mut focus, 1, None);
        assert_eq!(names(&focus.take_to_keep()), [FOCUS_FREQUENCIES]);
    }

    #[test]
    fn a_resumed_focused_crawl_goes_on_with_what_it_kept() {
        let store = MemoryStore::default();
        let mut focus = Focus::new(topic());
        assess(&mut focus, 20, Some(3));
        let blobs = focus.take_to_keep();
        store
            .commit(Commit {
                blobs,
                ..Commit::default()
            })
            .unwrap();
        let (pages, best) = (
            focus.relevance().frequencies().documents(),
            focus.relevance().best(),
        );

        let mut resumed = Focus::new(topic());
        resumed.resume(&store, Path::new("state")).unwrap();
        assert_eq!(resumed.relevance().frequencies().documents(), pages);
        assert_eq!(resumed.relevance().best(), best);
        // What it resumed with is kept already: nothing to keep again.
        assert!(resumed.take_to_keep().is_empty());

        // A damaged best relevance names the state it was read from.
        let store = MemoryStore::default();
        let blobs = vec![(Cow::Borrowed(FOCUS_BEST), vec![1, 2, 3])];
        store
            .commit(Commit {
                blobs,
                ..Commit::default()
            })
            .unwrap();
        let error = Focus::new(topic())
            .resume(&store, Path::new("out/state"))
            .unwrap_err();
        assert!(error.to_string().contains("out/state"), "{error}");
    }
}
