//! A job shared through Redis: its rule log ([`nearcrawl_redis_job::RuleLog`]) as the link
//! policy's [`RuleLog`], which every worker appends its changes to and replays in the log's
//! order, its own included.

use std::time::{Duration, Instant};

use nearcrawl_link_policy::RuleLog;

/// A shared job: how long a worker's book may lag the job's log before a page's links or a
/// queued URL are judged by it.
const CATCH_UP_EVERY: Duration = Duration::from_millis(50);

/// A shared job's rule log, and when this worker last read it.
#[derive(Debug)]
pub(in crate::crawl) struct SharedRules {
    log: nearcrawl_redis_job::RuleLog,
    /// When the log was last read.
    read_at: Option<Instant>,
}

impl SharedRules {
    pub(in crate::crawl) fn new(log: nearcrawl_redis_job::RuleLog) -> SharedRules {
        SharedRules { log, read_at: None }
    }
}

impl RuleLog for SharedRules {
    fn due(&self) -> bool {
        self.read_at.is_none_or(|at| at.elapsed() >= CATCH_UP_EVERY)
    }

    fn read(&mut self, from: u64, max: usize) -> Result<Vec<Vec<u8>>, String> {
        self.read_at = Some(Instant::now());
        self.log.read(from, max).map_err(|e| e.to_string())
    }

    fn append(&mut self, event: &[u8]) -> Result<(), String> {
        self.log.append(event).map(drop).map_err(|e| e.to_string())
    }
}
