//! The frontier shared by a job's workers: per-host queues ordered by priority, the seen set,
//! per-host politeness (connections, delay, Crawl-delay, back-off, giving up), robots.txt read
//! once per host for every worker, and leases.
//!
//! A URL handed to a worker is leased until a deadline of the server's clock; the worker says
//! how it ended ([`SharedFrontier::finish`]). A lease not finished by its deadline (the worker
//! died) puts the URL back at its place in the queue, where the next worker to ask the host
//! takes it: no URL is lost, and only leased URLs are fetched twice.
//!
//! Each step is one Lua script over the keys of one hash slot: a host's own (queue, entries,
//! seen set, leases, politeness) or the job's (the hosts that have work and from when). A
//! step that spans both runs host first, job second, in an order that loses nothing if the
//! worker dies between them: a URL is queued before its host is announced, and a host leaves
//! the job's ready set only if no one announced it since it was found empty.

use std::time::Duration;

use redis::{FromRedisValue, Script, Value};

use crate::connection::Redis;
use crate::error::{JobError, bad_reply};
use crate::keys::{JobName, Keys};

mod addresses;
use addresses::Place;
pub use addresses::{AddressHold, AddressOf};

const PRELUDE: &str = include_str!("lua/prelude.lua");
const HOST: &str = include_str!("lua/host.lua");

/// A job's shared scheduling settings, fixed by the worker that creates the job; the workers
/// that join it use the job's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How long a leased URL stays leased (ms); a worker that has not finished it by then is
    /// taken for dead and the URL goes back to its queue.
    pub lease_ms: u64,
    /// How long a picked host is hidden from other workers' picks (ms).
    pub claim_ms: u64,
    /// Requests in flight per host, across all workers.
    pub max_connections_per_host: u32,
    /// Between two requests to one host (ms), across all workers.
    pub per_host_delay_ms: u64,
    /// The longest robots.txt Crawl-delay obeyed (ms).
    pub max_crawl_delay_ms: u64,
    /// The first back-off after a failure (ms), doubled per failure in a row.
    pub backoff_initial_ms: u64,
    /// The longest back-off (ms).
    pub backoff_max_ms: u64,
    /// Failures in a row after which a host is given up.
    pub max_consecutive_failures: u32,
    /// Fetch robots.txt before a host's pages and obey it.
    pub obey_robots: bool,
    /// How long one worker has to fetch a host's robots.txt before another may (ms).
    pub robots_lease_ms: u64,
    /// How long robots.txt rules hold once read (ms).
    pub robots_ttl_ms: u64,
    /// Pages fetched from one host, across all workers (0: no limit): once the host's pages
    /// fetched and in flight reach it, its queue is handed out to be recorded, not fetched
    /// ([`Next::Spent`]).
    pub max_pages_per_host: u64,
    /// Hosts are handed out by the priority of their next URL (a focused crawl: the best link
    /// first, across hosts), not by how long they have waited.
    pub by_priority: bool,
    /// Requests in flight to one server address at once, all its names together, across all
    /// workers (0: no limit).
    pub max_connections_per_address: u32,
    /// Between two requests to one server address (ms), across all workers.
    pub per_address_delay_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            lease_ms: 120_000,
            claim_ms: 50,
            max_connections_per_host: 1,
            per_host_delay_ms: 1_000,
            max_crawl_delay_ms: 30_000,
            backoff_initial_ms: 2_000,
            backoff_max_ms: 300_000,
            max_consecutive_failures: 5,
            obey_robots: true,
            robots_lease_ms: 60_000,
            robots_ttl_ms: 86_400_000,
            max_pages_per_host: 0,
            by_priority: false,
            max_connections_per_address: 0,
            per_address_delay_ms: 0,
        }
    }
}

