//! Pages written by scripts, rendered in headless Chromium so that the crawl judges and
//! follows what a reader sees (Debian's `chromium`, driven over the DevTools protocol by
//! `chromiumoxide`; no browser is downloaded).
//!
//! The browser never reaches the network itself: every request a page makes is paused (the
//! protocol's `Fetch` domain) and answered by the crawler. The page's own document is the
//! response the crawler fetched already; every other request (scripts, styles, XHR) goes
//! through [`Subresources`], which applies the crawl's rules (scope, robots.txt, the
//! private-address policy) and counts its bytes, or refuses it. A page gets at most
//! [`RenderConfig::max_subresources`] requests and [`RenderConfig::timeout`] in all; its DOM
//! is read once its requests have been quiet for [`RenderConfig::settle`]. Dialogs are
//! dismissed, pop-ups blocked (`--block-new-web-contents`), and a response the browser would
//! download is never asked for (the crawler answers only with what it fetched).
//!
//! A [`Renderer`] is one browser with a fresh profile and a pool of [`RenderConfig::tabs`]
//! tabs; [`Renderer::render`] says what became of every request in [`Rendered::requests`].

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chromiumoxide::Page;
use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::fetch::{
    EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry,
};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use chromiumoxide::cdp::browser_protocol::page::{
    EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use futures::StreamExt;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use url::Url;

pub use auto::{
    AUTO_MAX_TEXT, AUTO_TRIES, AutoHosts, Choice, GLANCE_MAX_TEXT, HostRenders, Shown, added,
    choose, glance, has_script,
};
pub use carried::static_carries;
pub use settings::{RenderMode, RenderSettings};

mod auto;
mod carried;
mod settings;

/// How pages are rendered (`[render]` in a job file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderConfig {
    /// The browser: Debian's `chromium` (`scripts/browser-deps.sh` installs it).
    pub chromium: PathBuf,
    /// Pages rendered at once, each in a tab of its own.
    pub tabs: usize,
    /// The most a page's render may take, its requests included.
    pub timeout: Duration,
    /// The most requests a page may make besides its document; those past it are refused.
    pub max_subresources: u32,
    /// How long a page's requests must have been quiet, once it loaded, before its DOM is
    /// read.
    pub settle: Duration,
}

impl Default for RenderConfig {
    fn default() -> RenderConfig {
        RenderConfig {
            chromium: PathBuf::from("chromium"),
            tabs: 4,
            timeout: Duration::from_secs(10),
            max_subresources: 64,
            settle: Duration::from_millis(100),
        }
    }
}

/// A response the crawler fetched, for the browser.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fetched {
    /// Its HTTP status.
    pub status: u16,
    /// The headers the browser is told: its content type, a redirect's location.
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Vec<u8>,
}

/// What a future answer of [`Subresources::fetch`] is.
pub type Answer<'a> = Pin<Box<dyn Future<Output = Result<Fetched, String>> + Send + 'a>>;

/// How the crawler answers the requests a page makes besides its document.
pub trait Subresources: Send + Sync {
    /// The response to `url`, fetched under the crawl's rules, or why it was refused.
    fn fetch(&self, url: Url) -> Answer<'_>;
}

/// What became of one request a page made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// Fetched by the crawler and given to the page.
    Fetched {
        /// The URL asked.
        url: String,
        /// The response's status.
        status: u16,
        /// Its body's bytes.
        bytes: u64,
    },
    /// Refused by the crawl's rules (the reason [`Subresources::fetch`] gave), or not a URL
    /// the crawler fetches.
    Refused {
        /// The URL asked.
        url: String,
        /// Why.
        reason: String,
    },
    /// Past [`RenderConfig::max_subresources`]: refused without being asked of the crawler.
    OverBudget {
        /// The URL asked.
        url: String,
    },
}

impl Requested {
    /// The bytes given to the page.
    pub fn bytes(&self) -> u64 {
        match self {
            Requested::Fetched { bytes, .. } => *bytes,
            _ => 0,
        }
    }
}

