//! `report.json` and the summary printed at the end: what was fetched, what was skipped, and
//! the bandwidth the dedup stage saved.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use nearcrawl_store::CrawlStore;
use serde::{Deserialize, Serialize};

use crate::error::EngineError;
use crate::progress::Progress;
use crate::record::{Record, Verdict, rfc3339};

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

impl IndexFigures {
    /// The figures of `index`.
    pub fn of(index: &nearcrawl_hamming_index::HammingIndex) -> IndexFigures {
        let (entries, heap_bytes) = (index.len() as u64, index.heap_bytes() as u64);
        IndexFigures {
            entries,
            tables: index.params().table_count() as u64,
            heap_bytes,
            bytes_per_entry: round3(heap_bytes as f64 / entries.max(1) as f64),
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
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
    pub addresses: Vec<crate::AddressSummary>,
    /// A recrawl (`--previous`): what it cost against fetching the previous job's pages
    /// whole, and how they came back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recrawl: Option<crate::recrawl::RecrawlFigures>,
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

impl Report {
    /// Builds the report from the store's records.
    pub fn build(
        store: &dyn CrawlStore,
        queued: u64,
        robots_bytes: u64,
        run_started: SystemTime,
        interrupted: bool,
        progress: &Progress,
    ) -> Result<Report, EngineError> {
        let mut report = Report {
            decisions: 0,
            pages_fetched: 0,
            bytes_fetched: 0,
            robots_bytes,
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
            dropped_never_fetched: store.dropped_unseen()?,
            mean_page_bytes: 0,
            estimated_bytes_saved: 0,
            queued,
            interrupted,
            dedup_timing: DedupTiming::default(),
            run_started: rfc3339(run_started),
            run_seconds: progress.elapsed_secs(),
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
        };
        let mut html_bytes = 0u64;
        let mut html_pages = 0u64;
        let mut timings = Vec::new();
        let mut bad = None;
        store.for_each_record(0, &mut |seq, bytes| {
            let record: Record = match serde_json::from_slice(bytes) {
                Ok(r) => r,
                Err(e) => {
                    bad.get_or_insert(format!("record {seq}: {e}"));
                    return;
                }
            };
            report.decisions += 1;
            let status = record.status.map_or("none".to_string(), |s| s.to_string());
            *report.by_status.entry(status.clone()).or_default() += 1;
            *report
                .by_verdict
                .entry(record.verdict.as_str().to_string())
                .or_default() += 1;
            if record.bytes > 0 {
                *report.bytes_by_status.entry(status).or_default() += record.bytes;
                *report
                    .bytes_by_verdict
                    .entry(record.verdict.as_str().to_string())
                    .or_default() += record.bytes;
            }
            if record.status.is_some() {
                report.pages_fetched += u64::from(record.fetched_page());
                report.bytes_fetched += record.bytes;
            }
            match record.verdict {
                Verdict::Exact => report.exact_duplicates += 1,
                Verdict::Near => report.near_duplicates += 1,
                _ => {}
            }
            if record.verdict.is_duplicate() {
                report.duplicate_bytes += record.bytes;
            }
            if matches!(
                record.verdict,
                Verdict::Unique | Verdict::Exact | Verdict::Near
            ) {
                html_pages += 1;
                html_bytes += record.bytes;
            }
            report.outlinks_dropped += u64::from(record.dropped.unwrap_or(0));
            if let Some(prediction) = &record.prediction {
                let fate = report
                    .predictions
                    .entry(prediction.fate.clone())
                    .or_default();
                fate.pages += 1;
                fate.right += u64::from(prediction.right == Some(true));
                fate.wrong += u64::from(prediction.right == Some(false));
                fate.bytes += record.bytes;
            }
            if let Some(us) = record.dedup_us {
                timings.push(us);
            }
        })?;
        if let Some(reason) = bad {
            return Err(EngineError::Store(nearcrawl_store::StoreError::Corrupt {
                table: "records",
                reason,
            }));
        }
        report.mean_page_bytes = html_bytes.checked_div(html_pages).unwrap_or(0);
        report.estimated_bytes_saved = report.dropped_never_fetched * report.mean_page_bytes;
        timings.sort_unstable();
        if let Some(&max) = timings.last() {
            let at = |q: f64| timings[((timings.len() - 1) as f64 * q).round() as usize];
            report.dedup_timing = DedupTiming {
                pages: timings.len() as u64,
                mean_us: timings.iter().sum::<u64>() / timings.len() as u64,
                median_us: at(0.5),
                p99_us: at(0.99),
                max_us: max,
            };
        }
        let run_pages = Progress::get(&progress.pages) as f64;
        report.run_stages = progress
            .stage_times()
            .iter()
            .filter(|&(_, nanos)| nanos > 0)
            .map(|(stage, nanos)| StageTime {
                stage: stage.name().to_string(),
                total_ms: round3(nanos as f64 / 1e6),
                per_page_us: round3(nanos as f64 / 1e3 / run_pages.max(1.0)),
            })
            .collect();
        report.run_sentence_matches_per_page =
            round3(Progress::get(&progress.sentence_matches) as f64 / run_pages.max(1.0));
        report.run_pages_per_second = if report.run_seconds > 0.0 {
            run_pages / report.run_seconds
        } else {
            0.0
        };
        Ok(report)
    }

    /// Writes `report.json` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), EngineError> {
        let path = dir.join("report.json");
        let json = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&path, json + "\n").map_err(|e| EngineError::io(&path, e))
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
