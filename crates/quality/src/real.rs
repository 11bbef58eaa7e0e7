//! Real labelled webs: documentation as Debian ships it, served as it was published, each
//! release or language on its own 127.0.0.x address, with a ground truth computed without the
//! product (another HTML parser, another diff).
//!
//! - Versions: two releases of the LLVM or Clang manuals (`llvm-14-doc`, `llvm-15-doc`,
//!   `llvm-16-doc`, `clang-14-doc`, `clang-16-doc`), the older one seeded first.
//! - Languages: the Debian Administrator's Handbook (`debian-handbook`) in English and several
//!   translations; a translation's untranslated pages keep the English text under translated
//!   navigation. And the Debian Reference (`debian-reference-*`) in its eleven languages, the
//!   language in each file's name (`ch07.fr.html`), translated paragraph by paragraph (po4a:
//!   what is not translated stays English), the Brazilian Portuguese a copy of the
//!   Portuguese; held out.
//!
//! The truth ([`RealTruth`]) reads each page's main region as the site's own markup marks it
//! (Sphinx's `div[role=main]`, the DocBook chapter and section `div`s under `<body>`),
//! splits it into words (CJK characters one by one), and compares two pages by the diff ratio
//! of their word sequences, 2 x matched / total as `difflib` counts it, with the matched words
//! the longest common subsequence (Myers' diff without heuristics, crate `similar`): near at
//! 0.8 or more, distinct at 0.5 or less, unknown between. Pages of one site
//! whose main texts nearly match each other are unknown (which of them is "the" original is a
//! matter of taste), and so are pages with fewer than [`MIN_TRUTH_WORDS`](truth::MIN_TRUTH_WORDS) words.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use nearcrawl_demo_web::{Reply, RunningSite, Site, serve_on};
use scraper::{Html, Selector};
use url::Url;

use crate::truth::Kind;

mod copies;
mod truth;

use copies::{Copying, Origin};

pub use truth::{DISTINCT_RATIO, NEAR_RATIO, RealTruth, sequence_ratio};
use truth::{TruthPage, main_words};

mod scripted;

pub use scripted::is_shell as is_script_shell;

/// The real webs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RealWeb {
    /// LLVM 14 then 15: used for tuning.
    Llvm14To15,
    /// LLVM 15 then 16: held out.
    Llvm15To16,
    /// Clang 14 then 16: held out.
    Clang14To16,
    /// The handbook in English, French, Czech and Japanese: used for tuning.
    HandbookTuning,
    /// The handbook in English, Spanish, Dutch, Russian and Simplified Chinese: held out.
    HandbookHeldOut,
    /// The Debian Reference in its eleven languages: held out.
    ReferenceLanguages,
    /// The Apache HTTP Server manual crawled beside its mirror and its syndication
    /// ([`Copying`]): used for tuning.
    MirrorApache,
    /// The PostgreSQL manual crawled beside its mirror and its syndication: held out.
    MirrorPostgresql,
}

/// One site of a real web: a directory of a package served at the site's root.
pub(crate) struct SiteSource {
    /// The package's HTML directory.
    pub(crate) root: PathBuf,
    /// Subdirectories served (empty: all).
    pub(crate) dirs: Vec<&'static str>,
    /// The seed's path.
    pub(crate) seed: String,
    /// The prefix that pages of other sites lack (a language's directory), removed to pair
    /// a page with its counterparts.
    pub(crate) prefix: String,
    /// The ending of the file names served, before `.html` (a language's, `.fr`; empty:
    /// every page), removed to pair a page with its counterparts.
    pub(crate) suffix: String,
}

