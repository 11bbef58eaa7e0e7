//! [`RedisFrontier`]: the [`Frontier`] of a job shared by several workers, over
//! [`nearcrawl_redis_job::SharedFrontier`].
//!
//! What the coordinator does is unchanged: it asks for the next step, and commits each
//! decision to its own store (its records, WARC files and report stay the worker's own). What
//! reaches Redis follows the local commit ([`Frontier::committed`]): first the decision's new
//! URLs are offered, then the decided URL's lease is finished (with the request's outcome for
//! the host's politeness, and the URL itself again if it is to be retried). A worker killed
//! between the two leaves its lease to expire; another worker then fetches the URL again and
//! offers the same links, which are seen already: nothing is lost.
//!
//! Queue keys are local: `QueueKey { host: the store's id of the authority, priority: 0,
//! order: the lease's token }`.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nearcrawl_fetch::RobotsRules;
use nearcrawl_frontier::{AddressKey, CanonicalUrl, HostOutcome, authority};
use nearcrawl_records::{AddressSummary, Verdict};
use nearcrawl_redis_job::{
    AddressHold, AddressOf, Done, Lease, Next, Offer, Outcome, Role, SharedFrontier,
};
use nearcrawl_store::{Commit, CrawlStore, HostId, ParkedLink, QueueKey, QueuedUrl, UrlKey};
use tracing::warn;
use url::Url;

use super::addresses::{Need, Resolutions};
use super::{Frontier, Parking, Step, Veto, refuse};
use crate::error::EngineError;

/// URLs taken out of a given-up host's queue at a time.
const DRAIN_BATCH: usize = 256;

/// The longest a worker waits before asking the job again.
const POLL: Duration = Duration::from_millis(100);

/// How long a busy coordinator waits before asking Redis again.
const BUSY_WAKE: Duration = Duration::from_millis(20);

/// A lease and how its request went, until its decision is committed.
struct Held {
    lease: Lease,
    outcome: Option<HostOutcome>,
    /// To be queued again (a retry, a probe answered): its new entry, and where.
    requeue: Option<(QueuedUrl, Requeue)>,
}

/// Where a leased URL goes back in its host's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Requeue {
    /// At its priority.
    InPlace,
    /// Behind everything queued in the job: handed out once nothing else is queued or
    /// leased ([`nearcrawl_redis_job::JOB_END_PRIORITY`]).
    AtJobEnd,
}

/// The frontier of a shared job: queues, seen set, politeness and robots.txt in Redis.
pub struct RedisFrontier {
    shared: Mutex<SharedFrontier>,
    store: Arc<dyn CrawlStore>,
    /// The agent robots.txt rules are read for.
    agent: String,
    /// Origins (`scheme://authority/`, the job's host names) by local host id, and back.
    origins: HashMap<HostId, String>,
    ids: HashMap<String, HostId>,
    held: HashMap<QueueKey, Held>,
    /// New URLs of decisions not yet committed, by origin.
    offers: BTreeMap<String, Vec<Offer>>,
    /// The URLs those decisions queued or parked, as written.
    named: Vec<String>,
    /// URLs of given-up (or spent) hosts to record as refused.
    refusals: VecDeque<(QueueKey, QueuedUrl, Verdict, String)>,
    /// Robots rules read back from the job, by origin: (version, rules).
    robots: HashMap<String, (u64, RobotsRules)>,
    /// The seeds (and a recrawl's previous pages) with their priorities, in case this worker
    /// has to seed the job (again).
    seeds: Vec<(CanonicalUrl, QueuedUrl, u32)>,
    /// URLs known to be seen in the job (a URL once seen stays seen): most links of a site
    /// are its navigation, asked about again and again. Bounded: cleared when full.
    known_seen: Mutex<HashSet<UrlKey>>,
    /// URLs the job had not seen when the decision being made looked them up
    /// ([`Frontier::look_up_seen`]): not asked again until it is committed.
    known_new: Mutex<HashSet<UrlKey>>,
    /// URLs decided by the decision being committed whose parked links were released: their
    /// parking is removed once the decision is committed and their leases finished.
    settling: Vec<(String, UrlKey)>,
    /// The server address of each host (by origin), as this worker resolved it.
    resolutions: Resolutions<String>,
    /// Places in their address's budget held by robots.txt requests in flight.
    robots_holds: HashMap<HostId, AddressHold>,
    /// Leases of decisions committed here and not yet finished in the job, with the
    /// parkings to settle after them, and since when the first waits (with the decisions'
    /// new URLs, still in `offers`).
    finishing: Vec<Done>,
    settles: Vec<(String, UrlKey)>,
    held_back_since: Option<Instant>,
}

/// The lock, whether or not a holder panicked.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// URLs [`RedisFrontier`] remembers as seen (16 bytes each: some 40 MB with the set's own).
const KNOWN_SEEN: usize = 1 << 20;

