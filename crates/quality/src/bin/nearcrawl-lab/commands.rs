//! The lab's commands: `quality` (detection quality on the labelled and real webs),
//! `dedup-quality` (corpus dedup) and `focus-quality` (focused crawls).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use nearcrawl_engine::JobFile;
use nearcrawl_quality::{
    FocusedSize, MinHashBaseline, RealSize, RealWeb, RunConfig, ShopConfig, Source, TOPICS, Topic,
    TopicFrom, WebConfig, Workers, local_crawl_config, run, run_corpus_dedup, run_focused,
    run_pairs, run_real, run_real_pairs, run_shop,
};
use nearcrawl_redis_job::server::LocalRedis;

/// Pages per site of a real web's small (CI) variant.
pub const SMALL_REAL_PAGES: usize = 150;

/// `nearcrawl-lab quality`.
#[derive(Args, Debug)]
pub struct QualityArgs {
    /// "small" (the CI variant) or "large" (a real web: every page).
    #[arg(long, default_value = "small")]
    pub size: String,
    /// A real web instead of the generated one: llvm-14-15, handbook-tuning or
    /// mirror-apache (used for tuning), llvm-15-16, clang-14-16, handbook-held-out,
    /// reference-languages or mirror-postgresql (held out). Debian's
    /// documentation packages, installed by scripts/quality-deps.sh. Or "shop": a generated
    /// shop whose listings take sort, filter, page and session-id parameters (its text
    /// from --corpus, its size from --size).
    #[arg(long)]
    pub web: Option<String>,
    /// Seed of the web's generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// English text: "python" (python3.11-doc, used for tuning) or "git" (git-doc, held out).
    #[arg(long, default_value = "python")]
    pub corpus: String,
    /// Where the two crawls go (default: a new directory under the system temp directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The job configuration (TOML, see config/default.toml) for both crawls.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// One of the link policy's fixed values set otherwise for this measurement (KEY=VALUE,
    /// repeatable; KEY a former `[dedup]` setting: hub_min_links, hub_min_yield,
    /// mirror_samples, mirror_sample_share, probe_links, probe_tolerance, probe_samples,
    /// predict_min_support, predict_min_trust). A job file sets none of them.
    #[arg(long, value_name = "KEY=VALUE")]
    pub tune: Vec<String>,
    /// Instead of crawling, measure `compare` on labelled pairs drawn from the web:
    /// precision/recall as k and the LCS thresholds vary (OUT/pairs.json, OUT/pr-curve.svg).
    #[arg(long)]
    pub pairs: bool,
    /// Run the dedup crawl as this many workers sharing one job through Redis (the
    /// baseline stays one worker), to compare with one worker.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// The Redis of --workers (default: a redis-server started on loopback for the run).
    /// Given with --workers 1, the dedup crawl is one worker of a shared job.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// Requests in flight at once in the dedup crawl (each worker's). The default, 1, makes
    /// the crawl order and so every figure the same on every run; more measures a crawl whose
    /// sites are fetched at the same time, in an order that varies from run to run. The
    /// baseline always makes one request at a time, so the oracle is the same on every run.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// A real web with about half of every site's pages served as a script's shell (a
    /// "Loading..." page whose script writes its body): its crawls render as --config's
    /// `[render]` says.
    #[arg(long)]
    pub scripted: bool,
}

