//! The measures: precision and recall of duplicate verdicts (overall and per kind of
//! variant), pages and bytes saved against the `--no-dedup` crawl and against an oracle that
//! skips exactly the true duplicates, coverage of content groups, robots violations.

use std::collections::{BTreeMap, HashSet};

use nearcrawl_engine::{Record, replay};
use serde::{Deserialize, Serialize};

use crate::truth::{Kind, PageTruth, Truth};

/// Verdict counts for one kind of page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindCounts {
    /// Pages of this kind fetched by the dedup crawl.
    pub fetched: u64,
    /// Of those, fetched after an earlier member of their group: should be marked.
    pub should_mark: u64,
    /// Of those, marked as duplicates.
    pub marked: u64,
    /// Marked as a duplicate of a page of another group.
    pub false_duplicates: u64,
}

/// Everything measured over one pair of crawls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measures {
    /// Duplicate verdicts whose `duplicate_of` is truly of the same group, among scored ones.
    pub precision: f64,
    /// Pages fetched after an earlier member of their group that were marked.
    pub recall: f64,
    /// Scored duplicate verdicts.
    pub verdicts: u64,
    /// Of those, wrong.
    pub false_duplicates: u64,
    /// Pages that should have been marked.
    pub should_mark: u64,
    /// Of those, missed.
    pub missed: u64,
    /// Per kind of page.
    pub by_kind: BTreeMap<Kind, KindCounts>,
    /// Pages and bytes of the `--no-dedup` crawl.
    pub baseline_pages: u64,
    /// Bytes of the `--no-dedup` crawl.
    pub baseline_bytes: u64,
    /// Pages of the dedup crawl.
    pub dedup_pages: u64,
    /// Bytes of the dedup crawl.
    pub dedup_bytes: u64,
    /// Pages the oracle crawl fetches (skips exactly the true duplicates' outlinks).
    pub oracle_pages: u64,
    /// Bytes of the oracle crawl.
    pub oracle_bytes: u64,
    /// `(baseline - dedup) / (baseline - oracle)` in bytes: 1 is as good as possible.
    pub bytes_saved_vs_oracle: f64,
    /// Scored content groups reached by the dedup crawl / by the `--no-dedup` crawl.
    pub coverage: f64,
    /// Groups reached by the `--no-dedup` crawl and not by the dedup crawl.
    pub groups_lost: u64,
    /// Fetches of robots-disallowed URLs, both crawls together.
    pub robots_violations: u64,
    /// Up to ten wrong duplicate verdicts: (url, duplicate_of).
    pub false_examples: Vec<(String, String)>,
    /// Up to ten missed duplicates: (url, kind).
    pub missed_examples: Vec<(String, Kind)>,
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        1.0
    } else {
        part as f64 / whole as f64
    }
}

/// What a truth says about pages: each page's group, and whether one page truly copies
/// another. The generated web answers from its groups; a real web diffs the two pages.
pub trait Labels {
    /// The truth about `url` (as the crawler canonicalises it).
    fn get(&self, url: &str) -> Option<PageTruth>;
    /// Whether `copy` (a scored page) is truly a near-duplicate of `original`: `None` when
    /// unknown (borderline, or an unscored original).
    fn copies(&self, copy: &str, original: &str) -> Option<bool>;
}

impl Labels for Truth {
    fn get(&self, url: &str) -> Option<PageTruth> {
        Truth::get(self, url)
    }

    fn copies(&self, copy: &str, original: &str) -> Option<bool> {
        let copy = Truth::get(self, copy)?;
        let original = Truth::get(self, original).filter(|o| o.scored)?;
        Some(copy.group == original.group)
    }
}

