//! The labelled web: seven sites on their own 127.0.0.x addresses, and the truth about every
//! page on them.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use nearcrawl_demo_web::{Article, Reply, RunningSite, Site, serve_on};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::corpus::Corpus;
use crate::truth::{Kind, PageTruth, Truth};

mod chinese;
mod hostile;

use chinese::{zh_mirror, zh_origin};
use hostile::{shop, trap_site};

/// Sizes and seed of a labelled web.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebConfig {
    /// Seed of every random choice (ads, counters, edits, link order).
    pub seed: u64,
    /// English articles on the origin (each mirrored).
    pub articles: usize,
    /// Chinese articles (each mirrored in GBK).
    pub zh_articles: usize,
    /// Edited copies on the syndication site.
    pub syndicated: usize,
    /// Product pages on the template-heavy shop.
    pub products: usize,
    /// First octet after 127.0.0. of the seven sites' addresses.
    pub first_address: u8,
}

impl WebConfig {
    /// The CI variant: a few hundred pages.
    pub fn small(seed: u64) -> WebConfig {
        WebConfig {
            seed,
            articles: 40,
            zh_articles: 12,
            syndicated: 24,
            products: 30,
            first_address: 20,
        }
    }

    /// The benchmark variant: a few thousand pages.
    pub fn large(seed: u64) -> WebConfig {
        WebConfig {
            seed,
            articles: 400,
            zh_articles: 60,
            syndicated: 200,
            products: 300,
            first_address: 40,
        }
    }

    /// Pages linked only from mirror pages: few (a twenty-fifth of the articles), as on a
    /// real mirror; skipping duplicates' outlinks loses them, and coverage shows the price.
    pub fn only_via_mirror(&self) -> usize {
        (self.articles / 25).max(1)
    }

    /// English articles the generator needs from the corpus (originals, extras, text pools).
    pub fn english_needed(&self) -> usize {
        self.articles
            + self.only_via_mirror()
            + self.products / 4
            + 7
            + 2 * (self.syndicated / 2 + 8)
    }
}

/// A served labelled web.
#[derive(Debug)]
pub struct LabelledWeb {
    /// The sites, in the order of [`SITE_NAMES`].
    pub sites: Vec<RunningSite>,
    /// What every URL is.
    pub truth: Truth,
    /// The seed list (one home page per site, the trap's first day).
    pub seeds: String,
}

impl LabelledWeb {
    /// The site serving `url`, and the URL's path and query.
    pub fn site_and_path(&self, url: &str) -> Option<(&RunningSite, String)> {
        let site = self.sites.iter().find(|s| url.starts_with(&s.url("/")))?;
        let path = &url[site.url("").len()..];
        Some((site, path.to_string()))
    }
}

/// The sites, in order.
pub const SITE_NAMES: [&str; 7] = [
    "origin",
    "mirror",
    "syndicate",
    "zh-origin",
    "zh-mirror",
    "shop",
    "trap",
];

/// Pages of one site before serving: path, reply, truth (the group is filled in later).
struct SiteSpec {
    pages: Vec<(String, Reply, PageTruth)>,
    robots: Option<String>,
}

impl SiteSpec {
    fn new() -> SiteSpec {
        SiteSpec {
            pages: Vec::new(),
            robots: None,
        }
    }

    fn add(&mut self, path: String, reply: Reply, truth: PageTruth) {
        self.pages.push((path, reply, truth));
    }
}

