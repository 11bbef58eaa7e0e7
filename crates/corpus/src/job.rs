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

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_dedup::{
    Analyzer, AnalyzerConfig, DedupStage, DedupStageConfig, DuplicateOutlinks, Extracted,
    PageAnalysis, Stage, analyze_marked, block_keys, stage_template_config,
};
use nearcrawl_extract::{BlockKey, LinkReading, TemplateModel};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_records::{Record, Verdict};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::candidates::BatchCandidates;
use crate::input::{
    Content, Cursor, Document, Format, InputReader, Item, JsonlFields, Revisit, sniff,
};
use crate::kept::KeptPages;

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

/// The state of a run in progress.
struct Run<'a> {
    config: &'a CorpusConfig,
    progress: Progress,
    clock: Instant,
    analyzer: Arc<Analyzer>,
    templates: TemplateModel,
    stage: DedupStage,
    kept: KeptPages,
    records: Appender,
    bad: Appender,
    template_log: Appender,
    /// Names of kept pages, and where revisits' originals are.
    targets: Targets,
}

/// What a later copy needs of an earlier page: its cluster and how to name the cluster's
/// original.
#[derive(Clone, Debug)]
struct Target {
    cluster: u64,
    id: String,
    url: String,
}

/// Pages judged so far, as later pages need them: kept pages by sequence number (to name a
/// duplicate's original), and every page by payload digest and by URL (a WARC revisit names
/// its original by these).
#[derive(Default)]
struct Targets {
    kept: HashMap<u64, Target>,
    by_digest: HashMap<String, Target>,
    by_url: HashMap<String, Target>,
}

impl Targets {
    fn remember(&mut self, record: &CorpusRecord) {
        let Some(cluster) = record.record.cluster else {
            return;
        };
        let target = Target {
            cluster,
            id: record
                .original_id
                .clone()
                .unwrap_or_else(|| record.id.clone()),
            url: record
                .record
                .duplicate_of
                .clone()
                .unwrap_or_else(|| record.record.url.clone()),
        };
        if record.record.verdict == Verdict::Unique {
            self.kept.insert(cluster, target.clone());
        }
        if let Some(digest) = &record.record.payload_digest {
            self.by_digest
                .entry(digest.clone())
                .or_insert_with(|| target.clone());
        }
        self.by_url
            .entry(record.record.url.clone())
            .or_insert(target);
    }

    /// The earlier page a revisit copies: by payload digest, else by the URL it refers to.
    fn of_revisit(&self, revisit: &Revisit) -> Option<&Target> {
        revisit
            .payload_digest
            .as_ref()
            .and_then(|d| self.by_digest.get(d))
            .or_else(|| revisit.refers_to.as_ref().and_then(|u| self.by_url.get(u)))
    }
}

/// A file appended to, cut back to its checkpointed length when a run resumes.
struct Appender {
    path: PathBuf,
    out: BufWriter<File>,
    len: u64,
}

impl Appender {
    fn open(path: PathBuf, len: u64) -> Result<Appender, CorpusError> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_error(&path))?;
        file.set_len(len).map_err(io_error(&path))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        io::Seek::seek(&mut out, io::SeekFrom::Start(len)).map_err(io_error(&path))?;
        Ok(Appender { path, out, len })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), CorpusError> {
        self.out.write_all(bytes).map_err(io_error(&self.path))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn sync(&mut self) -> Result<u64, CorpusError> {
        self.out.flush().map_err(io_error(&self.path))?;
        self.out
            .get_ref()
            .sync_data()
            .map_err(io_error(&self.path))?;
        Ok(self.len)
    }
}

/// A batch read and analysed, waiting to be judged.
struct Prepared {
    entries: Vec<Entry>,
    /// Records passed over as no pages after the last entry (the corpus's end).
    trailing_skipped: u64,
    /// The corpus ends with it.
    last: bool,
}

/// An item to judge, with what it takes to resume after it.
struct Entry {
    input: usize,
    /// Records passed over as no pages just before it.
    skipped_before: u64,
    /// Where reading goes on after it.
    after: (usize, Cursor),
    kind: EntryKind,
}

