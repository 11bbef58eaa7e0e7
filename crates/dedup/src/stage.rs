//! The dedup stage: one page at a time, is it a copy of a page already kept, and which of
//! its links are worth following?
//!
//! [`DedupStage`] owns what the question needs in memory: the permuted-table Hamming index of
//! kept simhashes (the one structure that grows with the pages kept, 8 bytes per table per
//! page), the LCS verifier, the host template model (bounded) and a cache of kept pages'
//! verification units. What lives on disk in a crawl (kept texts, exact keys, link keys, the
//! sentence-fingerprint postings) it reaches through [`Originals`]; it does no I/O itself. [`DedupStage::judge`] decides a page ([`Judgement`]); [`DedupStage::admit`] keeps a
//! unique one and says what to persist ([`Admission`]).
//!
//! Its steps have files of their own: `page.rs` analyses a page against its host's template
//! model ([`PageAnalyzer`], on any thread), `links.rs` matches a duplicate's links with its
//! original's ([`Follow`]), `originals.rs` is what the stage reads of kept pages
//! ([`Originals`], [`MemoryOriginals`]).

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nearcrawl_extract::{BlockKey, TemplateModel};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::{HammingIndex, IndexError, IndexParams, Match};
use nearcrawl_link_policy::LinkMatch;
use nearcrawl_text::ExactKey;
use nearcrawl_verify::{CandidateIndex, SentenceConfig, Verifier, sentence_fingerprints};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::analyze::{Analyzer, Extracted, PageAnalysis, Prepared};
use crate::config::{DedupStageConfig, DuplicateOutlinks};
use crate::settings::{stage_sentence_config, stage_sentence_cutoff, stage_template_config};
use crate::timing::{Lap, Stage};
use crate::units::{UNITS_CACHE_UNITS, UnitsCache};

mod links;
mod originals;
mod page;

use self::links::*;
pub use self::links::{Follow, Followed, link_keys, same_site};
pub use self::originals::{MemoryOriginals, Originals};
pub use self::page::{PageAnalyzer, analyze_marked, block_keys};

/// A kept page's sentence fingerprints, to index so that later pages sharing its long
/// sentences find it ([`Originals::sentence_candidates`]): in a [`CandidateIndex`], or
/// fingerprint by fingerprint as [`nearcrawl_verify::SentencePosting`]s with the
/// [`stage_sentence_cutoff`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexedSentences {
    /// The page's site (its host), for the cut-off's site count.
    pub site: String,
    /// Its sentence fingerprints, sorted and distinct.
    pub fingerprints: Vec<u128>,
}

/// What to persist of an admitted page: what [`Originals`] must answer for it later.
#[derive(Clone, Debug, PartialEq)]
pub struct Admission {
    /// The page's id (the crawl's record number).
    pub seq: u64,
    /// Its simhash and exact key, when it has text (a page without tokens is never an
    /// original).
    pub fingerprint: Option<(Fingerprint, ExactKey)>,
    /// Its verification text (verification on, page with text).
    pub text: Option<String>,
    /// Its sentence fingerprints (verification on, page with text).
    pub sentences: Option<IndexedSentences>,
    /// Its link keys ([`link_keys`]), sorted and deduplicated (`duplicate_outlinks = "new"`).
    pub links: Option<Vec<u64>>,
}

/// How a page relates to the pages kept before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Likeness {
    /// A copy of no kept page: kept in turn, its links followed.
    Unique,
    /// Same tokens in the same order as a kept page.
    Exact,
    /// A near-duplicate of a kept page: the LCS verification says similar (or, with
    /// verification off, the simhashes are within the configured distance).
    Near,
}

/// The page a duplicate copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Original {
    /// A page kept by this stage: its id.
    Kept(u64),
    /// A page of an index shared across jobs, known by fingerprint only: its position there.
    Shared(u64),
}

/// A judgement's verdict as a record writes it.
impl From<Likeness> for nearcrawl_records::Verdict {
    fn from(verdict: Likeness) -> nearcrawl_records::Verdict {
        match verdict {
            Likeness::Unique => nearcrawl_records::Verdict::Unique,
            Likeness::Exact => nearcrawl_records::Verdict::Exact,
            Likeness::Near => nearcrawl_records::Verdict::Near,
        }
    }
}

