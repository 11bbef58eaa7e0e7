//! The frontier: which URL is fetched next. Per-host queues (kept in the store, a window of
//! each in memory), the seen set, per-host politeness and robots.txt rules, and the leases
//! of URLs in flight. The coordinator asks it for the next [`Step`] and reports how each
//! request ended; it never looks inside.
//!
//! [`Frontier`] is the interface; [`StoreFrontier`] keeps the queues in the job's
//! [`CrawlStore`] (one process); [`RedisFrontier`] keeps them in Redis, for a job shared by
//! several workers.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_fetch::RobotsRules;
use nearcrawl_frontier::{CanonicalUrl, HostOutcome, HostPoliteness, PolitenessConfig};
use nearcrawl_store::{
    Commit, CrawlStore, HostId, ParkedLink, QueueKey, QueuedUrl, UrlKey, url_key,
};
use url::Url;

use crate::error::EngineError;
use crate::record::Verdict;

/// URLs of one host held in memory; the rest stay in the store.
const HOST_BUFFER: usize = 64;

/// How long to sleep when only a finishing request can make more work ready.
const IDLE: Duration = Duration::from_secs(3600);

/// What the coordinator should do next.
#[derive(Debug)]
pub enum Step {
    /// Resolve the name of `host` (its answer goes to [`Frontier::resolved`]): its requests
    /// wait for it, so that they count against its server address's budget.
    Resolve {
        /// The host.
        host: HostId,
        /// Its name.
        name: String,
    },
    /// Fetch the robots.txt of `host` at `origin` (`scheme://authority/`).
    Robots {
        /// The host.
        host: HostId,
        /// Its origin.
        origin: Url,
    },
    /// Fetch `url`: leased until [`Frontier::finished`] is told how it ended.
    Fetch {
        /// The host.
        host: HostId,
        /// Its queue key.
        key: QueueKey,
        /// The queued URL.
        entry: QueuedUrl,
        /// The URL, parsed.
        url: Url,
    },
    /// Do not fetch this queued URL: record it with this verdict and reason (and take its key).
    Refuse {
        /// Its queue key.
        key: QueueKey,
        /// The queued URL.
        entry: QueuedUrl,
        /// Robots-disallowed, out of scope (per-host limit) or error (unparsable).
        verdict: Verdict,
        /// Why.
        reason: String,
    },
    /// Nothing may start now: look again at this instant (or when a request finishes);
    /// `None` when no host has work left.
    Wait(Option<Instant>),
}

/// What became of a duplicate's link to where its original's link leads, by what is known of
/// that place on the original's site (the counterpart): see [`Frontier::hub_or_park`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parking {
    /// The counterpart led to new pages (a hub): the link is followed now.
    Hub,
    /// The counterpart is not decided yet: the link waits for it ([`Frontier::release`]).
    Parked,
    /// The counterpart was decided and led to nothing new: the link is dropped.
    Decided,
}

/// The coordinator's last word on a URL about to be fetched: why not, if not.
pub type Veto<'a> = dyn FnMut(&QueuedUrl) -> Option<(Verdict, String)> + 'a;

