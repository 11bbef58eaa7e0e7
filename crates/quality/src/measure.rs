//! The measures: precision and recall of duplicate verdicts (overall and per kind of
//! variant), pages and bytes saved against the `--no-dedup` crawl and against an oracle that
//! skips exactly the true duplicates, coverage of content groups, robots violations.

use std::collections::{BTreeMap, HashMap, HashSet};

use nearcrawl_records::{Record, Verdict, reachable, replay};
use serde::{Deserialize, Serialize};

use crate::truth::{Kind, PageTruth, Truth};

mod bounds;

use bounds::cheapest_paths;
pub use bounds::{content_bound, copy_bound};

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
    /// Pages the oracle crawl fetches: it skips the true duplicates' outlinks, except those on
    /// the cheapest paths to content it would otherwise never reach (it loses nothing).
    pub oracle_pages: u64,
    /// Bytes of the oracle crawl.
    pub oracle_bytes: u64,
    /// `(baseline - dedup) / (baseline - oracle)` in bytes: 1 is as good as possible.
    pub bytes_saved_vs_oracle: f64,
    /// Bytes of the strict oracle, which skips every true duplicate's outlinks and so loses
    /// what only duplicates link to (a new release's new pages).
    pub strict_oracle_bytes: u64,
    /// `(baseline - dedup) / (baseline - strict oracle)` in bytes.
    pub bytes_saved_vs_strict_oracle: f64,
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
    /// Pages the dedup crawl fetched and the oracle did not.
    pub beyond_oracle: u64,
    /// Their bytes.
    pub beyond_oracle_bytes: u64,
    /// The ten largest: (url, bytes, kind), the kind `None` for pages the truth does not know.
    pub beyond_oracle_examples: Vec<(String, u64, Option<Kind>)>,
    /// Requests of the dedup crawl (GET or probe) for URLs that nothing named: not a seed, a
    /// link, a sitemap's entry or a redirect's target anywhere in the `--no-dedup` crawl's
    /// link graph. A crawler asks only for URLs it was given; this must be 0.
    pub unnamed_requests: u64,
    /// Up to ten of them: (url, status).
    pub unnamed_examples: Vec<(String, u16)>,
    /// Bytes of the content-aware bound: a crawl that knew each URL's content before
    /// fetching it fetches, from the seeds, only the cheapest paths to one page of every
    /// scored content group the `--no-dedup` crawl reached ([`content_bound`]).
    #[serde(default)]
    pub content_bound_bytes: u64,
    /// `(baseline - dedup) / (baseline - content bound)` in bytes.
    #[serde(default)]
    pub bytes_saved_vs_content_bound: f64,
    /// Bytes of the copy bound: every page the truth calls a copy skipped at no cost, every
    /// other page fetched ([`copy_bound`]).
    #[serde(default)]
    pub copy_bound_bytes: u64,
    /// `(baseline - dedup) / (baseline - copy bound)` in bytes.
    #[serde(default)]
    pub bytes_saved_vs_copy_bound: f64,
    /// Pages recorded as predicted duplicates without a request (`dedup.predict = "skip"`)
    /// that the truth can score ...
    #[serde(default)]
    pub predicted: u64,
    /// ... and of those, not copies of the page they were predicted to copy.
    #[serde(default)]
    pub predicted_wrong: u64,
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
        // A page its probe found unchanged is called a copy of its counterpart, unseen.
        let marked = record.verdict.is_duplicate() || record.verdict == Verdict::Unchanged;
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
    let strict = replay(baseline, &|r: &Record| {
        oracle_duplicates.contains(r.url.as_str())
    });
    let oracle = covering_oracle(baseline, truth, &oracle_duplicates);
    let (oracle_pages, oracle_bytes) = pages_and_bytes(oracle.iter().copied());
    let oracle_urls: HashSet<&str> = oracle.iter().map(|r| r.url.as_str()).collect();
    let mut beyond: Vec<&Record> = dedup
        .iter()
        .filter(fetched)
        .filter(|r| !oracle_urls.contains(r.url.as_str()))
        .collect();
    beyond.sort_by_key(|r| std::cmp::Reverse(r.bytes));

    // Scored groups only: borderline pages (heavy rewrites, listings) are not scored here either.
    // A group counts once a scored page of it is reached; the dedup crawl reaches it through
    // any page of it, scored or not (a language's copy of a page the truth leaves unscored
    // against English is reached through that page). A page found unchanged by its probe
    // reaches nothing: its body was never fetched.
    let groups = |records: &[Record], scored: bool| -> HashSet<u64> {
        records
            .iter()
            .filter(|r| r.fetched_page())
            .filter_map(|r| truth.get(&r.url))
            .filter(|t| t.scored || !scored)
            .map(|t| t.group)
            .collect()
    };
    let (dedup_groups, baseline_groups) = (groups(dedup, false), groups(baseline, true));
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
    let (baseline_pages, baseline_bytes) = pages_and_bytes(baseline);
    let (dedup_pages, dedup_bytes) = pages_and_bytes(dedup);
    let unnamed = unnamed_requests(dedup, baseline);
    let content_bound_bytes = content_bound(baseline, truth);
    let copy_bound_bytes = copy_bound(baseline, truth);
    // Predicted duplicates, never fetched: scored against the truth like verdicts.
    let (mut predicted, mut predicted_wrong) = (0, 0);
    for record in dedup.iter().filter(|r| r.verdict == Verdict::Predicted) {
        let same = record
            .duplicate_of
            .as_deref()
            .and_then(|of| truth.copies(&record.url, of));
        if let Some(same) = same {
            predicted += 1;
            predicted_wrong += u64::from(!same);
        }
    }
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
        oracle_pages,
        oracle_bytes,
        bytes_saved_vs_oracle: ratio(
            baseline_bytes.saturating_sub(dedup_bytes),
            baseline_bytes.saturating_sub(oracle_bytes),
        ),
        strict_oracle_bytes: strict.dedup_bytes,
        bytes_saved_vs_strict_oracle: ratio(
            baseline_bytes.saturating_sub(dedup_bytes),
            baseline_bytes.saturating_sub(strict.dedup_bytes),
        ),
        coverage: ratio(
            dedup_groups.intersection(&baseline_groups).count() as u64,
            baseline_groups.len() as u64,
        ),
        groups_lost: baseline_groups.difference(&dedup_groups).count() as u64,
        robots_violations: violations,
        false_examples,
        missed_examples,
        beyond_oracle: beyond.len() as u64,
        beyond_oracle_bytes: beyond.iter().map(|r| r.bytes).sum(),
        beyond_oracle_examples: beyond
            .iter()
            .take(10)
            .map(|r| (r.url.clone(), r.bytes, truth.get(&r.url).map(|t| t.kind)))
            .collect(),
        predicted,
        predicted_wrong,
        content_bound_bytes,
        bytes_saved_vs_content_bound: ratio(
            baseline_bytes.saturating_sub(dedup_bytes),
            baseline_bytes.saturating_sub(content_bound_bytes),
        ),
        copy_bound_bytes,
        bytes_saved_vs_copy_bound: ratio(
            baseline_bytes.saturating_sub(dedup_bytes),
            baseline_bytes.saturating_sub(copy_bound_bytes),
        ),
        unnamed_requests: unnamed.len() as u64,
        unnamed_examples: unnamed
            .iter()
            .take(10)
            .map(|r| (r.url.clone(), r.status.unwrap_or_default()))
            .collect(),
    }
}

