//! What the shared frontier answers: a worker's role on joining, a URL to queue or leased,
//! the answer to "what next?", how a lease ended, and the job's figures.

use std::time::Duration;

use super::AddressHold;

/// What a worker is to do on joining a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Queue the seeds, then call [`SharedFrontier::seeded`](super::SharedFrontier::seeded): the job is new, or the worker
    /// that was seeding it died before it was done.
    Seed,
    /// The job is seeded (or being seeded): ask for work.
    Join,
}

/// A URL to queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The URL's key (a hash of the canonical URL): the seen set holds these.
    pub key: [u8; 16],
    /// Lower is fetched sooner.
    pub priority: u32,
    /// What the caller keeps with the URL (its queue entry), handed back with the lease.
    pub entry: Vec<u8>,
}

/// A URL leased to this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// Its host.
    pub host: String,
    /// Its key, hex.
    pub key: String,
    /// The lease's number: a finish with another number is stale.
    pub token: u64,
    /// The entry given when it was offered (or requeued).
    pub entry: Vec<u8>,
    /// Its priority in its host's queue (what a retry is queued again at).
    pub priority: u32,
    /// The host's stamp when it was picked (announcements since move it on).
    pub(super) stamp: String,
    /// When the host's robots.txt rules read by the job expire (0: never read); the rules
    /// themselves are [`SharedFrontier::robots_rules`](super::SharedFrontier::robots_rules).
    pub robots_version: u64,
    /// Its place in its server address's budget, given back when it is finished.
    pub address: Option<AddressHold>,
}

/// The frontier's answer to "what next?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Fetch this URL and then [`SharedFrontier::finish`](super::SharedFrontier::finish) it.
    Fetch(Lease),
    /// Fetch this host's robots.txt and then [`SharedFrontier::robots_read`](super::SharedFrontier::robots_read) or
    /// [`SharedFrontier::robots_failed`](super::SharedFrontier::robots_failed): no other worker will meanwhile.
    Robots {
        /// The host.
        host: String,
        /// Its place in its server address's budget: give it back with
        /// [`SharedFrontier::release_address`](super::SharedFrontier::release_address) once robots.txt is read (or not).
        address: Option<AddressHold>,
    },
    /// Resolve this host's name, then ask again ([`SharedFrontier::next_step_with`](super::SharedFrontier::next_step_with)): its
    /// requests count against its server address's budget.
    Resolve {
        /// The host.
        host: String,
    },
    /// The host was given up after repeated failures: [`SharedFrontier::drain`](super::SharedFrontier::drain) its queue
    /// and record what it held.
    Parked {
        /// The host.
        host: String,
    },
    /// The host's pages fetched and in flight reached the job's
    /// [`Settings::max_pages_per_host`](super::Settings::max_pages_per_host): [`SharedFrontier::drain`](super::SharedFrontier::drain) its queue and record what
    /// it held (URLs queued for it later are handed out the same way).
    Spent {
        /// The host.
        host: String,
    },
    /// Nothing may start now; ask again after this long.
    Wait(Duration),
    /// The job's seeding worker died: queue the seeds (they are seen once only), then
    /// [`SharedFrontier::seeded`](super::SharedFrontier::seeded).
    Seed,
    /// No host has anything queued or leased: the job is over.
    Done,
    /// The job was stopped ([`SharedFrontier::stop`](super::SharedFrontier::stop)).
    Stopped,
}

/// How a leased request ended, for the host's politeness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The server answered (any status but 429 and 503).
    Answered,
    /// 429 or 503, with its Retry-After if it sent one.
    Throttled {
        /// The server's Retry-After.
        retry_after: Option<Duration>,
    },
    /// No answer: connection refused or reset, timeout, DNS.
    Failed,
    /// No request was made (the URL was refused after it was leased).
    NotFetched,
}

/// What finishing a lease found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// Done; `parked` if the host is given up now.
    Done {
        /// The host was given up.
        parked: bool,
    },
    /// The lease had expired: the URL went back to the queue, and another worker may have
    /// fetched it already.
    Stale,
}

/// The job's figures as Redis holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// `running` or `stopped`; `missing` when the job does not exist.
    pub state: String,
    /// Whether the seeds are all queued.
    pub seeded: bool,
    /// Hosts ever announced.
    pub hosts: u64,
    /// Hosts with work queued or leased now (what waits for the job's end included).
    pub hosts_with_work: u64,
    /// URLs queued.
    pub queued: u64,
    /// URLs leased (being fetched or decided).
    pub leased: u64,
    /// URLs ever seen (queued, leased or done).
    pub seen: u64,
    /// Leases that expired (their worker took too long or died), URL requeued.
    pub reclaimed: u64,
    /// Hosts given up.
    pub parked: u64,
    /// Workers and the server time (ms) each last asked for work.
    pub workers: Vec<(String, u64)>,
}
