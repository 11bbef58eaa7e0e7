//! The dedup stage: one page at a time, is it a copy of a page already kept, and which of
//! its links are worth following?
//!
//! [`DedupStage`] owns what the question needs in memory: the permuted-table Hamming index of
//! kept simhashes (the one structure that grows with the pages kept, 8 bytes per table per
//! page), the LCS verifier, the host template model (bounded) and a cache of kept pages'
//! verification units. What lives on disk in a crawl (kept texts, exact keys, link keys, the
//! sentence-fingerprint postings) it reaches through [`Originals`]; it does no I/O itself. [`DedupStage::judge`] decides a page ([`Judgement`]); [`DedupStage::admit`] keeps a
//! unique one and says what to persist ([`Admission`]).

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

/// Fewer characters of its own than this (once its host's template is removed), and a page
/// is judged by exact key only ([`PageAnalysis::little_text`]).
const MIN_OWN_TEXT: usize = 100;

/// The keys of a page's blocks, as the template model knows them.
pub fn block_keys(page: &Extracted) -> Vec<BlockKey> {
    page.extraction
        .iter()
        .flat_map(|e| &e.blocks)
        .map(|b| BlockKey::of(&b.text))
        .collect()
}

/// What the stage reads of the pages it kept earlier. The crawl keeps them in its store; tests
/// and `nearcrawl compare` in a [`MemoryOriginals`].
pub trait Originals {
    /// Why a read failed.
    type Error;
    /// The text kept for page `seq` (its verification text), if any.
    fn text(&self, seq: u64) -> Result<Option<String>, Self::Error>;
    /// The kept page with this exact-duplicate key.
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, Self::Error>;
    /// The simhash of kept page `seq`.
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, Self::Error>;
    /// The link keys ([`link_keys`]) of kept page `seq`.
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, Self::Error>;
    /// Kept pages that share sentence fingerprints ([`Admission::sentences`]) with these
    /// (sorted, distinct), with how many, most shared first ([`CandidateIndex::candidates`],
    /// or [`nearcrawl_verify::rank_candidates`] over stored postings).
    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, Self::Error>;
}

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

/// Kept pages in memory.
#[derive(Clone, Debug)]
pub struct MemoryOriginals {
    texts: HashMap<u64, String>,
    exact: HashMap<u128, u64>,
    simhashes: HashMap<u64, Fingerprint>,
    links: HashMap<u64, Vec<u64>>,
    sentences: CandidateIndex,
}

impl Default for MemoryOriginals {
    fn default() -> Self {
        MemoryOriginals {
            texts: HashMap::new(),
            exact: HashMap::new(),
            simhashes: HashMap::new(),
            links: HashMap::new(),
            sentences: CandidateIndex::new(stage_sentence_cutoff()),
        }
    }
}

impl MemoryOriginals {
    /// Keeps what an admission says to keep.
    pub fn keep(&mut self, admission: Admission) {
        if let Some((simhash, key)) = admission.fingerprint {
            self.simhashes.insert(admission.seq, simhash);
            self.exact.entry(key.0).or_insert(admission.seq);
        }
        if let Some(text) = admission.text {
            self.texts.insert(admission.seq, text);
        }
        if let Some(links) = admission.links {
            self.links.insert(admission.seq, links);
        }
        if let Some(sentences) = admission.sentences {
            self.sentences
                .insert(admission.seq, &sentences.site, &sentences.fingerprints);
        }
    }
}

impl Originals for MemoryOriginals {
    type Error = Infallible;
    fn text(&self, seq: u64) -> Result<Option<String>, Infallible> {
        Ok(self.texts.get(&seq).cloned())
    }
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, Infallible> {
        Ok(self.exact.get(&key.0).copied())
    }
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, Infallible> {
        Ok(self.simhashes.get(&seq).copied())
    }
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, Infallible> {
        Ok(self.links.get(&seq).cloned())
    }
    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, Infallible> {
        Ok(self.sentences.candidates(fingerprints))
    }
}

