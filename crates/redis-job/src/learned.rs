//! What a job's workers learn from the pages they fetch, shared so that every worker acts on
//! all of it:
//!
//! - [`RuleLog`]: the link policy's URL rules as a log of events (`nc:{JOB}:rules`, a list),
//!   which every worker replays in the log's order, so that every worker holds the same rules
//!   under the same numbers and a queued URL naming a rule by its number means the same rule
//!   to whichever worker takes it;
//! - [`Declarations`]: what each fetched page's response declared (`nc:{JOB/HOST}:decl`, a
//!   hash by URL key): the length, shingles and links a probe of one of its counterparts is
//!   compared with, whichever worker fetched it.
//!
//! The engine says what an event or a declaration holds; this crate keeps them as bytes.

use redis::Script;

use crate::connection::Redis;
use crate::error::JobError;
use crate::frontier::key_hex;
use crate::keys::{JobName, Keys};

/// Appends an event once: a step repeated after a lost reply (the same worker's session and
/// number) appends nothing the second time. KEYS: the log, the last number appended by each
/// session. ARGV: the session, its number for this event, the event. Returns the log's length.
const APPEND: &str = r"
local last = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if tonumber(ARGV[2]) <= last then return redis.call('LLEN', KEYS[1]) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return redis.call('RPUSH', KEYS[1], ARGV[3])
";

/// The job's log of rule events, read from where this worker has got to.
pub struct RuleLog {
    redis: Redis,
    log: String,
    sessions: String,
    append: Script,
    /// This process's session: events it appends are numbered within it.
    session: String,
    /// The number of the last event this session appended.
    appended: u64,
}

impl std::fmt::Debug for RuleLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleLog")
            .field("log", &self.log)
            .field("session", &self.session)
            .field("appended", &self.appended)
            .finish()
    }
}

impl RuleLog {
    /// The log of `job`, appended to by `worker` in a session of its own (`session`: unique
    /// to this run of the worker, as a worker that restarts numbers its events from 1 again).
    pub fn open(redis: Redis, job: JobName, worker: &str, session: u64) -> RuleLog {
        let keys = Keys::new(job);
        RuleLog {
            redis,
            log: keys.job("rules"),
            sessions: keys.job("rules:sessions"),
            append: Script::new(APPEND),
            session: format!("{worker}/{session:016x}"),
            appended: 0,
        }
    }

    /// Appends `event`; the log's length after it.
    pub fn append(&mut self, event: &[u8]) -> Result<u64, JobError> {
        self.appended += 1;
        let (script, session, number) = (&self.append, &self.session, self.appended);
        let (log, sessions) = (&self.log, &self.sessions);
        self.redis.run("rule log append", |con| {
            script
                .key(log)
                .key(sessions)
                .arg(session)
                .arg(number)
                .arg(event)
                .invoke(con)
        })
    }

    /// The events from position `from` (0: the first), at most `max` of them.
    pub fn read(&mut self, from: u64, max: usize) -> Result<Vec<Vec<u8>>, JobError> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let log = &self.log;
        let last = from.saturating_add(max as u64 - 1);
        self.redis.run("rule log read", |con| {
            redis::cmd("LRANGE").arg(log).arg(from).arg(last).query(con)
        })
    }
}

/// What the job's fetched pages declared, by host and URL key.
pub struct Declarations {
    redis: Redis,
    keys: Keys,
}

impl std::fmt::Debug for Declarations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Declarations")
            .field("job", self.keys.job_name())
            .finish()
    }
}

impl Declarations {
    /// The declarations of `job`.
    pub fn open(redis: Redis, job: JobName) -> Declarations {
        Declarations {
            redis,
            keys: Keys::new(job),
        }
    }

    /// Keeps what the page at `key` of `host` (its origin, as the frontier names hosts)
    /// declared, in place of anything kept before.
    pub fn put(&mut self, host: &str, key: &[u8; 16], declared: &[u8]) -> Result<(), JobError> {
        let hash = self.keys.host(host, "decl");
        let field = key_hex(key);
        self.redis.run("declaration put", |con| {
            redis::cmd("HSET")
                .arg(&hash)
                .arg(&field)
                .arg(declared)
                .query::<()>(con)
        })
    }

    /// What the page at `key` of `host` declared, if a worker kept it.
    pub fn get(&mut self, host: &str, key: &[u8; 16]) -> Result<Option<Vec<u8>>, JobError> {
        let hash = self.keys.host(host, "decl");
        let field = key_hex(key);
        self.redis.run("declaration get", |con| {
            redis::cmd("HGET").arg(&hash).arg(&field).query(con)
        })
    }
}
