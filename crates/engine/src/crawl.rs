//! The crawl loop: one coordinator owns the frontier, the index and the store; fetches and
//! page analysis run as tasks and report back. Every decision is one store commit, then one
//! line of `records.jsonl`.

use std::collections::HashSet;
use std::future::Future;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use nearcrawl_dedup::{
    Analyzer, AnalyzerConfig, DedupStage, Extracted, Follow, Originals, PageAnalysis,
};
use nearcrawl_extract::{Sitemap, read_sitemap};
use nearcrawl_fetch::{Fetch, FetchFailure, Fetched, Fetcher, RobotsFetch};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_frontier::{CanonicalUrl, HostOutcome, OutOfScope, Relevance, Scope, Seed};
use nearcrawl_store::{
    Commit, CrawlStore, FjallStore, HostId, QueueKey, QueuedUrl, UniquePage, UrlKey, url_key,
};
use nearcrawl_text::ExactKey;
use tokio::sync::mpsc;
use tracing::{debug, info, warn};
use url::Url;

use crate::config::CrawlConfig;
use crate::error::EngineError;
use crate::frontier::{Frontier, FrontierConfig, Step, StoreFrontier};
use crate::output::RecordsFile;
use crate::progress::Progress;
use crate::record::{Record, Verdict, rfc3339};
use crate::report::Report;
use crate::warc::{Original, WarcFetch, WarcWriter};

/// URLs read from one sitemap file at most (the sitemaps.org limit).
const MAX_SITEMAP_URLS: usize = 50_000;

/// Tag of index payloads that point into the shared index rather than this job's records.
const SHARED: u64 = 1 << 63;

/// A crawl job: seeds, where its state and outputs go, and how it runs.
#[derive(Debug, Clone)]
pub struct Job {
    /// The seed URLs.
    pub seeds: Vec<Seed>,
    /// The output directory: `records.jsonl`, `report.json`, `warc/`, `state/`.
    pub out_dir: PathBuf,
    /// Scope, limits, politeness, fetching, focus, links, dedup stage, outputs.
    pub config: CrawlConfig,
    /// How pages are analysed and compared.
    pub analyzer: AnalyzerConfig,
    /// An index shared across jobs (`--index PATH`, a directory): its pages count as already
    /// crawled, and this job's unique pages are added to it when the job ends.
    pub shared_index: Option<PathBuf>,
}

/// Runs `job` until its frontier is empty, a limit is reached, or `shutdown` completes;
/// then flushes and writes the report. Running it again on the same `out_dir` resumes.
///
/// The job's state is a fjall store in `out_dir/state`, and pages are fetched over HTTP with
/// the job's address policy; [`crawl_with`] takes other parts.
pub async fn crawl(
    job: Job,
    shutdown: impl Future<Output = ()>,
    progress: Arc<Progress>,
) -> Result<Report, EngineError> {
    // Check the configuration and the shared index before creating anything on disk.
    let scope = Scope::new(&job.config.scope, &job.seeds)?;
    let shared = load_shared(&job)?;
    std::fs::create_dir_all(&job.out_dir).map_err(|e| EngineError::io(&job.out_dir, e))?;
    let store = Arc::new(FjallStore::open(&job.out_dir.join("state"))?);
    let fetcher = Fetcher::new(job.config.fetch.clone(), scope.addresses().clone())
        .map_err(EngineError::HttpClient)?;
    let parts = Parts {
        store,
        fetcher: Arc::new(fetcher),
    };
    run_job(job, parts, shared, shutdown, progress).await
}

/// The swappable parts of a crawl: where its state lives and how pages are fetched.
pub struct Parts {
    /// The job's state (queues, seen set, decisions, kept pages).
    pub store: Arc<dyn CrawlStore>,
    /// HTTP, or a scripted stand-in.
    pub fetcher: Arc<dyn Fetch>,
}

/// [`crawl`] with the store and fetcher given. Scheduling reads time from tokio's clock
/// ([`tokio::time::Instant`]), so a test with paused time runs politeness delays instantly.
/// `job.out_dir` still receives `records.jsonl`, `report.json` and the WARC files.
pub async fn crawl_with(
    job: Job,
    parts: Parts,
    shutdown: impl Future<Output = ()>,
    progress: Arc<Progress>,
) -> Result<Report, EngineError> {
    let shared = load_shared(&job)?;
    run_job(job, parts, shared, shutdown, progress).await
}

/// The entries and URLs of the job's shared index (empty without one).
fn load_shared(job: &Job) -> Result<crate::shared::SharedIndex, EngineError> {
    match &job.shared_index {
        Some(dir) => crate::shared::load(dir),
        None => Ok((Vec::new(), Vec::new())),
    }
}

