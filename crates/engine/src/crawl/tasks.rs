//! The work done off the coordinator: each request in a task of its own, each page analysed
//! on the blocking pool, and what they report back.

use super::*;

/// What a task reports back. Each result moves once through the channel, so the size
/// difference between variants costs nothing worth an allocation per page.
#[allow(clippy::large_enum_variant)]
pub(super) enum TaskResult {
    Robots {
        host: HostId,
        fetch: RobotsFetch,
    },
    Page {
        host: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
        /// The page analysed on the blocking pool (extracted, its host's template removed,
        /// tokenized) and how long it took, or the panic that stopped it; `None` when the
        /// response is not an HTML or text page.
        analysis: Option<Result<(PageAnalysis, Duration), String>>,
        /// From sending the request to the body's last byte.
        fetch_time: Duration,
    },
}

impl Coordinator {
    /// Fetches a host's robots.txt in a task of its own.
    pub(super) fn spawn_robots(&mut self, host: HostId, origin: Url) {
        self.in_flight += 1;
        let fetcher = Arc::clone(&self.fetcher);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let fetch = fetcher.fetch_robots(&origin).await;
            let _ = tx.send(TaskResult::Robots { host, fetch });
        });
    }

    /// Fetches a page in a task of its own, and analyses it on the blocking pool.
    pub(super) fn spawn_page(&mut self, id: HostId, key: QueueKey, entry: QueuedUrl, url: Url) {
        self.in_flight += 1;
        Progress::set(&self.progress.in_flight, self.in_flight as u64);
        let fetcher = Arc::clone(&self.fetcher);
        let pages = self.stage.page_analyzer();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let clock = Instant::now();
            let mut result = fetcher.fetch(&url).await;
            let fetch_time = clock.elapsed();
            let analysis = match &mut result {
                Ok(page) if page.status == 200 && page.is_html_or_text() => {
                    // Lent to the analysis, not copied: a large body is held once.
                    let body = std::mem::take(&mut page.body);
                    let content_type = page.content_type().map(str::to_owned);
                    let url = page.url.clone();
                    let is_plain = content_type
                        .as_deref()
                        .is_some_and(|ct| ct.trim_start().starts_with("text/plain"));
                    let analysed = tokio::task::spawn_blocking(move || {
                        let clock = Instant::now();
                        let extracted = if is_plain {
                            Extracted::plain(String::from_utf8_lossy(&body).into_owned())
                        } else {
                            pages
                                .analyzer()
                                .extract_html(&body, content_type.as_deref(), &url)
                        };
                        let host = nearcrawl_frontier::authority(&url);
                        let analysis = pages.analyze(&host, extracted);
                        (analysis, clock.elapsed(), body)
                    })
                    .await;
                    Some(match analysed {
                        Ok((analysis, took, body)) => {
                            page.body = body;
                            Ok((analysis, took))
                        }
                        Err(e) => Err(panic_message(e.into_panic())),
                    })
                }
                _ => None,
            };
            let _ = tx.send(TaskResult::Page {
                host: id,
                key,
                entry,
                result,
                analysis,
                fetch_time,
            });
        });
    }
}

/// The text of a panic's payload (`panic!` with a message gives a `&str` or a `String`).
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(message) => (*message).to_string(),
            Err(_) => "a panic without a message".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    /// A page whose analysis panics on the blocking pool becomes an error record naming the
    /// panic: the message survives the join, whatever form `panic!` gave it.
    #[tokio::test]
    async fn a_panic_on_the_blocking_pool_keeps_its_message() {
        let formatted = tokio::task::spawn_blocking(|| panic!("bad table at {}", 7)).await;
        let literal = tokio::task::spawn_blocking(|| panic!("literal")).await;
        let other = tokio::task::spawn_blocking(|| std::panic::panic_any(42_u8)).await;
        let message =
            |r: Result<(), tokio::task::JoinError>| panic_message(r.unwrap_err().into_panic());
        assert_eq!(message(formatted), "bad table at 7");
        assert_eq!(message(literal), "literal");
        assert_eq!(message(other), "a panic without a message");
    }
}
