//! The dedup stage: what a page is, and whether it copies a page already kept.
//!
//! [`Analyzer`] runs the page-understanding pipeline: [`Analyzer::extract_html`] decodes,
//! parses, reads the page facts and separates main content from boilerplate;
//! [`Analyzer::analyze`] tokenizes, weighs features and computes the 64-bit simhash and the
//! exact-duplicate key.
//!
//! [`DedupStage`] is the crawl's decision, synchronous and without I/O: it removes the host's
//! template from a page, analyses it once, and [judges](DedupStage::judge) it against every
//! page kept so far (exact key, the permuted-table Hamming index, sentence-fingerprint
//! candidates, LCS verification), returning a [`Judgement`]: verdict, original, distance,
//! similarity, and which outlinks to [`Follow`]. [`DedupStage::admit`] keeps a unique page
//! and returns the [`Admission`] the caller persists; kept pages (their texts, keys and
//! sentence-fingerprint postings) are read back through the [`Originals`] trait (the crawl's
//! store, or [`MemoryOriginals`]), so the stage's memory does not grow with them. [`compare`] runs the same
//! stage on two pages and adds the pair's measurements ([`Comparison`]).
//!
//! A crawl asks whether a page behind a duplicate's link changed without fetching it all:
//! [`sample_ranges`] says which parts of it to ask for, [`check_sample`] compares them with
//! the [`shingle_filter`] of its counterpart (kept when that was fetched).
//!
//! ```
//! use std::sync::Arc;
//! use nearcrawl_dedup::{
//!     Analyzer, AnalyzerConfig, DedupStage, DedupStageConfig, Extracted, MemoryOriginals, Likeness,
//! };
//!
//! let analyzer = Arc::new(Analyzer::new(AnalyzerConfig::default()));
//! let mut stage = DedupStage::new(analyzer, DedupStageConfig::default(), [], [], 1 << 63)?;
//! let mut kept = MemoryOriginals::default();
//! let body = "Rivers carve valleys over thousands of years, moving sediment from the \
//!             mountains to the sea. In hard rock a river cuts a narrow gorge with steep walls. \
//!             In soft rock the walls slump and the valley widens into a gentle V.";
//! let first = stage.judge("example.org", Extracted::plain(body.into()), &kept)?;
//! assert_eq!(first.verdict, Likeness::Unique);
//! kept.keep(stage.admit(0, "example.org", &first));
//! let copy = stage.judge("mirror.example", Extracted::plain(body.to_uppercase()), &kept)?;
//! assert_eq!(copy.verdict, Likeness::Exact);
//! let other = "Glaciers leave U-shaped valleys because the ice grinds the floor and the walls.";
//! let other = stage.judge("example.org", Extracted::plain(other.into()), &kept)?;
//! assert_eq!(other.verdict, Likeness::Unique);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod analyze;
mod compare;
mod config;
mod sample;
mod settings;
mod stage;
mod timing;
mod units;

pub use crate::analyze::{
    Analyzer, AnalyzerConfig, Extracted, MAX_LINKS, MAX_TEXT_BYTES, MIN_NEAR_TOKENS, PageAnalysis,
    Prepared, verify_config,
};
pub use crate::compare::{Comparison, compare};
pub use crate::config::{
    ConfigError, DedupConfig, DedupStageConfig, DuplicateOutlinks, FeaturesConfig, Predict,
    WeightingKind,
};
pub use crate::sample::{
    FILTER_BITS_PER_SHINGLE, HEAD_COST, SAMPLE_MAX_GROWTH, SAMPLE_MIN_LENGTH,
    SAMPLE_MIN_LENGTH_RATIO, SAMPLE_PART_BYTES, SAMPLE_PART_SHARE, SAMPLE_PARTS,
    SHINGLES_MIN_LENGTH, SampleCheck, check_sample, comparable_lengths, fragment_text,
    keeps_shingles, sample_cost, sample_part_bytes, sample_ranges, shingle_filter, worth_sampling,
};
pub use crate::settings::{stage_sentence_config, stage_sentence_cutoff, stage_template_config};
pub use crate::stage::{
    Admission, DedupStage, Follow, Followed, INDEX_BYTES_PER_PAGE, IndexedSentences, Judgement,
    Likeness, MemoryOriginals, Original, Originals, PageAnalyzer, analyze_marked, block_keys,
    index_design, link_keys, same_site,
};
pub use crate::timing::{Lap, Stage, StageTimes, thread_cpu_time};
pub use crate::units::UnitsCache;
