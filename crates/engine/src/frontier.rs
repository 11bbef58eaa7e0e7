//! The frontier: which URL is fetched next. Per-host queues (kept in the store, a window of
//! each in memory), the seen set, per-host politeness and robots.txt rules, and the leases
//! of URLs in flight. The coordinator asks it for the next [`Step`] and reports how each
//! request ended; it never looks inside.
//!
//! [`Frontier`] is the interface; [`StoreFrontier`] keeps the queues in the job's
//! [`CrawlStore`] (one process); [`RedisFrontier`] keeps them in Redis, for a job shared by
//! several workers.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use nearcrawl_fetch::RobotsRules;
use nearcrawl_frontier::{CanonicalUrl, HostOutcome, PolitenessConfig};
use nearcrawl_records::{AddressSummary, Verdict};
use nearcrawl_store::{Commit, HostId, ParkedLink, QueueKey, QueuedUrl, UrlKey};
use url::Url;

use crate::error::EngineError;

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
    /// Fetch the queued URL: leased until [`Frontier::finished`] is told how it ended. Its
    /// text is parsed where it is fetched, off the deciding thread (a stored URL that does
    /// not parse is recorded as an error there).
    Fetch {
        /// The host.
        host: HostId,
        /// Its queue key.
        key: QueueKey,
        /// The queued URL.
        entry: QueuedUrl,
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

/// What [`Frontier::hub_or_park`] found of the page a link would wait for: the link
/// policy's (`nearcrawl_link_policy::parking_answered` decides the link's fate from it).
pub use nearcrawl_link_policy::Parking;

/// The coordinator's last word on a URL about to be fetched: why not, if not. It may ask
/// the frontier whether another URL was queued or decided before ([`Seen`]).
pub type Veto<'a> = dyn FnMut(&QueuedUrl, &Seen<'_>) -> Option<(Verdict, String)> + 'a;

/// [`Frontier::is_seen`] while the frontier hands a URL out: in a shared job, the job's
/// answer (another worker may have queued or decided it), not this worker's store's.
pub type Seen<'a> = dyn Fn(&CanonicalUrl) -> Result<bool, EngineError> + 'a;

/// The frontier as the coordinator uses it.
pub trait Frontier {
    /// Whether `url` (whose key is `key`) was queued or decided before.
    fn is_seen(&self, url: &CanonicalUrl, key: &UrlKey) -> Result<bool, EngineError>;
    /// `urls` are about to be asked [`Frontier::is_seen`] for the decision being made: a
    /// frontier kept elsewhere asks about them all at once (this process's answers each
    /// from its store).
    fn look_up_seen(&self, urls: &[&CanonicalUrl]) -> Result<(), EngineError> {
        let _ = urls;
        Ok(())
    }
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
    /// Puts leased `key` back, as `entry`, to be handed out once the job has nothing else
    /// queued or in flight (a page waiting for its site's other pages to be decided). A
    /// frontier kept elsewhere (a shared job's) holds it back there; the default requeues it
    /// (this process's frontier is not asked: such pages are parked in it).
    fn requeue_at_end(&mut self, commit: &mut Commit, key: QueueKey, entry: QueuedUrl) {
        self.requeue(commit, key, entry);
    }
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
    /// Takes the link with key `link` out of its parking on `key` (one of a mirror's links
    /// drawn as a sample), as part of `commit`, which may have parked it: `None` when it is
    /// not parked there. Only this process's frontier parks a mirror's links.
    fn unpark(
        &mut self,
        commit: &mut Commit,
        key: &UrlKey,
        link: &UrlKey,
    ) -> Result<Option<ParkedLink>, EngineError> {
        let _ = (commit, key, link);
        Ok(None)
    }
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
    /// The URLs the decision being made queued or parked, when the frontier keeps them out
    /// of its commit (a frontier kept elsewhere sends them when the decision is committed;
    /// this process's frontier writes them in the commit, and names none here).
    fn named_by_decision(&self) -> &[String] {
        &[]
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
    /// The crawl ends (the job is done, stopped, or this worker stops): a frontier kept
    /// elsewhere sends what it held back and gives back what it leased and did not start.
    fn stopping(&mut self) -> Result<(), EngineError> {
        Ok(())
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

fn refuse(key: QueueKey, entry: QueuedUrl, verdict: Verdict, reason: String) -> Step {
    Step::Refuse {
        key,
        entry,
        verdict,
        reason,
    }
}

/// Puts links released together in the order they are queued in: by priority, then URL. A
/// store hands them back in an order of its own (fjall by a hash of each URL, which moves
/// with anything in the URL, a port; Redis by its hash table), so a crawl one request at a
/// time takes the same order on every run.
fn in_release_order(links: &mut [ParkedLink]) {
    links.sort_by(|a, b| (a.priority, &a.entry.url).cmp(&(b.priority, &b.entry.url)));
}

mod addresses;
mod shared;
mod store;
pub use shared::RedisFrontier;
pub(crate) use shared::origin_of;
pub use store::StoreFrontier;
