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
//! matter of taste), and so are pages with fewer than [`MIN_TRUTH_WORDS`] words.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nearcrawl_demo_web::{Reply, RunningSite, Site, serve_on};
use scraper::{Html, Selector};
use similar::{Algorithm, capture_diff_slices_deadline, diff_ratio};
use url::Url;

use crate::measure::Labels;
use crate::truth::{Kind, PageTruth};

/// Pages with fewer words than this in their main region are not scored.
pub const MIN_TRUTH_WORDS: usize = 8;
/// Diff ratio at or above which two pages are near-duplicates.
pub const NEAR_RATIO: f64 = 0.8;
/// Diff ratio at or below which two pages are distinct.
pub const DISTINCT_RATIO: f64 = 0.5;

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
    pub const ALL: [RealWeb; 6] = [
        RealWeb::Llvm14To15,
        RealWeb::HandbookTuning,
        RealWeb::Llvm15To16,
        RealWeb::Clang14To16,
        RealWeb::HandbookHeldOut,
        RealWeb::ReferenceLanguages,
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
        }
    }

    /// The web named `name`.
    pub fn parse(name: &str) -> Option<RealWeb> {
        RealWeb::ALL.into_iter().find(|w| w.name() == name)
    }

    /// Whether defaults may be chosen on it (false: it only checks them).
    pub fn tuning(self) -> bool {
        matches!(self, RealWeb::Llvm14To15 | RealWeb::HandbookTuning)
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
        }
    }

    /// The selector of the main region, as the documentation's own markup marks it.
    fn main_selector(self) -> &'static str {
        match self {
            RealWeb::HandbookTuning | RealWeb::HandbookHeldOut => "body > div:not(#banner)",
            RealWeb::ReferenceLanguages => {
                "body > div:not(.navheader):not(.navfooter), body > p, body > h1"
            }
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
    let mut sites = Vec::new();
    let mut seeds = String::new();
    let mut pages: Vec<TruthPage> = Vec::new();
    let selector = Selector::parse(web.main_selector())
        .map_err(|e| RealWebError(format!("main selector: {e}")))?;
    for (i, source) in web.sites().iter().enumerate() {
        let files = read_site(source)?;
        let addr = SocketAddr::new(
            IpAddr::V4(Ipv4Addr::new(
                127,
                0,
                0,
                first_address.wrapping_add(i as u8),
            )),
            0,
        );
        let kept = match size {
            RealSize::Full => files.keys().cloned().collect::<HashSet<_>>(),
            RealSize::Small(n) => first_pages(&files, &source.seed, n),
        };
        let mut site = Site::new();
        let mut site_pages = Vec::new();
        for path in &kept {
            let file = &files[path];
            site.insert(path, Reply::html(String::from_utf8_lossy(&file.bytes)));
            let words = main_words(&String::from_utf8_lossy(&file.bytes), &selector);
            let rel = path
                .strip_prefix(source.prefix.as_str())
                .unwrap_or(path)
                .to_string();
            let rel = match source.suffix.as_str() {
                "" => rel,
                suffix => rel.replace(&format!("{suffix}.html"), ".html"),
            };
            site_pages.push((path.clone(), rel, words));
        }
        let running = serve_on(site, addr)
            .await
            .map_err(|e| RealWebError(format!("serving {addr}: {e}")))?;
        seeds.push_str(&running.url(&source.seed));
        seeds.push('\n');
        site_pages.sort();
        for (path, rel, words) in site_pages {
            pages.push(TruthPage {
                url: running.url(&path),
                site: i,
                rel,
                words,
            });
        }
        sites.push(running);
    }
    Ok(RealLabelledWeb {
        sites,
        truth: RealTruth::new(web, pages),
        seeds,
    })
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

/// The words of a page's main region (the whole body when the markup marks none).
fn main_words(html: &str, main: &Selector) -> Vec<String> {
    let doc = Html::parse_document(html);
    let skip = |node: &scraper::ElementRef<'_>| {
        matches!(node.value().name(), "script" | "style" | "noscript")
    };
    let mut text = String::new();
    let mut regions: Vec<_> = doc.select(main).collect();
    if regions.is_empty() {
        regions = doc
            .select(&Selector::parse("body").expect("a valid selector"))
            .collect();
    }
    for region in regions {
        for node in region.descendants() {
            if let Some(t) = node.value().as_text() {
                let inside_skipped = node
                    .ancestors()
                    .filter_map(scraper::ElementRef::wrap)
                    .any(|e| skip(&e));
                if !inside_skipped {
                    text.push_str(t);
                    text.push(' ');
                }
            }
        }
    }
    words(&text)
}