/// The frontier as the coordinator uses it.
pub trait Frontier {
    /// Whether `url` (whose key is `key`) was queued or decided before.
    fn is_seen(&self, url: &CanonicalUrl, key: &UrlKey) -> Result<bool, EngineError>;
    /// Queues `url` at `priority` (lower first) as part of `commit`, which reaches the store
    /// with the decision that found the URL.
    fn enqueue(
        &mut self,
        commit: &mut Commit,
        url: &CanonicalUrl,
        entry: QueuedUrl,
        priority: u32,
    ) -> Result<(), EngineError>;
    /// Whether a link of priority `priority` to the queued URL `key` would move it up
    /// ([`Frontier::raise`]).
    fn raisable(&self, key: &UrlKey, priority: u32) -> bool {
        let _ = (key, priority);
        false
    }
    /// A focused crawl found a URL still queued (`key`) again, on a page that gives it a
    /// better priority than the page that queued it: it moves up to `priority`, reached now
    /// as `entry` (that page's path), as part of `commit` (as fish- and shark-search keep a
    /// child's best score). Returns whether it moved: only a URL queued by a link and not yet
    /// handed out does. A frontier shared by several workers keeps the first priority.
    fn raise(
        &mut self,
        commit: &mut Commit,
        key: &UrlKey,
        entry: QueuedUrl,
        priority: u32,
    ) -> Result<bool, EngineError> {
        let _ = (commit, key, entry, priority);
        Ok(false)
    }
    /// Puts leased `key` back at the end of its host's queue, as `entry` (a retry counts its
    /// attempt there), as part of `commit`.
    fn requeue(&mut self, commit: &mut Commit, key: QueueKey, entry: QueuedUrl);
    /// Starts a round over the hosts at `now`: [`Frontier::next`] then hands out what may
    /// start, host by host, until the round ends with [`Step::Wait`].
    fn begin_round(&mut self, now: Instant);
    /// The next step of the round. `gate` is asked before a request starts and answers
    /// when it may, if not now (a global rate limit); `veto` is asked last, about the URL
    /// to fetch, and answers why it must not be (a learned session parameter).
    fn next(
        &mut self,
        now: Instant,
        gate: &mut dyn FnMut() -> Option<Instant>,
        veto: &mut Veto<'_>,
    ) -> Result<Step, EngineError>;
    /// When the round would have looked again, had it been left here (the caller is busy).
    fn round_wake(&self, now: Instant) -> Instant;
    /// A request of `host` ended at `now` (`key`: the page's lease, `None` for robots.txt).
    /// Returns whether the host is now parked (given up after repeated failures).
    fn finished(
        &mut self,
        host: HostId,
        key: Option<QueueKey>,
        outcome: HostOutcome,
        now: Instant,
    ) -> bool;
    /// The name of `host` was resolved at `now`: its requests go to `ip` first (`None`: it
    /// resolves to no usable address); the answer holds for `ttl`.
    fn resolved(&mut self, host: HostId, ip: Option<IpAddr>, now: Instant, ttl: Duration) {
        let _ = (host, ip, now, ttl);
    }
    /// The address requests to `host` go to, when this frontier resolved its name.
    fn address_of(&self, host: HostId) -> Option<IpAddr> {
        let _ = host;
        None
    }
    /// Every server address this frontier met, with its names and back-offs (none for a
    /// frontier that does not resolve names).
    fn addresses(&self) -> Vec<AddressSummary> {
        Vec::new()
    }
    /// The robots.txt of `host` was read at `now`; its rules hold for `ttl`.
    fn robots_read(&mut self, host: HostId, rules: RobotsRules, now: Instant, ttl: Duration);
    /// The robots.txt of `host` could not be had: the host waits (backs off) as after a
    /// failure. Returns whether it is now parked.
    fn robots_failed(&mut self, host: HostId, now: Instant) -> bool;
    /// Takes every queued URL of `host` out (a parked host): the caller records them.
    fn drain(&mut self, host: HostId) -> Result<Vec<(QueueKey, QueuedUrl)>, EngineError>;
    /// URLs still queued, all hosts.
    fn queued(&self) -> Result<u64, EngineError>;
    /// The next queue order number (a counter the caller persists with each commit).
    fn next_order(&self) -> u64;
    /// `url` is about to be recorded without being queued (out of scope, a trap): whether
    /// this process is the first to decide it. A frontier shared by several workers asks the
    /// job, so that each such URL is recorded once across workers; one process always is (the
    /// record's commit marks the URL seen).
    fn claim_refused(&mut self, url: &CanonicalUrl, key: &UrlKey) -> Result<bool, EngineError> {
        let _ = (url, key);
        Ok(true)
    }
    /// What is known now of the page at `counterpart` (key `key`), where a duplicate's link
    /// leads on its original's site: `Some(true)`, it led to many new pages ([`Commit::hub`]:
    /// the link is followed); `Some(false)`, it was decided and did not (the link is
    /// dropped, or probed); `None`, not yet known: the link is to be parked with
    /// [`Frontier::hub_or_park`].
    fn counterpart_hub(
        &self,
        counterpart: &CanonicalUrl,
        key: &UrlKey,
    ) -> Result<Option<bool>, EngineError>;
    /// Parks `link` (key `link_key`) until the page at `counterpart` (key `key`) is decided,
    /// as part of `commit`; or, when that page was decided meanwhile, says how
    /// ([`Parking::Hub`]: follow the link now; [`Parking::Decided`]: drop it).
    fn hub_or_park(
        &mut self,
        commit: &mut Commit,
        counterpart: &CanonicalUrl,
        key: &UrlKey,
        link_key: UrlKey,
        link: ParkedLink,
    ) -> Result<Parking, EngineError>;
    /// `commit` decides the URL `url` (key `key`; `hub`: it led to many new pages): the
    /// links parked on it, taken out of their parking as part of `commit`. The caller follows
    /// them if `hub`, drops them if not.
    fn release(
        &mut self,
        commit: &mut Commit,
        url: &str,
        key: &UrlKey,
        hub: bool,
    ) -> Result<Vec<ParkedLink>, EngineError>;
    /// Whether [`Frontier::counterpart_hub`] tells an undecided counterpart from a decided one
    /// without asking anyone (a link of a copying site may then wait for its counterpart).
    fn knows_undecided(&self) -> bool {
        false
    }
    /// The keys links are parked on in this process's frontier (none for a frontier kept
    /// elsewhere).
    fn parked_keys(&self) -> Vec<UrlKey> {
        Vec::new()
    }
    /// A decision reached the job's store, deciding the leased URLs `taken`: a frontier kept
    /// elsewhere (shared by several workers) now makes it known there.
    fn committed(&mut self, taken: &[QueueKey]) -> Result<(), EngineError> {
        let _ = taken;
        Ok(())
    }
}