/// How a page relates to the pages kept before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
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

/// Which links of a judged page are followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Follow {
    /// All (unique pages, the `--no-dedup` baseline, `duplicate_outlinks = "keep"`).
    All,
    /// None (duplicates with `"skip"`, copies of a shared-index page, and a page a probe found
    /// unchanged, whose links are its counterpart's).
    None,
    /// Those that lead somewhere new (duplicates, `"new"`): see [`Follow::follows`].
    NewLinks {
        /// The [`link_keys`] of the original's links.
        known: HashSet<u64>,
        /// How a link is matched with the original's.
        by: LinkMatch,
        /// The original links to this page: the two are steps of one sequence (days of a
        /// calendar, pages of a listing).
        in_sequence: bool,
        /// Matched by anchor text: the target keys (where they lead) of links whose anchor text
        /// leads to more places here than on the original, those beyond the original's count
        /// (computed by `anchor_surplus`).
        surplus: HashSet<u64>,
    },
}

/// A judgement's verdict as a record writes it.
impl From<Verdict> for nearcrawl_records::Verdict {
    fn from(verdict: Verdict) -> nearcrawl_records::Verdict {
        match verdict {
            Verdict::Unique => nearcrawl_records::Verdict::Unique,
            Verdict::Exact => nearcrawl_records::Verdict::Exact,
            Verdict::Near => nearcrawl_records::Verdict::Near,
        }
    }
}

/// A duplicate's links matched by anchor text lead to the same target this rarely (and at
/// least [`MIN_ALIGNED`] of them match): the sites' URL schemes differ ([`LinkMatch::Anchor`]).
const MIN_SAME_TARGET: f64 = 0.5;
/// Links matched by anchor text needed to tell a site's URL scheme.
const MIN_ALIGNED: usize = 3;

impl Follow {
    /// Whether the link from `page` to `target` with this anchor text is followed. With
    /// [`Follow::NewLinks`], by [`LinkMatch`]: when no link of the original leads to the same
    /// place (same path and query on the page's own host, the same URL elsewhere; fragments
    /// aside), or when the link has anchor text that no link of the original has, digits
    /// masked (a calendar's "Next: 4 May" is the original's "Next: 3 May"). By target, a link
    /// whose text and target differ from one of the original's only in their digits is still
    /// new (LLVM 16's `AMDGPUAsmGFX11.html` is not LLVM 15's `AMDGPUAsmGFX10.html`), unless the
    /// original links to this very page: then the two are steps of a sequence, and the next
    /// step (a calendar's next day) is not followed. By anchor text, a link whose text leads
    /// to more places than on the original is new beyond the original's count (LLVM 15's
    /// `saddr` leads to three operand pages in `AMDGPUAsmGFX1030.html`, to two in the
    /// `AMDGPUAsmGFX10.html` it copies: the least used of the three is followed).
    pub fn follows(&self, page: &Url, target: &Url, anchor: &str) -> bool {
        self.followed(page, target, anchor) != Followed::No
    }

    /// Whether the original (at `original`) links to `target`, a URL on its site or
    /// another: a duplicate's link carried to the original's site that leads where one of the
    /// original's does adds no page the original does not lead to. Always for
    /// [`Follow::All`], never for [`Follow::None`].
    pub fn original_links_to(&self, original: &Url, target: &Url) -> bool {
        match self {
            Follow::All => true,
            Follow::None => false,
            Follow::NewLinks { known, .. } => {
                known.contains(&target_key_of(&link_target(original, target)))
            }
        }
    }

