//! A job shared by several workers: what the crawl learned ([`Learned`]) changes only through
//! the job's log of [`RuleEvent`]s. Each worker appends its changes and replays the log in its
//! order, its own included, so that every worker numbers the rules alike and a queued URL's
//! rule is the same rule to whichever worker takes it. The log itself (Redis, in the crawler)
//! is behind [`RuleLog`]; the policy does no I/O of its own.

use crate::learned::{Learned, RuleEvent};

/// Events read from the log at once.
const READ_AT_ONCE: usize = 1024;

/// A shared job's log of changes to what the crawl learned, as the crawler keeps it.
pub trait RuleLog: std::fmt::Debug + Send {
    /// Whether the log is to be read now, for a page's links or a queued URL: a worker may
    /// let its copy lag the log a moment rather than read it at every link.
    fn due(&self) -> bool {
        true
    }
    /// Up to `max` events from the `from`th on, each as it was appended.
    fn read(&mut self, from: u64, max: usize) -> Result<Vec<Vec<u8>>, String>;
    /// Appends one event.
    fn append(&mut self, event: &[u8]) -> Result<(), String>;
}

/// A shared job's log and how far this worker's copy has replayed it.
#[derive(Debug)]
pub(crate) struct Shared {
    log: Box<dyn RuleLog>,
    /// Events replayed.
    read: u64,
}

impl Shared {
    pub(crate) fn new(log: Box<dyn RuleLog>) -> Shared {
        Shared { log, read: 0 }
    }

    /// Replays into `learned` the events the log gained since it was last read, when the log
    /// says it is due (or `now`).
    pub(crate) fn catch_up(&mut self, learned: &mut Learned, now: bool) -> Result<(), String> {
        if !now && !self.log.due() {
            return Ok(());
        }
        loop {
            let events = self.log.read(self.read, READ_AT_ONCE)?;
            for bytes in &events {
                let event: RuleEvent = serde_json::from_slice(bytes)
                    .map_err(|e| format!("the job's rule log, event {}: {e}", self.read))?;
                self.read += 1;
                learned.apply(event);
            }
            if events.len() < READ_AT_ONCE {
                return Ok(());
            }
        }
    }

    /// Appends `event` to the log, then replays into `learned` what the log holds up to it.
    pub(crate) fn append(
        &mut self,
        learned: &mut Learned,
        event: &RuleEvent,
    ) -> Result<(), String> {
        // Strings, numbers and booleans only: serialising cannot fail.
        let bytes = serde_json::to_vec(event).unwrap_or_default();
        self.log.append(&bytes)?;
        self.catch_up(learned, true)
    }
}
