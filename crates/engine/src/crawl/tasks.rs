//! The work done off the coordinator: each request in a task of its own, each page analysed
//! on the blocking pool, and what they report back.

use super::judge::{Away, hand_over};
use super::prejudge::{Prejudge, Prejudged};
use super::sentences::{PostingsReader, Prefetched};
use super::{
    Arc, CanonicalUrl, Coordinator, CrawlStore, Declared, Duration, EngineError, Extracted,
    FetchFailure, Fetched, HostId, Instant, PageAnalysis, PageAnalyzer, PreparedFetch, QueueKey,
    QueuedUrl, RobotsFetch, Stage, Url, UrlKey, url_key, warc_fetch,
};
use nearcrawl_frontier::TermCounts;

/// What a task reports back. Each result moves once through the channel, so the size
/// difference between variants costs nothing worth an allocation per page.
#[allow(clippy::large_enum_variant)]
pub(super) enum TaskResult {
    /// A host's name resolved: its addresses, or why none.
    Resolved {
        host: HostId,
        addresses: Result<nearcrawl_fetch::Resolved, String>,
    },
    Robots {
        host: HostId,
        fetch: RobotsFetch,
    },
    /// A probe's answer: its HEAD's (the entry's `probe` not yet asked), or its sample's,
    /// parts of the page asked with `Range` (the probe's `sample` not yet asked; a server that
    /// answered with the whole page sends a [`TaskResult::Page`] instead).
    Probe {
        host: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
    },
    Page {
        host: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
        /// The page analysed on the blocking pool (extracted, its host's template removed,
        /// tokenized), or the panic that stopped it; `None` when the response is not an HTML
        /// or text page.
        analysis: Option<Result<Box<Analysed>, String>>,
        /// From sending the request to the body's last byte.
        fetch_time: Duration,
        /// Its WARC response and request records, prepared with the analysis.
        warc: Option<PreparedFetch>,
    },
    /// A queued URL whose text does not parse (a damaged store's): recorded as an error,
    /// never requested.
    Unparsable {
        host: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        reason: String,
    },
    /// The judge, on a thread of its own, failed: the crawl stops (see
    /// [`super::judge::Judging`]).
    JudgeFailed(EngineError),
}

/// A page as the blocking pool hands it back.
pub(super) struct Analysed {
    /// Extracted, its host's template removed, tokenized and fingerprinted.
    pub(super) analysis: PageAnalysis,
    /// How long that took.
    pub(super) took: Duration,
    /// A focused crawl: the words of its title and text, counted (scored against the topic
    /// on the coordinator, which owns the document frequencies).
    pub(super) terms: Option<TermCounts>,
    /// With probes on, what a probe of its counterpart elsewhere is compared with (its
    /// length left for the response's): the shingles of the whole page's text, for a large
    /// page ([`nearcrawl_dedup::shingle_filter`]), and where its links lead on its site.
    pub(super) declared: Option<Declared>,
    /// The postings of its sentences, read here from the store rather than on the
    /// coordinator (see [`super::sentences`]); none in a shared job, or without
    /// verification.
    pub(super) postings: Option<Prefetched>,
    /// What of its judgement was worked out here (see [`super::prejudge`]); none in a
    /// shared job, or when a read failed here.
    pub(super) prejudged: Option<Prejudged>,
    /// The URL pattern of the page (its trap budget's, earned when it is distinct), worked
    /// out here; none for a URL that is not canonical (the coordinator's parse would fail
    /// too: the URL requested is the entry's).
    pub(super) pattern: Option<nearcrawl_frontier::UrlPattern>,
    /// What rendering the page cost, when it was rendered (`render.mode`).
    pub(super) rendered: Option<nearcrawl_records::Rendered>,
    /// The keys of its links (as canonical URLs) the store had seen when it was analysed
    /// ([`SeenLinks`]); none in a shared job.
    pub(super) seen: Option<SeenLinks>,
    /// Its links as canonical URLs, in the order of its facts' links (`None` for one that
    /// is not a URL the crawl can fetch), worked out here rather than on the coordinator.
    pub(super) canonical_links: Option<Vec<Option<CanonicalUrl>>>,
    /// Its judgement, when the judge is on a thread of its own (it judged the page between
    /// the pool and the coordinator).
    pub(super) judged: Option<Away>,
    /// In a shared job, its keys and what the job's index held for them, read on the pool.
    pub(super) index_read: Option<super::shared_dedup::IndexRead>,
}

/// The URL keys of a page's links that the crawl had seen when the page was analysed,
/// read there rather than on the coordinator: a URL seen stays seen (the store's `seen`
/// table is only ever added to), so a key found here needs no read when the links are
/// followed; one not found is asked of the store there (it may have been seen since).
#[derive(Debug, Default)]
pub(super) struct SeenLinks(foldhash::HashSet<UrlKey>);

