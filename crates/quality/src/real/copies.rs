//! Copies of a site under other URL schemes, built from its pages as they are served, for the
//! webs where one manual is crawled beside its copies (the held-out bandwidth issue's shape):
//!
//! - a **mirror** ([`Copying::Mirror`]): every page at `/story{path}/` (its path without the
//!   language's directory and without `.html`), its links to the manual's pages rewritten to
//!   the mirror's, a banner of the mirror's own at the top and three "related" links of its
//!   own at the bottom, both outside the main region (so a copy's links are not its
//!   original's);
//! - a **syndication** ([`Copying::Syndication`]): every other page at `/news{path}`, its main
//!   region only, links made absolute to the original site, with a line naming the original
//!   and the news index (`/news/`, the site's seed); one in three of them rewritten, each run
//!   of text's words in reverse order (not a copy: its text is the page's words, not its
//!   sentences).
//!
//! The truth pairs a copy with its original by the original's path (its `rel`), as it pairs a
//! release's page with the same page of the other release.

use std::collections::{HashMap, HashSet};

use scraper::{Html, Selector};
use url::Url;

use super::SiteFile;

/// How a copy site is made from the web's first site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Copying {
    /// Every page under another URL scheme, with links of its own.
    Mirror,
    /// Every other page's main region, a third of them rewritten.
    Syndication,
}

/// The site copied: its files, those served, where it is served and what marks its main
/// region.
pub(super) struct Origin<'a> {
    /// Its pages by served path.
    pub(super) files: &'a HashMap<String, SiteFile>,
    /// The paths served (a small web's first pages).
    pub(super) kept: &'a HashSet<String>,
    /// Its language's directory, left out of the copies' paths.
    pub(super) prefix: &'a str,
    /// Its address, `http://127.0.0.x:port`.
    pub(super) url: &'a str,
    /// Its main region.
    pub(super) main: &'a Selector,
}

/// A page of a copy site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CopiedPage {
    /// Where it is served.
    pub(super) path: String,
    /// What is served.
    pub(super) html: String,
    /// Its original's path on the first site, less the language's directory (the truth's
    /// pairing key); its own path for a page of the copy's own.
    pub(super) rel: String,
}

impl Copying {
    /// The copy site's seed.
    pub(super) fn seed(self, origin_seed: &str, prefix: &str) -> String {
        match self {
            Copying::Mirror => mirror_path(origin_seed, prefix),
            Copying::Syndication => "/news/".to_string(),
        }
    }

    /// The copy site's pages.
    pub(super) fn build(self, origin: &Origin<'_>) -> Vec<CopiedPage> {
        let mut kept: Vec<&String> = origin.kept.iter().collect();
        kept.sort();
        match self {
            Copying::Mirror => mirror(origin, &kept),
            Copying::Syndication => syndication(origin, &kept),
        }
    }
}

/// Where the mirror serves the page at `path`: `/en/mod/core.html` -> `/story/mod/core/`.
pub(super) fn mirror_path(path: &str, prefix: &str) -> String {
    let rest = path.strip_prefix(prefix).unwrap_or(path);
    let rest = rest.strip_suffix(".html").unwrap_or(rest);
    format!("/story{rest}/")
}

fn rel(path: &str, prefix: &str) -> String {
    path.strip_prefix(prefix).unwrap_or(path).to_string()
}

/// The last part of a path without its ending, as a link's words.
fn title_of(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".html")
        .unwrap_or(name)
        .replace(['-', '_'], " ")
}

