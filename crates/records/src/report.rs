//! `report.json` and the summary printed at the end of a job: what was fetched, what was
//! skipped, and the bandwidth the dedup stage saved. A report is counted from the job's
//! records ([`ReportBuilder`]) and what the run knows of itself ([`RunFacts`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::RecordsError;
use crate::kinds::Verdict;
use crate::record::Record;

/// Percentiles of the dedup stage's time per page, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DedupTiming {
    /// Pages analysed.
    pub pages: u64,
    /// Mean.
    pub mean_us: u64,
    /// Median.
    pub median_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Maximum.
    pub max_us: u64,
}

/// Time one pipeline stage took in this run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    /// The stage ([`nearcrawl_dedup::Stage::name`]).
    pub stage: String,
    /// Milliseconds in this run, all threads together: the fetch in wall time per request,
    /// waiting included, summed over requests in flight; the page's analysis (decode to
    /// features, the WARC records' compression) in CPU time of the pool's threads, which run
    /// below the coordinator and wait for it (Linux; wall time elsewhere); the coordinator's
    /// stages (index, verify, commit, the WARC file) in wall time on its thread.
    pub total_ms: f64,
    /// Microseconds per page fetched in this run.
    pub per_page_us: f64,
}

/// The index of kept fingerprints at the end of the run: what a crawl holds in memory for
/// every page it keeps (at most [`nearcrawl_dedup::INDEX_BYTES_PER_PAGE`] bytes by design,
/// past the fixed cost of its directories).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexFigures {
    /// Fingerprints held: pages kept, and those of a shared index (`--shared-index`).
    pub entries: u64,
    /// Tables of its design (Manku et al.'s permuted tables).
    pub tables: u64,
    /// Heap bytes: tables, directories, payloads, the insert buffer.
    pub heap_bytes: u64,
    /// Heap bytes per fingerprint held.
    pub bytes_per_entry: f64,
}

/// What a worker of a shared job (`--redis`) met, in its `report.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedJobFigures {
    /// The job's name.
    pub job: String,
    /// This worker's name.
    pub worker: String,
    /// Admissions to the job's index refused because another worker had just admitted a
    /// page sharing a key (the page was judged again).
    pub index_conflicts: u64,
    /// Leases this worker finished after they had expired (their URL may have been fetched
    /// by another worker too).
    pub stale_leases: u64,
    /// Steps tried again because Redis could not be had.
    pub redis_retries: u64,
    /// Connections to Redis made again.
    pub redis_reconnects: u64,
}

