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
    Analyzer, AnalyzerConfig, DedupStage, Extracted, Follow, Followed, Originals, PageAnalysis,
    PageAnalyzer, Stage,
};
use nearcrawl_extract::{Sitemap, read_sitemap};
use nearcrawl_fetch::{Fetch, FetchFailure, Fetched, Fetcher, RobotsFetch};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_frontier::{
    CanonicalUrl, HostOutcome, PatternPath, Relevance, Scope, Seed, SessionParams, Trap, TrapRules,
    UrlPattern,
};
use nearcrawl_link_policy::{ReleasedLink, WaitedFor, released_link};
use nearcrawl_records::{Probe, Record, Released, Report, Sample, SharedJobFigures, Verdict};
use nearcrawl_redis_job::{JobName, RedisTarget};
use nearcrawl_store::{
    Commit, CrawlStore, Declared, FjallStore, HostId, HubYield, ParkedLink, QueueKey, QueuedUrl,
    UniquePage, UrlKey, url_key,
};
use nearcrawl_text::ExactKey;
use tokio::sync::mpsc;
use tracing::{debug, info, warn};
use url::Url;

use self::budgets::Traps;
use crate::archive::{Archive, warc_fetch};
use crate::config::CrawlConfig;
use crate::error::EngineError;
use crate::focus::Focus;
use crate::frontier::{Frontier, FrontierConfig, Parking, Step, StoreFrontier};
use crate::progress::Progress;
use crate::record::Decision;
use crate::warc::{Original, PreparedFetch, WarcWriter};

mod budgets;
mod copied_sites;
mod links;
mod mirrors;
mod outcome;
mod page;
mod predictions;
mod revisits;
mod scope_watch;
mod sentences;
mod shared_dedup;
mod tasks;
mod unchanged;

use tasks::{Analysed, TaskResult};

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
    /// A job shared by several workers through Redis: its frontier (and, with dedup on, its
    /// near-duplicate index) are the job's, not this process's.
    pub redis: Option<RedisJob>,
}

/// A job shared by several workers through Redis (`--redis URL --job NAME`).
#[derive(Debug, Clone)]
pub struct RedisJob {
    /// The server or cluster.
    pub target: RedisTarget,
    /// The job's name there.
    pub job: JobName,
    /// This worker's name, unique among the job's workers.
    pub worker: String,
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
    let store = Arc::new(FjallStore::open_with_cache(
        &job.out_dir.join("state"),
        job.config.output.state_cache_bytes,
    )?);
    let fetcher = Fetcher::new(job.config.fetch.clone(), scope.addresses().clone())
        .map_err(EngineError::HttpClient)?
        .closing_shared(job.config.politeness.limits_addresses());
    let parts = Parts {
        store,
        fetcher: Arc::new(fetcher),
    };
    run_job(job, parts, scope, shared, shutdown, progress).await
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
    let scope = Scope::new(&job.config.scope, &job.seeds)?;
    let shared = load_shared(&job)?;
    run_job(job, parts, scope, shared, shutdown, progress).await
}

/// The entries and URLs of the job's shared index (empty without one).
fn load_shared(job: &Job) -> Result<crate::shared::SharedIndex, EngineError> {
    match &job.shared_index {
        Some(dir) => crate::shared::load(dir),
        None => Ok(crate::shared::SharedIndex::default()),
    }
}

async fn run_job(
    mut job: Job,
    parts: Parts,
    scope: Scope,
    shared: crate::shared::SharedIndex,
    shutdown: impl Future<Output = ()>,
    progress: Arc<Progress>,
) -> Result<Report, EngineError> {
    if job.redis.is_none() {
        let given = job.config.previous.as_deref();
        job.config.previous = crate::recrawl::previous_of(&job.out_dir, given)?;
    }
    let analyzer = Analyzer::new(job.analyzer.clone());
    let relevance =
        crate::focus::relevance(&job.config.focus, parts.fetcher.as_ref(), &analyzer).await?;
    let mut coordinator = Coordinator::open(job, parts, scope, shared, relevance, progress)?;
    coordinator.run(shutdown).await?;
    coordinator.finish()
}

/// The frontier of a job shared through Redis, and its index when dedup is on: joins the job
/// (creating it with this job's politeness if it is new); the worker that creates it queues
/// the seeds.
fn shared_parts(
    job: &Job,
    redis: &RedisJob,
    store: Arc<dyn CrawlStore>,
    faults: Arc<nearcrawl_redis_job::Faults>,
) -> Result<
    (
        crate::frontier::RedisFrontier,
        Option<shared_dedup::SharedDedup>,
    ),
    EngineError,