fn mirror(origin: &Origin<'_>, kept: &[&String]) -> Vec<CopiedPage> {
    let base = Url::parse("http://site.invalid/").expect("a valid base URL");
    let home = mirror_path(
        kept.first().map(|p| p.as_str()).unwrap_or("/"),
        origin.prefix,
    );
    kept.iter()
        .enumerate()
        .map(|(i, path)| {
            let here = base.join(path).unwrap_or_else(|_| base.clone());
            let html = String::from_utf8_lossy(&origin.files[path.as_str()].bytes);
            let html = rewrite_hrefs(&html, |href| {
                let target = here.join(href).ok()?;
                if target.host_str() != Some("site.invalid") {
                    return None;
                }
                let fragment = target
                    .fragment()
                    .map(|f| format!("#{f}"))
                    .unwrap_or_default();
                Some(match origin.files.contains_key(target.path()) {
                    true => mirror_path(target.path(), origin.prefix) + &fragment,
                    false => target.path().to_string() + &fragment,
                })
            });
            let related: String = [1, 5, 11]
                .iter()
                .map(|step| kept[(i + step) % kept.len()])
                .map(|other| {
                    format!(
                        "<li><a href=\"{}\">{}</a></li>",
                        mirror_path(other, origin.prefix),
                        title_of(other)
                    )
                })
                .collect();
            let banner = format!(
                "<nav class=\"mirror-banner\"><p>You are reading a mirror of this manual. \
                 <a href=\"{home}\">Mirror home</a></p></nav>"
            );
            let related =
                format!("<nav class=\"related\"><h2>Related</h2><ul>{related}</ul></nav>");
            CopiedPage {
                path: mirror_path(path, origin.prefix),
                html: around_body(&html, &banner, &related),
                rel: rel(path, origin.prefix),
            }
        })
        .collect()
}

fn syndication(origin: &Origin<'_>, kept: &[&String]) -> Vec<CopiedPage> {
    let base = Url::parse("http://site.invalid/").expect("a valid base URL");
    let title = Selector::parse("title").expect("a valid selector");
    let mut pages = Vec::new();
    let mut index = String::new();
    for (n, path) in kept.iter().step_by(2).enumerate() {
        let here = base.join(path).unwrap_or_else(|_| base.clone());
        let doc =
            Html::parse_document(&String::from_utf8_lossy(&origin.files[path.as_str()].bytes));
        let name = doc
            .select(&title)
            .next()
            .map(|t| t.text().collect::<String>().trim().to_string())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| title_of(path));
        let main: String = doc.select(origin.main).map(|e| e.html()).collect();
        let main = rewrite_hrefs(&main, |href| {
            let target = here.join(href).ok()?;
            match target.host_str() {
                Some("site.invalid") => Some(format!(
                    "{}{}",
                    origin.url,
                    &target[url::Position::BeforePath..]
                )),
                _ => None,
            }
        });
        let main = match n % 3 {
            2 => reverse_words(&main),
            _ => main,
        };
        let at = format!("/news{}", rel(path, origin.prefix));
        let html = format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{name}</title></head>\
             <body><div class=\"syndicated\">{main}</div><p class=\"source\">First published \
             at <a href=\"{}{path}\">{name}</a>. <a href=\"/news/\">More news</a></p>\
             </body></html>",
            origin.url
        );
        index.push_str(&format!("<li><a href=\"{at}\">{name}</a></li>"));
        pages.push(CopiedPage {
            path: at,
            html,
            rel: rel(path, origin.prefix),
        });
    }
    pages.push(CopiedPage {
        path: "/news/".into(),
        html: format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>News</title></head>\
             <body><h1>News</h1><ul>{index}</ul></body></html>"
        ),
        rel: "/news/".into(),
    });
    pages
}

/// `html` with `top` just inside its `<body>` and `bottom` just before its `</body>` (at its
/// start and end when it has none).
fn around_body(html: &str, top: &str, bottom: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let open = lower
        .find("<body")
        .and_then(|at| lower[at..].find('>').map(|end| at + end + 1))
        .unwrap_or(0);
    let close = lower
        .rfind("</body")
        .filter(|&c| c >= open)
        .unwrap_or(html.len());
    format!(
        "{}{top}{}{bottom}{}",
        &html[..open],
        &html[open..close],
        &html[close..]
    )
}

