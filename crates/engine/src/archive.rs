//! The archive: where finished decisions go. One store commit per decision, then its lines
//! of `records.jsonl` (the store first, so a crash never leaves a record the store cannot
//! account for), the responses in the WARC files, and the progress counters.
//!
//! A decision is committed behind the coordinator ([`CrawlStore::commit_behind`]): the
//! store's reads see it at once, its own thread lands it, and its lines are appended to
//! `records.jsonl` once it has landed. A shared job's coordinator waits for the landing
//! (`in_step`): other workers hear that its URLs are done right after.
//!
//! The WARC files are written on a thread of their own ([`WarcThread`]): a page's request
//! and response records are compressed where it was analysed, its revisit and metadata
//! records and the writes are the WARC thread's, and the coordinator only hands them over
//! (each record's id is known before it is written), without waking it for each: it looks
//! for them every millisecond (`WARC_POLL`). Like `records.jsonl`, the WARC files are
//! buffered: a killed crawl loses the records not yet written out, a few pages' at most
//! (`WARC_QUEUE`).

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nearcrawl_dedup::Stage;

use nearcrawl_fetch::Fetched;
use nearcrawl_records::{Record, Verdict};
use nearcrawl_store::{Bytes, Commit, CrawlStore};

use crate::error::EngineError;
use crate::output::RecordsFile;
use crate::progress::Progress;
use crate::warc::{Level, Original, PreparedFetch, WarcFetch, WarcJob, WarcWriter};

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
    /// The WARC files' writer, and the level their records are compressed at.
    warc: Option<(WarcThread, Level)>,
    warc_dir: PathBuf,
    progress: Arc<Progress>,
    /// Decisions committed and not landed yet: each commit's ticket, its records' lines and
    /// how many of them are errors.
    unlanded: VecDeque<(u64, Vec<Bytes>, u64)>,
    /// Where each record is serialised before it is copied, once, into the line that the
    /// store and `records.jsonl` share.
    line: Vec<u8>,
    /// Each decision waits for its commit to land (a shared job).
    in_step: bool,
    /// When record lines were last pushed to the file.
    flushed: Instant,
}

/// How often the lines of `records.jsonl` reach the file at least, when they do not at once.
const RECORDS_FLUSH: Duration = Duration::from_millis(20);

impl Archive {
    /// Opens the outputs in `out_dir` for run number `run`: `records.jsonl` made to hold
    /// exactly the store's `decided` records, and (when `warc` gives the files' size and
    /// compression level) a new WARC file series. `in_step`: each decision waits for its
    /// commit to land.
    pub(crate) fn open(
        out_dir: &Path,
        store: Arc<dyn CrawlStore>,
        decided: u64,
        run: u64,
        warc: Option<(u64, Level)>,
        progress: Arc<Progress>,
        in_step: bool,
    ) -> Result<Archive, EngineError> {
        let records = RecordsFile::open(&out_dir.join("records.jsonl"), store.as_ref(), decided)?;
        let warc_dir = out_dir.join("warc");
        let warc = match warc {
            Some((max, level)) => Some((
                WarcWriter::new(&warc_dir, run, max, level)
                    .and_then(|writer| WarcThread::start(writer, Arc::clone(&progress)))
                    .map_err(|e| EngineError::io(&warc_dir, e))?,
                level,
            )),
            None => None,
        };
        Ok(Archive {
            store,
            records,
            warc,
            warc_dir,
            progress,
            unlanded: VecDeque::new(),
            line: Vec::new(),
            in_step,
            flushed: Instant::now(),
        })
    }

