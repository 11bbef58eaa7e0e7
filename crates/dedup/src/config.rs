//! The `[dedup]` section of a job configuration, defined once: the command line reads it,
//! and it gives the [`AnalyzerConfig`] pages are analysed with and the [`DedupStageConfig`]
//! the crawl's dedup stage runs with.

use std::fmt;
use std::path::{Path, PathBuf};

use nearcrawl_text::{FeatureConfig, IdfTable, TextError, Weighting};
use nearcrawl_verify::VerifyConfig;
use serde::{Deserialize, Serialize};

use crate::analyze::AnalyzerConfig;
pub use nearcrawl_link_policy::Predict;

/// What happens to the outlinks of a duplicate page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DuplicateOutlinks {
    /// Not enqueued: the most bandwidth saved, and pages reachable only through duplicates
    /// lost.
    Skip,
    /// Enqueued anyway: the page is recorded as a duplicate, nothing is lost.
    Keep,
    /// Only the links whose anchor text (digits masked) none of the original's links has: a
    /// mirror's extra pages and a longer listing's extra items are kept, the copied
    /// navigation and a trap's "next" link are not. The default: see docs/QUALITY.md.
    #[default]
    New,
}

/// The dedup stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupStageConfig {
    /// Skip duplicates at all (off: the `--no-dedup` baseline; fingerprints are still
    /// computed and recorded).
    pub enabled: bool,
    /// What happens to a duplicate's outlinks.
    pub duplicate_outlinks: DuplicateOutlinks,
    /// Candidates compared per page (the nearest first) before it is called unique.
    pub max_candidates: usize,
    /// With `duplicate_outlinks = "new"`: a page whose links led to at least this many new
    /// pages is a hub, and a duplicate's link to the counterpart of a hub on the original's
    /// site is followed even though the original links there too (0: never).
    pub hub_min_links: u32,
    /// With probes on ([`Self::probe_links`]): a hub is fetched again when what it led to is
    /// not known (one of its links redirected), or when the new pages it led to (fetched:
    /// unique pages, files that are no pages) weigh at least this many times itself; while
    /// its links are not all decided, a copy's link to it waits for them (parked); else a duplicate's link to its counterpart is probed like any
    /// other (a 1.5 MB instruction table that listed a hundred operand pages of 7 kB). 0:
    /// every hub is fetched.
    pub hub_min_yield: f64,
    /// With `duplicate_outlinks = "new"`: a mirror's copies sampled. A duplicate on another
    /// site than its original whose links are matched by anchor text (a mirror: another URL
    /// scheme) does not follow a link whose text the original has; such links wait, parked on
    /// their pair of sites, and up to this many of them per mirror are drawn as samples and
    /// followed (the cheapest: those whose counterparts are the shortest, once none is still
    /// being fetched); when one of those copies adds a page of its own (a link its original
    /// lacks), the mirror's copies are followed from then on. 0: none.
    pub mirror_samples: u32,
    /// The share of a mirror's parked links drawn as samples (rounded up, at most
    /// `mirror_samples`): a mirror of few links is sampled once or twice.
    pub mirror_sample_share: f64,
    /// With `duplicate_outlinks = "new"`: a duplicate's link to where the original's leads
    /// (not followed as new) is probed with HEAD when the original's target declared its
    /// `Content-Length`, and fetched when the probe says its length differs (the page
    /// changed), or, for a large page, when a sample of it does ([`Self::probe_samples`]).
    /// On by default: on the real versions webs it finds the pages changed in place and
    /// linked only from copies (coverage 0.996 → 1.000 on `llvm-15-16`, docs/QUALITY.md).
    pub probe_links: bool,
    /// How far a probed page's length may be from its counterpart's, as a fraction of it,
    /// for the page to be taken as unchanged.
    pub probe_tolerance: f64,
    /// A large probed page ([`crate::worth_sampling`]) is sampled before it is fetched,
    /// whatever its length: parts of it asked with `Range`, unchanged when they have the
    /// counterpart's text ([`crate::check_sample`]).
    pub probe_samples: bool,
    /// What a link's predicted counterpart is used for: URL rules are learned from the
    /// pairs this crawl judges, and a link a trusted rule maps to a page the crawl holds is
    /// verified cheaply against it (`verify`, with probes on), recorded as its duplicate
    /// without a request (`skip`), or only checked (`check`: fetched, the prediction
    /// recorded). `off`: no rules.
    pub predict: Predict,
    /// Pairs a rule must have been learned from before it is trusted.
    pub predict_min_support: u32,
    /// The least trust (right predictions + 1 over checked + 2) a rule must have.
    pub predict_min_trust: f64,
    /// One trusted prediction in this many is fetched whole to keep checking its rule (0:
    /// none).
    pub predict_explore: u32,
}

impl DedupStageConfig {
    /// The settings of a link's fate apart from the URL rules'.
    pub fn links(&self) -> nearcrawl_link_policy::LinkSettings {
        nearcrawl_link_policy::LinkSettings {
            hub_min_links: self.hub_min_links,
            hub_min_yield: self.hub_min_yield,
            mirror_samples: self.mirror_samples,
            mirror_sample_share: self.mirror_sample_share,
            probe_links: self.probe_links,
            probe_tolerance: self.probe_tolerance,
            probe_samples: self.probe_samples,
        }
    }