/// The stage's decision about one page.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// Unique, exact or near.
    pub verdict: Likeness,
    /// The page it copies (duplicates).
    pub original: Option<Original>,
    /// Simhash Hamming distance to the original, when the original's simhash is known.
    pub distance: Option<u32>,
    /// Similarity to the original in 0..1: the LCS resemble rate when verified, else
    /// `1 - distance / 64`.
    pub similarity: Option<f64>,
    /// Which of its links to follow.
    pub follow: Follow,
    /// The page as fingerprinted: text without the host's template, tokens, simhash, facts.
    pub analysis: PageAnalysis,
}

/// The dedup stage. See the module documentation.
pub struct DedupStage {
    config: DedupStageConfig,
    /// Kept simhashes; payloads are page ids, or `shared_tag | position` for a shared index.
    index: HammingIndex,
    shared_tag: u64,
    /// How sentence fingerprints are taken (their postings are the [`Originals`]').
    sentence_config: SentenceConfig,
    /// LCS verification, its work memory kept from pair to pair.
    verifier: Verifier,
    /// Template removal and tokenizing, shareable with the threads that analyse pages.
    pages: PageAnalyzer,
    /// Verification units of recently verified originals, shared with the threads that
    /// analyse pages.
    units: UnitsCache,
}

/// The memory the index of kept fingerprints may take per kept page: the one thing a crawl
/// holds in memory for every page (issue 22).
pub const INDEX_BYTES_PER_PAGE: u64 = 100;

/// Kept pages the index's design is chosen for: its query cost is estimated at this size.
const INDEX_DESIGN_PAGES: u64 = 1 << 24;

/// The index's design for radius `k`: the one with the cheapest queries
/// ([`IndexParams::auto`]) within [`INDEX_BYTES_PER_PAGE`]. For k = 3 that is Manku et
/// al.'s 4 tables: 42 to 78 bytes per page measured at 2^24 to 2^26 pages, where the 10-table
/// design took 108 to 129, for a first match in 1 to 2 us instead of 0.8 to 0.9
/// (docs/BENCHMARKS.md, "The index at scale"), next to the 300 us or so a page costs. A
/// radius with no design in the budget (k of 8 or more) gets the pigeonhole of k + 1 blocks,
/// the design with the fewest tables.
pub fn index_design(k: u32) -> Result<IndexParams, IndexError> {
    IndexParams::auto(
        INDEX_DESIGN_PAGES,
        k,
        INDEX_BYTES_PER_PAGE * INDEX_DESIGN_PAGES,
    )
    .or_else(|_| IndexParams::single_level(k, k + 1, 1))
}

impl std::fmt::Debug for DedupStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DedupStage")
            .field("config", &self.config)
            .field("indexed", &self.index.len())
            .finish_non_exhaustive()
    }
}

impl DedupStage {
    /// A stage whose index holds `kept` (simhash, page id) pairs and, tagged with
    /// `shared_tag` (a bit no page id uses), the entries of a shared index.
    pub fn new(
        analyzer: Arc<Analyzer>,
        config: DedupStageConfig,
        kept: impl IntoIterator<Item = (Fingerprint, u64)>,
        shared: impl IntoIterator<Item = (Fingerprint, u64)>,
        shared_tag: u64,
    ) -> Result<DedupStage, IndexError> {
        let params = index_design(analyzer.config().max_distance)?;
        let index = HammingIndex::from_entries(
            params,
            kept.into_iter()
                .chain(shared.into_iter().map(|(fp, n)| (fp, shared_tag | n))),
        );
        Ok(DedupStage {
            verifier: Verifier::new(analyzer.config().verify_config),
            config,
            index,
            shared_tag,
            sentence_config: stage_sentence_config(),
            units: UnitsCache::new(Arc::clone(&analyzer), UNITS_CACHE_UNITS),
            pages: PageAnalyzer {
                analyzer,
                templates: Arc::new(Mutex::new(TemplateModel::new(stage_template_config()))),
            },
        })
    }