pub fn quality(args: &QualityArgs) -> Result<()> {
    let (size, real, seed, corpus) = (
        args.size.as_str(),
        args.web.as_deref(),
        args.seed,
        args.corpus.as_str(),
    );
    let (out, config, pairs) = (args.out.as_deref(), args.config.as_deref(), args.pairs);
    let (workers, redis) = (args.workers, args.redis.as_deref());
    // Several workers share the dedup crawl through Redis: the one given, or one of our own.
    let mut local_redis = None;
    let workers = match (workers, redis) {
        (0 | 1, None) => None,
        (count, Some(url)) => Some(Workers {
            redis: url.to_string(),
            count,
        }),
        (count, None) => {
            let server = local_redis.insert(LocalRedis::start(false)?);
            Some(Workers {
                redis: server.url(),
                count,
            })
        }
    };
    let web = match size {
        "small" => WebConfig::small(seed),
        "large" => WebConfig::large(seed),
        other => bail!("--size {other:?}: expected \"small\" or \"large\""),
    };
    let english = match corpus {
        "python" => Source::PythonDocs,
        "git" => Source::GitDocs,
        other => bail!("--corpus {other:?}: expected \"python\" or \"git\""),
    };
    let (file, dir) = JobFile::load(config)?;
    let mut crawl = local_crawl_config();
    if config.is_some() {
        // A given configuration decides everything but what the labelled web needs.
        let local = crawl;
        crawl = file.crawl();
        crawl.politeness.per_host_delay_ms = local.politeness.per_host_delay_ms;
        crawl.limits.concurrency = local.limits.concurrency;
        crawl.output.warc = local.output.warc;
        crawl.scope.max_depth = crawl.scope.max_depth.or(local.scope.max_depth);
    }
    crawl.limits.concurrency = args.concurrency.max(1);
    for tune in &args.tune {
        let Some((key, value)) = tune.split_once('=') else {
            bail!("--tune {tune:?}: expected KEY=VALUE");
        };
        (crawl.dedup.tuning)
            .set(key.trim(), value.trim())
            .map_err(|e| anyhow::anyhow!("--tune {e}"))?;
    }
    let run_config = RunConfig {
        web,
        english,
        crawl,
        analyzer: file.analyzer(dir.as_deref())?,
        workers,
        scripted: args.scripted,
    };
    let (out, runtime) = prepare(out, "quality")?;
    if real == Some("shop") {
        if pairs {
            bail!("--pairs measures the generated web or a real web, not the shop");
        }
        let shop = match size {
            "small" => ShopConfig::small(seed),
            _ => ShopConfig::large(seed),
        };
        let measures = runtime.block_on(run_shop(shop, &run_config, &out))?;
        return report_measures(&measures, &out);
    }
    let real = match real {
        Some(name) => Some(real_web(name, size)?),
        None => None,
    };
    if pairs {
        let report = match real {
            Some((web, size)) => runtime.block_on(run_real_pairs(web, size, &run_config, &out))?,
            None => runtime.block_on(run_pairs(&run_config, &out))?,
        };
        print!("{}", report.summary());
        println!(
            "pairs: {}  plot: {}",
            out.join("pairs.json").display(),
            out.join("pr-curve.svg").display()
        );
        return Ok(());
    }
    let measures = match real {
        Some((web, size)) => runtime.block_on(run_real(web, size, &run_config, &out))?,
        None => runtime.block_on(run(&run_config, &out))?,
    };
    report_measures(&measures, &out)
}

/// Prints a run's measures and writes them to `out/quality.json`.
fn report_measures(measures: &nearcrawl_quality::Measures, out: &Path) -> Result<()> {
    print!("{}", measures.summary());
    let path = out.join("quality.json");
    std::fs::write(&path, serde_json::to_string_pretty(measures)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("measures: {}", path.display());
    Ok(())
}

/// A real web by name, at `size` ("small": the CI variant).
fn real_web(name: &str, size: &str) -> Result<(RealWeb, RealSize)> {
    let Some(web) = RealWeb::parse(name) else {
        let names: Vec<&str> = RealWeb::ALL.iter().map(|w| w.name()).collect();
        bail!("--web {name:?}: expected one of {}", names.join(", "));
    };
    let size = match size {
        "small" => RealSize::Small(SMALL_REAL_PAGES),
        "large" => RealSize::Full,
        other => bail!("--size {other:?}: expected \"small\" or \"large\""),
    };
    Ok((web, size))
}

/// What `nearcrawl-lab dedup-quality` is given.
pub struct DedupQualityArgs<'a> {
    pub web: &'a str,
    pub size: &'a str,
    pub minhash_python: Option<&'a Path>,
    pub minhash_script: &'a Path,
    pub thresholds: &'a str,
    pub extract: &'a str,
    pub template_lookahead: usize,
    pub out: Option<&'a Path>,
    pub config: Option<&'a Path>,
}