> {
    let unsupported = |what: &str| {
        EngineError::Shared(format!(
            "{what} is not supported in a job shared through Redis yet"
        ))
    };
    if job.shared_index.is_some() {
        return Err(unsupported("an index shared across jobs (--index)"));
    }
    let politeness = &job.config.politeness;
    let settings = nearcrawl_redis_job::Settings {
        max_connections_per_host: politeness.max_connections_per_host,
        per_host_delay_ms: politeness.per_host_delay_ms,
        max_connections_per_address: politeness.address_connections(),
        per_address_delay_ms: u64::try_from(politeness.address_delay().as_millis())
            .unwrap_or(u64::MAX),
        max_crawl_delay_ms: politeness.max_crawl_delay_ms,
        backoff_initial_ms: politeness.backoff_initial_ms,
        backoff_max_ms: politeness.backoff_max_ms,
        max_consecutive_failures: politeness.max_consecutive_failures,
        obey_robots: job.config.links.obey_robots,
        robots_ttl_ms: job.config.fetch.robots_ttl_secs.saturating_mul(1000),
        lease_ms: job.config.redis.lease_secs.saturating_mul(1000),
        max_pages_per_host: job.config.limits.max_pages_per_host.unwrap_or(0),
        by_priority: job.config.focus.is_focused(),
        ..nearcrawl_redis_job::Settings::default()
    };
    let patience = nearcrawl_redis_job::Patience {
        give_up_after: Duration::from_secs(job.config.redis.patience_secs),
        ..nearcrawl_redis_job::Patience::default()
    };
    let connection = nearcrawl_redis_job::Redis::connect(redis.target.clone(), patience, faults)
        .map_err(shared_error)?;
    let (mut shared, role, differs) = nearcrawl_redis_job::SharedFrontier::join(
        connection,
        redis.job.clone(),
        &redis.worker,
        settings,
    )
    .map_err(shared_error)?;
    if differs {
        warn!(job = %redis.job, "this worker's politeness or page budget per host differs from the job's: the job's holds");
    }
    let seeds = crate::recrawl::first_queue(job.config.previous.as_deref(), &job.seeds)?;
    let dedup = if job.config.dedup.enabled {
        let connection = shared.redis().reopen().map_err(shared_error)?;
        let index = nearcrawl_redis_job::RedisIndex::open(
            connection,
            redis.job.clone(),
            &redis.worker,
            job.analyzer.max_distance,
        )
        .map_err(shared_error)?;
        Some(shared_dedup::SharedDedup::new(index, job.analyzer.verify))
    } else {
        None
    };
    let agent = job.config.fetch.robots_agent().to_string();
    let frontier = crate::frontier::RedisFrontier::open(shared, role, store, agent, seeds)?;
    Ok((frontier, dedup))
}

fn shared_error(err: nearcrawl_redis_job::JobError) -> EngineError {
    EngineError::Shared(err.to_string())
}

/// Why `entry` must not be fetched, if its URL without the session parameters learned for
/// its host was fetched (or queued) already.
fn session_veto(
    sessions: &SessionParams,
    store: &dyn CrawlStore,
    entry: &QueuedUrl,
) -> Option<(Verdict, String)> {
    let stripped = sessions.strip_str(&entry.url)?;
    // A store error here only costs a fetch; the decision that follows will report it.
    if !store.is_seen(&url_key(stripped.url.as_str())).ok()? {
        return None;
    }
    let reason = format!(
        "trap: the session parameter {} (learned on this host from duplicates that differ \
         only in it) is all that tells this URL from {}, decided already",
        stripped.params.join(", "),
        stripped.url
    );
    Some((Verdict::Trap, reason))
}

/// Now, by the scheduling clock: tokio's, so paused time in tests pauses politeness too.
fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

struct Coordinator {
    job: Job,
    store: Arc<dyn CrawlStore>,
    scope: Scope,
    /// The trap rules and the per-host budgets they spend.
    traps: Traps,
    /// Session parameters learned per host from duplicates.
    sessions: SessionParams,
    /// Sites found to copy others, path for path (see [`copied_sites::CopiedSites`]).
    copied_sites: copied_sites::CopiedSites,
    /// Mirrors and whether their copies add pages of their own (see [`mirrors::Mirrors`]).
    mirrors: mirrors::Mirrors,
    /// The link policy: URL rules learned from this crawl's duplicates, and the fate of the
    /// links they name a counterpart for (see [`predictions::Predictions`]).
    predictions: predictions::Predictions,
    /// The scope's answers to the first links found.
    scope_watch: scope_watch::ScopeWatch,
    /// A focused crawl: its topic, and what of it the store keeps.
    focus: Option<Focus>,
    fetcher: Arc<dyn Fetch>,
    /// The dedup stage: templates, index, sentence candidates, verification.
    stage: DedupStage,
    /// Kept pages by sentence fingerprint: in the store, a bounded part in memory.
    sentences: sentences::SentencePostings,
    /// A job shared through Redis, dedup on: the job's index, which the stage judges
    /// against instead of this worker's store.
    shared_dedup: Option<shared_dedup::SharedDedup>,
    /// A shared job: the faults its Redis connections met.
    shared_faults: Option<Arc<nearcrawl_redis_job::Faults>>,
    /// The shared index's URLs and days, and its expired entries (to be written back); its
    /// current entries are in the stage's index, their payloads `SHARED | position`.
    shared: crate::shared::SharedIndex,
    /// Which URL is fetched next: queues, politeness, robots.txt, leases.
    frontier: Box<dyn Frontier + Send>,
    next_seq: u64,
    pages_fetched: u64,
    robots_bytes: u64,
    /// The job's counters as last committed ([`JobCounters`]): a decision writes only those
    /// that changed since.
    counters_written: Option<JobCounters>,
    /// Where finished decisions go: store, records.jsonl, WARC, counters.
    archive: Archive,
    limiter: Option<DefaultDirectRateLimiter>,
    in_flight: usize,
    stopping: bool,
    progress: Arc<Progress>,
    tx: mpsc::UnboundedSender<TaskResult>,
    rx: mpsc::UnboundedReceiver<TaskResult>,
    started: SystemTime,
    /// A recrawl: the previous job's kept texts, which changed pages are compared with.
    previous_texts: crate::recrawl::PreviousTexts,
}