/// The robots.txt state of a host.
enum RobotsState {
    Unknown,
    Fetching,
    Ready { rules: RobotsRules, until: Instant },
}

/// One host's runtime state.
struct HostRuntime {
    /// `scheme://authority/`, for robots.txt.
    origin: Option<Url>,
    politeness: HostPoliteness,
    robots: RobotsState,
    /// The host's first queued URLs, in queue order.
    buffer: BTreeMap<QueueKey, QueuedUrl>,
    /// Every key up to this one has been loaded into the buffer (or decided).
    cursor: Option<QueueKey>,
    /// The store may hold URLs past the cursor.
    maybe_more: bool,
    /// Pages fetched from this host in this job.
    fetched: u64,
    /// Queue keys being fetched (leased): still in the store until decided, never loaded
    /// twice.
    in_flight_keys: HashSet<QueueKey>,
}

impl HostRuntime {
    fn new(now: Instant) -> HostRuntime {
        HostRuntime {
            origin: None,
            politeness: HostPoliteness::new(now),
            robots: RobotsState::Unknown,
            buffer: BTreeMap::new(),
            cursor: None,
            maybe_more: true,
            fetched: 0,
            in_flight_keys: HashSet::new(),
        }
    }

    fn has_work(&self) -> bool {
        !self.buffer.is_empty() || self.maybe_more
    }

    fn robots_ready(&self, now: Instant) -> Option<&RobotsRules> {
        match &self.robots {
            RobotsState::Ready { rules, until } if *until > now => Some(rules),
            _ => None,
        }
    }

    /// Keeps the buffer bounded: the keys past the limit stay in the store only.
    fn trim_buffer(&mut self) {
        while self.buffer.len() > 2 * HOST_BUFFER {
            self.buffer.pop_last();
            self.cursor = self.buffer.last_key_value().map(|(k, _)| *k);
            self.maybe_more = true;
        }
    }
}

/// How the frontier schedules: the job's politeness, robots and per-host limits.
#[derive(Debug, Clone)]
pub struct FrontierConfig {
    /// Per-host connections, delays and back-off.
    pub politeness: PolitenessConfig,
    /// Fetch robots.txt first and obey it.
    pub obey_robots: bool,
    /// Pages fetched from one host before its other URLs are refused.
    pub max_pages_per_host: Option<u64>,
    /// Hand out the URL of lowest priority among the hosts ready now (a focused crawl),
    /// rather than going round the hosts in turn, each in its own priority order.
    pub by_priority: bool,
    /// By priority: one fetch in this many goes to the best URL of the ready host fetched
    /// least from so far (0: never).
    pub explore_every: u32,
}

