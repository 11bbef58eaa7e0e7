//! The demo web: four sites on 127.0.0.1 that exercise what the crawler is for.
//!
//! - **origin** (`/articles/N`): the articles, a robots.txt that disallows `/private/`, and
//!   each article also reachable as `/articles/N/` (an exact duplicate behind a URL variant).
//! - **mirror** (`/mirror/story-N.html`): every article under another template, with other
//!   ads, counters and timestamps; its pages also link to a few `extra` pages found nowhere
//!   else (what skipping a duplicate's outlinks can cost).
//! - **syndicate** (`/syndicated/N`): a third of the articles with edits (a paragraph
//!   deleted, words changed, two paragraphs swapped), and one page that contains another.
//! - **trap** (`/cal/DATE`): an endless calendar whose pages differ only by their date.

use std::sync::Arc;

use crate::server::{Reply, RunningSite, Site, serve};
use crate::text::{Article, Writer};

/// Sizes and seed of a demo web.
#[derive(Debug, Clone, Copy)]
pub struct DemoConfig {
    /// Seed of the text generator.
    pub seed: u64,
    /// Articles on the origin.
    pub articles: usize,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            seed: 7,
            articles: 24,
        }
    }
}

/// The running demo web.
#[derive(Debug)]
pub struct DemoWeb {
    /// The origin news site.
    pub origin: RunningSite,
    /// The mirror under another template.
    pub mirror: RunningSite,
    /// Syndicated, edited copies.
    pub syndicate: RunningSite,
    /// The endless calendar.
    pub trap: RunningSite,
    /// How it was generated.
    pub config: DemoConfig,
}

impl DemoWeb {
    /// Generates and serves the demo web.
    pub async fn start(config: DemoConfig) -> std::io::Result<DemoWeb> {
        let mut writer = Writer::new(config.seed, 4000);
        let articles: Vec<Article> = (0..config.articles).map(|_| writer.article()).collect();
        Ok(DemoWeb {
            origin: serve(origin_site(&articles, &mut writer)).await?,
            mirror: serve(mirror_site(&articles, &mut writer)).await?,
            syndicate: serve(syndicate_site(&articles, &mut writer)).await?,
            trap: serve(trap_site(&mut writer)).await?,
            config,
        })
    }

    /// The seed list of a job over the demo web, as file text.
    pub fn seed_list(&self) -> String {
        format!(
            "# the nearcrawl demo web (generated, served on 127.0.0.1)\n{}\n{}\n{}\n{}\n",
            self.origin.url("/"),
            self.mirror.url("/"),
            self.syndicate.url("/"),
            self.trap.url("/cal/2026-01-01"),
        )
    }
}

fn paragraphs_html(paragraphs: &[String]) -> String {
    paragraphs.iter().map(|p| format!("<p>{p}</p>\n")).collect()
}

fn origin_page(title: &str, body: &str, writer: &mut Writer) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} | Daily Origin</title></head>
<body><header class="site-header"><a href="/">Daily Origin</a>
<nav class="menu"><a href="/">Home</a> <a href="/about">About</a> <a href="/private/staff">Staff</a></nav></header>
<main><article class="post"><h1>{title}</h1>
<div class="entry-content">{body}</div></article></main>
<aside class="sidebar"><div class="ad">Advertisement: {ad}</div><p>Visitors today: {visits}</p></aside>
<footer class="site-footer">Generated at 2026-11-{day:02} {hour:02}:{minute:02}. Copyright Daily Origin.</footer>
</body></html>"#,
        ad = writer.sentence(5, 8),
        visits = writer.below(100_000),
        day = 1 + writer.below(28),
        hour = writer.below(24),
        minute = writer.below(60),
    )
}

fn origin_site(articles: &[Article], writer: &mut Writer) -> Site {
    let n = articles.len();
    let mut site = Site::new().page(
        "/robots.txt",
        Reply::ok("text/plain", "User-agent: *\nDisallow: /private/\n"),
    );
    let index: String = (1..=n)
        .map(|i| {
            format!(
                "<li><a href=\"/articles/{i}\">{}</a></li>\n",
                articles[i - 1].title
            )
        })
        .collect();
    let home = origin_page(
        "Front page",
        &format!(
            "<p>{}</p><ul>{index}</ul><p><a href=\"/private/archive\">Staff archive</a></p>",
            writer.paragraph()
        ),
        writer,
    );
    site.insert("/", Reply::html(home));
    let about = origin_page(
        "About us",
        &paragraphs_html(&[writer.paragraph(), writer.paragraph()]),
        writer,
    );
    site.insert("/about", Reply::html(about));
    for i in 1..=n {
        let article = &articles[i - 1];
        let related = format!(
            "<p>Related: <a href=\"/articles/{}\">next</a>, <a href=\"/articles/{}/\">previous</a></p>",
            i % n + 1,
            (i + n - 2) % n + 1
        );
        let body = paragraphs_html(&article.paragraphs) + &related;
        // The same article behind a URL variant: a new counter and timestamp, same text.
        site.insert(
            &format!("/articles/{i}"),
            Reply::html(origin_page(&article.title, &body, writer)),
        );
        site.insert(
            &format!("/articles/{i}/"),
            Reply::html(origin_page(&article.title, &body, writer)),
        );
    }
    for path in ["/private/staff", "/private/archive"] {
        let page = origin_page(
            "Staff only",
            &paragraphs_html(&[writer.paragraph()]),
            writer,
        );
        site.insert(path, Reply::html(page));
    }
    site
}

