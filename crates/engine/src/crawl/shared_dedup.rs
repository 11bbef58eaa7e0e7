//! The dedup stage of a job shared through Redis: the same [`DedupStage`] judges each page,
//! but against the job's index ([`RedisIndex`]) instead of this worker's store.
//!
//! For a page: its keys are read from the index at one version (the simhash's blocks, its
//! exact key, its sentence postings); the stage judges it with those candidates, reading the
//! candidates' texts and link keys from the index; a unique page is then admitted *as judged
//! against that version*. If another worker admitted a page sharing one of its keys
//! meanwhile, the admission is refused and the page is judged again, so of two
//! near-duplicates fetched by two workers at the same moment exactly one is the original.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use nearcrawl_dedup::{
    DedupStage, Judgement, Originals, PageAnalysis, Prepared, stage_sentence_cutoff,
};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::Match;
use nearcrawl_redis_job::{Admission, Admitted, PageKeys, RedisIndex, Snapshot, StoredPage};
use nearcrawl_text::ExactKey;
use nearcrawl_verify::{SentencePosting, SiteHash, rank_candidates};

use super::sentences::MatchCount;
use crate::error::EngineError;

/// Admissions of one page refused in a row before the crawl stops with an error.
const MAX_CONFLICTS: u32 = 64;

pub(super) fn shared_error(err: nearcrawl_redis_job::JobError) -> EngineError {
    EngineError::Shared(err.to_string())
}

/// A page judged against the job's index.
pub(super) struct SharedJudgement {
    /// The stage's judgement.
    pub judgement: Judgement,
    /// A unique page with text: its id in the job's index.
    pub kept: Option<u64>,
    /// A duplicate: its original's URL (whichever worker kept it).
    pub original_url: Option<String>,
    /// The sentence matches its candidates were ranked from (`Progress::sentence_matches`).
    pub matches: u64,
}

/// The job's index as this worker's dedup stage uses it.
pub(super) struct SharedDedup {
    index: RedisIndex,
    verify: bool,
    /// Admissions refused because another worker admitted a page sharing a key first.
    pub conflicts: u64,
    /// Reads of the index made ahead, off the coordinator.
    reads: Arc<IndexReads>,
}

/// A page's keys and what the index held for them, read where the page was analysed.
pub(super) type IndexRead = (PageKeys, Snapshot);

/// Reads of the job's index for pages being analysed (on the blocking pool), so that the
/// coordinator judges a page against a snapshot already read and asks the job only to admit
/// it. A snapshot read ahead is as good as one read on the coordinator: an admission checks
/// that none of the page's keys was written since the snapshot's version, whenever it was
/// read, and a page judged a duplicate has an original the index still holds.
pub(super) struct IndexReads {
    /// Connections not in use, and one to open more from.
    idle: Mutex<Vec<RedisIndex>>,
    first: Mutex<RedisIndex>,
    verify: bool,
}

