//! The job configuration file (TOML), as `nearcrawl` and `nearcrawl-lab` read it. Unknown
//! keys are errors, so a typo never silently falls back to a default. `config/default.toml`
//! documents every key. Each section is the type of the crate it configures, defined there
//! once.

use std::path::{Path, PathBuf};

use nearcrawl_dedup::{AnalyzerConfig, ConfigError, DedupConfig};
use nearcrawl_fetch::FetchConfig;
use nearcrawl_frontier::{FocusConfig, PolitenessConfig, ScopeConfig, TrapConfig};
use serde::Deserialize;

use crate::config::{CrawlConfig, LimitsConfig, LinksConfig, OutputConfig, RedisConfig};
use crate::error::EngineError;
use crate::shared::IndexConfig;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JobFile {
    /// How pages are fingerprinted and compared, and what the crawler does with duplicates.
    pub dedup: DedupConfig,
    /// `[scope]`: which URLs a crawl may fetch.
    pub scope: ScopeConfig,
    /// `[traps]`: URLs that give a crawler trap away.
    pub traps: TrapConfig,
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
    /// `[render]`: pages written by scripts, rendered in a browser (`--render`).
    pub render: nearcrawl_render::RenderSettings,
    /// `[index]`: the index shared across jobs (`--index DIR`).
    pub index: IndexConfig,
    /// `[redis]`: a worker of a job shared through Redis (`--redis`).
    pub redis: RedisConfig,
}

impl JobFile {
    /// Reads a config file, or the defaults when `path` is `None`; also returns the file's
    /// directory. A setting removed since is named on stderr with what replaced it
    /// ([`DedupConfig::retired`]). Example files of `[focus] examples` given as relative paths are taken from
    /// the file's directory.
    pub fn load(path: Option<&Path>) -> Result<(JobFile, Option<PathBuf>), EngineError> {
        let Some(path) = path else {
            return Ok((JobFile::default(), None));
        };
        let text = std::fs::read_to_string(path).map_err(|e| EngineError::Config {
            path: path.to_path_buf(),
            reason: format!("cannot read it: {e}"),
        })?;
        let mut config: JobFile = toml::from_str(&text).map_err(|e| EngineError::Config {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        // (Both binaries read job files through here: a removed setting is said at once,
        // before any log is set up.)
        for warning in config.dedup.retired() {
            eprintln!("warning: {}: {warning}", path.display());
        }
        let dir = path.parent().map(Path::to_path_buf);
        if let Some(dir) = &dir {
            for example in &mut config.focus.examples {
                let url = example.starts_with("http://") || example.starts_with("https://");
                if !url && Path::new(example).is_relative() {
                    *example = dir.join(&*example).display().to_string();
                }
            }
        }
        Ok((config, dir))
    }

    /// The analyzer settings, loading the IDF table when one is named.
    pub fn analyzer(&self, config_dir: Option<&Path>) -> Result<AnalyzerConfig, ConfigError> {
        self.dedup.analyzer(config_dir)
    }

    /// The crawler's settings.
    pub fn crawl(&self) -> CrawlConfig {
        CrawlConfig {
            scope: self.scope.clone(),
            traps: self.traps.clone(),
            limits: self.limits.clone(),
            politeness: self.politeness.clone(),
            fetch: self.fetch.clone(),
            focus: self.focus.clone(),
            links: self.links.clone(),
            dedup: self.dedup.stage(),
            output: self.output.clone(),
            render: self.render.clone(),
            index: self.index.clone(),
            redis: self.redis.clone(),
            previous: None,
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
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
        for name in ["default.toml", "general.toml", "focused.toml"] {
            let (config, _) =
                JobFile::load(Some(&dir.join(name))).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            config.analyzer(Some(&dir)).unwrap();
            let _ = config.crawl();
        }
        let (default, _) = JobFile::load(Some(&dir.join("default.toml"))).unwrap();
        let builtin = JobFile::default().crawl();
        let documented = default.crawl();
        assert_eq!(documented.scope, builtin.scope);
        assert_eq!(documented.traps, builtin.traps);
        assert_eq!(documented.limits, builtin.limits);
        assert_eq!(documented.politeness, builtin.politeness);
        assert_eq!(documented.fetch, builtin.fetch);
        assert_eq!(documented.links, builtin.links);
        assert_eq!(documented.dedup, builtin.dedup);
        assert_eq!(documented.output, builtin.output);
        assert_eq!(documented.focus, builtin.focus);
        assert_eq!(default.dedup, DedupConfig::default());
    }

    /// A job file written before the link settings were cut is read: each removed key is
    /// named in a warning with the value that replaced it, and the crawl runs with the
    /// measured values; a key no version had is still an error.
    #[test]
    fn a_removed_link_setting_is_read_with_a_warning_naming_what_replaced_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.toml");
        let old = "[dedup]\nhub_min_links = 0\nprobe_links = false\npredict = \"skip\"\n";
        std::fs::write(&path, old).unwrap();
        let (config, _) = JobFile::load(Some(&path)).unwrap();
        let warnings = config.dedup.retired();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("[dedup] hub_min_links was removed"));
        assert!(warnings[0].contains("3 new pages"), "{}", warnings[0]);
        assert!(warnings[1].starts_with("[dedup] probe_links was removed"));
        let crawl = config.crawl();
        assert_eq!(crawl.dedup.predict, nearcrawl_dedup::Predict::Skip);
        assert_eq!(crawl.dedup.tuning, nearcrawl_link_policy::Tuning::default());
        std::fs::write(&path, "[dedup]\nhub_max_links = 3\n").unwrap();
        let err = JobFile::load(Some(&path)).unwrap_err().to_string();
        assert!(err.contains("hub_max_links"), "{err}");
        assert!(JobFile::default().dedup.retired().is_empty());
    }

    /// `[output] warc_compression` takes libdeflate's levels, and a level it has not is an
    /// error naming the key.
    #[test]
    fn a_warc_compression_level_is_one_libdeflate_has() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.toml");
        for level in [0, 1, 6, 12] {
            std::fs::write(&path, format!("[output]\nwarc_compression = {level}\n")).unwrap();
            let (config, _) = JobFile::load(Some(&path)).unwrap();
            assert_eq!(config.output.warc_compression.get(), level);
        }
        std::fs::write(&path, "[output]\nwarc_compression = 13\n").unwrap();
        let err = format!("{:#}", JobFile::load(Some(&path)).unwrap_err());
        assert!(err.contains("warc_compression"), "{err}");
        assert!(err.contains("13 is no compression level"), "{err}");
    }

    #[test]
    fn shipped_seed_lists_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../seeds");
        for name in ["general.txt", "focused.txt"] {
            nearcrawl_frontier::read_seeds(&dir.join(name)).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
