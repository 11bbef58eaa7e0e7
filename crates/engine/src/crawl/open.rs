//! A crawl opened: its state read back (or its seeds queued), its parts put together.

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::SystemTime;

use governor::{Quota, RateLimiter};
use nearcrawl_dedup::{Analyzer, DedupStage};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_frontier::{Relevance, Scope, TrapRules};
use nearcrawl_link_policy::Decider;
use nearcrawl_store::{Commit, CrawlStore};
use tracing::info;

use super::budgets::Traps;
use super::counters::JobCounters;
use super::in_flight::InFlight;
use super::job::{Job, Parts, shared_parts};
use super::{Coordinator, SHARED, judge, now, predictions, scope_watch};
use crate::archive::Archive;
use crate::error::EngineError;
use crate::focus::Focus;
use crate::frontier::{Frontier, FrontierConfig, StoreFrontier};
use crate::progress::Progress;

impl Coordinator {
    pub(super) fn open(
        job: Job,
        parts: Parts,
        scope: Scope,
        mut shared: crate::shared::SharedIndex,
        relevance: Option<Relevance>,
        progress: Arc<Progress>,
        browser: Option<Arc<super::render::Browser>>,
    ) -> Result<Coordinator, EngineError> {
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
        let counters = JobCounters::resume(store.as_ref())?;
        let next_seq = counters.next_seq();
        let next_order = store.counter("next_order")?.unwrap_or(0);
        let mut shared_dedup = None;
        let mut shared_faults = None;
        let (mut shared_rules, mut shared_declarations) = (None, None);
        let frontier: Box<dyn Frontier + Send> = match &job.redis {
            Some(redis) => {
                let faults = Arc::new(nearcrawl_redis_job::Faults::default());
                let parts = shared_parts(&job, redis, Arc::clone(&store), Arc::clone(&faults))?;
                shared_dedup = parts.dedup;
                shared_faults = Some(faults);
                shared_rules = parts.rules.map(predictions::SharedRules::new);
                shared_declarations = Some(parts.declarations);
                Box::new(parts.frontier)
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
        let run = store.counter("runs")?.unwrap_or(0);
        let archive = Archive::open(
            &job.out_dir,
            Arc::clone(&store),
            next_seq,
            run,
            (job.config.output.warc).then_some((
                job.config.output.warc_max_bytes,
                job.config.output.warc_compression,
            )),
            Arc::clone(&progress),
            job.redis.is_some(),
        )?;
        // Counted once the outputs are known to agree with the state.
        store.commit(Commit {
            counters: vec![("runs".into(), run + 1)],
            ..Commit::default()
        })?;
        let limiter = NonZeroU32::new(job.config.politeness.global_requests_per_second)
            // No bursts: the cap holds over any second, not on average.
            .map(|rate| RateLimiter::direct(Quota::per_second(rate).allow_burst(NonZeroU32::MIN)));
        let traps = Traps::new(TrapRules::new(job.config.traps.clone()), Arc::clone(&store));
        let judge = judge::Judging::here(judge::Judge::open(Arc::clone(&store), stage)?);
        // A resumed crawl goes on with the URL rules it learned; a shared job's worker, with
        // the job's.
        let mut links = Decider::new(job.config.dedup.links());
        predictions::start(&mut links, &job.config.dedup, shared_rules, store.as_ref())?;
        let declarations =
            super::declarations::Declarations::new(Arc::clone(&store), shared_declarations);
        // A shared job's policy decides with what other workers' policies learned: its events
        // are not this process's alone.
        let journal = match job.config.links.policy_events && job.redis.is_none() {
            true => Some(super::journal::Journal::open(&job.out_dir)?),
            false => None,
        };
        resume_links(&mut links, store.as_ref(), journal.is_some())?;
        // A rendered page's requests are answered within the crawl's scope, by its fetcher.
        let (mode, robots) = (job.config.render.mode, job.config.links.obey_robots);
        let connections = job.config.politeness.max_connections_per_host;
        let render = browser.map(|browser| {
            let rules = (scope.clone(), robots, connections);
            super::render::RenderStage::new(browser, mode, Arc::clone(&fetcher), rules)
        });
        let mut coordinator = Coordinator {
            job,
            store,
            judge,
            shared_dedup,
            shared_faults,
            scope,
            traps,
            links,
            journal,
            declarations,
            scope_watch: scope_watch::ScopeWatch::default(),
            focus: relevance.map(Focus::new),
            render,
            fetcher,
            shared,
            frontier,
            counters,
            archive,
            limiter,
            in_flight: InFlight::new(Arc::clone(&progress)),
            stopping: false,
            progress,
            started: SystemTime::now(),
            previous_texts: crate::recrawl::PreviousTexts::default(),
        };
        if let Some(focus) = &mut coordinator.focus {
            let state = coordinator.job.out_dir.join("state");
            focus.resume(coordinator.store.as_ref(), &state)?;
        }
        let through = coordinator.counters.next_seq();
        coordinator
            .judge
            .local()?
            .store_sentences(&uniques, through)?;
        if coordinator.job.redis.is_some() {
            // A shared job's seeds were queued by the worker that created it.
            info!(decided = next_seq, "joined shared job");
        } else if next_seq == 0 && coordinator.store.hosts()?.is_empty() {
            let mut commit = Commit::default();
            let mut pending = HashSet::new();
            let previous = coordinator.job.config.previous.clone();
            let seeds = coordinator.job.seeds.clone();
            for (url, entry, priority) in crate::recrawl::first_queue(previous.as_deref(), &seeds)?
            {
                let mut carry = coordinator.carry();
                carry.queue(&mut commit, &mut pending, &url, entry, priority)?;
            }
            coordinator.apply(commit, Vec::new())?;
        } else {
            info!(decided = next_seq, "resuming job");
        }
        Ok(coordinator)
    }
}

/// A resumed crawl goes on with the mirrors it was sampling (see
/// [`nearcrawl_link_policy::Mirrors`]), as the store kept them; the link policy journals what
/// it is fed from here, when asked to (`journal`).
fn resume_links(
    links: &mut Decider,
    store: &dyn CrawlStore,
    journal: bool,
) -> Result<(), EngineError> {
    if let Some(bytes) = store.blob(nearcrawl_link_policy::MIRRORS)? {
        let mirrors = nearcrawl_link_policy::Mirrors::from_bytes(&bytes).map_err(|e| {
            nearcrawl_store::StoreError::Corrupt {
                table: "blobs",
                reason: format!("{}: {e}", nearcrawl_link_policy::MIRRORS),
            }
        })?;
        links.resume_mirrors(mirrors);
    }
    if journal {
        links.keep_journal();
    }
    if links.has_mirrors() {
        links.resume_candidates(|key| {
            let parked = store.parked_on(key)?;
            let urls = parked
                .into_iter()
                .map(|(link, parked)| (link, parked.entry.url));
            Ok::<_, EngineError>(urls.collect())
        })?;
    }
    Ok(())
}
