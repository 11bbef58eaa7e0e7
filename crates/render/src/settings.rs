//! `[render]` in a job file, and `--render` on the command line.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::RenderConfig;

/// Which pages are rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RenderMode {
    /// None: every page is judged on its static HTML.
    Never,
    /// The pages whose HTML loads a script and shows little text, on hosts where rendering
    /// has added text or links (see `auto.rs`); the browser is started when the first such
    /// page comes, and a browser that cannot start leaves every page judged on its static
    /// HTML, with a warning.
    #[default]
    Auto,
    /// Every HTML page fetched whole (not a probe's answer, not plain text), before it is
    /// judged and its links are followed.
    Always,
}

impl std::str::FromStr for RenderMode {
    type Err = String;

    fn from_str(s: &str) -> Result<RenderMode, String> {
        match s {
            "never" => Ok(RenderMode::Never),
            "auto" => Ok(RenderMode::Auto),
            "always" => Ok(RenderMode::Always),
            other => Err(format!("render mode {other:?}: one of never, auto, always")),
        }
    }
}

/// `[render]`: whether and how pages written by scripts are rendered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenderSettings {
    /// Which pages are rendered (`--render`).
    pub mode: RenderMode,
    /// The browser: Debian's `chromium` (`scripts/browser-deps.sh` installs it), a path or a
    /// name on the `PATH`.
    pub chromium: PathBuf,
    /// Pages rendered at once, each in a tab of its own.
    pub tabs: usize,
    /// The most a page's render may take, its requests included (milliseconds).
    pub timeout_ms: u64,
    /// The most requests a page may make besides its document.
    pub max_subresources: u32,
}

impl Default for RenderSettings {
    fn default() -> RenderSettings {
        let config = RenderConfig::default();
        RenderSettings {
            mode: RenderMode::default(),
            chromium: config.chromium,
            tabs: config.tabs,
            timeout_ms: u64::try_from(config.timeout.as_millis()).unwrap_or(u64::MAX),
            max_subresources: config.max_subresources,
        }
    }
}

impl RenderSettings {
    /// The renderer's configuration, when pages are rendered at all.
    pub fn config(&self) -> Option<RenderConfig> {
        (self.mode != RenderMode::Never).then(|| RenderConfig {
            chromium: self.chromium.clone(),
            tabs: self.tabs,
            timeout: Duration::from_millis(self.timeout_ms),
            max_subresources: self.max_subresources,
            ..RenderConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mode_is_read_by_its_name_and_a_wrong_one_is_named() {
        assert_eq!("always".parse(), Ok(RenderMode::Always));
        assert_eq!("never".parse(), Ok(RenderMode::Never));
        let err = "sometimes".parse::<RenderMode>().unwrap_err();
        assert!(
            err.contains("\"sometimes\": one of never, auto, always"),
            "{err}"
        );
        assert_eq!("auto".parse(), Ok(RenderMode::Auto));
        let never = RenderSettings {
            mode: RenderMode::Never,
            ..RenderSettings::default()
        };
        assert_eq!(never.config(), None);
        assert!(
            RenderSettings::default().config().is_some(),
            "auto by default"
        );
        let always = RenderSettings {
            mode: RenderMode::Always,
            timeout_ms: 2_500,
            ..RenderSettings::default()
        };
        let config = always.config().unwrap_or_default();
        assert_eq!(config.timeout, Duration::from_millis(2_500));
    }
}
