//! The judge on a thread of its own, so that judging a page and keeping a unique one leave
//! the coordinator's thread (docs/BENCHMARKS.md, "The judge on a thread of its
//! own").
//!
//! A page analysed on the blocking pool goes to the judge rather than to the coordinator;
//! the judge judges it against the pages kept before it and hands it on, its judgement
//! attached ([`Away`]). A duplicate is done with there. A unique page is kept under the
//! record number its decision takes, which only the coordinator knows (a decision's links
//! take numbers too): the judge waits for that word ([`Word`]), judging nothing else
//! meanwhile, so that every page is judged against every page decided before it, as on the
//! coordinator. It keeps the page (its simhash and sentence postings indexed) while the
//! coordinator finishes the page's decision and commits it; until the commit's landing is
//! noted ([`Notes`]), the judge answers for the page itself (`Pending`). So the coordinator's
//! thread does the rest of each decision while the judge keeps the page and judges the
//! next.
//!
//! What the coordinator notes of its commits (the kept pages' exact keys, how far every
//! page is decided) travels with its next word, or its last at [`ToJudge::Finish`]: a word
//! a kept page, not a message a commit. Its words go on a queue that wakes the judge only
//! when the judge waits for one ([`Words`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nearcrawl_dedup::{
    Admission, Follow, IndexedSentences, Judgement, Likeness, Original, PageAnalyzer, Stage,
};
use tokio::sync::mpsc::UnboundedSender;

use super::super::page::{OriginalRead, OriginalRecord};
use super::super::prejudge::Prejudge;
use super::super::sentences::{PostingsReader, ReadPostings};
use super::super::tasks::TaskResult;
use super::{Judge, Judged};
use crate::error::EngineError;
use crate::progress::Progress;

/// What the judge is handed on its channel (which wakes it). (A page moves once through
/// it, as through the coordinator's, so its size costs nothing worth an allocation.)
#[allow(clippy::large_enum_variant)]
pub(in crate::crawl) enum ToJudge {
    /// A page analysed on the pool: judged, then handed on to the coordinator on `reply`.
    Page(TaskResult, UnboundedSender<TaskResult>),
    /// The crawl ends: the judge back to the coordinator, once it has taken the last word.
    Finish,
}

/// What the coordinator says of the pages it decides, on a queue that wakes the judge only
/// when it waits for it: the page the judge found unique under `ticket` is decided, kept as
/// record `seq` or not kept at all (`None`) (no ticket: its last word, notes only); with
/// what it noted since it last said.
struct Word {
    ticket: Option<u64>,
    seq: Option<u64>,
    notes: Notes,
}

/// The coordinator's words, and whether the judge waits for one (then it is woken).
struct Words {
    queue: Mutex<VecDeque<Word>>,
    /// Set by the judge before it sleeps for a word.
    waiting: AtomicBool,
    /// Set when the coordinator is gone without a last word (it stopped on an error).
    closed: AtomicBool,
}

impl Words {
    fn push(&self, word: Word, judge: &std::thread::Thread) {
        lock(&self.queue).push_back(word);
        if self.waiting.load(Ordering::SeqCst) {
            judge.unpark();
        }
    }

