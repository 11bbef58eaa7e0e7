//! The job's own counters: the next record's number, the pages fetched and the bytes of
//! robots.txt files. The store keeps them with each decision; a decision writes only those
//! that moved since the last commit landed.

use std::borrow::Cow;

use nearcrawl_store::{Commit, CrawlStore};

use crate::error::EngineError;

/// The counters' names in the store, in the order of [`Values`].
const NAMES: [&str; 4] = ["next_seq", "next_order", "pages_fetched", "robots_bytes"];

/// The four counters' values, in the order of [`NAMES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Values([u64; 4]);

/// The job's counters, and what of them is known to be in the store.
#[derive(Debug)]
pub(super) struct JobCounters {
    next_seq: u64,
    pages_fetched: u64,
    robots_bytes: u64,
    /// The values as last committed: `None` when not known (before the first commit, and
    /// while one is in flight or failed).
    written: Option<Values>,
}

impl JobCounters {
    /// The counters a resumed job left in `store` (zero for a new one).
    pub(super) fn resume(store: &dyn CrawlStore) -> Result<JobCounters, EngineError> {
        Ok(JobCounters {
            next_seq: store.counter(NAMES[0])?.unwrap_or(0),
            pages_fetched: store.counter(NAMES[2])?.unwrap_or(0),
            robots_bytes: store.counter(NAMES[3])?.unwrap_or(0),
            written: None,
        })
    }

    /// The next record's sequence number, taken.
    pub(super) fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// The number the next record will take.
    pub(super) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Whether the job's page limit (`max`) is reached, counting the pages `in_flight`.
    pub(super) fn page_limit(&self, max: Option<u64>, in_flight: usize) -> bool {
        max.is_some_and(|max| self.pages_fetched + in_flight as u64 >= max)
    }

    /// Bytes of robots.txt files fetched by the job.
    pub(super) fn robots_bytes(&self) -> u64 {
        self.robots_bytes
    }

    /// One more page fetched.
    pub(super) fn fetched_page(&mut self) {
        self.pages_fetched += 1;
    }

    /// A robots.txt file of `bytes` fetched.
    pub(super) fn fetched_robots(&mut self, bytes: u64) {
        self.robots_bytes += bytes;
    }

    /// Adds to `commit` the counters that moved since the last commit landed (all of them
    /// when that is not known), the frontier's `next_order` with them. Until
    /// [`JobCounters::landed`] is called with the values returned, nothing is known to be
    /// written, so a failed commit leaves the next one writing them all.
    pub(super) fn write_into(&mut self, commit: &mut Commit, next_order: u64) -> Values {
        let now = Values([
            self.next_seq,
            next_order,
            self.pages_fetched,
            self.robots_bytes,
        ]);
        commit
            .counters
            .extend(now.changed_since(self.written.take()));
        now
    }

    /// The commit holding `values` landed.
    pub(super) fn landed(&mut self, values: Values) {
        self.written = Some(values);
    }
}

impl Values {
    /// The counters that differ from `written` (all when nothing is known to be written).
    /// Most decisions move two of the four.
    fn changed_since(
        self,
        written: Option<Values>,
    ) -> impl Iterator<Item = (Cow<'static, str>, u64)> {
        NAMES
            .iter()
            .enumerate()
            .filter(move |(i, _)| written.is_none_or(|w| w.0[*i] != self.0[*i]))
            .map(move |(i, name)| ((*name).into(), self.0[i]))
    }
}

#[cfg(test)]
mod tests {
    use nearcrawl_store::MemoryStore;

    use super::*;

    fn written(counters: &mut JobCounters, next_order: u64) -> Vec<(String, u64)> {
        let mut commit = Commit::default();
        let values = counters.write_into(&mut commit, next_order);
        counters.landed(values);
        commit
            .counters
            .into_iter()
            .map(|(name, value)| (name.into_owned(), value))
            .collect()
    }

    fn pairs(of: &[(&str, u64)]) -> Vec<(String, u64)> {
        of.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect()
    }

    #[test]
    fn only_the_counters_that_moved_are_written() {
        let store = MemoryStore::default();
        let mut counters = JobCounters::resume(&store).unwrap();
        // Nothing known to be written: all four.
        assert_eq!(
            written(&mut counters, 0),
            pairs(&[
                ("next_seq", 0),
                ("next_order", 0),
                ("pages_fetched", 0),
                ("robots_bytes", 0)
            ])
        );
        assert!(written(&mut counters, 0).is_empty());
        assert_eq!(counters.take_seq(), 0);
        counters.fetched_page();
        assert_eq!(
            written(&mut counters, 0),
            pairs(&[("next_seq", 1), ("pages_fetched", 1)])
        );
        counters.fetched_robots(120);
        assert_eq!(
            written(&mut counters, 3),
            pairs(&[("next_order", 3), ("robots_bytes", 120)])
        );
    }

    #[test]
    fn a_commit_that_did_not_land_leaves_all_to_write_again() {
        let store = MemoryStore::default();
        let mut counters = JobCounters::resume(&store).unwrap();
        written(&mut counters, 5);
        counters.take_seq();
        let mut lost = Commit::default();
        // Written into a commit that failed: `landed` never called.
        let _ = counters.write_into(&mut lost, 5);
        assert_eq!(written(&mut counters, 5).len(), 4);
    }

    #[test]
    fn a_resumed_job_goes_on_from_its_stored_counters() {
        let store = MemoryStore::default();
        let commit = Commit {
            counters: vec![
                ("next_seq".into(), 41),
                ("pages_fetched".into(), 30),
                ("robots_bytes".into(), 900),
            ],
            ..Commit::default()
        };
        store.commit(commit).unwrap();
        let mut counters = JobCounters::resume(&store).unwrap();
        assert_eq!(counters.take_seq(), 41);
        assert_eq!(counters.next_seq(), 42);
        assert!(counters.page_limit(Some(31), 1) && !counters.page_limit(Some(32), 1));
        assert!(!counters.page_limit(None, 1_000));
        assert_eq!(counters.robots_bytes(), 900);
    }
}