    /// The analyzer pages are analysed with.
    pub fn analyzer(&self) -> &Arc<Analyzer> {
        &self.pages.analyzer
    }

    /// The configuration.
    pub fn config(&self) -> &DedupStageConfig {
        &self.config
    }

    /// The index of kept simhashes (to save it as a shared index).
    pub fn index(&self) -> &HammingIndex {
        &self.index
    }

    /// The sentence fingerprints of a kept page's verification text, as
    /// [`Admission::sentences`] gives them (to index again the pages an earlier run kept).
    pub fn sentence_fingerprints(&self, text: &str) -> Vec<u128> {
        sentence_fingerprints(text, &self.sentence_config)
    }

    /// The half of the stage that analyses pages, to run on other threads.
    pub fn page_analyzer(&self) -> PageAnalyzer {
        self.pages.clone()
    }

    /// [`PageAnalyzer::analyze`] on this stage's template model.
    pub fn analyze(&self, host: &str, page: Extracted) -> PageAnalysis {
        self.pages.analyze(host, page)
    }

    /// Judges a page from `host` against every page kept so far: exact key, then the
    /// nearest simhashes within the distance (LCS-verified), then pages sharing long
    /// sentences (LCS-verified). Nothing is kept: [`DedupStage::admit`] does that.
    pub fn judge<O: Originals>(
        &mut self,
        host: &str,
        page: Extracted,
        originals: &O,
    ) -> Result<Judgement, O::Error> {
        let analysis = self.analyze(host, page);
        self.judge_analysed(analysis, originals)
    }

    /// [`DedupStage::judge`] for a page already through [`DedupStage::analyze`].
    pub fn judge_analysed<O: Originals>(
        &mut self,
        analysis: PageAnalysis,
        originals: &O,
    ) -> Result<Judgement, O::Error> {
        self.judge_with(analysis, None, originals)
    }

    /// [`DedupStage::judge_analysed`] with the index's answer for the page's simhash already
    /// known: `candidates` must be every kept page within the distance, as
    /// [`HammingIndex::query`] would return them (say from one
    /// [`HammingIndex::query_batch`] for many pages, plus the pages kept since).
    pub fn judge_with_candidates<O: Originals>(
        &mut self,
        analysis: PageAnalysis,
        candidates: Vec<Match>,
        originals: &O,
    ) -> Result<Judgement, O::Error> {
        self.judge_with(analysis, Some(candidates), originals)
    }

    fn judge_with<O: Originals>(
        &mut self,
        mut analysis: PageAnalysis,
        candidates: Option<Vec<Match>>,
        originals: &O,
    ) -> Result<Judgement, O::Error> {
        let clock = Instant::now();
        if self.pages.analyzer.config().verify && analysis.prepared.is_none() {
            analysis.prepared = Some(Prepared::of(&analysis));
        }
        let mut index_time = Duration::ZERO;
        let found = self.find_original(&analysis, candidates, originals, &mut index_time)?;
        let searched = clock.elapsed();
        analysis.times.add(Stage::Index, index_time);
        analysis
            .times
            .add(Stage::Verify, searched.saturating_sub(index_time));
        let Some(found) = found else {
            return Ok(Judgement {
                verdict: Likeness::Unique,
                original: None,
                distance: None,
                similarity: None,
                follow: Follow::All,
                analysis,
            });
        };
        let distance = match (found.distance, found.original) {
            (Some(d), _) => Some(d),
            (None, Original::Kept(seq)) => originals
                .simhash(seq)?
                .map(|fp| fp.distance(analysis.simhash)),
            (None, Original::Shared(_)) => None,
        };
        let follow = match (self.config.enabled, self.config.duplicate_outlinks) {
            (false, _) | (true, DuplicateOutlinks::Keep) => Follow::All,
            (true, DuplicateOutlinks::Skip) => Follow::None,
            (true, DuplicateOutlinks::New) => match found.original {
                Original::Kept(seq) => {
                    let known: HashSet<u64> = originals
                        .link_keys(seq)?
                        .unwrap_or_default()
                        .into_iter()
                        .collect();
                    let (by, in_sequence, surplus) = match &analysis.facts {
                        Some(facts) => {
                            let triples = link_triples(&facts.base, &facts.links);
                            let by = link_match(&facts.links, &triples, &known);
                            let surplus = match by {
                                LinkMatch::Anchor => anchor_surplus(&facts.links, &triples, &known),
                                LinkMatch::Target => HashSet::new(),
                            };
                            (by, in_sequence(&facts.base, &known), surplus)
                        }
                        None => (LinkMatch::Target, false, HashSet::new()),
                    };
                    Follow::NewLinks {
                        known,
                        by,
                        in_sequence,
                        surplus,
                    }
                }
                Original::Shared(_) => Follow::None,
            },
        };
        // The original's simhash and link keys: store lookups, as the index's.
        analysis.times.add(Stage::Index, clock.elapsed() - searched);
        Ok(Judgement {
            verdict: found.verdict,
            original: Some(found.original),
            distance,
            similarity: Some(found.similarity),
            follow,
            analysis,
        })
    }