impl RealWeb {
    /// Every real web, tuning ones first.
    pub const ALL: [RealWeb; 8] = [
        RealWeb::Llvm14To15,
        RealWeb::HandbookTuning,
        RealWeb::MirrorApache,
        RealWeb::Llvm15To16,
        RealWeb::Clang14To16,
        RealWeb::HandbookHeldOut,
        RealWeb::ReferenceLanguages,
        RealWeb::MirrorPostgresql,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RealWeb::Llvm14To15 => "llvm-14-15",
            RealWeb::Llvm15To16 => "llvm-15-16",
            RealWeb::Clang14To16 => "clang-14-16",
            RealWeb::HandbookTuning => "handbook-tuning",
            RealWeb::HandbookHeldOut => "handbook-held-out",
            RealWeb::ReferenceLanguages => "reference-languages",
            RealWeb::MirrorApache => "mirror-apache",
            RealWeb::MirrorPostgresql => "mirror-postgresql",
        }
    }

    /// The web named `name`.
    pub fn parse(name: &str) -> Option<RealWeb> {
        RealWeb::ALL.into_iter().find(|w| w.name() == name)
    }

    /// Whether defaults may be chosen on it (false: it only checks them).
    pub fn tuning(self) -> bool {
        matches!(
            self,
            RealWeb::Llvm14To15 | RealWeb::HandbookTuning | RealWeb::MirrorApache
        )
    }

    /// The Debian packages it is built from.
    pub fn packages(self) -> &'static [&'static str] {
        match self {
            RealWeb::Llvm14To15 => &["llvm-14-doc", "llvm-15-doc"],
            RealWeb::Llvm15To16 => &["llvm-15-doc", "llvm-16-doc"],
            RealWeb::Clang14To16 => &["clang-14-doc", "clang-16-doc"],
            RealWeb::HandbookTuning | RealWeb::HandbookHeldOut => &["debian-handbook"],
            RealWeb::ReferenceLanguages => &[
                "debian-reference-en",
                "debian-reference-de",
                "debian-reference-es",
                "debian-reference-fr",
                "debian-reference-id",
                "debian-reference-it",
                "debian-reference-ja",
                "debian-reference-pt",
                "debian-reference-pt-br",
                "debian-reference-zh-cn",
                "debian-reference-zh-tw",
            ],
            RealWeb::MirrorApache => &["apache2-doc"],
            RealWeb::MirrorPostgresql => &["postgresql-doc-15"],
        }
    }

    fn languages(self) -> &'static [&'static str] {
        match self {
            RealWeb::HandbookTuning => &["en-US", "fr-FR", "cs-CZ", "ja-JP"],
            RealWeb::HandbookHeldOut => &["en-US", "es-ES", "nl-NL", "ru-RU", "zh-CN"],
            RealWeb::ReferenceLanguages => &[
                "en", "de", "es", "fr", "id", "it", "ja", "pt", "pt-br", "zh-cn", "zh-tw",
            ],
            _ => &[],
        }
    }

    fn sites(self) -> Vec<SiteSource> {
        let release = |dir: &str| SiteSource {
            root: PathBuf::from(format!("/usr/share/doc/{dir}/html")),
            dirs: Vec::new(),
            seed: "/index.html".into(),
            prefix: String::new(),
            suffix: String::new(),
        };
        match self {
            RealWeb::Llvm14To15 => vec![release("llvm-14-doc"), release("llvm-15-doc")],
            RealWeb::Llvm15To16 => vec![release("llvm-15-doc"), release("llvm-16-doc")],
            RealWeb::Clang14To16 => vec![release("clang-14"), release("clang-16")],
            RealWeb::HandbookTuning | RealWeb::HandbookHeldOut => self
                .languages()
                .iter()
                .map(|lang| SiteSource {
                    root: PathBuf::from("/usr/share/doc/debian-handbook/html"),
                    dirs: vec![lang],
                    seed: format!("/{lang}/index.html"),
                    prefix: format!("/{lang}"),
                    suffix: String::new(),
                })
                .collect(),
            RealWeb::ReferenceLanguages => self
                .languages()
                .iter()
                .map(|lang| SiteSource {
                    root: PathBuf::from("/usr/share/debian-reference"),
                    dirs: Vec::new(),
                    seed: format!("/index.{lang}.html"),
                    prefix: String::new(),
                    suffix: format!(".{lang}"),
                })
                .collect(),
            RealWeb::MirrorApache => vec![SiteSource {
                root: PathBuf::from("/usr/share/doc/apache2-doc/manual"),
                dirs: vec!["en"],
                seed: "/en/index.html".into(),
                prefix: "/en".into(),
                suffix: String::new(),
            }],
            RealWeb::MirrorPostgresql => vec![release("postgresql-doc-15")],
        }
    }

    /// The sites made from the first one, served after it.
    fn copies(self) -> &'static [Copying] {
        match self {
            RealWeb::MirrorApache | RealWeb::MirrorPostgresql => {
                &[Copying::Mirror, Copying::Syndication]
            }
            _ => &[],
        }
    }

    /// The selector of the main region, as the documentation's own markup marks it.
    fn main_selector(self) -> &'static str {
        match self {
            RealWeb::HandbookTuning | RealWeb::HandbookHeldOut => "body > div:not(#banner)",
            RealWeb::ReferenceLanguages => {
                "body > div:not(.navheader):not(.navfooter), body > p, body > h1"
            }
            RealWeb::MirrorApache => "#page-content",
            RealWeb::MirrorPostgresql => "body > div:not(.navheader):not(.navfooter)",
            _ => "div[role=main]",
        }
    }

    /// Kind of a page that has a near counterpart on an earlier site.
    fn copy_kind(self) -> Kind {
        match self {
            RealWeb::HandbookTuning | RealWeb::HandbookHeldOut | RealWeb::ReferenceLanguages => {
                Kind::Untranslated
            }
            _ => Kind::Unchanged,
        }
    }
}