impl SeenLinks {
    /// The keys of `links` (canonical URLs) that `store` has seen.
    fn read<'a>(
        store: &dyn CrawlStore,
        links: impl Iterator<Item = &'a CanonicalUrl>,
    ) -> SeenLinks {
        let mut seen = foldhash::HashSet::default();
        for url in links {
            let key = url_key(url.as_str());
            if !seen.contains(&key) && matches!(store.is_seen(&key), Ok(true)) {
                seen.insert(key);
            }
        }
        SeenLinks(seen)
    }

    /// Whether `key` was found seen.
    pub(super) fn contains(&self, key: &UrlKey) -> bool {
        self.0.contains(key)
    }
}

impl Coordinator {
    /// Resolves a host's name in a task of its own.
    pub(super) fn spawn_resolve(&mut self, host: HostId, name: String) {
        let fetcher = Arc::clone(&self.fetcher);
        let tx = self.in_flight.start();
        tokio::spawn(async move {
            let addresses = fetcher.resolve(&name).await;
            let _ = tx.send(TaskResult::Resolved { host, addresses });
        });
    }

    /// Fetches a host's robots.txt in a task of its own.
    pub(super) fn spawn_robots(&mut self, host: HostId, origin: Url) {
        let fetcher = Arc::clone(&self.fetcher);
        let tx = self.in_flight.start();
        tokio::spawn(async move {
            let fetch = fetcher.fetch_robots(&origin).await;
            let _ = tx.send(TaskResult::Robots { host, fetch });
        });
    }

    /// Fetches a page in a task of its own, and analyses it on the blocking pool (where its
    /// WARC records are prepared too, when the job archives).
    /// The URL is parsed here, in the task, not on the coordinator.
    pub(super) fn spawn_page(&mut self, id: HostId, key: QueueKey, entry: QueuedUrl) {
        let fetcher = Arc::clone(&self.fetcher);
        // A probe's HEAD first, then (a large page) parts of it, before the page itself.
        let asking = match &entry.probe {
            Some(probe) if !probe.asked => Asking::Head,
            Some(probe) if probe.sample.as_ref().is_some_and(|s| !s.asked) => Asking::Parts(
                nearcrawl_dedup::sample_ranges(probe.length.unwrap_or_default()),
            ),
            _ => Asking::Page,
        };
        // A recrawl's page: asked with its previous capture's validators.
        let validators = entry
            .previous
            .as_ref()
            .map(|p| nearcrawl_fetch::Validators {
                etag: p.etag.clone(),
                last_modified: p.last_modified.clone(),
            })
            .filter(|v| !v.is_empty());
        let pages = self.judge.page_analyzer();
        // Where an analysed page goes: to the judge, when it is on a thread of its own.
        let to_judge = self.judge.inbox();
        // The pages of a shared job are judged against the job's index, not this store's.
        let ahead = self.shared_dedup.is_none().then(|| {
            let (postings, prejudge) = self.judge.ahead();
            Ahead { postings, prejudge }
        });
        // A shared job's seen set is the job's, not this store's; its index is read ahead.
        let seen_in = self.shared_dedup.is_none().then(|| Arc::clone(&self.store));
        let index_reads = self.shared_dedup.as_ref().map(|d| d.reads());
        let warc_level = self.archive.warc_level();
        let focused = self.focus.is_some();
        let probes = self.job.config.dedup.enabled && self.links.probes();
        let probing = Probing {
            links: probes,
            samples: probes && self.links.samples(),
        };
        // A page fetched whole is rendered first, when the job renders pages.
        let render = matches!(asking, Asking::Page)
            .then(|| self.render.clone())
            .flatten();
        let tx = self.in_flight.start();
        tokio::spawn(async move {
            let url = match Url::parse(&entry.url) {
                Ok(url) => url,
                Err(e) => {
                    let reason = format!("stored URL does not parse: {e}");
                    let _ = tx.send(TaskResult::Unparsable {
                        host: id,
                        key,
                        entry,
                        reason,
                    });
                    return;
                }
            };
            let clock = Instant::now();
            let result = match &asking {
                Asking::Head => fetcher.head(&url).await,
                Asking::Parts(ranges) => fetcher.fetch_ranges(&url, ranges).await,
                Asking::Page => match &validators {
                    Some(validators) => fetcher.fetch_revisit(&url, validators).await,
                    None => fetcher.fetch(&url).await,
                },
            };
            let fetch_time = clock.elapsed();
            // A probe's answer, unless the server answered the parts with the whole page.
            let whole = matches!(&result, Ok(page) if page.status == 200);
            if matches!(asking, Asking::Head) || matches!(asking, Asking::Parts(_)) && !whole {
                let _ = tx.send(TaskResult::Probe {
                    host: id,
                    key,
                    entry,
                    result,
                });
                return;
            }
            // The page's result to the coordinator (through the judge, when it judges
            // it), from wherever it is ready.
            let finish = move |result, analysis, warc| {
                let page = TaskResult::Page {
                    host: id,
                    key,
                    entry,
                    result,
                    analysis,
                    fetch_time,
                    warc,
                };
                hand_over(to_judge.as_ref(), page, tx);
            };
            match result {
                Ok(page) if page.status == 200 && page.is_html_or_text() => {
                    // Rendered: judged and followed on what the browser shows (the WARC keeps
                    // the response as fetched).
                    let super::render::RenderedPage {
                        shown,
                        cost: rendered,
                        subresources,
                    } = match &render {
                        Some(stage) if !is_plain_text(&page) => stage.page(&page, &pages).await,
                        _ => Default::default(),
                    };
                    // The page goes to the blocking pool, which hands it to the coordinator
                    // itself rather than back to this task (a thread fewer woken per page). A
                    // panic in the analysis is caught there, so the page is never lost with
                    // it. (A closure the pool never starts is dropped with the runtime, when
                    // no coordinator waits for it: the page is fetched again on resuming.)
                    drop(tokio::task::spawn_blocking(move || {
                        let cpu = nearcrawl_dedup::thread_cpu_time();
                        let mut analysis =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                let read = (shown.as_ref(), &page);
                                analyse(&pages, read, focused, probing, ahead.as_ref())
                                    .with_links(seen_in.as_deref())
                            }))
                            .map_err(panic_message);
                        let preparing = Instant::now();
                        // Made on the coordinator instead when this fails.
                        let warc = warc_level.and_then(|level| {
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                let head = page.response_head();
                                let mut prepared =
                                    PreparedFetch::new(&warc_fetch(&page, &head), level);
                                // A rendered page: what the browser showed, beside the
                                // response as fetched.
                                if let Some(shown) = &shown {
                                    prepared.convert(page.url.as_str(), &shown.body, level);
                                }
                                // The responses its requests were answered with.
                                for fetched in &subresources {
                                    let head = fetched.response_head();
                                    prepared.add_fetch(&warc_fetch(fetched, &head), level);
                                }
                                prepared
                            }))
                            .ok()
                        });
                        if let (Ok(analysed), Some(reads)) = (&mut analysis, &index_reads) {
                            analysed.index_read = reads.read(&mut analysed.analysis);
                        }
                        if let Ok(analysed) = &mut analysis {
                            analysed.rendered = rendered;
                            if warc.is_some() {
                                analysed
                                    .analysis
                                    .times
                                    .add(Stage::Warc, preparing.elapsed());
                            }
                            // The pool runs below the coordinator (`crate::runtime`): its
                            // wall time includes waits for a core, so the page's stages
                            // are charged the thread's CPU time where it is known.
                            if let (Some(before), Some(after)) =
                                (cpu, nearcrawl_dedup::thread_cpu_time())
                            {
                                analysed.charge_cpu(after.saturating_sub(before));
                            }
                        }
                        finish(Ok(page), Some(analysis.map(Box::new)), warc);
                    }));
                }
                other => finish(other, None, None),
            }
        });
    }
}