impl IndexReads {
    /// Prepares `analysis` for verification (when the job verifies) and reads its keys; `None`
    /// when the index cannot be read now (the coordinator reads it then).
    pub(super) fn read(&self, analysis: &mut PageAnalysis) -> Option<IndexRead> {
        if self.verify && analysis.prepared.is_none() {
            analysis.prepared = Some(Prepared::of(analysis));
        }
        let probe = probe_of(analysis, self.verify);
        let popped = lock(&self.idle).pop();
        let mut index = match popped {
            Some(index) => index,
            None => lock(&self.first).reopen().ok()?,
        };
        let snapshot = index.query(&probe).ok();
        lock(&self.idle).push(index);
        Some((probe, snapshot?))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The keys `analysis` is looked up by in the index.
fn probe_of(analysis: &PageAnalysis, verify: bool) -> PageKeys {
    let has_text = !analysis.tokens.is_empty();
    PageKeys {
        fingerprint: analysis.simhash.bits(),
        exact: has_text.then(|| analysis.exact_key.0.to_be_bytes().to_vec()),
        sentences: match (&analysis.prepared, has_text && verify) {
            (Some(prepared), true) => prepared.sentences.clone(),
            _ => Vec::new(),
        },
    }
}

/// Link keys as the index keeps them: absent, or a marker byte and the keys as the store
/// keeps them.
fn pack_links(links: Option<&[u64]>) -> Vec<u8> {
    match links {
        None => Vec::new(),
        Some(keys) => [&[1u8][..], &nearcrawl_store::encode_keys(keys)].concat(),
    }
}

fn unpack_links(bytes: &[u8]) -> Option<Vec<u64>> {
    bytes.strip_prefix(&[1]).map(nearcrawl_store::decode_keys)
}

impl SharedDedup {
    pub(super) fn new(index: RedisIndex, verify: bool) -> Result<SharedDedup, EngineError> {
        let reads = IndexReads {
            idle: Mutex::new(Vec::new()),
            first: Mutex::new(index.reopen().map_err(shared_error)?),
            verify,
        };
        Ok(SharedDedup {
            index,
            verify,
            conflicts: 0,
            reads: Arc::new(reads),
        })
    }

    /// Where pages being analysed read the index ahead.
    pub(super) fn reads(&self) -> Arc<IndexReads> {
        Arc::clone(&self.reads)
    }

    /// Judges `analysis` (of page `url` of `host`) against the job's index, and admits it
    /// there if it is unique; against `read` first, when the index was read ahead.
    pub(super) fn judge(
        &mut self,
        stage: &mut DedupStage,
        mut analysis: PageAnalysis,
        (url, host): (&str, &str),
        mut read: Option<IndexRead>,
    ) -> Result<SharedJudgement, EngineError> {
        if self.verify && analysis.prepared.is_none() {
            analysis.prepared = Some(Prepared::of(&analysis));
        }
        let mut id = None;
        // This URL's own admission, made by a worker whose lease on it ended before it
        // finished (it died between admitting the page and queueing its links): not an
        // original of the page, which is kept under it.
        let mut own = None;
        let mut conflicts = 0;
        loop {
            let has_text = !analysis.tokens.is_empty();
            // Read ahead from this same analysis (its keys made as here), or read now.
            let (probe, snapshot) = match read.take() {
                Some(read) => read,
                None => {
                    let probe = probe_of(&analysis, self.verify);
                    let snapshot = self.index.query(&probe).map_err(shared_error)?;
                    (probe, snapshot)
                }
            };
            let candidates = snapshot
                .near
                .iter()
                .filter(|&&(id, _, _)| Some(id) != own)
                .map(|&(id, fingerprint, distance)| Match {
                    fingerprint: Fingerprint::new(fingerprint),
                    payload: id,
                    distance,
                })
                .collect();
            let originals = IndexOriginals {
                index: RefCell::new(&mut self.index),
                snapshot: &snapshot,
                probe: &probe,
                pages: RefCell::new(HashMap::new()),
                matches: MatchCount::default(),
                hidden: own,
            };
            let judgement = stage.judge_with_candidates(analysis, candidates, &originals)?;
            let matches = originals.matches.get();
            if let Some(nearcrawl_dedup::Original::Kept(of)) = judgement.original {
                let original_url = originals.page(of)?.map(|p| p.url);
                if own.is_none() && original_url.as_deref() == Some(url) {
                    // Judged again without it; if unique, admitted under it (an admission
                    // already made answers as before), and its links are queued this time.
                    (own, id) = (Some(of), Some(of));
                    analysis = judgement.analysis;
                    continue;
                }
                return Ok(SharedJudgement {
                    judgement,
                    kept: None,
                    original_url,
                    matches,
                });
            }
            drop(originals);
            if judgement.verdict != nearcrawl_dedup::Likeness::Unique || !has_text {
                return Ok(SharedJudgement {
                    judgement,
                    kept: None,
                    original_url: None,
                    matches,
                });
            }
            let page_id = match id {
                Some(id) => id,
                None => *id.insert(self.index.reserve().map_err(shared_error)?),
            };
            let admission = stage.admit(page_id, host, &judgement);
            let site = SiteHash::of(host);
            let cutoff = stage_sentence_cutoff();
            let postings: Vec<Vec<u8>> = snapshot
                .postings
                .iter()
                .map(|stored| {
                    let mut posting = stored
                        .as_deref()
                        .and_then(SentencePosting::from_bytes)
                        .unwrap_or_default();
                    posting.add(page_id, site, &cutoff);
                    posting.to_bytes()
                })
                .collect();
            let links = pack_links(admission.links.as_deref());
            let admitted = self
                .index
                .admit(
                    &probe,
                    snapshot.version,
                    &Admission {
                        id: page_id,
                        fingerprint: probe.fingerprint,
                        exact: probe.exact.as_deref(),
                        url,
                        text: admission.text.as_deref().unwrap_or(""),
                        links: &links,
                        postings: &postings,
                    },
                )
                .map_err(shared_error)?;
            match admitted {
                Admitted::Kept(_) => {
                    return Ok(SharedJudgement {
                        judgement,
                        kept: Some(page_id),
                        original_url: None,
                        matches,
                    });
                }
                Admitted::Conflict => {
                    self.conflicts += 1;
                    conflicts += 1;
                    if conflicts > MAX_CONFLICTS {
                        // Each conflict means another page was admitted meanwhile; this many in
                        // a row for one page means the index and the judgement disagree.
                        return Err(EngineError::Shared(format!(
                            "{url}: its admission to the job's index conflicted {conflicts} times \
                             in a row"
                        )));
                    }
                    analysis = judgement.analysis;
                }
            }
        }
    }
}

/// The kept pages as the index holds them, at the snapshot a page is judged against.
struct IndexOriginals<'a> {
    index: RefCell<&'a mut RedisIndex>,
    snapshot: &'a Snapshot,
    probe: &'a PageKeys,
    pages: RefCell<HashMap<u64, Option<StoredPage>>>,
    /// The sentence matches the candidates were ranked from.
    matches: MatchCount,
    /// A kept page that is no original of this one: its own earlier admission.
    hidden: Option<u64>,
}

impl IndexOriginals<'_> {
    fn page(&self, id: u64) -> Result<Option<StoredPage>, EngineError> {
        if let Some(page) = self.pages.borrow().get(&id) {
            return Ok(page.clone());
        }
        let page = self.index.borrow_mut().page(id).map_err(shared_error)?;
        self.pages.borrow_mut().insert(id, page.clone());
        Ok(page)
    }
}

