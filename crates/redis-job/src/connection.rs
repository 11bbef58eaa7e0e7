//! Where the job's Redis is (`redis://HOST:PORT/` or `redis+cluster://HOST:PORT,HOST:PORT/`)
//! and a connection to it that outlives a lost connection or a restarted server: a step that
//! fails for want of the server is tried again, with back-off, until the server is back or
//! the patience given runs out, and each such fault is counted.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::{
    ConnectionLike, ErrorKind, RedisError, RedisResult, RetryMethod, ScriptInvocation,
    ServerErrorKind, Value,
};

use crate::error::JobError;

/// The scheme of a Redis Cluster's address: its seed nodes after it, separated by commas.
pub const CLUSTER_SCHEME: &str = "redis+cluster://";

/// The job's Redis: one server (or a Valkey one), or the seed nodes of a Redis Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// `redis://HOST:PORT/DB` (anything the `redis` crate takes).
    Single(String),
    /// `redis+cluster://HOST:PORT,HOST:PORT/`: the nodes to learn the cluster from.
    Cluster(Vec<String>),
}

impl RedisTarget {
    /// Reads an address, checking what can be checked without connecting.
    pub fn parse(address: &str) -> Result<RedisTarget, JobError> {
        let bad = |why: &str| JobError::Address {
            address: address.to_string(),
            why: why.to_string(),
        };
        if let Some(rest) = address.strip_prefix(CLUSTER_SCHEME) {
            let nodes: Vec<String> = rest
                .trim_end_matches('/')
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(|n| format!("redis://{n}/"))
                .collect();
            if nodes.is_empty() {
                return Err(bad("no node after redis+cluster://"));
            }
            for node in &nodes {
                redis::Client::open(node.as_str())
                    .map_err(|e| bad(&format!("node {node}: {e}")))?;
            }
            return Ok(RedisTarget::Cluster(nodes));
        }
        if !(address.starts_with("redis://") || address.starts_with("unix://")) {
            return Err(bad(
                "expected redis://HOST:PORT/ or redis+cluster://HOST:PORT,HOST:PORT/",
            ));
        }
        redis::Client::open(address).map_err(|e| bad(&e.to_string()))?;
        Ok(RedisTarget::Single(address.to_string()))
    }
}

impl fmt::Display for RedisTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisTarget::Single(url) => f.write_str(url),
            RedisTarget::Cluster(nodes) => {
                let hosts: Vec<&str> = nodes
                    .iter()
                    .map(|n| n.trim_start_matches("redis://").trim_end_matches('/'))
                    .collect();
                write!(f, "{CLUSTER_SCHEME}{}/", hosts.join(","))
            }
        }
    }
}

/// How long to keep trying when the server cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patience {
    /// Give up on a step after trying this long.
    pub give_up_after: Duration,
    /// The first wait between tries (doubled each time, up to a second).
    pub first_wait: Duration,
    /// A reply not had within this long counts as a lost connection.
    pub reply_timeout: Duration,
}

impl Default for Patience {
    fn default() -> Self {
        Patience {
            give_up_after: Duration::from_secs(60),
            first_wait: Duration::from_millis(50),
            reply_timeout: Duration::from_secs(10),
        }
    }
}

/// Faults met on the way to Redis, counted for the worker's report (shared by the worker's
/// connections).
#[derive(Debug, Default)]
pub struct Faults {
    /// Steps that failed for want of the server and were tried again.
    pub retries: AtomicU64,
    /// Connections made again after one was lost (the first connection not counted).
    pub reconnects: AtomicU64,
    /// Leases finished after they had expired (the URL may have been fetched twice).
    pub stale_leases: AtomicU64,
}

impl Faults {
    /// `(retries, reconnects)` so far.
    pub fn snapshot(&self) -> (u64, u64) {
        (
            self.retries.load(Ordering::Relaxed),
            self.reconnects.load(Ordering::Relaxed),
        )
    }
}

/// A connection to the job's Redis that reconnects by itself.
pub struct Redis {
    target: RedisTarget,
    patience: Patience,
    conn: Option<Box<dyn ConnectionLike + Send>>,
    connected_once: bool,
    faults: Arc<Faults>,
}

impl fmt::Debug for Redis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redis")
            .field("target", &self.target)
            .field("connected", &self.conn.is_some())
            .finish()
    }
}

/// Whether `err` means the server could not be had (for now), not that the step is wrong.
fn is_transient(err: &RedisError) -> bool {
    err.is_io_error()
        || err.is_timeout()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
        || matches!(
            err.retry_method(),
            RetryMethod::Reconnect
                | RetryMethod::RetryImmediately
                | RetryMethod::WaitAndRetry
                | RetryMethod::ReconnectFromInitialConnections
                | RetryMethod::RefreshSlotsAndRetry
        )
}

impl Redis {
    /// Connects to `target`, trying for as long as `patience` allows.
    pub fn connect(
        target: RedisTarget,
        patience: Patience,
        faults: Arc<Faults>,
    ) -> Result<Redis, JobError> {
        let mut redis = Redis {
            target,
            patience,
            conn: None,
            connected_once: false,
            faults,
        };
        redis.run("connect", |con| redis::cmd("PING").query::<String>(con))?;
        Ok(redis)
    }