    /// [`Follow::follows`], saying why a followed link is: [`Followed::Surplus`] when only for
    /// leading beyond the original's count of places for its anchor text (the crawl then asks
    /// whether its counterpart on the original's site was crawled already: a copy across
    /// sites judged against another page of its original's site).
    pub fn followed(&self, page: &Url, target: &Url, anchor: &str) -> Followed {
        let new = |yes: bool| if yes { Followed::New } else { Followed::No };
        match self {
            Follow::All => Followed::New,
            Follow::None => Followed::No,
            Follow::NewLinks {
                known,
                by,
                in_sequence,
                surplus,
            } => {
                let [exact, masked, text] = link_key_triple(page, target, anchor);
                match by {
                    LinkMatch::Target => {
                        new(!(known.contains(&exact) || *in_sequence && known.contains(&masked)))
                    }
                    LinkMatch::Anchor if anchor.trim().is_empty() => Followed::No,
                    LinkMatch::Anchor if !known.contains(&text) && !known.contains(&masked) => {
                        Followed::New
                    }
                    LinkMatch::Anchor if surplus.contains(&exact) => Followed::Surplus,
                    LinkMatch::Anchor => Followed::No,
                }
            }
        }
    }
}

/// Whether a link is followed, and why ([`Follow::followed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Followed {
    /// Not followed.
    No,
    /// It leads somewhere new (or every link is followed).
    New,
    /// Only for leading beyond the original's count of places for its anchor text.
    Surplus,
}

