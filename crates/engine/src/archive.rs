//! The archive: where finished decisions go. One store commit per decision, then its lines
//! of `records.jsonl` (the store first, so a crash never leaves a record the store cannot
//! account for), the responses in the WARC files, and the progress counters.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use nearcrawl_dedup::Stage;

use nearcrawl_fetch::Fetched;
use nearcrawl_records::{Record, Verdict};
use nearcrawl_store::{Commit, CrawlStore};

use crate::error::EngineError;
use crate::output::RecordsFile;
use crate::progress::Progress;
use crate::warc::{Original, PreparedFetch, WarcFetch, WarcWriter};

/// A fetched page as the WARC writer takes it (`head`: its [`Fetched::response_head`]).
pub(crate) fn warc_fetch<'a>(page: &'a Fetched, head: &'a [u8]) -> WarcFetch<'a> {
    WarcFetch {
        url: page.url.as_str(),
        date: page.started,
        ip: page.remote_addr.map(|a| a.ip().to_string()),
        request_head: &page.request_head,
        response_head: head,
        payload: &page.wire_body,
        payload_digest: None,
    }
}

/// The job's outputs, written in step with its store.
pub(crate) struct Archive {
    store: Arc<dyn CrawlStore>,
    records: RecordsFile,
    /// `None` when WARC output is off.
    warc: Option<WarcWriter>,
    warc_dir: PathBuf,
    progress: Arc<Progress>,
}

impl Archive {
    /// Opens the outputs in `out_dir` for run number `run`: `records.jsonl` made to hold
    /// exactly the store's `decided` records, and (when `warc_max_bytes` is given) a new
    /// WARC file series.
    pub(crate) fn open(
        out_dir: &Path,
        store: Arc<dyn CrawlStore>,
        decided: u64,
        run: u64,
        warc_max_bytes: Option<u64>,
        progress: Arc<Progress>,
    ) -> Result<Archive, EngineError> {
        let records = RecordsFile::open(&out_dir.join("records.jsonl"), store.as_ref(), decided)?;
        let warc_dir = out_dir.join("warc");
        let warc = match warc_max_bytes {
            Some(max) => Some(
                WarcWriter::new(&warc_dir, run, max).map_err(|e| EngineError::io(&warc_dir, e))?,
            ),
            None => None,
        };
        Ok(Archive {
            store,
            records,
            warc,
            warc_dir,
            progress,
        })
    }

    /// Commits a decision, then appends its records to `records.jsonl`.
    pub(crate) fn commit(
        &mut self,
        mut commit: Commit,
        records: &[Record],
    ) -> Result<(), EngineError> {
        let lines: Vec<Vec<u8>> = records
            .iter()
            // A record holds strings and numbers only: serialising cannot fail.
            .map(|record| serde_json::to_vec(record).unwrap_or_default())
            .collect();
        commit
            .records
            .extend(records.iter().map(|r| r.seq).zip(lines.iter().cloned()));
        let queued_delta = commit.enqueued.len() as i64 - commit.taken.len() as i64;
        let clock = Instant::now();
        self.store.commit(commit)?;
        let queued = Progress::get(&self.progress.queued) as i64 + queued_delta;
        Progress::set(&self.progress.queued, queued.max(0) as u64);
        for (record, line) in records.iter().zip(&lines) {
            self.records.append(line)?;
            Progress::add(&self.progress.decisions, 1);
            if record.verdict == Verdict::Error {
                Progress::add(&self.progress.errors, 1);
            }
        }
        self.progress.add_time(Stage::Commit, clock.elapsed());
        Ok(())
    }

    /// Writes a response to the WARC files (when enabled): as a revisit of `revisit_of`
    /// when given, with `metadata`. Returns the response (or revisit) record's id.
    pub(crate) fn response(
        &mut self,
        page: &Fetched,
        revisit_of: Option<Original<'_>>,
        metadata: &[(&str, String)],
    ) -> Result<Option<String>, EngineError> {
        self.response_prepared(page, None, revisit_of, metadata)
    }

    /// [`Archive::response`] for a page whose response and request records may have been
    /// prepared already ([`PreparedFetch`], on the thread that analysed it).
    pub(crate) fn response_prepared(
        &mut self,
        page: &Fetched,
        prepared: Option<PreparedFetch>,
        revisit_of: Option<Original<'_>>,
        metadata: &[(&str, String)],
    ) -> Result<Option<String>, EngineError> {
        let Some(warc) = &mut self.warc else {
            return Ok(None);
        };
        let head = page.response_head();
        let fetch = warc_fetch(page, &head);
        let clock = Instant::now();
        let written = match prepared {
            Some(prepared) => warc.write_prepared(&fetch, prepared, revisit_of, metadata),
            None => warc.write_fetch(&fetch, revisit_of, metadata),
        }
        .map(|written| Some(written.record_id))
        .map_err(|e| EngineError::io(&self.warc_dir, e));
        self.progress.add_time(Stage::Warc, clock.elapsed());
        written
    }

    /// Whether responses are archived.
    pub(crate) fn archives(&self) -> bool {
        self.warc.is_some()
    }

    /// Pushes buffered record lines to the file.
    pub(crate) fn flush_records(&mut self) -> Result<(), EngineError> {
        self.records.flush()
    }

    /// Flushes every output and makes the store durable.
    pub(crate) fn finish(&mut self) -> Result<(), EngineError> {
        self.records.flush()?;
        if let Some(warc) = &mut self.warc {
            warc.flush()
                .map_err(|e| EngineError::io(&self.warc_dir, e))?;
        }
        self.store.sync()?;
        Ok(())
    }
}