impl Settings {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("lease_ms", self.lease_ms.to_string()),
            ("claim_ms", self.claim_ms.to_string()),
            (
                "max_connections_per_host",
                self.max_connections_per_host.to_string(),
            ),
            ("per_host_delay_ms", self.per_host_delay_ms.to_string()),
            ("max_crawl_delay_ms", self.max_crawl_delay_ms.to_string()),
            ("backoff_initial_ms", self.backoff_initial_ms.to_string()),
            ("backoff_max_ms", self.backoff_max_ms.to_string()),
            (
                "max_consecutive_failures",
                self.max_consecutive_failures.to_string(),
            ),
            ("obey_robots", u8::from(self.obey_robots).to_string()),
            ("robots_lease_ms", self.robots_lease_ms.to_string()),
            ("robots_ttl_ms", self.robots_ttl_ms.to_string()),
            ("max_pages_per_host", self.max_pages_per_host.to_string()),
            ("by_priority", u8::from(self.by_priority).to_string()),
            (
                "max_connections_per_address",
                self.max_connections_per_address.to_string(),
            ),
            (
                "per_address_delay_ms",
                self.per_address_delay_ms.to_string(),
            ),
        ]
    }

    /// Reads the pairs [`Settings::pairs`] wrote; a name missing or unreadable is an error.
    fn from_pairs(pairs: &[(String, String)]) -> Result<Settings, String> {
        let get = |name: &str| -> Result<u64, String> {
            let value = pairs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("setting {name} missing"))?;
            value
                .parse()
                .map_err(|_| format!("setting {name} = {value:?} is not a number"))
        };
        let small = |name: &str| -> Result<u32, String> {
            u32::try_from(get(name)?).map_err(|_| format!("setting {name} is too large"))
        };
        Ok(Settings {
            lease_ms: get("lease_ms")?,
            claim_ms: get("claim_ms")?,
            max_connections_per_host: small("max_connections_per_host")?,
            per_host_delay_ms: get("per_host_delay_ms")?,
            max_crawl_delay_ms: get("max_crawl_delay_ms")?,
            backoff_initial_ms: get("backoff_initial_ms")?,
            backoff_max_ms: get("backoff_max_ms")?,
            max_consecutive_failures: small("max_consecutive_failures")?,
            obey_robots: get("obey_robots")? == 1,
            robots_lease_ms: get("robots_lease_ms")?,
            robots_ttl_ms: get("robots_ttl_ms")?,
            // A job created before the setting existed has no limit.
            max_pages_per_host: get("max_pages_per_host").unwrap_or(0),
            by_priority: get("by_priority").unwrap_or(0) == 1,
            // A job created before politeness per address has none.
            max_connections_per_address: small("max_connections_per_address").unwrap_or(0),
            per_address_delay_ms: get("per_address_delay_ms").unwrap_or(0),
        })
    }

    /// The first arguments of every host script (lua/host.lua's `S`).
    fn host_args(&self) -> [String; 11] {
        [
            self.lease_ms.to_string(),
            self.max_connections_per_host.to_string(),
            self.per_host_delay_ms.to_string(),
            self.max_crawl_delay_ms.to_string(),
            self.backoff_initial_ms.to_string(),
            self.backoff_max_ms.to_string(),
            self.max_consecutive_failures.to_string(),
            u8::from(self.obey_robots).to_string(),
            self.robots_lease_ms.to_string(),
            self.robots_ttl_ms.to_string(),
            self.max_pages_per_host.to_string(),
        ]
    }
}

/// What a worker is to do on joining a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Queue the seeds, then call [`SharedFrontier::seeded`]: the job is new, or the worker
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
    stamp: String,
    /// When the host's robots.txt rules read by the job expire (0: never read); the rules
    /// themselves are [`SharedFrontier::robots_rules`].
    pub robots_version: u64,
    /// Its place in its server address's budget, given back when it is finished.
    pub address: Option<AddressHold>,
}

/// The frontier's answer to "what next?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Fetch this URL and then [`SharedFrontier::finish`] it.
    Fetch(Lease),
    /// Fetch this host's robots.txt and then [`SharedFrontier::robots_read`] or
    /// [`SharedFrontier::robots_failed`]: no other worker will meanwhile.
    Robots {
        /// The host.
        host: String,
        /// Its place in its server address's budget: give it back with
        /// [`SharedFrontier::release_address`] once robots.txt is read (or not).
        address: Option<AddressHold>,
    },
    /// Resolve this host's name, then ask again ([`SharedFrontier::next_step_with`]): its
    /// requests count against its server address's budget.
    Resolve {
        /// The host.
        host: String,
    },
    /// The host was given up after repeated failures: [`SharedFrontier::drain`] its queue
    /// and record what it held.
    Parked {
        /// The host.
        host: String,
    },
    /// The host's pages fetched and in flight reached the job's
    /// [`Settings::max_pages_per_host`]: [`SharedFrontier::drain`] its queue and record what
    /// it held (URLs queued for it later are handed out the same way).
    Spent {
        /// The host.
        host: String,
    },
    /// Nothing may start now; ask again after this long.
    Wait(Duration),
    /// The job's seeding worker died: queue the seeds (they are seen once only), then
    /// [`SharedFrontier::seeded`].
    Seed,
    /// No host has anything queued or leased: the job is over.
    Done,
    /// The job was stopped ([`SharedFrontier::stop`]).
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

struct Scripts {
    join: Script,
    seeded: Script,
    offer: Script,
    announce: Script,
    pick: Script,
    schedule: Script,
    take: Script,
    finish: Script,
    robots: Script,
    drain: Script,
    park: Script,
    decide: Script,
    settle: Script,
    address: Script,
}

impl Scripts {
    fn new() -> Scripts {
        let job = |body: &str| Script::new(&format!("{PRELUDE}\n{body}"));
        let host = |body: &str| Script::new(&format!("{PRELUDE}\n{HOST}\n{body}"));
        Scripts {
            join: job(include_str!("lua/join.lua")),
            seeded: job(include_str!("lua/seeded.lua")),
            offer: job(include_str!("lua/offer.lua")),
            announce: job(include_str!("lua/announce.lua")),
            pick: job(include_str!("lua/pick.lua")),
            schedule: job(include_str!("lua/schedule.lua")),
            take: host(include_str!("lua/take.lua")),
            finish: host(include_str!("lua/finish.lua")),
            robots: host(include_str!("lua/robots.lua")),
            drain: host(include_str!("lua/drain.lua")),
            park: job(include_str!("lua/park.lua")),
            decide: job(include_str!("lua/decide.lua")),
            settle: job(include_str!("lua/settle.lua")),
            address: job(include_str!("lua/address.lua")),
        }
    }
}

/// What [`SharedFrontier::park`] did with a link: the link policy's answer
/// (`nearcrawl_link_policy::parking_answered` decides the link's fate from it).
pub use nearcrawl_link_policy::Parking;