enum EntryKind {
    Page {
        doc: Box<Document>,
        host: String,
        /// Its blocks' keys, when it has blocks: the template log's observation.
        keys: Option<Vec<BlockKey>>,
        analysis: Box<PageAnalysis>,
    },
    Revisit(Box<Revisit>),
    Bad {
        at: Cursor,
        message: String,
    },
}

/// An item read, tagged with its input and what it takes to resume after it.
struct Read {
    input: usize,
    item: Item,
    skipped_before: u64,
    after: (usize, Cursor),
}

/// Items read together.
struct Batch {
    items: Vec<Read>,
    /// Records passed over as no pages after the last item (the corpus's end).
    trailing_skipped: u64,
    /// The corpus ends with them.
    last: bool,
}

/// A document extracted: its host, its blocks and their keys.
struct ExtractedPage {
    host: String,
    page: Extracted,
    keys: Vec<BlockKey>,
}

/// An item read and extracted, waiting for the template model to see the pages after it.
struct Waiting {
    read: Read,
    page: Option<ExtractedPage>,
}

/// Items the template model sees after a page before the page's template is decided, by
/// default: the blocks repeated over a site's pages are known as its template from the site's
/// first pages on, whatever the batch size.
pub const TEMPLATE_LOOKAHEAD: usize = 512;

/// Default [`CorpusConfig::batch`]: large enough that the pool's threads seldom wait for
/// each other at a batch's end (256 took 9 % less wall time than 64 over the five real webs,
/// for 40 MB more peak memory: docs/BENCHMARKS.md).
pub const DEFAULT_BATCH: usize = 256;

/// The inputs as one stream of items.
struct Reading<'a> {
    inputs: &'a [InputState],
    fields: &'a JsonlFields,
    input: usize,
    reader: Option<InputReader>,
    cursor: Cursor,
    /// Records passed over since the last item.
    skipped: u64,
}

impl Reading<'_> {
    /// Up to `n` items (pages, revisits, bad records; skipped records counted), tagged with
    /// their input.
    fn read(&mut self, n: usize) -> Result<Batch, CorpusError> {
        let mut items = Vec::with_capacity(n);
        while items.len() < n {
            let Some(input) = self.inputs.get(self.input) else {
                return Ok(Batch {
                    items,
                    trailing_skipped: std::mem::take(&mut self.skipped),
                    last: true,
                });
            };
            let reader = match &mut self.reader {
                Some(reader) => reader,
                None => self.reader.insert(
                    InputReader::open(&input.path, input.format, self.fields, self.cursor)
                        .map_err(io_error(&input.path))?,
                ),
            };
            match reader.next_item().map_err(io_error(&input.path))? {
                Some(Item::Skipped) => self.skipped += 1,
                Some(item) => items.push(Read {
                    input: self.input,
                    item,
                    skipped_before: std::mem::take(&mut self.skipped),
                    after: (self.input, reader.resume_point()),
                }),
                None => {
                    self.reader = None;
                    self.input += 1;
                    self.cursor = Cursor::default();
                }
            }
        }
        Ok(Batch {
            items,
            trailing_skipped: 0,
            last: false,
        })
    }
}

/// The URL a document without one is analysed under.
fn no_url() -> Url {
    Url::parse("http://corpus.invalid/").expect("a valid URL")
}

/// The analysing stage: extraction on every core, the template model shown the pages in
/// corpus order, each page's template decided once the model has seen the items after it
/// ([`CorpusConfig::template_lookahead`]), then the pages' own text analysed on every core.
struct Analysis<'a> {
    analyzer: &'a Analyzer,
    lookahead: usize,
    templates: TemplateModel,
    window: std::collections::VecDeque<Waiting>,
}

