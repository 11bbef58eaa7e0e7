//! One quality run: build the labelled web, crawl it with dedup and with `--no-dedup`, and
//! measure.

use std::path::Path;
use std::sync::Arc;

use nearcrawl_dedup::AnalyzerConfig;
use nearcrawl_engine::{CrawlConfig, Job, Progress, RedisJob, crawl};
use nearcrawl_records::{Record, Verdict};
use nearcrawl_redis_job::{JobName, RedisTarget};

use crate::corpus::{Corpus, CorpusError, Source};
use crate::focused::{
    FocusedSize, Harvest, Topic, TopicFrom, TopicMeasure, build_focused, harvest_svg,
    measure_harvest,
};
use crate::measure::{Measures, measure};
use crate::real::{RealSize, RealWeb, build_real};
use crate::shop::{ShopConfig, build_shop};
use crate::web::{LabelledWeb, WebConfig, build};

/// What a quality run needs besides the web's size.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The labelled web.
    pub web: WebConfig,
    /// The English text source.
    pub english: Source,
    /// The crawl settings (both crawls; `dedup.enabled` is set per crawl).
    pub crawl: CrawlConfig,
    /// Page analysis.
    pub analyzer: AnalyzerConfig,
    /// The dedup crawl as several workers sharing one job through Redis (the baseline crawl
    /// stays one worker); `None`: one worker.
    pub workers: Option<Workers>,
    /// A real web's pages served, about half of them, as a script's shell
    /// (`real/scripted.rs`): the crawls render them when `crawl.render` says so.
    pub scripted: bool,
}

/// Several workers sharing the dedup crawl through Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workers {
    /// `redis://...` or `redis+cluster://...`.
    pub redis: String,
    /// How many.
    pub count: usize,
}

impl Default for RunConfig {
    /// The small generated web of seed 1 from the tuning text, crawled with
    /// [`local_crawl_config`] and the default analyzer (the real and focused webs use only the
    /// last two).
    fn default() -> RunConfig {
        RunConfig {
            web: WebConfig::small(1),
            english: Source::PythonDocs,
            crawl: local_crawl_config(),
            analyzer: AnalyzerConfig::default(),
            workers: None,
            scripted: false,
        }
    }
}