/// A [`Frontier`] whose queues and seen set are the job's [`CrawlStore`].
pub struct StoreFrontier {
    store: Arc<dyn CrawlStore>,
    config: FrontierConfig,
    hosts: BTreeMap<HostId, HostRuntime>,
    host_ids: HashMap<String, HostId>,
    /// Round-robin position among hosts: where the next round starts.
    next_host: HostId,
    next_order: u64,
    /// The hosts of the current round, the position in it, and the earliest wake seen.
    round: Vec<HostId>,
    round_pos: usize,
    round_wake: Option<Instant>,
    /// The latest instant the frontier was told of: a host first seen now is ready from
    /// then (the frontier reads no clock of its own).
    last_now: Instant,
    /// The URLs links are parked on ([`CrawlStore::parked_targets`]), so that deciding
    /// another URL asks the store nothing.
    parked_on: HashSet<UrlKey>,
    /// Fetches handed out by priority so far (every `explore_every`-th explores).
    takes: u64,
    /// Ordering by priority: where each URL queued by a link and not handed out yet is, so
    /// that a better link moves it up ([`Frontier::raise`]).
    queued_at: HashMap<UrlKey, QueueKey>,
    /// The hosts' server addresses and their budgets.
    addresses: Addresses,
}

impl StoreFrontier {
    /// The frontier of the job in `store` (its hosts reloaded on resume), next queue order
    /// `next_order`.
    pub fn open(
        store: Arc<dyn CrawlStore>,
        config: FrontierConfig,
        next_order: u64,
        now: Instant,
    ) -> Result<StoreFrontier, EngineError> {
        let mut frontier = StoreFrontier {
            store,
            config,
            hosts: BTreeMap::new(),
            host_ids: HashMap::new(),
            next_host: 0,
            next_order,
            round: Vec::new(),
            round_pos: 0,
            round_wake: None,
            last_now: now,
            parked_on: HashSet::new(),
            takes: 0,
            queued_at: HashMap::new(),
            addresses: Addresses::default(),
        };
        for (id, authority) in frontier.store.hosts()? {
            frontier.add_host(id, authority, now);
            if frontier.config.by_priority {
                // Where the queued URLs are, read a buffer's worth at a time.
                let mut after = None;
                loop {
                    let chunk = frontier.store.pending(id, after, HOST_BUFFER)?;
                    for (key, entry) in &chunk {
                        if movable(entry) {
                            frontier.queued_at.insert(url_key(&entry.url), *key);
                        }
                    }
                    match chunk.last() {
                        Some((key, _)) if chunk.len() == HOST_BUFFER => after = Some(*key),
                        _ => break,
                    }
                }
            }
        }
        frontier.parked_on = frontier.store.parked_targets()?.into_iter().collect();
        Ok(frontier)
    }

    fn add_host(&mut self, id: HostId, authority: String, now: Instant) {
        self.host_ids.insert(authority, id);
        self.hosts.insert(id, HostRuntime::new(now));
    }

    fn host_for(&mut self, url: &CanonicalUrl) -> Result<HostId, EngineError> {
        let now = self.last_now;
        let authority = url.authority();
        if let Some(id) = self.host_ids.get(&authority) {
            return Ok(*id);
        }
        let id = self.store.host_id(&authority)?;
        self.add_host(id, authority, now);
        Ok(id)
    }

    /// Loads more of a host's queue from the store when its buffer ran dry.
    fn refill(&mut self, id: HostId) -> Result<(), EngineError> {
        let Some(host) = self.hosts.get(&id) else {
            return Ok(());
        };
        if !host.buffer.is_empty() || !host.maybe_more {
            return Ok(());
        }
        let loaded = self.store.pending(id, host.cursor, HOST_BUFFER)?;
        let Some(host) = self.hosts.get_mut(&id) else {
            return Ok(());
        };
        host.maybe_more = loaded.len() == HOST_BUFFER;
        if let Some((last, _)) = loaded.last() {
            host.cursor = Some(*last);
        }
        if host.origin.is_none() {
            host.origin = loaded
                .first()
                .and_then(|(_, e)| Url::parse(&e.url).ok())
                .and_then(|u| u.join("/").ok());
        }
        let in_flight = &host.in_flight_keys;
        let queued_at = &self.queued_at;
        // A URL moved up is loaded at its new key: its old one may still be in the store
        // until the decision that moved it is committed.
        let stale = |k: &QueueKey, e: &QueuedUrl| {
            !queued_at.is_empty() && queued_at.get(&url_key(&e.url)).is_some_and(|now| now != k)
        };
        host.buffer.extend(
            loaded
                .into_iter()
                .filter(|(k, e)| !in_flight.contains(k) && !stale(k, e)),
        );
        Ok(())
    }