async fn run_job(
    job: Job,
    parts: Parts,
    shared: crate::shared::SharedIndex,
    shutdown: impl Future<Output = ()>,
    progress: Arc<Progress>,
) -> Result<Report, EngineError> {
    let mut coordinator = Coordinator::open(job, parts, shared, progress)?;
    coordinator.run(shutdown).await?;
    coordinator.finish()
}

/// Now, by the scheduling clock: tokio's, so paused time in tests pauses politeness too.
fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// What a task reports back. Each result moves once through the channel, so the size
/// difference between variants costs nothing worth an allocation per page.
#[allow(clippy::large_enum_variant)]
enum TaskResult {
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
    },
}

struct Coordinator {
    job: Job,
    store: Arc<dyn CrawlStore>,
    scope: Scope,
    relevance: Option<Relevance>,
    fetcher: Arc<dyn Fetch>,
    /// The dedup stage: templates, index, sentence candidates, verification.
    stage: DedupStage,
    /// URLs of the shared index's pages; their index payloads are `SHARED | position`.
    shared_urls: Vec<String>,
    /// Which URL is fetched next: queues, politeness, robots.txt, leases.
    frontier: Box<dyn Frontier + Send>,
    next_seq: u64,
    pages_fetched: u64,
    robots_bytes: u64,
    records: RecordsFile,
    warc: Option<WarcWriter>,
    limiter: Option<DefaultDirectRateLimiter>,
    in_flight: usize,
    stopping: bool,
    progress: Arc<Progress>,
    tx: mpsc::UnboundedSender<TaskResult>,
    rx: mpsc::UnboundedReceiver<TaskResult>,
    started: SystemTime,
}

impl Coordinator {
    fn open(
        job: Job,
        parts: Parts,
        (shared_entries, shared_urls): crate::shared::SharedIndex,
        progress: Arc<Progress>,
    ) -> Result<Coordinator, EngineError> {
        let scope = Scope::new(&job.config.scope, &job.seeds)?;
        std::fs::create_dir_all(&job.out_dir).map_err(|e| EngineError::io(&job.out_dir, e))?;
        let Parts { store, fetcher } = parts;
        let relevance = Relevance::new(&job.config.focus);
        let analyzer = Arc::new(Analyzer::new(job.analyzer.clone()));
        let uniques = store.unique_pages()?;
        let k = job.analyzer.max_distance;
        let stage = DedupStage::new(
            analyzer,
            job.config.dedup.clone(),
            uniques.iter().map(|u| (Fingerprint::new(u.simhash), u.seq)),
            shared_entries,
            SHARED,
        )
        .map_err(|source| EngineError::IndexDesign {
            max_distance: k,
            source,
        })?;
        let next_seq = store.counter("next_seq")?.unwrap_or(0);
        let next_order = store.counter("next_order")?.unwrap_or(0);
        let frontier = StoreFrontier::open(
            Arc::clone(&store),
            FrontierConfig {
                politeness: job.config.politeness.clone(),
                obey_robots: job.config.links.obey_robots,
                max_pages_per_host: job.config.limits.max_pages_per_host,
            },
            next_order,
            now(),
        )?;
        let pages_fetched = store.counter("pages_fetched")?.unwrap_or(0);
        let robots_bytes = store.counter("robots_bytes")?.unwrap_or(0);
        let run = store.counter("runs")?.unwrap_or(0);
        store.commit(Commit {
            counters: vec![("runs", run + 1)],
            ..Commit::default()
        })?;
        let records =
            RecordsFile::open(&job.out_dir.join("records.jsonl"), store.as_ref(), next_seq)?;
        let warc = if job.config.output.warc {
            let dir = job.out_dir.join("warc");
            Some(
                WarcWriter::new(&dir, run, job.config.output.warc_max_bytes)
                    .map_err(|e| EngineError::io(&dir, e))?,
            )
        } else {
            None
        };
        let limiter = NonZeroU32::new(job.config.politeness.global_requests_per_second)
            // No bursts: the cap holds over any second, not on average.
            .map(|rate| RateLimiter::direct(Quota::per_second(rate).allow_burst(NonZeroU32::MIN)));
        let (tx, rx) = mpsc::unbounded_channel();
        let mut coordinator = Coordinator {
            job,
            store,
            scope,
            relevance,
            fetcher,
            stage,
            shared_urls,
            frontier: Box::new(frontier),
            next_seq,
            pages_fetched,
            robots_bytes,
            records,
            warc,
            limiter,
            in_flight: 0,
            stopping: false,
            progress,
            tx,
            rx,
            started: SystemTime::now(),
        };
        if coordinator.stage.analyzer().config().verify {
            coordinator.rebuild_sentences(&uniques)?;
        }
        if next_seq == 0 && coordinator.store.hosts()?.is_empty() {
            coordinator.enqueue_seeds()?;
        } else {
            info!(decided = next_seq, "resuming job");
        }
        Ok(coordinator)
    }