/// How many hosts one [`SharedFrontier::next_step`] asks before answering `Wait`.
const PICKS_PER_NEXT: usize = 16;

/// A URL given back ([`SharedFrontier::finish`]) at this priority or more waits for the job's
/// end: it is handed out only once no host has anything else queued or leased (a page that
/// waits for the rest of the job to be decided). Until then its host is out of the ready set,
/// and the job is not over. Offers' priorities (`u32`) never reach it.
pub const JOB_END_PRIORITY: u64 = 1 << 32;

/// One worker's handle on the job's shared frontier.
pub struct SharedFrontier {
    redis: Redis,
    keys: Keys,
    worker: String,
    settings: Settings,
    scripts: Scripts,
    /// The job's end was reached (as the last pick said): URLs that waited for it may be
    /// leased.
    ending: bool,
}

impl std::fmt::Debug for SharedFrontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedFrontier")
            .field("job", self.keys.job_name())
            .field("worker", &self.worker)
            .finish()
    }
}

/// A reply's parts, read as strings (Redis answers Lua numbers as integers).
fn parts(what: &str, value: Value) -> Result<Vec<Value>, JobError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(bad_reply(what, format!("{other:?}"))),
    }
}

fn text(what: &str, value: &Value) -> Result<String, JobError> {
    String::from_redis_value_ref(value).map_err(|e| bad_reply(what, e))
}

fn bytes(what: &str, value: &Value) -> Result<Vec<u8>, JobError> {
    Vec::<u8>::from_redis_value_ref(value).map_err(|e| bad_reply(what, e))
}

fn int(what: &str, value: &Value) -> Result<i64, JobError> {
    i64::from_redis_value_ref(value).map_err(|e| bad_reply(what, e))
}

fn at(what: &str, items: &[Value], i: usize) -> Result<Value, JobError> {
    items
        .get(i)
        .cloned()
        .ok_or_else(|| bad_reply(what, format!("{} parts, wanted more than {i}", items.len())))
}