    /// The host's next step (robots.txt first), or `None` when it has to wait.
    fn take(&mut self, id: HostId, now: Instant, veto: &mut Veto<'_>) -> Option<Step> {
        let obey = self.config.obey_robots;
        let host = self.hosts.get_mut(&id)?;
        let politeness = &self.config.politeness;
        let active = host.politeness.active();
        match self
            .addresses
            .gate(id, host.origin.as_ref(), active, now, politeness)
        {
            Gate::Resolve(name) => {
                self.addresses.resolving(id);
                return Some(Step::Resolve { host: id, name });
            }
            Gate::Resolving => return None,
            Gate::At(_) | Gate::Free => {}
        }
        if obey && host.robots_ready(now).is_none() {
            if matches!(host.robots, RobotsState::Fetching) {
                return None;
            }
            let origin = host.origin.clone()?;
            host.robots = RobotsState::Fetching;
            host.politeness.start(now, politeness);
            self.addresses.start(id, now, politeness);
            return Some(Step::Robots { host: id, origin });
        }
        let (key, entry) = host.buffer.pop_first()?;
        forget(&mut self.queued_at, key, &entry);
        let url = match Url::parse(&entry.url) {
            Ok(url) => url,
            Err(e) => {
                let reason = format!("stored URL does not parse: {e}");
                return Some(refuse(key, entry, Verdict::Error, reason));
            }
        };
        if let Some(max) = self.config.max_pages_per_host
            && host.fetched >= max
        {
            let reason = format!("max_pages_per_host ({max}) reached");
            return Some(refuse(key, entry, Verdict::OutOfScope, reason));
        }
        if obey
            && !host
                .robots_ready(now)
                .is_none_or(|rules| rules.allows(&url))
        {
            let reason = "disallowed by robots.txt".to_string();
            return Some(refuse(key, entry, Verdict::RobotsDisallowed, reason));
        }
        if let Some((verdict, reason)) = veto(&entry) {
            return Some(refuse(key, entry, verdict, reason));
        }
        host.politeness.start(now, &self.config.politeness);
        self.addresses.start(id, now, &self.config.politeness);
        host.in_flight_keys.insert(key);
        Some(Step::Fetch {
            host: id,
            key,
            entry,
            url,
        })
    }
}

impl StoreFrontier {
    /// Whether host `id` may start a request now (its queue loaded from the store when its
    /// buffer ran dry); if it may later, the round notes when.
    fn ready(&mut self, id: HostId, now: Instant) -> Result<bool, EngineError> {
        self.refill(id)?;
        let Some(host) = self.hosts.get(&id) else {
            return Ok(false);
        };
        if !host.has_work() || host.politeness.is_parked() {
            return Ok(false);
        }
        let Some(ready_at) = host.politeness.ready_at(&self.config.politeness) else {
            // At its connection limit: it wakes the loop when a request finishes.
            self.round_wake = Some(self.round_wake.unwrap_or(now + IDLE));
            return Ok(false);
        };
        if ready_at > now {
            self.round_wake = Some(self.round_wake.map_or(ready_at, |w| w.min(ready_at)));
            return Ok(false);
        }
        let active = host.politeness.active();
        let politeness = &self.config.politeness;
        match self
            .addresses
            .gate(id, host.origin.as_ref(), active, now, politeness)
        {
            Gate::Resolve(_) | Gate::Free => Ok(true),
            // The answer wakes the loop.
            Gate::Resolving => Ok(false),
            Gate::At(None) => {
                // At its address's connection limit: a request ending wakes the loop.
                self.round_wake = Some(self.round_wake.unwrap_or(now + IDLE));
                Ok(false)
            }
            Gate::At(Some(at)) if at > now => {
                self.round_wake = Some(self.round_wake.map_or(at, |w| w.min(at)));
                Ok(false)
            }
            Gate::At(Some(_)) => Ok(true),
        }
    }

