//! `nearcrawl crawl` and `nearcrawl demo`: run a job with a progress bar, Ctrl-C handling and
//! an optional Prometheus endpoint, then print the report.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use nearcrawl_demo_web::{DemoConfig, DemoWeb};
use nearcrawl_engine::{Job, Progress, RedisJob, crawl};
use nearcrawl_frontier::{HostScope, read_seeds};
use nearcrawl_records::Report;
use nearcrawl_redis_job::{JobName, RedisTarget};

use nearcrawl_engine::JobFile;

/// `crawl --redis URL --job NAME`: one worker of a job shared through Redis.
#[derive(Args, Debug, Default)]
pub struct SharedFlags {
    /// Share the job with other workers through Redis: redis://HOST:PORT/ (or Valkey), or
    /// redis+cluster://HOST:PORT,HOST:PORT/ for a Redis Cluster. The frontier (queues, seen
    /// set, politeness, robots.txt) and the near-duplicate index are the job's; the first
    /// worker seeds it, the others join. Records, WARC files and report stay in each worker's
    /// --out.
    #[arg(long, value_name = "URL", requires = "job")]
    pub redis: Option<String>,
    /// The shared job's name (letters, digits, '.', '_', '-').
    #[arg(long, value_name = "NAME", requires = "redis")]
    pub job: Option<String>,
    /// This worker's name, unique among the job's workers (default: HOSTNAME-PID).
    #[arg(long, value_name = "NAME", requires = "redis")]
    pub worker: Option<String>,
}

impl SharedFlags {
    /// The shared job asked for, if any.
    fn redis_job(&self) -> Result<Option<RedisJob>> {
        let (Some(redis), Some(job)) = (&self.redis, &self.job) else {
            return Ok(None);
        };
        let worker = match &self.worker {
            Some(worker) => worker.clone(),
            None => {
                let host = std::fs::read_to_string("/etc/hostname")
                    .map(|h| h.trim().to_string())
                    .unwrap_or_else(|_| "worker".to_string());
                format!("{host}-{}", std::process::id())
            }
        };
        Ok(Some(RedisJob {
            target: RedisTarget::parse(redis)?,
            job: JobName::new(job)?,
            worker,
        }))
    }
}

