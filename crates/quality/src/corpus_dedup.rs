//! Corpus dedup measured: a real web crawled once with `--no-dedup` into WARC files, then
//! `nearcrawl dedup` over those files, and optionally datasketch's MinHashLSH
//! (`scripts/minhash-dedup.py`) over the same files; the clusters each finds scored as pairs
//! against the web's truth, with pages per second.
//!
//! A pair of pages in one cluster is correct when the truth puts both in one group (or their
//! main texts' sequence ratio is at least [`NEAR_RATIO`](crate::NEAR_RATIO)), wrong when the
//! ratio is at most [`DISTINCT_RATIO`](crate::DISTINCT_RATIO), and not scored in between or
//! when a page has too few words to judge. Recall is over the pairs the truth groups: pages of
//! one group, both scored, both in the corpus.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::real::{DISTINCT_RATIO, NEAR_RATIO, RealSize, RealTruth, RealWeb, build_real};
use crate::run::{RunConfig, RunError, crawl_into};
use crate::truth::Kind;

/// How a set of clusters scores as pairs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PairScore {
    /// Pairs in the clusters.
    pub pairs: u64,
    /// Of them, truly near.
    pub correct: u64,
    /// Of them, truly distinct.
    pub wrong: u64,
    /// The truth's near pairs (both pages scored, in the corpus).
    pub positives: u64,
    /// Of them, in one cluster.
    pub recalled: u64,
    /// correct / (correct + wrong).
    pub precision: f64,
    /// recalled / positives.
    pub recall: f64,
    /// Their harmonic mean.
    pub f1: f64,
}

/// One tool's run over the corpus.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolRun {
    /// The tool and its settings.
    pub tool: String,
    /// Pages it judged.
    pub pages: u64,
    /// Seconds it took, reading the WARC files included.
    pub seconds: f64,
    /// Pages per second.
    pub pages_per_second: f64,
    /// Seconds of the near-duplicate step alone, when the tool tells it apart (MinHash and
    /// LSH, without reading and extraction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_seconds: Option<f64>,
    /// The pairs.
    pub score: PairScore,
}

/// What `nearcrawl-lab dedup-quality` measures on one web.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorpusDedupReport {
    /// The web.
    pub web: String,
    /// Pages in the WARC files (HTML responses).
    pub pages: u64,
    /// Bytes of the WARC files.
    pub warc_bytes: u64,
    /// Each tool.
    pub runs: Vec<ToolRun>,
}

/// The MinHashLSH baseline: a Python with datasketch (scripts/bench-tools.sh) and the script.
#[derive(Clone, Debug)]
pub struct MinHashBaseline {
    /// The venv's python.
    pub python: PathBuf,
    /// scripts/minhash-dedup.py.
    pub script: PathBuf,
    /// LSH thresholds to run.
    pub thresholds: Vec<f64>,
    /// How the script reads a page's text: "trafilatura" or "text".
    pub extract: Vec<String>,
}