/// Builds and serves a labelled web from English and Chinese text.
pub async fn build(
    config: WebConfig,
    english: &Corpus,
    chinese: &Corpus,
) -> std::io::Result<LabelledWeb> {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let need = config.english_needed();
    if english.articles.len() < need || chinese.articles.len() < config.zh_articles {
        return Err(std::io::Error::other(format!(
            "the corpus is too small: {} English articles (need {need}), {} Chinese (need {})",
            english.articles.len(),
            chinese.articles.len(),
            config.zh_articles
        )));
    }
    let mut articles = english.articles.clone();
    articles.shuffle(&mut rng);
    let (originals, rest) = articles.split_at(config.articles);
    let (extras, rest) = rest.split_at(config.only_via_mirror());
    // Disjoint text pools, so no two groups share text by accident: the shop's, the
    // syndicated copies' additions, and the words used for word changes.
    let (shop_text, rest) = rest.split_at(config.products / 4 + 7);
    let (fillers, words) = rest.split_at(rest.len() / 2);
    let vocabulary: Vec<String> = words
        .iter()
        .flat_map(|a| a.paragraphs.iter())
        .flat_map(|p| p.split_whitespace().map(str::to_owned))
        .collect();
    let mut zh = chinese.articles[..config.zh_articles].to_vec();
    zh.shuffle(&mut rng);

    let mut groups = Groups::default();
    let origin_groups: Vec<u64> = (0..originals.len()).map(|_| groups.next()).collect();
    let zh_groups: Vec<u64> = (0..zh.len()).map(|_| groups.next()).collect();
    let specs = vec![
        origin(originals, &origin_groups, &mut groups, &mut rng),
        mirror(originals, &origin_groups, extras, &mut groups, &mut rng),
        syndicate(
            originals,
            &origin_groups,
            fillers,
            &vocabulary,
            config.syndicated,
            &mut groups,
            &mut rng,
        ),
        zh_origin(&zh, &zh_groups, &mut groups, &mut rng),
        zh_mirror(&zh, &zh_groups, &mut groups, &mut rng),
        shop(shop_text, config.products, &mut groups, &mut rng),
        SiteSpec::new(),
    ];
    let mut sites = Vec::new();
    let mut truth = Truth::default();
    for (i, mut spec) in specs.into_iter().enumerate() {
        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, config.first_address + i as u8));
        let mut site = Site::new();
        if let Some(robots) = spec.robots.take() {
            site.insert("/robots.txt", Reply::ok("text/plain", robots));
        }
        if SITE_NAMES[i] == "trap" {
            site = trap_site(&mut rng);
        }
        let pages = std::mem::take(&mut spec.pages);
        for (path, reply, _) in &pages {
            site.insert(path, reply.clone());
        }
        let running = serve_on(site, SocketAddr::new(ip, 0)).await?;
        for (path, _, page) in pages {
            truth.insert(running.url(&path), page);
        }
        if SITE_NAMES[i] == "trap" {
            truth.add_prefix(
                running.url("/events/"),
                PageTruth::scored(groups.next(), Kind::Trap),
            );
        }
        sites.push(running);
    }
    let seeds = sites
        .iter()
        .zip(SITE_NAMES)
        .map(|(s, name)| {
            if name == "trap" {
                s.url("/events/2026-01-01")
            } else {
                s.url("/")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    Ok(LabelledWeb {
        sites,
        truth,
        seeds,
    })
}

/// Group numbers: one per distinct content.
#[derive(Default)]
struct Groups(u64);

impl Groups {
    fn next(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }
}

fn paragraphs_html(paragraphs: &[String]) -> String {
    paragraphs
        .iter()
        .map(|p| format!("<p>{}</p>\n", escape(p)))
        .collect()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A page of listing links, its own content.
fn listing(items: &[(String, String)]) -> String {
    items
        .iter()
        .map(|(href, text)| format!("<li><a href=\"{href}\">{}</a></li>\n", escape(text)))
        .collect()
}

fn origin_template(title: &str, body: &str, rng: &mut ChaCha8Rng) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{t} | The Origin</title></head>
<body><header><a href="/">The Origin</a><nav><a href="/">Home</a> <a href="/list/0">Articles</a> <a href="/drafts/1">Drafts</a></nav></header>
<main><article><h1>{t}</h1>{body}</article></main>
<aside class="sidebar"><div class="ad">Sponsored: offer {ad} ends soon</div><p>Readers online: {n}</p></aside>
<footer>Rendered 2026-{m:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC. Request {id:x}.</footer></body></html>"#,
        t = escape(title),
        ad = rng.random_range(1000..9999),
        n = rng.random_range(1..5000),
        m = rng.random_range(1..13),
        d = rng.random_range(1..29),
        h = rng.random_range(0..24),
        mi = rng.random_range(0..60),
        s = rng.random_range(0..60),
        id = rng.random::<u64>(),
    )
}

fn origin(
    originals: &[Article],
    groups_of: &[u64],
    groups: &mut Groups,
    rng: &mut ChaCha8Rng,
) -> SiteSpec {
    let mut site = SiteSpec::new();
    site.robots = Some("User-agent: *\nDisallow: /drafts/\n".into());
    let n = originals.len();
    let per_list = 10;
    let lists = n.div_ceil(per_list);
    let home_links: Vec<(String, String)> = (0..lists)
        .map(|l| (format!("/list/{l}"), format!("Articles, page {}", l + 1)))
        .collect();
    let home = origin_template(
        "Front page",
        &format!(
            "<ul>{}</ul><p><a href=\"/drafts/1\">Drafts</a></p>",
            listing(&home_links)
        ),
        rng,
    );
    site.add(
        "/".into(),
        Reply::html(home),
        PageTruth::index(groups.next()),
    );
    for l in 0..lists {
        let items: Vec<(String, String)> = (l * per_list..((l + 1) * per_list).min(n))
            .map(|i| (format!("/article/{i}.html"), originals[i].title.clone()))
            .collect();
        let page = origin_template(
            &format!("Articles, page {}", l + 1),
            &format!("<ul>{}</ul>", listing(&items)),
            rng,
        );
        site.add(
            format!("/list/{l}"),
            Reply::html(page),
            PageTruth::index(groups.next()),
        );
    }
    for (i, article) in originals.iter().enumerate() {
        let mut body = paragraphs_html(&article.paragraphs);
        body.push_str(&format!(
            "<p class=\"more\"><a href=\"/article/{}.html\">Next article</a></p>",
            (i + 1) % n
        ));
        if i % 4 == 0 {
            body.push_str(&format!("<p class=\"tools\"><a href=\"/article/{i}.html?print=1\">Printer-friendly version</a></p>"));
        }
        let page = origin_template(&article.title, &body, rng);
        site.add(
            format!("/article/{i}.html"),
            Reply::html(page),
            PageTruth::scored(groups_of[i], Kind::Origin),
        );
        if i % 4 == 0 {
            // The same article behind a URL variant: new counters and timestamp, same text.
            let body = paragraphs_html(&article.paragraphs)
                + &format!(
                    "<p class=\"more\"><a href=\"/article/{}.html\">Next article</a></p>",
                    (i + 1) % n
                );
            site.add(
                format!("/article/{i}.html?print=1"),
                Reply::html(origin_template(&article.title, &body, rng)),
                PageTruth::scored(groups_of[i], Kind::UrlVariant),
            );
        }
    }
    for j in 1..=3 {
        let page = origin_template(
            "Draft",
            &format!(
                "<p>Draft {j}: not for crawlers.</p><a href=\"/drafts/{}\">next</a>",
                j + 1
            ),
            rng,
        );
        site.add(
            format!("/drafts/{j}"),
            Reply::html(page),
            PageTruth::disallowed(groups.next()),
        );
    }
    site
}

fn mirror_template(title: &str, body: &str, rng: &mut ChaCha8Rng) -> String {
    format!(
        r#"<html><head><title>{t} :: Mirror Archive</title></head><body>
<table class="layout"><tr><td class="menu"><a href="/">Mirror Archive</a><br><a href="/page/0">Index</a><br>Visitors: {v}</td>
<td class="main"><div class="title">{t}</div><div class="text">{body}</div>
<div class="stamp">Mirrored on {d:02}.{m:02}.2026, cache id {c:x}</div></td>
<td class="ads"><b>Advertisement</b><br>Buy {ad} now!</td></tr></table></body></html>"#,
        t = escape(title),
        v = rng.random_range(1..99_999),
        d = rng.random_range(1..29),
        m = rng.random_range(1..13),
        c = rng.random::<u32>(),
        ad = rng.random_range(100..999),
    )
}

fn mirror(
    originals: &[Article],
    groups_of: &[u64],
    extras: &[Article],
    groups: &mut Groups,
    rng: &mut ChaCha8Rng,
) -> SiteSpec {
    let mut site = SiteSpec::new();
    let n = originals.len();
    let per_page = 15;
    let pages = n.div_ceil(per_page);
    let home_links: Vec<(String, String)> = (0..pages)
        .map(|p| (format!("/page/{p}"), format!("Index {}", p + 1)))
        .collect();
    site.add(
        "/".into(),
        Reply::html(mirror_template(
            "Mirror Archive",
            &format!("<ul>{}</ul>", listing(&home_links)),
            rng,
        )),
        PageTruth::index(groups.next()),
    );
    for p in 0..pages {
        let items: Vec<(String, String)> = (p * per_page..((p + 1) * per_page).min(n))
            .map(|i| {
                (
                    format!("/m/{}/story.php?id={i}", i % 7),
                    originals[i].title.clone(),
                )
            })
            .collect();
        site.add(
            format!("/page/{p}"),
            Reply::html(mirror_template(
                &format!("Index {}", p + 1),
                &format!("<ul>{}</ul>", listing(&items)),
                rng,
            )),
            PageTruth::index(groups.next()),
        );
    }
    let extra_groups: Vec<u64> = extras.iter().map(|_| groups.next()).collect();
    for (i, article) in originals.iter().enumerate() {
        let mut body = paragraphs_html(&article.paragraphs);
        if i % 5 == 0 && i / 5 < extras.len() {
            // Pages found only through the mirror.
            body.push_str(&format!(
                "<p><a href=\"/extra/{}.html\">Readers' notes</a></p>",
                i / 5
            ));
        }
        site.add(
            format!("/m/{}/story.php?id={i}", i % 7),
            Reply::html(mirror_template(&article.title, &body, rng)),
            PageTruth::scored(groups_of[i], Kind::Mirror),
        );
    }
    for (j, article) in extras.iter().enumerate() {
        site.add(
            format!("/extra/{j}.html"),
            Reply::html(mirror_template(
                &article.title,
                &paragraphs_html(&article.paragraphs),
                rng,
            )),
            PageTruth::scored(extra_groups[j], Kind::OnlyViaMirror),
        );
    }
    site
}

/// The labelling guideline's edits, one per syndicated copy in turn.
const EDITS: [Kind; 6] = [
    Kind::DeletedParagraphs,
    Kind::AddedParagraphs,
    Kind::ChangedWords,
    Kind::Reordered,
    Kind::Contains,
    Kind::Rewrite,
];

fn change_words(text: &str, share: f64, vocabulary: &[String], rng: &mut ChaCha8Rng) -> String {
    text.split_whitespace()
        .map(|w| {
            if rng.random_bool(share) {
                vocabulary[rng.random_range(0..vocabulary.len())].clone()
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn syndicate(
    originals: &[Article],
    groups_of: &[u64],
    fillers: &[Article],
    vocabulary: &[String],
    copies: usize,
    groups: &mut Groups,
    rng: &mut ChaCha8Rng,
) -> SiteSpec {
    let mut site = SiteSpec::new();
    let template = |title: &str, body: &str, rng: &mut ChaCha8Rng| {
        format!(
            r#"<html><head><title>{t} - Syndicated</title></head><body><div id="wrap"><div id="top">Syndicated News Network | <a href="/">Home</a></div>
<div id="content"><h2>{t}</h2>{body}<p class="source">Source: The Origin. Syndicated {h}h ago.</p></div>
<div id="side"><a href="/">Latest</a> | Promoted: {ad}</div></div></body></html>"#,
            t = escape(title),
            h = rng.random_range(1..48),
            ad = rng.random_range(10_000..99_999),
        )
    };
    let mut links = Vec::new();
    for k in 0..copies {
        let i = (k * 7 + 3) % originals.len();
        let original = &originals[i];
        let kind = EDITS[k % EDITS.len()];
        let mut paragraphs = original.paragraphs.clone();
        let filler = &fillers[k % fillers.len()];
        match kind {
            Kind::DeletedParagraphs => {
                // Under 40 %: a quarter of the paragraphs, from random places.
                for _ in 0..paragraphs.len() / 4 {
                    let at = rng.random_range(0..paragraphs.len());
                    paragraphs.remove(at);
                }
            }
            Kind::AddedParagraphs => {
                let add = (paragraphs.len() * 3 / 10).max(1);
                for p in filler.paragraphs.iter().take(add) {
                    let at = rng.random_range(0..=paragraphs.len());
                    paragraphs.insert(at, p.clone());
                }
            }
            Kind::ChangedWords => {
                paragraphs = paragraphs
                    .iter()
                    .map(|p| change_words(p, 0.06, vocabulary, rng))
                    .collect();
            }
            Kind::Reordered => {
                let mid = paragraphs.len() / 2;
                paragraphs.rotate_left(mid);
                paragraphs.swap(0, 1);
            }
            Kind::Contains => {
                // The whole article with half of another after it: it contains the first.
                let other = &originals[(i + 1) % originals.len()];
                paragraphs.extend(
                    other
                        .paragraphs
                        .iter()
                        .take(other.paragraphs.len() / 2)
                        .cloned(),
                );
            }
            _ => {
                // A heavy rewrite: half the paragraphs replaced, 15 % of the words changed.
                for (j, p) in paragraphs.iter_mut().enumerate() {
                    if j % 2 == 1 {
                        *p = filler.paragraphs[j % filler.paragraphs.len()].clone();
                    }
                }
                paragraphs = paragraphs
                    .iter()
                    .map(|p| change_words(p, 0.15, vocabulary, rng))
                    .collect();
            }
        }
        let path = format!("/story/{k}");
        let truth = if kind == Kind::Rewrite {
            PageTruth::unknown(groups.next(), kind)
        } else {
            PageTruth::scored(groups_of[i], kind)
        };
        site.add(
            path.clone(),
            Reply::html(template(
                &original.title,
                &paragraphs_html(&paragraphs),
                rng,
            )),
            truth,
        );
        links.push((path, original.title.clone()));
    }
    let home = template(
        "Latest stories",
        &format!("<ul>{}</ul>", listing(&links)),
        rng,
    );
    site.add(
        "/".into(),
        Reply::html(home),
        PageTruth::index(groups.next()),
    );
    site
}