/// Whether two URLs are on one site: same scheme, host and port.
pub fn same_site(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Where a link from `page` leads, as compared across sites: the path and query when it
/// stays on the page's host (so a release's link to `/Passes.html` matches the previous
/// release's on another host), the whole URL otherwise; fragments dropped.
fn link_target(page: &Url, target: &Url) -> String {
    let mut key = if same_site(page, target) {
        String::from(target.path())
    } else {
        format!(
            "{}://{}{}",
            target.scheme(),
            target.host_str().unwrap_or_default(),
            target.path()
        )
    };
    if let Some(query) = target.query() {
        key.push('?');
        key.push_str(query);
    }
    key
}

/// The three keys of a link: its target ([`link_target`]); its anchor text and target,
/// digits masked in both; its anchor text, digits masked.
fn link_key_triple(page: &Url, target: &Url, anchor: &str) -> [u64; 3] {
    let target = link_target(page, target);
    let anchor = mask_digits(anchor);
    // One buffer for the three keys.
    let mut key = String::with_capacity(4 + 2 * target.len() + 2 * anchor.len());
    let mut hash = |parts: &[&str]| {
        key.clear();
        parts.iter().for_each(|p| key.push_str(p));
        nearcrawl_fingerprint::feature_hash(key.as_bytes())
    };
    [
        target_key_of(&target),
        hash(&["m\0", &anchor, "\0", &mask_digits(&target)]),
        hash(&["a\0", &anchor]),
    ]
}

/// The [keys](link_key_triple) of each of the links of the page at `page`, in their order.
fn link_triples(page: &Url, links: &[nearcrawl_extract::Link]) -> Vec<[u64; 3]> {
    links
        .iter()
        .map(|l| link_key_triple(page, &l.url, &l.text))
        .collect()
}

/// The first of a link's keys: where it leads ([`link_target`]).
fn target_key_of(target: &str) -> u64 {
    let mut key = String::with_capacity(2 + target.len());
    key.push_str("t\0");
    key.push_str(target);
    nearcrawl_fingerprint::feature_hash(key.as_bytes())
}

/// How `links` (of a duplicate at `page`) match an original's `known` link keys: by target,
/// unless most of the links whose anchor text the original has lead elsewhere than its.
/// `triples`: the links' [keys](link_key_triple), in their order.
fn link_match(
    links: &[nearcrawl_extract::Link],
    triples: &[[u64; 3]],
    known: &HashSet<u64>,
) -> LinkMatch {
    let (mut aligned, mut same) = (0usize, 0usize);
    for (_, &[exact, _, text]) in links
        .iter()
        .zip(triples)
        .filter(|(l, _)| !l.text.trim().is_empty())
    {
        if known.contains(&text) {
            aligned += 1;
            same += usize::from(known.contains(&exact));
        }
    }
    if aligned >= MIN_ALIGNED && (same as f64) < MIN_SAME_TARGET * aligned as f64 {
        LinkMatch::Anchor
    } else {
        LinkMatch::Target
    }
}

/// The key of a page's own place (relative to its site), kept with its link keys.
fn own_key(url: &Url) -> u64 {
    nearcrawl_fingerprint::feature_hash(format!("s\0{}", link_target(url, url)).as_bytes())
}

/// Whether a duplicate at `page` is the next step of a sequence its original (with these
/// link keys) is a step of: the original links to it, and is not at the same place on its
/// own site (a next release's copy of a page that links to itself is no sequence).
fn in_sequence(page: &Url, known: &HashSet<u64>) -> bool {
    known.contains(&target_key_of(&link_target(page, page))) && !known.contains(&own_key(page))
}

/// Each anchor text of `links` (its key: digits masked, empty ones aside) with the places it
/// leads to (their keys), the most linked first (ties: the first linked first). `triples` are
/// the links' [keys](link_key_triple), in their order.
fn anchor_targets(links: &[nearcrawl_extract::Link], triples: &[[u64; 3]]) -> Vec<(u64, Vec<u64>)> {
    // Anchor key -> (target key -> (links, first position)).
    let mut by_anchor: HashMap<u64, HashMap<u64, (usize, usize)>> = HashMap::new();
    for (at, (link, &[target, _, text])) in links.iter().zip(triples).enumerate() {
        if !link.text.trim().is_empty() {
            let places = by_anchor.entry(text).or_default();
            places.entry(target).or_insert((0, at)).0 += 1;
        }
    }
    by_anchor
        .into_iter()
        .map(|(anchor, places)| {
            let mut places: Vec<(u64, (usize, usize))> = places.into_iter().collect();
            places.sort_unstable_by_key(|&(_, (links, first))| (std::cmp::Reverse(links), first));
            (
                anchor,
                places.into_iter().map(|(target, _)| target).collect(),
            )
        })
        .collect()
}

/// The key saying that the anchor text with key `anchor` leads to at least `rank` places
/// (1-based).
fn rank_key(anchor: u64, rank: usize) -> u64 {
    let mut key = [0u8; 18];
    key[..2].copy_from_slice(b"r\0");
    key[2..10].copy_from_slice(&anchor.to_le_bytes());
    key[10..].copy_from_slice(&(rank as u64).to_le_bytes());
    nearcrawl_fingerprint::feature_hash(&key)
}

/// The target keys of a duplicate's links (`triples`: their keys) whose anchor text leads to
/// more places than on the original (with link keys `known`): its places beyond the
/// original's count, the least linked. (An original stored without these keys leads nowhere by any text: all of a
/// text's places are then new, which follows more, never less.)
fn anchor_surplus(
    links: &[nearcrawl_extract::Link],
    triples: &[[u64; 3]],
    known: &HashSet<u64>,
) -> HashSet<u64> {
    let mut surplus = HashSet::new();
    for (anchor, places) in anchor_targets(links, triples) {
        if !known.contains(&anchor) {
            // A text the original does not have: new by the text itself.
            continue;
        }
        let beyond = (1..=places.len()).find(|&rank| !known.contains(&rank_key(anchor, rank)));
        if let Some(beyond) = beyond {
            surplus.extend(&places[beyond - 1..]);
        }
    }
    surplus
}

/// The keys a duplicate's links are compared with: the three [keys](Follow::follows) of every
/// link of `page` (at `url`), how many places each anchor text leads to (a key per text and
/// place), and the page's own place, sorted and deduplicated.
pub fn link_keys(url: &Url, links: &[nearcrawl_extract::Link]) -> Vec<u64> {
    let triples = link_triples(url, links);
    let ranks = anchor_targets(links, &triples)
        .into_iter()
        .flat_map(|(anchor, places)| (1..=places.len()).map(move |rank| rank_key(anchor, rank)));
    let mut keys: Vec<u64> = triples
        .iter()
        .flatten()
        .copied()
        .chain(ranks)
        .chain([own_key(url)])
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The stage's decision about one page.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// Unique, exact or near.
    pub verdict: Verdict,
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
                verdict: Verdict::Unique,
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
        let analysis = &judgement.analysis;
        let mut admission = Admission {
            seq,
            fingerprint: None,
            text: None,
            sentences: None,
            links: None,
        };
        if !analysis.tokens.is_empty() {
            self.index.insert(analysis.simhash, seq);
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
            admission.links = Some(link_keys(&facts.base, &facts.links));
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
                verdict: Verdict::Exact,
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
                    verdict: Verdict::Exact,
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
                    verdict: Verdict::Near,
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
                    verdict: Verdict::Near,
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
                    verdict: Verdict::Near,
                    original: Original::Kept(candidate),
                    distance: None,
                    similarity,
                }));
            }
        }
        Ok(None)
    }

    /// LCS verification of a page's units against kept page `seq`: its resemble rate when
    /// similar. A page kept without its text (indexed by a job run without verification)
    /// counts as similar at `fallback`.
    fn verified<O: Originals>(
        &mut self,
        units: &[u64],
        seq: u64,
        fallback: f64,
        originals: &O,
    ) -> Result<Option<f64>, O::Error> {
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

/// The first half of the stage: the host template model and the analyzer. Clones share the
/// model, so pages can be analysed on many threads while the stage judges on one.
#[derive(Clone)]
pub struct PageAnalyzer {
    analyzer: Arc<Analyzer>,
    /// Per-host repeated blocks, fed with every page.
    templates: Arc<Mutex<TemplateModel>>,
}

impl PageAnalyzer {
    /// The analyzer.
    pub fn analyzer(&self) -> &Arc<Analyzer> {
        &self.analyzer
    }

    /// The page as the stage fingerprints it: the host's template model learns its blocks,
    /// and its text loses them (main text without template blocks; when extraction chose
    /// little or only template, all the page's blocks but the template). When even that text
    /// is short, the page has [little text](PageAnalysis::little_text) and is fingerprinted
    /// by its title, main text and link targets. Then tokenized, once.
    pub fn analyze(&self, host: &str, mut page: Extracted) -> PageAnalysis {
        let mut lap = Lap::start();
        let marks = page.extraction.as_ref().map(|_| {
            // A panic elsewhere cannot leave the counts half-updated in a way that matters.
            let mut templates = self
                .templates
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            templates.observe_and_mark(host, &block_keys(&page))
        });
        let own = page
            .extraction
            .as_ref()
            .zip(marks.as_deref())
            .map(|(extraction, marks)| own_text(extraction, marks));
        lap.split(&mut page.times, Stage::Template);
        finish_analysis(&self.analyzer, page, own)
    }
}

/// [`PageAnalyzer::analyze`] with the page's template blocks already marked, one flag per
/// block ([`TemplateModel::observe_and_mark`] over its [`block_keys`]): pages shown to the
/// model in order by one thread can then be analysed on many, with the same result as one
/// after the other.
pub fn analyze_marked(analyzer: &Analyzer, mut page: Extracted, marks: &[bool]) -> PageAnalysis {
    let mut lap = Lap::start();
    let own = page
        .extraction
        .as_ref()
        .map(|extraction| own_text(extraction, marks));
    lap.split(&mut page.times, Stage::Template);
    finish_analysis(analyzer, page, own)
}

/// A page's own text: its main text without its template blocks (`marks`, one per block);
/// when extraction chose a listing or only template, all its blocks but the template.
/// With it, the characters of the blocks it would have had but for the template.
fn own_text(extraction: &nearcrawl_extract::Extraction, marks: &[bool]) -> OwnText {
    let own = |in_content_only: bool| -> OwnText {
        let (mut text, mut template_chars) = (String::new(), 0);
        for (block, &template) in extraction.blocks.iter().zip(marks) {
            if in_content_only && !block.in_content {
                continue;
            }
            if template {
                template_chars += block.text.chars().count();
                continue;
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&block.text);
        }
        OwnText {
            text,
            template_chars,
        }
    };
    let text = own(true);
    if extraction.listing || text.text.trim().is_empty() {
        // A listing (whose content extraction chose at random: one section of a table of
        // contents, or none) or a page whose content is all template: the page's other
        // blocks are its own too. Not for a short article: its navigation would make it look
        // like every other short article of its section.
        own(false)
    } else {
        text
    }
}

/// A page's own text ([`own_text`]) and the characters its host's template took from it.
struct OwnText {
    text: String,
    template_chars: usize,
}

/// The rest of [`PageAnalyzer::analyze`] once the page's own text (HTML pages) is known.
fn finish_analysis(analyzer: &Analyzer, page: Extracted, own: Option<OwnText>) -> PageAnalysis {
    let template_chars = own.as_ref().map(|o| o.template_chars).filter(|&n| n > 0);
    let mut analysis = judged_text(analyzer, page, own);
    analysis.template_chars = template_chars;
    analysis
}

/// [`finish_analysis`] but for the template's share.
fn judged_text(analyzer: &Analyzer, mut page: Extracted, own: Option<OwnText>) -> PageAnalysis {
    if let Some(OwnText { text, .. }) = own {
        let own_chars = text.chars().count();
        if own_chars >= MIN_OWN_TEXT {
            page.text = text;
        } else {
            // Too little text of its own to compare: judged by exact key only, over what the
            // page does have (its title, its text, where its links lead, digits masked), so
            // two section index pages of one manual are not "exact" copies of each other. Its
            // main text's own key still finds a kept page it copies whole (a story copied on
            // its own host, whose blocks are then template).
            let main_key = ExactKey::of(&nearcrawl_text::tokenize(&page.text));
            page.text = little_text_key(&page);
            let mut analysis = analyzer.analyze(page);
            analysis.little_text = Some(own_chars);
            analysis.main_key = Some(main_key);
            return analysis;
        }
    }
    let mut analysis = analyzer.analyze(page);
    // What verification will need, computed here, on the analysing thread, not on the one
    // that judges (pages with little text are never verified).
    if analyzer.config().verify && analysis.little_text.is_none() {
        let mut lap = Lap::start();
        analysis.prepared = Some(Prepared::of(&analysis));
        lap.split(&mut analysis.times, Stage::Verify);
    }
    analysis
}

/// The text a page with little text of its own is judged by: its title, its text and the
/// targets of its links (path and query, in order), digits masked (two days of an empty
/// calendar are copies; two section index pages of a manual are not).
fn little_text_key(page: &Extracted) -> String {
    let mut key = String::new();
    if let Some(facts) = &page.facts {
        key.push_str(facts.title.as_deref().unwrap_or_default());
        key.push('\n');
    }
    key.push_str(&page.text);
    if let Some(facts) = &page.facts {
        facts.for_each_target(|url| {
            key.push('\n');
            key.push_str(url.path());
            if let Some(query) = url.query() {
                key.push('?');
                key.push_str(query);
            }
        });
    }
    mask_digits(&key)
}

/// A duplicate found, before its distance and outlinks are worked out.
struct Found {
    verdict: Verdict,
    original: Original,
    distance: Option<u32>,
    similarity: f64,
}

/// Text normalised ([`nearcrawl_text::normalize`]) with every run of digits masked, so "Next:
/// 3 May" on one calendar page and "Next: 4 May" on the next are the same link.
fn mask_digits(text: &str) -> String {
    let mut masked = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in nearcrawl_text::normalize(text.trim()).chars() {
        if c.is_numeric() {
            if !in_digits {
                masked.push('0');
            }
            in_digits = true;
        } else {
            masked.push(c);
            in_digits = false;
        }
    }
    masked
}

#[cfg(test)]
mod tests;