impl Coordinator {
    /// Whether a hub that led to less than itself is declined (`dedup.hub_min_yield`).
    fn hub_yield_rule_on(&self) -> bool {
        HubYield::rule_on(self.job.config.dedup.hub_min_yield)
    }
}

/// What becomes of a duplicate's parked link once what it waited for is decided
/// (`nearcrawl_link_policy::released_link`), applied to it: a hub's counterpart starts a new
/// chain, fetched rather than probed; a link to wait for a hub's links is parked on
/// `hub_links`.
fn parked_link_fate(
    parked: &mut ParkedLink,
    decided: WaitedFor,
    hub_links: Option<UrlKey>,
) -> Fate {
    let probe = parked.entry.probe.is_some();
    match (released_link(decided, parked.always, probe), hub_links) {
        (ReleasedLink::WaitForHubLinks, Some(on)) => Fate::Park(on),
        (ReleasedLink::Follow { as_hub: true } | ReleasedLink::WaitForHubLinks, _) => {
            parked.entry.duplicates = 0;
            parked.entry.probe = None;
            Fate::Follow
        }
        (ReleasedLink::Follow { as_hub: false }, _) => Fate::Follow,
        (ReleasedLink::Probe, _) => Fate::Probe,
        (ReleasedLink::Drop, _) => Fate::Drop,
    }
}

/// The key a duplicate's link to a hub's counterpart is parked on while what the hub (record
/// `seq`) led to is not known yet: its links are not all decided.
fn hub_yield_key(seq: u64) -> UrlKey {
    url_key(&format!("hub {seq}"))
}

/// The key a page waiting for the crawl's end is parked on (see
/// [`Coordinator::defer_to_end`]).
fn end_of_crawl_key() -> UrlKey {
    url_key("the crawl's end")
}

/// A URL the store holds (in `table`, as `what`), parsed again: one that does not parse is
/// the store's corruption.
fn stored_url(url: &str, table: &'static str, what: &str) -> Result<CanonicalUrl, EngineError> {
    CanonicalUrl::parse(url).map_err(|e| {
        EngineError::Store(nearcrawl_store::StoreError::Corrupt {
            table,
            reason: format!("{what} {url:?}: {e}"),
        })
    })
}

/// What becomes of a parked link once what it waited for is decided.
enum Fate {
    /// Queued to be fetched.
    Follow,
    /// Queued to be probed.
    Probe,
    /// Not queued.
    Drop,
    /// Parked again, on this key.
    Park(UrlKey),
}

/// The job's own counters a decision moves, in the order of [`JobCounters::NAMES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct JobCounters([u64; 4]);

impl JobCounters {
    /// The counters' names in the store.
    const NAMES: [&'static str; 4] = ["next_seq", "next_order", "pages_fetched", "robots_bytes"];

    /// The counters to store: those that differ from `written` (all when nothing is known
    /// to be written). Most decisions move two of the four.
    fn changed_since(
        self,
        written: Option<JobCounters>,
    ) -> impl Iterator<Item = (std::borrow::Cow<'static, str>, u64)> {
        Self::NAMES
            .iter()
            .enumerate()
            .filter(move |(i, _)| written.is_none_or(|w| w.0[*i] != self.0[*i]))
            .map(move |(i, name)| ((*name).into(), self.0[i]))
    }
}

impl Coordinator {
    /// A resumed crawl goes on with the mirrors it was sampling (see [`mirrors::Mirrors`]).
    fn resume_mirrors(&mut self) -> Result<(), EngineError> {
        if let Some(bytes) = self.store.blob(mirrors::MIRRORS)? {
            self.mirrors = mirrors::Mirrors::from_bytes(&bytes).map_err(|e| {
                nearcrawl_store::StoreError::Corrupt {
                    table: "blobs",
                    reason: format!("{}: {e}", mirrors::MIRRORS),
                }
            })?;
        }
        Ok(())
    }