fn shared_error(err: nearcrawl_redis_job::JobError) -> EngineError {
    EngineError::Shared(err.to_string())
}

/// The URL of a job's host name (`scheme://authority/`).
fn parse_origin(origin: &str) -> Result<Url, EngineError> {
    Url::parse(origin).map_err(|e| EngineError::Shared(format!("host {origin:?} of the job: {e}")))
}

/// `scheme://authority/` of a URL: the job's name for its host.
pub(crate) fn origin_of(url: &Url) -> String {
    format!("{}://{}/", url.scheme(), authority(url))
}

impl RedisFrontier {
    /// Wraps `shared` (joined as `role`); a worker that seeds queues `seeds` now.
    pub fn open(
        shared: SharedFrontier,
        role: Role,
        store: Arc<dyn CrawlStore>,
        agent: String,
        seeds: Vec<(CanonicalUrl, QueuedUrl, u32)>,
    ) -> Result<RedisFrontier, EngineError> {
        let mut frontier = RedisFrontier {
            shared: Mutex::new(shared),
            store,
            agent,
            origins: HashMap::new(),
            ids: HashMap::new(),
            held: HashMap::new(),
            offers: BTreeMap::new(),
            named: Vec::new(),
            refusals: VecDeque::new(),
            robots: HashMap::new(),
            seeds,
            known_seen: Mutex::new(HashSet::new()),
            known_new: Mutex::new(HashSet::new()),
            settling: Vec::new(),
            resolutions: Resolutions::default(),
            robots_holds: HashMap::new(),
            finishing: Vec::new(),
            settles: Vec::new(),
            held_back_since: None,
        };
        if role == Role::Seed {
            frontier.seed()?;
        }
        Ok(frontier)
    }

    fn remember_seen(&self, key: UrlKey) {
        let mut known = lock(&self.known_seen);
        if known.len() >= KNOWN_SEEN {
            known.clear();
        }
        known.insert(key);
    }

    fn shared(&mut self) -> &mut SharedFrontier {
        self.shared
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues the seeds (those seen already are not queued again) and tells the job.
    fn seed(&mut self) -> Result<(), EngineError> {
        let mut by_origin: BTreeMap<String, Vec<Offer>> = BTreeMap::new();
        for (url, entry, priority) in &self.seeds {
            by_origin
                .entry(origin_of(url.as_url()))
                .or_default()
                .push(offer(url, entry, *priority)?);
        }
        for (origin, offers) in by_origin {
            self.shared()
                .offer(&origin, &offers)
                .map_err(shared_error)?;
        }
        self.shared().seeded().map_err(shared_error)
    }

    /// The local id of the job's host `origin`.
    fn host_id(&mut self, origin: &str) -> Result<HostId, EngineError> {
        if let Some(id) = self.ids.get(origin) {
            return Ok(*id);
        }
        let url = Url::parse(origin)
            .map_err(|e| EngineError::Shared(format!("host {origin:?} of the job: {e}")))?;
        let id = self.store.host_id(&authority(&url))?;
        self.ids.insert(origin.to_string(), id);
        self.origins.insert(id, origin.to_string());
        Ok(id)
    }

    fn origin(&self, host: HostId) -> Result<String, EngineError> {
        self.origins
            .get(&host)
            .cloned()
            .ok_or_else(|| EngineError::Shared(format!("host {host} is not one of the job's")))
    }
}

fn offer(url: &CanonicalUrl, entry: &QueuedUrl, priority: u32) -> Result<Offer, EngineError> {
    Ok(Offer {
        key: nearcrawl_store::url_key(url.as_str()),
        priority,
        entry: serde_json::to_vec(entry)
            .map_err(|e| EngineError::Shared(format!("queue entry of {url}: {e}")))?,
    })
}

fn outcome(outcome: Option<HostOutcome>) -> Outcome {
    match outcome {
        Some(HostOutcome::Answered) => Outcome::Answered,
        Some(HostOutcome::Throttled { retry_after }) => Outcome::Throttled { retry_after },
        Some(HostOutcome::Failed) => Outcome::Failed,
        None => Outcome::NotFetched,
    }
}

impl Frontier for RedisFrontier {
    fn is_seen(&self, url: &CanonicalUrl, key: &UrlKey) -> Result<bool, EngineError> {
        let origin = origin_of(url.as_url());
        let pending = self
            .offers
            .get(&origin)
            .is_some_and(|offers| offers.iter().any(|o| &o.key == key));
        // Refused by this worker (its store marks them seen), known seen already (seen is
        // for ever), or queued or refused by any worker.
        let known = lock(&self.known_seen).contains(key);
        if pending || known {
            return Ok(true);
        }
        // Looked up as new for this decision: neither this store (asked then, unchanged
        // until the decision is committed) nor the job had it.
        if lock(&self.known_new).contains(key) {
            return Ok(false);
        }
        if self.store.is_seen(key)? {
            return Ok(true);
        }
        let seen = lock(&self.shared)
            .is_seen(&origin, key)
            .map_err(shared_error)?;
        if seen {
            self.remember_seen(*key);
        }
        Ok(seen)
    }