/// Hex of a URL key.
pub fn key_hex(key: &[u8; 16]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(32);
    for byte in key {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    out
}

impl SharedFrontier {
    /// Joins job `job` on `redis` as `worker` (a name unique among the job's workers),
    /// creating the job with `settings` if it does not exist. Returns the frontier, this
    /// worker's role, and whether the job's settings (which it uses) differ from `settings`.
    pub fn join(
        redis: Redis,
        job: JobName,
        worker: &str,
        settings: Settings,
    ) -> Result<(SharedFrontier, Role, bool), JobError> {
        let mut frontier = SharedFrontier {
            redis,
            keys: Keys::new(job),
            worker: worker.to_string(),
            settings: settings.clone(),
            scripts: Scripts::new(),
            ending: false,
        };
        let what = "join";
        let job_key = frontier.keys.job("job");
        let pairs = settings.pairs();
        let script = &frontier.scripts.join;
        let reply: Value = frontier.redis.run(what, |con| {
            let mut call = script.key(&job_key);
            call.arg(frontier.settings.robots_lease_ms.max(1000));
            for (name, value) in &pairs {
                call.arg(*name).arg(value);
            }
            call.invoke(con)
        })?;
        let items = parts(what, reply)?;
        let role = match text(what, &at(what, &items, 0)?)?.as_str() {
            "seed" => Role::Seed,
            "join" => Role::Join,
            other => return Err(bad_reply(what, format!("role {other:?}"))),
        };
        let mut stored = Vec::new();
        for pair in items[2..].chunks(2) {
            if let [name, value] = pair {
                stored.push((text(what, name)?, text(what, value)?));
            }
        }
        let job_settings = Settings::from_pairs(&stored).map_err(|detail| JobError::Settings {
            job: frontier.keys.job_name().to_string(),
            detail,
        })?;
        let differs = job_settings != settings;
        frontier.settings = job_settings;
        Ok((frontier, role, differs))
    }

    /// The job's settings (the ones this worker uses).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// This worker's name.
    pub fn worker(&self) -> &str {
        &self.worker
    }

    /// The connection (for the job's other shared parts).
    pub fn redis(&mut self) -> &mut Redis {
        &mut self.redis
    }

    /// Every seed is queued and announced: other workers may now take the job for done when
    /// nothing is left.
    pub fn seeded(&mut self) -> Result<(), JobError> {
        let key = self.keys.job("job");
        let script = &self.scripts.seeded;
        self.redis
            .run("seeded", |con| script.key(&key).invoke::<Value>(con))?;
        Ok(())
    }

    fn host_keys(&self, host: &str) -> [String; 7] {
        ["q", "e", "l", "lt", "p", "robots", "seen"].map(|suffix| self.keys.host(host, suffix))
    }

    /// Runs one of the host scripts (lua/host.lua's layout: the host's keys, the job's
    /// settings, then `extra`).
    fn host_script(
        &mut self,
        what: &str,
        script: fn(&Scripts) -> &Script,
        host: &str,
        extra: &[Vec<u8>],
    ) -> Result<Vec<Value>, JobError> {
        self.host_script_with(what, script, host, &[], extra)
    }

    /// [`SharedFrontier::host_script`] with `more_keys` after the host's keys.
    fn host_script_with(
        &mut self,
        what: &str,
        script: fn(&Scripts) -> &Script,
        host: &str,
        more_keys: &[String],
        extra: &[Vec<u8>],
    ) -> Result<Vec<Value>, JobError> {
        let mut keys = self.host_keys(host).to_vec();
        keys.extend_from_slice(more_keys);
        let args = self.settings.host_args();
        let script = script(&self.scripts);
        let reply: Value = self.redis.run(what, |con| {
            let mut call = script.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            for arg in &args {
                call.arg(arg);
            }
            for arg in extra {
                call.arg(arg.as_slice());
            }
            call.invoke(con)
        })?;
        parts(what, reply)
    }

    /// Queues the URLs of `offers` (all of `host`) that were never seen, then announces the
    /// host. Returns, per offer, whether it was queued (false: seen before).
    pub fn offer(&mut self, host: &str, offers: &[Offer]) -> Result<Vec<bool>, JobError> {
        if offers.is_empty() {
            return Ok(Vec::new());
        }
        let what = "offer";
        let [q, e, _, _, p, _, seen] = self.host_keys(host);
        let script = &self.scripts.offer;
        let mut reply: Vec<i64> = self.redis.run(what, |con| {
            let mut call = script.key(&q);
            call.key(&e).key(&seen).key(&p);
            for offer in offers {
                call.arg(key_hex(&offer.key))
                    .arg(offer.priority)
                    .arg(offer.entry.as_slice());
            }
            call.invoke(con)
        })?;
        let head = reply.pop();
        if reply.len() != offers.len() {
            return Err(bad_reply(what, format!("{} answers", reply.len())));
        }
        self.announce_heads(&[(host, None, head)])?;
        Ok(reply.into_iter().map(|n| n == 1).collect())
    }

    /// Whether the URL of `key` on `host` was ever queued (by any worker).
    pub fn is_seen(&mut self, host: &str, key: &[u8; 16]) -> Result<bool, JobError> {
        let seen = self.keys.host(host, "seen");
        let member = key_hex(key);
        self.redis.run("is seen", |con| {
            redis::cmd("SISMEMBER").arg(&seen).arg(&member).query(con)
        })
    }

    /// A URL of `host` about to be recorded without being queued (out of scope, a trap...):
    /// marks it seen, and says whether this worker is the first of the job to decide it
    /// (then it records it; otherwise another worker did, or it was queued).
    pub fn claim_refused(&mut self, host: &str, key: &[u8; 16]) -> Result<bool, JobError> {
        let seen = self.keys.host(host, "seen");
        let member = key_hex(key);
        self.redis.run("claim refused", |con| {
            redis::cmd("SADD")
                .arg(&seen)
                .arg(&member)
                .query::<i64>(con)
                .map(|n| n == 1)
        })
    }

    /// The keys of the parking of URL `key` of `host`: its host's entries, hubs and decided
    /// marks, and the links parked on it.
    fn parking_keys(&self, host: &str, key: &str) -> [String; 4] {
        [
            self.keys.host(host, "e"),
            self.keys.host(host, "hubs"),
            self.keys.host(host, "decided"),
            self.keys.host(host, &format!("parked:{key}")),
        ]
    }

    /// Parks `link` (key `link_key`, in the caller's encoding) until URL `key` of `host` is
    /// decided ([`SharedFrontier::decide`]); or, if it was decided (or never queued), says
    /// how. Atomic with `decide`: a link is never parked on a URL already decided.
    pub fn park(
        &mut self,
        host: &str,
        key: &[u8; 16],
        link_key: &[u8; 16],
        link: &[u8],
    ) -> Result<Parking, JobError> {
        let what = "park";
        let key = key_hex(key);
        let keys = self.parking_keys(host, &key);
        let script = &self.scripts.park;
        let reply: String = self.redis.run(what, |con| {
            let mut call = script.prepare_invoke();
            for k in &keys {
                call.key(k);
            }
            call.arg(&key).arg(key_hex(link_key)).arg(link).invoke(con)
        })?;
        match reply.as_str() {
            "hub" => Ok(Parking::Hub),
            "decided" => Ok(Parking::Decided),
            "parked" => Ok(Parking::Parked),
            other => Err(bad_reply(what, format!("{other:?}"))),
        }
    }

    /// URL `key` of `host` is decided (`hub`: it led to many new pages, the engine's
    /// `hub_min_links`): no link is parked on it from now on. Returns the links parked
    /// on it, which the caller follows (a hub) or drops, then settles with
    /// [`SharedFrontier::settle`] once the URL's lease is finished; until then they stay, for
    /// a worker that decides the URL again after this one died.
    pub fn decide(
        &mut self,
        host: &str,
        key: &[u8; 16],
        hub: bool,
    ) -> Result<Vec<Vec<u8>>, JobError> {
        let key = key_hex(key);
        let [_, hubs, decided, parked] = self.parking_keys(host, &key);
        let script = &self.scripts.decide;
        self.redis.run("decide", |con| {
            script
                .key(&hubs)
                .key(&decided)
                .key(&parked)
                .arg(&key)
                .arg(if hub { "1" } else { "0" })
                .invoke(con)
        })
    }

    /// The links parked on URL `key` of `host` were followed or dropped, and its lease
    /// finished: its parking is removed.
    pub fn settle(&mut self, host: &str, key: &[u8; 16]) -> Result<(), JobError> {
        let key = key_hex(key);
        let [_, _, decided, parked] = self.parking_keys(host, &key);
        let script = &self.scripts.settle;
        self.redis.run("settle", |con| {
            script
                .key(&decided)
                .key(&parked)
                .arg(&key)
                .invoke::<i64>(con)
                .map(|_| ())
        })
    }

    /// Says that `hosts` have work from the given server time on (`None`: now).
    pub fn announce(&mut self, hosts: &[(&str, Option<u64>)]) -> Result<(), JobError> {
        if hosts.is_empty() {
            return Ok(());
        }
        let with_heads: Vec<(&str, Option<u64>, Option<i64>)> =
            hosts.iter().map(|(host, at)| (*host, *at, None)).collect();
        self.announce_heads(&with_heads)
    }

    /// [`SharedFrontier::announce`], with the priority of each host's next URL when known
    /// (-1: none).
    fn announce_heads(
        &mut self,
        hosts: &[(&str, Option<u64>, Option<i64>)],
    ) -> Result<(), JobError> {
        let keys = ["ready", "stamps", "hosts", "heads"].map(|s| self.keys.job(s));
        let script = &self.scripts.announce;
        self.redis.run("announce", |con| {
            let mut call = script.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            for (host, at, head) in hosts {
                call.arg(*host);
                match at {
                    Some(at) => call.arg(*at),
                    None => call.arg("now"),
                };
                call.arg(head_arg(*head));
            }
            call.invoke::<Value>(con)
        })?;
        Ok(())
    }

    /// What this worker should do next.
    pub fn next_step(&mut self) -> Result<Next, JobError> {
        self.next_step_with(&mut |_| AddressOf::Known(None))
    }

    /// [`SharedFrontier::next_step`], each picked host's server address given by
    /// `address_of` (in a job limiting requests per address): a place in its budget is held
    /// before its URL is leased ([`Lease::address`]), or the host waits for it while other
    /// hosts are picked; an unresolved name is handed out to be resolved ([`Next::Resolve`]).
    pub fn next_step_with(
        &mut self,
        address_of: &mut dyn FnMut(&str) -> AddressOf,
    ) -> Result<Next, JobError> {
        // A picked host that cannot give work now is rescheduled at its own time, so the next
        // pick finds another host, or says how long until the first one is ready.
        for _ in 0..PICKS_PER_NEXT {
            let (host, stamp) = match self.pick()? {
                Picked::Host { host, stamp } => (host, stamp),
                Picked::Wait(wait) => return Ok(Next::Wait(wait)),
                Picked::Other(next) => return Ok(next),
            };
            let mut hold = None;
            if self.limits_addresses() {
                match address_of(&host) {
                    // Picked again by anyone once its claim ends, resolved by then.
                    AddressOf::Unresolved => return Ok(Next::Resolve { host }),
                    AddressOf::Pending => continue,
                    AddressOf::Known(Some(address)) => {
                        match self.acquire_address(&address, &host)? {
                            Place::Held(held) => hold = Some(held),
                            Place::WaitUntil(at) => {
                                let hint = Hint { at, head: None };
                                self.schedule(&host, &stamp, hint)?;
                                continue;
                            }
                        }
                    }
                    AddressOf::Known(None) => {}
                }
            }
            let (taken, hint) = self.take(&host, &stamp)?;
            self.schedule(&host, &stamp, hint)?;
            let next = match taken {
                Some(Next::Fetch(lease)) => Some(Next::Fetch(Lease {
                    address: hold,
                    ..lease
                })),
                Some(Next::Robots { host, .. }) => Some(Next::Robots {
                    host,
                    address: hold,
                }),
                other => {
                    if let Some(hold) = &hold {
                        self.release_address(hold, Outcome::NotFetched)?;
                    }
                    other
                }
            };
            if let Some(next) = next {
                return Ok(next);
            }
        }
        Ok(Next::Wait(Duration::from_millis(10)))
    }

    fn pick(&mut self) -> Result<Picked, JobError> {
        let what = "pick";
        let keys =
            ["job", "ready", "stamps", "workers", "heads", "ending"].map(|s| self.keys.job(s));
        let script = &self.scripts.pick;
        let claim = self.settings.claim_ms;
        let by_priority = u8::from(self.settings.by_priority);
        let worker = &self.worker;
        let reply: Value = self.redis.run(what, |con| {
            let mut call = script.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            call.arg(claim)
                .arg(worker.as_str())
                .arg(by_priority)
                .invoke(con)
        })?;
        let items = parts(what, reply)?;
        let now = int(what, &at(what, &items, 1)?)?;
        Ok(match text(what, &at(what, &items, 0)?)?.as_str() {
            "host" => {
                self.ending = text(what, &at(what, &items, 4)?)? == "1";
                Picked::Host {
                    host: text(what, &at(what, &items, 2)?)?,
                    stamp: text(what, &at(what, &items, 3)?)?,
                }
            }
            "wait" => Picked::Wait(until(now, int(what, &at(what, &items, 2)?)?)),
            "seed" => Picked::Other(Next::Seed),
            "done" => Picked::Other(Next::Done),
            "stopped" => Picked::Other(Next::Stopped),
            other => return Err(bad_reply(what, format!("{other:?}"))),
        })
    }

    /// Asks `host` for a URL; returns the step (if any) and when the host may next give work.
    fn take(&mut self, host: &str, stamp: &str) -> Result<(Option<Next>, Hint), JobError> {
        let what = "take";
        let ending = vec![u8::from(self.ending) + b'0'];
        let items = self.host_script(what, |s| &s.take, host, &[ending])?;
        let now = int(what, &at(what, &items, 1)?)?;
        let hint_at = |at: i64| Hint { at, head: None };
        Ok(match text(what, &at(what, &items, 0)?)?.as_str() {
            "lease" => {
                let lease = Lease {
                    host: host.to_string(),
                    key: text(what, &at(what, &items, 2)?)?,
                    token: u64::try_from(int(what, &at(what, &items, 3)?)?)
                        .map_err(|e| bad_reply(what, e))?,
                    entry: bytes(what, &at(what, &items, 4)?)?,
                    priority: u32::try_from(int(what, &at(what, &items, 9)?)?).unwrap_or(u32::MAX),
                    robots_version: u64::try_from(int(what, &at(what, &items, 6)?)?).unwrap_or(0),
                    stamp: stamp.to_string(),
                    address: None,
                };
                let hint = Hint {
                    head: Some(int(what, &at(what, &items, 8)?)?),
                    ..hint_at(int(what, &at(what, &items, 5)?)?)
                };
                (Some(Next::Fetch(lease)), hint)
            }
            "robots" => (
                Some(Next::Robots {
                    host: host.to_string(),
                    address: None,
                }),
                hint_at(now + self.settings.robots_lease_ms as i64),
            ),
            "parked" => (
                Some(Next::Parked {
                    host: host.to_string(),
                }),
                hint_at(now),
            ),
            "spent" => (
                Some(Next::Spent {
                    host: host.to_string(),
                }),
                hint_at(now),
            ),
            "wait" => (None, hint_at(int(what, &at(what, &items, 2)?)?)),
            "empty" => (None, hint_at(-1)),
            other => return Err(bad_reply(what, format!("{other:?}"))),
        })
    }

    fn schedule(&mut self, host: &str, stamp: &str, hint: Hint) -> Result<(), JobError> {
        let [ready, stamps, heads, job, ending] =
            ["ready", "stamps", "heads", "job", "ending"].map(|s| self.keys.job(s));
        let script = &self.scripts.schedule;
        let head = head_arg(hint.head);
        self.redis.run("schedule", |con| {
            script
                .key(&ready)
                .key(&stamps)
                .key(&heads)
                .key(&job)
                .key(&ending)
                .arg(host)
                .arg(stamp)
                .arg(hint.at)
                .arg(&head)
                .invoke::<Value>(con)
        })?;
        Ok(())
    }

    /// `lease` is done with: `outcome` says how the request went, and `requeue` (priority,
    /// entry) puts the URL back in its queue to be fetched again later (a retry; from
    /// [`JOB_END_PRIORITY`] on, once the job has nothing else to do). The host is announced
    /// again when it has work left.
    pub fn finish(
        &mut self,
        lease: &Lease,
        outcome: Outcome,
        requeue: Option<(u64, &[u8])>,
    ) -> Result<Finished, JobError> {
        self.finish_step(lease, outcome, requeue, false)
    }

    /// [`SharedFrontier::finish`] and [`SharedFrontier::settle`] of the leased URL, in one
    /// step: the URL was decided ([`SharedFrontier::decide`]) and the links parked on it
    /// followed or dropped. The parking is settled even if the lease had expired (stale).
    pub fn finish_and_settle(
        &mut self,
        lease: &Lease,
        outcome: Outcome,
    ) -> Result<Finished, JobError> {
        self.finish_step(lease, outcome, None, true)
    }

    fn finish_step(
        &mut self,
        lease: &Lease,
        outcome: Outcome,
        requeue: Option<(u64, &[u8])>,
        settle: bool,
    ) -> Result<Finished, JobError> {
        let what = "finish";
        if let Some(hold) = &lease.address {
            // The address's place first: a finish that finds the lease stale still ends the
            // request it held the place for.
            self.release_address(hold, outcome)?;
        }
        let (outcome, retry_after) = addresses::outcome_args(outcome);
        let (priority, entry) = requeue.map_or((-1, &[][..]), |(p, e)| {
            (i64::try_from(p).unwrap_or(i64::MAX), e)
        });
        let extra = [
            lease.key.as_bytes().to_vec(),
            lease.token.to_string().into_bytes(),
            outcome.as_bytes().to_vec(),
            retry_after.to_string().into_bytes(),
            priority.to_string().into_bytes(),
            entry.to_vec(),
        ];
        let parking = match settle {
            true => {
                let [_, _, decided, parked] = self.parking_keys(&lease.host, &lease.key);
                vec![decided, parked]
            }
            false => Vec::new(),
        };
        let items = self.host_script_with(what, |s| &s.finish, &lease.host, &parking, &extra)?;
        match text(what, &at(what, &items, 0)?)?.as_str() {
            "stale" => {
                let faults = self.redis.faults();
                faults
                    .stale_leases
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(Finished::Stale)
            }
            "ok" => {
                let hint = int(what, &at(what, &items, 2)?)?;
                let parked = int(what, &at(what, &items, 3)?)? == 1;
                if hint >= 0 {
                    let head = int(what, &at(what, &items, 4)?)?;
                    self.announce_heads(&[(&lease.host, Some(hint as u64), Some(head))])?;
                } else {
                    // Nothing queued or leased (or only what waits for the job's end): the
                    // host leaves the ready set now rather than at the time its lease would
                    // have ended.
                    let hint = Hint {
                        at: hint,
                        head: None,
                    };
                    self.schedule(&lease.host, &lease.stamp, hint)?;
                }
                Ok(Finished::Done { parked })
            }
            other => Err(bad_reply(what, format!("{other:?}"))),
        }
    }

    /// The host's robots.txt was read: `rules` (kept as given, for every worker to read back
    /// with [`SharedFrontier::robots_rules`]) and its Crawl-delay.
    pub fn robots_read(
        &mut self,
        host: &str,
        rules: &[u8],
        crawl_delay: Option<Duration>,
    ) -> Result<u64, JobError> {
        let delay = crawl_delay.map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        self.robots_step(host, "read", rules, delay).map(|(v, _)| v)
    }

    /// The host's robots.txt could not be had: the host backs off as after a failure.
    /// Returns whether it is given up now.
    pub fn robots_failed(&mut self, host: &str) -> Result<bool, JobError> {
        self.robots_step(host, "failed", &[], -1).map(|(_, p)| p)
    }

    fn robots_step(
        &mut self,
        host: &str,
        status: &str,
        rules: &[u8],
        delay: i64,
    ) -> Result<(u64, bool), JobError> {
        let what = "robots";
        let extra = [
            status.as_bytes().to_vec(),
            rules.to_vec(),
            delay.to_string().into_bytes(),
        ];
        let items = self.host_script(what, |s| &s.robots, host, &extra)?;
        let version = u64::try_from(int(what, &at(what, &items, 2)?)?).unwrap_or(0);
        let parked = int(what, &at(what, &items, 3)?)? == 1;
        self.announce(&[(host, None)])?;
        Ok((version, parked))
    }

    /// The robots.txt rules of `host` as a worker stored them, if any.
    pub fn robots_rules(&mut self, host: &str) -> Result<Option<Vec<u8>>, JobError> {
        let key = self.keys.host(host, "robots");
        self.redis.run("robots rules", |con| {
            redis::cmd("GET").arg(&key).query::<Option<Vec<u8>>>(con)
        })
    }

    /// Takes up to `max` queued URLs out of given-up `host`'s queue: (key hex, entry).
    pub fn drain(&mut self, host: &str, max: usize) -> Result<Vec<(String, Vec<u8>)>, JobError> {
        let what = "drain";
        let items = self.host_script(what, |s| &s.drain, host, &[max.to_string().into_bytes()])?;
        let mut out = Vec::with_capacity(items.len() / 2);
        for pair in items.chunks(2) {
            if let [key, entry] = pair {
                out.push((text(what, key)?, bytes(what, entry)?));
            }
        }
        Ok(out)
    }

    /// Stops the job: workers asking for work are told [`Next::Stopped`].
    pub fn stop(&mut self) -> Result<(), JobError> {
        let key = self.keys.job("job");
        self.redis.run("stop", |con| {
            redis::cmd("HSET")
                .arg(&key)
                .arg("state")
                .arg("stopped")
                .query::<()>(con)
        })
    }

    /// The job's figures now (reads every host's queue sizes: a command for people, not for
    /// a worker's loop).
    pub fn status(&mut self) -> Result<Status, JobError> {
        status(&mut self.redis, &self.keys)
    }
}

/// The figures of `job` on `redis`, without joining it.
pub fn job_status(redis: &mut Redis, job: &JobName) -> Result<Status, JobError> {
    status(redis, &Keys::new(job.clone()))
}

/// Stops `job` on `redis` without joining it.
pub fn stop_job(redis: &mut Redis, job: &JobName) -> Result<bool, JobError> {
    let key = Keys::new(job.clone()).job("job");
    redis.run("stop", |con| {
        let exists: bool = redis::cmd("EXISTS").arg(&key).query(con)?;
        if exists {
            redis::cmd("HSET")
                .arg(&key)
                .arg("state")
                .arg("stopped")
                .query::<()>(con)?;
        }
        Ok(exists)
    })
}

/// Keeps worker `worker`'s report of `job` (its `report.json`, as text) in the job, for
/// `nearcrawl job report` to merge; a later report of the same worker replaces it.
pub fn put_report(
    redis: &mut Redis,
    job: &JobName,
    worker: &str,
    report: &str,
) -> Result<(), JobError> {
    let key = Keys::new(job.clone()).job("reports");
    redis.run("put report", |con| {
        redis::cmd("HSET")
            .arg(&key)
            .arg(worker)
            .arg(report)
            .query::<()>(con)
    })
}

/// The reports the workers of `job` kept ([`put_report`]): (worker, report), by worker.
pub fn job_reports(redis: &mut Redis, job: &JobName) -> Result<Vec<(String, String)>, JobError> {
    let key = Keys::new(job.clone()).job("reports");
    let mut reports: Vec<(String, String)> =
        redis.run("reports", |con| redis::cmd("HGETALL").arg(&key).query(con))?;
    reports.sort();
    Ok(reports)
}

fn status(redis: &mut Redis, keys: &Keys) -> Result<Status, JobError> {
    let job_key = keys.job("job");
    let job: Vec<(String, String)> = redis.run("status", |con| {
        redis::cmd("HGETALL").arg(&job_key).query(con)
    })?;
    let (ready, ending): (u64, u64) = redis.run("status", |con| {
        Ok((
            redis::cmd("ZCARD").arg(keys.job("ready")).query(con)?,
            redis::cmd("SCARD").arg(keys.job("ending")).query(con)?,
        ))
    })?;
    let hosts_with_work = ready + ending;
    let hosts: Vec<String> = redis.run("status", |con| {
        redis::cmd("SMEMBERS").arg(keys.job("hosts")).query(con)
    })?;
    let workers: Vec<(String, u64)> = redis.run("status", |con| {
        redis::cmd("HGETALL").arg(keys.job("workers")).query(con)
    })?;
    let field = |name: &str| job.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let mut status = Status {
        state: field("state").unwrap_or("missing").to_string(),
        seeded: field("seeded") == Some("done"),
        hosts: hosts.len() as u64,
        hosts_with_work,
        workers,
        ..Status::default()
    };
    for host in &hosts {
        let (queued, leased, seen, reclaimed, parked): (u64, u64, u64, Option<u64>, Option<u64>) =
            redis.run("status", |con| {
                Ok((
                    redis::cmd("ZCARD").arg(keys.host(host, "q")).query(con)?,
                    redis::cmd("ZCARD").arg(keys.host(host, "l")).query(con)?,
                    redis::cmd("SCARD")
                        .arg(keys.host(host, "seen"))
                        .query(con)?,
                    redis::cmd("HGET")
                        .arg(keys.host(host, "p"))
                        .arg("reclaimed")
                        .query(con)?,
                    redis::cmd("HGET")
                        .arg(keys.host(host, "p"))
                        .arg("parked")
                        .query(con)?,
                ))
            })?;
        status.queued += queued;
        status.leased += leased;
        status.seen += seen;
        status.reclaimed += reclaimed.unwrap_or(0);
        status.parked += parked.unwrap_or(0);
    }
    status.workers.sort();
    Ok(status)
}

enum Picked {
    Host { host: String, stamp: String },
    Wait(Duration),
    Other(Next),
}

/// When a host may next give work, by the server's clock: -1 when it has nothing queued or
/// leased, -2 when all it has queued waits for the job's end ([`JOB_END_PRIORITY`]).
#[derive(Clone, Copy)]
struct Hint {
    at: i64,
    /// The priority of its next URL, when the step read it (-1: none).
    head: Option<i64>,
}

/// The scripts' form of the priority of a host's next URL: `-1` (nothing queued) is `none`,
/// not known is empty.
fn head_arg(head: Option<i64>) -> String {
    match head {
        Some(head) if head >= 0 => head.to_string(),
        Some(_) => "none".to_string(),
        None => String::new(),
    }
}

/// From server time `now` to `at` (both ms), never negative.
fn until(now: i64, at: i64) -> Duration {
    Duration::from_millis(u64::try_from(at.saturating_sub(now)).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::server::LocalRedis;
    use crate::{Patience, RedisTarget};
    use std::sync::Arc;

    fn join(url: &str, worker: &str) -> SharedFrontier {
        let redis = Redis::connect(
            RedisTarget::parse(url).unwrap(),
            Patience::default(),
            Arc::default(),
        )
        .unwrap();
        let settings = Settings {
            per_host_delay_ms: 0,
            max_connections_per_host: 2,
            obey_robots: false,
            ..Settings::default()
        };
        let job = JobName::new("stale").unwrap();
        SharedFrontier::join(redis, job, worker, settings)
            .unwrap()
            .0
    }

    #[test]
    fn key_hex_is_lowercase_hex_of_every_byte() {
        let key: [u8; 16] = std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0xa5);
        let expected: String = key.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(key_hex(&key), expected);
        assert_eq!(key_hex(&[0xff; 16]), "f".repeat(32));
    }

    /// A worker reads a host's time while another worker's lease is held (the lease's
    /// deadline), and writes it after that lease was finished: the host, empty by then, must
    /// not wait in the ready set until the deadline, which would hold the job open.
    #[test]
    fn a_time_read_before_a_finish_does_not_hold_an_empty_host() {
        let server = LocalRedis::start(false).unwrap();
        let (mut x, mut y) = (join(&server.url(), "x"), join(&server.url(), "y"));
        let offer = Offer {
            key: [1; 16],
            priority: 0,
            entry: b"u".to_vec(),
        };
        x.offer("h.test", &[offer]).unwrap();
        x.seeded().unwrap();
        let Next::Fetch(lease) = x.next_step().unwrap() else {
            panic!("x should lease the URL")
        };
        // Announced again (by a worker that found a link there, seen already).
        y.announce(&[("h.test", None)]).unwrap();
        let Picked::Host { host, stamp } = y.pick().unwrap() else {
            panic!("y should pick the host")
        };
        let (taken, hint) = y.take(&host, &stamp).unwrap();
        assert!(taken.is_none() && hint.at >= 0, "wait for x's lease");
        x.finish(&lease, Outcome::Answered, None).unwrap();
        y.schedule(&host, &stamp, hint).unwrap();
        // The host is looked at now, found empty, and the job is done.
        let mut steps = Vec::new();
        for _ in 0..3 {
            let next = y.next_step().unwrap();
            steps.push(next.clone());
            if next == Next::Done {
                break;
            }
        }
        assert_eq!(steps.last(), Some(&Next::Done), "{steps:?}");
    }
}
