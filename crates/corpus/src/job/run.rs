//! A run in progress: its files at their last checkpoint, what lives in memory (the
//! template model, the index and sentence candidates of kept pages, revisit targets), each
//! batch judged in corpus order, and checkpoints.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use nearcrawl_dedup::{
    Analyzer, AnalyzerConfig, DedupStage, DuplicateOutlinks, PageAnalysis, Stage,
    stage_template_config,
};
use nearcrawl_extract::{LinkReading, TemplateModel};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_records::{Record, Verdict};
use url::Url;

use crate::candidates::BatchCandidates;
use crate::input::{Content, Cursor, Document, Revisit};
use crate::kept::KeptPages;

use super::analysis::{
    Analysis, Batch, EntryKind, Prepared, Reading, log_observation, replay_observations,
};
use super::finish::write_atomically;
use super::{CorpusConfig, CorpusError, CorpusRecord, Progress, io_error};

/// The state of a run in progress.
pub(super) struct Run<'a> {
    pub(super) config: &'a CorpusConfig,
    pub(super) progress: Progress,
    pub(super) clock: Instant,
    pub(super) analyzer: Arc<Analyzer>,
    pub(super) templates: TemplateModel,
    pub(super) stage: DedupStage,
    pub(super) kept: KeptPages,
    pub(super) records: Appender,
    pub(super) bad: Appender,
    pub(super) template_log: Appender,
    /// Names of kept pages, and where revisits' originals are.
    pub(super) targets: Targets,
}

/// What a later copy needs of an earlier page: its cluster and how to name the cluster's
/// original.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) cluster: u64,
    pub(super) id: String,
    pub(super) url: String,
}

/// Pages judged so far, as later pages need them: kept pages by sequence number (to name a
/// duplicate's original), and every page by payload digest and by URL (a WARC revisit names
/// its original by these).
#[derive(Default)]
pub(super) struct Targets {
    pub(super) kept: HashMap<u64, Target>,
    pub(super) by_digest: HashMap<String, Target>,
    pub(super) by_url: HashMap<String, Target>,
}

impl Targets {
    pub(super) fn remember(&mut self, record: &CorpusRecord) {
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
    pub(super) fn of_revisit(&self, revisit: &Revisit) -> Option<&Target> {
        revisit
            .payload_digest
            .as_ref()
            .and_then(|d| self.by_digest.get(d))
            .or_else(|| revisit.refers_to.as_ref().and_then(|u| self.by_url.get(u)))
    }
}

/// A file appended to, cut back to its checkpointed length when a run resumes.
pub(super) struct Appender {
    pub(super) path: PathBuf,
    pub(super) out: BufWriter<File>,
    pub(super) len: u64,
}

impl Appender {
    pub(super) fn open(path: PathBuf, len: u64) -> Result<Appender, CorpusError> {
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

    pub(super) fn write(&mut self, bytes: &[u8]) -> Result<(), CorpusError> {
        self.out.write_all(bytes).map_err(io_error(&self.path))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    pub(super) fn sync(&mut self) -> Result<u64, CorpusError> {
        self.out.flush().map_err(io_error(&self.path))?;
        self.out
            .get_ref()
            .sync_data()
            .map_err(io_error(&self.path))?;
        Ok(self.len)
    }
}

impl<'a> Run<'a> {
    /// Opens a run's files at its last checkpoint and rebuilds what lives in memory: the
    /// template model, the index and sentence candidates of kept pages, revisit targets.
    pub(super) fn open(
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
    pub(super) fn judge_all(&mut self) -> Result<bool, CorpusError> {
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
    pub(super) fn judge_batch(
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

    pub(super) fn judge_page(
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

    pub(super) fn judge_revisit(&mut self, input: usize, revisit: Revisit) -> CorpusRecord {
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
    pub(super) fn checkpoint(
        &mut self,
        end: Option<(usize, Cursor)>,
        last: bool,
    ) -> Result<(), CorpusError> {
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