    fn open(
        mut job: Job,
        parts: Parts,
        scope: Scope,
        mut shared: crate::shared::SharedIndex,
        relevance: Option<Relevance>,
        progress: Arc<Progress>,
    ) -> Result<Coordinator, EngineError> {
        if job.redis.is_some() && job.config.dedup.probe_links {
            // A worker of a shared job does not know what its fellows fetched (their lengths
            // and shingles), so its duplicates' links are not probed (docs/SCALE.md).
            info!("dedup.probe_links does not apply to a job shared through Redis yet: off");
            job.config.dedup.probe_links = false;
        }
        std::fs::create_dir_all(&job.out_dir).map_err(|e| EngineError::io(&job.out_dir, e))?;
        let Parts { store, fetcher } = parts;
        let mut analyzer_config = job.analyzer.clone();
        analyzer_config.max_links = job.config.links.max_per_page;
        if relevance.is_some() {
            // A focused crawl scores a link by the text around it too.
            analyzer_config.link_reading = nearcrawl_extract::LinkReading::WithContext;
        }
        let analyzer = Arc::new(Analyzer::new(analyzer_config));
        let uniques = store.unique_pages()?;
        let k = job.analyzer.max_distance;
        let shared_entries = shared.take_current(&job.config.index, SystemTime::now());
        if !shared.entries.is_empty() {
            info!(
                expired = shared.entries.len(),
                current = shared_entries.len(),
                "shared index entries older than index.max_age_days are not matched against"
            );
        }
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
        let mut shared_dedup = None;
        let mut shared_faults = None;
        let frontier: Box<dyn Frontier + Send> = match &job.redis {
            Some(redis) => {
                let faults = Arc::new(nearcrawl_redis_job::Faults::default());
                let (frontier, dedup) =
                    shared_parts(&job, redis, Arc::clone(&store), Arc::clone(&faults))?;
                shared_dedup = dedup;
                shared_faults = Some(faults);
                Box::new(frontier)
            }
            None => Box::new(StoreFrontier::open(
                Arc::clone(&store),
                FrontierConfig {
                    politeness: job.config.politeness.clone(),
                    obey_robots: job.config.links.obey_robots,
                    max_pages_per_host: job.config.limits.max_pages_per_host,
                    by_priority: job.config.focus.is_focused(),
                    explore_every: job.config.focus.explore_every,
                },
                next_order,
                now(),
            )?),
        };
        let pages_fetched = store.counter("pages_fetched")?.unwrap_or(0);
        let robots_bytes = store.counter("robots_bytes")?.unwrap_or(0);
        let run = store.counter("runs")?.unwrap_or(0);
        let archive = Archive::open(
            &job.out_dir,
            Arc::clone(&store),
            next_seq,
            run,
            job.config
                .output
                .warc
                .then_some(job.config.output.warc_max_bytes),
            Arc::clone(&progress),
        )?;
        // Counted once the outputs are known to agree with the state.
        store.commit(Commit {
            counters: vec![("runs".into(), run + 1)],
            ..Commit::default()
        })?;
        let limiter = NonZeroU32::new(job.config.politeness.global_requests_per_second)
            // No bursts: the cap holds over any second, not on average.
            .map(|rate| RateLimiter::direct(Quota::per_second(rate).allow_burst(NonZeroU32::MIN)));
        let (tx, rx) = mpsc::unbounded_channel();
        let traps = Traps::new(TrapRules::new(job.config.traps.clone()), Arc::clone(&store));
        let sentences = sentences::SentencePostings::open(store.as_ref())?;
        // A resumed crawl goes on with the URL rules it learned.
        let predictions =
            predictions::Predictions::open(&job.config.dedup, job.redis.is_some(), store.as_ref())?;
        let mut coordinator = Coordinator {
            job,
            store,
            sentences,
            shared_dedup,
            shared_faults,
            scope,
            traps,
            sessions: SessionParams::default(),
            copied_sites: copied_sites::CopiedSites::default(),
            mirrors: mirrors::Mirrors::default(),
            predictions,
            scope_watch: scope_watch::ScopeWatch::default(),
            focus: relevance.map(Focus::new),
            fetcher,
            stage,
            shared,
            frontier,
            next_seq,
            pages_fetched,
            robots_bytes,
            counters_written: None,
            archive,
            limiter,
            in_flight: 0,
            stopping: false,
            progress,
            tx,
            rx,
            started: SystemTime::now(),
            previous_texts: crate::recrawl::PreviousTexts::default(),
        };
        if let Some(focus) = &mut coordinator.focus {
            let state = coordinator.job.out_dir.join("state");
            focus.resume(coordinator.store.as_ref(), &state)?;
        }
        coordinator.resume_mirrors()?;
        coordinator.store_sentences(&uniques)?;
        if coordinator.job.redis.is_some() {
            // A shared job's seeds were queued by the worker that created it.
            info!(decided = next_seq, "joined shared job");
        } else if next_seq == 0 && coordinator.store.hosts()?.is_empty() {
            coordinator.enqueue_seeds()?;
        } else {
            info!(decided = next_seq, "resuming job");
        }
        Ok(coordinator)
    }

