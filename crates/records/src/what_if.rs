//! The exact what-if: replay a `--no-dedup` crawl's link graph as a crawl that skips the
//! outlinks of duplicates, and count what it would not have fetched.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::RecordsError;
use crate::kinds::Verdict;
use crate::record::{Record, read_records};

/// What skipping duplicates' outlinks would have saved on a baseline crawl.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// Pages the baseline fetched.
    pub baseline_pages: u64,
    /// Bytes the baseline received for them.
    pub baseline_bytes: u64,
    /// Pages a dedup crawl would have fetched: those reachable from the seeds without
    /// following a duplicate's links.
    pub dedup_pages: u64,
    /// Bytes for them.
    pub dedup_bytes: u64,
    /// `baseline_pages - dedup_pages`.
    pub pages_saved: u64,
    /// `baseline_bytes - dedup_bytes`.
    pub bytes_saved: u64,
    /// Unique pages (baseline verdict) a dedup crawl would not reach: the price of skipping.
    pub unique_pages_lost: u64,
    /// Duplicates (exact or near) the baseline found.
    pub duplicates: u64,
}

/// Replays the baseline crawl in `dir` (its `records.jsonl`). The duplicate verdicts are the
/// baseline's own: the first page of each content fetched is the original.
pub fn what_if(dir: &Path) -> Result<WhatIf, RecordsError> {
    let mut records: Vec<Record> = Vec::new();
    read_records(&dir.join("records.jsonl"), &mut |r| records.push(r))?;
    if records
        .iter()
        .any(|r| r.status.is_some() && r.verdict == Verdict::Unique && r.links.is_none())
    {
        return Err(RecordsError::NotACrawl {
            dir: dir.to_path_buf(),
            reason: "not a baseline crawl: run it with --no-dedup (its pages must record their links)",
        });
    }
    Ok(replay(&records, &|r: &Record| r.verdict.is_duplicate()))
}

/// The records a crawl reaches from the seeds (records of depth 0 without a parent) when it
/// follows a page's link (or redirect) to `url` exactly when `follow(page, url)` says so.
pub fn reachable<'a>(
    records: &'a [Record],
    follow: &dyn Fn(&Record, &str) -> bool,
) -> HashSet<&'a str> {
    let by_url: HashMap<&str, &Record> = records.iter().map(|r| (r.url.as_str(), r)).collect();
    let mut queue: VecDeque<&Record> = records
        .iter()
        .filter(|r| r.depth == 0 && r.parent.is_none())
        .collect();
    let mut reached: HashSet<&str> = queue.iter().map(|r| r.url.as_str()).collect();
    while let Some(record) = queue.pop_front() {
        for url in record.leads_to() {
            if let Some(target) = by_url.get(url)
                && follow(record, url)
                && reached.insert(target.url.as_str())
            {
                queue.push_back(target);
            }
        }
    }
    reached
}

/// Replays a baseline crawl's records (with their `links`) as a crawl that does not follow
/// the links of the pages `is_duplicate` names. Seeds are the records of depth 0 without a
/// parent.
pub fn replay(records: &[Record], is_duplicate: &dyn Fn(&Record) -> bool) -> WhatIf {
    let fetched = |r: &Record| r.status.is_some();
    let reached = reachable(records, &|r: &Record, _: &str| !is_duplicate(r));
    let mut report = WhatIf::default();
    for record in records.iter().filter(|r| fetched(r)) {
        report.baseline_pages += 1;
        report.baseline_bytes += record.bytes;
        if is_duplicate(record) {
            report.duplicates += 1;
        }
        if reached.contains(record.url.as_str()) {
            report.dedup_pages += 1;
            report.dedup_bytes += record.bytes;
        } else if !is_duplicate(record) && record.verdict == Verdict::Unique {
            report.unique_pages_lost += 1;
        }
    }
    report.pages_saved = report.baseline_pages - report.dedup_pages;
    report.bytes_saved = report.baseline_bytes - report.dedup_bytes;
    report
}

impl WhatIf {
    /// The human summary.
    pub fn summary(&self) -> String {
        let share = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                100.0 * part as f64 / whole as f64
            }
        };
        format!(
            "baseline: {} pages, {} bytes; with dedup: {} pages, {} bytes\nsaved: {} pages ({:.1} %), {} bytes ({:.1} %); {} duplicates found; {} unique pages reachable only through duplicates\n",
            self.baseline_pages,
            self.baseline_bytes,
            self.dedup_pages,
            self.dedup_bytes,
            self.pages_saved,
            share(self.pages_saved, self.baseline_pages),
            self.bytes_saved,
            share(self.bytes_saved, self.baseline_bytes),
            self.duplicates,
            self.unique_pages_lost,
        )
    }
}
