//! The job configuration file (TOML). Unknown keys are errors, so a typo never silently
//! falls back to a default. `config/default.toml` documents every key.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use nearcrawl_dedup::AnalyzerConfig;
use nearcrawl_engine::{
    CrawlConfig, DedupStageConfig, DuplicateOutlinks, LimitsConfig, LinksConfig, OutputConfig,
};
use nearcrawl_fetch::FetchConfig;
use nearcrawl_frontier::{FocusConfig, PolitenessConfig, ScopeConfig};
use nearcrawl_text::{FeatureConfig, IdfTable, Weighting};
use nearcrawl_verify::VerifyConfig;
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// How pages are fingerprinted and compared, and what the crawler does with duplicates.
    pub dedup: DedupConfig,
    /// `[scope]`: which URLs a crawl may fetch.
    pub scope: ScopeConfig,
    /// `[limits]`: when a crawl stops, and how many requests run at once.
    pub limits: LimitsConfig,
    /// `[politeness]`: per-host connections, delays and back-off.
    pub politeness: PolitenessConfig,
    /// `[fetch]`: HTTP.
    pub fetch: FetchConfig,
    /// `[focus]`: topic terms of a focused crawl.
    pub focus: FocusConfig,
    /// `[links]`: which links are followed.
    pub links: LinksConfig,
    /// `[output]`: WARC files.
    pub output: OutputConfig,
}

/// `[dedup]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupConfig {
    /// Fingerprint the main content only (true) or all visible text (false).
    pub main_content: bool,
    /// Simhash Hamming distance at or under which pages are near-duplicate candidates.
    pub max_distance: u32,
    /// Word shingle width for resemblance and containment.
    pub shingle_width: usize,
    /// Verify candidates with the LCS method before calling them near-duplicates.
    pub verify: bool,
    /// The crawler skips duplicates (false: baseline crawl, verdicts recorded only).
    pub enabled: bool,
    /// What happens to a duplicate's outlinks: "skip" or "keep".
    pub duplicate_outlinks: DuplicateOutlinks,
    /// Index candidates compared per page, nearest first.
    pub max_candidates: usize,
    /// `[dedup.features]`.
    pub features: FeaturesConfig,
    /// `[dedup.lcs]`.
    pub lcs: LcsConfig,
}

impl Default for DedupConfig {
    fn default() -> Self {
        let defaults = AnalyzerConfig::default();
        let stage = DedupStageConfig::default();
        DedupConfig {
            main_content: defaults.main_content,
            max_distance: defaults.max_distance,
            shingle_width: defaults.shingle_width,
            verify: defaults.verify,
            enabled: stage.enabled,
            duplicate_outlinks: stage.duplicate_outlinks,
            max_candidates: stage.max_candidates,
            features: FeaturesConfig::default(),
            lcs: LcsConfig::default(),
        }
    }
}

/// `[dedup.features]`.
#[derive(Debug, Deserialize)]
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
    /// "tf" (term frequency only), "tf-idf" (jieba's IDF for Chinese) or "learned".
    pub weighting: String,
    /// The IDF table for "learned" weighting, relative to the config file.
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
            weighting: "tf-idf".into(),
            idf_table: None,
        }
    }
}

/// `[dedup.lcs]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LcsConfig {
    /// Skeleton window in tokens.
    pub window: usize,
    /// Slope threshold θ of the trustable region.
    pub slope: f64,
    /// Similar when the resemble rate reaches this...
    pub min_resemblance: f64,
    /// ... or the contain rate reaches this.
    pub min_containment: f64,
    /// Passes for moved paragraphs.
    pub max_passes: usize,
}

impl Default for LcsConfig {
    fn default() -> Self {
        let v = VerifyConfig::default();
        LcsConfig {
            window: v.window,
            slope: v.slope,
            min_resemblance: v.min_resemblance,
            min_containment: v.min_containment,
            max_passes: v.max_passes,
        }
    }
}

impl Config {
    /// Reads a config file, or the defaults when `path` is `None`.
    pub fn load(path: Option<&Path>) -> Result<(Config, Option<PathBuf>)> {
        let Some(path) = path else {
            return Ok((Config::default(), None));
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config {}", path.display()))?;
        let config: Config =
            toml::from_str(&text).with_context(|| format!("bad config {}", path.display()))?;
        Ok((config, path.parent().map(Path::to_path_buf)))
    }

    /// The analyzer settings, loading the IDF table when one is named.
    pub fn analyzer(&self, config_dir: Option<&Path>) -> Result<AnalyzerConfig> {
        let d = &self.dedup;
        let f = &d.features;
        let weighting = match f.weighting.as_str() {
            "tf" => Weighting::TermFrequency,
            "tf-idf" => Weighting::TfIdf,
            "learned" => {
                let relative = f.idf_table.as_ref().context(
                    "dedup.features.weighting = \"learned\" needs dedup.features.idf_table",
                )?;
                let path = config_dir.map_or_else(|| relative.clone(), |dir| dir.join(relative));
                Weighting::Learned(IdfTable::load(&path)?)
            }
            other => anyhow::bail!(
                "dedup.features.weighting: unknown value {other:?} (expected \"tf\", \"tf-idf\" or \"learned\")"
            ),
        };
        Ok(AnalyzerConfig {
            main_content: d.main_content,
            features: FeatureConfig {
                words: f.words,
                word_ngrams: f.word_ngrams,
                han_char_ngrams: f.han_char_ngrams,
                drop_stop_words: f.drop_stop_words,
            },
            weighting,
            max_distance: d.max_distance,
            shingle_width: d.shingle_width,
            verify: d.verify,
            verify_config: VerifyConfig {
                window: d.lcs.window,
                slope: d.lcs.slope,
                min_resemblance: d.lcs.min_resemblance,
                min_containment: d.lcs.min_containment,
                max_passes: d.lcs.max_passes,
                ..VerifyConfig::default()
            },
        })
    }

    /// The crawler's settings.
    pub fn crawl(&self) -> CrawlConfig {
        CrawlConfig {
            scope: self.scope.clone(),
            limits: self.limits.clone(),
            politeness: self.politeness.clone(),
            fetch: self.fetch.clone(),
            focus: self.focus.clone(),
            links: self.links.clone(),
            dedup: DedupStageConfig {
                enabled: self.dedup.enabled,
                duplicate_outlinks: self.dedup.duplicate_outlinks,
                max_candidates: self.dedup.max_candidates,
            },
            output: self.output.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shipped configuration parses, and the fully commented default equals the
    /// built-in defaults it documents.
    #[test]
    fn shipped_configs_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("config");
        for name in ["default.toml", "general.toml", "focused.toml"] {
            let (config, _) =
                Config::load(Some(&dir.join(name))).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            config.analyzer(Some(&dir)).unwrap();
            let _ = config.crawl();
        }
        let (default, _) = Config::load(Some(&dir.join("default.toml"))).unwrap();
        let builtin = Config::default().crawl();
        let documented = default.crawl();
        assert_eq!(documented.scope, builtin.scope);
        assert_eq!(documented.limits, builtin.limits);
        assert_eq!(documented.politeness, builtin.politeness);
        assert_eq!(documented.fetch, builtin.fetch);
        assert_eq!(documented.links, builtin.links);
        assert_eq!(documented.dedup, builtin.dedup);
        assert_eq!(documented.output, builtin.output);
    }

    #[test]
    fn shipped_seed_lists_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
        for name in ["general.txt", "focused.txt"] {
            nearcrawl_frontier::read_seeds(&dir.join(name)).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