impl Analysis<'_> {
    /// Takes a batch in; hands `send` the items whose template is decided, analysed, in
    /// chunks of at most `chunk` (the judge starts on one while the next is analysed: the
    /// corpus's end decides a whole window at once). Stops, and says `false`, when `send` says
    /// the judge is gone.
    fn prepare(
        &mut self,
        batch: Batch,
        chunk: usize,
        mut send: impl FnMut(Prepared) -> bool,
    ) -> bool {
        let analyzer = self.analyzer;
        let fallback = no_url();
        let extracted: Vec<Waiting> = batch
            .items
            .into_par_iter()
            .map(|mut read| {
                let page = match &mut read.item {
                    Item::Document(doc) => {
                        let url = doc.url.as_ref().unwrap_or(&fallback);
                        let host = doc
                            .url
                            .as_ref()
                            .and_then(|u| u.host_str())
                            .unwrap_or_default()
                            .to_owned();
                        // The content is read once: the body is dropped here (items waiting
                        // hold their blocks, not their bodies too).
                        let extracted = match &mut doc.content {
                            Content::Body {
                                bytes,
                                content_type,
                            } => {
                                let page =
                                    analyzer.extract_body(bytes, content_type.as_deref(), url);
                                *bytes = Vec::new();
                                page
                            }
                            Content::Text(text) => Extracted::plain(std::mem::take(text)),
                        };
                        // Han text ahead: jieba's dictionary loads while the window fills.
                        nearcrawl_text::preload_jieba_for(&extracted.text);
                        let keys = block_keys(&extracted);
                        Some(ExtractedPage {
                            host,
                            page: extracted,
                            keys,
                        })
                    }
                    _ => None,
                };
                Waiting { read, page }
            })
            .collect();
        let mut ready = Vec::new();
        for waiting in extracted {
            if let Some(page) = &waiting.page
                && page.page.extraction.is_some()
            {
                self.templates.observe_keys(&page.host, &page.keys);
            }
            self.window.push_back(waiting);
            if self.window.len() > self.lookahead {
                ready.extend(self.decide(1));
            }
        }
        if batch.last {
            ready.extend(self.decide(self.window.len()));
        }
        let chunk = chunk.max(1);
        let chunks = ready.len().div_ceil(chunk).max(1);
        let mut ready = ready.into_iter();
        for n in 0..chunks {
            let last_chunk = n + 1 == chunks;
            let entries = analyze_entries(analyzer, ready.by_ref().take(chunk).collect());
            let prepared = Prepared {
                entries,
                trailing_skipped: if last_chunk {
                    batch.trailing_skipped
                } else {
                    0
                },
                last: last_chunk && batch.last,
            };
            if !send(prepared) {
                return false;
            }
        }
        true
    }

    /// The first `n` items waiting, each page's template marks decided by the model as it
    /// stands.
    fn decide(&mut self, n: usize) -> Vec<(Waiting, Vec<bool>)> {
        self.window
            .drain(..n)
            .map(|waiting| {
                let marks = match &waiting.page {
                    Some(page) => page
                        .keys
                        .iter()
                        .map(|&key| self.templates.is_template_key(&page.host, key))
                        .collect(),
                    None => Vec::new(),
                };
                (waiting, marks)
            })
            .collect()
    }
}

/// Items whose template is decided, analysed on every core, in order.
fn analyze_entries(analyzer: &Analyzer, ready: Vec<(Waiting, Vec<bool>)>) -> Vec<Entry> {
    ready
        .into_par_iter()
        .map(|(waiting, marks)| {
            let Read {
                input,
                item,
                skipped_before,
                after,
            } = waiting.read;
            let kind = match (item, waiting.page) {
                (Item::Document(doc), Some(page)) => {
                    let blocks = page.page.extraction.is_some();
                    let analysis = analyze_marked(analyzer, page.page, &marks);
                    EntryKind::Page {
                        doc,
                        host: page.host,
                        keys: blocks.then_some(page.keys),
                        analysis: Box::new(analysis),
                    }
                }
                (Item::Revisit(revisit), _) => EntryKind::Revisit(revisit),
                (Item::Bad { at, message }, _) => EntryKind::Bad { at, message },
                (Item::Document(doc), None) => EntryKind::Bad {
                    at: doc.at,
                    message: "not analysed".into(),
                },
                (Item::Skipped, _) => unreachable!("skipped items are not batched"),
            };
            Entry {
                input,
                skipped_before,
                after,
                kind,
            }
        })
        .collect()
}

