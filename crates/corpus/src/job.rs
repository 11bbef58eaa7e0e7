//! One corpus dedup run: inputs read in order, in batches; each batch's pages extracted and
//! analysed on every core (rayon), their blocks shown to the host template model in corpus
//! order in between; then judged in corpus order by the crawl's [`DedupStage`] (exact key,
//! permuted-table Hamming index, sentence-fingerprint candidates, LCS verification) while the
//! next batch is being analysed. Checkpoints every few seconds make the run resumable.
//!
//! Files under `--out`: `records.jsonl` (one line per page, in corpus order),
//! `bad-records.jsonl`, then at the end `clusters.jsonl`, `keep.txt`, `summary.json` and
//! `report.html`; the run's state in `work/` (kept pages, template observations,
//! `progress.json`).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nearcrawl_dedup::{AnalyzerConfig, DedupStageConfig};
use nearcrawl_records::Record;
use serde::{Deserialize, Serialize};

use crate::input::{Cursor, Format, JsonlFields, sniff};

/// What a run is given.
#[derive(Clone, Debug)]
pub struct CorpusConfig {
    /// The corpus: WARC and JSON lines files, read in this order.
    pub inputs: Vec<PathBuf>,
    /// Where the outputs and the run's state go.
    pub out: PathBuf,
    /// Fields of JSON lines.
    pub fields: JsonlFields,
    /// Page analysis (the crawl's `[dedup]` settings).
    pub analyzer: AnalyzerConfig,
    /// The dedup stage's settings (outlinks aside: a corpus has none to follow).
    pub stage: DedupStageConfig,
    /// Documents per batch (no verdict depends on it).
    pub batch: usize,
    /// Items the host template model sees after a page before the page's template is decided
    /// ([`TEMPLATE_LOOKAHEAD`]; 0: as in a crawl, each page's as it comes).
    pub template_lookahead: usize,
    /// How often the run's state is made durable.
    pub checkpoint_every: Duration,
    /// Stop (resumably) once this many documents have been judged in this run, at the end of
    /// a batch.
    pub max_documents: Option<u64>,
    /// Start over: earlier outputs in `out` are moved into `out/previous-N/`.
    pub restart: bool,
}

impl CorpusConfig {
    /// The default settings for `inputs` into `out`.
    pub fn new(inputs: Vec<PathBuf>, out: PathBuf) -> CorpusConfig {
        CorpusConfig {
            inputs,
            out,
            fields: JsonlFields::default(),
            analyzer: AnalyzerConfig::default(),
            stage: DedupStageConfig::default(),
            batch: DEFAULT_BATCH,
            template_lookahead: TEMPLATE_LOOKAHEAD,
            checkpoint_every: Duration::from_secs(5),
            max_documents: None,
            restart: false,
        }
    }
}

/// Why a run stopped.
#[derive(Debug)]
pub enum CorpusError {
    /// An input cannot be read at all (missing, unknown format).
    Input(String),
    /// A file of the run cannot be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What happened.
        source: io::Error,
    },
    /// The output directory holds another run.
    State(String),
}

impl std::fmt::Display for CorpusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CorpusError::Input(message) | CorpusError::State(message) => f.write_str(message),
            CorpusError::Io { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for CorpusError {}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> CorpusError + '_ {
    move |source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Counts over the whole run (all resumptions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Pages judged (documents and revisits).
    pub pages: u64,
    /// Judged unique (kept).
    pub unique: u64,
    /// Exact duplicates (revisits included).
    pub exact: u64,
    /// Near-duplicates.
    pub near: u64,
    /// WARC revisit records (counted in `exact`).
    pub revisits: u64,
    /// Records that are not pages (requests, metadata, images, error statuses).
    pub skipped: u64,
    /// Records or lines that could not be read (`bad-records.jsonl`).
    pub bad: u64,
    /// Bytes of the pages judged.
    pub bytes: u64,
    /// Bytes of the duplicates.
    pub duplicate_bytes: u64,
    /// Pages judged by exact key only: too little text of their own.
    pub little_text: u64,
    /// Nanoseconds per stage of the analysis and judgement, all pages.
    pub stage_nanos: BTreeMap<String, u64>,
}

/// What a finished run found (`summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The inputs.
    pub inputs: Vec<String>,
    /// The counts.
    #[serde(flatten)]
    pub counts: Counts,
    /// Clusters of two pages or more.
    pub clusters: u64,
    /// Pages in the largest cluster.
    pub largest_cluster: u64,
    /// Seconds of work, all resumptions.
    pub seconds: f64,
    /// Pages judged per second of work.
    pub pages_per_second: f64,
    /// Threads that analysed pages.
    pub threads: usize,
}

