//! Focused-crawl quality: several manuals as Debian ships them, each on its own 127.0.0.x
//! address behind a portal page that names them, and topics whose relevant pages the manuals'
//! own structure says (the files of one chapter or module family). A breadth-first crawl and
//! a focused crawl per topic start from the portal; [`measure_harvest`] compares them:
//! harvest rate (relevant pages / pages fetched) as the crawl proceeds and recall of the
//! relevant pages.
//!
//! The truth is independent of the product: a topic's relevant pages are the files its
//! manual groups under it (`library/asyncio*.html`, `textsearch*.html`, ...), matched by
//! path. Pages about the topic elsewhere count as irrelevant, for both crawls alike.

use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use nearcrawl_demo_web::{Reply, RunningSite, Site, serve_on};
use nearcrawl_frontier::FocusConfig;
use nearcrawl_records::Record;
use regex::Regex;
use serde::Serialize;

use crate::real::{RealWebError, SiteSource, read_site};

mod topics;

pub use topics::{TOPICS, Topic, TopicFrom};

/// A manual of the focused web.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Manual {
    /// The Apache HTTP Server manual in English (`apache2-doc`), behind its language chooser.
    Apache,
    /// The PostgreSQL 15 manual (`postgresql-doc-15`).
    Postgres,
    /// The Python 3.11 documentation (`python3.11-doc`).
    Python,
    /// The LLVM 16 documentation (`llvm-16-doc`).
    Llvm,
}

impl Manual {
    /// Its name in the portal.
    pub fn title(self) -> &'static str {
        match self {
            Manual::Apache => "Apache HTTP Server 2.4",
            Manual::Postgres => "PostgreSQL 15",
            Manual::Python => "Python 3.11",
            Manual::Llvm => "LLVM 16",
        }
    }

    fn source(self) -> SiteSource {
        let (root, dirs, seed) = match self {
            Manual::Apache => (
                "/usr/share/doc/apache2-doc/manual",
                vec!["en"],
                "/index.html",
            ),
            Manual::Postgres => (
                "/usr/share/doc/postgresql-doc-15/html",
                vec![],
                "/index.html",
            ),
            Manual::Python => ("/usr/share/doc/python3.11-doc/html", vec![], "/index.html"),
            Manual::Llvm => ("/usr/share/doc/llvm-16-doc/html", vec![], "/index.html"),
        };
        SiteSource {
            root: PathBuf::from(root),
            dirs,
            seed: seed.to_string(),
            prefix: String::new(),
            suffix: String::new(),
        }
    }
}

/// How much of the focused web is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FocusedSize {
    /// The CI variant: the Apache and PostgreSQL manuals (about 1,400 pages).
    Small,
    /// All four manuals (about 3,100 pages).
    Full,
}

impl FocusedSize {
    /// The manuals served.
    pub fn manuals(self) -> &'static [Manual] {
        match self {
            FocusedSize::Small => &[Manual::Apache, Manual::Postgres],
            FocusedSize::Full => &[
                Manual::Apache,
                Manual::Postgres,
                Manual::Python,
                Manual::Llvm,
            ],
        }
    }
}

/// The served focused web.
#[derive(Debug)]
pub struct FocusedWeb {
    /// The portal, then the manuals in [`FocusedSize::manuals`] order.
    pub sites: Vec<RunningSite>,
    /// The manuals served, by the index of their site in `sites`.
    pub manuals: BTreeMap<Manual, usize>,
    /// The seed list: the portal's page.
    pub seeds: String,
}

impl FocusedWeb {
    /// The `[focus]` section that gives `topic` as `from`, on top of `base` (threshold,
    /// tunnel and weights).
    pub fn focus(&self, topic: &Topic, from: TopicFrom, base: &FocusConfig) -> FocusConfig {
        let mut focus = FocusConfig {
            terms: BTreeMap::new(),
            examples: Vec::new(),
            description: String::new(),
            ..base.clone()
        };
        match from {
            TopicFrom::Terms => {
                focus.terms = topic
                    .terms
                    .iter()
                    .map(|(t, w)| (t.to_string(), *w))
                    .collect();
            }
            TopicFrom::Examples => {
                let site = &self.sites[self.manuals[&topic.manual]];
                focus.examples = topic.examples.iter().map(|p| site.url(p)).collect();
            }
            TopicFrom::Description => focus.description = topic.description.to_string(),
        }
        focus
    }