    /// The link policy's settings.
    pub fn policy(&self) -> nearcrawl_link_policy::PolicyConfig {
        nearcrawl_link_policy::PolicyConfig {
            predict: self.predict,
            min_support: self.predict_min_support,
            min_trust: self.predict_min_trust,
            explore: self.predict_explore,
            probes: self.probe_links,
        }
    }
}

/// Default [`DedupStageConfig::probe_tolerance`]: measured on `llvm-14-15` (docs/QUALITY.md).
pub const PROBE_TOLERANCE: f64 = 0.02;

/// Default [`DedupStageConfig::hub_min_links`].
pub const HUB_MIN_LINKS: u32 = 3;

/// Default [`DedupStageConfig::hub_min_yield`]: chosen on `llvm-14-15` (docs/QUALITY.md).
pub const HUB_MIN_YIELD: f64 = 1.0;

/// Default [`DedupStageConfig::mirror_samples`]: a mirror adding a page to one copy in five
/// goes unnoticed by eight samples one time in six (0.8^8).
pub const MIRROR_SAMPLES: u32 = 8;

/// Default [`DedupStageConfig::mirror_sample_share`]: a quarter, so that a language's
/// fourteen chapters are sampled four times, not eight (docs/QUALITY.md, item 31).
pub const MIRROR_SAMPLE_SHARE: f64 = 0.25;

impl Default for DedupStageConfig {
    fn default() -> Self {
        let policy = nearcrawl_link_policy::PolicyConfig::default();
        DedupStageConfig {
            enabled: true,
            duplicate_outlinks: DuplicateOutlinks::New,
            max_candidates: 4,
            hub_min_links: HUB_MIN_LINKS,
            hub_min_yield: HUB_MIN_YIELD,
            mirror_samples: MIRROR_SAMPLES,
            mirror_sample_share: MIRROR_SAMPLE_SHARE,
            probe_links: true,
            probe_tolerance: PROBE_TOLERANCE,
            probe_samples: true,
            predict: policy.predict,
            predict_min_support: policy.min_support,
            predict_min_trust: policy.min_trust,
            predict_explore: policy.explore,
        }
    }
}

/// `[dedup]`: how pages are fingerprinted and compared, and what the crawler does with
/// duplicates. `config/default.toml` documents every key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupConfig {
    /// Fingerprint the main content only (true) or all visible text (false).
    pub main_content: bool,
    /// Simhash Hamming distance at or under which pages are near-duplicate candidates.
    pub max_distance: u32,
    /// Word shingle width for the resemblance and containment comparisons report.
    pub shingle_width: usize,
    /// Verify candidates with the LCS method before calling them near-duplicates.
    pub verify: bool,
    /// The crawler skips duplicates (false: baseline crawl, verdicts recorded only).
    pub enabled: bool,
    /// What happens to a duplicate's outlinks.
    pub duplicate_outlinks: DuplicateOutlinks,
    /// Index candidates compared per page, nearest first.
    pub max_candidates: usize,
    /// Links to new pages that make a page a hub (see [`DedupStageConfig::hub_min_links`]).
    pub hub_min_links: u32,
    /// See [`DedupStageConfig::hub_min_yield`].
    pub hub_min_yield: f64,
    /// See [`DedupStageConfig::mirror_samples`].
    pub mirror_samples: u32,
    /// See [`DedupStageConfig::mirror_sample_share`].
    pub mirror_sample_share: f64,
    /// Probe a duplicate's links to where the original's lead (see
    /// [`DedupStageConfig::probe_links`]).
    pub probe_links: bool,
    /// See [`DedupStageConfig::probe_tolerance`].
    pub probe_tolerance: f64,
    /// See [`DedupStageConfig::probe_samples`].
    pub probe_samples: bool,
    /// See [`DedupStageConfig::predict`].
    pub predict: Predict,
    /// See [`DedupStageConfig::predict_min_support`].
    pub predict_min_support: u32,
    /// See [`DedupStageConfig::predict_min_trust`].
    pub predict_min_trust: f64,
    /// See [`DedupStageConfig::predict_explore`].
    pub predict_explore: u32,
    /// `[dedup.features]`.
    pub features: FeaturesConfig,
    /// `[dedup.lcs]`: the LCS verification's thresholds.
    pub lcs: VerifyConfig,
    /// Text fingerprinted per page at most, in bytes (0: no limit).
    pub max_text_bytes: usize,
}