    /// The priority of a host's next step: 0 for its robots.txt, else its first queued URL's.
    fn head_priority(&self, id: HostId, now: Instant) -> u32 {
        let Some(host) = self.hosts.get(&id) else {
            return u32::MAX;
        };
        if self.config.obey_robots && host.robots_ready(now).is_none() {
            return 0;
        }
        host.buffer
            .first_key_value()
            .map_or(u32::MAX, |(key, _)| key.priority)
    }

    /// [`Frontier::next`] across hosts by priority: of the hosts ready now, the one whose
    /// next URL has the lowest priority (the earliest host on ties); hosts that are not ready
    /// leave the round.
    fn next_by_priority(
        &mut self,
        now: Instant,
        gate: &mut dyn FnMut() -> Option<Instant>,
        veto: &mut Veto<'_>,
    ) -> Result<Step, EngineError> {
        loop {
            let mut ready = Vec::with_capacity(self.round.len());
            for id in std::mem::take(&mut self.round) {
                if self.ready(id, now)? {
                    ready.push(id);
                }
            }
            self.round = ready;
            // Exploring: the host fetched least from first, then by priority.
            let every = u64::from(self.config.explore_every);
            let explore = every > 0 && self.takes % every == every - 1;
            let Some((pos, &id)) = self.round.iter().enumerate().min_by_key(|(pos, id)| {
                let fetched = if explore {
                    self.hosts.get(id).map_or(0, |h| h.fetched)
                } else {
                    0
                };
                (fetched, self.head_priority(**id, now), *pos)
            }) else {
                return Ok(self.end_round());
            };
            if let Some(at) = gate() {
                return Ok(self.gated(at));
            }
            match self.take(id, now, veto) {
                Some(step) => {
                    if matches!(step, Step::Fetch { .. }) {
                        self.takes += 1;
                    }
                    return Ok(step);
                }
                None => {
                    self.round.remove(pos);
                }
            }
        }
    }

    /// The gate holds every request until `at`: wait until then, or until a host of the
    /// round is ready sooner.
    fn gated(&self, at: Instant) -> Step {
        Step::Wait(Some(self.round_wake.map_or(at, |w| w.min(at))))
    }

    /// The round is over: the next one starts one host further on.
    fn end_round(&mut self) -> Step {
        self.next_host = self.next_host.wrapping_add(1) % (self.hosts.len().max(1) as HostId);
        Step::Wait(self.round_wake.take())
    }
}

/// Whether a queued URL may move up when a better link to it is found: one queued by a link
/// (not a seed, a redirect, a sitemap, a retry or a probe), whose entry the new link's may
/// replace whole.
fn movable(entry: &QueuedUrl) -> bool {
    entry.parent.is_some()
        && entry.redirects == 0
        && entry.attempts == 0
        && !entry.sitemap
        && entry.probe.is_none()
}

/// `entry`, queued at `key`, leaves the queue (handed out or drained): no link moves it now.
fn forget(queued_at: &mut HashMap<UrlKey, QueueKey>, key: QueueKey, entry: &QueuedUrl) {
    if queued_at.is_empty() {
        return;
    }
    let ukey = url_key(&entry.url);
    if queued_at.get(&ukey) == Some(&key) {
        queued_at.remove(&ukey);
    }
}

fn refuse(key: QueueKey, entry: QueuedUrl, verdict: Verdict, reason: String) -> Step {
    Step::Refuse {
        key,
        entry,
        verdict,
        reason,
    }
}

impl Frontier for StoreFrontier {
    fn is_seen(&self, _url: &CanonicalUrl, key: &UrlKey) -> Result<bool, EngineError> {
        Ok(self.store.is_seen(key)?)
    }

    fn counterpart_hub(
        &self,
        _counterpart: &CanonicalUrl,
        key: &UrlKey,
    ) -> Result<Option<bool>, EngineError> {
        if self.store.is_hub(key)? {
            Ok(Some(true))
        } else if self.store.is_undecided(key)? {
            Ok(None)
        } else {
            Ok(Some(false))
        }
    }

    fn knows_undecided(&self) -> bool {
        true
    }

    fn parked_keys(&self) -> Vec<UrlKey> {
        self.parked_on.iter().copied().collect()
    }