    /// On resume: the sentence index from the stored texts of unique pages.
    fn rebuild_sentences(&mut self, uniques: &[UniquePage]) -> Result<(), EngineError> {
        for page in uniques {
            let (Some(text), Some(record)) =
                (self.store.unique_text(page.seq)?, self.record_of(page.seq)?)
            else {
                continue;
            };
            let Ok(url) = Url::parse(&record.url) else {
                continue;
            };
            self.stage
                .restore(page.seq, &nearcrawl_frontier::authority(&url), &text);
        }
        Ok(())
    }

    fn enqueue_seeds(&mut self) -> Result<(), EngineError> {
        let mut commit = Commit::default();
        let mut pending = HashSet::new();
        let seeds = self.job.seeds.clone();
        for seed in &seeds {
            let entry = QueuedUrl {
                url: seed.url.to_string(),
                depth: 0,
                ..QueuedUrl::default()
            };
            self.queue(&mut commit, &mut pending, &seed.url, entry, 0)?;
        }
        self.apply(commit, Vec::new())
    }

    /// Adds `url` to `commit` as queued at `priority`, and to this decision's `pending` URLs.
    fn queue(
        &mut self,
        commit: &mut Commit,
        pending: &mut HashSet<UrlKey>,
        url: &CanonicalUrl,
        entry: QueuedUrl,
        priority: u32,
    ) -> Result<(), EngineError> {
        pending.insert(url_key(url.as_str()));
        self.frontier.enqueue(commit, url, entry, priority)
    }

    fn is_seen(&self, key: &UrlKey, pending: &HashSet<UrlKey>) -> Result<bool, EngineError> {
        Ok(pending.contains(key) || self.frontier.is_seen(key)?)
    }

    /// Commits a decision and appends its records to `records.jsonl`.
    fn apply(&mut self, mut commit: Commit, records: Vec<Record>) -> Result<(), EngineError> {
        let lines: Vec<Vec<u8>> = records
            .iter()
            // A record holds strings and numbers only: serialising cannot fail.
            .map(|record| serde_json::to_vec(record).unwrap_or_default())
            .collect();
        commit
            .records
            .extend(records.iter().map(|r| r.seq).zip(lines.iter().cloned()));
        commit.counters.extend([
            ("next_seq", self.next_seq),
            ("next_order", self.frontier.next_order()),
            ("pages_fetched", self.pages_fetched),
            ("robots_bytes", self.robots_bytes),
        ]);
        let queued_delta = commit.enqueued.len() as i64 - commit.taken.len() as i64;
        self.store.commit(commit)?;
        let queued = Progress::get(&self.progress.queued) as i64 + queued_delta;
        Progress::set(&self.progress.queued, queued.max(0) as u64);
        for (record, line) in records.iter().zip(&lines) {
            self.records.append(line)?;
            Progress::add(&self.progress.decisions, 1);
            if record.verdict == Verdict::Error {
                Progress::add(&self.progress.errors, 1);
            }
        }
        Ok(())
    }

    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    async fn run(&mut self, shutdown: impl Future<Output = ()>) -> Result<(), EngineError> {
        tokio::pin!(shutdown);
        loop {
            let now = now();
            let wake = self.launch_ready(now)?;
            self.records.flush()?;
            if self.in_flight == 0 && (self.stopping || wake.is_none()) {
                return Ok(());
            }
            let sleep_until = wake.unwrap_or(now + Duration::from_secs(3600));
            tokio::select! {
                result = self.rx.recv() => {
                    if let Some(result) = result {
                        self.in_flight -= 1;
                        Progress::set(&self.progress.in_flight, self.in_flight as u64);
                        self.handle(result)?;
                    }
                }
                _ = tokio::time::sleep_until(sleep_until.into()) => {}
                _ = &mut shutdown, if !self.stopping => {
                    info!("stopping: waiting for requests in flight");
                    self.stopping = true;
                }
            }
        }
    }

    fn page_limit_reached(&self) -> bool {
        self.job
            .config
            .limits
            .max_pages
            .is_some_and(|max| self.pages_fetched + self.in_flight as u64 >= max)
    }

    /// Starts every request that may start now. Returns when to look again: `None` when no
    /// host has work left (or the job is stopping).
    fn launch_ready(&mut self, now: Instant) -> Result<Option<Instant>, EngineError> {
        if self.stopping || self.page_limit_reached() {
            return Ok(None);
        }
        let concurrency = self.job.config.concurrency();
        self.frontier.begin_round(now);
        loop {
            if self.in_flight >= concurrency || self.page_limit_reached() {
                // Busy: look again when a request finishes.
                return Ok(Some(self.frontier.round_wake(now)));
            }
            let limiter = &self.limiter;
            let mut gate = || {
                let not_until = limiter.as_ref()?.check().err()?;
                let clock = governor::clock::DefaultClock::default();
                Some(now + not_until.wait_time_from(governor::clock::Clock::now(&clock)))
            };
            match self.frontier.next(now, &mut gate)? {
                Step::Wait(wake) => return Ok(wake),
                Step::Robots { host, origin } => self.spawn_robots(host, origin),
                Step::Fetch {
                    host,
                    key,
                    entry,
                    url,
                } => self.spawn_page(host, key, entry, url),
                Step::Refuse {
                    key,
                    entry,
                    verdict,
                    reason,
                } => {
                    debug!(url = %entry.url, %reason, "not fetched");
                    let mut record = self.new_record(&entry, verdict);
                    record.error = Some(reason);
                    let commit = Commit {
                        taken: vec![key],
                        ..Commit::default()
                    };
                    self.apply(commit, vec![record])?;
                }
            }
        }
    }