    fn take(&self) -> VecDeque<Word> {
        std::mem::take(&mut *lock(&self.queue))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the coordinator notes of its commits for the judge.
#[derive(Debug, Default)]
pub(in crate::crawl) struct Notes {
    /// Kept pages committed (their exact keys and record numbers), in order.
    kept: Vec<(u128, u64)>,
    /// Every page numbered below it is decided, its commit landed.
    through: Option<u64>,
}

/// What the judge found of a page, for the coordinator to decide it with: the stage's
/// judgement (but for the analysis, which stays the page's) and, for a unique page, what
/// keeping it writes with its decision.
pub(in crate::crawl) struct Away {
    /// The judge's number for the page: a unique page's decision names it.
    ticket: u64,
    verdict: Likeness,
    original: Option<Original>,
    distance: Option<u32>,
    similarity: Option<f64>,
    follow: Follow,
    /// A unique page: its fingerprints, text and link keys, under the number its
    /// decision gives it.
    admission: Option<Admission>,
    /// A duplicate: what was read of its original here, off the coordinator.
    pub(in crate::crawl) original_read: OriginalRead,
    /// The sentence matches its candidates were ranked from.
    pub(in crate::crawl) matches: u64,
    /// Judging it took.
    pub(in crate::crawl) took: Duration,
}

impl Away {
    /// The judgement, with the page's `analysis` back in it; and for a unique page, its
    /// ticket and what keeping it writes.
    pub(in crate::crawl) fn judgement(
        self,
        analysis: nearcrawl_dedup::PageAnalysis,
    ) -> (Judgement, Option<(u64, Admission)>) {
        let judgement = Judgement {
            verdict: self.verdict,
            original: self.original,
            distance: self.distance,
            similarity: self.similarity,
            follow: self.follow,
            analysis,
        };
        let ticket = self.ticket;
        (judgement, self.admission.map(|a| (ticket, a)))
    }
}

/// The judge, here on the coordinator's thread or away on its own; and what the pool is
/// given on its behalf (the same either way).
pub(in crate::crawl) struct Judging {
    /// The judge, on the coordinator's thread.
    here: Option<Judge>,
    /// The judge's thread, when it is away.
    away: Option<AwayThread>,
    pages: PageAnalyzer,
    ahead: (PostingsReader, Prejudge),
}

/// The judge's thread.
struct AwayThread {
    to: mpsc::Sender<ToJudge>,
    words: Arc<Words>,
    /// The thread, to wake it.
    judge: std::thread::Thread,
    /// Taken when the judge comes back.
    thread: Option<JoinHandle<Result<Judge, EngineError>>>,
    /// Noted since the coordinator last told the judge.
    notes: Notes,
}

/// Why the judge cannot be had on the coordinator's thread.
fn gone(why: &str) -> EngineError {
    EngineError::Judge(why.to_string())
}

impl Judging {
    /// `judge`, on the coordinator's thread.
    pub(in crate::crawl) fn here(judge: Judge) -> Judging {
        Judging {
            pages: judge.stage().page_analyzer(),
            ahead: judge.ahead(),
            here: Some(judge),
            away: None,
        }
    }

    /// The judge on the coordinator's thread: an error while it is away.
    pub(in crate::crawl) fn local(&mut self) -> Result<&mut Judge, EngineError> {
        self.here
            .as_mut()
            .ok_or_else(|| gone("the judge runs on a thread of its own"))
    }

    /// Sends the judge to a thread of its own (`progress` counts its time keeping pages).
    /// It stays here when no thread can be had.
    pub(in crate::crawl) fn send_away(&mut self, progress: Arc<Progress>) {
        let Some(judge) = self.here.take() else {
            return;
        };
        let (to, inbox) = mpsc::channel();
        let words = Arc::new(Words {
            queue: Mutex::default(),
            waiting: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        });
        let heard = Arc::clone(&words);
        // Handed over only once the thread exists (and back when it cannot start). It runs
        // at the coordinator's priority (a thread inherits its maker's): both hold pages up.
        let (hand, handed) = mpsc::sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("nearcrawl-judge".into())
            .spawn(move || match handed.recv() {
                Ok(judge) => JudgeLoop::new(judge, inbox, heard, progress).run(),
                Err(_) => Err(gone("the judge never came")),
            });
        let Ok(thread) = spawned else {
            self.here = Some(judge);
            return;
        };
        match hand.send(judge) {
            Ok(()) => {
                self.away = Some(AwayThread {
                    to,
                    words,
                    judge: thread.thread().clone(),
                    thread: Some(thread),
                    notes: Notes::default(),
                })
            }
            Err(mpsc::SendError(judge)) => self.here = Some(judge),
        }
    }

    /// What the pool analyses pages with.
    pub(in crate::crawl) fn page_analyzer(&self) -> PageAnalyzer {
        self.pages.clone()
    }

    /// What the pool reads and works out of a page's judgement with ([`Judge::ahead`]).
    pub(in crate::crawl) fn ahead(&self) -> (PostingsReader, Prejudge) {
        self.ahead.clone()
    }

    /// Where the pool hands analysed pages, when the judge is away.
    pub(in crate::crawl) fn inbox(&self) -> Option<mpsc::Sender<ToJudge>> {
        self.away.as_ref().map(|away| away.to.clone())
    }

    /// The page the judge found unique under `ticket` is decided: kept as `seq`, or not.
    pub(in crate::crawl) fn keep_away(&mut self, ticket: u64, seq: Option<u64>) {
        if let Some(away) = &mut self.away {
            let notes = std::mem::take(&mut away.notes);
            let word = Word {
                ticket: Some(ticket),
                seq,
                notes,
            };
            away.words.push(word, &away.judge);
        }
    }

    /// Page `seq`, kept under exact key `key`, is committed ([`Judge::kept`]).
    pub(in crate::crawl) fn kept(&mut self, key: u128, seq: u64) {
        if let Some(judge) = &mut self.here {
            judge.kept(key, seq);
        } else if let Some(away) = &mut self.away {
            away.notes.kept.push((key, seq));
        }
    }

    /// A decision has landed, every page before `through` decided
    /// ([`Judge::write_postings_when_due`]).
    pub(in crate::crawl) fn landed(&mut self, through: u64) -> Result<(), EngineError> {
        if let Some(judge) = &mut self.here {
            judge.write_postings_when_due(through)?;
        } else if let Some(away) = &mut self.away {
            away.notes.through = Some(through);
        }
        Ok(())
    }

    /// The judge back on the coordinator's thread (the crawl ends), with what it was told.
    pub(in crate::crawl) fn back(&mut self) -> Result<&mut Judge, EngineError> {
        if let Some(mut away) = self.away.take() {
            let word = Word {
                ticket: None,
                seq: None,
                notes: std::mem::take(&mut away.notes),
            };
            away.words.push(word, &away.judge);
            let _ = away.to.send(ToJudge::Finish);
            if let Some(thread) = away.thread.take() {
                let judge = thread
                    .join()
                    .map_err(|_| gone("the judge's thread panicked"))??;
                self.here = Some(judge);
            }
        }
        self.local()
    }
}

impl Drop for AwayThread {
    /// A judge waiting for a word that will never come stops.
    fn drop(&mut self) {
        self.words.closed.store(true, Ordering::SeqCst);
        self.judge.unpark();
    }
}

/// A unique page judged, waiting for its record number.
struct Waiting {
    ticket: u64,
    admission: Admission,
    sentences: Option<IndexedSentences>,
    postings: ReadPostings,
}

/// Spins (yielding the core) this many times for a word before sleeping for it: the
/// coordinator is at work on the page the word is about.
const SPINS: u32 = 64;

/// The judge's thread: judges the pages it is handed in turn, each unique one kept before
/// the next is judged.
struct JudgeLoop {
    judge: Judge,
    inbox: mpsc::Receiver<ToJudge>,
    words: Arc<Words>,
    progress: Arc<Progress>,
    /// Pages handed over and not judged yet.
    queued: VecDeque<(TaskResult, UnboundedSender<TaskResult>)>,
    /// The unique page judged last, until its word comes.
    waiting: Option<Waiting>,
    tickets: u64,
    /// What stopped the judge: said with each page after, and at the end.
    failed: Option<String>,
}

impl JudgeLoop {
    fn new(
        judge: Judge,
        inbox: mpsc::Receiver<ToJudge>,
        words: Arc<Words>,
        progress: Arc<Progress>,
    ) -> JudgeLoop {
        JudgeLoop {
            judge,
            inbox,
            words,
            progress,
            queued: VecDeque::new(),
            waiting: None,
            tickets: 0,
            failed: None,
        }
    }

    fn run(mut self) -> Result<Judge, EngineError> {
        loop {
            self.hear();
            if self.waiting.is_none()
                && let Some((page, reply)) = self.queued.pop_front()
            {
                let _ = reply.send(self.judge_next(page));
                continue;
            }
            if self.waiting.is_some() && !self.queued.is_empty() {
                if self.words.closed.load(Ordering::SeqCst) {
                    return Err(gone("the coordinator stopped"));
                }
                self.wait_for_word();
                continue;
            }
            // Nothing to do until a page comes.
            match self.inbox.recv() {
                Ok(ToJudge::Page(page, reply)) => self.queued.push_back((page, reply)),
                Ok(ToJudge::Finish) => {
                    self.hear();
                    return match self.failed {
                        Some(why) => Err(gone(&why)),
                        None => Ok(self.judge),
                    };
                }
                // The coordinator is gone (it stopped on an error): nothing to hand back.
                Err(_) => return Err(gone("the coordinator stopped")),
            }
        }
    }

    /// Judges `page`, unless the judge has stopped.
    fn judge_next(&mut self, page: TaskResult) -> TaskResult {
        if let Some(why) = &self.failed {
            return TaskResult::JudgeFailed(gone(why));
        }
        self.tickets += 1;
        match judge_page(&mut self.judge, page, self.tickets) {
            Ok((result, waiting)) => {
                self.waiting = waiting;
                result
            }
            Err(e) => {
                self.failed = Some(e.to_string());
                TaskResult::JudgeFailed(e)
            }
        }
    }

    /// Takes the coordinator's words so far: a unique page kept, notes applied.
    fn hear(&mut self) {
        for word in self.words.take() {
            // A word about the page waiting ends its wait, kept or not.
            let about = word.ticket.and_then(|ticket| {
                let page = self.waiting.take_if(|page| page.ticket == ticket)?;
                Some((page, word.seq?))
            });
            let clock = Instant::now();
            let judge = &mut self.judge;
            let done = note(judge, word.notes).and_then(|()| match about {
                Some((page, seq)) => keep(judge, page, seq),
                None => Ok(()),
            });
            self.progress.add_time(Stage::Index, clock.elapsed());
            if let Err(e) = done
                && self.failed.is_none()
            {
                self.failed = Some(e.to_string());
            }
        }
    }

    /// Waits for the word about the page waiting: a while yielding the core, then asleep
    /// until the coordinator says it.
    fn wait_for_word(&mut self) {
        for _ in 0..SPINS {
            if !lock(&self.words.queue).is_empty() {
                return;
            }
            std::thread::yield_now();
        }
        self.words.waiting.store(true, Ordering::SeqCst);
        while lock(&self.words.queue).is_empty() && !self.words.closed.load(Ordering::SeqCst) {
            std::thread::park();
        }
        self.words.waiting.store(false, Ordering::SeqCst);
    }
}

/// What the coordinator noted, applied: kept pages committed, postings written when due.
fn note(judge: &mut Judge, notes: Notes) -> Result<(), EngineError> {
    for (key, seq) in notes.kept {
        judge.kept(key, seq);
    }
    match notes.through {
        Some(through) => judge.write_postings_when_due(through),
        None => Ok(()),
    }
}

/// Keeps `page` as record `seq`: indexed, and answered for until its commit is noted.
fn keep(judge: &mut Judge, page: Waiting, seq: u64) -> Result<(), EngineError> {
    let Waiting {
        mut admission,
        sentences,
        postings,
        ..
    } = page;
    admission.seq = seq;
    judge.index(&admission, sentences, postings)?;
    // Answered for until its commit, noted by its exact key, lands; a page without text has
    // none, and is nobody's original.
    if admission.fingerprint.is_some() {
        judge.pending.0.push(admission);
    }
    Ok(())
}

/// Judges the page `result` holds (an analysed page; anything else is handed on as it is),
/// numbered `ticket`: the judgement attached, and for a unique page what it waits with.
fn judge_page(
    judge: &mut Judge,
    result: TaskResult,
    ticket: u64,
) -> Result<(TaskResult, Option<Waiting>), EngineError> {
    let TaskResult::Page {
        host,
        key,
        entry,
        result: Ok(page),
        analysis: Some(Ok(mut analysed)),
        fetch_time,
        warc,
    } = result
    else {
        return Ok((result, None));
    };
    let clock = Instant::now();
    let site = nearcrawl_frontier::authority(&page.url);
    let (postings, prejudged) = (analysed.postings.take(), analysed.prejudged.take());
    let Judged {
        judgement,
        postings,
        matches,
    } = judge.judge(analysed.analysis, postings, prejudged)?;
    let (waiting, admission) = match judgement.verdict {
        Likeness::Unique => {
            let mut admission = judge.stage().admission(0, &site, &judgement);
            let sentences = admission.sentences.take();
            let waiting = Waiting {
                ticket,
                admission: admission.clone(),
                sentences,
                postings,
            };
            (Some(waiting), Some(admission))
        }
        _ => (None, None),
    };
    let Judgement {
        verdict,
        original,
        distance,
        similarity,
        follow,
        analysis,
    } = judgement;
    analysed.analysis = analysis;
    // Freed here, not on the coordinator (2 % of its time over 100,000 pages).
    analysed.analysis.shed_judging();
    // A duplicate's original's record and declared length, read here for its decision (a
    // failed read is the coordinator's to make again, and to report).
    let original_read = match original {
        Some(Original::Kept(seq)) if verdict != Likeness::Unique => {
            let store = judge.store.as_ref();
            let record = OriginalRecord::read(store, seq).ok().flatten();
            let length = record.as_ref().and_then(|r| r.declared_length(store));
            OriginalRead { record, length }
        }
        _ => OriginalRead::default(),
    };
    analysed.judged = Some(Away {
        ticket,
        verdict,
        original,
        distance,
        similarity,
        follow,
        admission,
        original_read,
        matches,
        took: clock.elapsed(),
    });
    let result = TaskResult::Page {
        host,
        key,
        entry,
        result: Ok(page),
        analysis: Some(Ok(analysed)),
        fetch_time,
        warc,
    };
    Ok((result, waiting))
}

/// Hands `result` (a page the pool analysed) to the judge at `inbox`, when it is away and
/// the page is one its decision judges (an analysed 200 that is no sitemap: the pages
/// `Coordinator::handle_page` hands to `decide_page`, which tells the judge whether it
/// keeps a unique one); otherwise, or when the judge is gone, to the coordinator on
/// `reply`.
pub(in crate::crawl) fn hand_over(
    inbox: Option<&mpsc::Sender<ToJudge>>,
    result: TaskResult,
    reply: UnboundedSender<TaskResult>,
) {
    let judged = matches!(
        &result,
        TaskResult::Page {
            entry,
            result: Ok(page),
            analysis: Some(Ok(_)),
            ..
        } if page.status == 200 && !entry.sitemap
    );
    let result = match inbox.filter(|_| judged) {
        Some(inbox) => match inbox.send(ToJudge::Page(result, reply.clone())) {
            Ok(()) => return,
            Err(mpsc::SendError(ToJudge::Page(result, _))) => result,
            Err(_) => return,
        },
        None => result,
    };
    let _ = reply.send(result);
}

#[cfg(test)]
mod tests;