    /// Keeps a page judged unique under id `seq`, from `host`: indexed (when it has text)
    /// and remembered as an original. Returns what the caller persists so that
    /// [`Originals`] can answer for it.
    pub fn admit(&mut self, seq: u64, host: &str, judgement: &Judgement) -> Admission {
        let admission = self.admission(seq, host, judgement);
        self.index_admitted(&admission);
        admission
    }

    /// Indexes a page admitted elsewhere ([`DedupStage::admission`]): its simhash joins the
    /// index under the admission's id.
    pub fn index_admitted(&mut self, admission: &Admission) {
        if let Some((simhash, _)) = admission.fingerprint {
            self.index.insert(simhash, admission.seq);
        }
    }

    /// What keeping a page judged unique under id `seq` adds, the index left as it is:
    /// [`DedupStage::admit`] is this, then [`DedupStage::index_admitted`].
    pub fn admission(&self, seq: u64, host: &str, judgement: &Judgement) -> Admission {
        let analysis = &judgement.analysis;
        let mut admission = Admission {
            seq,
            fingerprint: None,
            text: None,
            sentences: None,
            links: None,
        };
        if !analysis.tokens.is_empty() {
            admission.fingerprint = Some((analysis.simhash, analysis.exact_key));
            if self.pages.analyzer.config().verify {
                let fingerprints = match &analysis.prepared {
                    Some(prepared) => prepared.sentences.clone(),
                    None => self.sentence_fingerprints(&analysis.text),
                };
                admission.sentences = Some(IndexedSentences {
                    site: host.to_owned(),
                    fingerprints,
                });
                admission.text = Some(analysis.text.clone());
            }
        }
        if self.config.duplicate_outlinks == DuplicateOutlinks::New
            && let Some(facts) = &analysis.facts
        {
            let keys = analysis.link_keys.clone();
            admission.links = Some(keys.unwrap_or_else(|| link_keys(&facts.base, &facts.links)));
        }
        admission
    }