/// Whether the page is plain text (not HTML: nothing to render or extract markup from).
fn is_plain_text(page: &Fetched) -> bool {
    (page.content_type()).is_some_and(|ct| ct.trim_start().starts_with("text/plain"))
}

/// What the blocking pool reads and works out of a page's judgement before the coordinator
/// judges it (a job judged against its own store).
struct Ahead {
    /// Its sentences' postings, and its candidates' units.
    postings: PostingsReader,
    /// Its exact keys read, and its verification against those candidates.
    prejudge: Prejudge,
}

/// A page's analysis: extracted (HTML, or plain text), its host's template removed,
/// tokenized and fingerprinted; with the time it took, and in a focused crawl its terms.
/// `(shown, fetched)`: what a browser showed of the page, when it was rendered (what is
/// analysed then), and the response as fetched (what a probe of a copy elsewhere, asking the
/// server for parts of it, is compared with).
fn analyse(
    pages: &PageAnalyzer,
    (shown, fetched): (Option<&Fetched>, &Fetched),
    focused: bool,
    probing: Probing,
    ahead: Option<&Ahead>,
) -> Analysed {
    let page = shown.unwrap_or(fetched);
    let clock = Instant::now();
    let content_type = page.content_type();
    let is_plain = is_plain_text(page);
    let extracted = if is_plain {
        Extracted::plain(String::from_utf8_lossy(&page.body).into_owned())
    } else {
        pages
            .analyzer()
            .extract_html(&page.body, content_type, &page.url)
    };
    let host = nearcrawl_frontier::authority(&page.url);
    let mut analysis = pages.analyze(&host, extracted);
    // Its sentences' postings, for its candidates, and what it can of its judgement: read
    // and worked out here, off the coordinator.
    let reading = Instant::now();
    let postings = match (ahead, &analysis.prepared) {
        (Some(ahead), Some(prepared)) => ahead.postings.prefetch(&prepared.sentences),
        _ => None,
    };
    let candidates = postings.as_ref().map(|p| p.candidates.as_slice());
    let prejudged =
        ahead.and_then(|ahead| ahead.prejudge.of(&analysis, candidates.unwrap_or_default()));
    if ahead.is_some() {
        analysis.times.add(Stage::Verify, reading.elapsed());
    }
    let took = clock.elapsed();
    let terms = focused.then(|| {
        let counting = Instant::now();
        let title = analysis.facts.as_ref().and_then(|f| f.title.as_deref());
        let terms = TermCounts::of(&format!("{}\n{}", title.unwrap_or_default(), analysis.text));
        analysis.times.add(Stage::Focus, counting.elapsed());
        terms
    });
    // Not timed with the analysis: the probes' cost, apart.
    let declared = probing.links.then(|| Declared {
        length: 0,
        shingles: match probing.samples
            && nearcrawl_dedup::keeps_shingles(fetched.body.len() as u64)
        {
            true => nearcrawl_dedup::shingle_filter(&fetched.body),
            false => Vec::new(),
        },
        // Set when the page is decided: the links it was the first to name.
        links: Vec::new(),
    });
    Analysed {
        analysis,
        took,
        terms,
        declared,
        postings,
        prejudged,
        pattern: CanonicalUrl::from_url(page.url.clone())
            .ok()
            .map(|url| nearcrawl_frontier::UrlPattern::of(&url)),
        seen: None,
        canonical_links: None,
        judged: None,
        rendered: None,
        index_read: None,
    }
}

