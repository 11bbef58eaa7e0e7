//! The judge: the dedup stage (templates, the fingerprint index, verification), the kept
//! pages' sentence postings and the exact keys of the pages kept last. It judges a page
//! against the pages kept before it and keeps a unique one, reading the store's kept pages
//! through [`StoreOriginals`]; the coordinator hands it pages and takes back judgements and
//! the writes a kept page adds to its decision's commit. Judging and keeping are a third of
//! the coordinator's thread (docs/BENCHMARKS.md, "The coordinator's CPU per page"): a
//! component that owns all of their state is what can later run them elsewhere.

use std::sync::Arc;

use nearcrawl_dedup::{
    Admission, DedupStage, IndexedSentences, Judgement, Originals, PageAnalysis,
};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_store::{Commit, CrawlStore, UniquePage};
use nearcrawl_text::ExactKey;

use super::prejudge::{Admitted, Prejudge, Prejudged};
use super::sentences::{MatchCount, PostingsReader, Prefetched, ReadPostings, SentencePostings};
use crate::error::EngineError;

mod away;

pub(super) use away::{Away, Judging, hand_over};

/// The dedup stage's state, and what judging a page reads besides the store.
pub(super) struct Judge {
    store: Arc<dyn CrawlStore>,
    /// Templates, the fingerprint index, verification.
    stage: DedupStage,
    /// Kept pages by sentence fingerprint: in the store, a bounded part in memory.
    sentences: SentencePostings,
    /// The exact keys of the pages kept last, for what the pool read of a page's judgement
    /// (see [`super::prejudge`]).
    admitted: Admitted,
    /// Pages kept whose commits the store's reads may not find yet (the judge on a thread
    /// of its own keeps a page before the coordinator commits it: [`away`]).
    pending: Pending,
}

/// What the store will answer for kept pages not committed yet: a handful at most.
#[derive(Default)]
struct Pending(Vec<Admission>);

impl Pending {
    fn page(&self, seq: u64) -> Option<&Admission> {
        self.0.iter().find(|a| a.seq == seq)
    }

    fn exact(&self, key: ExactKey) -> Option<u64> {
        let found = self
            .0
            .iter()
            .find(|a| a.fingerprint.is_some_and(|(_, k)| k == key));
        found.map(|a| a.seq)
    }

    /// Page `seq` is committed: the store answers for it.
    fn landed(&mut self, seq: u64) {
        self.0.retain(|a| a.seq != seq);
    }
}

/// Adds what keeping a page (`admission`: its id, fingerprints, text and link keys) writes
/// to the store to `commit`, its decision's.
pub(super) fn commit_admission(admission: Admission, commit: &mut Commit) {
    let seq = admission.seq;
    if let Some((simhash, key)) = admission.fingerprint {
        commit.unique = Some(UniquePage {
            seq,
            simhash: simhash.bits(),
        });
        commit.exact_key = Some((key.0.to_be_bytes(), seq));
    }
    commit.unique_text = admission.text.map(|text| (seq, text));
    commit.unique_links = admission.links.map(|keys| (seq, keys));
}

/// A page judged: the stage's judgement, the sentence postings read for it (kept with it if
/// it is kept) and the sentence matches its candidates were ranked from.
pub(super) struct Judged {
    pub(super) judgement: Judgement,
    pub(super) postings: ReadPostings,
    pub(super) matches: u64,
}

impl Judge {
    /// The judge of `store`'s kept pages, indexed in `stage`: their sentence postings
    /// opened (the filter of their keys filled).
    pub(super) fn open(
        store: Arc<dyn CrawlStore>,
        stage: DedupStage,
    ) -> Result<Judge, EngineError> {
        let sentences = SentencePostings::open(store.as_ref())?;
        Ok(Judge {
            store,
            stage,
            sentences,
            admitted: Admitted::default(),
            pending: Pending::default(),
        })
    }

    pub(super) fn stage(&self) -> &DedupStage {
        &self.stage
    }

    /// The stage, for a shared job's judgement against the job's index.
    pub(super) fn stage_mut(&mut self) -> &mut DedupStage {
        &mut self.stage
    }

    /// What the blocking pool reads a page's postings with (the units of at most
    /// `dedup.max_candidates` of the candidates they name computed), and works out what it
    /// can of its judgement with.
    pub(super) fn ahead(&self) -> (PostingsReader, Prejudge) {
        let units = self.stage.units_cache();
        let candidates = self.stage.config().max_candidates.max(1);
        let verify = self.stage.analyzer().config().verify_config;
        let postings = self
            .sentences
            .reader(Arc::clone(&self.store), units.clone(), candidates);
        let prejudge = Prejudge::new(Arc::clone(&self.store), &self.admitted, units, verify);
        (postings, prejudge)
    }

    /// Judges `analysis` against the pages kept so far, with the postings and answers the
    /// pool read for it (taken where they still hold).
    pub(super) fn judge(
        &mut self,
        analysis: PageAnalysis,
        postings: Option<Prefetched>,
        prejudged: Option<Prejudged>,
    ) -> Result<Judged, EngineError> {
        let originals = StoreOriginals {
            store: self.store.as_ref(),
            pending: &self.pending,
            sentences: &self.sentences,
            postings: self.sentences.prefetched(postings),
            matches: MatchCount::default(),
            prejudged: prejudged.map(|p| (p, &self.admitted)),
        };
        let judgement = self.stage.judge_analysed(analysis, &originals)?;
        Ok(Judged {
            judgement,
            matches: originals.matches.get(),
            postings: originals.postings,
        })
    }