/// The knobs shared by `crawl` and `demo`; each overrides the configuration file.
#[derive(Args, Debug, Default)]
pub struct CrawlFlags {
    /// The job configuration (TOML, see config/default.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Stop after this many pages fetched.
    #[arg(long)]
    pub max_pages: Option<u64>,
    /// Follow links at most this deep from a seed.
    #[arg(long)]
    pub max_depth: Option<u32>,
    /// Which hosts may be crawled: the seeds' own (default), any under a seed's registrable
    /// domain, or any host.
    #[arg(long, value_enum)]
    pub hosts: Option<HostRule>,
    /// Only URLs matching this regex (repeatable: any of them). It narrows the hosts rule,
    /// never widens it: a URL must be on an allowed host (--hosts) and match. To crawl a
    /// site other than the seeds', add --hosts any (or seed-domains).
    #[arg(long)]
    pub include: Vec<String>,
    /// No URL matching this regex (repeatable).
    #[arg(long)]
    pub exclude: Vec<String>,
    /// Also fetch loopback and private addresses no seed is on (only for your own networks).
    #[arg(long)]
    pub allow_private: bool,
    /// Requests in flight at once.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Connections open to one host at once.
    #[arg(long)]
    pub max_connections_per_host: Option<u32>,
    /// Minimum milliseconds between two requests to one host (0 for your own servers).
    #[arg(long)]
    pub per_host_delay_ms: Option<u64>,
    /// Requests in flight to one server address at once, all its names together (0: no
    /// limit; unset: 4, or --max-connections-per-host if more).
    #[arg(long)]
    pub max_connections_per_address: Option<u32>,
    /// Minimum milliseconds between two requests to one server address, all its names
    /// together (unset: 250, or --per-host-delay-ms if less).
    #[arg(long)]
    pub per_address_delay_ms: Option<u64>,
    /// Resolve this name to this address instead of asking the system resolver
    /// (`NAME=ADDRESS`, repeatable; `[fetch.hosts]`).
    #[arg(long, value_name = "NAME=ADDRESS", value_parser = parse_resolve)]
    pub resolve: Vec<(String, std::net::IpAddr)>,
    /// Baseline crawl: fingerprints and verdicts recorded, nothing skipped.
    #[arg(long)]
    pub no_dedup: bool,
    /// Render pages written by scripts in headless Chromium before judging them and
    /// following their links: never; auto (pages whose HTML loads a script and shows little
    /// text, on hosts where rendering adds text or links); or always (every HTML page fetched
    /// whole); `[render]` in the job file.
    #[arg(long, value_name = "MODE")]
    pub render: Option<nearcrawl_render::RenderMode>,
    /// The User-Agent (and robots.txt agent name).
    #[arg(long)]
    pub user_agent: Option<String>,
    /// Serve Prometheus metrics at this address (e.g. 127.0.0.1:9898).
    #[arg(long)]
    pub metrics: Option<SocketAddr>,
    /// An index shared across jobs (a directory): pages it holds count as already crawled,
    /// and this job's unique pages are added to it at the end.
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// With --index: its pages crawled more than this many days ago (or on an unknown day)
    /// no longer count as crawled (they stay in the index).
    #[arg(long, value_name = "DAYS")]
    pub index_max_age: Option<u32>,
    /// A recrawl: ask every page the job in this directory fetched again, with its validators
    /// (`If-None-Match`, `If-Modified-Since`), and class each by how it came back
    /// (not-modified, unchanged, changed, gone, moved); new links of changed pages are
    /// followed as usual.
    #[arg(long, value_name = "DIR")]
    pub previous: Option<PathBuf>,
    /// A recrawl of the job in --out: its outputs are set aside (as --restart does) and its
    /// pages asked again as with --previous. A recrawl killed before it ended is resumed.
    #[arg(long, conflicts_with = "previous")]
    pub recrawl: bool,
    /// A focused crawl on the topic these words describe (`focus.description`): pages like
    /// it first, off-topic pages followed only `focus.tunnel` in a row. See docs/FOCUSED.md.
    #[arg(long, value_name = "TEXT")]
    pub topic: Option<String>,
    /// A focused crawl on the topic of this page (repeatable; `focus.examples`): an
    /// http(s) URL, fetched once at the start, or an HTML or text file.
    #[arg(long, value_name = "URL|FILE")]
    pub topic_example: Vec<String>,
}

/// `--resolve NAME=ADDRESS`.
fn parse_resolve(text: &str) -> Result<(String, std::net::IpAddr), String> {
    let (name, address) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected NAME=ADDRESS"))?;
    let address = address
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .map_err(|e| format!("{text:?}: {address:?} is not an IP address ({e})"))?;
    let name = name.trim().to_ascii_lowercase();
    if name.is_empty() {
        return Err(format!("{text:?}: no name before '='"));
    }
    Ok((name, address))
}

/// `--hosts`: the `scope.hosts` rule.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum HostRule {
    /// Only the seeds' hosts (host and port as in the seed URLs).
    SeedHosts,
    /// Any host under a seed's registrable domain (public suffix list).
    SeedDomains,
    /// Any host.
    Any,
}

impl From<HostRule> for HostScope {
    fn from(hosts: HostRule) -> HostScope {
        match hosts {
            HostRule::SeedHosts => HostScope::SeedHosts,
            HostRule::SeedDomains => HostScope::SeedDomains,
            HostRule::Any => HostScope::Any,
        }
    }
}

impl CrawlFlags {
    fn apply(&self, config: &mut JobFile) {
        let c = config;
        if let Some(hosts) = self.hosts {
            c.scope.hosts = hosts.into();
        }
        if self.allow_private {
            c.scope.allow_private = true;
        }
        if let Some(days) = self.index_max_age {
            c.index.max_age_days = Some(days);
        }
        if let Some(n) = self.max_connections_per_host {
            c.politeness.max_connections_per_host = n;
        }
        if let Some(n) = self.max_pages {
            c.limits.max_pages = Some(n);
        }
        if let Some(n) = self.max_depth {
            c.scope.max_depth = Some(n);
        }
        c.scope.include.extend(self.include.iter().cloned());
        c.scope.exclude.extend(self.exclude.iter().cloned());
        if let Some(n) = self.concurrency {
            c.limits.concurrency = n;
        }
        if let Some(ms) = self.per_host_delay_ms {
            c.politeness.per_host_delay_ms = ms;
        }
        if let Some(n) = self.max_connections_per_address {
            c.politeness.max_connections_per_address = Some(n);
        }
        if let Some(ms) = self.per_address_delay_ms {
            c.politeness.per_address_delay_ms = Some(ms);
        }
        c.fetch.hosts.extend(self.resolve.iter().cloned());
        if self.no_dedup {
            c.dedup.enabled = false;
        }
        if let Some(mode) = self.render {
            c.render.mode = mode;
        }
        if let Some(agent) = &self.user_agent {
            c.fetch.user_agent = agent.clone();
        }
        if let Some(topic) = &self.topic {
            c.focus.description = topic.clone();
        }
        c.focus.examples.extend(self.topic_example.iter().cloned());
    }
}