/// How much of each site is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealSize {
    /// The CI variant: the first `n` pages of each site, breadth-first from its seed in link
    /// order (links to pages beyond answer 404).
    Small(usize),
    /// Every page.
    Full,
}

/// A real web could not be built.
#[derive(Debug)]
pub struct RealWebError(pub String);

impl std::fmt::Display for RealWebError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RealWebError {}

/// A served real web.
#[derive(Debug)]
pub struct RealLabelledWeb {
    /// The sites, in seed order.
    pub sites: Vec<RunningSite>,
    /// What every page is.
    pub truth: RealTruth,
    /// The seed list: each site's top page, older release (or English) first.
    pub seeds: String,
}

impl RealLabelledWeb {
    /// The body and content type served at `url`, if it is a page of the web.
    pub fn body(&self, url: &str) -> Option<(Vec<u8>, String)> {
        let site = self.sites.iter().find(|s| url.starts_with(&s.url("/")))?;
        let reply = site.site.reply(&url[site.url("").len()..]);
        let content_type = reply
            .headers
            .iter()
            .find(|(n, _)| n == "content-type")
            .map(|(_, v)| v.clone())?;
        (reply.status == 200).then_some((reply.body, content_type))
    }
}

/// A file of a site, as served.
pub(crate) struct SiteFile {
    pub(crate) path: String,
    pub(crate) bytes: Vec<u8>,
}

/// Serves `web` on 127.0.0.`first_address` and the addresses after it, and computes its truth.
pub async fn build_real(
    web: RealWeb,
    size: RealSize,
    first_address: u8,
) -> Result<RealLabelledWeb, RealWebError> {
    build_real_served(web, size, first_address, false).await
}

/// [`build_real`], with about half of every site's pages served as a script's shell when
/// `scripted` (`real/scripted.rs`: a browser shows them as they were).
pub async fn build_real_served(
    web: RealWeb,
    size: RealSize,
    first_address: u8,
    scripted: bool,
) -> Result<RealLabelledWeb, RealWebError> {
    let mut web_pages = WebPages {
        scripted,
        ..WebPages::default()
    };
    let selector = Selector::parse(web.main_selector())
        .map_err(|e| RealWebError(format!("main selector: {e}")))?;
    let sources = web.sites();
    let mut first = None;
    for source in &sources {
        let files = read_site(source)?;
        let kept = match size {
            RealSize::Full => files.keys().cloned().collect::<HashSet<_>>(),
            RealSize::Small(n) => first_pages(&files, &source.seed, n),
        };
        let pages = kept.iter().map(|path| {
            let rel = path
                .strip_prefix(source.prefix.as_str())
                .unwrap_or(path)
                .to_string();
            let rel = match source.suffix.as_str() {
                "" => rel,
                suffix => rel.replace(&format!("{suffix}.html"), ".html"),
            };
            let html = String::from_utf8_lossy(&files[path].bytes).into_owned();
            (path.clone(), html, rel)
        });
        let url = web_pages
            .serve(pages.collect(), &source.seed, &selector, first_address)
            .await?;
        first.get_or_insert((files, kept, url));
    }
    if let (Some((files, kept, url)), Some(source)) = (&first, sources.first()) {
        for copying in web.copies() {
            let origin = Origin {
                files,
                kept,
                prefix: &source.prefix,
                url: url.trim_end_matches('/'),
                main: &selector,
            };
            let pages = copying.build(&origin);
            let pages = pages.into_iter().map(|p| (p.path, p.html, p.rel)).collect();
            let seed = copying.seed(&source.seed, &source.prefix);
            web_pages
                .serve(pages, &seed, &selector, first_address)
                .await?;
        }
    }
    Ok(RealLabelledWeb {
        sites: web_pages.sites,
        truth: RealTruth::new(web, web_pages.pages),
        seeds: web_pages.seeds,
    })
}

