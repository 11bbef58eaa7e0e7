//! The crawl loop: one coordinator routes between the components that own the crawl's
//! state (the frontier, the judge with the dedup stage's index and postings, the link
//! policy's predictions, the traps, the archive); fetches and page analysis run as tasks and
//! report back, a page through the judge when it judges on a thread of its own
//! ([`judge::Judging`]). Every decision is one store commit, then one line of
//! `records.jsonl`.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use governor::DefaultDirectRateLimiter;
use nearcrawl_dedup::{Extracted, Follow, Followed, PageAnalysis, PageAnalyzer, Stage};
use nearcrawl_extract::Sitemap;
use nearcrawl_fetch::{Fetch, FetchFailure, Fetched, RobotsFetch};
use nearcrawl_frontier::{
    CanonicalUrl, HostOutcome, PatternPath, Scope, SessionParams, Trap, TrapRules, UrlPattern,
};
use nearcrawl_records::{Probe, Record, Report, Sample, SharedJobFigures, Verdict};
use nearcrawl_store::{
    Commit, CrawlStore, Declared, HostId, HubYield, ParkedLink, QueueKey, QueuedUrl, UrlKey,
    url_key,
};
use tracing::{debug, info, warn};
use url::Url;

use self::budgets::Traps;
use self::shared_dedup::shared_error;
use crate::archive::{Archive, warc_fetch};
use crate::config::CrawlConfig;
use crate::error::EngineError;
use crate::focus::Focus;
use crate::frontier::{Frontier, Seen, Step};
use crate::progress::Progress;
use crate::record::Decision;
use crate::warc::{Original, PreparedFetch, WarcWriter};

mod budgets;
mod counters;
mod declarations;
mod in_flight;
mod job;
mod journal;
mod judge;
mod links;
mod open;
mod outcome;
mod page;
mod predictions;
mod prejudge;
mod release;
mod render;
mod revisits;
mod scope_watch;
mod sentences;
mod shared_dedup;
mod tasks;
mod unchanged;

pub use job::{Job, Parts, RedisJob, crawl, crawl_with};

use tasks::{Analysed, TaskResult};

/// URLs read from one sitemap file at most (the sitemaps.org limit).
const MAX_SITEMAP_URLS: usize = 50_000;

/// Tag of index payloads that point into the shared index rather than this job's records.
const SHARED: u64 = 1 << 63;