/// Lowercased whitespace-separated words; characters of CJK scripts are words of their own.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split_whitespace() {
        let mut current = String::new();
        for c in word.chars().flat_map(char::to_lowercase) {
            if is_cjk(c) {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                out.push(c.to_string());
            } else {
                current.push(c);
            }
        }
        if !current.is_empty() {
            out.push(current);
        }
    }
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff)
}

/// One page of the truth.
#[derive(Debug)]
struct TruthPage {
    url: String,
    site: usize,
    rel: String,
    words: Vec<String>,
}

/// The truth about a real web: per page its group and kind, and for any two pages whether the
/// second is truly a near-duplicate of the first.
#[derive(Debug)]
pub struct RealTruth {
    pages: HashMap<String, (PageTruth, usize)>,
    words: Vec<Vec<u64>>,
    rels: Vec<String>,
    ratios: Mutex<HashMap<(usize, usize), f64>>,
}

fn word_ids(words: &[String]) -> Vec<u64> {
    words
        .iter()
        .map(|w| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            w.hash(&mut h);
            h.finish()
        })
        .collect()
}

/// The diff ratio of two word sequences: 2 x matched words / total words (1 for two empty
/// texts). A multiset bound first: pages that cannot reach `DISTINCT_RATIO` are not diffed.
pub fn sequence_ratio(a: &[u64], b: &[u64]) -> f64 {
    bounded_ratio(a, b, DISTINCT_RATIO)
}

/// The diff ratio, or an upper bound of it at or under `floor` (the multiset bound) when it
/// cannot exceed `floor`.
fn bounded_ratio(a: &[u64], b: &[u64], floor: f64) -> f64 {
    let total = a.len() + b.len();
    if total == 0 {
        return 1.0;
    }
    let mut counts: HashMap<u64, i64> = HashMap::new();
    for w in a {
        *counts.entry(*w).or_default() += 1;
    }
    let mut common = 0usize;
    for w in b {
        if let Some(c) = counts.get_mut(w)
            && *c > 0
        {
            *c -= 1;
            common += 1;
        }
    }
    let bound = 2.0 * common as f64 / total as f64;
    if bound <= floor {
        return bound;
    }
    // Myers' diff without heuristics: the longest common subsequence itself (difflib's
    // matching blocks find a common subsequence, not always the longest).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let ops = capture_diff_slices_deadline(Algorithm::RawMyers, a, b, Some(deadline));
    f64::from(diff_ratio(&ops, a.len(), b.len()))
}