/// The job's report, over every decision since the job began (all runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// URL decisions recorded.
    pub decisions: u64,
    /// Responses received for page requests (GETs; not the HEAD probes, `unchanged`).
    pub pages_fetched: u64,
    /// Bytes received for page requests and probes (headers and bodies, on the wire).
    pub bytes_fetched: u64,
    /// Bytes received for robots.txt files.
    pub robots_bytes: u64,
    /// Decisions by HTTP status (`"none"` when nothing was fetched).
    pub by_status: BTreeMap<String, u64>,
    /// Decisions by verdict.
    pub by_verdict: BTreeMap<String, u64>,
    /// Bytes received, by HTTP status.
    pub bytes_by_status: BTreeMap<String, u64>,
    /// Bytes received, by verdict.
    pub bytes_by_verdict: BTreeMap<String, u64>,
    /// Pages with the same normalised main text as an earlier page.
    pub exact_duplicates: u64,
    /// Near-duplicates.
    pub near_duplicates: u64,
    /// Bytes spent fetching the duplicates themselves (the cost of finding out).
    pub duplicate_bytes: u64,
    /// New in-scope URLs not queued because the page linking them was a duplicate.
    pub outlinks_dropped: u64,
    /// Of those, URLs never reached another way (never fetched).
    pub dropped_never_fetched: u64,
    /// Mean bytes of a fetched HTML page.
    pub mean_page_bytes: u64,
    /// Bandwidth saved, a lower bound: `dropped_never_fetched × mean_page_bytes`. Pages
    /// beyond them (their own outlinks) are unknown to the crawl and not counted; the what-if
    /// over a `--no-dedup` crawl gives the exact figure.
    pub estimated_bytes_saved: u64,
    /// URLs still queued (the job stopped at a limit or was interrupted).
    pub queued: u64,
    /// The run was interrupted (Ctrl-C) rather than finishing its frontier.
    pub interrupted: bool,
    /// Time per page in the dedup stage (analysis and index lookup).
    pub dedup_timing: DedupTiming,
    /// When this run started.
    pub run_started: String,
    /// Seconds this run took.
    pub run_seconds: f64,
    /// Pages fetched per second in this run.
    pub run_pages_per_second: f64,
    /// Where this run's time went, stage by stage, in pipeline order: the stages that took
    /// time (`focus` only in a focused crawl, `warc` only when WARC files are written).
    #[serde(default)]
    pub run_stages: Vec<StageTime>,
    /// Sentence matches per page fetched in this run: the earlier kept pages that the pages'
    /// sentence postings listed, once per sentence. Verification's time per page follows it;
    /// divided by it, the time shows whether each match costs the same as the crawl grows.
    #[serde(default)]
    pub run_sentence_matches_per_page: f64,
    /// The index of kept fingerprints at the end of the run.
    #[serde(default)]
    pub fingerprint_index: IndexFigures,
    /// Set when the scope refused more than nine in ten of the first links this run found:
    /// most likely not the scope the user meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_warning: Option<String>,
    /// The server addresses this run's hosts resolved to, each with how many of the hosts
    /// and how often the address backed off (several of its names failing at once); empty
    /// when names are not resolved (no limits per address, or a shared job).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<AddressSummary>,
    /// A recrawl (`--previous`): what it cost against fetching the previous job's pages
    /// whole, and how they came back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recrawl: Option<RecrawlFigures>,
    /// A worker of a job shared through Redis: the job, and the faults met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_job: Option<SharedJobFigures>,
    /// Focused crawls: the topic's heaviest words with their weights in the topic vector,
    /// under the crawl's document frequencies at its end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topic: Vec<(String, f32)>,
    /// Focused crawls: pages counted in the crawl's document frequencies, earlier runs of a
    /// resumed job included.
    #[serde(default, skip_serializing_if = "u64_is_zero")]
    pub topic_pages: u64,
    /// Focused crawls: the best relevance of a page found (seeds aside), earlier runs of a
    /// resumed job included (what the tunnels' bar follows while no page reaches the
    /// threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_best: Option<f32>,
    /// The link policy's predictions (`dedup.predict`, a record's `prediction`), by the
    /// fate chosen (`check`, `verify`, `sample`, `skip`): empty when no URL rule predicted a
    /// page.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub predictions: BTreeMap<String, PredictionFigures>,
    /// Pages rendered in a browser (`render.mode`), and the renders the link policy spared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<RenderFigures>,
}

/// The pages one fate of the link policy decided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredictionFigures {
    /// Pages whose URL a rule predicted with this fate.
    pub pages: u64,
    /// Of those decided, the ones that copied the predicted page ...
    pub right: u64,
    /// ... and the ones that did not.
    pub wrong: u64,
    /// Bytes received for them (probes and samples included; none for `skip`).
    pub bytes: u64,
}

fn u64_is_zero(n: &u64) -> bool {
    *n == 0
}

/// One address as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressSummary {
    /// The address (`203.0.113.5`, `2001:db8::/64`).
    pub address: String,
    /// Host names found on it.
    pub names: usize,
    /// Times it backed off (several of its names failing at once).
    pub backoffs: u64,
}

/// What a run knows of itself beyond its records, from which its report is counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFacts {
    /// URLs still queued.
    pub queued: u64,
    /// Bytes received for robots.txt files.
    pub robots_bytes: u64,
    /// When this run started (RFC 3339).
    pub run_started: String,
    /// Seconds this run took.
    pub run_seconds: f64,
    /// The run was interrupted.
    pub interrupted: bool,
    /// New in-scope URLs a duplicate's links named that were never fetched.
    pub dropped_never_fetched: u64,
}

/// Counts a job's records, one at a time, into its [`Report`].
#[derive(Debug, Clone)]
pub struct ReportBuilder {
    report: Report,
    html_bytes: u64,
    html_pages: u64,
    timings: Vec<u64>,
    render: RenderFigures,
}

