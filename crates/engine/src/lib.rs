//! The crawler: an async shell around the pure crates.
//!
//! [`crawl`] runs a [`Job`]: one coordinator task owns the frontier (per-host queues in the
//! crawl store, politeness from `nearcrawl-frontier`), the permuted-table index and the
//! store; fetch tasks (`nearcrawl-fetch`) download pages and analyse them on the blocking
//! pool (`nearcrawl-dedup`), then report back. For each page the coordinator asks the dedup
//! stage *before* enqueueing outlinks: exact key, then simhash candidates within k from the
//! index, verified by LCS when configured. Duplicates are recorded with the page they copy and
//! their outlinks dropped; unique pages join the index and their outlinks are queued.
//!
//! Every decision is one atomic store commit followed by one line of `records.jsonl`, so a
//! job killed at any moment resumes (run it again on the same output directory) having lost
//! no discovered URL; pages in flight are fetched again. Outputs: `records.jsonl`
//! ([`Record`]), `report.json` ([`Report`]), `warc/*.warc.gz` (WARC/1.1, gzip per record),
//! `state/` (the fjall store). With [`Job::shared_index`] a job also reads and extends an
//! index shared across jobs, so a new crawl skips what an earlier one already has. A finished
//! crawl's kept page texts ([`for_each_kept_text`]) are a corpus for learning IDF weights.
//!
//! The coordinator runs on whichever thread polls [`crawl`]'s future. [`runtime()`] builds a
//! runtime whose own threads run below the thread that built it: block on the crawl there
//! (`runtime()?.block_on(crawl(...))`, as the CLI does), so the coordinator, which judges
//! pages one at a time, goes first when the cores are busy (15 % more pages/s on the
//! text-rich benchmark of docs/BENCHMARKS.md), and pages are analysed on a blocking pool of a
//! few threads a core (6 % more).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use nearcrawl_engine::{CrawlConfig, Job, Progress, crawl};
//!
//! let seeds = nearcrawl_frontier::read_seeds("seeds/demo.txt".as_ref())?;
//! let job = Job {
//!     seeds,
//!     out_dir: "out".into(),
//!     config: CrawlConfig::default(),
//!     analyzer: nearcrawl_dedup::AnalyzerConfig::default(),
//!     shared_index: None,
//!     redis: None,
//! };
//! let report = crawl(job, std::future::pending(), Arc::new(Progress::default())).await?;
//! print!("{}", report.summary());
//! # Ok(()) }
//! ```

mod archive;
mod config;
mod corpus;
mod crawl;
mod error;
mod focus;
mod frontier;
mod job_file;
mod output;
mod progress;
mod record;
mod recrawl;
mod report;
mod runtime;
mod shared;
mod warc;

pub use crate::config::{
    CrawlConfig, DedupStageConfig, DuplicateOutlinks, JudgeThread, LimitsConfig, LinksConfig,
    OutputConfig, RedisConfig,
};
pub use crate::corpus::for_each_kept_text;
pub use crate::crawl::{Job, Parts, RedisJob, crawl, crawl_with};
pub use crate::error::EngineError;
pub use crate::frontier::{Frontier, FrontierConfig, Parking, RedisFrontier, Step, StoreFrontier};
pub use crate::job_file::JobFile;
pub use crate::progress::Progress;
pub use crate::runtime::{BLOCKING_THREADS_PER_CORE, runtime};
pub use crate::shared::IndexConfig;
pub use crate::warc::Level as WarcLevel;