fn mirror_page(title: &str, body: &str, writer: &mut Writer) -> String {
    format!(
        r#"<!doctype html><html><head><title>{title} - Mirror Times</title></head>
<body><div id="topbar"><span class="logo">Mirror Times</span> <a href="/">home</a></div>
<div id="layout"><div class="column-left"><ul class="links"><li><a href="/">All stories</a></li><li><a href="/mirror/extra-1.html">Extras</a></li></ul>
<div class="promo">Sponsored: {ad}</div></div>
<div id="story"><h2 class="headline">{title}</h2><div class="story-body">{body}</div>
<div class="meta">Mirrored {day:02}/11/2026 - {hits} readers</div></div></div>
<div id="bottom">Mirror Times, all rights reserved. Page served in {ms} ms.</div></body></html>"#,
        ad = writer.sentence(6, 10),
        day = 1 + writer.below(28),
        hits = writer.below(9_999),
        ms = writer.below(900),
    )
}

fn mirror_site(articles: &[Article], writer: &mut Writer) -> Site {
    let n = articles.len();
    let mut site = Site::new();
    let index: String = (1..=n)
        .map(|i| {
            format!(
                "<li><a href=\"/mirror/story-{i}.html\">{}</a></li>\n",
                articles[i - 1].title
            )
        })
        .collect();
    let home = mirror_page(
        "Stories",
        &format!("<p>{}</p><ul>{index}</ul>", writer.paragraph()),
        writer,
    );
    site.insert("/", Reply::html(home));
    for i in 1..=n {
        let article = &articles[i - 1];
        let extra = if i <= 3 {
            format!("<p><a href=\"/mirror/extra-{i}.html\">Reader letters on this story</a></p>")
        } else {
            String::new()
        };
        let body = paragraphs_html(&article.paragraphs) + &extra;
        site.insert(
            &format!("/mirror/story-{i}.html"),
            Reply::html(mirror_page(&article.title, &body, writer)),
        );
    }
    for i in 1..=3 {
        let letters = writer.article();
        site.insert(
            &format!("/mirror/extra-{i}.html"),
            Reply::html(mirror_page(
                &letters.title,
                &paragraphs_html(&letters.paragraphs),
                writer,
            )),
        );
    }
    // The mirror has no robots.txt: 404, everything allowed.
    site
}

fn syndicate_site(articles: &[Article], writer: &mut Writer) -> Site {
    let copies = (articles.len() / 3).max(2);
    let page = |title: &str, body: &str, writer: &mut Writer| {
        format!(
            r#"<html><head><title>{title} :: Syndicated</title></head><body>
<table width="100%"><tr><td class="nav"><a href="/">Syndicated news</a><br><a href="/syndicated/1">Top story</a></td>
<td class="content"><h3>{title}</h3>{body}<p class="credit">Originally published by Daily Origin.</p></td>
<td class="ads">Ad: {ad}</td></tr></table></body></html>"#,
            ad = writer.sentence(4, 9)
        )
    };
    let mut site = Site::new();
    let index: String = (1..=copies)
        .map(|i| format!("<a href=\"/syndicated/{i}\">story {i}</a><br>\n"))
        .collect();
    let home = page(
        "Syndicated news",
        &format!(
            "<p>{}</p>{index}<a href=\"/syndicated/combined\">Two stories</a>",
            writer.paragraph()
        ),
        writer,
    );
    site.insert("/", Reply::html(home));
    for i in 1..=copies {
        let mut paragraphs = articles[i - 1].paragraphs.clone();
        match i % 3 {
            // A paragraph deleted.
            0 => {
                paragraphs.remove(paragraphs.len() / 2);
            }
            // About 5 % of the words changed.
            1 => {
                paragraphs = paragraphs
                    .iter()
                    .map(|p| writer.change_words(p, 0.05))
                    .collect();
            }
            // Two paragraphs swapped and one added.
            _ => {
                paragraphs.swap(0, 1);
                paragraphs.push(writer.paragraph());
            }
        }
        let body = paragraphs_html(&paragraphs);
        site.insert(
            &format!("/syndicated/{i}"),
            Reply::html(page(&articles[i - 1].title, &body, writer)),
        );
    }
    // One page containing a whole article and half of another.
    let mut both = articles[0].paragraphs.clone();
    both.extend(articles[1].paragraphs.iter().take(3).cloned());
    site.insert(
        "/syndicated/combined",
        Reply::html(page("Two stories", &paragraphs_html(&both), writer)),
    );
    site
}

fn trap_site(writer: &mut Writer) -> Site {
    let blurb: Vec<String> = (0..4).map(|_| writer.paragraph()).collect();
    let blurb = Arc::new(paragraphs_html(&blurb));
    Site::new().generated(Arc::new(move |path: &str| {
        let date = path.strip_prefix("/cal/")?;
        let (y, rest) = date.split_once('-')?;
        let (m, d) = rest.split_once('-')?;
        let (y, m, d): (u32, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
        let next = if d < 28 {
            format!("{y}-{m:02}-{:02}", d + 1)
        } else if m < 12 {
            format!("{y}-{:02}-01", m + 1)
        } else {
            format!("{}-01-01", y + 1)
        };
        let html = format!(
            r#"<html><head><title>Events on {date}</title></head><body><h1>Events calendar</h1>
<div class="day"><p>Events for {date}: none scheduled yet.</p>{blurb}</div>
<p><a href="/cal/{next}">Next day</a></p></body></html>"#
        );
        Some(Reply::html(html))
    }))
}