    fn hub_or_park(
        &mut self,
        commit: &mut Commit,
        _counterpart: &CanonicalUrl,
        key: &UrlKey,
        link_key: UrlKey,
        link: ParkedLink,
    ) -> Result<Parking, EngineError> {
        // One process decides one page at a time: the counterpart is still undecided. A link
        // parked to be followed whatever the counterpart is stays so.
        let always = |parked: &ParkedLink| parked.always;
        let kept = commit
            .parked
            .iter()
            .any(|(on, l, parked)| on == key && *l == link_key && always(parked))
            || (self.parked_on.contains(key)
                && self
                    .store
                    .parked_link(key, &link_key)?
                    .is_some_and(|parked| always(&parked)));
        if !kept {
            commit.parked.push((*key, link_key, link));
            self.parked_on.insert(*key);
        }
        Ok(Parking::Parked)
    }

    fn release(
        &mut self,
        commit: &mut Commit,
        _url: &str,
        key: &UrlKey,
        _hub: bool,
    ) -> Result<Vec<ParkedLink>, EngineError> {
        if !self.parked_on.remove(key) {
            return Ok(Vec::new());
        }
        let parked = self.store.parked_on(key)?;
        let mut links = Vec::with_capacity(parked.len());
        for (link_key, link) in parked {
            commit.unparked.push((*key, link_key));
            links.push(link);
        }
        Ok(links)
    }

    fn enqueue(
        &mut self,
        commit: &mut Commit,
        url: &CanonicalUrl,
        entry: QueuedUrl,
        priority: u32,
    ) -> Result<(), EngineError> {
        let host = self.host_for(url)?;
        let key = QueueKey {
            host,
            priority,
            order: self.next_order,
        };
        self.next_order += 1;
        let ukey = url_key(url.as_str());
        if self.config.by_priority && movable(&entry) {
            self.queued_at.insert(ukey, key);
        }
        commit.enqueue(key, ukey, entry.clone());
        if let Some(runtime) = self.hosts.get_mut(&host) {
            if runtime.origin.is_none() {
                runtime.origin = url.as_url().join("/").ok();
            }
            match runtime.cursor {
                Some(cursor) if key <= cursor => {
                    runtime.buffer.insert(key, entry);
                    runtime.trim_buffer();
                }
                _ => runtime.maybe_more = true,
            }
        }
        Ok(())
    }

    fn raisable(&self, key: &UrlKey, priority: u32) -> bool {
        self.queued_at
            .get(key)
            .is_some_and(|at| priority < at.priority)
    }

    fn raise(
        &mut self,
        commit: &mut Commit,
        key: &UrlKey,
        entry: QueuedUrl,
        priority: u32,
    ) -> Result<bool, EngineError> {
        let Some(old) = self.queued_at.get(key).copied() else {
            return Ok(false);
        };
        if priority >= old.priority || !movable(&entry) {
            return Ok(false);
        }
        let Some(runtime) = self.hosts.get_mut(&old.host) else {
            return Ok(false);
        };
        let new = QueueKey { priority, ..old };
        // Queued (or moved) by this same decision: moved within it, as the store applies a
        // commit's removals before its insertions.
        match commit.enqueued.iter_mut().find(|(k, _, _)| *k == old) {
            Some(queued) => *queued = (new, *key, entry.clone()),
            None => {
                commit.taken.push(old);
                commit.enqueue(new, *key, entry.clone());
            }
        }
        self.queued_at.insert(*key, new);
        runtime.buffer.remove(&old);
        match runtime.cursor {
            Some(cursor) if new <= cursor => {
                runtime.buffer.insert(new, entry);
            }
            _ => runtime.maybe_more = true,
        }
        Ok(true)
    }

    fn requeue(&mut self, commit: &mut Commit, key: QueueKey, entry: QueuedUrl) {
        let new_key = QueueKey {
            order: self.next_order,
            ..key
        };
        self.next_order += 1;
        commit.taken.push(key);
        commit.enqueue(new_key, url_key(&entry.url), entry.clone());
        if let Some(host) = self.hosts.get_mut(&key.host) {
            match host.cursor {
                Some(cursor) if new_key <= cursor => {
                    host.buffer.insert(new_key, entry);
                }
                _ => host.maybe_more = true,
            }
        }
    }