/// `html` with each `href` value (quoted with `"` or `'`) replaced by what `rewrite` gives
/// for it (`None`: kept).
fn rewrite_hrefs(html: &str, rewrite: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(at) = rest.find("href=") {
        let (before, after) = rest.split_at(at + "href=".len());
        out.push_str(before);
        let Some(quote) = after.chars().next().filter(|q| *q == '"' || *q == '\'') else {
            rest = after;
            continue;
        };
        let value = &after[1..];
        let Some(end) = value.find(quote) else {
            rest = after;
            continue;
        };
        out.push(quote);
        match rewrite(&value[..end]) {
            Some(new) => out.push_str(&new),
            None => out.push_str(&value[..end]),
        }
        out.push(quote);
        rest = &value[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `html` with the words of each run of text between its tags in reverse order.
fn reverse_words(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while !rest.is_empty() {
        let text_end = rest.find('<').unwrap_or(rest.len());
        let text = &rest[..text_end];
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.len() > 1 {
            let lead = &text[..text.len() - text.trim_start().len()];
            let trail = &text[text.trim_end().len()..];
            out.push_str(lead);
            out.push_str(&words.iter().rev().copied().collect::<Vec<_>>().join(" "));
            out.push_str(trail);
        } else {
            out.push_str(text);
        }
        rest = &rest[text_end..];
        let tag_end = rest.find('>').map(|e| e + 1).unwrap_or(rest.len());
        out.push_str(&rest[..tag_end]);
        rest = &rest[tag_end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirror_serves_each_page_under_its_own_scheme() {
        assert_eq!(mirror_path("/en/mod/core.html", "/en"), "/story/mod/core/");
        assert_eq!(mirror_path("/index.html", ""), "/story/index/");
    }

    #[test]
    fn links_are_rewritten_and_nothing_else() {
        let html =
            "<a href=\"a.html#x\">A</a> <a href='b.html'>B</a> href=none <a href=\"http://e/\">";
        let out = rewrite_hrefs(html, |h| (!h.starts_with("http")).then(|| format!("/{h}")));
        assert_eq!(
            out,
            "<a href=\"/a.html#x\">A</a> <a href='/b.html'>B</a> href=none <a href=\"http://e/\">"
        );
    }

    #[test]
    fn a_rewrite_reverses_the_words_of_each_run_of_text() {
        assert_eq!(
            reverse_words("<p>one two three</p> <b>four five</b>"),
            "<p>three two one</p> <b>five four</b>"
        );
    }

    #[test]
    fn a_banner_and_related_links_go_inside_the_body() {
        assert_eq!(
            around_body(
                "<html><BODY class=x><p>t</p></body></html>",
                "<nav>",
                "</nav>"
            ),
            "<html><BODY class=x><nav><p>t</p></nav></body></html>"
        );
        assert_eq!(around_body("<p>t</p>", "[", "]"), "[<p>t</p>]");
    }

    #[test]
    fn copies_of_a_small_site() {
        let files: HashMap<String, SiteFile> = ["/en/a.html", "/en/b.html", "/en/c.html"]
            .iter()
            .map(|p| {
                let bytes = format!(
                    "<html><head><title>T{p}</title></head><body><div id=main>\
                     <p>words of {p} here</p><a href=\"b.html\">b</a></div></body></html>"
                );
                (
                    p.to_string(),
                    SiteFile {
                        path: p.to_string(),
                        bytes: bytes.into_bytes(),
                    },
                )
            })
            .collect();
        let kept: HashSet<String> = files.keys().cloned().collect();
        let main = Selector::parse("#main").unwrap();
        let origin = Origin {
            files: &files,
            kept: &kept,
            prefix: "/en",
            url: "http://127.0.0.9:80",
            main: &main,
        };
        let mirror = Copying::Mirror.build(&origin);
        assert_eq!(mirror.len(), 3);
        assert_eq!(mirror[0].path, "/story/a/");
        assert_eq!(mirror[0].rel, "/a.html");
        assert!(mirror[0].html.contains("href=\"/story/b/\">b</a>"));
        assert!(mirror[0].html.contains("class=\"related\""));
        let news = Copying::Syndication.build(&origin);
        let paths: Vec<&str> = news.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["/news/a.html", "/news/c.html", "/news/"]);
        assert!(
            news[0]
                .html
                .contains("href=\"http://127.0.0.9:80/en/b.html\"")
        );
        assert!(
            news[0]
                .html
                .contains("href=\"http://127.0.0.9:80/en/a.html\"")
        );
        assert!(news[2].html.contains("href=\"/news/c.html\""));
        assert_eq!(Copying::Syndication.seed("/en/index.html", "/en"), "/news/");
    }
}
