//! [`StoreFrontier`]: the [`Frontier`] of one process, its queues and seen set in the job's
//! [`CrawlStore`], each host's politeness, robots.txt rules and a window of its queue in
//! memory, and the server addresses of its hosts ([`Addresses`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_fetch::RobotsRules;
use nearcrawl_frontier::{CanonicalUrl, HostOutcome, HostPoliteness};
use nearcrawl_records::AddressSummary;
use nearcrawl_store::{
    Commit, CrawlStore, HostId, ParkedLink, QueueKey, QueuedUrl, UrlKey, url_key,
};
use url::Url;

use super::addresses::Addresses;
use super::{Frontier, FrontierConfig, Parking, Step, Veto};
use crate::error::EngineError;

/// URLs of one host held in memory; the rest stay in the store.
const HOST_BUFFER: usize = 64;

/// How long to sleep when only a finishing request can make more work ready.
const IDLE: Duration = Duration::from_secs(3600);

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
            // From the first queued URL that parses: one that does not (a damaged store's)
            // is recorded as an error when its turn comes.
            host.origin = loaded
                .iter()
                .find_map(|(_, e)| Url::parse(&e.url).ok())
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

    fn unpark(
        &mut self,
        commit: &mut Commit,
        key: &UrlKey,
        link: &UrlKey,
    ) -> Result<Option<ParkedLink>, EngineError> {
        let parked_here = |(on, l, _): &(UrlKey, UrlKey, ParkedLink)| on == key && l == link;
        if let Some(at) = commit.parked.iter().rposition(parked_here) {
            let (_, _, parked) = commit.parked.remove(at);
            commit.parked.retain(|p| !parked_here(p));
            return Ok(Some(parked));
        }
        if !self.parked_on.contains(key) {
            return Ok(None);
        }
        let parked = self.store.parked_link(key, link)?;
        if parked.is_some() {
            commit.unparked.push((*key, *link));
        }
        Ok(parked)
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
        super::in_release_order(&mut links);
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

mod rounds;

#[cfg(test)]
mod release_order;
#[cfg(test)]
#[path = "tests.rs"]
mod tests;