/// Why `entry` must not be fetched, when its host has learned session parameters: its URL
/// without them was fetched (or queued) already (`seen`: the frontier's answer, the job's in
/// a shared job), or it is such a URL without them and its page is held under one
/// ([`declarations::Declarations::held`]: queued before that page was fetched, or before
/// the parameter was learned).
fn session_veto(
    sessions: &SessionParams,
    seen: &Seen<'_>,
    declarations: &declarations::Declarations,
    entry: &QueuedUrl,
) -> Option<(Verdict, String)> {
    if sessions.is_empty() {
        return None;
    }
    let url = CanonicalUrl::parse(&entry.url).ok()?;
    // A store or Redis error here only costs a fetch; the decision that follows will report
    // it.
    let reason = match sessions.strip(&url) {
        Some(stripped) if seen(&stripped.url).ok()? => format!(
            "trap: the session parameter {} (learned on this host from duplicates that \
             differ only in it) is all that tells this URL from {}, decided already",
            stripped.params.join(", "),
            stripped.url
        ),
        None if sessions.learned_on(&url) && declarations.held(url.as_str()).ok()? => {
            "trap: this page was fetched under a session parameter learned on this host; its \
             URL without it names the same page"
                .to_string()
        }
        _ => return None,
    };
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
    /// The link policy's state and settings: every link's fate is asked of it (see
    /// [`nearcrawl_link_policy::Decider`]).
    links: nearcrawl_link_policy::Decider,
    /// Where the link policy's input events go, when they are journaled
    /// (`links.policy_events`).
    journal: Option<journal::Journal>,
    /// The link policy: URL rules learned from this crawl's duplicates, and the fate of the
    /// What fetched pages declared: this process's, and a shared job's (see
    /// [`declarations::Declarations`]).
    declarations: declarations::Declarations,
    /// The scope's answers to the first links found.
    scope_watch: scope_watch::ScopeWatch,
    /// A focused crawl: its topic, and what of it the store keeps.
    focus: Option<Focus>,
    fetcher: Arc<dyn Fetch>,
    /// Renders pages written by scripts before they are judged (`render.mode`).
    render: Option<render::RenderStage>,
    /// The dedup stage and the kept pages' sentence postings: judges a page, keeps a
    /// unique one (see [`judge::Judge`]), here or on a thread of its own.
    judge: judge::Judging,
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
    /// The next record's number, the pages fetched, the bytes of robots.txt files.
    counters: counters::JobCounters,
    /// Where finished decisions go: store, records.jsonl, WARC, counters.
    archive: Archive,
    limiter: Option<DefaultDirectRateLimiter>,
    /// The tasks in flight and the channel they report back on.
    in_flight: in_flight::InFlight,
    stopping: bool,
    progress: Arc<Progress>,
    started: SystemTime,
    /// A recrawl: the previous job's kept texts, which changed pages are compared with.
    previous_texts: crate::recrawl::PreviousTexts,
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

impl Coordinator {
    /// The parts a link's fate is carried out with ([`links::Carry`]).
    fn carry(&mut self) -> links::Carry<'_> {
        links::Carry {
            frontier: &mut *self.frontier,
            store: &*self.store,
            links: &mut self.links,
            traps: &mut self.traps,
            scope: &self.scope,
            scope_watch: &mut self.scope_watch,
            declarations: &self.declarations,
            counters: &mut self.counters,
            focus: self.focus.as_ref(),
            config: &self.job.config,
        }
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
            self.carry().release(&mut commit, &mut records, &queued)?;
        }
        if let Some(bytes) = self.links.mirrors_to_keep() {
            commit
                .blobs
                .push((nearcrawl_link_policy::MIRRORS.into(), bytes));
        }
        if let Some(bytes) = self.links.learned_mut().take_to_keep() {
            commit.blobs.push((predictions::URL_RULES.into(), bytes));
        }
        if let Some(bytes) = self.links.learned_mut().sessions_to_keep() {
            commit
                .blobs
                .push((predictions::SESSION_PARAMS.into(), bytes));
        }
        // Pages fetched under a session parameter learned since: held under the URL without.
        for url in self.links.learned_mut().take_stripped() {
            self.held_without_session(&mut commit, &url)?;
        }
        if let Some(journal) = &mut self.journal {
            journal.write(&mut self.links)?;
        }
        let counters = self
            .counters
            .write_into(&mut commit, self.frontier.next_order());
        let taken = commit.taken.clone();
        let kept = commit.exact_key;
        self.archive.commit(commit, &records)?;
        if let Some((key, seq)) = kept {
            self.judge.kept(u128::from_be_bytes(key), seq);
        }
        self.counters.landed(counters);
        // Every page decided so far was kept (or not) in full: all are in.
        self.judge.landed(self.counters.next_seq())?;
        if !taken.is_empty() {
            // The record lines reach the file before a shared job hears that the URLs are
            // done: a worker killed in between would leave them in its store only, and no
            // other worker would decide them again.
            self.archive.flush_records()?;
        }
        self.frontier.committed(&taken)?;
        self.traps.trim();
        Ok(())
    }

    /// `url` is a page the crawl holds under another URL, a session parameter's: taken as
    /// seen with `commit`, and in a shared job by the job (so no worker queues it again),
    /// and marked held, so that a worker that queued it before does not fetch it
    /// ([`session_veto`]).
    fn held_without_session(
        &mut self,
        commit: &mut Commit,
        url: &CanonicalUrl,
    ) -> Result<(), EngineError> {
        let key = url_key(url.as_str());
        commit.seen.push(key);
        self.frontier.claim_refused(url, &key)?;
        self.declarations.hold(url.as_str(), commit)
    }

    async fn run(&mut self, shutdown: impl Future<Output = ()>) -> Result<(), EngineError> {
        tokio::pin!(shutdown);
        // Pages are judged on a thread of their own (`limits.judge_thread`), but in a shared
        // job (judged against the job's index) and in a recrawl (whose unchanged pages are
        // judged from their previous text, on the coordinator).
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        if self.job.config.limits.judge_thread.away(cores)
            && self.shared_dedup.is_none()
            && self.job.config.previous.is_none()
        {
            self.judge.send_away(Arc::clone(&self.progress));
        }
        loop {
            let now = now();
            let wake = self.launch_ready(now)?;
            self.archive.flush_records()?;
            if self.in_flight.count() == 0 && (self.stopping || wake.is_none()) {
                if !self.stopping
                    && !self
                        .counters
                        .page_limit(self.job.config.limits.max_pages, self.in_flight.count())
                    && self.release_stranded()?
                {
                    continue;
                }
                return self.frontier.stopping();
            }
            let sleep_until = wake.unwrap_or(now + Duration::from_secs(3600));
            tokio::select! {
                result = self.in_flight.finished() => {
                    if let Some(result) = result {
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

    /// Starts every request that may start now. Returns when to look again: `None` when no
    /// host has work left (or the job is stopping).
    fn launch_ready(&mut self, now: Instant) -> Result<Option<Instant>, EngineError> {
        if self.stopping
            || self
                .counters
                .page_limit(self.job.config.limits.max_pages, self.in_flight.count())
        {
            return Ok(None);
        }
        let concurrency = self.job.config.concurrency();
        (self.links.catch_up(false)).map_err(EngineError::Shared)?;
        self.frontier.begin_round(now);
        loop {
            if self.in_flight.count() >= concurrency
                || self
                    .counters
                    .page_limit(self.job.config.limits.max_pages, self.in_flight.count())
            {
                // Busy: look again when a request finishes.
                return Ok(Some(self.frontier.round_wake(now)));
            }
            let limiter = &self.limiter;
            let mut gate = || {
                let not_until = limiter.as_ref()?.check().err()?;
                let clock = governor::clock::DefaultClock::default();
                Some(now + not_until.wait_time_from(governor::clock::Clock::now(&clock)))
            };
            let (links, declarations) = (&mut self.links, &self.declarations);
            let mut veto = |entry: &QueuedUrl, seen: &Seen<'_>| {
                session_veto(links.learned().sessions(), seen, declarations, entry).or_else(|| {
                    let skip = predictions::at_dispatch(links, declarations, entry)?;
                    Some((Verdict::Predicted, skip))
                })
            };
            match self.frontier.next(now, &mut gate, &mut veto)? {
                Step::Wait(wake) => return Ok(wake),
                Step::Resolve { host, name } => self.spawn_resolve(host, name),
                Step::Robots { host, origin } => self.spawn_robots(host, origin),
                Step::Fetch { host, key, entry } => {
                    let entry = predictions::dispatched(&mut self.links, entry);
                    self.spawn_page(host, key, entry)
                }
                Step::Refuse {
                    key,
                    entry,
                    verdict,
                    reason,
                } => {
                    debug!(url = %entry.url, %reason, "not fetched");
                    let entry = predictions::dispatched(&mut self.links, entry);
                    let record = match verdict {
                        Verdict::Predicted => {
                            crate::record::predicted(self.counters.take_seq(), &entry)
                        }
                        _ => self.refused(&entry, verdict, reason),
                    };
                    self.apply_taken(key, record)?;
                }
            }
        }
    }

    /// Applies the one record of the queued URL under `key`, taking it from the queue.
    fn apply_taken(&mut self, key: QueueKey, record: Record) -> Result<(), EngineError> {
        let commit = Commit {
            taken: vec![key],
            ..Commit::default()
        };
        self.apply(commit, vec![record])
    }

    /// The record of a queued URL decided without a request, under the next number.
    fn refused(&mut self, entry: &QueuedUrl, verdict: Verdict, reason: String) -> Record {
        crate::record::refused(self.counters.take_seq(), entry, verdict, reason)
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
            TaskResult::Unparsable {
                host,
                key,
                entry,
                reason,
            } => {
                // No request was made: the host's budget is given back as for an answer.
                self.frontier
                    .finished(host, Some(key), HostOutcome::Answered, now());
                let record = self.refused(&entry, Verdict::Error, reason);
                self.apply_taken(key, record)
            }
            TaskResult::JudgeFailed(e) => Err(e),
        }
    }

    /// Flushes outputs and writes the report.
    fn finish(mut self) -> Result<Report, EngineError> {
        let through = self.counters.next_seq();
        let judge = self.judge.back()?;
        judge.write_sentences(through)?;
        self.archive.finish()?;
        if let Some(journal) = &mut self.journal {
            journal.write(&mut self.links)?;
            journal.flush()?;
        }
        if let Some(dir) = &self.job.shared_index {
            crate::shared::save(
                dir,
                &self.shared,
                judge.stage().index(),
                SHARED,
                self.store.as_ref(),
            )?;
        }
        let queued = self.frontier.queued()?;
        let mut report = crate::report::build(
            self.store.as_ref(),
            queued,
            self.counters.robots_bytes(),
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
        report.fingerprint_index = crate::report::index_figures(judge.stage().index());
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
    /// A duplicate whose links were read: the links it queued that lead where its
    /// original's do not (pages of its own), what the link policy learns of its URL rule.
    added: Option<Vec<String>>,
}

impl Decided {
    fn new(decision: Decision) -> Decided {
        Decided {
            decision,
            commit: Commit::default(),
            extra: Vec::new(),
            added: None,
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
