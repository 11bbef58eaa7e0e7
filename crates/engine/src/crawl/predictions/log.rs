//! A job shared through Redis: its rule book as a log of events
//! ([`nearcrawl_redis_job::RuleLog`]) that every worker appends its changes to and replays in
//! the log's order, its own included.

use std::time::{Duration, Instant};

use nearcrawl_frontier::SessionParams;
use nearcrawl_link_policy::{CopyFacts, LinkPolicy, RuleId};
use serde::{Deserialize, Serialize};
use url::Url;

use super::super::shared_dedup::shared_error;
use crate::error::EngineError;

/// A shared job: how long a worker's book may lag the job's log before a page's links or a
/// queued URL are judged by it.
const CATCH_UP_EVERY: Duration = Duration::from_millis(50);

/// Events read from the log at once.
const READ_AT_ONCE: usize = 1024;

/// One change to the rule book, as a shared job's log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(super) enum RuleEvent {
    /// The page at `copy` was judged to have the content of `original`.
    Learned {
        copy: String,
        original: String,
        facts: CopyFacts,
    },
    /// A prediction of rule `rule` was checked: `right` or not, and when a verification by
    /// length of a right one, whether the length told (`verified`).
    Checked {
        rule: u32,
        right: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verified: Option<bool>,
    },
    /// The query parameter `name` was learned to be a session parameter of `host` (an
    /// authority): stripped from its URLs by every worker from then on.
    Session { host: String, name: String },
}

/// What the job's log replays into: the rule book, and the session parameters learned.
pub(super) struct Book<'a> {
    pub(super) policy: &'a mut LinkPolicy,
    pub(super) sessions: &'a mut SessionParams,
}

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
    pub(super) fn catch_up(&mut self, mut book: Book<'_>, now: bool) -> Result<(), EngineError> {
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
                event.apply(&mut book);
            }
            if events.len() < READ_AT_ONCE {
                break;
            }
        }
        self.caught_up = Some(Instant::now());
        Ok(())
    }

    /// Appends `event` to the log, then replays into `book` what the log holds up to it.
    pub(super) fn append(&mut self, book: Book<'_>, event: &RuleEvent) -> Result<(), EngineError> {
        // Strings, numbers and booleans only: serialising cannot fail.
        let bytes = serde_json::to_vec(event).unwrap_or_default();
        self.log.append(&bytes).map_err(shared_error)?;
        self.catch_up(book, true)
    }
}

impl RuleEvent {
    /// Makes the change in `book`.
    pub(super) fn apply(self, book: &mut Book<'_>) {
        let policy = &mut *book.policy;
        match self {
            RuleEvent::Learned {
                copy,
                original,
                facts,
            } => {
                if let (Ok(copy), Ok(original)) = (Url::parse(&copy), Url::parse(&original)) {
                    policy.learn(&copy, &original, facts);
                }
            }
            RuleEvent::Checked {
                rule,
                right,
                verified,
            } => {
                let rule = RuleId::from_number(rule);
                policy.checked(rule, right);
                if let Some(told) = verified {
                    policy.verified(rule, told);
                }
            }
            RuleEvent::Session { host, name } => {
                book.sessions.adopt(&host, &name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a log keeps reads back as the same event, which makes the same book.
    #[test]
    fn an_event_read_back_makes_the_same_change() {
        let events = [
            RuleEvent::Learned {
                copy: "http://m.example/s?id=1".into(),
                original: "http://o.example/a/1".into(),
                facts: CopyFacts {
                    same_length: Some(true),
                    adds_pages: Some(false),
                    ratio: Some(1.01),
                },
            },
            RuleEvent::Checked {
                rule: 0,
                right: true,
                verified: Some(true),
            },
            RuleEvent::Checked {
                rule: 0,
                right: false,
                verified: None,
            },
            RuleEvent::Session {
                host: "m.example".into(),
                name: "visit".into(),
            },
        ];
        let config = nearcrawl_link_policy::PolicyConfig {
            predict: nearcrawl_dedup::Predict::Check,
            ..nearcrawl_link_policy::PolicyConfig::default()
        };
        let (mut direct, mut replayed) = (LinkPolicy::new(config), LinkPolicy::new(config));
        let mut sessions = [SessionParams::default(), SessionParams::default()];
        let [direct_sessions, replayed_sessions] = &mut sessions;
        for event in events {
            let bytes = serde_json::to_vec(&event).unwrap();
            let read: RuleEvent = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(read, event);
            event.apply(&mut Book {
                policy: &mut direct,
                sessions: direct_sessions,
            });
            read.apply(&mut Book {
                policy: &mut replayed,
                sessions: replayed_sessions,
            });
        }
        assert_eq!(sessions[0].learned(), sessions[1].learned());
        assert_eq!(
            sessions[1].learned(),
            [("m.example".to_string(), "visit".to_string())]
        );
        let book = |p: &LinkPolicy| serde_json::to_string(p.book()).unwrap();
        assert_eq!(book(&direct), book(&replayed));
        let stats = direct.book().stats(RuleId::from_number(0)).unwrap();
        assert_eq!((stats.support, stats.checked, stats.confirmed), (1, 2, 1));
    }
}