/// One observation in the template log: host length, host, key count, keys.
fn log_observation(log: &mut Vec<u8>, host: &str, keys: &[BlockKey]) {
    let host = &host.as_bytes()[..host.len().min(u16::MAX as usize)];
    log.extend_from_slice(&(host.len() as u16).to_le_bytes());
    log.extend_from_slice(host);
    log.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for key in keys {
        log.extend_from_slice(&key.to_bits().to_le_bytes());
    }
}

/// Replays a template log into `model`.
fn replay_observations(
    path: &Path,
    len: u64,
    model: &mut TemplateModel,
) -> Result<(), CorpusError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound && len == 0 => return Ok(()),
        Err(e) => return Err(io_error(path)(e)),
    };
    let bad = |at: usize| CorpusError::State(format!("{}: offset {at}: damaged", path.display()));
    let len = usize::try_from(len).map_err(|_| bad(0))?;
    let mut data = bytes.get(..len).ok_or_else(|| bad(bytes.len()))?;
    let mut keys = Vec::new();
    while !data.is_empty() {
        let at = len - data.len();
        let take = |data: &mut &[u8], n: usize| -> Result<Vec<u8>, CorpusError> {
            let (head, rest) = data.split_at_checked(n).ok_or_else(|| bad(at))?;
            *data = rest;
            Ok(head.to_vec())
        };
        let host_len = u16::from_le_bytes(take(&mut data, 2)?.try_into().expect("2 bytes"));
        let host = String::from_utf8(take(&mut data, host_len as usize)?).map_err(|_| bad(at))?;
        let count = u32::from_le_bytes(take(&mut data, 4)?.try_into().expect("4 bytes"));
        let raw = take(&mut data, count as usize * 8)?;
        keys.clear();
        keys.extend(
            raw.chunks_exact(8)
                .map(|c| BlockKey::from_bits(u64::from_le_bytes(c.try_into().expect("8 bytes")))),
        );
        model.observe_keys(&host, &keys);
    }
    Ok(())
}