    /// Commits a decision behind the coordinator; its records are appended to
    /// `records.jsonl` once it has landed (at once in step).
    pub(crate) fn commit(
        &mut self,
        mut commit: Commit,
        records: &[Record],
    ) -> Result<(), EngineError> {
        let line = &mut self.line;
        let lines: Vec<Bytes> = records
            .iter()
            .map(|record| {
                line.clear();
                // A record holds strings and numbers only: serialising cannot fail.
                let _ = serde_json::to_writer(&mut *line, record);
                Bytes::from(line.as_slice())
            })
            .collect();
        commit
            .records
            .extend(records.iter().map(|r| r.seq).zip(lines.iter().cloned()));
        let queued_delta = commit.enqueued.len() as i64 - commit.taken.len() as i64;
        let clock = Instant::now();
        let ticket = self.store.commit_behind(commit)?;
        if self.in_step {
            self.store.wait_landed(ticket)?;
        }
        let queued = Progress::get(&self.progress.queued) as i64 + queued_delta;
        Progress::set(&self.progress.queued, queued.max(0) as u64);
        let errors = records
            .iter()
            .filter(|r| r.verdict == Verdict::Error)
            .count() as u64;
        self.unlanded.push_back((ticket, lines, errors));
        self.append_landed()?;
        self.progress.add_time(Stage::Commit, clock.elapsed());
        Ok(())
    }

    /// Appends the records of the decisions landed.
    fn append_landed(&mut self) -> Result<(), EngineError> {
        if self.unlanded.is_empty() {
            return Ok(());
        }
        let landed = self.store.landed()?;
        while self.unlanded.front().is_some_and(|(t, ..)| *t <= landed) {
            let Some((_, lines, errors)) = self.unlanded.pop_front() else {
                break;
            };
            for line in &lines {
                self.records.append(line)?;
            }
            Progress::add(&self.progress.decisions, lines.len() as u64);
            Progress::add(&self.progress.errors, errors);
        }
        Ok(())
    }

    /// Waits for every decision committed to land, and appends their records.
    fn land_all(&mut self) -> Result<(), EngineError> {
        if let Some((ticket, ..)) = self.unlanded.back() {
            self.store.wait_landed(*ticket)?;
        }
        self.append_landed()
    }