    /// The URLs of `topic`'s relevant pages, in the manuals served.
    pub fn relevant(&self, topic: &Topic) -> Result<HashSet<String>, RealWebError> {
        if !self.manuals.contains_key(&topic.manual) {
            return Err(RealWebError(format!(
                "{}: its manual is not served at this size",
                topic.name
            )));
        }
        let mut relevant = HashSet::new();
        for (manual, pattern) in
            std::iter::once((topic.manual, topic.pattern)).chain(topic.also.iter().copied())
        {
            let Some(site) = self.manuals.get(&manual).map(|i| &self.sites[*i]) else {
                continue;
            };
            let pattern =
                Regex::new(pattern).map_err(|e| RealWebError(format!("{}: {e}", topic.name)))?;
            relevant.extend(
                site.site
                    .paths()
                    .filter(|p| pattern.is_match(p))
                    .map(|p| site.url(p)),
            );
        }
        Ok(relevant)
    }
}

/// Serves the manuals of `size` on 127.0.0.`first_address + 1` and on, and the portal on
/// 127.0.0.`first_address`.
pub async fn build_focused(
    size: FocusedSize,
    first_address: u8,
) -> Result<FocusedWeb, RealWebError> {
    let address = |i: usize| {
        SocketAddr::new(
            IpAddr::V4(Ipv4Addr::new(
                127,
                0,
                0,
                first_address.wrapping_add(i as u8),
            )),
            0,
        )
    };
    let mut sites = Vec::new();
    let mut manuals = BTreeMap::new();
    let mut entries = String::new();
    for (i, manual) in size.manuals().iter().enumerate() {
        let source = manual.source();
        let mut files = read_site(&source)?;
        if *manual == Manual::Apache {
            // The language chooser above the English manual.
            let chooser = source.root.join("index.html");
            let bytes = std::fs::read(&chooser)
                .map_err(|e| RealWebError(format!("{}: {e}", chooser.display())))?;
            files.insert(
                "/index.html".into(),
                crate::real::SiteFile {
                    path: "/index.html".into(),
                    bytes,
                },
            );
        }
        let mut site = Site::new();
        for (path, file) in &files {
            site.insert(path, Reply::html(String::from_utf8_lossy(&file.bytes)));
        }
        let addr = address(i + 1);
        let running = serve_on(site, addr)
            .await
            .map_err(|e| RealWebError(format!("serving {addr}: {e}")))?;
        entries.push_str(&format!(
            "<li><a href=\"{}\">{}</a></li>",
            running.url(&source.seed),
            manual.title()
        ));
        manuals.insert(*manual, i + 1);
        sites.push(running);
    }
    let portal = Site::new().page(
        "/",
        Reply::html(format!(
            "<!DOCTYPE html><html><head><title>Documentation</title></head><body>\
             <h1>Documentation on this server</h1><p>The manuals installed here, as their \
             packages ship them:</p><ul>{entries}</ul></body></html>"
        )),
    );
    let addr = address(0);
    let portal = serve_on(portal, addr)
        .await
        .map_err(|e| RealWebError(format!("serving {addr}: {e}")))?;
    let seeds = format!("{}\n", portal.url("/"));
    sites.insert(0, portal);
    Ok(FocusedWeb {
        sites,
        manuals,
        seeds,
    })
}

/// Pages fetched and relevant pages found so far, after each page fetched.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Harvest {
    /// `found[i]`: relevant pages among the first `i + 1` pages fetched.
    pub found: Vec<u32>,
}

impl Harvest {
    /// The harvest of a crawl's records (in decision order): every response counts as a page
    /// fetched; a relevant page is found when it answered 200.
    pub fn of(records: &[Record], relevant: &HashSet<String>) -> Harvest {
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        let mut n = 0;
        for record in records.iter().filter(|r| r.status.is_some()) {
            if record.status == Some(200)
                && relevant.contains(&record.url)
                && seen.insert(&record.url)
            {
                n += 1;
            }
            found.push(n);
        }
        Harvest { found }
    }

    /// Pages fetched.
    pub fn pages(&self) -> usize {
        self.found.len()
    }

    /// Relevant pages found among the first `pages` fetched (all of them when fewer).
    pub fn found_within(&self, pages: usize) -> u32 {
        match pages.min(self.found.len()) {
            0 => 0,
            n => self.found[n - 1],
        }
    }

    /// Harvest rate over the first `pages` pages fetched.
    pub fn rate_within(&self, pages: usize) -> f64 {
        let n = pages.min(self.found.len());
        if n == 0 {
            0.0
        } else {
            f64::from(self.found_within(n)) / n as f64
        }
    }

    /// Pages fetched when `target` relevant pages had been found, if they were.
    pub fn pages_to_find(&self, target: u32) -> Option<usize> {
        if target == 0 {
            return Some(0);
        }
        self.found.iter().position(|n| *n >= target).map(|i| i + 1)
    }
}

