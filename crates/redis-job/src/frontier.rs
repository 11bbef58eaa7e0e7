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
mod answers;
mod batch;
mod job;
mod parking;
mod scheduling;
mod settings;

pub use addresses::{AddressHold, AddressOf};
pub use answers::{Finished, Lease, Next, Offer, Outcome, Role, Status};
pub use batch::Done;
use job::status;
pub use job::{job_reports, job_status, put_report, stop_job};
pub use settings::Settings;

const PRELUDE: &str = include_str!("lua/prelude.lua");
const HOST: &str = include_str!("lua/host.lua");

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
    /// The most URLs one take leases from a host ([`SharedFrontier::set_batch`]).
    batch: usize,
    /// URLs leased by a take beyond the first, handed out by the next steps before the job
    /// is asked again.
    leased: std::collections::VecDeque<Lease>,
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

/// lua/offer.lua's call for `offers` of a host whose keys ([`SharedFrontier::host_keys`]'s)
/// are `keys`.
fn offer_call<'a>(
    script: &'a Script,
    [q, e, _, _, p, _, seen]: [String; 7],
    offers: &[Offer],
) -> redis::ScriptInvocation<'a> {
    let mut call = script.prepare_invoke();
    call.key(q).key(e).key(seen).key(p);
    for offer in offers {
        call.arg(key_hex(&offer.key))
            .arg(offer.priority)
            .arg(offer.entry.as_slice());
    }
    call
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
            batch: 1,
            leased: std::collections::VecDeque::new(),
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
        let call = offer_call(&self.scripts.offer, self.host_keys(host), offers);
        let mut reply: Vec<i64> = self.redis.run(what, |con| call.invoke(con))?;
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

    /// [`SharedFrontier::is_seen`] of several URLs, by host, in one exchange (one server) or
    /// one per host (a cluster): per host, per key, whether it was ever queued.
    pub fn are_seen(
        &mut self,
        keys: &[(String, Vec<[u8; 16]>)],
    ) -> Result<Vec<Vec<bool>>, JobError> {
        let what = "are seen";
        let commands: Vec<redis::Cmd> = keys
            .iter()
            .filter(|(_, keys)| !keys.is_empty())
            .map(|(host, keys)| {
                let mut cmd = redis::cmd("SMISMEMBER");
                cmd.arg(self.keys.host(host, "seen"));
                for key in keys {
                    cmd.arg(key_hex(key));
                }
                cmd
            })
            .collect();
        let mut replies = self.redis.run_commands(what, &commands)?.into_iter();
        let mut out = Vec::with_capacity(keys.len());
        for (_, keys) in keys {
            if keys.is_empty() {
                out.push(Vec::new());
                continue;
            }
            let reply = replies
                .next()
                .ok_or_else(|| bad_reply(what, "fewer replies than hosts"))?;
            let seen: Vec<i64> =
                Vec::<i64>::from_redis_value(reply).map_err(|e| bad_reply(what, e))?;
            if seen.len() != keys.len() {
                return Err(bad_reply(what, format!("{} answers", seen.len())));
            }
            out.push(seen.into_iter().map(|n| n == 1).collect());
        }
        Ok(out)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::scheduling::Picked;
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
        let (taken, hint) = y.take(&host, &stamp, 1).unwrap();
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
