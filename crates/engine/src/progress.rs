//! Live counters of a running job, shared with whatever displays them (progress bar,
//! Prometheus endpoint).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nearcrawl_dedup::{Stage, StageTimes};

/// Counters updated by the engine as it decides; read at any time from any thread.
#[derive(Debug)]
pub struct Progress {
    started: Instant,
    /// Pages fetched (responses to page requests) in this run.
    pub pages: AtomicU64,
    /// Bytes received on the wire in this run, robots.txt included.
    pub bytes: AtomicU64,
    /// Exact and near duplicates found in this run.
    pub duplicates: AtomicU64,
    /// New URLs not queued because their page was a duplicate, in this run.
    pub dropped_outlinks: AtomicU64,
    /// Decisions recorded in this run.
    pub decisions: AtomicU64,
    /// Errors recorded in this run.
    pub errors: AtomicU64,
    /// URLs waiting in the queues (approximate).
    pub queued: AtomicU64,
    /// Requests in flight.
    pub in_flight: AtomicU64,
    /// Total microseconds spent in the dedup stage in this run.
    pub dedup_micros: AtomicU64,
    /// Sentence matches found while judging this run's pages: for each page, the earlier kept
    /// pages its sentences' postings listed, counted once per sentence (the verification work
    /// the pages brought, beside its time).
    pub sentence_matches: AtomicU64,
    /// Nanoseconds spent in each pipeline stage in this run, indexed by [`Stage`].
    stage_nanos: [AtomicU64; Stage::ALL.len()],
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            started: Instant::now(),
            pages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            duplicates: AtomicU64::new(0),
            dropped_outlinks: AtomicU64::new(0),
            decisions: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            queued: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            dedup_micros: AtomicU64::new(0),
            sentence_matches: AtomicU64::new(0),
            stage_nanos: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Progress {
    /// Seconds since the run started.
    pub fn elapsed_secs(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Reads a counter.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn set(counter: &AtomicU64, n: u64) {
        counter.store(n, Ordering::Relaxed);
    }

    /// Adds a page's (or a step's) time by stage.
    pub(crate) fn add_times(&self, times: &StageTimes) {
        for (stage, nanos) in times.iter().filter(|&(_, n)| n > 0) {
            Progress::add(&self.stage_nanos[stage as usize], nanos);
        }
    }

    /// Adds `took` to one stage.
    pub(crate) fn add_time(&self, stage: Stage, took: Duration) {
        let mut times = StageTimes::default();
        times.add(stage, took);
        self.add_times(&times);
    }

    /// Nanoseconds spent in each stage in this run.
    pub fn stage_times(&self) -> StageTimes {
        let mut times = StageTimes::default();
        for stage in Stage::ALL {
            times.add(
                stage,
                Duration::from_nanos(Progress::get(&self.stage_nanos[stage as usize])),
            );
        }
        times
    }

    /// Bandwidth saved so far, estimated as in the report: outlinks dropped times the mean
    /// bytes per page fetched.
    pub fn bytes_saved_estimate(&self) -> u64 {
        let pages = Progress::get(&self.pages);
        let mean = Progress::get(&self.bytes).checked_div(pages).unwrap_or(0);
        Progress::get(&self.dropped_outlinks) * mean
    }

    /// Prometheus text exposition of the counters.
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        for (name, help, value) in [
            (
                "nearcrawl_pages_fetched_total",
                "Pages fetched in this run.",
                &self.pages,
            ),
            (
                "nearcrawl_bytes_received_total",
                "Bytes received on the wire in this run.",
                &self.bytes,
            ),
            (
                "nearcrawl_duplicates_total",
                "Exact and near duplicates found in this run.",
                &self.duplicates,
            ),
            (
                "nearcrawl_outlinks_dropped_total",
                "New URLs not queued because their page was a duplicate.",
                &self.dropped_outlinks,
            ),
            (
                "nearcrawl_decisions_total",
                "URL decisions recorded in this run.",
                &self.decisions,
            ),
            (
                "nearcrawl_errors_total",
                "Errors recorded in this run.",
                &self.errors,
            ),
            (
                "nearcrawl_dedup_microseconds_total",
                "Time spent in the dedup stage, in microseconds.",
                &self.dedup_micros,
            ),
            (
                "nearcrawl_sentence_matches_total",
                "Earlier kept pages listed by the judged pages' sentence postings, once per sentence.",
                &self.sentence_matches,
            ),
        ] {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}\n",
                Progress::get(value)
            ));
        }
        out.push_str(
            "# HELP nearcrawl_stage_seconds_total Time spent in each pipeline stage in this run.\n\
             # TYPE nearcrawl_stage_seconds_total counter\n",
        );
        for (stage, nanos) in self.stage_times().iter() {
            out.push_str(&format!(
                "nearcrawl_stage_seconds_total{{stage=\"{}\"}} {:.6}\n",
                stage.name(),
                nanos as f64 / 1e9
            ));
        }
        for (name, help, value) in [
            (
                "nearcrawl_queue_length",
                "URLs waiting in the queues.",
                Progress::get(&self.queued),
            ),
            (
                "nearcrawl_in_flight",
                "Requests in flight.",
                Progress::get(&self.in_flight),
            ),
            (
                "nearcrawl_bytes_saved_estimate",
                "Outlinks dropped times the mean page size.",
                self.bytes_saved_estimate(),
            ),
        ] {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
            ));
        }
        out
    }
}