/// The records of `dedup` that made a request (a GET or a probe) for a URL neither crawl's
/// graph names: every URL a crawl decided was queued because a seed, a page, a sitemap or a
/// redirect named it, and its pages' `links` are every in-scope URL they name (the dedup
/// crawl's too, run with `links.record`: it may fetch pages the baseline did not, and follow
/// what they name). A request for anything else was made up.
fn unnamed_requests<'a>(dedup: &'a [Record], baseline: &'a [Record]) -> Vec<&'a Record> {
    let graph = |r: &'a Record| {
        let links = r.links.iter().flatten().map(String::as_str);
        r.final_url.as_deref().into_iter().chain(links)
    };
    let named: HashSet<&str> = baseline
        .iter()
        .map(|r| r.url.as_str())
        .chain(baseline.iter().flat_map(graph))
        .chain(dedup.iter().flat_map(graph))
        .collect();
    dedup
        .iter()
        .filter(|r| r.status.is_some())
        .filter(|r| !named.contains(r.url.as_str()))
        .collect()
}

/// Pages fetched among `records`, and their bytes.
fn pages_and_bytes<'a>(records: impl IntoIterator<Item = &'a Record>) -> (u64, u64) {
    records
        .into_iter()
        .filter(|r| r.status.is_some())
        // A probe's bytes count, not as a page.
        .fold((0, 0), |(p, b), r| {
            (p + u64::from(r.fetched_page()), b + r.bytes)
        })
}

