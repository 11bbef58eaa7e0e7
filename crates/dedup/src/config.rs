//! The `[dedup]` section of a job configuration, defined once: the command line reads it,
//! and it gives the [`AnalyzerConfig`] pages are analysed with and the [`DedupStageConfig`]
//! the crawl's dedup stage runs with.

use std::fmt;
use std::path::{Path, PathBuf};

use nearcrawl_text::{FeatureConfig, IdfTable, TextError, Weighting};
use nearcrawl_verify::VerifyConfig;
use serde::de::IgnoredAny;
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
    /// What a link's predicted counterpart is used for: URL rules are learned from the
    /// pairs this crawl judges, and a link a trusted rule maps to a page the crawl holds is
    /// verified cheaply against it (`verify`, with probes on), recorded as its duplicate
    /// without a request (`skip`), or only checked (`check`: fetched, the prediction
    /// recorded). `off`: no rules.
    pub predict: Predict,
    /// One trusted prediction in this many is fetched whole to keep checking its rule (0:
    /// none).
    pub predict_explore: u32,
    /// The link policy's fixed values (hubs, mirrors' samples, probes, a rule's trust),
    /// measured (docs/QUALITY.md, item 32): no job file sets them; tests and the evaluation
    /// harness vary them.
    #[serde(skip)]
    pub tuning: nearcrawl_link_policy::Tuning,
}

impl DedupStageConfig {
    /// The settings of a link's fate apart from the URL rules'.
    pub fn links(&self) -> nearcrawl_link_policy::LinkSettings {
        self.tuning.links
    }

    /// The link policy's settings.
    pub fn policy(&self) -> nearcrawl_link_policy::PolicyConfig {
        nearcrawl_link_policy::PolicyConfig {
            predict: self.predict,
            min_support: self.tuning.min_support,
            min_trust: self.tuning.min_trust,
            explore: self.predict_explore,
            probes: self.tuning.links.probe_links,
        }
    }
}

impl Default for DedupStageConfig {
    fn default() -> Self {
        let policy = nearcrawl_link_policy::PolicyConfig::default();
        DedupStageConfig {
            enabled: true,
            duplicate_outlinks: DuplicateOutlinks::New,
            max_candidates: 4,
            predict: policy.predict,
            predict_explore: policy.explore,
            tuning: nearcrawl_link_policy::Tuning::default(),
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
    /// See [`DedupStageConfig::predict`].
    pub predict: Predict,
    /// See [`DedupStageConfig::predict_explore`].
    pub predict_explore: u32,
    /// The link settings removed on 2026-12-07, fixed since at their measured values
    /// ([`nearcrawl_link_policy::Tuning`]): a job file that still sets one is read, and
    /// [`DedupConfig::retired`] names it in a warning, with what replaced it.
    #[serde(default, skip_serializing)]
    pub hub_min_links: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub hub_min_yield: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub mirror_samples: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub mirror_sample_share: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub probe_links: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub probe_tolerance: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub probe_samples: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub predict_min_support: Option<IgnoredAny>,
    /// See [`DedupConfig::hub_min_links`].
    #[serde(default, skip_serializing)]
    pub predict_min_trust: Option<IgnoredAny>,
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
            predict: stage.predict,
            predict_explore: stage.predict_explore,
            hub_min_links: None,
            hub_min_yield: None,
            mirror_samples: None,
            mirror_sample_share: None,
            probe_links: None,
            probe_tolerance: None,
            probe_samples: None,
            predict_min_support: None,
            predict_min_trust: None,
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
            predict: self.predict,
            predict_explore: self.predict_explore,
            tuning: nearcrawl_link_policy::Tuning::default(),
        }
    }

    /// A warning for each removed link setting the job file still sets, naming what
    /// replaced it.
    pub fn retired(&self) -> Vec<String> {
        let set = [
            self.hub_min_links,
            self.hub_min_yield,
            self.mirror_samples,
            self.mirror_sample_share,
            self.probe_links,
            self.probe_tolerance,
            self.probe_samples,
            self.predict_min_support,
            self.predict_min_trust,
        ];
        let replaced = [
            "a page is a hub once its links led to 3 new pages",
            "a hub is fetched again while what it led to weighs as much as itself",
            "a mirror takes at most 8 samples",
            "a mirror samples a quarter of its candidates",
            "a duplicate's links are always checked against their counterparts",
            "a checked page's length may differ from its counterpart's by 2 %",
            "a large checked page is always sampled",
            "a URL rule is trusted once learned from 3 pairs",
            "a URL rule is trusted at 0.9 (eight right of eight)",
        ];
        nearcrawl_link_policy::Tuning::KEYS
            .iter()
            .zip(set.iter().zip(replaced))
            .filter(|(_, (value, _))| value.is_some())
            .map(|(key, (_, fixed))| {
                format!(
                    "[dedup] {key} was removed on 2026-12-07 and is ignored: {fixed} \
                     (the link policy's measured value, docs/QUALITY.md item 32); \
                     `duplicate_outlinks`, `predict` and `predict_explore` are the link \
                     settings left"
                )
            })
            .collect()
    }
}