    /// Writes a response to the WARC files (when enabled): as a revisit of `revisit_of`
    /// when given, with `metadata`. Returns the response (or revisit) record's id.
    pub(crate) fn response(
        &mut self,
        page: &Fetched,
        revisit_of: Option<Original<'_>>,
        metadata: &[(&'static str, String)],
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
        metadata: &[(&'static str, String)],
    ) -> Result<Option<String>, EngineError> {
        let Some((warc, level)) = &mut self.warc else {
            return Ok(None);
        };
        let clock = Instant::now();
        // A revisit record's block, and what a response not prepared yet holds; a prepared
        // response holds its own (written out again here, it was 0.7 % of the coordinator).
        let head = match (&prepared, &revisit_of) {
            (Some(_), None) => Vec::new(),
            _ => page.response_head(),
        };
        let prepared = match prepared {
            Some(prepared) => prepared,
            // Not analysed (a redirect, an error page, a file): prepared here.
            None => PreparedFetch::new(&warc_fetch(page, &head), *level),
        };
        let job = WarcJob {
            url: page.url.to_string(),
            ip: page.remote_addr.map(|a| a.ip().to_string()),
            response_head: head,
            prepared,
            revisit_of: revisit_of.map(|o| {
                let id = o.record_id.map(str::to_string);
                (o.url.to_string(), o.date.to_string(), o.not_modified, id)
            }),
            metadata: metadata
                .iter()
                .map(|(name, value)| (*name, value.clone()))
                .collect(),
        };
        let record_id = job.record_id().to_string();
        let handed = warc
            .write(job)
            .map_err(|e| EngineError::io(&self.warc_dir, e));
        self.progress.add_time(Stage::Warc, clock.elapsed());
        handed.map(|()| Some(record_id))
    }

    /// The level WARC records are compressed at, when responses are archived.
    pub(crate) fn warc_level(&self) -> Option<Level> {
        self.warc.as_ref().map(|(_, level)| *level)
    }

    /// Appends the lines of the decisions landed, and pushes them to the file: at once in
    /// step (other workers hear of each decision right after), else at most every
    /// [`RECORDS_FLUSH`] (a write per page was 1.5 % of the coordinator's time; a file that
    /// a killed crawl left behind the store is made whole from it on resuming).
    pub(crate) fn flush_records(&mut self) -> Result<(), EngineError> {
        self.append_landed()?;
        if !self.in_step && self.flushed.elapsed() < RECORDS_FLUSH {
            return Ok(());
        }
        self.flushed = Instant::now();
        self.records.flush()
    }

    /// Flushes every output and makes the store durable.
    pub(crate) fn finish(&mut self) -> Result<(), EngineError> {
        self.land_all()?;
        self.records.flush()?;
        if let Some((warc, _)) = &mut self.warc {
            warc.finish()
                .map_err(|e| EngineError::io(&self.warc_dir, e))?;
        }
        self.store.sync()?;
        Ok(())
    }
}

/// Fetches' records waiting for the WARC thread at most. Few: a `kill -9` loses what waits
/// here besides the file's 8 KiB buffer, and the WARC files should lose no more than a few
/// pages' records then, as when they were written on the coordinator (a buffer that lost
/// 80 pages' records was turned down for that, docs/BENCHMARKS.md). When the thread falls
/// behind, the coordinator waits for it.
const WARC_QUEUE: usize = 16;

/// The thread is woken when this many fetches wait; it looks at the queue every
/// [`WARC_POLL`] otherwise. Waking it for every fetch was a system call on the coordinator
/// per page, a tenth of its time (docs/BENCHMARKS.md, "The coordinator's CPU per page").
const WARC_WAKE: usize = 8;

/// How often the WARC thread looks for fetches handed over without waking it.
const WARC_POLL: Duration = Duration::from_millis(1);

/// The fetches handed to the WARC thread and not taken yet.
#[derive(Default)]
struct Handed {
    jobs: Vec<WarcJob>,
    /// No more will be handed over: the thread writes what is left and ends.
    closed: bool,
    /// The thread has ended (on an error, or closed).
    stopped: bool,
}

/// What the coordinator and the WARC thread share: the fetches handed over, and the
/// signals that there are many (`work`) or that there is room again (`room`).
#[derive(Default)]
struct Queue {
    handed: Mutex<Handed>,
    work: Condvar,
    room: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Handed> {
        self.handed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The thread's next fetches to write, all of those handed over; none once closed and
    /// empty.
    fn take(&self) -> Vec<WarcJob> {
        let mut handed = self.lock();
        while handed.jobs.is_empty() && !handed.closed {
            handed = self
                .work
                .wait_timeout(handed, WARC_POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let jobs = std::mem::take(&mut handed.jobs);
        drop(handed);
        self.room.notify_all();
        jobs
    }

    /// The thread has ended: nothing more is taken.
    fn stopped(&self) {
        self.lock().stopped = true;
        self.room.notify_all();
    }
}

/// Marks the queue stopped when dropped, on the WARC thread's way out.
struct Stopped(Arc<Queue>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.stopped();
    }
}

/// The WARC writer on a thread of its own, below the coordinator's priority. A write error
/// stops it; the next hand-over (or the end) returns that error, and the crawl stops.
struct WarcThread {
    queue: Arc<Queue>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl WarcThread {
    /// Starts the thread; the time it spends writing counts in the `warc` stage of
    /// `progress`.
    fn start(mut writer: WarcWriter, progress: Arc<Progress>) -> io::Result<WarcThread> {
        let queue = Arc::new(Queue::default());
        let taken = Arc::clone(&queue);
        let thread = std::thread::Builder::new()
            .name("nearcrawl-warc".into())
            .spawn(move || {
                crate::runtime::below_the_coordinator();
                // Said however the thread ends, a panic included: a coordinator waiting
                // for room stops waiting.
                let _stopped = Stopped(Arc::clone(&taken));
                (|| loop {
                    let jobs = taken.take();
                    if jobs.is_empty() {
                        return writer.flush();
                    }
                    let clock = Instant::now();
                    for job in jobs {
                        writer.write_job(job)?;
                    }
                    progress.add_time(Stage::Warc, clock.elapsed());
                })()
            })?;
        Ok(WarcThread {
            queue,
            thread: Some(thread),
        })
    }

    /// Hands a fetch's records to the thread.
    fn write(&mut self, job: WarcJob) -> io::Result<()> {
        let mut handed = self.queue.lock();
        while handed.jobs.len() >= WARC_QUEUE && !handed.stopped {
            handed = self
                .queue
                .room
                .wait(handed)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if handed.stopped || handed.closed {
            drop(handed);
            // The thread stopped: on its error, said once; then it is gone.
            return match self.finish() {
                Err(e) => Err(e),
                Ok(()) => Err(io::Error::other("the WARC writer has stopped")),
            };
        }
        handed.jobs.push(job);
        if handed.jobs.len() >= WARC_WAKE {
            self.queue.work.notify_one();
        }
        Ok(())
    }

    /// Writes what was handed over, flushes the file and ends the thread: its first error,
    /// if it met one.
    fn finish(&mut self) -> io::Result<()> {
        self.queue.lock().closed = true;
        self.queue.work.notify_one();
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| io::Error::other("the WARC writer panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for WarcThread {
    fn drop(&mut self) {
        // A crawl that ended on another error still writes out what it handed over.
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    fn progress() -> Arc<Progress> {
        Arc::new(Progress::default())
    }

    fn job(url: &str) -> WarcJob {
        let fetch = WarcFetch {
            url,
            date: SystemTime::now(),
            ip: None,
            request_head: b"GET / HTTP/1.1\r\n\r\n",
            response_head: b"HTTP/1.1 200 OK\r\n\r\n",
            payload: b"<p>hello</p>",
            payload_digest: None,
        };
        WarcJob {
            url: url.into(),
            ip: None,
            response_head: fetch.response_head.to_vec(),
            prepared: PreparedFetch::new(&fetch, Level::default()),
            revisit_of: None,
            metadata: Vec::new(),
        }
    }

    #[test]
    fn what_is_handed_over_is_written_by_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut warc = WarcThread::start(
            WarcWriter::new(dir.path(), 0, 1 << 20, Level::default()).unwrap(),
            progress(),
        )
        .unwrap();
        for i in 0..(WARC_QUEUE * 2) {
            warc.write(job(&format!("http://127.0.0.1/{i}"))).unwrap();
        }
        warc.finish().unwrap();
        let file = dir.path().join("nearcrawl-000-00000.warc.gz");
        let mut text = String::new();
        io::Read::read_to_string(
            &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(file).unwrap()),
            &mut text,
        )
        .unwrap();
        let responses = text.matches("WARC-Type: response").count();
        assert_eq!(responses, WARC_QUEUE * 2);
    }

    #[test]
    fn a_write_error_on_the_thread_is_returned_to_the_crawl() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("warc");
        let mut warc = WarcThread::start(
            WarcWriter::new(&gone, 0, 1 << 20, Level::default()).unwrap(),
            progress(),
        )
        .unwrap();
        // Its directory removed before the first file is opened: the thread's write fails.
        std::fs::remove_dir_all(&gone).unwrap();
        let mut error = None;
        for i in 0..(WARC_QUEUE * 4) {
            if let Err(e) = warc.write(job(&format!("http://127.0.0.1/{i}"))) {
                error = Some(e);
                break;
            }
        }
        let error = match error {
            Some(e) => e,
            None => warc.finish().unwrap_err(),
        };
        assert_eq!(error.kind(), io::ErrorKind::NotFound, "{error}");
        // Said once; then the writer is gone.
        assert!(warc.write(job("http://127.0.0.1/late")).is_err());
        assert!(warc.finish().is_ok());
    }
}
