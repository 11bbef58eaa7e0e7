//! A crawl job and how it starts: the job's description, its swappable parts, and the
//! frontier and index of a job shared through Redis.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nearcrawl_dedup::{Analyzer, AnalyzerConfig};
use nearcrawl_fetch::{Fetch, Fetcher};
use nearcrawl_frontier::{Scope, Seed};
use nearcrawl_records::Report;
use nearcrawl_redis_job::{JobName, RedisTarget};
use nearcrawl_store::{CrawlStore, FjallStore};
use tracing::warn;

use super::Coordinator;
use super::shared_dedup::{self, shared_error};
use crate::config::CrawlConfig;
use crate::error::EngineError;
use crate::progress::Progress;

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
    // In `always`, started before anything is crawled: a browser that cannot start is an
    // error naming what is missing.
    let browser = match job.config.render.config() {
        Some(config) => super::render::Browser::of(job.config.render.mode, config).await?,
        None => None,
    };
    let rendering = browser.clone();
    let mut coordinator =
        Coordinator::open(job, parts, scope, shared, relevance, progress, browser)?;
    let report = match coordinator.run(shutdown).await {
        Ok(()) => coordinator.finish(),
        Err(e) => {
            drop(coordinator);
            Err(e)
        }
    };
    // Closed once the last page that held it is done.
    if let Some(browser) = rendering.and_then(Arc::into_inner) {
        browser.close().await;
    }
    report
}

/// What a worker of a job shared through Redis shares with the job's other workers.
pub(super) struct SharedParts {
    pub(super) frontier: crate::frontier::RedisFrontier,
    /// The job's index, when dedup is on.
    pub(super) dedup: Option<shared_dedup::SharedDedup>,
    /// The job's URL rules, when dedup and the link policy are on.
    pub(super) rules: Option<nearcrawl_redis_job::RuleLog>,
    /// What the job's fetched pages declared.
    pub(super) declarations: nearcrawl_redis_job::Declarations,
}

/// The frontier of a job shared through Redis, and its index and rules when dedup is on:
/// joins the job (creating it with this job's politeness if it is new); the worker that
/// creates it queues the seeds.
pub(super) fn shared_parts(
    job: &Job,
    redis: &RedisJob,
    store: Arc<dyn CrawlStore>,
    faults: Arc<nearcrawl_redis_job::Faults>,
) -> Result<SharedParts, EngineError> {
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
        Some(shared_dedup::SharedDedup::new(index, job.analyzer.verify)?)
    } else {
        None
    };
    // The rule log, when the link policy learns rules at all.
    let config = &job.config.dedup;
    let rules = match config.enabled && config.predict != nearcrawl_dedup::Predict::Off {
        true => Some(nearcrawl_redis_job::RuleLog::open(
            shared.redis().reopen().map_err(shared_error)?,
            redis.job.clone(),
            &redis.worker,
            session_number(),
        )),
        false => None,
    };
    let declarations = nearcrawl_redis_job::Declarations::open(
        shared.redis().reopen().map_err(shared_error)?,
        redis.job.clone(),
    );
    let agent = job.config.fetch.robots_agent().to_string();
    // A take leases up to half of what this worker can fetch at once from one host.
    shared.set_batch((job.config.concurrency() / 2).clamp(1, 16));
    let frontier = crate::frontier::RedisFrontier::open(shared, role, store, agent, seeds)?;
    Ok(SharedParts {
        frontier,
        dedup,
        rules,
        declarations,
    })
}

/// A number for this run of the worker, unlike its other runs': the time it started and its
/// process id.
fn session_number() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32)
}