impl RealTruth {
    fn new(web: RealWeb, pages: Vec<TruthPage>) -> RealTruth {
        let words: Vec<Vec<u64>> = pages.iter().map(|p| word_ids(&p.words)).collect();
        let mut truth = RealTruth {
            pages: HashMap::new(),
            words,
            rels: pages.iter().map(|p| p.rel.clone()).collect(),
            ratios: Mutex::new(HashMap::new()),
        };
        // Pages of one site that nearly match each other: unknown.
        let mut ambiguous: HashSet<usize> = HashSet::new();
        let mut by_site: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, p) in pages.iter().enumerate() {
            by_site.entry(p.site).or_default().push(i);
        }
        for members in by_site.values() {
            let mut sorted = members.clone();
            sorted.sort_by_key(|&i| truth.words[i].len());
            for (x, &i) in sorted.iter().enumerate() {
                for &j in &sorted[x + 1..] {
                    let (li, lj) = (truth.words[i].len(), truth.words[j].len());
                    // ratio <= 2 li / (li + lj): past this, no longer page can be near.
                    if (2 * li) as f64 / ((li + lj).max(1)) as f64 <= NEAR_RATIO {
                        break;
                    }
                    // Only whether they are near matters here: no diff when they cannot be.
                    if bounded_ratio(&truth.words[i], &truth.words[j], NEAR_RATIO) >= NEAR_RATIO {
                        ambiguous.insert(i);
                        ambiguous.insert(j);
                    }
                }
            }
        }
        // Counterparts: the same page on other sites; near ones share a group.
        let mut by_rel: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, p) in pages.iter().enumerate() {
            by_rel.entry(p.rel.as_str()).or_default().push(i);
        }
        let mut parent: Vec<usize> = (0..pages.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut kinds: Vec<Kind> = vec![Kind::RealFirst; pages.len()];
        for members in by_rel.values() {
            for (x, &i) in members.iter().enumerate() {
                if x == 0 {
                    kinds[i] = if pages[i].site == 0 {
                        Kind::RealFirst
                    } else {
                        Kind::RealNew
                    };
                }
                for &j in &members[..x] {
                    let r = truth.ratio(j, i);
                    let kind = if r >= NEAR_RATIO {
                        let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                        parent[a.max(b)] = a.min(b);
                        web.copy_kind()
                    } else if r > DISTINCT_RATIO {
                        Kind::Edited
                    } else {
                        Kind::Rewritten
                    };
                    // The closest relation to an earlier site wins.
                    if x > 0 && kind_rank(kind) > kind_rank(kinds[i]) {
                        kinds[i] = kind;
                    }
                }
            }
        }
        // A page without counterpart may be an earlier page renamed: near any page of an
        // earlier site.
        for i in 0..pages.len() {
            if kinds[i] != Kind::RealNew {
                continue;
            }
            let li = truth.words[i].len();
            let renamed = (0..pages.len()).find(|&j| {
                let lj = truth.words[j].len();
                pages[j].site < pages[i].site
                    && (2 * li.min(lj)) as f64 / ((li + lj).max(1)) as f64 > NEAR_RATIO
                    && bounded_ratio(&truth.words[i], &truth.words[j], NEAR_RATIO) >= NEAR_RATIO
            });
            if let Some(j) = renamed {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
                kinds[i] = Kind::Renamed;
                if ambiguous.contains(&j) {
                    ambiguous.insert(i);
                }
            }
        }
        for (i, p) in pages.iter().enumerate() {
            let group = root(&mut parent, i) as u64;
            let scored = !ambiguous.contains(&i)
                && truth.words[i].len() >= MIN_TRUTH_WORDS
                && kinds[i] != Kind::Edited;
            let kind = if ambiguous.contains(&i) {
                Kind::Ambiguous
            } else if truth.words[i].len() < MIN_TRUTH_WORDS {
                Kind::Empty
            } else {
                kinds[i]
            };
            truth.pages.insert(
                p.url.clone(),
                (
                    PageTruth {
                        group,
                        kind,
                        scored,
                    },
                    i,
                ),
            );
        }
        truth
    }

    fn ratio(&self, i: usize, j: usize) -> f64 {
        let key = (i.min(j), i.max(j));
        if let Some(r) = self.ratios.lock().ok().and_then(|m| m.get(&key).copied()) {
            return r;
        }
        let r = sequence_ratio(&self.words[key.0], &self.words[key.1]);
        if let Ok(mut m) = self.ratios.lock() {
            m.insert(key, r);
        }
        r
    }

    /// The diff ratio of two pages' main texts, if both are pages of the web.
    pub fn pair_ratio(&self, a: &str, b: &str) -> Option<f64> {
        let (_, i) = self.pages.get(a)?;
        let (_, j) = self.pages.get(b)?;
        Some(self.ratio(*i, *j))
    }

    /// Every page with its truth, by URL.
    pub fn pages(&self) -> Vec<(String, PageTruth)> {
        let mut pages: Vec<(String, PageTruth)> = self
            .pages
            .iter()
            .map(|(url, (t, _))| (url.clone(), *t))
            .collect();
        pages.sort_by(|a, b| a.0.cmp(&b.0));
        pages
    }

    /// The counterparts of a page: the same page on the other sites.
    pub fn counterparts(&self, url: &str) -> Vec<String> {
        let Some((_, i)) = self.pages.get(url) else {
            return Vec::new();
        };
        let rel = &self.rels[*i];
        let mut found: Vec<String> = self
            .pages
            .iter()
            .filter(|(u, (_, j))| *j != *i && self.rels[*j] == *rel && u.as_str() != url)
            .map(|(u, _)| u.clone())
            .collect();
        found.sort();
        found
    }

    /// Pages in the truth.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Writes the truth as JSON lines (`{"url", "group", "kind", "scored", "words"}`).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut lines: Vec<String> = self
            .pages
            .iter()
            .map(|(url, (t, i))| {
                serde_json::json!({"url": url, "group": t.group, "kind": t.kind,
                    "scored": t.scored, "words": self.words[*i].len()})
                .to_string()
            })
            .collect();
        lines.sort();
        std::fs::write(path, lines.join("\n") + "\n")
    }
}