/// A page rendered.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Its DOM, serialised as HTML.
    pub html: String,
    /// What became of each request it made besides its document, in the order made.
    pub requests: Vec<Requested>,
    /// How long it took, from opening its tab to reading its DOM.
    pub elapsed: Duration,
}

/// Why a page was not rendered, or the browser did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderError {
    /// The browser did not start: what is missing or wrong.
    Start(String),
    /// The page did not render within [`RenderConfig::timeout`] (a script that loops, a
    /// page that never quiets down), with the requests it made.
    TimedOut {
        /// The time limit.
        timeout: Duration,
        /// Requests it made.
        requests: usize,
    },
    /// The browser failed the page (a crashed tab, a closed connection).
    Page(String),
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenderError::Start(e) => write!(f, "the browser did not start: {e}"),
            RenderError::TimedOut { timeout, requests } => write!(
                f,
                "not rendered within {} ms ({requests} requests made)",
                timeout.as_millis()
            ),
            RenderError::Page(e) => write!(f, "the browser failed the page: {e}"),
        }
    }
}

impl std::error::Error for RenderError {}

/// The browser's flags besides headless and no sandbox (these machines run as root): no GPU,
/// none of its own connections (updates, sync, metrics), no pop-ups.
const FLAGS: [&str; 12] = [
    "disable-gpu",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    "no-first-run",
    "disable-default-apps",
    "disable-extensions",
    "disable-breakpad",
    "disable-dev-shm-usage",
    "block-new-web-contents",
    "mute-audio",
    "metrics-recording-only",
];