/// The records an omniscient crawl fetches: it does not follow the links of `duplicates`,
/// except where a scored content group of the baseline would then never be reached; for
/// each such group it follows the cheapest path (in bytes fetched, Dijkstra) from what it
/// reaches to the group's nearest page. So it loses nothing and fetches few duplicates.
fn covering_oracle<'a>(
    baseline: &'a [Record],
    truth: &dyn Labels,
    duplicates: &HashSet<&str>,
) -> Vec<&'a Record> {
    let by_url: HashMap<&str, &Record> = baseline.iter().map(|r| (r.url.as_str(), r)).collect();
    let scored_group = |r: &Record| {
        truth
            .get(&r.url)
            .filter(|t| t.scored && r.status.is_some())
            .map(|t| t.group)
    };
    let wanted: HashSet<u64> = baseline.iter().filter_map(scored_group).collect();
    let mut allowed: HashSet<(&str, &str)> = HashSet::new();
    loop {
        let reached = reachable(baseline, &|r: &Record, url: &str| {
            !duplicates.contains(r.url.as_str()) || allowed.contains(&(r.url.as_str(), url))
        });
        let have: HashSet<u64> = reached
            .iter()
            .filter_map(|u| scored_group(by_url[u]))
            .collect();
        let mut lost: HashSet<u64> = wanted.difference(&have).copied().collect();
        if lost.is_empty() {
            return baseline
                .iter()
                .filter(|r| reached.contains(r.url.as_str()))
                .collect();
        }
        // The cheapest paths from everything reached, a step costing the bytes of the page
        // it fetches; each lost group taken at its nearest page.
        let (order, prev) = cheapest_paths(&by_url, reached.iter().map(|&u| (u, 0)));
        let before = allowed.len();
        for url in order {
            if let Some(group) = scored_group(by_url[url])
                && lost.remove(&group)
            {
                let mut at = url;
                while let Some(&from) = prev.get(at) {
                    allowed.insert((from, at));
                    at = from;
                }
                if lost.is_empty() {
                    break;
                }
            }
        }
        if allowed.len() == before {
            // What is left is unreachable from the seeds even in the baseline's graph.
            return baseline
                .iter()
                .filter(|r| reached.contains(r.url.as_str()))
                .collect();
        }
    }
}

impl Measures {
    /// A plain-text table of the measures.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "precision {:.3} ({} of {} duplicate verdicts wrong), recall {:.3} ({} of {} missed)\n\
             bytes: baseline {}, dedup {}, oracle {}: saved {:.1} % of what the oracle saves \
             ({:.1} % of the strict oracle's, {} bytes; {:.1} % of the content-aware bound's, \
             {} bytes; {:.1} % of the copy bound's, {} bytes)\n\
             pages: baseline {}, dedup {}, oracle {}\n\
             coverage {:.3} ({} content groups lost), robots violations {}, \
             requests for URLs nothing named {}\n",
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
            100.0 * self.bytes_saved_vs_strict_oracle,
            self.strict_oracle_bytes,
            100.0 * self.bytes_saved_vs_content_bound,
            self.content_bound_bytes,
            100.0 * self.bytes_saved_vs_copy_bound,
            self.copy_bound_bytes,
            self.baseline_pages,
            self.dedup_pages,
            self.oracle_pages,
            self.coverage,
            self.groups_lost,
            self.robots_violations,
            self.unnamed_requests,
        );
        if self.predicted > 0 {
            out.push_str(&format!(
                "predicted duplicates, not fetched: {} ({} wrong)\n",
                self.predicted, self.predicted_wrong
            ));
        }
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
        for (url, status) in &self.unnamed_examples {
            out.push_str(&format!("requested, named by nothing: {url} ({status})\n"));
        }
        if self.beyond_oracle > 0 {
            out.push_str(&format!(
                "{} pages ({} bytes) fetched that the oracle does not fetch; the largest:\n",
                self.beyond_oracle, self.beyond_oracle_bytes
            ));
        }
        for (url, bytes, kind) in &self.beyond_oracle_examples {
            let kind = kind.map(|k| format!(", {k:?}")).unwrap_or_default();
            out.push_str(&format!("beyond the oracle: {url} ({bytes} bytes{kind})\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests;