impl Originals for IndexOriginals<'_> {
    type Error = EngineError;

    fn text(&self, seq: u64) -> Result<Option<String>, EngineError> {
        Ok(self.page(seq)?.map(|p| p.text).filter(|t| !t.is_empty()))
    }

    fn exact(&self, key: ExactKey) -> Result<Option<u64>, EngineError> {
        // The stage asks about the page's own key, which the snapshot read.
        Ok(self
            .snapshot
            .exact
            .filter(|&id| Some(id) != self.hidden)
            .filter(|_| self.probe.exact.as_deref() == Some(&key.0.to_be_bytes()[..])))
    }

    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, EngineError> {
        Ok(self.page(seq)?.map(|p| Fingerprint::new(p.fingerprint)))
    }

    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, EngineError> {
        Ok(self.page(seq)?.and_then(|p| unpack_links(&p.links)))
    }

    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, EngineError> {
        let postings: Vec<SentencePosting> = fingerprints
            .iter()
            .filter_map(|fp| {
                let i = self.probe.sentences.iter().position(|s| s == fp)?;
                self.snapshot.postings.get(i)?.as_deref()
            })
            .filter_map(SentencePosting::from_bytes)
            .collect();
        let mut candidates = rank_candidates(postings.iter().map(SentencePosting::documents));
        candidates.retain(|&(id, _)| Some(id) != self.hidden);
        self.matches.add(&candidates);
        Ok(candidates)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker of job `job` on the Redis at `url`: its index, and a dedup stage of its own.
    fn worker(url: &str, name: &str) -> (SharedDedup, DedupStage) {
        use nearcrawl_redis_job::{JobName, Patience, Redis, RedisTarget};
        let redis = Redis::connect(
            RedisTarget::parse(url).unwrap(),
            Patience::default(),
            Default::default(),
        )
        .unwrap();
        let config = nearcrawl_dedup::AnalyzerConfig::default();
        let k = config.max_distance;
        let index = RedisIndex::open(redis, JobName::new("own").unwrap(), name, k).unwrap();
        let analyzer = std::sync::Arc::new(nearcrawl_dedup::Analyzer::new(config));
        let stage = DedupStage::new(
            analyzer,
            nearcrawl_dedup::DedupStageConfig::default(),
            [],
            [],
            super::super::SHARED,
        )
        .unwrap();
        (SharedDedup::new(index, true).unwrap(), stage)
    }

    #[test]
    fn a_page_admitted_by_a_worker_that_died_is_kept_again_not_a_copy_of_itself() {
        let server = nearcrawl_redis_job::server::LocalRedis::start(false).unwrap();
        let text: String = (0..12)
            .map(|i| format!("Sentence {i} tells of the river, the stone and lantern {i}. "))
            .collect();
        let (mut dead, mut dead_stage) = worker(&server.url(), "dead");
        let analysis = dead_stage.analyzer().analyze_text(&text);
        let first = dead
            .judge(
                &mut dead_stage,
                analysis,
                ("http://h.test/p4", "h.test"),
                None,
            )
            .unwrap();
        let Some(kept) = first.kept else {
            panic!("kept: {:?}", first.judgement.verdict)
        };
        // The worker died before queueing the page's links; its lease ended, and another
        // worker fetched the URL again: the same page, kept under the same admission, so
        // its links are queued as a unique page's.
        let (mut other, mut stage) = worker(&server.url(), "other");
        let analysis = stage.analyzer().analyze_text(&text);
        let again = other
            .judge(&mut stage, analysis, ("http://h.test/p4", "h.test"), None)
            .unwrap();
        assert_eq!(again.judgement.verdict, nearcrawl_dedup::Likeness::Unique);
        assert_eq!(again.kept, Some(kept));
        // Another URL with the same text is still its copy.
        let analysis = stage.analyzer().analyze_text(&text);
        let copy = other
            .judge(&mut stage, analysis, ("http://h.test/copy", "h.test"), None)
            .unwrap();
        assert_ne!(copy.judgement.verdict, nearcrawl_dedup::Likeness::Unique);
        assert_eq!(copy.original_url.as_deref(), Some("http://h.test/p4"));
    }

    /// A page's index read ahead (on the pool) and an original of it admitted by another
    /// worker before the page is judged: judged unique on the stale read, its admission
    /// conflicts, and judged again it is the other's copy.
    #[test]
    fn a_page_judged_on_a_stale_read_ahead_is_judged_again_when_its_admission_conflicts() {
        let server = nearcrawl_redis_job::server::LocalRedis::start(false).unwrap();
        let text: String = (0..12)
            .map(|i| format!("Sentence {i} speaks of the harbour, the rope and bell {i}. "))
            .collect();
        let (mut late, mut late_stage) = worker(&server.url(), "late");
        let mut analysis = late_stage.analyzer().analyze_text(&text);
        let read = late.reads().read(&mut analysis);
        assert!(read.as_ref().is_some_and(|(_, s)| s.near.is_empty()));
        let (mut first, mut first_stage) = worker(&server.url(), "first");
        let original = first_stage.analyzer().analyze_text(&text);
        let kept = first
            .judge(
                &mut first_stage,
                original,
                ("http://h.test/a", "h.test"),
                None,
            )
            .unwrap();
        assert!(kept.kept.is_some());
        let judged = late
            .judge(
                &mut late_stage,
                analysis,
                ("http://h.test/b", "h.test"),
                read,
            )
            .unwrap();
        assert_ne!(judged.judgement.verdict, nearcrawl_dedup::Likeness::Unique);
        assert_eq!(judged.original_url.as_deref(), Some("http://h.test/a"));
        assert_eq!(late.conflicts, 1);
        // Read ahead after the original was kept: a copy at once, with no conflict.
        let mut analysis = late_stage.analyzer().analyze_text(&text);
        let read = late.reads().read(&mut analysis);
        let copy = late
            .judge(
                &mut late_stage,
                analysis,
                ("http://h.test/c", "h.test"),
                read,
            )
            .unwrap();
        assert_eq!(copy.original_url.as_deref(), Some("http://h.test/a"));
        assert_eq!(late.conflicts, 1);
    }

    #[test]
    fn link_keys_round_trip_and_absent_stays_absent() {
        assert_eq!(unpack_links(&pack_links(None)), None);
        assert_eq!(unpack_links(&pack_links(Some(&[]))), Some(vec![]));
        assert_eq!(
            unpack_links(&pack_links(Some(&[1, u64::MAX]))),
            Some(vec![1, u64::MAX])
        );
    }
}
