//! A job shared through Redis: its rule book as a log of events
//! ([`nearcrawl_redis_job::RuleLog`]) that every worker appends its changes to and replays in
//! the log's order, its own included.

use std::time::{Duration, Instant};

use nearcrawl_link_policy::{Learned, RuleEvent};

use super::super::shared_dedup::shared_error;
use crate::error::EngineError;

/// A shared job: how long a worker's book may lag the job's log before a page's links or a
/// queued URL are judged by it.
const CATCH_UP_EVERY: Duration = Duration::from_millis(50);

/// Events read from the log at once.
const READ_AT_ONCE: usize = 1024;

/// A shared job's rule log and how far this worker's book has replayed it.
#[derive(Debug)]
pub(in crate::crawl) struct SharedRules {
    log: nearcrawl_redis_job::RuleLog,
    /// Events replayed.
    read: u64,
    /// When the log was last read.
    caught_up: Option<Instant>,
}

impl SharedRules {
    pub(in crate::crawl) fn new(log: nearcrawl_redis_job::RuleLog) -> SharedRules {
        SharedRules {
            log,
            read: 0,
            caught_up: None,
        }
    }

    /// Replays into `book` the events the log gained since it was last read, when that
    /// was more than [`CATCH_UP_EVERY`] ago (or `now`).
    pub(super) fn catch_up(&mut self, book: &mut Learned, now: bool) -> Result<(), EngineError> {
        if !now
            && self
                .caught_up
                .is_some_and(|at| at.elapsed() < CATCH_UP_EVERY)
        {
            return Ok(());
        }
        loop {
            let events = self
                .log
                .read(self.read, READ_AT_ONCE)
                .map_err(shared_error)?;
            for bytes in &events {
                let event: RuleEvent = serde_json::from_slice(bytes).map_err(|e| {
                    EngineError::Shared(format!("the job's rule log, event {}: {e}", self.read))
                })?;
                self.read += 1;
                book.apply(event);
            }
            if events.len() < READ_AT_ONCE {
                break;
            }
        }
        self.caught_up = Some(Instant::now());
        Ok(())
    }

    /// Appends `event` to the log, then replays into `book` what the log holds up to it.
    pub(super) fn append(
        &mut self,
        book: &mut Learned,
        event: &RuleEvent,
    ) -> Result<(), EngineError> {
        // Strings, numbers and booleans only: serialising cannot fail.
        let bytes = serde_json::to_vec(event).unwrap_or_default();
        self.log.append(&bytes).map_err(shared_error)?;
        self.catch_up(book, true)
    }
}