/// `nearcrawl crawl --seeds FILE --out DIR`.
pub fn crawl_command(
    seeds: &Path,
    out: &Path,
    restart: bool,
    flags: &CrawlFlags,
    shared: &SharedFlags,
) -> Result<()> {
    let seeds = read_seeds(seeds)?;
    let (mut config, config_dir) = JobFile::load(flags.config.as_deref())?;
    flags.apply(&mut config);
    let mut previous = flags.previous.clone();
    if let Some(dir) = &previous {
        if dir == out {
            bail!(
                "--previous {}: that is --out; to crawl a job's pages again in the same place use --recrawl",
                dir.display()
            );
        }
        if !dir.join("records.jsonl").is_file() {
            bail!(
                "--previous {}: no records.jsonl there (the output directory of an earlier crawl)",
                dir.display()
            );
        }
    }
    let resumed = flags
        .recrawl
        .then(|| nearcrawl_records::unfinished_recrawl(out))
        .flatten();
    if let Some(dir) = resumed {
        eprintln!(
            "--recrawl: resuming the recrawl of {} in {}",
            dir.display(),
            out.display()
        );
        previous = Some(dir);
    } else if restart || flags.recrawl {
        match nearcrawl_records::set_aside(out)? {
            Some(aside) => {
                let flag = if flags.recrawl {
                    "--recrawl"
                } else {
                    "--restart"
                };
                eprintln!(
                    "{flag}: the earlier outputs and state are in {}",
                    aside.display()
                );
                if flags.recrawl {
                    previous = Some(aside);
                }
            }
            None if flags.recrawl => {
                bail!(
                    "--recrawl: {} holds no earlier crawl to crawl again",
                    out.display()
                )
            }
            None => {}
        }
    }
    let mut crawl = config.crawl();
    crawl.previous = previous;
    let job = Job {
        seeds,
        out_dir: out.to_path_buf(),
        config: crawl,
        analyzer: config.analyzer(config_dir.as_deref())?,
        shared_index: flags.index.clone(),
        redis: shared.redis_job()?,
    };
    let runtime = runtime()?;
    let report = runtime.block_on(run_job(job, flags.metrics))?;
    print!("{}", report.summary());
    if let Some(warning) = &report.scope_warning {
        eprintln!("warning: {warning}");
    }
    let html = nearcrawl_report::write(out)?;
    println!(
        "records: {}  report: {} and {}",
        out.join("records.jsonl").display(),
        out.join("report.json").display(),
        html.display()
    );
    Ok(())
}