    fn look_up_seen(&self, urls: &[&CanonicalUrl]) -> Result<(), EngineError> {
        self.look_up(urls)
    }

    fn counterpart_hub(
        &self,
        _counterpart: &CanonicalUrl,
        key: &UrlKey,
    ) -> Result<Option<bool>, EngineError> {
        // Anything else is asked of the job when the link is parked (atomically there).
        Ok(self.store.is_hub(key)?.then_some(true))
    }

    fn hub_or_park(
        &mut self,
        _commit: &mut Commit,
        counterpart: &CanonicalUrl,
        key: &UrlKey,
        link_key: UrlKey,
        link: ParkedLink,
    ) -> Result<Parking, EngineError> {
        let origin = origin_of(counterpart.as_url());
        let url = link.entry.url.clone();
        let parking = self
            .shared()
            .park(&origin, key, &link_key, &link.encode())
            .map_err(shared_error)?;
        if parking == Parking::Parked {
            self.named.push(url);
        }
        Ok(parking)
    }

    fn release(
        &mut self,
        _commit: &mut Commit,
        url: &str,
        key: &UrlKey,
        hub: bool,
    ) -> Result<Vec<ParkedLink>, EngineError> {
        let Ok(parsed) = Url::parse(url) else {
            return Ok(Vec::new());
        };
        let origin = origin_of(&parsed);
        let parked = self
            .shared()
            .decide(&origin, key, hub)
            .map_err(shared_error)?;
        let mut links = Vec::with_capacity(parked.len());
        for bytes in parked {
            links.push(ParkedLink::decode(&bytes)?);
        }
        super::in_release_order(&mut links);
        self.settling.push((origin, *key));
        Ok(links)
    }

    fn claim_refused(&mut self, url: &CanonicalUrl, key: &UrlKey) -> Result<bool, EngineError> {
        let origin = origin_of(url.as_url());
        self.shared()
            .claim_refused(&origin, key)
            .map_err(shared_error)
    }

    fn enqueue(
        &mut self,
        _commit: &mut Commit,
        url: &CanonicalUrl,
        entry: QueuedUrl,
        priority: u32,
    ) -> Result<(), EngineError> {
        let offer = offer(url, &entry, priority)?;
        self.offers
            .entry(origin_of(url.as_url()))
            .or_default()
            .push(offer);
        self.named.push(entry.url);
        Ok(())
    }

    fn named_by_decision(&self) -> &[String] {
        &self.named
    }

    fn requeue(&mut self, commit: &mut Commit, key: QueueKey, entry: QueuedUrl) {
        if let Some(held) = self.held.get_mut(&key) {
            held.requeue = Some((entry, Requeue::InPlace));
        }
        commit.taken.push(key);
    }

    fn requeue_at_end(&mut self, commit: &mut Commit, key: QueueKey, entry: QueuedUrl) {
        if let Some(held) = self.held.get_mut(&key) {
            held.requeue = Some((entry, Requeue::AtJobEnd));
        }
        commit.taken.push(key);
    }

    fn begin_round(&mut self, _now: Instant) {}