fn kind_rank(kind: Kind) -> u8 {
    match kind {
        Kind::Unchanged | Kind::Untranslated | Kind::Renamed => 4,
        Kind::Edited => 3,
        Kind::Rewritten => 2,
        Kind::RealFirst => 1,
        _ => 0,
    }
}

impl Labels for RealTruth {
    fn get(&self, url: &str) -> Option<PageTruth> {
        self.pages.get(url).map(|(t, _)| *t)
    }

    fn copies(&self, copy: &str, original: &str) -> Option<bool> {
        let (page, _) = self.pages.get(copy)?;
        if !page.scored {
            return None;
        }
        let r = self.pair_ratio(copy, original)?;
        if r >= NEAR_RATIO {
            Some(true)
        } else if r <= DISTINCT_RATIO {
            Some(false)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_characters_are_words_of_their_own() {
        assert_eq!(
            words("Hello, 世界 and Déjà-vu"),
            ["hello,", "世", "界", "and", "déjà-vu"]
        );
    }

    #[test]
    fn the_ratio_counts_matched_words_in_order() {
        let ids = |s: &str| word_ids(&words(s));
        assert_eq!(sequence_ratio(&ids("a b c d"), &ids("a b c d")), 1.0);
        // Three of four words in order on each side: 2 x 3 / 8.
        assert_eq!(sequence_ratio(&ids("a b c d"), &ids("a b c e")), 0.75);
        // Reversed: the bound says 1, the diff says one word in order.
        assert_eq!(sequence_ratio(&ids("a b c d"), &ids("d c b a")), 0.25);
        assert_eq!(sequence_ratio(&ids("a b"), &ids("c d")), 0.0);
    }

    #[test]
    fn the_main_region_is_what_the_markup_marks() {
        let selector = Selector::parse("div[role=main]").unwrap();
        let html = "<html><body><div class=nav>Home Next</div><div role=main><h1>Title</h1>\
                    <p>Body <b>text</b></p><script>var x;</script></div></body></html>";
        assert_eq!(main_words(html, &selector), ["title", "body", "text"]);
        let selector = Selector::parse("body > div:not(#banner)").unwrap();
        let html = "<body><div id=banner>Logo</div><div class=section><p>One</p></div>\
                    <ul class=docnav><li>Prev</li></ul><div class=chapter>Two</div></body>";
        assert_eq!(main_words(html, &selector), ["one", "two"]);
    }
}