/// A focused crawl of one topic against the breadth-first crawl of the same web.
#[derive(Debug, Clone, Serialize)]
pub struct TopicMeasure {
    /// The topic.
    pub topic: &'static str,
    /// Whether defaults were tuned on it.
    pub tuning: bool,
    /// How it was given.
    pub from: TopicFrom,
    /// Relevant pages the breadth-first crawl reached (the recall denominator).
    pub relevant: u32,
    /// Pages fetched by the breadth-first crawl.
    pub bfs_pages: usize,
    /// Pages fetched by the focused crawl (it stopped on its own when fewer than
    /// `bfs_pages`).
    pub focused_pages: usize,
    /// 20 % of the breadth-first crawl's pages.
    pub early_pages: usize,
    /// Relevant pages found within the first `early_pages` pages: breadth-first, focused.
    pub bfs_early_found: u32,
    /// See `bfs_early_found`.
    pub focused_early_found: u32,
    /// Harvest rate over the first `early_pages` pages: breadth-first, focused.
    pub bfs_early_harvest: f64,
    /// See `bfs_early_harvest`.
    pub focused_early_harvest: f64,
    /// focused / breadth-first early harvest; `None` when breadth-first found nothing there.
    pub early_gain: Option<f64>,
    /// Whether the early floor holds: twice breadth-first's early harvest (anything found
    /// when breadth-first found nothing). When twice breadth-first's would be more than 0.95
    /// of the relevant pages, no crawl can harvest twice as much: the focused crawl must then
    /// have found 0.95 of them there.
    pub early_floor: bool,
    /// Pages each crawl fetched before it had found 0.95 of the relevant pages.
    pub bfs_pages_to_95: Option<usize>,
    /// See `bfs_pages_to_95`.
    pub focused_pages_to_95: Option<usize>,
    /// The focused crawl's recall after as many pages as breadth-first needed for 0.95.
    pub focused_recall_at_bfs_95: f64,
    /// The focused crawl's recall when it ended.
    pub focused_final_recall: f64,
    /// Whether the floors hold: early gain at least 2; 0.95 found within the pages
    /// breadth-first needs; 0.95 found by the end.
    pub floors_hold: bool,
}

/// The share of relevant pages a crawl must find.
pub const RECALL_TARGET: f64 = 0.95;

/// Relevant pages the focused crawl must have found within the early window: twice what
/// breadth-first found there, but never more than `target` (0.95 of them): when twice
/// breadth-first's would be more than that, no crawl can harvest twice as much, and finding
/// 0.95 of them there is the floor.
fn early_required(bfs_found: u32, target: u32) -> u32 {
    (2 * bfs_found).min(target)
}

/// Compares a focused crawl's harvest with breadth-first's on the relevant pages
/// breadth-first reached.
pub fn measure_harvest(
    topic: &Topic,
    from: TopicFrom,
    bfs: &[Record],
    focused: &[Record],
    relevant: &HashSet<String>,
) -> (TopicMeasure, Harvest, Harvest) {
    let reached: HashSet<String> = bfs
        .iter()
        .filter(|r| r.status == Some(200) && relevant.contains(&r.url))
        .map(|r| r.url.clone())
        .collect();
    let bfs_harvest = Harvest::of(bfs, &reached);
    let focused_harvest = Harvest::of(focused, &reached);
    let total = reached.len() as u32;
    let target = (RECALL_TARGET * f64::from(total)).ceil() as u32;
    let early = (bfs_harvest.pages() as f64 * 0.2).round() as usize;
    let bfs_early = bfs_harvest.rate_within(early);
    let focused_early = focused_harvest.rate_within(early);
    let recall = |n: u32| {
        if total == 0 {
            1.0
        } else {
            f64::from(n) / f64::from(total)
        }
    };
    let bfs_95 = bfs_harvest.pages_to_find(target);
    let focused_95 = focused_harvest.pages_to_find(target);
    let at_bfs_95 = recall(focused_harvest.found_within(bfs_95.unwrap_or(usize::MAX)));
    let final_recall = recall(focused_harvest.found_within(usize::MAX));
    let (bfs_found, focused_found) = (
        bfs_harvest.found_within(early),
        focused_harvest.found_within(early),
    );
    let gain = (bfs_found > 0).then(|| focused_early / bfs_early);
    let early_floor = focused_found > 0 && focused_found >= early_required(bfs_found, target);
    let floors_hold = early_floor && at_bfs_95 >= RECALL_TARGET && final_recall >= RECALL_TARGET;
    let measure = TopicMeasure {
        topic: topic.name,
        tuning: topic.tuning,
        from,
        relevant: total,
        bfs_pages: bfs_harvest.pages(),
        focused_pages: focused_harvest.pages(),
        early_pages: early,
        bfs_early_found: bfs_found,
        focused_early_found: focused_found,
        bfs_early_harvest: bfs_early,
        focused_early_harvest: focused_early,
        early_gain: gain,
        early_floor,
        bfs_pages_to_95: bfs_95,
        focused_pages_to_95: focused_95,
        focused_recall_at_bfs_95: at_bfs_95,
        focused_final_recall: final_recall,
        floors_hold,
    };
    (measure, bfs_harvest, focused_harvest)
}