    /// Fetches a host's robots.txt in a task of its own.
    fn spawn_robots(&mut self, host: HostId, origin: Url) {
        self.in_flight += 1;
        let fetcher = Arc::clone(&self.fetcher);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let fetch = fetcher.fetch_robots(&origin).await;
            let _ = tx.send(TaskResult::Robots { host, fetch });
        });
    }

    /// Fetches a page in a task of its own, and analyses it on the blocking pool.
    fn spawn_page(&mut self, id: HostId, key: QueueKey, entry: QueuedUrl, url: Url) {
        self.in_flight += 1;
        Progress::set(&self.progress.in_flight, self.in_flight as u64);
        let fetcher = Arc::clone(&self.fetcher);
        let pages = self.stage.page_analyzer();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = fetcher.fetch(&url).await;
            let analysis = match &result {
                Ok(page) if page.status == 200 && page.is_html_or_text() => {
                    let body = page.body.clone();
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
                        (pages.analyze(&host, extracted), clock.elapsed())
                    })
                    .await;
                    Some(analysed.map_err(|e| panic_message(e.into_panic())))
                }
                _ => None,
            };
            let _ = tx.send(TaskResult::Page {
                host: id,
                key,
                entry,
                result,
                analysis,
            });
        });
    }

    fn new_record(&mut self, entry: &QueuedUrl, verdict: Verdict) -> Record {
        let seq = self.take_seq();
        let mut record = Record::new(seq, entry.url.clone(), entry.depth, verdict);
        record.parent = entry.parent;
        record.retries = (entry.attempts > 0).then_some(entry.attempts);
        record
    }

    fn handle(&mut self, result: TaskResult) -> Result<(), EngineError> {
        match result {
            TaskResult::Robots { host, fetch } => self.handle_robots(host, fetch),
            TaskResult::Page {
                host,
                key,
                entry,
                result,
                analysis,
            } => match result {
                Ok(page) => self.handle_page(host, key, entry, page, analysis),
                Err(failure) => self.handle_failure(host, key, entry, failure),
            },
        }
    }

    fn handle_robots(&mut self, id: HostId, fetch: RobotsFetch) -> Result<(), EngineError> {
        let now = now();
        let bytes: u64 = fetch.responses.iter().map(|r| r.wire_bytes).sum();
        self.robots_bytes += bytes;
        Progress::add(&self.progress.bytes, bytes);
        for response in &fetch.responses {
            self.archive(response, None, &[("robots-txt", "true".to_string())])?;
        }
        let ttl = Duration::from_secs(self.job.config.fetch.robots_ttl_secs);
        if fetch.rules.is_unavailable() {
            warn!(host = id, source = ?fetch.rules.source, "robots.txt unavailable; host waits");
            if self.frontier.robots_failed(id, now) {
                let reason = format!(
                    "host parked: robots.txt unavailable ({:?})",
                    fetch.rules.source
                );
                self.drain_host(id, Verdict::RobotsDisallowed, &reason)?;
            }
        } else {
            debug!(host = id, source = ?fetch.rules.source, delay = ?fetch.rules.crawl_delay, "robots.txt");
            let sitemaps = fetch.rules.sitemaps.clone();
            self.frontier.robots_read(id, fetch.rules, now, ttl);
            if self.job.config.links.sitemaps {
                return self.queue_sitemaps(&sitemaps);
            }
        }
        // Stores the robots.txt byte count.
        self.apply(Commit::default(), Vec::new())
    }

    /// Queues the `Sitemap:` URLs of a robots.txt (each once per job, scope permitting).
    fn queue_sitemaps(&mut self, sitemaps: &[String]) -> Result<(), EngineError> {
        let mut commit = Commit::default();
        let mut pending = HashSet::new();
        for raw in sitemaps {
            let Ok(url) = CanonicalUrl::parse(raw) else {
                continue;
            };
            let ukey = url_key(url.as_str());
            if self.is_seen(&ukey, &pending)? || self.scope.check(&url, 0).is_err() {
                continue;
            }
            let entry = QueuedUrl {
                url: url.to_string(),
                sitemap: true,
                ..QueuedUrl::default()
            };
            self.queue(&mut commit, &mut pending, &url, entry, 0)?;
        }
        self.apply(commit, Vec::new())
    }

    /// A fetched sitemap: its URLs are queued like seeds, a sitemap index's like sitemaps.
    fn decide_sitemap(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        record: &mut Record,
        commit: &mut Commit,
    ) -> Result<(), EngineError> {
        record.verdict = Verdict::Sitemap;
        // `.xml.gz` files are usually served as gzip data, not with a Content-Encoding.
        let body = if page.body.starts_with(&[0x1f, 0x8b]) {
            match nearcrawl_fetch::decode_content(
                Some("gzip"),
                &page.body,
                self.job.config.fetch.max_body_bytes,
            ) {
                Ok((body, _)) => body,
                Err(e) => {
                    record.verdict = Verdict::Error;
                    record.error = Some(format!("sitemap: {e}"));
                    return Ok(());
                }
            }
        } else {
            page.body.clone()
        };
        let Some(sitemap) = read_sitemap(&String::from_utf8_lossy(&body)) else {
            record.verdict = Verdict::Error;
            record.error = Some("not a sitemap (no urlset or sitemapindex)".into());
            return Ok(());
        };
        let (locs, nested) = match sitemap {
            Sitemap::Pages(locs) => (locs, false),
            Sitemap::Index(locs) => (locs, true),
        };
        record.outlinks = Some(locs.len() as u32);
        let mut pending = HashSet::new();
        let mut enqueued = 0;
        for loc in locs.iter().take(MAX_SITEMAP_URLS) {
            let Ok(url) = CanonicalUrl::parse(loc) else {
                continue;
            };
            let ukey = url_key(url.as_str());
            if self.is_seen(&ukey, &pending)? || self.scope.check(&url, entry.depth).is_err() {
                continue;
            }
            let next = QueuedUrl {
                url: url.to_string(),
                depth: entry.depth,
                parent: Some(record.seq),
                sitemap: nested,
                ..QueuedUrl::default()
            };
            let priority = if nested || self.relevance.is_some() {
                0
            } else {
                entry.depth
            };
            self.queue(commit, &mut pending, &url, next, priority)?;
            enqueued += 1;
        }
        record.enqueued = Some(enqueued);
        Ok(())
    }

    /// Records every queued URL of a parked host, so none is retried forever or lost silently.
    fn drain_host(
        &mut self,
        id: HostId,
        verdict: Verdict,
        reason: &str,
    ) -> Result<(), EngineError> {
        let drained = self.frontier.drain(id)?;
        if drained.is_empty() {
            return Ok(());
        }
        let mut commit = Commit::default();
        let mut records = Vec::new();
        for (key, entry) in drained {
            commit.taken.push(key);
            let mut record = self.new_record(&entry, verdict);
            record.error = Some(reason.to_string());
            records.push(record);
        }
        self.apply(commit, records)
    }

    fn handle_failure(
        &mut self,
        id: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        failure: FetchFailure,
    ) -> Result<(), EngineError> {
        let now = now();
        Progress::add(&self.progress.bytes, failure.wire_bytes);
        let parked = self
            .frontier
            .finished(id, Some(key), HostOutcome::Failed, now);
        if failure.kind.is_transient()
            && entry.attempts < self.job.config.fetch.max_retries
            && !parked
        {
            debug!(url = %entry.url, error = %failure.message, "transient failure, will retry");
            return self.requeue(key, entry);
        }
        let mut record = self.new_record(&entry, Verdict::Error);
        record.bytes = failure.wire_bytes;
        record.error = Some(format!("{:?}: {}", failure.kind, failure.message));
        record.fetched_at = Some(rfc3339(SystemTime::now()));
        self.apply(
            Commit {
                taken: vec![key],
                ..Commit::default()
            },
            vec![record],
        )?;
        if parked {
            let reason = format!(
                "host parked after repeated failures (last: {})",
                failure.message
            );
            self.drain_host(id, Verdict::Error, &reason)?;
        }
        Ok(())
    }

    /// Puts a URL back at the end of its host's queue for another attempt.
    fn requeue(&mut self, key: QueueKey, entry: QueuedUrl) -> Result<(), EngineError> {
        let mut commit = Commit::default();
        self.frontier.requeue(&mut commit, key, entry);
        self.apply(commit, Vec::new())
    }

    fn handle_page(
        &mut self,
        id: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        page: Fetched,
        analysis: Option<Result<(PageAnalysis, Duration), String>>,
    ) -> Result<(), EngineError> {
        let now = now();
        let outcome = match page.status {
            429 | 503 => HostOutcome::Throttled {
                retry_after: page.retry_after(),
            },
            _ => HostOutcome::Answered,
        };
        let parked = self.frontier.finished(id, Some(key), outcome, now);
        self.pages_fetched += 1;
        Progress::add(&self.progress.pages, 1);
        Progress::add(&self.progress.bytes, page.wire_bytes);

        let retryable = matches!(page.status, 429 | 500 | 502 | 503 | 504);
        if retryable && entry.attempts < self.job.config.fetch.max_retries && !parked {
            self.archive(&page, None, &[])?;
            debug!(url = %entry.url, status = page.status, "server asked to wait, will retry");
            return self.requeue(key, entry);
        }

        let mut record = self.new_record(&entry, Verdict::Error);
        record.status = Some(page.status);
        record.bytes = page.wire_bytes;
        record.content_type = page.content_type().map(str::to_owned);
        record.truncated = page.truncated;
        record.fetched_at = Some(rfc3339(page.started));
        let mut commit = Commit {
            taken: vec![key],
            ..Commit::default()
        };
        let mut extra_records = Vec::new();

        if (300..400).contains(&page.status) && page.status != 304 {
            record.verdict = Verdict::Redirect;
            self.decide_redirect(&page, &entry, &mut record, &mut commit, &mut extra_records)?;
            self.archive(&page, None, &[("verdict", "redirect".into())])?;
        } else if page.status != 200 {
            record.error = Some(format!("HTTP {}", page.status));
            self.archive(&page, None, &[("verdict", "error".into())])?;
        } else if entry.sitemap {
            self.decide_sitemap(&page, &entry, &mut record, &mut commit)?;
            self.archive(&page, None, &[("verdict", record.verdict.as_str().into())])?;
        } else if let Some(Err(panic)) = analysis {
            record.error = Some(format!("page analysis panicked: {panic}"));
            self.archive(&page, None, &[("verdict", "error".into())])?;
        } else if let Some(Ok((analysis, took))) = analysis {
            self.decide_page(
                &page,
                &entry,
                analysis,
                took,
                &mut record,
                &mut commit,
                &mut extra_records,
            )?;
        } else {
            record.verdict = Verdict::NotHtml;
            self.archive(&page, None, &[("verdict", "not-html".into())])?;
        }
        let mut records = vec![record];
        records.extend(extra_records);
        self.apply(commit, records)?;
        if parked {
            self.drain_host(
                id,
                Verdict::Error,
                "host parked after repeated 429/503 answers",
            )?;
        }
        Ok(())
    }

    fn decide_redirect(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        record: &mut Record,
        commit: &mut Commit,
        extra: &mut Vec<Record>,
    ) -> Result<(), EngineError> {
        let target = match page.location() {
            None => {
                record.error = Some("redirect without Location".into());
                return Ok(());
            }
            Some(Err(e)) => {
                record.error = Some(e);
                return Ok(());
            }
            Some(Ok(target)) => target,
        };
        let target = match CanonicalUrl::from_url(target) {
            Ok(t) => t,
            Err(e) => {
                record.error = Some(format!("redirect target: {e}"));
                return Ok(());
            }
        };
        record.final_url = Some(target.to_string());
        record.enqueued = Some(0);
        if entry.redirects >= self.job.config.fetch.max_redirects {
            record.verdict = Verdict::Error;
            record.error = Some(format!(
                "more than {} redirects",
                self.job.config.fetch.max_redirects
            ));
            return Ok(());
        }
        let ukey = url_key(target.as_str());
        let mut pending = HashSet::new();
        if self.is_seen(&ukey, &pending)? {
            // A loop, or a target reached another way: decided (or queued) once already.
            return Ok(());
        }
        if let Err(reason) = self.scope.check(&target, entry.depth) {
            self.record_out_of_scope(
                &target,
                ukey,
                entry.depth,
                record.seq,
                &reason,
                commit,
                extra,
            );
            return Ok(());
        }
        let next = QueuedUrl {
            url: target.to_string(),
            depth: entry.depth,
            parent: Some(record.seq),
            redirects: entry.redirects + 1,
            ..QueuedUrl::default()
        };
        let priority = self.priority_of(entry, 0.0, "");
        self.queue(commit, &mut pending, &target, next, priority)?;
        record.enqueued = Some(1);
        Ok(())
    }

    /// Decides a discovered URL out of scope: a record of its own, and marked seen so it is
    /// recorded once.
    #[allow(clippy::too_many_arguments)]
    fn record_out_of_scope(
        &mut self,
        url: &CanonicalUrl,
        key: UrlKey,
        depth: u32,
        parent: u64,
        reason: &OutOfScope,
        commit: &mut Commit,
        extra: &mut Vec<Record>,
    ) {
        let mut out = Record::new(self.take_seq(), url.to_string(), depth, Verdict::OutOfScope);
        out.parent = Some(parent);
        out.error = Some(reason.to_string());
        commit.seen.push(key);
        extra.push(out);
    }

    /// The queue priority of a link found on a page of relevance `page_score`: its depth for
    /// breadth-first crawls, its relevance for focused ones.
    fn priority_of(&self, parent: &QueuedUrl, page_score: f32, anchor: &str) -> u32 {
        match &self.relevance {
            Some(relevance) => relevance.link_priority(page_score, anchor),
            None => parent.depth + 1,
        }
    }

    /// The stored record of an earlier decision.
    fn record_of(&self, seq: u64) -> Result<Option<Record>, EngineError> {
        Ok(self
            .store
            .record(seq)?
            .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
    }

    #[allow(clippy::too_many_arguments)]
    fn decide_page(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        analysis: PageAnalysis,
        analysis_time: Duration,
        record: &mut Record,
        commit: &mut Commit,
        extra: &mut Vec<Record>,
    ) -> Result<(), EngineError> {
        let clock = Instant::now();
        let seq = record.seq;
        let host = nearcrawl_frontier::authority(&page.url);
        let judgement = self
            .stage
            .judge_analysed(analysis, &StoreOriginals(self.store.as_ref()))?;
        let analysis = &judgement.analysis;
        record.simhash = Some(format!("{:016x}", analysis.simhash.bits()));
        let (header_noindex, header_nofollow) =
            page.x_robots_tag(self.job.config.fetch.robots_agent());
        let meta = analysis
            .facts
            .as_ref()
            .map(|f| f.robots)
            .unwrap_or_default();
        let nofollow = header_nofollow || meta.nofollow;
        if header_noindex || meta.noindex {
            record.robots.push("noindex".into());
        }
        if nofollow {
            record.robots.push("nofollow".into());
        }
        let title = analysis
            .facts
            .as_ref()
            .and_then(|f| f.title.clone())
            .unwrap_or_default();
        let relevance = self
            .relevance
            .as_ref()
            .map(|r| r.score(&format!("{title}\n{}", analysis.text)));
        record.relevance = relevance;

        // The original's record, read once: its URL and payload digest.
        let original = match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(seq)) => self.record_of(seq)?,
            _ => None,
        };
        record.verdict = Verdict::from(judgement.verdict);
        match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(of)) => {
                record.duplicate_of = original.as_ref().map(|r| r.url.clone());
                record.cluster = Some(of);
            }
            Some(nearcrawl_dedup::Original::Shared(n)) => {
                record.duplicate_of = self.shared_urls.get(n as usize).cloned();
            }
            None => record.cluster = Some(seq),
        }
        if judgement.verdict == nearcrawl_dedup::Verdict::Unique {
            let admission = self.stage.admit(seq, &host, &judgement);
            if let Some((simhash, key)) = admission.fingerprint {
                commit.unique = Some(UniquePage {
                    seq,
                    simhash: simhash.bits(),
                });
                commit.exact_key = Some((key.0.to_be_bytes(), seq));
            }
            commit.unique_text = admission.text.map(|text| (seq, text));
            commit.unique_anchors = admission.anchors.map(|anchors| (seq, anchors));
        } else {
            record.distance = judgement.distance;
            record.similarity = judgement
                .similarity
                .map(|similarity| (similarity * 1000.0).round() / 1000.0);
            Progress::add(&self.progress.duplicates, 1);
            debug!(url = %entry.url, original = ?record.duplicate_of, distance = ?record.distance, "duplicate");
        }
        record.dedup_us = Some((analysis_time + clock.elapsed()).as_micros() as u64);
        Progress::add(&self.progress.dedup_micros, record.dedup_us.unwrap_or(0));

        // Outlinks: followed for unique pages; for duplicates only when configured or in the
        // `--no-dedup` baseline.
        let follow = &judgement.follow;
        let expands = match (&self.relevance, relevance) {
            (Some(r), Some(score)) => r.expands(score),
            _ => true,
        };
        let mut links: Vec<(Url, String, bool)> = Vec::new();
        if let Some(facts) = &analysis.facts {
            links.extend(
                facts
                    .links
                    .iter()
                    .map(|l| (l.url.clone(), l.text.clone(), l.nofollow)),
            );
            if let Some(canonical) = facts
                .canonical
                .as_ref()
                .and_then(|c| CanonicalUrl::from_url(c.clone()).ok())
                && canonical.as_str() != entry.url
            {
                record.canonical = Some(canonical.to_string());
                if self.job.config.links.follow_canonical {
                    links.push((canonical.into_url(), String::new(), false));
                }
            }
        }
        record.outlinks = Some(links.len() as u32);
        let (mut enqueued, mut dropped) = (0u32, 0u32);
        let mut pending = HashSet::new();
        // A baseline crawl keeps its whole in-scope link graph, for the exact what-if.
        let baseline = !self.job.config.dedup.enabled;
        let mut graph: Vec<String> = Vec::new();
        if !nofollow && expands {
            let follow_nofollow = self.job.config.links.follow_nofollow;
            let page_score = relevance.unwrap_or(0.0);
            for (link, anchor, link_nofollow) in links {
                if link_nofollow && !follow_nofollow {
                    continue;
                }
                let Ok(url) = CanonicalUrl::from_url(link) else {
                    continue;
                };
                if baseline
                    && self.scope.check(&url, entry.depth + 1).is_ok()
                    && !graph.iter().any(|g| g == url.as_str())
                {
                    graph.push(url.to_string());
                }
                let ukey = url_key(url.as_str());
                if self.is_seen(&ukey, &pending)? {
                    continue;
                }
                pending.insert(ukey);
                let skip = !follow.follows(&anchor);
                match self.scope.check(&url, entry.depth + 1) {
                    // A duplicate's links were never really discovered: no records for them.
                    Err(_) if skip => {}
                    Err(reason) => self.record_out_of_scope(
                        &url,
                        ukey,
                        entry.depth + 1,
                        seq,
                        &reason,
                        commit,
                        extra,
                    ),
                    Ok(()) if skip => {
                        commit.dropped.push(ukey);
                        dropped += 1;
                    }
                    Ok(()) => {
                        let next = QueuedUrl {
                            url: url.to_string(),
                            depth: entry.depth + 1,
                            parent: Some(seq),
                            ..QueuedUrl::default()
                        };
                        let priority = self.priority_of(entry, page_score, &anchor);
                        self.queue(commit, &mut pending, &url, next, priority)?;
                        enqueued += 1;
                    }
                }
            }
        }
        record.enqueued = Some(enqueued);
        if baseline {
            record.links = Some(graph);
        }
        if *follow != Follow::All {
            record.dropped = Some(dropped);
            Progress::add(&self.progress.dropped_outlinks, u64::from(dropped));
        }

        // The archive: a byte-identical exact duplicate is a revisit of its original.
        let digest = WarcWriter::digest(&page.wire_body);
        let revisit = original.as_ref().filter(|o| {
            record.verdict == Verdict::Exact && o.payload_digest.as_deref() == Some(digest.as_str())
        });
        let mut metadata = vec![
            ("simhash", record.simhash.clone().unwrap_or_default()),
            ("verdict", record.verdict.as_str().to_string()),
        ];
        if let Some(of) = &record.duplicate_of {
            metadata.push(("duplicate-of", of.clone()));
        }
        if let Some(d) = record.distance {
            metadata.push(("distance", d.to_string()));
        }
        let revisit = revisit.map(|o| (o.url.clone(), o.fetched_at.clone().unwrap_or_default()));
        self.archive(
            page,
            revisit.as_ref().map(|(url, date)| Original { url, date }),
            &metadata,
        )?;
        record.payload_digest = Some(digest);
        Ok(())
    }

    /// Writes a response to the WARC files (when enabled).
    fn archive(
        &mut self,
        page: &Fetched,
        revisit_of: Option<Original<'_>>,
        metadata: &[(&str, String)],
    ) -> Result<(), EngineError> {
        let Some(warc) = &mut self.warc else {
            return Ok(());
        };
        let head = page.response_head();
        let fetch = WarcFetch {
            url: page.url.as_str(),
            date: page.started,
            ip: page.remote_addr.map(|a| a.ip().to_string()),
            request_head: &page.request_head,
            response_head: &head,
            payload: &page.wire_body,
        };
        warc.write_fetch(&fetch, revisit_of, metadata)
            .map_err(|e| EngineError::io(&self.job.out_dir.join("warc"), e))?;
        Ok(())
    }

    /// Flushes outputs and writes the report.
    fn finish(mut self) -> Result<Report, EngineError> {
        self.records.flush()?;
        if let Some(warc) = &mut self.warc {
            warc.flush()
                .map_err(|e| EngineError::io(&self.job.out_dir.join("warc"), e))?;
        }
        self.store.sync()?;
        if let Some(dir) = &self.job.shared_index {
            crate::shared::save(
                dir,
                self.stage.index(),
                &self.shared_urls,
                self.store.as_ref(),
                SHARED,
            )?;
        }
        let queued = self.frontier.queued()?;
        let report = Report::build(
            self.store.as_ref(),
            queued,
            self.robots_bytes,
            self.started,
            self.stopping,
            &self.progress,
        )?;
        report.write(&self.job.out_dir)?;
        Ok(report)
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

/// The crawl's store as the dedup stage reads it: the texts, exact keys, simhashes and
/// anchors of the unique pages it admitted.
struct StoreOriginals<'a>(&'a dyn CrawlStore);

impl Originals for StoreOriginals<'_> {
    type Error = EngineError;
    fn text(&self, seq: u64) -> Result<Option<String>, EngineError> {
        Ok(self.0.unique_text(seq)?)
    }
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, EngineError> {
        Ok(self.0.exact_original(&key.0.to_be_bytes())?)
    }
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, EngineError> {
        Ok(self.0.unique_simhash(seq)?.map(Fingerprint::new))
    }
    fn anchors(&self, seq: u64) -> Result<Option<Vec<u64>>, EngineError> {
        Ok(self.0.anchors(seq)?)
    }
}