/// `nearcrawl demo`: serve the demo web on 127.0.0.1 and crawl it.
pub fn demo_command(out: Option<&Path>, flags: &CrawlFlags) -> Result<()> {
    let runtime = runtime()?;
    runtime.block_on(async {
        let web = DemoWeb::start(DemoConfig::default()).await.context("cannot start the demo web on 127.0.0.1")?;
        let out = match out {
            Some(dir) => dir.to_path_buf(),
            None => std::env::temp_dir().join(format!("nearcrawl-demo-{}", std::process::id())),
        };
        std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
        let seeds_path = out.join("seeds.txt");
        std::fs::write(&seeds_path, web.seed_list()).with_context(|| format!("cannot write {}", seeds_path.display()))?;
        println!("demo web: origin {}, mirror {}, syndicate {}, trap {}", web.origin.url("/"), web.mirror.url("/"), web.syndicate.url("/"), web.trap.url("/cal/2026-01-01"));
        let seeds = read_seeds(&seeds_path)?;
        let (mut config, config_dir) = JobFile::load(flags.config.as_deref())?;
        // The demo web is ours and local: no need to wait between requests unless asked.
        if flags.per_host_delay_ms.is_none() {
            config.politeness.per_host_delay_ms = 0;
            println!("per-host delay 0 ms: the demo web is local (--per-host-delay-ms to change); everything else as configured");
        }
        flags.apply(&mut config);
        let job = Job {
            seeds,
            out_dir: out.clone(),
            config: config.crawl(),
            analyzer: config.analyzer(config_dir.as_deref())?,
            shared_index: flags.index.clone(),
            redis: None,
        };
        let baseline_config = {
            let mut c = config.crawl();
            c.dedup.enabled = false;
            c
        };
        let baseline_job = Job {
            seeds: job.seeds.clone(),
            out_dir: out.join("baseline"),
            config: baseline_config,
            analyzer: job.analyzer.clone(),
            shared_index: None,
            redis: None,
        };
        let report = run_job(job, flags.metrics).await?;
        print!("{}", report.summary());
        let html = nearcrawl_report::write(&out)?;
        println!("records: {}  report: {} and {}  WARC: {}", out.join("records.jsonl").display(), out.join("report.json").display(), html.display(), out.join("warc").display());
        // What dedup saved, exactly: the same web crawled again without it.
        if report.pages_fetched > 0 && flags.index.is_none() && !flags.no_dedup {
            println!("baseline: crawling the same web with --no-dedup into {} ...", out.join("baseline").display());
            let baseline = run_job(baseline_job, None).await?;
            print!("{}", report.savings_over(&baseline));
        }
        Ok(())
    })
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    nearcrawl_engine::runtime().context("cannot start the async runtime")
}

/// Runs a job with logs, a progress bar on a terminal, Ctrl-C and metrics.
async fn run_job(job: Job, metrics: Option<SocketAddr>) -> Result<Report> {
    let terminal = std::io::stderr().is_terminal();
    let default_level = if terminal { "warn" } else { "error" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("NEARCRAWL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();

    let progress = Arc::new(Progress::default());
    if let Some(addr) = metrics {
        crate::metrics::serve(addr, Arc::clone(&progress))
            .await
            .with_context(|| format!("cannot serve metrics on {addr}"))?;
    }
    let bar = spawn_progress_bar(Arc::clone(&progress), terminal);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
        eprintln!(
            "\nCtrl-C: finishing requests in flight, then writing the report (Ctrl-C again to abort)"
        );
        tokio::spawn(async {
            let _ = tokio::signal::ctrl_c().await;
            std::process::exit(130);
        });
    };
    let out = job.out_dir.clone();
    let result = crawl(job, shutdown, Arc::clone(&progress)).await;
    bar.abort();
    result.with_context(|| format!("crawl into {} stopped", out.display()))
}

/// On a terminal, a progress line redrawn five times a second; otherwise (a log file, a
/// pipe) the same figures as a plain line every `NEARCRAWL_PROGRESS_SECS` seconds (10).
fn spawn_progress_bar(progress: Arc<Progress>, terminal: bool) -> tokio::task::JoinHandle<()> {
    if !terminal {
        let every = std::env::var("NEARCRAWL_PROGRESS_SECS")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| *s > 0.0)
            .unwrap_or(10.0);
        return tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs_f64(every)).await;
                eprintln!("progress: {}", progress_message(&progress));
            }
        });
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    tokio::spawn(async move {
        loop {
            bar.set_message(progress_message(&progress));
            bar.tick();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}

/// Pages, pages/s, queue, in flight, duplicates, outlinks dropped, bytes received and saved.
fn progress_message(progress: &Progress) -> String {
    let pages = Progress::get(&progress.pages);
    let secs = progress.elapsed_secs().max(0.001);
    format!(
        "{pages} pages ({:.1}/s), {} queued, {} in flight, {} duplicates, {} outlinks dropped, {:.1} MB received, ~{:.1} MB saved",
        pages as f64 / secs,
        Progress::get(&progress.queued),
        Progress::get(&progress.in_flight),
        Progress::get(&progress.duplicates),
        Progress::get(&progress.dropped_outlinks),
        Progress::get(&progress.bytes) as f64 / 1e6,
        progress.bytes_saved_estimate() as f64 / 1e6,
    )
}