/// A failed quality run.
#[derive(Debug)]
pub enum RunError {
    /// The text sources are missing.
    Corpus(CorpusError),
    /// The web could not be served, or a crawl failed.
    Other(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Corpus(e) => e.fmt(f),
            RunError::Other(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for RunError {}

/// The crawl settings for the labelled web: no politeness delay (the web is local), depth
/// bounded so the `--no-dedup` crawl ends in the trap.
pub fn local_crawl_config() -> CrawlConfig {
    let mut config = CrawlConfig::default();
    config.politeness.per_host_delay_ms = 0;
    config.scope.max_depth = Some(12);
    // One request at a time: the crawl order, and so every measure, is the same on every run.
    config.limits.concurrency = 1;
    config.output.warc = false;
    config
}

/// Builds the web, runs both crawls under `out` (`dedup/`, `baseline/`), and measures.
pub async fn run(config: &RunConfig, out: &Path) -> Result<Measures, RunError> {
    let english =
        Corpus::load(config.english, config.web.english_needed()).map_err(RunError::Corpus)?;
    let chinese = Corpus::load(Source::DebianReferenceZh, config.web.zh_articles)
        .map_err(RunError::Corpus)?;
    let web = build(config.web, &english, &chinese)
        .await
        .map_err(|e| RunError::Other(format!("labelled web: {e}")))?;
    crawl_and_measure(&web, config, out).await
}

/// Runs both crawls of a served web under `out`, writes `out/truth.jsonl`, and measures.
async fn crawl_and_measure(
    web: &LabelledWeb,
    config: &RunConfig,
    out: &Path,
) -> Result<Measures, RunError> {
    let (dedup, baseline) = crawl_both(&web.seeds, config, out).await?;
    let truth_path = out.join("truth.jsonl");
    web.truth
        .write(&truth_path)
        .map_err(|e| RunError::Other(format!("{}: {e}", truth_path.display())))?;
    Ok(measure(&dedup, &baseline, &web.truth))
}

/// Builds the shop web of `shop` (its text from `config.english`), runs both crawls under
/// `out`, and measures. `config.web` is not used.
pub async fn run_shop(
    shop: ShopConfig,
    config: &RunConfig,
    out: &Path,
) -> Result<Measures, RunError> {
    let english = Corpus::load(config.english, shop.english_needed()).map_err(RunError::Corpus)?;
    let web = build_shop(shop, &english)
        .await
        .map_err(|e| RunError::Other(format!("shop web: {e}")))?;
    crawl_and_measure(&web, config, out).await
}

/// Crawls `seeds` with `--no-dedup` (into `out/baseline`) and with dedup (`out/dedup`):
/// the records of (dedup, baseline).
async fn crawl_both(
    seeds: &str,
    config: &RunConfig,
    out: &Path,
) -> Result<(Vec<Record>, Vec<Record>), RunError> {
    let seeds = nearcrawl_frontier::parse_seeds(seeds, Path::new("labelled-web seeds"))
        .map_err(|e| RunError::Other(e.to_string()))?;
    let mut records = Vec::new();
    for (name, enabled) in [("baseline", false), ("dedup", true)] {
        let mut crawl_config = config.crawl.clone();
        crawl_config.dedup.enabled = enabled;
        // The dedup crawl's own link graph too: a URL it requests was named if either
        // crawl's pages name it ([`crate::measure`]'s requests for URLs nothing named).
        crawl_config.links.record = true;
        if !enabled {
            // The oracle replays the baseline in its order: one request at a time, the same
            // order on every run, whatever the dedup crawl's concurrency.
            crawl_config.limits.concurrency = 1;
        }
        let dir = out.join(name);
        records.push(match (&config.workers, enabled) {
            (Some(workers), true) => {
                crawl_shared(&seeds, dir, crawl_config, config, workers).await?
            }
            _ => crawl_into(&seeds, dir, crawl_config, config).await?,
        });
    }
    let dedup = records.pop().unwrap_or_default();
    let baseline = records.pop().unwrap_or_default();
    Ok((dedup, baseline))
}

/// Crawls `seeds` into `dir` (emptied first) with `crawl_config` and `config`'s analyzer;
/// the records.
pub(crate) async fn crawl_into(
    seeds: &[nearcrawl_frontier::Seed],
    dir: std::path::PathBuf,
    crawl_config: CrawlConfig,
    config: &RunConfig,
) -> Result<Vec<Record>, RunError> {
    let _ = std::fs::remove_dir_all(&dir);
    let job = Job {
        seeds: seeds.to_vec(),
        out_dir: dir.clone(),
        config: crawl_config,
        analyzer: config.analyzer.clone(),
        shared_index: None,
        redis: None,
    };
    crawl(job, std::future::pending(), Arc::new(Progress::default()))
        .await
        .map_err(|e| RunError::Other(format!("{}: {e}", dir.display())))?;
    read_records(&dir)
}

/// Crawls `seeds` as `workers.count` workers of one new job on `workers.redis`, each into
/// `dir/wN` (emptied first): the records of all of them.
async fn crawl_shared(
    seeds: &[nearcrawl_frontier::Seed],
    dir: std::path::PathBuf,
    crawl_config: CrawlConfig,
    config: &RunConfig,
    workers: &Workers,
) -> Result<Vec<Record>, RunError> {
    let _ = std::fs::remove_dir_all(&dir);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!("quality-{}-{stamp}", std::process::id());
    let target = RedisTarget::parse(&workers.redis).map_err(|e| RunError::Other(e.to_string()))?;
    let job = JobName::new(&name).map_err(|e| RunError::Other(e.to_string()))?;
    let mut tasks = Vec::new();
    for n in 0..workers.count.max(1) {
        let job = Job {
            seeds: seeds.to_vec(),
            out_dir: dir.join(format!("w{n}")),
            config: crawl_config.clone(),
            analyzer: config.analyzer.clone(),
            shared_index: None,
            redis: Some(RedisJob {
                target: target.clone(),
                job: job.clone(),
                worker: format!("w{n}"),
            }),
        };
        tasks.push(tokio::spawn(async move {
            crawl(job, std::future::pending(), Arc::new(Progress::default())).await
        }));
    }
    let mut records = Vec::new();
    for (n, task) in tasks.into_iter().enumerate() {
        let worker_dir = dir.join(format!("w{n}"));
        task.await
            .map_err(|e| RunError::Other(format!("worker {n}: {e}")))?
            .map_err(|e| RunError::Other(format!("{}: {e}", worker_dir.display())))?;
        records.extend(read_records(&worker_dir)?);
    }
    // The workers' records share no order (each numbers its own): a group's page the job kept
    // is taken to come first, then the pages it called copies, so that recall counts a
    // group's second original as missed and none of its copies.
    records.sort_by_key(|r| r.verdict.is_duplicate() || r.verdict == Verdict::Unchanged);
    Ok(records)
}

/// Serves a real web, crawls it with dedup and with `--no-dedup` under `out`, writes
/// `out/truth.jsonl`, and measures. `config.web` and `config.english` are not used.
pub async fn run_real(
    web: RealWeb,
    size: RealSize,
    config: &RunConfig,
    out: &Path,
) -> Result<Measures, RunError> {
    let served = crate::build_real_served(web, size, 60, config.scripted)
        .await
        .map_err(|e| RunError::Other(format!("{}: {e}", web.name())))?;
    let (dedup, baseline) = crawl_both(&served.seeds, config, out).await?;
    let truth_path = out.join("truth.jsonl");
    served
        .truth
        .write(&truth_path)
        .map_err(|e| RunError::Other(format!("{}: {e}", truth_path.display())))?;
    Ok(measure(&dedup, &baseline, &served.truth))
}

/// Serves a real web and measures `nearcrawl compare` on labelled pairs drawn from it;
/// writes `out/pairs.json` and `out/pr-curve.svg`.
pub async fn run_real_pairs(
    web: RealWeb,
    size: RealSize,
    config: &RunConfig,
    out: &Path,
) -> Result<crate::pairs::PairReport, RunError> {
    let served = build_real(web, size, 60)
        .await
        .map_err(|e| RunError::Other(format!("{}: {e}", web.name())))?;
    let analyzer = nearcrawl_dedup::Analyzer::new(config.analyzer.clone());
    let report = crate::pairs::measure_real_pairs(&served, &analyzer);
    write_pairs(&report, out)?;
    Ok(report)
}

fn write_pairs(report: &crate::pairs::PairReport, out: &Path) -> Result<(), RunError> {
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| RunError::Other(format!("{}: {e}", path.display())))
    };
    write(
        "pairs.json",
        serde_json::to_string_pretty(report).unwrap_or_default(),
    )?;
    write("pr-curve.svg", report.svg())
}

fn read_records(dir: &Path) -> Result<Vec<Record>, RunError> {
    let path = dir.join("records.jsonl");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| RunError::Other(format!("{}: {e}", path.display())))?;
    text.lines()
        .map(|l| {
            serde_json::from_str(l).map_err(|e| RunError::Other(format!("{}: {e}", path.display())))
        })
        .collect()
}