    /// Judges `text` (a page's text, not its HTML) against the pages kept so far.
    pub(super) fn judge_text(&mut self, text: &str) -> Result<Judged, EngineError> {
        let analysis = self.stage.analyzer().analyze_text(text);
        self.judge(analysis, None, None)
    }

    /// Keeps page `seq` of `host`, judged unique: its fingerprints, text, sentence postings
    /// (`postings`: those read while judging it) and link keys join the index and reach the
    /// store with `commit`.
    pub(super) fn keep(
        &mut self,
        seq: u64,
        host: &str,
        judgement: &Judgement,
        postings: ReadPostings,
        commit: &mut Commit,
    ) -> Result<(), EngineError> {
        let mut admission = self.stage.admission(seq, host, judgement);
        let sentences = admission.sentences.take();
        self.index(&admission, sentences, postings)?;
        commit_admission(admission, commit);
        Ok(())
    }

    /// Indexes page `admission` (its simhash; its sentence postings, from `postings` read
    /// while judging it).
    fn index(
        &mut self,
        admission: &Admission,
        sentences: Option<IndexedSentences>,
        postings: ReadPostings,
    ) -> Result<(), EngineError> {
        self.stage.index_admitted(admission);
        if let Some(indexed) = &sentences {
            self.sentences
                .keep(self.store.as_ref(), postings, admission.seq, indexed)?;
            self.sentences.grow(&self.store)?;
        }
        Ok(())
    }

    /// Page `seq`, kept under exact key `key`, is committed (the store's reads find it).
    pub(super) fn kept(&mut self, key: u128, seq: u64) {
        self.admitted.kept(key, seq);
        self.pending.landed(seq);
    }

    /// On opening a job: its kept pages whose postings are not in the store (a killed run's
    /// last ones, or every page of a store from before the postings) are indexed from their
    /// stored texts and written, as every page before `through` is decided.
    pub(super) fn store_sentences(
        &mut self,
        uniques: &[UniquePage],
        through: u64,
    ) -> Result<(), EngineError> {
        if !self.stage.analyzer().config().verify {
            return Ok(());
        }
        let stage = &self.stage;
        self.sentences
            .index_unwritten(&self.store, uniques, |text| {
                stage.sentence_fingerprints(text)
            })?;
        self.write_sentences(through)
    }

    /// Writes the changed postings (when the crawl stops, or on opening), a growing key
    /// filter put in place first: every page before `through` is decided.
    pub(super) fn write_sentences(&mut self, through: u64) -> Result<(), EngineError> {
        self.sentences.settle()?;
        self.sentences.write_out(&self.store, through)?;
        self.sentences.land(true)
    }

    /// A decision has landed, and every page before `through` is decided: a batch of
    /// postings written meanwhile is noted as landed, and when enough postings changed, they
    /// are written out (behind the coordinator).
    pub(super) fn write_postings_when_due(&mut self, through: u64) -> Result<(), EngineError> {
        self.sentences.land(false)?;
        if self.sentences.due() {
            self.sentences.write_out(&self.store, through)?;
        }
        Ok(())
    }
}

/// The crawl's store as the dedup stage reads it: the texts, exact keys, simhashes and
/// link keys of the unique pages it admitted.
/// Sentence postings read while judging are kept for when the page is kept.
struct StoreOriginals<'a> {
    store: &'a dyn CrawlStore,
    /// Kept pages the store may not answer for yet.
    pending: &'a Pending,
    sentences: &'a SentencePostings,
    postings: ReadPostings,
    /// The sentence matches the candidates were ranked from
    /// ([`crate::progress::Progress::sentence_matches`]).
    matches: MatchCount,
    /// What the pool worked out of the page's judgement, and the pages kept since.
    prejudged: Option<(Prejudged, &'a Admitted)>,
}

impl Originals for StoreOriginals<'_> {
    type Error = EngineError;
    fn text(&self, seq: u64) -> Result<Option<String>, EngineError> {
        if let Some(kept) = self.pending.page(seq) {
            return Ok(kept.text.clone());
        }
        Ok(self.store.unique_text(seq)?)
    }
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, EngineError> {
        if let Some(seq) = self.pending.exact(key) {
            return Ok(Some(seq));
        }
        if let Some((prejudged, admitted)) = &self.prejudged
            && let Some(found) = admitted.exact(prejudged, key)
        {
            return Ok(found);
        }
        Ok(self.store.exact_original(&key.0.to_be_bytes())?)
    }
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, EngineError> {
        if let Some(kept) = self.pending.page(seq) {
            return Ok(kept.fingerprint.map(|(simhash, _)| simhash));
        }
        Ok(self.store.unique_simhash(seq)?.map(Fingerprint::new))
    }
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, EngineError> {
        if let Some(kept) = self.pending.page(seq) {
            return Ok(kept.links.clone());
        }
        Ok(self.store.link_keys(seq)?)
    }
    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, EngineError> {
        let candidates = self
            .sentences
            .candidates(self.store, &self.postings, fingerprints)?;
        self.matches.add(&candidates);
        Ok(candidates)
    }
    fn verified(&self, seq: u64) -> Option<Option<f64>> {
        self.prejudged.as_ref()?.0.verified(seq)
    }
}
