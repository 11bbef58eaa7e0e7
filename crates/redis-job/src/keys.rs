//! Job names and the Redis keys of a job.
//!
//! Every key of a job starts with `nc:` and carries a hash tag, so that each Lua script's
//! keys fall in one hash slot of a Redis Cluster:
//!
//! - `nc:{JOB}:...`: the job's own keys (state, the hosts ready to be asked, reports) and
//!   the near-duplicate index, whose check-and-insert reads and writes many of them at once;
//! - `nc:{JOB/HOST}:...`: one host's queue, queued entries, seen set, leases and politeness,
//!   so the frontier spreads over the cluster's nodes host by host;
//! - `nc:{JOB@ADDRESS}:...`: one server address's politeness, shared by the hosts on it.

use std::fmt;

/// The longest job name.
pub const MAX_JOB_NAME: usize = 64;

/// A job's name: 1 to 64 ASCII letters, digits, `.`, `_` or `-` (so it can sit in a hash
/// tag and a file name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JobName(String);

/// Why a job name was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobNameError {
    /// The name given.
    pub name: String,
}

impl fmt::Display for JobNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "job name {:?}: use 1 to {MAX_JOB_NAME} ASCII letters, digits, '.', '_' or '-'",
            self.name
        )
    }
}

impl std::error::Error for JobNameError {}

impl JobName {
    /// Checks `name`.
    pub fn new(name: &str) -> Result<JobName, JobNameError> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if name.is_empty() || name.len() > MAX_JOB_NAME || !name.chars().all(allowed) {
            return Err(JobNameError {
                name: name.to_string(),
            });
        }
        Ok(JobName(name.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JobName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The key names of one job.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    job: JobName,
}

impl Keys {
    pub(crate) fn new(job: JobName) -> Keys {
        Keys { job }
    }

    pub(crate) fn job_name(&self) -> &JobName {
        &self.job
    }

    /// A key of the job's own slot.
    pub(crate) fn job(&self, suffix: &str) -> String {
        format!("nc:{{{}}}:{suffix}", self.job)
    }

    /// A key of a server address's slot (its politeness across workers).
    pub(crate) fn address(&self, address: &str, suffix: &str) -> String {
        format!("nc:{{{}@{address}}}:{suffix}", self.job)
    }

    /// A key of `host`'s slot. Host names hold no braces (URL hosts cannot), so the tag
    /// ends where it should.
    pub(crate) fn host(&self, host: &str, suffix: &str) -> String {
        format!("nc:{{{}/{host}}}:{suffix}", self.job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_are_checked() {
        assert!(JobName::new("crawl-2026.11_a").is_ok());
        for bad in ["", "a b", "a{b}", "é", &"x".repeat(65)] {
            let err = JobName::new(bad).unwrap_err();
            assert!(err.to_string().contains("job name"), "{err}");
        }
    }

    #[test]
    fn keys_carry_their_slots_tag() {
        let keys = Keys::new(JobName::new("j").unwrap());
        assert_eq!(keys.job("ready"), "nc:{j}:ready");
        assert_eq!(
            keys.host("example.org:8080", "q"),
            "nc:{j/example.org:8080}:q"
        );
    }
}