    fn enqueue_seeds(&mut self) -> Result<(), EngineError> {
        let mut commit = Commit::default();
        let mut pending = HashSet::new();
        let previous = self.job.config.previous.clone();
        let seeds = self.job.seeds.clone();
        for (url, entry, priority) in crate::recrawl::first_queue(previous.as_deref(), &seeds)? {
            self.queue(&mut commit, &mut pending, &url, entry, priority)?;
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

    fn is_seen(
        &self,
        url: &CanonicalUrl,
        key: &UrlKey,
        pending: &HashSet<UrlKey>,
    ) -> Result<bool, EngineError> {
        Ok(pending.contains(key) || self.frontier.is_seen(url, key)?)
    }

    /// Commits a decision (with the job's counters that changed) and appends its records.
    fn apply(&mut self, mut commit: Commit, mut records: Vec<Record>) -> Result<(), EngineError> {
        if !commit.taken.is_empty() {
            // Each record's URL key, when the URL was queued (not refused on discovery): what
            // the steps below look parked links, hubs and samples up by.
            let refused: HashSet<UrlKey> = commit.seen.iter().copied().collect();
            let queued: Vec<Option<UrlKey>> = records
                .iter()
                .map(|r| Some(url_key(&r.url)).filter(|key| !refused.contains(key)))
                .collect();
            self.release_parked(&mut commit, &mut records, &queued)?;
            let completed = self.credit_hubs(&mut commit, &records, &queued)?;
            self.release_hub_links(&mut commit, &mut records, completed)?;
            self.settle_mirrors(&mut commit, &mut records, &queued)?;
        }
        if let Some(bytes) = self.mirrors.take_changed() {
            commit.blobs.push((mirrors::MIRRORS.into(), bytes));
        }
        if let Some(bytes) = self.predictions.take_to_keep() {
            commit.blobs.push((predictions::URL_RULES.into(), bytes));
        }
        let counters = JobCounters([
            self.next_seq,
            self.frontier.next_order(),
            self.pages_fetched,
            self.robots_bytes,
        ]);
        commit
            .counters
            .extend(counters.changed_since(self.counters_written));
        let taken = commit.taken.clone();
        let postings_batch = !commit.sentences.is_empty();
        // Until the commit lands, nothing is known to be written (an error leaves it so).
        self.counters_written = None;
        self.archive.commit(commit, &records)?;
        self.counters_written = Some(counters);
        if postings_batch {
            self.sentences.written_out();
        }
        self.frontier.committed(&taken)?;
        self.traps.trim();
        Ok(())
    }

    /// The mirrors' samples `commit` decides: when one settles whether its mirror's copies add
    /// pages of their own, the links that waited for it are followed (they do) or dropped
    /// (they do not), as part of `commit`, and the sample's record says so (`released`).
    fn settle_mirrors(
        &mut self,
        commit: &mut Commit,
        records: &mut [Record],
        queued: &[Option<UrlKey>],
    ) -> Result<(), EngineError> {
        if !self.mirrors.has_pending() {
            return Ok(());
        }
        let samples = self.job.config.dedup.mirror_samples;
        for (record, key) in records.iter_mut().zip(queued) {
            let Some(key) = *key else {
                continue;
            };
            if !self.mirrors.is_pending(&key) {
                continue;
            }
            if record.verdict == Verdict::Redirect {
                if let Some(target) = record.queued_redirect_target()
                    && self.mirrors.moved(&key, url_key(target))
                {
                    // Its target was queued: its page is the sample.
                    continue;
                }
                // Where the sample leads is another URL's to tell (seen already, refused):
                // taken as adding a page, so that nothing is lost for it.
                self.mirrors.added(&key);
            }
            let Some((on, adds)) = self.mirrors.decided(&key, samples) else {
                continue;
            };
            let links = self.frontier.release(commit, &record.url, &on, adds)?;
            let released = self.release_links(commit, &record.url, links, |_| match adds {
                true => Fate::Follow,
                false => Fate::Drop,
            })?;
            debug!(url = %record.url, adds, ?released, "a mirror's parked links released");
            record.released = Some(record.released.unwrap_or_default() + released);
        }
        Ok(())
    }

    /// Links released from their parking (on `on`, a URL decided, for messages), as part of
    /// `commit`: each queued or dropped as `fate` says, unless it was seen meanwhile (the
    /// links this decision queues already included).
    fn release_links(
        &mut self,
        commit: &mut Commit,
        on: &str,
        links: Vec<ParkedLink>,
        mut fate: impl FnMut(&mut ParkedLink) -> Fate,
    ) -> Result<Released, EngineError> {
        let mut pending: HashSet<UrlKey> = commit.enqueued.iter().map(|(_, k, _)| *k).collect();
        let mut released = Released::default();
        for mut parked in links {
            let url = stored_url(
                &parked.entry.url,
                "parked",
                &format!("a link parked on {on}"),
            )?;
            let link_key = url_key(url.as_str());
            if self.is_seen(&url, &link_key, &pending)? {
                continue;
            }
            let fate = fate(&mut parked);
            match fate {
                Fate::Follow => released.followed += 1,
                Fate::Probe => released.probed += 1,
                Fate::Drop => {
                    commit.dropped.push(link_key);
                    released.dropped += 1;
                    continue;
                }
                Fate::Park(on) => {
                    pending.insert(link_key);
                    self.frontier
                        .hub_or_park(commit, &url, &on, link_key, parked)?;
                    released.parked += 1;
                    continue;
                }
            }
            self.queue(commit, &mut pending, &url, parked.entry, parked.priority)?;
        }
        Ok(released)
    }

    /// What the pages `commit` decides add to the hubs that queued them (what a hub led to,
    /// `dedup.hub_min_yield`), and the size of a hub it decides: its record's. Returns the
    /// hubs whose links are all decided now: (the record that completed it, the hub's
    /// sequence number, whether it is worth fetching again).
    fn credit_hubs(
        &self,
        commit: &mut Commit,
        records: &[Record],
        queued: &[Option<UrlKey>],
    ) -> Result<Vec<(usize, u64, bool)>, EngineError> {
        if let Some((_, seq, yielded)) = &mut commit.hub
            && let Some(record) = records.iter().find(|r| r.seq == *seq)
        {
            yielded.bytes = record.bytes;
        }
        let dedup = &self.job.config.dedup;
        let mut completed = Vec::new();
        if dedup.hub_min_links == 0 {
            return Ok(completed);
        }
        for (index, (record, key)) in records.iter().zip(queued).enumerate() {
            // Refused on discovery: never queued, so not one of the parent's links.
            let (Some(parent), Some(_)) = (record.link_of.or(record.parent), key) else {
                continue;
            };
            if record.queued_redirect_target().is_some() {
                // Its target was queued with the link: its decision counts for it.
                continue;
            }
            let at = match commit.hub_yields.iter().position(|(seq, _)| *seq == parent) {
                Some(at) => at,
                None => match self.store.hub_yield_at(parent)? {
                    Some(yielded) if !yielded.complete() => {
                        commit.hub_yields.push((parent, yielded));
                        commit.hub_yields.len() - 1
                    }
                    _ => continue,
                },
            };
            let yielded = &mut commit.hub_yields[at].1;
            if yielded.complete() {
                continue;
            }
            if record.verdict == Verdict::Redirect {
                // Its target was not queued (seen already, refused, a redirect too many):
                // where the link leads is another link's to tell, so what the hub led to is
                // not known, and it is fetched again as before.
                yielded.count_redirect();
            } else {
                let fetched = record.status.is_some_and(|s| (200..300).contains(&s));
                // New content: a page no other is a copy of, or a file that is no page (a
                // table of downloads leads to its files).
                let new = matches!(record.verdict, Verdict::Unique | Verdict::NotHtml);
                yielded.count((new && fetched).then_some(record.bytes));
            }
            if yielded.complete() {
                let worth = yielded.worth_fetching(dedup.hub_min_links, dedup.hub_min_yield);
                completed.push((index, parent, worth));
            }
        }
        Ok(completed)
    }

    /// The hubs `completed` (see [`Coordinator::credit_hubs`]): the duplicates' links parked
    /// until what each led to was known are followed, as a hub's counterpart, when it is
    /// worth fetching again, and probed (or dropped, unprobed) when not. The record that
    /// completed the hub counts them (`released`).
    fn release_hub_links(
        &mut self,
        commit: &mut Commit,
        records: &mut [Record],
        completed: Vec<(usize, u64, bool)>,
    ) -> Result<(), EngineError> {
        for (index, seq, worth) in completed {
            let record = &records[index];
            let links = self
                .frontier
                .release(commit, &record.url, &hub_yield_key(seq), worth)?;
            if links.is_empty() {
                continue;
            }
            let released = self.release_links(commit, &record.url, links, |parked| {
                parked_link_fate(parked, WaitedFor::HubLinks { worth }, None)
            })?;
            debug!(url = %records[index].url, worth, ?released, "a hub's parked links released");
            records[index].released = Some(records[index].released.unwrap_or_default() + released);
        }
        Ok(())
    }

    /// The queued URLs `commit` decides (those of `records` not refused on discovery) are
    /// decided now: the duplicates' links parked on them are followed, as part of `commit`,
    /// if the page led to new pages (a hub), and dropped if not. Each URL's record counts
    /// them (`released`).
    fn release_parked(
        &mut self,
        commit: &mut Commit,
        records: &mut [Record],
        queued: &[Option<UrlKey>],
    ) -> Result<(), EngineError> {
        for (record, key) in records.iter_mut().zip(queued) {
            let Some(key) = *key else {
                continue;
            };
            if self.frontier.knows_undecided() {
                // Only a frontier in this store marks URLs undecided.
                commit.decided.push(key);
            }
            let hub_seq = commit
                .hub
                .and_then(|(hub, seq, _)| (hub == key).then_some(seq));
            let hub = hub_seq.is_some();
            let links = self.frontier.release(commit, &record.url, &key, hub)?;
            if links.is_empty() {
                continue;
            }
            // A hub just decided: what its links lead to is not known yet. A link that would
            // be probed otherwise waits for that (`dedup.hub_min_yield`).
            let wait_on = hub_seq
                .filter(|_| self.frontier.knows_undecided() && self.hub_yield_rule_on())
                .map(hub_yield_key);
            let decided = match hub {
                true => WaitedFor::Hub {
                    links_pending: wait_on.is_some(),
                },
                false => WaitedFor::Page,
            };
            let released = self.release_links(commit, &record.url, links, |parked| {
                parked_link_fate(parked, decided, wait_on)
            })?;
            debug!(url = %record.url, hub, ?released, "parked links released");
            record.released = Some(released);
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
            self.archive.flush_records()?;
            if self.in_flight == 0 && (self.stopping || wake.is_none()) {
                if !self.stopping && !self.page_limit_reached() && self.release_stranded()? {
                    continue;
                }
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

    /// Nothing is queued or in flight, so nothing a link is parked on can be decided any
    /// more: links still parked (which should not happen: each waits for a URL, a hub's links
    /// or a mirror's samples, all decided by now) are followed rather than lost. Returns
    /// whether any was.
    fn release_stranded(&mut self) -> Result<bool, EngineError> {
        if self.release_deferred()? {
            return Ok(true);
        }
        let keys = self.frontier.parked_keys();
        if keys.is_empty() {
            return Ok(false);
        }
        let mut commit = Commit::default();
        let mut followed = 0;
        for key in keys {
            let links = self.frontier.release(&mut commit, "", &key, true)?;
            let released =
                self.release_links(&mut commit, "the crawl's end", links, |_| Fate::Follow)?;
            followed += released.followed;
        }
        warn!(
            followed,
            "links still parked when nothing was left to crawl: followed"
        );
        self.apply(commit, Vec::new())?;
        Ok(followed > 0)
    }

    /// The crawl has nothing else to do: the pages that waited for its end
    /// ([`Coordinator::defer_to_end`]) go back to their hosts' queues, to be probed again
    /// and decided for good. Returns whether there were any.
    fn release_deferred(&mut self) -> Result<bool, EngineError> {
        let on = end_of_crawl_key();
        if !self.frontier.parked_keys().contains(&on) {
            return Ok(false);
        }
        let mut commit = Commit::default();
        let pages = self.frontier.release(&mut commit, "", &on, false)?;
        let mut pending = HashSet::new();
        for page in &pages {
            let url = stored_url(
                &page.entry.url,
                "parked",
                "a page waiting for the crawl's end",
            )?;
            self.queue(
                &mut commit,
                &mut pending,
                &url,
                page.entry.clone(),
                page.priority,
            )?;
        }
        debug!(
            pages = pages.len(),
            "pages that waited for the crawl's end, queued again"
        );
        self.apply(commit, Vec::new())?;
        Ok(!pages.is_empty())
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
            let (sessions, store) = (&self.sessions, &self.store);
            let (predictions, probing) = (&mut self.predictions, self.job.config.dedup.probe_links);
            let mut veto = |entry: &QueuedUrl| {
                session_veto(sessions, store.as_ref(), entry)
                    .or_else(|| predictions.at_dispatch(store.as_ref(), entry, probing))
            };
            match self.frontier.next(now, &mut gate, &mut veto)? {
                Step::Wait(wake) => return Ok(wake),
                Step::Resolve { host, name } => self.spawn_resolve(host, name),
                Step::Robots { host, origin } => self.spawn_robots(host, origin),
                Step::Fetch {
                    host,
                    key,
                    entry,
                    url,
                } => {
                    let entry = self.predictions.dispatched(entry);
                    self.spawn_page(host, key, entry, url)
                }
                Step::Refuse {
                    key,
                    entry,
                    verdict,
                    reason,
                } => {
                    debug!(url = %entry.url, %reason, "not fetched");
                    let entry = self.predictions.dispatched(entry);
                    let record = match verdict {
                        Verdict::Predicted => {
                            predictions::predicted_record(self.take_seq(), &entry)
                        }
                        _ => self.refused(&entry, verdict, reason),
                    };
                    let commit = Commit {
                        taken: vec![key],
                        ..Commit::default()
                    };
                    self.apply(commit, vec![record])?;
                }
            }
        }
    }

    /// The record of a queued URL decided without a request, under the next number.
    fn refused(&mut self, entry: &QueuedUrl, verdict: Verdict, reason: String) -> Record {
        crate::record::refused(self.take_seq(), entry, verdict, reason)
    }

    fn handle(&mut self, result: TaskResult) -> Result<(), EngineError> {
        match result {
            TaskResult::Resolved { host, addresses } => {
                let (first, ttl) = match addresses {
                    Ok(found) => (found.addresses.first().copied(), found.ttl),
                    Err(why) => {
                        debug!(host, %why, "name not resolved: polite per name only");
                        let ttl = Duration::from_secs(self.job.config.fetch.dns_ttl_secs);
                        (None, ttl)
                    }
                };
                self.frontier
                    .resolved(host, first, now(), ttl.max(nearcrawl_fetch::MIN_TTL));
                Ok(())
            }
            TaskResult::Robots { host, fetch } => self.handle_robots(host, fetch),
            TaskResult::Probe {
                host,
                key,
                entry,
                result,
            } => match entry.probe.as_ref().is_some_and(|p| p.sample.is_some()) {
                true => self.handle_sample(host, key, entry, result),
                false => self.handle_probe(host, key, entry, result),
            },
            TaskResult::Page {
                host,
                key,
                entry,
                result,
                analysis,
                fetch_time,
                warc,
            } => match result {
                Ok(page) => {
                    self.progress.add_time(Stage::Fetch, fetch_time);
                    self.handle_page(host, key, entry, page, analysis, warc)
                }
                Err(failure) => self.handle_failure(host, key, entry, failure),
            },
        }
    }

    /// Flushes outputs and writes the report.
    fn finish(mut self) -> Result<Report, EngineError> {
        self.write_sentences()?;
        self.archive.finish()?;
        if let Some(dir) = &self.job.shared_index {
            crate::shared::save(
                dir,
                &self.shared,
                self.stage.index(),
                SHARED,
                self.store.as_ref(),
            )?;
        }
        let queued = self.frontier.queued()?;
        let mut report = crate::report::build(
            self.store.as_ref(),
            queued,
            self.robots_bytes,
            self.started,
            self.stopping,
            &self.progress,
        )?;
        report.scope_warning = self.scope_watch.warning();
        report.addresses = self.frontier.addresses();
        if let Some(previous) = &self.job.config.previous {
            let figures = crate::recrawl::figures(previous, self.store.as_ref())?;
            report.recrawl = Some(figures);
        }
        report.fingerprint_index = crate::report::index_figures(self.stage.index());
        if let (Some(redis), Some(faults)) = (&self.job.redis, &self.shared_faults) {
            let (redis_retries, redis_reconnects) = faults.snapshot();
            report.shared_job = Some(SharedJobFigures {
                job: redis.job.to_string(),
                worker: redis.worker.clone(),
                index_conflicts: self.shared_dedup.as_ref().map_or(0, |d| d.conflicts),
                stale_leases: faults
                    .stale_leases
                    .load(std::sync::atomic::Ordering::Relaxed),
                redis_retries,
                redis_reconnects,
            });
        }
        if let Some(relevance) = self.focus.as_ref().map(Focus::relevance) {
            report.topic_pages = relevance.frequencies().documents();
            report.topic_best = Some((relevance.best() * 1000.0).round() / 1000.0);
            report.topic = relevance
                .top_terms(20)
                .into_iter()
                .map(|(word, weight)| (word, (weight * 1000.0).round() / 1000.0))
                .collect();
        }
        report.write(&self.job.out_dir)?;
        if let (Some(redis), Some(faults)) = (&self.job.redis, &self.shared_faults) {
            // The job keeps each worker's report, for `nearcrawl job report` to merge.
            let text = serde_json::to_string(&report)
                .map_err(|e| EngineError::Shared(format!("report: {e}")))?;
            let patience = nearcrawl_redis_job::Patience {
                give_up_after: Duration::from_secs(self.job.config.redis.patience_secs),
                ..nearcrawl_redis_job::Patience::default()
            };
            let mut connection = nearcrawl_redis_job::Redis::connect(
                redis.target.clone(),
                patience,
                Arc::clone(faults),
            )
            .map_err(shared_error)?;
            nearcrawl_redis_job::put_report(&mut connection, &redis.job, &redis.worker, &text)
                .map_err(shared_error)?;
        }
        Ok(report)
    }
}

/// A decision about a response, with what it adds to the store: the URLs it queues (in
/// `commit`) and the records of the URLs it found but may not queue (`extra`).
struct Decided {
    decision: Decision,
    commit: Commit,
    extra: Vec<Record>,
    /// A duplicate whose links were read: whether it queued links that lead where its
    /// original's do not (pages of its own), what the link policy learns of its URL rule.
    adds_pages: Option<bool>,
}

impl Decided {
    fn new(decision: Decision) -> Decided {
        Decided {
            decision,
            commit: Commit::default(),
            extra: Vec::new(),
            adds_pages: None,
        }
    }

    /// The commit that takes the queued URL `key`, and the records: the URL's own, made from
    /// the decision by `record`, then the others the decision made.
    fn taking(
        self,
        key: QueueKey,
        record: impl FnOnce(Decision) -> Record,
    ) -> (Commit, Vec<Record>) {
        let Decided {
            decision,
            mut commit,
            extra,
            ..
        } = self;
        commit.taken.push(key);
        let mut records = vec![record(decision)];
        records.extend(extra);
        (commit, records)
    }
}

#[cfg(test)]
mod tests {
    use super::JobCounters;

    fn names(now: JobCounters, written: Option<JobCounters>) -> Vec<(String, u64)> {
        now.changed_since(written)
            .map(|(name, value)| (name.into_owned(), value))
            .collect()
    }

    #[test]
    fn only_changed_counters_are_written() {
        let now = JobCounters([5, 9, 4, 100]);
        assert_eq!(
            names(now, None),
            [
                ("next_seq", 5),
                ("next_order", 9),
                ("pages_fetched", 4),
                ("robots_bytes", 100)
            ]
            .map(|(n, v)| (n.to_owned(), v))
        );
        assert_eq!(
            names(now, Some(JobCounters([4, 9, 3, 100]))),
            [("next_seq", 5), ("pages_fetched", 4)].map(|(n, v)| (n.to_owned(), v))
        );
        assert!(names(now, Some(now)).is_empty());
    }
}