/// One headless browser and its tabs.
pub struct Renderer {
    browser: Browser,
    handler: JoinHandle<()>,
    tabs: Semaphore,
    config: RenderConfig,
    /// The browser's fresh profile, removed with the renderer.
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Renderer {
    /// Starts the browser `config` names, with a fresh profile; an error names what is
    /// missing (the browser's path, its failure to start).
    pub async fn start(config: RenderConfig) -> Result<Renderer, RenderError> {
        let found = which(&config.chromium).ok_or_else(|| {
            RenderError::Start(format!(
                "no browser at {} (install Debian's chromium: scripts/browser-deps.sh, or \
                 name it with [render] chromium)",
                config.chromium.display()
            ))
        })?;
        let profile = tempfile::tempdir()
            .map_err(|e| RenderError::Start(format!("a profile directory: {e}")))?;
        let browser_config = BrowserConfig::builder()
            .chrome_executable(&found)
            .disable_default_args()
            .new_headless_mode()
            .no_sandbox()
            .args(FLAGS)
            .user_data_dir(profile.path())
            .enable_request_intercept()
            .launch_timeout(Duration::from_secs(30))
            .build()
            .map_err(RenderError::Start)?;
        let (browser, mut handler) = Browser::launch(browser_config)
            .await
            .map_err(|e| RenderError::Start(format!("{}: {e}", found.display())))?;
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(e) = event {
                    tracing::debug!(error = %e, "the browser's connection");
                }
            }
        });
        Ok(Renderer {
            browser,
            handler,
            tabs: Semaphore::new(config.tabs.max(1)),
            config,
            _profile: profile,
        })
    }

    /// What the renderer was started with.
    pub fn config(&self) -> &RenderConfig {
        &self.config
    }

    /// Renders the page at `url` whose response the crawler fetched (`document`), its other
    /// requests answered by `subresources`.
    pub async fn render(
        &self,
        url: &Url,
        document: Fetched,
        subresources: Arc<dyn Subresources>,
    ) -> Result<Rendered, RenderError> {
        let _tab = (self.tabs.acquire().await).map_err(|e| RenderError::Page(e.to_string()))?;
        let started = Instant::now();
        let page = (self.browser.new_page("about:blank").await)
            .map_err(|e| RenderError::Page(e.to_string()))?;
        let state = Arc::new(Mutex::new(Requests::default()));
        let answering = self
            .answer(&page, url, document, subresources, &state)
            .await;
        let rendered = match answering {
            Ok(tasks) => {
                let rendered = tokio::time::timeout(self.config.timeout, async {
                    (page.goto(url.as_str()).await)
                        .map_err(|e| RenderError::Page(e.to_string()))?;
                    // Quiet from the load on: a script's first requests may come just after.
                    lock(&state).touch();
                    settle(&state, self.config.settle).await;
                    (page.content().await).map_err(|e| RenderError::Page(e.to_string()))
                })
                .await;
                for task in tasks {
                    task.abort();
                }
                rendered
            }
            Err(e) => Ok(Err(e)),
        };
        // A tab whose script loops may not close at once: the browser closes it in time.
        let _ = tokio::time::timeout(Duration::from_secs(2), page.close()).await;
        let requests = std::mem::take(&mut lock(&state).made);
        match rendered {
            Err(_) => Err(RenderError::TimedOut {
                timeout: self.config.timeout,
                requests: requests.len(),
            }),
            Ok(Err(e)) => Err(e),
            Ok(Ok(html)) => Ok(Rendered {
                html,
                requests,
                elapsed: started.elapsed(),
            }),
        }
    }

    /// Starts answering the page's paused requests and dismissing its dialogs: the tasks,
    /// to stop once it is rendered.
    async fn answer(
        &self,
        page: &Page,
        url: &Url,
        document: Fetched,
        subresources: Arc<dyn Subresources>,
        state: &Arc<Mutex<Requests>>,
    ) -> Result<Vec<JoinHandle<()>>, RenderError> {
        let failed = |e: chromiumoxide::error::CdpError| RenderError::Page(e.to_string());
        let mut paused = (page.event_listener::<EventRequestPaused>().await).map_err(failed)?;
        let mut dialogs =
            (page.event_listener::<EventJavascriptDialogOpening>().await).map_err(failed)?;
        let mut own = url.clone();
        own.set_fragment(None);
        let (tab, state, budget) = (
            page.clone(),
            Arc::clone(state),
            self.config.max_subresources,
        );
        let requests = tokio::spawn(async move {
            let mut document = Some(document);
            while let Some(event) = paused.next().await {
                let asked = event.request.url.clone();
                if asked == own.as_str()
                    && let Some(document) = document.take()
                {
                    fulfil(&tab, &event, &document).await;
                    continue;
                }
                let tab = tab.clone();
                let state = Arc::clone(&state);
                let subresources = Arc::clone(&subresources);
                if !lock(&state).start(budget) {
                    lock(&state).done(Requested::OverBudget { url: asked });
                    refuse(&tab, &event).await;
                    continue;
                }
                tokio::spawn(async move {
                    let answer = match Url::parse(&asked) {
                        Ok(url) => subresources.fetch(url).await,
                        Err(e) => Err(format!("not a URL: {e}")),
                    };
                    let made = match answer {
                        Ok(fetched) => {
                            fulfil(&tab, &event, &fetched).await;
                            Requested::Fetched {
                                url: asked,
                                status: fetched.status,
                                bytes: fetched.body.len() as u64,
                            }
                        }
                        Err(reason) => {
                            refuse(&tab, &event).await;
                            Requested::Refused { url: asked, reason }
                        }
                    };
                    lock(&state).done(made);
                });
            }
        });
        let tab = page.clone();
        let dismissing = tokio::spawn(async move {
            while dialogs.next().await.is_some() {
                let _ = tab.execute(HandleJavaScriptDialogParams::new(false)).await;
            }
        });
        Ok(vec![requests, dismissing])
    }

    /// Closes the browser and waits for it to exit.
    pub async fn close(mut self) {
        let _ = self.browser.close().await;
        let _ = self.browser.wait().await;
        self.handler.abort();
    }
}

/// The requests a page made so far.
#[derive(Debug, Default)]
struct Requests {
    /// Asked of the crawler, answered or not yet.
    asked: u32,
    /// Not answered yet.
    pending: u32,
    /// When the last was asked or answered.
    last: Option<Instant>,
    made: Vec<Requested>,
}