impl ReportBuilder {
    /// A report of no record yet, for the run `run`.
    pub fn new(run: RunFacts) -> ReportBuilder {
        let report = Report {
            decisions: 0,
            pages_fetched: 0,
            bytes_fetched: 0,
            robots_bytes: run.robots_bytes,
            by_status: BTreeMap::new(),
            by_verdict: Verdict::ALL
                .iter()
                .map(|v| (v.as_str().to_string(), 0))
                .collect(),
            bytes_by_status: BTreeMap::new(),
            bytes_by_verdict: BTreeMap::new(),
            exact_duplicates: 0,
            near_duplicates: 0,
            duplicate_bytes: 0,
            outlinks_dropped: 0,
            dropped_never_fetched: run.dropped_never_fetched,
            mean_page_bytes: 0,
            estimated_bytes_saved: 0,
            queued: run.queued,
            interrupted: run.interrupted,
            dedup_timing: DedupTiming::default(),
            run_started: run.run_started,
            run_seconds: run.run_seconds,
            run_pages_per_second: 0.0,
            run_stages: Vec::new(),
            run_sentence_matches_per_page: 0.0,
            fingerprint_index: IndexFigures::default(),
            scope_warning: None,
            addresses: Vec::new(),
            recrawl: None,
            shared_job: None,
            topic: Vec::new(),
            topic_pages: 0,
            topic_best: None,
            predictions: BTreeMap::new(),
            render: None,
        };
        ReportBuilder {
            report,
            html_bytes: 0,
            html_pages: 0,
            timings: Vec::new(),
            render: RenderFigures::default(),
        }
    }

    /// Counts one record.
    pub fn add(&mut self, record: &Record) {
        self.report.decisions += 1;
        let status = record.status.map_or("none".to_string(), |s| s.to_string());
        *self.report.by_status.entry(status.clone()).or_default() += 1;
        *self
            .report
            .by_verdict
            .entry(record.verdict.as_str().to_string())
            .or_default() += 1;
        if record.bytes > 0 {
            *self.report.bytes_by_status.entry(status).or_default() += record.bytes;
            *self
                .report
                .bytes_by_verdict
                .entry(record.verdict.as_str().to_string())
                .or_default() += record.bytes;
        }
        if record.status.is_some() {
            self.report.pages_fetched += u64::from(record.fetched_page());
            self.report.bytes_fetched += record.bytes;
        }
        match record.verdict {
            Verdict::Exact => self.report.exact_duplicates += 1,
            Verdict::Near => self.report.near_duplicates += 1,
            _ => {}
        }
        if record.verdict.is_duplicate() {
            self.report.duplicate_bytes += record.bytes;
        }
        if matches!(
            record.verdict,
            Verdict::Unique | Verdict::Exact | Verdict::Near
        ) {
            self.html_pages += 1;
            self.html_bytes += record.bytes;
        }
        self.report.outlinks_dropped += u64::from(record.fates().total("drop"));
        if let Some(fate) = &record.fate
            && let (Some(predicted), Some(prediction)) = (fate.predicted(), &fate.rule)
        {
            let fate = self
                .report
                .predictions
                .entry(predicted.to_owned())
                .or_default();
            fate.pages += 1;
            fate.right += u64::from(prediction.right == Some(true));
            fate.wrong += u64::from(prediction.right == Some(false));
            fate.bytes += record.bytes;
        }
        if let Some(us) = record.dedup_us {
            self.timings.push(us);
        }
        self.render.add(record);
    }

    /// The report of the records counted: their means and percentiles.
    pub fn finish(mut self) -> Report {
        self.report.mean_page_bytes = self.html_bytes.checked_div(self.html_pages).unwrap_or(0);
        self.report.estimated_bytes_saved =
            self.report.dropped_never_fetched * self.report.mean_page_bytes;
        self.report.render = std::mem::take(&mut self.render).finish();
        self.timings.sort_unstable();
        if let Some(&max) = self.timings.last() {
            let at = |q: f64| self.timings[((self.timings.len() - 1) as f64 * q).round() as usize];
            self.report.dedup_timing = DedupTiming {
                pages: self.timings.len() as u64,
                mean_us: self.timings.iter().sum::<u64>() / self.timings.len() as u64,
                median_us: at(0.5),
                p99_us: at(0.99),
                max_us: max,
            };
        }
        self.report
    }
}