/// `nearcrawl-lab dedup-quality`: `nearcrawl dedup` (and datasketch's MinHashLSH) over a real
/// web's WARC files, pairs scored against its truth.
pub fn dedup_quality(args: DedupQualityArgs<'_>) -> Result<()> {
    let (web, size) = real_web(args.web, args.size)?;
    let (file, dir) = JobFile::load(args.config)?;
    let mut crawl = local_crawl_config();
    crawl.dedup = file.dedup.stage();
    let run_config = RunConfig {
        crawl,
        analyzer: file.analyzer(dir.as_deref())?,
        ..RunConfig::default()
    };
    let baseline = match args.minhash_python {
        Some(python) => Some(MinHashBaseline {
            python: python.to_path_buf(),
            script: args.minhash_script.to_path_buf(),
            thresholds: args
                .thresholds
                .split(',')
                .map(|t| {
                    t.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|t| (0.0..=1.0).contains(t))
                        .with_context(|| format!("--thresholds: {t:?} is not a number in 0..1"))
                })
                .collect::<Result<_>>()?,
            extract: args
                .extract
                .split(',')
                .map(|e| e.trim().to_owned())
                .collect(),
        }),
        None => None,
    };
    let (out, runtime) = prepare(args.out, "dedup-quality")?;
    let report = runtime.block_on(run_corpus_dedup(
        web,
        size,
        &run_config,
        &out,
        args.template_lookahead,
        baseline.as_ref(),
    ))?;
    println!(
        "{}: {} pages, {} WARC bytes",
        report.web, report.pages, report.warc_bytes
    );
    for run in &report.runs {
        let s = &run.score;
        println!(
            "{}: P {:.3} R {:.3} F1 {:.3} ({} pairs: {} correct, {} wrong; {} of {} true pairs); {:.0} pages/s ({:.2} s)",
            run.tool,
            s.precision,
            s.recall,
            s.f1,
            s.pairs,
            s.correct,
            s.wrong,
            s.recalled,
            s.positives,
            run.pages_per_second,
            run.seconds
        );
    }
    println!("measures: {}", out.join("dedup-quality.json").display());
    Ok(())
}

/// `nearcrawl-lab focus-quality`: harvest rate and recall of focused crawls against breadth-first.
pub fn focus_quality(
    size: &str,
    topics: &str,
    from: &str,
    out: Option<&Path>,
    config: Option<&Path>,
) -> Result<()> {
    let size = match size {
        "small" => FocusedSize::Small,
        "large" => FocusedSize::Full,
        other => bail!("--size {other:?}: expected \"small\" or \"large\""),
    };
    let topics: Vec<Topic> = match topics {
        "all" => TOPICS.to_vec(),
        "tuning" => TOPICS.into_iter().filter(|t| t.tuning).collect(),
        "held-out" => TOPICS.into_iter().filter(|t| !t.tuning).collect(),
        names => names
            .split(',')
            .map(|name| {
                Topic::parse(name.trim()).with_context(|| {
                    let known: Vec<&str> = TOPICS.iter().map(|t| t.name).collect();
                    format!("--topics: {name:?} is not one of {}", known.join(", "))
                })
            })
            .collect::<Result<_>>()?,
    };
    let froms: Vec<TopicFrom> = from
        .split(',')
        .map(|name| {
            TopicFrom::ALL
                .into_iter()
                .find(|f| f.name() == name.trim())
                .with_context(|| format!("--from: {name:?} is not terms, examples or description"))
        })
        .collect::<Result<_>>()?;
    let (file, dir) = JobFile::load(config)?;
    let mut crawl = local_crawl_config();
    crawl.focus = file.crawl().focus;
    let run_config = RunConfig {
        crawl,
        analyzer: file.analyzer(dir.as_deref())?,
        ..RunConfig::default()
    };
    let (out, runtime) = prepare(out, "focus")?;
    let measures = runtime.block_on(run_focused(size, &topics, &froms, &run_config, &out))?;
    for measure in &measures {
        println!("{}", measure.line());
    }
    println!(
        "measures: {}  curves: {}",
        out.join("focused.json").display(),
        out.join("harvest-*.svg").display()
    );
    Ok(())
}

/// The output directory (`--out`, else a new one under the system temp directory named for
/// `what`), created, and the runtime the measurement runs on.
fn prepare(
    out: Option<&Path>,
    what: &str,
) -> Result<(std::path::PathBuf, tokio::runtime::Runtime)> {
    let out = match out {
        Some(dir) => dir.to_path_buf(),
        None => std::env::temp_dir().join(format!("nearcrawl-{what}-{}", std::process::id())),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let runtime = nearcrawl_engine::runtime()?;
    Ok((out, runtime))
}