/// Where a run is (`work/progress.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Progress {
    inputs: Vec<InputState>,
    /// The run's template lookahead (verdicts depend on it).
    template_lookahead: usize,
    /// The input being read, and where in it.
    input: usize,
    cursor: Cursor,
    /// The next page's sequence number.
    seq: u64,
    records_len: u64,
    bad_len: u64,
    kept_len: u64,
    templates_len: u64,
    counts: Counts,
    elapsed_ms: u64,
    complete: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct InputState {
    path: PathBuf,
    len: u64,
    format: Format,
}

/// One line of `records.jsonl`: the crawl's record (so the report reads it) and where the
/// page is in the corpus.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CorpusRecord {
    /// The decision, as a crawl records it (`url` is the document's URL, else its id).
    #[serde(flatten)]
    pub record: Record,
    /// The document's id (`keep.txt` lists these).
    pub id: String,
    /// The input file.
    pub file: String,
    /// Where in it.
    #[serde(flatten)]
    pub at: Cursor,
    /// The original's id (duplicates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_id: Option<String>,
}

/// Output files set aside by `--restart`.
const OUTPUTS: [&str; 7] = [
    "records.jsonl",
    "bad-records.jsonl",
    "clusters.jsonl",
    "keep.txt",
    "summary.json",
    "report.html",
    "work",
];

/// Runs (or resumes) corpus dedup. Returns the summary when the corpus was read to its end,
/// `None` when the run stopped at `max_documents` (run again to go on).
pub fn run(config: &CorpusConfig) -> Result<Option<Summary>, CorpusError> {
    let clock = Instant::now();
    let inputs = config
        .inputs
        .iter()
        .map(|path| {
            let format = sniff(path).map_err(CorpusError::Input)?;
            let len = std::fs::metadata(path).map_err(io_error(path))?.len();
            Ok(InputState {
                path: path.clone(),
                len,
                format,
            })
        })
        .collect::<Result<Vec<_>, CorpusError>>()?;
    if inputs.is_empty() {
        return Err(CorpusError::Input("no input files".into()));
    }
    std::fs::create_dir_all(&config.out).map_err(io_error(&config.out))?;
    if config.restart {
        nearcrawl_records::set_aside_named(&config.out, &OUTPUTS)
            .map_err(|e| CorpusError::State(e.to_string()))?;
    }
    let work = config.out.join("work");
    std::fs::create_dir_all(&work).map_err(io_error(&work))?;
    let progress_path = work.join("progress.json");
    let progress = match std::fs::read(&progress_path) {
        Ok(bytes) => {
            let progress: Progress = serde_json::from_slice(&bytes)
                .map_err(|e| CorpusError::State(format!("{}: {e}", progress_path.display())))?;
            if progress.inputs != inputs {
                return Err(CorpusError::State(format!(
                    "{} holds a run over other inputs (or inputs changed since): give the same \
                     inputs to resume it, or --restart to start over",
                    config.out.display()
                )));
            }
            if progress.template_lookahead != config.template_lookahead {
                return Err(CorpusError::State(format!(
                    "{} holds a run with --template-lookahead {}: give the same to resume it, \
                     or --restart to start over",
                    config.out.display(),
                    progress.template_lookahead
                )));
            }
            progress
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if config.out.join("records.jsonl").exists() {
                return Err(CorpusError::State(format!(
                    "{} holds records but no work/progress.json: use --restart or another --out",
                    config.out.display()
                )));
            }
            Progress {
                inputs: inputs.clone(),
                template_lookahead: config.template_lookahead,
                input: 0,
                cursor: Cursor::default(),
                seq: 0,
                records_len: 0,
                bad_len: 0,
                kept_len: 0,
                templates_len: 0,
                counts: Counts::default(),
                elapsed_ms: 0,
                complete: false,
            }
        }
        Err(e) => return Err(io_error(&progress_path)(e)),
    };
    let mut run = Run::open(config, progress, clock)?;
    if !run.progress.complete {
        let finished = run.judge_all()?;
        if !finished {
            return Ok(None);
        }
    }
    finish(config, &run.progress).map(Some)
}

mod analysis;
mod finish;
mod run;

pub use analysis::{DEFAULT_BATCH, TEMPLATE_LOOKAHEAD};
use finish::finish;
pub use finish::{Cluster, Member};
use run::Run;