/// Builds the web and measures `nearcrawl compare` on its labelled pairs; writes
/// `out/pairs.json` and `out/pr-curve.svg`.
pub async fn run_pairs(
    config: &RunConfig,
    out: &Path,
) -> Result<crate::pairs::PairReport, RunError> {
    let english =
        Corpus::load(config.english, config.web.english_needed()).map_err(RunError::Corpus)?;
    let chinese = Corpus::load(Source::DebianReferenceZh, config.web.zh_articles)
        .map_err(RunError::Corpus)?;
    let web = build(config.web, &english, &chinese)
        .await
        .map_err(|e| RunError::Other(format!("labelled web: {e}")))?;
    let analyzer = nearcrawl_dedup::Analyzer::new(config.analyzer.clone());
    let report = crate::pairs::measure_pairs(&web, &analyzer);
    write_pairs(&report, out)?;
    Ok(report)
}

/// Serves the focused web of `size`, crawls it breadth-first (`out/bfs`) and, for each topic
/// whose manual is served and each way of giving it, focused (`out/TOPIC-FROM`), from the
/// portal; writes `out/focused.json` and `out/harvest-TOPIC.svg`. `config.crawl.focus`
/// gives the threshold, tunnel and weights; its topic is replaced by each topic's.
pub async fn run_focused(
    size: FocusedSize,
    topics: &[Topic],
    froms: &[TopicFrom],
    config: &RunConfig,
    out: &Path,
) -> Result<Vec<TopicMeasure>, RunError> {
    let web = build_focused(size, 80)
        .await
        .map_err(|e| RunError::Other(format!("focused web: {e}")))?;
    let seeds = nearcrawl_frontier::parse_seeds(&web.seeds, Path::new("focused-web seeds"))
        .map_err(|e| RunError::Other(e.to_string()))?;
    let mut crawl_config = config.crawl.clone();
    crawl_config.scope.hosts = nearcrawl_frontier::HostScope::Any;
    // The manuals are on loopback addresses other than the portal's; their links to the
    // web outside are not followed (this machine may have no network).
    crawl_config.scope.allow_private = true;
    crawl_config.scope.include = vec![r"^http://127\.0\.0\.[0-9]+:[0-9]+/".to_string()];
    let mut bfs_config = crawl_config.clone();
    bfs_config.focus = nearcrawl_frontier::FocusConfig::default();
    let bfs = crawl_into(&seeds, out.join("bfs"), bfs_config, config).await?;
    let mut measures = Vec::new();
    for topic in topics
        .iter()
        .filter(|t| web.manuals.contains_key(&t.manual))
    {
        let relevant = web
            .relevant(topic)
            .map_err(|e| RunError::Other(e.to_string()))?;
        let mut curves: Vec<(TopicFrom, Harvest)> = Vec::new();
        let mut bfs_curve = Harvest::default();
        for from in froms {
            let mut focused_config = crawl_config.clone();
            focused_config.focus = web.focus(topic, *from, &config.crawl.focus);
            let dir = crate::focused::topic_dir(out, topic, *from);
            let focused = crawl_into(&seeds, dir, focused_config, config).await?;
            let (measure, bfs_harvest, harvest) =
                measure_harvest(topic, *from, &bfs, &focused, &relevant);
            if measure.relevant == 0 {
                return Err(RunError::Other(format!(
                    "the breadth-first crawl reached none of the {} pages of {}",
                    relevant.len(),
                    topic.name
                )));
            }
            bfs_curve = bfs_harvest;
            curves.push((*from, harvest));
            measures.push(measure);
        }
        let relevant = measures.last().map_or(0, |m| m.relevant);
        let svg = harvest_svg(topic.name, &bfs_curve, &curves, relevant);
        let path = out.join(format!("harvest-{}.svg", topic.name));
        std::fs::write(&path, svg)
            .map_err(|e| RunError::Other(format!("{}: {e}", path.display())))?;
    }
    let path = out.join("focused.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&measures).unwrap_or_default(),
    )
    .map_err(|e| RunError::Other(format!("{}: {e}", path.display())))?;
    Ok(measures)
}