impl Requests {
    /// Something happened (the page loaded): the quiet period starts again.
    fn touch(&mut self) {
        self.last = Some(Instant::now());
    }

    /// A request to ask of the crawler, within `budget`: whether it may be.
    fn start(&mut self, budget: u32) -> bool {
        self.touch();
        if self.asked >= budget {
            return false;
        }
        self.asked += 1;
        self.pending += 1;
        true
    }

    /// A request answered (or refused without asking).
    fn done(&mut self, made: Requested) {
        if !matches!(made, Requested::OverBudget { .. }) {
            self.pending = self.pending.saturating_sub(1);
        }
        self.last = Some(Instant::now());
        self.made.push(made);
    }

    /// Whether no request is pending and none was asked or answered for `quiet`.
    fn quiet(&self, quiet: Duration) -> bool {
        self.pending == 0 && self.last.is_none_or(|at| at.elapsed() >= quiet)
    }
}

fn lock(state: &Mutex<Requests>) -> std::sync::MutexGuard<'_, Requests> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits until the page's requests have been quiet for `quiet`.
async fn settle(state: &Mutex<Requests>, quiet: Duration) {
    let step = (quiet / 4).max(Duration::from_millis(5));
    while !lock(state).quiet(quiet) {
        tokio::time::sleep(step).await;
    }
}

/// Answers the paused request `event` with `fetched`.
async fn fulfil(tab: &Page, event: &EventRequestPaused, fetched: &Fetched) {
    let headers = (fetched.headers.iter())
        .map(|(name, value)| HeaderEntry::new(name.clone(), value.clone()))
        .collect::<Vec<_>>();
    let mut params = FulfillRequestParams::new(event.request_id.clone(), fetched.status);
    params.response_headers = Some(headers);
    params.body = Some(BASE64.encode(&fetched.body).into());
    if let Err(e) = tab.execute(params).await {
        tracing::debug!(url = %event.request.url, error = %e, "a request not answered");
    }
}

/// Fails the paused request `event`, as a client's refusal.
async fn refuse(tab: &Page, event: &EventRequestPaused) {
    let params = FailRequestParams::new(event.request_id.clone(), ErrorReason::BlockedByClient);
    if let Err(e) = tab.execute(params).await {
        tracing::debug!(url = %event.request.url, error = %e, "a request not refused");
    }
}

/// The browser at `path`: itself when it names a file, else the first on the `PATH` of
/// that name.
fn which(path: &std::path::Path) -> Option<PathBuf> {
    if path.components().count() > 1 {
        return path.is_file().then(|| path.to_path_buf());
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(path))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_quiet_once_its_requests_are_answered_and_nothing_moved_for_a_while() {
        let mut requests = Requests::default();
        assert!(requests.quiet(Duration::from_secs(60)), "nothing asked yet");
        requests.touch();
        assert!(!requests.quiet(Duration::from_secs(60)), "just loaded");
        assert!(requests.start(2));
        assert!(!requests.quiet(Duration::ZERO), "one pending");
        let fetched = |url: &str| Requested::Fetched {
            url: url.to_owned(),
            status: 200,
            bytes: 10,
        };
        requests.done(fetched("a"));
        assert!(requests.quiet(Duration::ZERO));
        assert!(!requests.quiet(Duration::from_secs(60)), "just answered");
        assert!(requests.start(2));
        assert!(!requests.start(2), "past the budget");
        requests.done(Requested::OverBudget { url: "c".into() });
        assert_eq!(
            requests.pending, 1,
            "the one over the budget was never pending"
        );
        requests.done(fetched("b"));
        assert_eq!(requests.made.len(), 3);
    }

    #[test]
    fn a_browser_is_found_by_its_path_or_on_the_path() {
        assert_eq!(which(std::path::Path::new("/no/such/browser")), None);
        assert_eq!(which(std::path::Path::new("no-such-browser-here")), None);
        assert!(which(std::path::Path::new("sh")).is_some());
    }
}