/// The sites of a web served so far, with their seeds and the truth's pages.
#[derive(Default)]
struct WebPages {
    /// About half of each site's pages served as a script's shell.
    scripted: bool,
    sites: Vec<RunningSite>,
    seeds: String,
    pages: Vec<TruthPage>,
}

impl WebPages {
    /// Serves the next site's `pages` (served path, HTML, the truth's pairing key) on the
    /// next address, seeded at `seed`. Its address, `http://127.0.0.x:port/`.
    async fn serve(
        &mut self,
        pages: Vec<(String, String, String)>,
        seed: &str,
        main: &Selector,
        first_address: u8,
    ) -> Result<String, RealWebError> {
        let i = self.sites.len();
        let addr = SocketAddr::new(
            IpAddr::V4(Ipv4Addr::new(
                127,
                0,
                0,
                first_address.wrapping_add(i as u8),
            )),
            0,
        );
        let mut site = Site::new();
        let mut site_pages = Vec::new();
        for (path, html, rel) in pages {
            let words = main_words(&html, main);
            let html = match self.scripted && scripted::is_shell(&path) {
                true => scripted::shell(&html),
                false => html,
            };
            site.insert(&path, Reply::html(html));
            site_pages.push((path, rel, words));
        }
        if self.scripted {
            site.insert(
                "/app.js",
                Reply::ok("application/javascript", scripted::APP),
            );
        }
        let running = serve_on(site, addr)
            .await
            .map_err(|e| RealWebError(format!("serving {addr}: {e}")))?;
        self.seeds.push_str(&running.url(seed));
        self.seeds.push('\n');
        site_pages.sort();
        for (path, rel, words) in site_pages {
            self.pages.push(TruthPage {
                url: running.url(&path),
                site: i,
                rel,
                words,
            });
        }
        let url = running.url("/");
        self.sites.push(running);
        Ok(url)
    }
}

/// The HTML pages of a site, by served path.
pub(crate) fn read_site(source: &SiteSource) -> Result<HashMap<String, SiteFile>, RealWebError> {
    let mut files = HashMap::new();
    let dirs: Vec<PathBuf> = if source.dirs.is_empty() {
        vec![source.root.clone()]
    } else {
        source.dirs.iter().map(|d| source.root.join(d)).collect()
    };
    let mut stack = dirs;
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            RealWebError(format!(
                "{}: {e} (install the documentation with scripts/quality-deps.sh)",
                dir.display()
            ))
        })?;
        for entry in entries {
            let path = entry
                .map_err(|e| RealWebError(format!("{}: {e}", dir.display())))?
                .path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            // HTML pages only: Sphinx's `_sources/*.txt` would make every page a near-duplicate
            // of its own source on the same site. Of the site's language, where the languages
            // share a directory.
            if !path
                .to_string_lossy()
                .ends_with(&format!("{}.html", source.suffix))
            {
                continue;
            }
            let bytes = std::fs::read(&path)
                .map_err(|e| RealWebError(format!("{}: {e}", path.display())))?;
            let served = served_path(&source.root, &path);
            files.insert(
                served.clone(),
                SiteFile {
                    path: served,
                    bytes,
                },
            );
        }
    }
    Ok(files)
}

fn served_path(root: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(root).unwrap_or(file);
    let mut path = String::new();
    for part in rel.components() {
        path.push('/');
        path.push_str(&part.as_os_str().to_string_lossy());
    }
    path
}

/// The first `n` files reached breadth-first from `seed`, links in document order.
fn first_pages(files: &HashMap<String, SiteFile>, seed: &str, n: usize) -> HashSet<String> {
    let base = Url::parse("http://site.invalid/").expect("a valid base URL");
    let selector = Selector::parse("a[href]").expect("a valid selector");
    let mut kept = HashSet::new();
    let mut queue = VecDeque::from([seed.to_string()]);
    while let Some(path) = queue.pop_front() {
        if kept.len() >= n {
            break;
        }
        let Some(file) = files.get(&path) else {
            continue;
        };
        if !kept.insert(path.clone()) {
            continue;
        }
        let Ok(here) = base.join(&file.path) else {
            continue;
        };
        let doc = Html::parse_document(&String::from_utf8_lossy(&file.bytes));
        for link in doc.select(&selector) {
            let Some(target) = link.value().attr("href").and_then(|h| here.join(h).ok()) else {
                continue;
            };
            if target.host_str() == Some("site.invalid") && !kept.contains(target.path()) {
                queue.push_back(target.path().to_string());
            }
        }
    }
    kept
}
