//! The engine's part of a job configuration: limits, link following, the dedup stage and
//! outputs. Scope, politeness, fetching and focus are configured by the sections the
//! frontier and fetch crates define.

pub use nearcrawl_dedup::{DedupStageConfig, DuplicateOutlinks};
use nearcrawl_fetch::FetchConfig;
use nearcrawl_frontier::{FocusConfig, PolitenessConfig, ScopeConfig, TrapConfig};
use serde::{Deserialize, Serialize};

/// `[limits]`: when a job stops, and how its work is spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Pages fetched (responses received, robots.txt excluded) before the job stops.
    pub max_pages: Option<u64>,
    /// Pages fetched from one host before its other URLs are recorded out of scope.
    pub max_pages_per_host: Option<u64>,
    /// Requests in flight at once, all hosts together (0: the default, 16).
    pub concurrency: usize,
    /// Where pages are judged: on a thread of their own, or on the coordinator's.
    pub judge_thread: JudgeThread,
}

/// `limits.judge_thread`: whether the dedup stage judges pages (and keeps the unique ones)
/// on a thread of its own, beside the coordinator that decides them, rather than on the
/// coordinator's. Its own thread takes a third of the coordinator's work off it, which is
/// what bounds a crawl's pages/s on many cores, for more CPU a page in all (the threads
/// hand each page over): docs/BENCHMARKS.md, "The judge on a thread of its
/// own". Shared
/// jobs and recrawls judge on the coordinator's thread whatever the setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeThread {
    /// On its own thread where the crawl may use [`JudgeThread::AUTO_CORES`] cores or more.
    #[default]
    Auto,
    /// Always on its own thread.
    On,
    /// Always on the coordinator's.
    Off,
}

impl JudgeThread {
    /// The cores from which `auto` judges on a thread of its own.
    pub const AUTO_CORES: usize = 4;

    /// Whether pages are judged on a thread of their own, with `cores` to use.
    pub fn away(self, cores: usize) -> bool {
        match self {
            JudgeThread::Auto => cores >= JudgeThread::AUTO_CORES,
            JudgeThread::On => true,
            JudgeThread::Off => false,
        }
    }
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_pages: None,
            max_pages_per_host: None,
            concurrency: 16,
            judge_thread: JudgeThread::default(),
        }
    }
}

/// `[links]`: which links of a page are followed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinksConfig {
    /// Follow links marked `rel=nofollow` (also `ugc`, `sponsored`).
    pub follow_nofollow: bool,
    /// Obey robots.txt. Turn off only for your own sites.
    pub obey_robots: bool,
    /// Queue a page's `rel=canonical` target when it names another URL.
    pub follow_canonical: bool,
    /// Queue the URLs of the sitemaps named by robots.txt `Sitemap:` lines (and of the
    /// sitemaps a sitemap index names), like seeds.
    pub sitemaps: bool,
    /// Links read per page, in document order; the rest are counted in the page's record
    /// (`links_over_cap`) and not followed.
    pub max_per_page: usize,
    /// Record each fetched page's link graph in its record (`links`): every in-scope URL its
    /// links name that the scope and trap rules admit, followed or not (a learned session
    /// parameter taken out). Always on in `--no-dedup` crawls.
    pub record: bool,
    /// Write the link policy's input events (what the crawl knew of each link found, the
    /// answers to what the policy asked, the fate carried out) to `OUT/policy-events.jsonl`,
    /// for `nearcrawl policy-replay` to feed to the policy alone. Not in a shared job.
    pub policy_events: bool,
}

impl Default for LinksConfig {
    fn default() -> Self {
        LinksConfig {
            follow_nofollow: false,
            obey_robots: true,
            follow_canonical: true,
            sitemaps: false,
            max_per_page: nearcrawl_dedup::MAX_LINKS,
            record: false,
            policy_events: false,
        }
    }
}

/// `[output]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputConfig {
    /// Write WARC/1.1 files (gzip per record) under `OUT/warc/`.
    pub warc: bool,
    /// Start a new WARC file after this many bytes.
    pub warc_max_bytes: u64,
    /// How hard each WARC record is compressed: 0 (stored), 1 (fastest) to 12 (smallest).
    pub warc_compression: crate::warc::Level,
    /// Bytes of the crawl state's blocks (`OUT/state`) kept in memory, over all its tables.
    pub state_cache_bytes: u64,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            warc: true,
            warc_max_bytes: 1 << 30,
            warc_compression: crate::warc::Level::default(),
            state_cache_bytes: nearcrawl_store::DEFAULT_CACHE_BYTES,
        }
    }
}

/// Everything the engine needs to know about a job besides its seeds, its output directory
/// and the page analyzer.
#[derive(Debug, Clone, Default)]
pub struct CrawlConfig {
    /// Which URLs may be fetched.
    pub scope: ScopeConfig,
    /// URLs that give a crawler trap away.
    pub traps: TrapConfig,
    /// When the job stops.
    pub limits: LimitsConfig,
    /// Per-host politeness.
    pub politeness: PolitenessConfig,
    /// HTTP.
    pub fetch: FetchConfig,
    /// Focused crawling.
    pub focus: FocusConfig,
    /// Link following.
    pub links: LinksConfig,
    /// The dedup stage.
    pub dedup: DedupStageConfig,
    /// Outputs.
    pub output: OutputConfig,
    /// Pages written by scripts, rendered in a browser.
    pub render: nearcrawl_render::RenderSettings,
    /// The index shared across jobs.
    pub index: crate::shared::IndexConfig,
    /// A job shared by several workers through Redis (`--redis`).
    pub redis: RedisConfig,
    /// A recrawl (`--previous DIR`): the output directory of the job crawled before, whose
    /// pages are asked again with their validators and classed by how they came back.
    pub previous: Option<std::path::PathBuf>,
}

/// `[redis]`: how a worker of a job shared through Redis (`--redis`) holds its part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedisConfig {
    /// A URL handed to a worker stays its own this long (seconds); a worker that has not
    /// decided it by then is taken for dead, and the URL goes back to its queue for another.
    /// Longer than a fetch and its analysis can take. Fixed by the worker that creates the job.
    pub lease_secs: u64,
    /// How long a worker keeps trying when Redis cannot be had (a lost connection, a server
    /// restarting) before it stops with an error (seconds).
    pub patience_secs: u64,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            lease_secs: 120,
            patience_secs: 60,
        }
    }
}

impl CrawlConfig {
    /// Requests in flight at once (at least 1; default 16).
    pub fn concurrency(&self) -> usize {
        if self.limits.concurrency == 0 {
            16
        } else {
            self.limits.concurrency
        }
    }

    /// Whether each fetched page's record holds its link graph (`links.record`, or a
    /// `--no-dedup` crawl).
    pub fn records_links(&self) -> bool {
        self.links.record || !self.dedup.enabled
    }
}