    /// Another connection to the same server, with the same patience and fault counters.
    pub fn reopen(&self) -> Result<Redis, JobError> {
        Redis::connect(self.target.clone(), self.patience, Arc::clone(&self.faults))
    }

    /// Where this connects.
    pub fn target(&self) -> &RedisTarget {
        &self.target
    }

    /// The faults counted so far.
    pub fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }

    fn open(&self) -> RedisResult<Box<dyn ConnectionLike + Send>> {
        let timeout = self.patience.reply_timeout;
        match &self.target {
            RedisTarget::Single(url) => {
                let con =
                    redis::Client::open(url.as_str())?.get_connection_with_timeout(timeout)?;
                con.set_read_timeout(Some(timeout))?;
                con.set_write_timeout(Some(timeout))?;
                Ok(Box::new(con))
            }
            RedisTarget::Cluster(nodes) => {
                let client = redis::cluster::ClusterClientBuilder::new(nodes.clone())
                    .connection_timeout(timeout)
                    .response_timeout(timeout)
                    .build()?;
                Ok(Box::new(client.get_connection()?))
            }
        }
    }

    /// Runs `step` (`what` names it in errors), reconnecting and trying again while the
    /// server cannot be had, up to the patience given. A step may thus run twice when its
    /// reply was lost: every step of this crate is safe to repeat.
    pub fn run<T>(
        &mut self,
        what: &str,
        mut step: impl FnMut(&mut dyn ConnectionLike) -> RedisResult<T>,
    ) -> Result<T, JobError> {
        let started = Instant::now();
        let mut wait = self.patience.first_wait;
        loop {
            let result = match self.conn.as_mut() {
                Some(con) => step(con.as_mut()),
                None => match self.open() {
                    Ok(con) => {
                        if self.connected_once {
                            self.faults.reconnects.fetch_add(1, Ordering::Relaxed);
                        }
                        self.connected_once = true;
                        let con = self.conn.insert(con);
                        step(con.as_mut())
                    }
                    Err(err) => Err(err),
                },
            };
            match result {
                Ok(value) => return Ok(value),
                Err(err) if is_transient(&err) => {
                    self.conn = None;
                    if started.elapsed() >= self.patience.give_up_after {
                        return Err(JobError::Unreachable {
                            target: self.target.to_string(),
                            what: what.to_string(),
                            waited: started.elapsed(),
                            last: err.to_string(),
                        });
                    }
                    self.faults.retries.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(1));
                }
                Err(err) => {
                    return Err(JobError::Redis {
                        target: self.target.to_string(),
                        what: what.to_string(),
                        error: err.to_string(),
                    });
                }
            }
        }
    }
}

impl Redis {
    /// Runs `commands` in their order, as [`Redis::run_scripts`] does scripts (one exchange
    /// on one server, one command at a time on a cluster).
    pub fn run_commands(
        &mut self,
        what: &str,
        commands: &[redis::Cmd],
    ) -> Result<Vec<Value>, JobError> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let single = matches!(self.target, RedisTarget::Single(_));
        self.run(what, |con| {
            if !single {
                return commands.iter().map(|cmd| cmd.query(con)).collect();
            }
            let mut pipe = redis::pipe();
            for cmd in commands {
                pipe.add_command(cmd.clone());
            }
            pipe.query(con)
        })
    }

    /// Runs `calls` in their order and returns their replies: on one server in one exchange
    /// (a pipeline); on a cluster one call at a time, as the calls may be on several nodes.
    /// A call whose script the server does not hold yet (a new connection, a restarted
    /// server) is loaded and run again at once. The whole is tried again as [`Redis::run`]
    /// does, so every call must be safe to repeat.
    pub fn run_scripts(
        &mut self,
        what: &str,
        calls: &[ScriptInvocation<'_>],
    ) -> Result<Vec<Value>, JobError> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let single = matches!(self.target, RedisTarget::Single(_));
        self.run(what, |con| {
            if !single {
                return calls.iter().map(|call| call.invoke(con)).collect();
            }
            let mut pipe = redis::pipe();
            for call in calls {
                pipe.invoke_script(call);
            }
            let replies: Vec<RedisResult<Value>> = pipe.ignore_errors().query(con)?;
            let mut out = Vec::with_capacity(calls.len());
            for (call, reply) in calls.iter().zip(replies) {
                out.push(match reply {
                    Err(err) if err.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                        call.invoke(con)?
                    }
                    other => other?,
                });
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_or_refused_by_name() {
        assert_eq!(
            RedisTarget::parse("redis://127.0.0.1:6379/").unwrap(),
            RedisTarget::Single("redis://127.0.0.1:6379/".into())
        );
        let cluster = RedisTarget::parse("redis+cluster://127.0.0.1:7000,127.0.0.1:7001/").unwrap();
        assert_eq!(
            cluster,
            RedisTarget::Cluster(vec![
                "redis://127.0.0.1:7000/".into(),
                "redis://127.0.0.1:7001/".into()
            ])
        );
        assert_eq!(
            cluster.to_string(),
            "redis+cluster://127.0.0.1:7000,127.0.0.1:7001/"
        );
        for bad in ["http://x/", "redis+cluster://", "127.0.0.1:6379"] {
            let err = RedisTarget::parse(bad).unwrap_err().to_string();
            assert!(err.contains(bad), "{err}");
        }
    }
}