/// Serves `web`, crawls it with `--no-dedup` into `out/baseline/warc/`, runs `nearcrawl dedup`
/// (`out/nearcrawl/`) and the baseline (`out/minhash-*.jsonl`) over the WARC files, and
/// scores their clusters; writes `out/truth.jsonl` and `out/dedup-quality.json`.
pub async fn run_corpus_dedup(
    web: RealWeb,
    size: RealSize,
    config: &RunConfig,
    out: &Path,
    template_lookahead: usize,
    baseline: Option<&MinHashBaseline>,
) -> Result<CorpusDedupReport, RunError> {
    let other = |e: String| RunError::Other(e);
    let served = build_real(web, size, 60)
        .await
        .map_err(|e| other(format!("{}: {e}", web.name())))?;
    let mut crawl_config = config.crawl.clone();
    crawl_config.dedup.enabled = false;
    crawl_config.output.warc = true;
    let seeds = nearcrawl_frontier::parse_seeds(&served.seeds, Path::new("real-web seeds"))
        .map_err(|e| other(e.to_string()))?;
    crawl_into(&seeds, out.join("baseline"), crawl_config, config).await?;
    drop(served.sites);
    let truth = served.truth;
    let truth_path = out.join("truth.jsonl");
    truth
        .write(&truth_path)
        .map_err(|e| other(format!("{}: {e}", truth_path.display())))?;
    let warc_dir = out.join("baseline/warc");
    let mut warcs: Vec<PathBuf> = std::fs::read_dir(&warc_dir)
        .map_err(|e| other(format!("{}: {e}", warc_dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    warcs.sort();
    let warc_bytes = warcs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();

    let mut job = nearcrawl_corpus::CorpusConfig::new(warcs.clone(), out.join("nearcrawl"));
    job.analyzer = config.analyzer.clone();
    job.stage = config.crawl.dedup.clone();
    job.restart = true;
    job.template_lookahead = template_lookahead;
    let clock = Instant::now();
    let summary = nearcrawl_corpus::run(&job)
        .map_err(|e| other(format!("nearcrawl dedup: {e}")))?
        .ok_or_else(|| other("nearcrawl dedup stopped early".into()))?;
    let seconds = clock.elapsed().as_secs_f64();
    let clusters = read_nearcrawl_clusters(&out.join("nearcrawl/clusters.jsonl"))?;
    let corpus: HashSet<String> = read_urls(&out.join("nearcrawl/records.jsonl"))?;
    let mut runs = vec![ToolRun {
        tool: "nearcrawl dedup".into(),
        pages: summary.counts.pages,
        seconds,
        pages_per_second: summary.counts.pages as f64 / seconds.max(1e-9),
        dedup_seconds: None,
        score: score_clusters(&clusters, &truth, &corpus),
    }];
    if let Some(baseline) = baseline {
        for extract in &baseline.extract {
            for &threshold in &baseline.thresholds {
                let path = out.join(format!("minhash-{extract}-{threshold}.jsonl"));
                let pairs_path = out.join(format!("minhash-{extract}-{threshold}-pairs.jsonl"));
                let output = Command::new(&baseline.python)
                    .arg(&baseline.script)
                    .args(&warcs)
                    .arg("--out")
                    .arg(&path)
                    .arg("--pairs")
                    .arg(&pairs_path)
                    .args(["--threshold", &threshold.to_string(), "--extract", extract])
                    .output()
                    .map_err(|e| other(format!("{}: {e}", baseline.python.display())))?;
                if !output.status.success() {
                    return Err(other(format!(
                        "{}: {}",
                        baseline.script.display(),
                        String::from_utf8_lossy(&output.stderr)
                    )));
                }
                let stats: serde_json::Value = serde_json::from_slice(&output.stdout)
                    .map_err(|e| other(format!("{}: {e}", baseline.script.display())))?;
                let pages = stats["pages"].as_u64().unwrap_or_default();
                let seconds = stats["seconds"].as_f64().unwrap_or_default();
                // Scored both ways: the clusters union-find makes of LSH's pairs (what a
                // corpus pipeline keeps one page of), and the pairs themselves.
                for (what, file) in [("clusters", &path), ("pairs", &pairs_path)] {
                    let clusters = read_url_lists(file)?;
                    runs.push(ToolRun {
                        tool: format!(
                            "datasketch MinHashLSH {what} (threshold {threshold}, 128 permutations, word 5-grams, {extract})"
                        ),
                        pages,
                        seconds,
                        pages_per_second: pages as f64 / seconds.max(1e-9),
                        dedup_seconds: stats["seconds_minhash_lsh"].as_f64(),
                        score: score_clusters(&clusters, &truth, &corpus),
                    });
                }
            }
        }
    }
    let report = CorpusDedupReport {
        web: web.name().into(),
        pages: summary.counts.pages,
        warc_bytes,
        runs,
    };
    let path = out.join("dedup-quality.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
    )
    .map_err(|e| other(format!("{}: {e}", path.display())))?;
    Ok(report)
}

fn read_lines(path: &Path) -> Result<Vec<serde_json::Value>, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Other(format!("{}: {e}", path.display())))?;
    text.lines()
        .map(|l| {
            serde_json::from_str(l).map_err(|e| RunError::Other(format!("{}: {e}", path.display())))
        })
        .collect()
}

/// `nearcrawl dedup`'s clusters as URL lists.
fn read_nearcrawl_clusters(path: &Path) -> Result<Vec<Vec<String>>, RunError> {
    Ok(read_lines(path)?
        .iter()
        .map(|c| {
            std::iter::once(&c["original"])
                .chain(c["members"].as_array().into_iter().flatten())
                .filter_map(|m| m["url"].as_str().map(str::to_owned))
                .collect()
        })
        .collect())
}

/// The URLs of `records.jsonl`.
fn read_urls(path: &Path) -> Result<HashSet<String>, RunError> {
    Ok(read_lines(path)?
        .iter()
        .filter_map(|r| r["url"].as_str().map(str::to_owned))
        .collect())
}

/// Clusters written as one JSON list of URLs per line.
fn read_url_lists(path: &Path) -> Result<Vec<Vec<String>>, RunError> {
    Ok(read_lines(path)?
        .iter()
        .map(|c| {
            c.as_array()
                .into_iter()
                .flatten()
                .filter_map(|u| u.as_str().map(str::to_owned))
                .collect()
        })
        .collect())
}

/// Scores clusters (lists of URLs) as pairs against the truth, over the pages of `corpus`.
pub fn score_clusters(
    clusters: &[Vec<String>],
    truth: &RealTruth,
    corpus: &HashSet<String>,
) -> PairScore {
    let pages: HashMap<String, crate::truth::PageTruth> = truth.pages().into_iter().collect();
    let mut groups: HashMap<u64, u64> = HashMap::new();
    for (url, t) in &pages {
        if t.scored && corpus.contains(url) {
            *groups.entry(t.group).or_default() += 1;
        }
    }
    let positives: u64 = groups.values().map(|&n| n * n.saturating_sub(1) / 2).sum();
    let mut score = PairScore {
        positives,
        ..PairScore::default()
    };
    for cluster in clusters {
        for (i, a) in cluster.iter().enumerate() {
            for b in &cluster[..i] {
                score.pairs += 1;
                let (ta, tb) = (pages.get(a), pages.get(b));
                let same_group = matches!((ta, tb), (Some(x), Some(y))
                    if x.scored && y.scored && x.group == y.group);
                if same_group {
                    score.correct += 1;
                    score.recalled += 1;
                    continue;
                }
                let judgeable = matches!((ta, tb), (Some(x), Some(y))
                    if x.kind != Kind::Empty && y.kind != Kind::Empty);
                if !judgeable {
                    continue;
                }
                match truth.pair_ratio(a, b) {
                    Some(r) if r >= NEAR_RATIO => score.correct += 1,
                    Some(r) if r <= DISTINCT_RATIO => score.wrong += 1,
                    _ => {}
                }
            }
        }
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    score.precision = ratio(score.correct, score.correct + score.wrong);
    score.recall = ratio(score.recalled, score.positives);
    score.f1 = if score.precision + score.recall > 0.0 {
        2.0 * score.precision * score.recall / (score.precision + score.recall)
    } else {
        0.0
    };
    score
}
