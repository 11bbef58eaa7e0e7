//! The index shared across jobs (`--index DIR`): `DIR/fingerprints.idx` (the permuted-table
//! index file, payload = position) and `DIR/urls.txt` (line N+1 = the URL of position N, then
//! a tab and the day its page was crawled, `YYYY-MM-DD`; files written before the day was
//! kept have the URL alone). Written when a job ends, each file atomically; a pair that does
//! not match is an error naming the directory, never a partial load.
//!
//! With `[index] max_age_days`, entries crawled longer ago than that (or on an unknown day)
//! stay in the files but are not matched against: a news site crawled again next month is not
//! all "duplicate" of last month's crawl.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::HammingIndex;
use nearcrawl_records::{Record, rfc3339};
use nearcrawl_store::CrawlStore;
use serde::{Deserialize, Serialize};

use crate::error::EngineError;

const INDEX_FILE: &str = "fingerprints.idx";
const URLS_FILE: &str = "urls.txt";

/// `[index]`: the index shared across jobs (`--index DIR`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    /// Entries crawled more than this many days ago (or on an unknown day) are not matched
    /// against; absent: every entry is.
    pub max_age_days: Option<u32>,
}

/// A shared index as read: its entries, with each position's URL and day.
#[derive(Debug, Clone, Default)]
pub struct SharedIndex {
    /// `(fingerprint, position)` of every entry as read; after [`SharedIndex::take_current`],
    /// the expired ones only (the current ones live in the dedup stage's index).
    pub entries: Vec<(Fingerprint, u64)>,
    /// The URL of each position.
    pub urls: Vec<String>,
    /// The day each position's page was crawled (`YYYY-MM-DD`), when known.
    pub days: Vec<Option<String>>,
}

impl SharedIndex {
    /// Moves out the entries to match against on `now` with `config`: all of them, or those
    /// crawled within `max_age_days`. The expired ones stay, to be written back.
    pub fn take_current(
        &mut self,
        config: &IndexConfig,
        now: SystemTime,
    ) -> Vec<(Fingerprint, u64)> {
        let Some(days) = config.max_age_days else {
            return std::mem::take(&mut self.entries);
        };
        let cutoff = day_of(now - Duration::from_secs(86_400 * u64::from(days)));
        let is_current = |position: u64| {
            self.days
                .get(position as usize)
                .and_then(Option::as_deref)
                .is_some_and(|day| day >= cutoff.as_str())
        };
        let (current, expired) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|(_, position)| is_current(*position));
        self.entries = expired;
        current
    }
}

/// The day (`YYYY-MM-DD`, UTC) of `time`.
fn day_of(time: SystemTime) -> String {
    day_of_timestamp(&rfc3339(time)).to_string()
}

/// The day of an RFC 3339 timestamp: its first ten characters.
fn day_of_timestamp(at: &str) -> &str {
    at.get(..10).unwrap_or(at)
}

/// The shared index in `dir`; empty when `dir` holds none yet.
pub fn load(dir: &Path) -> Result<SharedIndex, EngineError> {
    let index_path = dir.join(INDEX_FILE);
    let urls_path = dir.join(URLS_FILE);
    if !index_path.exists() && !urls_path.exists() {
        return Ok(SharedIndex::default());
    }
    let index = HammingIndex::load(&index_path).map_err(|source| EngineError::SharedIndex {
        path: index_path.clone(),
        source,
    })?;
    let text = std::fs::read_to_string(&urls_path).map_err(|e| EngineError::io(&urls_path, e))?;
    let (urls, days): (Vec<String>, Vec<Option<String>>) = text
        .lines()
        .map(|line| match line.split_once('\t') {
            Some((url, day)) => (url.to_owned(), Some(day.to_owned())),
            None => (line.to_owned(), None),
        })
        .unzip();
    let entries: Vec<(Fingerprint, u64)> = index.entries().collect();
    if let Some((_, bad)) = entries.iter().find(|(_, n)| *n as usize >= urls.len()) {
        return Err(EngineError::SharedIndexUrls {
            dir: dir.to_path_buf(),
            entry: *bad,
            urls: urls.len(),
        });
    }
    Ok(SharedIndex {
        entries,
        urls,
        days,
    })
}

/// Writes the shared index: the entries it had (the current ones, from the crawl's `index`
/// where their payloads carry `shared_tag`, and the expired ones left in `shared`) plus this
/// job's unique pages not in it yet, each with the day it was fetched.
pub fn save(
    dir: &Path,
    shared: &SharedIndex,
    index: &HammingIndex,
    shared_tag: u64,
    store: &dyn CrawlStore,
) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e))?;
    let mut urls = shared.urls.clone();
    let mut days = shared.days.clone();
    let mut entries: Vec<(Fingerprint, u64)> = index
        .entries()
        .filter(|(_, payload)| payload & shared_tag != 0)
        .map(|(fp, payload)| (fp, payload & !shared_tag))
        .chain(shared.entries.iter().copied())
        .collect();
    let mut known: HashSet<String> = urls.iter().cloned().collect();
    for page in store.unique_pages()? {
        let Some(bytes) = store.record(page.seq)? else {
            continue;
        };
        let Ok(record) = serde_json::from_slice::<Record>(&bytes) else {
            continue;
        };
        if known.insert(record.url.clone()) {
            entries.push((Fingerprint::new(page.simhash), urls.len() as u64));
            days.push(
                record
                    .fetched_at
                    .as_deref()
                    .map(|at| day_of_timestamp(at).to_string()),
            );
            urls.push(record.url);
        }
    }
    // URLs first: an index whose entries outrun its URL list is refused at load.
    let urls_path = dir.join(URLS_FILE);
    let tmp = dir.join(format!("{URLS_FILE}.tmp"));
    let mut text = String::new();
    for (url, day) in urls.iter().zip(&days) {
        text.push_str(url);
        if let Some(day) = day {
            text.push('\t');
            text.push_str(day);
        }
        text.push('\n');
    }
    std::fs::write(&tmp, text).map_err(|e| EngineError::io(&tmp, e))?;
    std::fs::rename(&tmp, &urls_path).map_err(|e| EngineError::io(&urls_path, e))?;
    let shared_index = HammingIndex::from_entries(index.params().clone(), entries);
    let index_path = dir.join(INDEX_FILE);
    shared_index
        .save(&index_path)
        .map_err(|source| EngineError::SharedIndex {
            path: index_path.clone(),
            source,
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_entries_within_the_age_are_current() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(86_400 * 20_000);
        let today = day_of(now);
        let old = day_of(now - Duration::from_secs(86_400 * 40));
        let shared = SharedIndex {
            entries: (0..3).map(|i| (Fingerprint::new(i), i)).collect(),
            urls: vec!["a".into(), "b".into(), "c".into()],
            days: vec![Some(today), Some(old), None],
        };
        let all = shared.clone().take_current(&IndexConfig::default(), now);
        assert_eq!(all.len(), 3);
        let month = IndexConfig {
            max_age_days: Some(30),
        };
        let current: Vec<u64> = (shared.clone().take_current(&month, now).iter())
            .map(|e| e.1)
            .collect();
        assert_eq!(
            current,
            vec![0],
            "40 days old and unknown days are not current"
        );
        let year = IndexConfig {
            max_age_days: Some(365),
        };
        assert_eq!(shared.clone().take_current(&year, now).len(), 2);
    }
}
