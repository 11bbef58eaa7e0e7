//! What can go wrong with a shared job.

use std::fmt;
use std::time::Duration;

/// An error of the shared job, naming the server and the step.
#[derive(Debug)]
pub enum JobError {
    /// The address cannot be used.
    Address {
        /// As given.
        address: String,
        /// Why not.
        why: String,
    },
    /// The server could not be had for as long as the patience allowed.
    Unreachable {
        /// The server.
        target: String,
        /// The step tried.
        what: String,
        /// How long it was tried.
        waited: Duration,
        /// The last error.
        last: String,
    },
    /// The server refused the step.
    Redis {
        /// The server.
        target: String,
        /// The step.
        what: String,
        /// The server's answer.
        error: String,
    },
    /// The server's answer is not what the step expects (another program's keys under the
    /// job's names, or a version of this crate that writes another layout).
    Reply {
        /// The step.
        what: String,
        /// What was wrong.
        detail: String,
    },
    /// A worker's settings differ from the job's.
    Settings {
        /// The job.
        job: String,
        /// What differs.
        detail: String,
    },
    /// A local server (tests, demos) could not be started.
    LocalServer(String),
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::Address { address, why } => write!(f, "redis address {address:?}: {why}"),
            JobError::Unreachable {
                target,
                what,
                waited,
                last,
            } => write!(
                f,
                "{target}: {what}: server unreachable for {:.1} s (last error: {last})",
                waited.as_secs_f64()
            ),
            JobError::Redis {
                target,
                what,
                error,
            } => write!(f, "{target}: {what}: {error}"),
            JobError::Reply { what, detail } => write!(f, "{what}: unexpected reply: {detail}"),
            JobError::Settings { job, detail } => write!(f, "job {job}: {detail}"),
            JobError::LocalServer(why) => write!(f, "local redis-server: {why}"),
        }
    }
}

impl std::error::Error for JobError {}

/// A reply of the wrong shape, as an error of step `what`.
pub(crate) fn bad_reply(what: &str, detail: impl fmt::Display) -> JobError {
    JobError::Reply {
        what: what.to_string(),
        detail: detail.to_string(),
    }
}