/// Measures a dedup crawl against its `--no-dedup` baseline and the truth.
pub fn measure(dedup: &[Record], baseline: &[Record], truth: &dyn Labels) -> Measures {
    let fetched = |r: &&Record| r.status.is_some();
    let mut by_kind: BTreeMap<Kind, KindCounts> = BTreeMap::new();
    let (mut verdicts, mut false_duplicates, mut should_mark, mut missed) = (0, 0, 0, 0);
    let mut false_examples = Vec::new();
    let mut missed_examples = Vec::new();
    let mut seen_groups: HashSet<u64> = HashSet::new();
    for record in dedup.iter().filter(fetched) {
        let Some(page) = truth.get(&record.url) else {
            continue;
        };
        let counts = by_kind.entry(page.kind).or_default();
        counts.fetched += 1;
        let earlier = seen_groups.contains(&page.group);
        seen_groups.insert(page.group);
        if !page.scored {
            continue;
        }
        let marked = record.verdict.is_duplicate();
        if marked {
            let same = record
                .duplicate_of
                .as_deref()
                .and_then(|u| truth.copies(&record.url, u));
            if let Some(same) = same {
                verdicts += 1;
                if !same {
                    false_duplicates += 1;
                    counts.false_duplicates += 1;
                    if false_examples.len() < 10 {
                        false_examples.push((
                            record.url.clone(),
                            record.duplicate_of.clone().unwrap_or_default(),
                        ));
                    }
                }
            }
        }
        if earlier {
            should_mark += 1;
            counts.should_mark += 1;
            if marked {
                counts.marked += 1;
            } else {
                missed += 1;
                if missed_examples.len() < 10 {
                    missed_examples.push((record.url.clone(), page.kind));
                }
            }
        }
    }

    // The oracle: in the baseline's order, a page whose group was fetched before is a
    // duplicate, and its links are not followed.
    let mut oracle_seen: HashSet<u64> = HashSet::new();
    let oracle_duplicates: HashSet<&str> = baseline
        .iter()
        .filter(fetched)
        .filter_map(|r| truth.get(&r.url).map(|t| (r, t)))
        .filter(|(_, t)| !oracle_seen.insert(t.group))
        .map(|(r, _)| r.url.as_str())
        .collect();
    let oracle = replay(baseline, &|r: &Record| {
        oracle_duplicates.contains(r.url.as_str())
    });

    // Scored groups only: borderline pages (heavy rewrites, listings) are not scored here either.
    let groups = |records: &[Record]| -> HashSet<u64> {
        records
            .iter()
            .filter(fetched)
            .filter_map(|r| truth.get(&r.url))
            .filter(|t| t.scored)
            .map(|t| t.group)
            .collect()
    };
    let (dedup_groups, baseline_groups) = (groups(dedup), groups(baseline));
    let violations = dedup
        .iter()
        .chain(baseline)
        .filter(fetched)
        .filter(|r| {
            truth
                .get(&r.url)
                .is_some_and(|t| t.kind == Kind::Disallowed)
        })
        .count() as u64;
    let sum = |records: &[Record]| -> (u64, u64) {
        records
            .iter()
            .filter(fetched)
            .fold((0, 0), |(p, b), r| (p + 1, b + r.bytes))
    };
    let (baseline_pages, baseline_bytes) = sum(baseline);
    let (dedup_pages, dedup_bytes) = sum(dedup);
    Measures {
        precision: ratio(verdicts - false_duplicates, verdicts),
        recall: ratio(should_mark - missed, should_mark),
        verdicts,
        false_duplicates,
        should_mark,
        missed,
        by_kind,
        baseline_pages,
        baseline_bytes,
        dedup_pages,
        dedup_bytes,
        oracle_pages: oracle.dedup_pages,
        oracle_bytes: oracle.dedup_bytes,
        bytes_saved_vs_oracle: ratio(
            baseline_bytes.saturating_sub(dedup_bytes),
            baseline_bytes.saturating_sub(oracle.dedup_bytes),
        ),
        coverage: ratio(
            dedup_groups.intersection(&baseline_groups).count() as u64,
            baseline_groups.len() as u64,
        ),
        groups_lost: baseline_groups.difference(&dedup_groups).count() as u64,
        robots_violations: violations,
        false_examples,
        missed_examples,
    }
}

impl Measures {
    /// A plain-text table of the measures.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "precision {:.3} ({} of {} duplicate verdicts wrong), recall {:.3} ({} of {} missed)\n\
             bytes: baseline {}, dedup {}, oracle {}: saved {:.1} % of what the oracle saves\n\
             pages: baseline {}, dedup {}, oracle {}\n\
             coverage {:.3} ({} content groups lost), robots violations {}\n",
            self.precision,
            self.false_duplicates,
            self.verdicts,
            self.recall,
            self.missed,
            self.should_mark,
            self.baseline_bytes,
            self.dedup_bytes,
            self.oracle_bytes,
            100.0 * self.bytes_saved_vs_oracle,
            self.baseline_pages,
            self.dedup_pages,
            self.oracle_pages,
            self.coverage,
            self.groups_lost,
            self.robots_violations,
        );
        out.push_str("kind                 fetched  should-mark  marked  false-dup\n");
        for (kind, c) in &self.by_kind {
            let name = serde_json::to_string(kind).unwrap_or_default();
            out.push_str(&format!(
                "{:<20} {:>7} {:>12} {:>7} {:>10}\n",
                name.trim_matches('"'),
                c.fetched,
                c.should_mark,
                c.marked,
                c.false_duplicates
            ));
        }
        for (url, of) in &self.false_examples {
            out.push_str(&format!("false duplicate: {url} -> {of}\n"));
        }
        for (url, kind) in &self.missed_examples {
            out.push_str(&format!("missed: {url} ({kind:?})\n"));
        }
        out
    }
}