impl Default for DedupConfig {
    fn default() -> Self {
        let analyzer = AnalyzerConfig::default();
        let stage = DedupStageConfig::default();
        DedupConfig {
            main_content: analyzer.main_content,
            max_distance: analyzer.max_distance,
            shingle_width: analyzer.shingle_width,
            verify: analyzer.verify,
            enabled: stage.enabled,
            duplicate_outlinks: stage.duplicate_outlinks,
            max_candidates: stage.max_candidates,
            hub_min_links: stage.hub_min_links,
            hub_min_yield: stage.hub_min_yield,
            mirror_samples: stage.mirror_samples,
            mirror_sample_share: stage.mirror_sample_share,
            probe_links: stage.probe_links,
            probe_tolerance: stage.probe_tolerance,
            probe_samples: stage.probe_samples,
            predict: stage.predict,
            predict_min_support: stage.predict_min_support,
            predict_min_trust: stage.predict_min_trust,
            predict_explore: stage.predict_explore,
            features: FeaturesConfig::default(),
            lcs: analyzer.verify_config,
            max_text_bytes: analyzer.max_text_bytes,
        }
    }
}

/// `[dedup.features]`: which features feed the simhash and how they are weighted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FeaturesConfig {
    /// Single words.
    pub words: bool,
    /// Word n-gram length (0 or 1: none).
    pub word_ngrams: usize,
    /// Han character n-gram length (0: none).
    pub han_char_ngrams: usize,
    /// Drop English and Chinese stop words.
    pub drop_stop_words: bool,
    /// Where weights come from.
    pub weighting: WeightingKind,
    /// The IDF table for `weighting = "learned"`, relative to the configuration file.
    pub idf_table: Option<PathBuf>,
}

impl Default for FeaturesConfig {
    fn default() -> Self {
        let f = FeatureConfig::default();
        FeaturesConfig {
            words: f.words,
            word_ngrams: f.word_ngrams,
            han_char_ngrams: f.han_char_ngrams,
            drop_stop_words: f.drop_stop_words,
            weighting: WeightingKind::TfIdf,
            idf_table: None,
        }
    }
}

/// `dedup.features.weighting`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum WeightingKind {
    /// `"tf"`: term frequency only.
    #[serde(rename = "tf")]
    TermFrequency,
    /// `"tf-idf"`: jieba's built-in IDF for Chinese words, 1 for others.
    #[default]
    #[serde(rename = "tf-idf")]
    TfIdf,
    /// `"learned"`: the IDF table `idf_table` for every word.
    #[serde(rename = "learned")]
    Learned,
}

/// The `[dedup]` section names something that cannot be had.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// `weighting = "learned"` without `idf_table`.
    MissingIdfTable,
    /// The IDF table could not be read.
    IdfTable {
        /// The table's path.
        path: PathBuf,
        /// Why.
        source: TextError,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::MissingIdfTable => {
                f.write_str("dedup.features.weighting = \"learned\" needs dedup.features.idf_table")
            }
            ConfigError::IdfTable { path, .. } => {
                write!(f, "dedup.features.idf_table {}", path.display())
            }
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::MissingIdfTable => None,
            ConfigError::IdfTable { source, .. } => Some(source),
        }
    }
}

impl DedupConfig {
    /// The analyzer settings; a learned IDF table is read from `idf_table`, relative to
    /// `config_dir` (the configuration file's directory) when given.
    pub fn analyzer(&self, config_dir: Option<&Path>) -> Result<AnalyzerConfig, ConfigError> {
        let f = &self.features;
        let weighting = match f.weighting {
            WeightingKind::TermFrequency => Weighting::TermFrequency,
            WeightingKind::TfIdf => Weighting::TfIdf,
            WeightingKind::Learned => {
                let relative = f.idf_table.as_ref().ok_or(ConfigError::MissingIdfTable)?;
                let path = config_dir.map_or_else(|| relative.clone(), |dir| dir.join(relative));
                let table = IdfTable::load(&path)
                    .map_err(|source| ConfigError::IdfTable { path, source })?;
                Weighting::Learned(table)
            }
        };
        Ok(AnalyzerConfig {
            main_content: self.main_content,
            features: FeatureConfig {
                words: f.words,
                word_ngrams: f.word_ngrams,
                han_char_ngrams: f.han_char_ngrams,
                drop_stop_words: f.drop_stop_words,
            },
            weighting,
            max_distance: self.max_distance,
            shingle_width: self.shingle_width,
            verify: self.verify,
            verify_config: self.lcs,
            max_text_bytes: self.max_text_bytes,
            max_links: crate::analyze::MAX_LINKS,
            link_reading: nearcrawl_extract::LinkReading::Full,
        })
    }

    /// The crawl's dedup stage settings.
    pub fn stage(&self) -> DedupStageConfig {
        DedupStageConfig {
            enabled: self.enabled,
            duplicate_outlinks: self.duplicate_outlinks,
            max_candidates: self.max_candidates,
            hub_min_links: self.hub_min_links,
            hub_min_yield: self.hub_min_yield,
            mirror_samples: self.mirror_samples,
            mirror_sample_share: self.mirror_sample_share,
            probe_links: self.probe_links,
            probe_tolerance: self.probe_tolerance,
            probe_samples: self.probe_samples,
            predict: self.predict,
            predict_min_support: self.predict_min_support,
            predict_min_trust: self.predict_min_trust,
            predict_explore: self.predict_explore,
        }
    }
}