impl Analysed {
    /// Works out its links' canonical URLs, and which of them `store` has seen
    /// ([`SeenLinks`]), when given one.
    fn with_links(mut self, store: Option<&dyn CrawlStore>) -> Analysed {
        let Some(facts) = &self.analysis.facts else {
            return self;
        };
        let canonical: Vec<Option<CanonicalUrl>> = facts
            .links
            .iter()
            .map(|link| CanonicalUrl::from_url(link.url.clone()).ok())
            .collect();
        if let Some(store) = store {
            self.seen = Some(SeenLinks::read(store, canonical.iter().flatten()));
        }
        self.canonical_links = Some(canonical);
        self
    }

    /// Brings its stages and its time down to `cpu` of CPU time in all, in proportion
    /// ([`nearcrawl_dedup::StageTimes::charge_cpu`]).
    fn charge_cpu(&mut self, cpu: Duration) {
        let share = self.analysis.times.charge_cpu(cpu);
        self.took = self.took.mul_f64(share);
    }
}

/// What a task asks a server for.
enum Asking {
    /// A probe's HEAD.
    Head,
    /// A probe's sample: these byte ranges.
    Parts(Vec<(u64, u64)>),
    /// The page.
    Page,
}

/// What a page's analysis keeps for the probes of its counterparts (`probe_links`).
#[derive(Clone, Copy)]
pub(super) struct Probing {
    /// Its `Content-Length` and the links it names first (set when it is decided).
    links: bool,
    /// The shingles of its text, when large.
    samples: bool,
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
    use nearcrawl_store::{Commit, MemoryStore};

    use super::*;

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

    fn link(url: &str) -> nearcrawl_extract::Link {
        nearcrawl_extract::Link {
            url: Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}")),
            text: String::new(),
            nofollow: false,
            context: String::new(),
        }
    }

    /// The links a page's analysis finds seen are those the store has seen, by the key of
    /// their canonical URL (the key the coordinator looks them up by).
    #[test]
    fn the_links_found_seen_are_the_stores() {
        let store = MemoryStore::default();
        let seen = CanonicalUrl::parse("http://a.test/seen#part").unwrap_or_else(|e| panic!("{e}"));
        store
            .commit(Commit {
                seen: vec![url_key(seen.as_str())],
                ..Commit::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let links = [
            link("http://a.test/seen"),
            link("HTTP://A.TEST/seen#other"),
            link("http://a.test/new"),
        ];
        let canonical: Vec<CanonicalUrl> = links
            .iter()
            .map(|l| CanonicalUrl::from_url(l.url.clone()).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        let found = SeenLinks::read(&store, canonical.iter());
        assert!(found.contains(&url_key(seen.as_str())));
        let new = CanonicalUrl::parse("http://a.test/new").unwrap_or_else(|e| panic!("{e}"));
        assert!(!found.contains(&url_key(new.as_str())));
        assert_eq!(found.0.len(), 1);
    }
}