    /// The original a page copies, if any. `index_time` gets the time spent before the
    /// first verification (exact key, Hamming index).
    fn find_original<O: Originals>(
        &mut self,
        analysis: &PageAnalysis,
        given: Option<Vec<Match>>,
        originals: &O,
        index_time: &mut Duration,
    ) -> Result<Option<Found>, O::Error> {
        let clock = Instant::now();
        if analysis.tokens.is_empty() {
            // Pages without text all look alike (the empty page hashes to one value); they
            // are never anyone's duplicate.
            return Ok(None);
        }
        let exact = originals.exact(analysis.exact_key)?;
        *index_time = clock.elapsed();
        if let Some(seq) = exact {
            return Ok(Some(Found {
                verdict: Likeness::Exact,
                original: Original::Kept(seq),
                distance: None,
                similarity: 1.0,
            }));
        }
        if analysis.little_text.is_some() {
            // Too few words of its own for a resemblance to mean anything: exact copies only.
            // A kept page with the same main text counts (kept pages with little text are
            // keyed by their title, text and link targets, so these never match each other).
            let copied = match analysis.main_key {
                Some(key) => originals.exact(key)?,
                None => None,
            };
            *index_time = clock.elapsed();
            if let Some(seq) = copied {
                return Ok(Some(Found {
                    verdict: Likeness::Exact,
                    original: Original::Kept(seq),
                    distance: None,
                    similarity: 1.0,
                }));
            }
            return Ok(None);
        }
        let max_candidates = self.config.max_candidates.max(1);
        let mut candidates = match given {
            Some(candidates) => candidates,
            None => self.index.query(analysis.simhash),
        };
        candidates.sort_by_key(|m| (m.distance, m.payload));
        candidates.truncate(max_candidates);
        *index_time = clock.elapsed();
        let verify = self.pages.analyzer.config().verify;
        let mut tried: HashSet<u64> = HashSet::new();
        // The page's verification units, computed once for all its candidates.
        let computed;
        let units: &[u64] = match &analysis.prepared {
            Some(prepared) => &prepared.units,
            None if verify => {
                computed = analysis.units();
                &computed
            }
            None => &[],
        };
        for candidate in &candidates {
            let by_distance = 1.0 - f64::from(candidate.distance) / 64.0;
            if candidate.payload & self.shared_tag != 0 {
                // A page of the shared index: its fingerprint is all there is to compare.
                return Ok(Some(Found {
                    verdict: Likeness::Near,
                    original: Original::Shared(candidate.payload & !self.shared_tag),
                    distance: Some(candidate.distance),
                    similarity: by_distance,
                }));
            }
            tried.insert(candidate.payload);
            let similarity = if verify {
                self.verified(units, candidate.payload, by_distance, originals)?
            } else {
                Some(by_distance)
            };
            if let Some(similarity) = similarity {
                return Ok(Some(Found {
                    verdict: Likeness::Near,
                    original: Original::Kept(candidate.payload),
                    distance: Some(candidate.distance),
                    similarity,
                }));
            }
        }
        if !verify {
            return Ok(None);
        }
        // Step 1 of the LCS method: pages sharing long sentences, however far their simhashes
        // (edited copies move a 64-bit simhash by 5 to 20 bits).
        let sentence_candidates = match &analysis.prepared {
            Some(prepared) => originals.sentence_candidates(&prepared.sentences)?,
            None => originals.sentence_candidates(&self.sentence_fingerprints(&analysis.text))?,
        };
        for (candidate, _shared) in sentence_candidates.into_iter().take(max_candidates) {
            if !tried.insert(candidate) {
                continue;
            }
            if let Some(similarity) = self.verified(units, candidate, 0.0, originals)? {
                return Ok(Some(Found {
                    verdict: Likeness::Near,
                    original: Original::Kept(candidate),
                    distance: None,
                    similarity,
                }));
            }
        }
        Ok(None)
    }

    /// LCS verification of a page's units against kept page `seq`: its resemble rate when
    /// similar (the answer `originals` worked out beforehand, when they did). A page kept
    /// without its text (indexed by a job run without verification) counts as similar at
    /// `fallback`.
    fn verified<O: Originals>(
        &mut self,
        units: &[u64],
        seq: u64,
        fallback: f64,
        originals: &O,
    ) -> Result<Option<f64>, O::Error> {
        if let Some(answer) = originals.verified(seq) {
            return Ok(answer);
        }
        let Some(other) = self.original_units(seq, originals)? else {
            return Ok(Some(fallback));
        };
        Ok(self.verifier.similarity(units, &other))
    }

    /// The verification units of kept page `seq`, computed from its text once and cached.
    fn original_units<O: Originals>(
        &mut self,
        seq: u64,
        originals: &O,
    ) -> Result<Option<Arc<[u64]>>, O::Error> {
        self.units.get_or_compute(seq, || originals.text(seq))
    }

    /// The cache of the originals' verification units, for the threads that analyse pages
    /// to fill with a page's likely candidates before it is judged.
    pub fn units_cache(&self) -> UnitsCache {
        self.units.clone()
    }
}

/// A duplicate found, before its distance and outlinks are worked out.
struct Found {
    verdict: Likeness,
    original: Original,
    distance: Option<u32>,
    similarity: f64,
}

#[cfg(test)]
mod tests;