    fn begin_round(&mut self, now: Instant) {
        self.last_now = self.last_now.max(now);
        self.round = self
            .hosts
            .range(self.next_host..)
            .chain(self.hosts.range(..self.next_host))
            .map(|(id, _)| *id)
            .collect();
        self.round_pos = 0;
        self.round_wake = None;
    }

    fn next(
        &mut self,
        now: Instant,
        gate: &mut dyn FnMut() -> Option<Instant>,
        veto: &mut Veto<'_>,
    ) -> Result<Step, EngineError> {
        if self.config.by_priority {
            return self.next_by_priority(now, gate, veto);
        }
        while let Some(&id) = self.round.get(self.round_pos) {
            if !self.ready(id, now)? {
                self.round_pos += 1;
                continue;
            }
            if let Some(at) = gate() {
                return Ok(self.gated(at));
            }
            match self.take(id, now, veto) {
                Some(step) => return Ok(step),
                None => self.round_pos += 1,
            }
        }
        Ok(self.end_round())
    }

    fn round_wake(&self, now: Instant) -> Instant {
        self.round_wake.unwrap_or(now + IDLE)
    }

    fn finished(
        &mut self,
        host: HostId,
        key: Option<QueueKey>,
        outcome: HostOutcome,
        now: Instant,
    ) -> bool {
        self.last_now = self.last_now.max(now);
        let Some(runtime) = self.hosts.get_mut(&host) else {
            return false;
        };
        if let Some(key) = key {
            runtime.in_flight_keys.remove(&key);
            if !matches!(outcome, HostOutcome::Failed) {
                runtime.fetched += 1;
            }
        }
        runtime
            .politeness
            .finish(now, outcome, &self.config.politeness);
        self.addresses
            .finish(host, now, outcome, &self.config.politeness);
        runtime.politeness.is_parked()
    }

    fn resolved(&mut self, host: HostId, ip: Option<IpAddr>, now: Instant, ttl: Duration) {
        self.last_now = self.last_now.max(now);
        self.addresses.resolved(host, ip, now, ttl);
    }

    fn address_of(&self, host: HostId) -> Option<IpAddr> {
        self.addresses.ip(host)
    }

    fn addresses(&self) -> Vec<AddressSummary> {
        self.addresses.summary()
    }

    fn robots_read(&mut self, host: HostId, rules: RobotsRules, now: Instant, ttl: Duration) {
        let config = &self.config.politeness;
        let Some(runtime) = self.hosts.get_mut(&host) else {
            return;
        };
        runtime
            .politeness
            .set_crawl_delay(rules.crawl_delay, config);
        runtime
            .politeness
            .finish(now, HostOutcome::Answered, config);
        self.addresses
            .finish(host, now, HostOutcome::Answered, config);
        runtime.robots = RobotsState::Ready {
            rules,
            until: now + ttl,
        };
    }

    fn robots_failed(&mut self, host: HostId, now: Instant) -> bool {
        let Some(runtime) = self.hosts.get_mut(&host) else {
            return false;
        };
        runtime
            .politeness
            .finish(now, HostOutcome::Failed, &self.config.politeness);
        self.addresses
            .finish(host, now, HostOutcome::Failed, &self.config.politeness);
        runtime.robots = RobotsState::Unknown;
        runtime.politeness.is_parked()
    }

    fn drain(&mut self, host: HostId) -> Result<Vec<(QueueKey, QueuedUrl)>, EngineError> {
        let mut drained = Vec::new();
        loop {
            self.refill(host)?;
            let Some(runtime) = self.hosts.get_mut(&host) else {
                return Ok(drained);
            };
            let batch = std::mem::take(&mut runtime.buffer);
            if batch.is_empty() {
                return Ok(drained);
            }
            for (key, entry) in &batch {
                forget(&mut self.queued_at, *key, entry);
            }
            drained.extend(batch);
        }
    }

    fn queued(&self) -> Result<u64, EngineError> {
        let mut queued = 0;
        for id in self.hosts.keys() {
            queued += self.store.pending(*id, None, usize::MAX)?.len() as u64;
        }
        Ok(queued)
    }

    fn next_order(&self) -> u64 {
        self.next_order
    }
}

#[cfg(test)]
mod tests;

mod addresses;
mod shared;
pub use addresses::AddressSummary;
use addresses::{Addresses, Gate};
pub use shared::RedisFrontier;