impl<'a> Run<'a> {
    /// Opens a run's files at its last checkpoint and rebuilds what lives in memory: the
    /// template model, the index and sentence candidates of kept pages, revisit targets.
    fn open(
        config: &'a CorpusConfig,
        progress: Progress,
        clock: Instant,
    ) -> Result<Run<'a>, CorpusError> {
        let work = config.out.join("work");
        // A corpus has no links to follow: they are resolved only for a page judged by
        // where its links lead (one with little text of its own).
        let analyzer = Arc::new(Analyzer::new(AnalyzerConfig {
            link_reading: LinkReading::Deferred,
            ..config.analyzer.clone()
        }));
        let mut templates = TemplateModel::new(stage_template_config());
        replay_observations(
            &work.join("templates.bin"),
            progress.templates_len,
            &mut templates,
        )?;
        let mut restored = Vec::new();
        let kept_path = work.join("kept.bin");
        let mut kept = KeptPages::open(&kept_path, progress.kept_len, |page| {
            restored.push((page.seq, page.simhash, page.site.clone(), page.text.clone()))
        })
        .map_err(io_error(&kept_path))?;
        let mut stage_config = config.stage.clone();
        stage_config.duplicate_outlinks = DuplicateOutlinks::Keep;
        let stage = DedupStage::new(
            Arc::clone(&analyzer),
            stage_config,
            restored.iter().map(|(seq, simhash, _, _)| (*simhash, *seq)),
            [],
            1 << 63,
        )
        .map_err(|e| CorpusError::State(format!("the Hamming index: {e}")))?;
        if config.analyzer.verify {
            for (seq, _, site, text) in &restored {
                kept.index_sentences(*seq, site, &stage.sentence_fingerprints(text));
            }
        }
        drop(restored);
        let records_path = config.out.join("records.jsonl");
        let mut targets = Targets::default();
        if progress.records_len > 0 {
            // Revisit targets from the records already written (up to the checkpoint).
            let file = File::open(&records_path).map_err(io_error(&records_path))?;
            let reader = io::BufReader::new(io::Read::take(file, progress.records_len));
            for line in io::BufRead::lines(reader) {
                let line = line.map_err(io_error(&records_path))?;
                let record: CorpusRecord = serde_json::from_str(&line)
                    .map_err(|e| CorpusError::State(format!("{}: {e}", records_path.display())))?;
                targets.remember(&record);
            }
        }
        Ok(Run {
            records: Appender::open(records_path, progress.records_len)?,
            bad: Appender::open(config.out.join("bad-records.jsonl"), progress.bad_len)?,
            template_log: Appender::open(work.join("templates.bin"), progress.templates_len)?,
            config,
            progress,
            clock,
            analyzer,
            templates,
            stage,
            kept,
            targets,
        })
    }

    /// Reads and judges the corpus from where the run stands; `true` when it reached the end.
    fn judge_all(&mut self) -> Result<bool, CorpusError> {
        let config = self.config;
        let inputs = self.progress.inputs.clone();
        let mut reading = Reading {
            inputs: &inputs,
            fields: &config.fields,
            input: self.progress.input,
            reader: None,
            cursor: self.progress.cursor,
            skipped: 0,
        };
        let size = config.batch.max(1);
        let analyzer = Arc::clone(&self.analyzer);
        let templates = std::mem::take(&mut self.templates);
        let start_seq = self.progress.seq;
        // Three stages at once, each on its own thread, joined by short queues: reading (and
        // decompressing), analysing on the pool, judging here in corpus order.
        std::thread::scope(|scope| {
            let (batches, to_analyse) =
                std::sync::mpsc::sync_channel::<Result<Batch, CorpusError>>(2);
            let (analysed, to_judge) =
                std::sync::mpsc::sync_channel::<Result<Prepared, CorpusError>>(1);
            scope.spawn(move || {
                loop {
                    let batch = reading.read(size);
                    let end = batch.as_ref().map_or(true, |b| b.last);
                    // The judge stopped early (an error, --max-documents): nothing to do.
                    if batches.send(batch).is_err() || end {
                        return;
                    }
                }
            });
            let mut analysis = Analysis {
                analyzer: &analyzer,
                lookahead: config.template_lookahead,
                templates,
                window: std::collections::VecDeque::new(),
            };
            scope.spawn(move || {
                for batch in to_analyse {
                    match batch {
                        Ok(batch) => {
                            let send = |prepared| analysed.send(Ok(prepared)).is_ok();
                            if !analysis.prepare(batch, size, send) {
                                return;
                            }
                        }
                        Err(e) => {
                            let _ = analysed.send(Err(e));
                            return;
                        }
                    }
                }
            });
            let mut last_checkpoint = Instant::now();
            loop {
                let current = to_judge.recv().unwrap_or_else(|_| {
                    Err(CorpusError::State(
                        "the reading or analysing thread stopped".into(),
                    ))
                })?;
                let stop = current.last
                    || config.max_documents.is_some_and(|max| {
                        self.progress.seq + current.entries.len() as u64 - start_seq >= max
                    });
                let (end, last) = self.judge_batch(current)?;
                if stop || last_checkpoint.elapsed() >= config.checkpoint_every {
                    self.checkpoint(end, last)?;
                    last_checkpoint = Instant::now();
                }
                if stop {
                    // Dropping the queue stops the other threads.
                    drop(to_judge);
                    return Ok(self.progress.complete);
                }
            }
        })
    }

    /// Judges a batch in order and writes its records; returns where reading goes on after
    /// its last item (none: an empty batch), and whether the corpus ends with it.
    fn judge_batch(
        &mut self,
        batch: Prepared,
    ) -> Result<(Option<(usize, Cursor)>, bool), CorpusError> {
        // The index's answers for the batch's pages, in one batch query.
        let clock = Instant::now();
        let simhashes: Vec<Fingerprint> = batch
            .entries
            .iter()
            .filter_map(|entry| match &entry.kind {
                EntryKind::Page { analysis, .. } => Some(analysis.simhash),
                _ => None,
            })
            .collect();
        let mut candidates = BatchCandidates::new(self.stage.index(), &simhashes);
        *self
            .progress
            .counts
            .stage_nanos
            .entry(Stage::Index.name().to_owned())
            .or_default() += clock.elapsed().as_nanos() as u64;
        let mut pages = 0;
        let mut line = Vec::new();
        let mut end = None;
        let mut observations = Vec::new();
        for entry in batch.entries {
            line.clear();
            let input = entry.input;
            self.progress.counts.skipped += entry.skipped_before;
            end = Some(entry.after);
            match entry.kind {
                EntryKind::Page {
                    doc,
                    host,
                    keys,
                    analysis,
                } => {
                    if let Some(keys) = &keys {
                        log_observation(&mut observations, &host, keys);
                    }
                    let record =
                        self.judge_page(input, *doc, &host, *analysis, pages, &mut candidates)?;
                    pages += 1;
                    serde_json::to_writer(&mut line, &record).expect("a record serialises");
                    line.push(b'\n');
                    self.records.write(&line)?;
                }
                EntryKind::Revisit(revisit) => {
                    let record = self.judge_revisit(input, *revisit);
                    serde_json::to_writer(&mut line, &record).expect("a record serialises");
                    line.push(b'\n');
                    self.records.write(&line)?;
                }
                EntryKind::Bad { at, message } => {
                    let file = self.progress.inputs[input].path.display().to_string();
                    eprintln!("warning: {file}: {at}: {message} (skipped)");
                    let bad = serde_json::json!({
                        "file": file,
                        "offset": at.offset,
                        "within": at.within,
                        "line": at.line,
                        "error": message,
                    });
                    serde_json::to_writer(&mut line, &bad).expect("JSON serialises");
                    line.push(b'\n');
                    self.bad.write(&line)?;
                    self.progress.counts.bad += 1;
                }
            }
        }
        self.progress.counts.skipped += batch.trailing_skipped;
        self.template_log.write(&observations)?;
        let kept_path = self.config.out.join("work/kept.bin");
        self.kept.write_out().map_err(io_error(&kept_path))?;
        Ok((end, batch.last))
    }

    fn judge_page(
        &mut self,
        input: usize,
        doc: Document,
        host: &str,
        analysis: PageAnalysis,
        page: usize,
        candidates: &mut BatchCandidates,
    ) -> Result<CorpusRecord, CorpusError> {
        let kept_path = || self.config.out.join("work/kept.bin");
        let seq = self.progress.seq;
        self.progress.seq += 1;
        let little_text = analysis.little_text;
        let text_cut_from = analysis.text_cut_from;
        let simhash = analysis.simhash;
        let has_tokens = !analysis.tokens.is_empty();
        let near = candidates.of(page, simhash);
        let judgement = self
            .stage
            .judge_with_candidates(analysis, near, &self.kept)
            .map_err(io_error(&kept_path()))?;
        if judgement.verdict == nearcrawl_dedup::Likeness::Unique {
            let admission = self.stage.admit(seq, host, &judgement);
            if let Some((simhash, _)) = admission.fingerprint {
                candidates.kept(simhash, seq);
            }
            self.kept
                .keep(&admission, host)
                .map_err(io_error(&kept_path()))?;
        }
        // Analysis times were measured on the analysing threads, judging times here.
        let times = judgement.analysis.times;
        let micros = times.iter().map(|(_, nanos)| nanos).sum::<u64>() / 1000;
        let counts = &mut self.progress.counts;
        for (stage, nanos) in times.iter().filter(|&(_, nanos)| nanos > 0) {
            *counts
                .stage_nanos
                .entry(stage.name().to_owned())
                .or_default() += nanos;
        }
        let url = doc
            .url
            .as_ref()
            .map_or_else(|| doc.id.clone(), Url::to_string);
        let mut record = Record::new(seq, url, 0, judgement.verdict.into());
        record.bytes = doc.bytes;
        if let Content::Body { content_type, .. } = &doc.content {
            record.content_type = content_type.clone();
            record.status = Some(200);
        }
        record.distance = judgement.distance;
        record.similarity = judgement.similarity;
        record.little_text = little_text.map(|n| n as u64);
        record.text_cut_from = text_cut_from.map(|n| n as u64);
        record.simhash = has_tokens.then(|| format!("{:016x}", simhash.bits()));
        record.fetched_at = doc.date.clone();
        record.payload_digest = doc.payload_digest.clone();
        record.dedup_us = Some(micros);
        let mut original_id = None;
        counts.pages += 1;
        counts.bytes += doc.bytes;
        if little_text.is_some() {
            counts.little_text += 1;
        }
        match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(original)) => {
                let target = self.targets.kept.get(&original).cloned();
                record.cluster = Some(original);
                record.duplicate_of = target.as_ref().map(|t| t.url.clone());
                original_id = target.map(|t| t.id);
            }
            Some(nearcrawl_dedup::Original::Shared(_)) | None => {
                if has_tokens {
                    record.cluster = Some(seq);
                }
            }
        }
        let counts = &mut self.progress.counts;
        match record.verdict {
            Verdict::Exact => counts.exact += 1,
            Verdict::Near => counts.near += 1,
            _ => counts.unique += 1,
        }
        if record.verdict != Verdict::Unique {
            counts.duplicate_bytes += doc.bytes;
        }
        let record = CorpusRecord {
            record,
            id: doc.id,
            file: self.progress.inputs[input].path.display().to_string(),
            at: doc.at,
            original_id,
        };
        self.targets.remember(&record);
        Ok(record)
    }

    fn judge_revisit(&mut self, input: usize, revisit: Revisit) -> CorpusRecord {
        let seq = self.progress.seq;
        self.progress.seq += 1;
        let target = self.targets.of_revisit(&revisit).cloned();
        let url = revisit
            .url
            .as_ref()
            .map_or_else(|| revisit.id.clone(), Url::to_string);
        let mut record = Record::new(seq, url, 0, Verdict::Exact);
        record.bytes = revisit.bytes;
        record.similarity = Some(1.0);
        record.payload_digest = revisit.payload_digest.clone();
        let counts = &mut self.progress.counts;
        counts.pages += 1;
        counts.exact += 1;
        counts.revisits += 1;
        counts.bytes += revisit.bytes;
        counts.duplicate_bytes += revisit.bytes;
        let original_id = match target {
            Some(target) => {
                record.cluster = Some(target.cluster);
                record.duplicate_of = Some(target.url);
                Some(target.id)
            }
            None => {
                record.duplicate_of = revisit.refers_to.clone();
                record.error = Some("revisit of a page not in the corpus".into());
                None
            }
        };
        CorpusRecord {
            record,
            id: revisit.id,
            file: self.progress.inputs[input].path.display().to_string(),
            at: revisit.at,
            original_id,
        }
    }

    /// Makes everything judged so far durable and records where reading goes on.
    fn checkpoint(&mut self, end: Option<(usize, Cursor)>, last: bool) -> Result<(), CorpusError> {
        let kept_path = self.config.out.join("work/kept.bin");
        self.progress.records_len = self.records.sync()?;
        self.progress.bad_len = self.bad.sync()?;
        self.progress.templates_len = self.template_log.sync()?;
        self.progress.kept_len = self.kept.sync().map_err(io_error(&kept_path))?;
        if let Some(end) = end {
            (self.progress.input, self.progress.cursor) = end;
        }
        self.progress.elapsed_ms += self.clock.elapsed().as_millis() as u64;
        self.clock = Instant::now();
        self.progress.complete = last;
        write_atomically(
            &self.config.out.join("work/progress.json"),
            &serde_json::to_vec_pretty(&self.progress).expect("progress serialises"),
        )
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, made durable.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CorpusError> {
    let tmp = path.with_extension("tmp");
    let mut file = File::create(&tmp).map_err(io_error(&tmp))?;
    file.write_all(bytes).map_err(io_error(&tmp))?;
    file.sync_all().map_err(io_error(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_error(path))?;
    if let Some(dir) = path.parent()
        && let Ok(dir) = File::open(dir)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A cluster in `clusters.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cluster {
    /// The original's sequence number (the cluster's id).
    pub cluster: u64,
    /// Pages in it, the original included.
    pub size: u64,
    /// The original: the first page of this content in the corpus.
    pub original: Member,
    /// The duplicates, in corpus order.
    pub members: Vec<Member>,
}

/// A page of a cluster.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Member {
    /// Its id.
    pub id: String,
    /// Its URL (else its id).
    pub url: String,
    /// `exact` or `near` (the original: `unique`).
    pub verdict: Verdict,
    /// Simhash distance to the original.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// LCS similarity to the original.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
}

/// Writes `clusters.jsonl` (largest first), `keep.txt`, `summary.json` and `report.html`
/// from the records.
fn finish(config: &CorpusConfig, progress: &Progress) -> Result<Summary, CorpusError> {
    let out = &config.out;
    let records_path = out.join("records.jsonl");
    let mut keep = Vec::new();
    let mut clusters: BTreeMap<u64, Cluster> = BTreeMap::new();
    let mut originals: HashMap<u64, Member> = HashMap::new();
    let file = File::open(&records_path).map_err(io_error(&records_path))?;
    for (n, line) in io::BufRead::lines(io::BufReader::new(file)).enumerate() {
        let line = line.map_err(io_error(&records_path))?;
        let record: CorpusRecord = serde_json::from_str(&line).map_err(|e| {
            CorpusError::State(format!("{}:{}: {e}", records_path.display(), n + 1))
        })?;
        let member = Member {
            id: record.id.clone(),
            url: record.record.url.clone(),
            verdict: record.record.verdict,
            distance: record.record.distance,
            similarity: record.record.similarity,
        };
        match (record.record.verdict, record.record.cluster) {
            (Verdict::Unique, cluster) => {
                keep.extend_from_slice(record.id.as_bytes());
                keep.push(b'\n');
                if let Some(cluster) = cluster {
                    originals.insert(cluster, member);
                }
            }
            (_, Some(cluster)) => {
                let entry = clusters.entry(cluster).or_insert_with(|| Cluster {
                    cluster,
                    size: 1,
                    original: originals.get(&cluster).cloned().unwrap_or(Member {
                        id: record.original_id.clone().unwrap_or_default(),
                        url: record.record.duplicate_of.clone().unwrap_or_default(),
                        verdict: Verdict::Unique,
                        distance: None,
                        similarity: None,
                    }),
                    members: Vec::new(),
                });
                entry.size += 1;
                entry.members.push(member);
            }
            // A revisit of a page not in the corpus: no cluster to join, nothing to keep.
            (_, None) => {}
        }
    }
    drop(originals);
    let mut ordered: Vec<Cluster> = clusters.into_values().collect();
    ordered.sort_by(|a, b| b.size.cmp(&a.size).then(a.cluster.cmp(&b.cluster)));
    let mut lines = Vec::new();
    for cluster in &ordered {
        serde_json::to_writer(&mut lines, cluster).expect("a cluster serialises");
        lines.push(b'\n');
    }
    write_atomically(&out.join("clusters.jsonl"), &lines)?;
    write_atomically(&out.join("keep.txt"), &keep)?;
    let seconds = progress.elapsed_ms as f64 / 1000.0;
    let summary = Summary {
        inputs: progress
            .inputs
            .iter()
            .map(|i| i.path.display().to_string())
            .collect(),
        counts: progress.counts.clone(),
        clusters: ordered.len() as u64,
        largest_cluster: ordered.first().map_or(0, |c| c.size),
        seconds,
        pages_per_second: if seconds > 0.0 {
            progress.counts.pages as f64 / seconds
        } else {
            0.0
        },
        threads: rayon::current_num_threads(),
    };
    write_atomically(
        &out.join("summary.json"),
        &serde_json::to_vec_pretty(&summary).expect("the summary serialises"),
    )?;
    nearcrawl_report::write(out).map_err(|e| CorpusError::State(format!("report.html: {e}")))?;
    Ok(summary)
}

#[cfg(test)]
mod tests;