impl TopicMeasure {
    /// One line for the terminal.
    pub fn line(&self) -> String {
        format!(
            "{:<19} {:<11} {:>3} relevant  first {} pages: bfs found {:>2}, focused {:>2} ({})  \
             pages to 0.95: bfs {} focused {}  recall@bfs95 {:.3}  final {:.3} of {} pages  {}",
            self.topic,
            self.from.name(),
            self.relevant,
            self.early_pages,
            self.bfs_early_found,
            self.focused_early_found,
            match (self.early_gain, self.focused_early_found) {
                (Some(gain), _) => format!("x{gain:.1}"),
                (None, 0) => "x0".to_string(),
                (None, _) => "x inf".to_string(),
            },
            opt(self.bfs_pages_to_95),
            opt(self.focused_pages_to_95),
            self.focused_recall_at_bfs_95,
            self.focused_final_recall,
            self.focused_pages,
            if self.floors_hold {
                "ok"
            } else {
                "FLOOR MISSED"
            }
        )
    }
}

fn opt(n: Option<usize>) -> String {
    n.map_or_else(|| "-".to_string(), |n| n.to_string())
}

/// Harvest-rate and recall curves of one topic: breadth-first and each way of giving it,
/// against pages fetched (two charts side by side, inline SVG).
pub fn harvest_svg(
    topic: &str,
    bfs: &Harvest,
    focused: &[(TopicFrom, Harvest)],
    relevant: u32,
) -> String {
    let (w, h, m) = (460.0f64, 340.0f64, 55.0f64);
    let pages = focused
        .iter()
        .map(|(_, h)| h.pages())
        .chain([bfs.pages()])
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">{topic}: {relevant} relevant pages</text>\n",
        2.0 * w,
        h + 30.0,
        w
    );
    let series: Vec<(&str, &Harvest, &str)> = std::iter::once(("breadth-first", bfs, "#7f7f7f"))
        .chain(focused.iter().map(|(from, h)| {
            let color = match from {
                TopicFrom::Terms => "#d62728",
                TopicFrom::Examples => "#1f77b4",
                TopicFrom::Description => "#2ca02c",
            };
            (from.name(), h, color)
        }))
        .collect();
    for (panel, label) in ["harvest rate", "recall"].into_iter().enumerate() {
        let x0 = panel as f64 * w;
        let x = |p: f64| x0 + m + p / pages * (w - 1.5 * m);
        let y = |v: f64| 30.0 + h - m - v * (h - 1.5 * m);
        svg.push_str(&format!(
            "<line x1=\"{:.0}\" y1=\"{:.0}\" x2=\"{:.0}\" y2=\"{:.0}\" stroke=\"black\"/>\n<line x1=\"{:.0}\" y1=\"{:.0}\" x2=\"{:.0}\" y2=\"{:.0}\" stroke=\"black\"/>\n",
            x(0.0), y(0.0), x(pages), y(0.0), x(0.0), y(0.0), x(0.0), y(1.0)
        ));
        for i in 0..=5 {
            let v = f64::from(i) / 5.0;
            svg.push_str(&format!(
                "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{v:.1}</text>\n<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{:.0}</text>\n",
                x(0.0) - 5.0,
                y(v) + 4.0,
                x(v * pages),
                y(0.0) + 16.0,
                v * pages
            ));
        }
        svg.push_str(&format!(
            "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">pages fetched</text>\n<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{label}</text>\n",
            x(pages / 2.0),
            y(0.0) + 32.0,
            x(pages / 2.0),
            y(1.0) - 6.0
        ));
        for (i, (name, harvest, color)) in series.iter().enumerate() {
            // At most ~400 points per line.
            let step = (harvest.pages() / 400).max(1);
            let points: Vec<String> = (1..=harvest.pages())
                .filter(|n| n % step == 0 || *n == harvest.pages())
                .map(|n| {
                    let v = if panel == 0 {
                        harvest.rate_within(n)
                    } else if relevant == 0 {
                        1.0
                    } else {
                        f64::from(harvest.found_within(n)) / f64::from(relevant)
                    };
                    format!("{:.1},{:.1}", x(n as f64), y(v))
                })
                .collect();
            svg.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
                points.join(" ")
            ));
            if panel == 1 {
                svg.push_str(&format!(
                    "<text x=\"{:.0}\" y=\"{:.0}\" fill=\"{color}\">{name}</text>\n",
                    x(pages) - 110.0,
                    y(0.0) - 12.0 - 16.0 * i as f64
                ));
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// Where a topic's files are written under a run's output directory.
pub fn topic_dir(out: &Path, topic: &Topic, from: TopicFrom) -> PathBuf {
    out.join(format!("{}-{}", topic.name, from.name()))
}

#[cfg(test)]
mod tests;