/// `x` to three decimals.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl Report {
    /// Writes `report.json` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), RecordsError> {
        let path = dir.join("report.json");
        let json = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&path, json + "\n").map_err(|e| RecordsError::io(&path, e))
    }

    /// The human summary printed at the end of a job.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "{} decisions; {} pages fetched, {} on the wire (+{} robots.txt)\n",
            self.decisions,
            self.pages_fetched,
            human_bytes(self.bytes_fetched),
            human_bytes(self.robots_bytes)
        ));
        let verdicts: Vec<String> = self
            .by_verdict
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(v, n)| format!("{v} {n}"))
            .collect();
        out.push_str(&format!("verdicts: {}\n", verdicts.join(", ")));
        if let Some(render) = &self.render {
            out.push_str(&render.summary());
            out.push('\n');
        }
        if let Some(recrawl) = &self.recrawl {
            out.push_str(&recrawl.summary());
        }
        if !self.topic.is_empty() {
            let words: Vec<&str> = self
                .topic
                .iter()
                .take(10)
                .map(|(w, _)| w.as_str())
                .collect();
            out.push_str(&format!("topic: {}\n", words.join(", ")));
        }
        let statuses: Vec<String> = self
            .by_status
            .iter()
            .map(|(s, n)| format!("{s}: {n}"))
            .collect();
        out.push_str(&format!("statuses: {}\n", statuses.join(", ")));
        out.push_str(&format!(
            "duplicates: {} exact, {} near ({} spent finding them); {} new outlinks dropped, {} never reached otherwise\n",
            self.exact_duplicates,
            self.near_duplicates,
            human_bytes(self.duplicate_bytes),
            self.outlinks_dropped,
            self.dropped_never_fetched
        ));
        out.push_str(&format!(
            "bandwidth saved: at least {} pages never fetched, about {} at the mean page size \
             (a lower bound: what lies beyond them is unknown to this crawl; the demo and \
             `what-if` over a --no-dedup crawl give the exact figure)\n",
            self.dropped_never_fetched,
            human_bytes(self.estimated_bytes_saved),
        ));
        out.push_str(&format!(
            "dedup stage: median {} us, p99 {} us per page over {} pages; this run {:.1} s, {:.1} pages/s{}{}\n",
            self.dedup_timing.median_us,
            self.dedup_timing.p99_us,
            self.dedup_timing.pages,
            self.run_seconds,
            self.run_pages_per_second,
            if self.queued > 0 { format!("; {} URLs still queued", self.queued) } else { String::new() },
            if self.interrupted { " (interrupted: run the same command to resume)" } else { "" },
        ));
        // The stages that work on the page, not the wait for it.
        let work: Vec<String> = self
            .run_stages
            .iter()
            .filter(|s| s.stage != "fetch" && s.total_ms > 0.0)
            .map(|s| format!("{} {:.0}", s.stage, s.per_page_us))
            .collect();
        if !work.is_empty() {
            out.push_str(&format!("us per page by stage: {}\n", work.join(", ")));
        }
        let fates: Vec<String> = self
            .predictions
            .iter()
            .map(|(fate, f)| {
                format!(
                    "{fate} {} ({} right, {} wrong, {})",
                    f.pages,
                    f.right,
                    f.wrong,
                    human_bytes(f.bytes)
                )
            })
            .collect();
        if !fates.is_empty() {
            out.push_str(&format!(
                "URL rules' predictions (dedup.predict): {}\n",
                fates.join(", ")
            ));
        }
        let index = &self.fingerprint_index;
        if index.entries > 0 {
            out.push_str(&format!(
                "fingerprint index (what the crawl holds in memory per kept page): {} \
                 fingerprints in {} tables, {} ({:.0} bytes each)\n",
                index.entries,
                index.tables,
                human_bytes(index.heap_bytes),
                index.bytes_per_entry
            ));
        }
        out
    }
}

impl Report {
    /// The exact savings of this crawl over `baseline`, a `--no-dedup` crawl of the same
    /// seeds and scope: the pages and bytes it did not fetch, next to what it spent fetching
    /// the duplicates it found.
    pub fn savings_over(&self, baseline: &Report) -> String {
        let pages = baseline.pages_fetched.saturating_sub(self.pages_fetched);
        let bytes = baseline.bytes_fetched.saturating_sub(self.bytes_fetched);
        let share = |part: u64, whole: u64| 100.0 * part as f64 / whole.max(1) as f64;
        format!(
            "exact savings against a --no-dedup baseline crawl of the same web ({} pages, {}): \
             {pages} pages ({:.1} %) and {} ({:.1} %) not fetched; the dedup crawl spent {} \
             fetching the {} duplicates it found\n",
            baseline.pages_fetched,
            human_bytes(baseline.bytes_fetched),
            share(pages, baseline.pages_fetched),
            human_bytes(bytes),
            share(bytes, baseline.bytes_fetched),
            human_bytes(self.duplicate_bytes),
            self.exact_duplicates + self.near_duplicates,
        )
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} kB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        _ => format!("{:.2} GB", n as f64 / 1e9),
    }
}

mod recrawl;
mod render;

pub use recrawl::{ChangeFigures, HostRevisits, RecrawlFigures};
pub use render::RenderFigures;

#[cfg(test)]
mod tests;