    fn next(
        &mut self,
        now: Instant,
        gate: &mut dyn FnMut() -> Option<Instant>,
        veto: &mut Veto<'_>,
    ) -> Result<Step, EngineError> {
        loop {
            if let Some((key, entry, verdict, reason)) = self.refusals.pop_front() {
                return Ok(refuse(key, entry, verdict, reason));
            }
            if let Some(at) = gate() {
                return Ok(Step::Wait(Some(at)));
            }
            if !self.shared().has_leased() {
                // The job is asked for work: what this worker decided goes first.
                self.send_held_back()?;
            }
            let shared = self
                .shared
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            let resolutions = &mut self.resolutions;
            let mut address_of = |origin: &str| {
                let url = Url::parse(origin).ok();
                match resolutions.need(&origin.to_string(), url.as_ref(), 0, now) {
                    Need::Resolve(_) => AddressOf::Unresolved,
                    Need::Resolving => AddressOf::Pending,
                    Need::Known(ip) => {
                        AddressOf::Known(ip.map(|ip| AddressKey::of(ip).to_string()))
                    }
                }
            };
            match shared
                .next_step_with(&mut address_of)
                .map_err(shared_error)?
            {
                Next::Fetch(lease) => return self.step_for(lease, veto),
                Next::Robots { host, address } => {
                    let id = self.host_id(&host)?;
                    let origin = parse_origin(&host)?;
                    if let Some(hold) = address {
                        self.shared().address_started(&hold).map_err(shared_error)?;
                        self.robots_holds.insert(id, hold);
                    }
                    return Ok(Step::Robots { host: id, origin });
                }
                Next::Resolve { host } => {
                    let id = self.host_id(&host)?;
                    let origin = parse_origin(&host)?;
                    let Some(name) = origin.host_str() else {
                        continue;
                    };
                    let name = name
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_string();
                    self.resolutions.resolving(host);
                    return Ok(Step::Resolve { host: id, name });
                }
                Next::Parked { host } => {
                    let reason = "host parked after repeated failures";
                    self.drain_refused(&host, Verdict::Error, reason)?;
                }
                Next::Spent { host } => {
                    // The job's limit: the worker that created the job set it.
                    let max = self.shared().settings().max_pages_per_host;
                    let reason = format!("max_pages_per_host ({max}) reached");
                    self.drain_refused(&host, Verdict::OutOfScope, &reason)?;
                }
                Next::Seed => self.seed()?,
                // Other workers' decisions bring work this worker cannot see coming: it
                // asks again after a short while, whatever the job's own next time.
                Next::Wait(wait) => return Ok(Step::Wait(Some(now + wait.min(POLL)))),
                Next::Done | Next::Stopped => return Ok(Step::Wait(None)),
            }
        }
    }

    fn round_wake(&self, now: Instant) -> Instant {
        now + BUSY_WAKE
    }

    fn finished(
        &mut self,
        _host: HostId,
        key: Option<QueueKey>,
        outcome: HostOutcome,
        _now: Instant,
    ) -> bool {
        if let Some(held) = key.and_then(|k| self.held.get_mut(&k)) {
            held.outcome = Some(outcome);
        }
        // Whether the host is given up is learnt from the job (a `Parked` step).
        false
    }

    fn resolved(&mut self, host: HostId, ip: Option<IpAddr>, now: Instant, ttl: Duration) {
        if let Ok(origin) = self.origin(host) {
            self.resolutions.resolved(origin, ip, now, ttl);
        }
    }

    fn address_of(&self, host: HostId) -> Option<IpAddr> {
        self.resolutions.ip(self.origins.get(&host)?)
    }

    fn addresses(&self) -> Vec<AddressSummary> {
        let mut names: BTreeMap<AddressKey, usize> = BTreeMap::new();
        for (_, ip) in self.resolutions.known() {
            *names.entry(AddressKey::of(ip)).or_default() += 1;
        }
        let mut shared = lock(&self.shared);
        names
            .into_iter()
            .map(|(key, names)| {
                let address = key.to_string();
                let backoffs = shared.address_backoffs(&address).unwrap_or_else(|e| {
                    warn!(%address, error = %e, "the address's back-offs could not be read");
                    0
                });
                AddressSummary {
                    address,
                    names,
                    backoffs,
                }
            })
            .collect()
    }

    fn robots_read(&mut self, host: HostId, rules: RobotsRules, _now: Instant, _ttl: Duration) {
        self.release_robots_hold(host, Outcome::Answered);
        let Ok(origin) = self.origin(host) else {
            return;
        };
        let shared = rules.to_shared();
        let delay = rules.crawl_delay;
        match self.shared().robots_read(&origin, &shared, delay) {
            Ok(version) => {
                self.robots.insert(origin, (version, rules));
            }
            Err(e) => warn!(host = %origin, error = %e, "robots.txt rules not shared"),
        }
    }

    fn robots_failed(&mut self, host: HostId, _now: Instant) -> bool {
        self.release_robots_hold(host, Outcome::Failed);
        let Ok(origin) = self.origin(host) else {
            return false;
        };
        match self.shared().robots_failed(&origin) {
            Ok(parked) => parked,
            Err(e) => {
                warn!(host = %origin, error = %e, "robots.txt failure not shared");
                false
            }
        }
    }

    fn drain(&mut self, _host: HostId) -> Result<Vec<(QueueKey, QueuedUrl)>, EngineError> {
        // A given-up host's queue is drained when the job hands it out (`Parked`).
        Ok(Vec::new())
    }

    fn queued(&self) -> Result<u64, EngineError> {
        let status = lock(&self.shared).status().map_err(shared_error)?;
        Ok(status.queued)
    }

    fn next_order(&self) -> u64 {
        0
    }

    fn committed(&mut self, taken: &[QueueKey]) -> Result<(), EngineError> {
        self.hold_back(taken)
    }

    fn stopping(&mut self) -> Result<(), EngineError> {
        self.send_held_back()?;
        self.shared().give_back().map_err(shared_error)
    }
}

mod held_back;
mod leases;
