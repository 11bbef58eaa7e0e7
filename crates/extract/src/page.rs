//! What a crawler needs from a page besides its text: title, links, canonical URL, meta robots
//! and language, all read from the one parse.

use url::Url;

use crate::html::{Document, NodeId};
use crate::tag::{Attr, Tag};

/// A link found on a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The target, resolved against the page's `<base href>` (or its own URL), fragment kept;
    /// only `http` and `https` links are kept.
    pub url: Url,
    /// The anchor text, whitespace collapsed.
    pub text: String,
    /// `rel` contains `nofollow` (or `ugc` / `sponsored`, which search engines treat alike).
    pub nofollow: bool,
    /// With [`LinkReading::WithContext`]: the text after the link up to the next link, at most
    /// [`CONTEXT_BYTES`] of it, whitespace collapsed (a list's description of its entry, the
    /// rest of the sentence); else empty.
    pub context: String,
}

/// The most text after a link kept as its context ([`Link::context`]).
pub const CONTEXT_BYTES: usize = 160;

/// The directives of `<meta name="robots">`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MetaRobots {
    /// Do not index this page (`noindex` or `none`).
    pub noindex: bool,
    /// Do not follow this page's links (`nofollow` or `none`).
    pub nofollow: bool,
}

impl MetaRobots {
    /// Parses a directive list such as `"noindex, nofollow"` (case-insensitive); unknown
    /// directives are ignored. Also the syntax of the `X-Robots-Tag` header.
    pub fn parse(content: &str) -> MetaRobots {
        let mut robots = MetaRobots::default();
        for directive in content.split([',', ' ']).map(str::trim) {
            match directive.to_ascii_lowercase().as_str() {
                "noindex" => robots.noindex = true,
                "nofollow" => robots.nofollow = true,
                "none" => {
                    robots.noindex = true;
                    robots.nofollow = true;
                }
                _ => {}
            }
        }
        robots
    }

    /// Both sets of directives together.
    pub fn union(self, other: MetaRobots) -> MetaRobots {
        MetaRobots {
            noindex: self.noindex || other.noindex,
            nofollow: self.nofollow || other.nofollow,
        }
    }
}

/// How much of a page's links [`PageFacts::read_links`] reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkReading {
    /// Every link resolved, with its anchor text and `rel` (what a crawl follows and records).
    #[default]
    Full,
    /// As [`LinkReading::Full`], each link with the text that follows it
    /// ([`Link::context`]): what a focused crawl scores a link by, besides its anchor.
    WithContext,
    /// Only the links' `href`s, kept as they are and resolved when asked
    /// ([`PageFacts::for_each_target`]): what a corpus needs of a page's links, and only for
    /// the few pages judged by where their links lead. Resolving a URL costs about as much as
    /// parsing the page's text around it.
    Deferred,
}

/// Title, links, canonical URL, robots directives and declared language of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageFacts {
    /// The first `<title>`, whitespace collapsed.
    pub title: Option<String>,
    /// The URL relative links resolve against: `<base href>` when valid, else the page's URL.
    pub base: Url,
    /// `<a href>` and `<area href>` in document order.
    pub links: Vec<Link>,
    /// `<link rel=canonical href>`, resolved.
    pub canonical: Option<Url>,
    /// `<meta name=robots>` directives.
    pub robots: MetaRobots,
    /// Declared language: `<html lang>`, else `<meta http-equiv=content-language>`, lower-cased.
    pub language: Option<String>,
    /// Links past the cap of [`PageFacts::read_capped`], not kept.
    pub links_over_cap: u32,
    /// With [`LinkReading::Deferred`], the `href`s of the `<a>` and `<area>` elements, in
    /// document order, not resolved yet (`links` is then empty).
    pub hrefs: Vec<String>,
}

impl PageFacts {
    /// Reads the facts of `doc`, fetched from `url`.
    pub fn read(doc: &Document, url: &Url) -> PageFacts {
        PageFacts::read_capped(doc, url, usize::MAX)
    }

    /// Reads the facts of `doc`, fetched from `url`, keeping its first `max_links` links
    /// (the others are counted in `links_over_cap`): a page of a million links costs no
    /// more than one of `max_links`.
    pub fn read_capped(doc: &Document, url: &Url, max_links: usize) -> PageFacts {
        PageFacts::read_links(doc, url, max_links, LinkReading::Full)
    }

    /// [`PageFacts::read_capped`], reading the links as `reading` says. Deferred, the first
    /// `max_links` `href`s are kept (those that resolve to no http(s) URL included).
    pub fn read_links(
        doc: &Document,
        url: &Url,
        max_links: usize,
        reading: LinkReading,
    ) -> PageFacts {
        let elements =
            || (0..doc.len() as NodeId).filter_map(|id| doc.node(id).tag.map(|tag| (id, tag)));
        let base = elements()
            .find(|&(id, tag)| tag == Tag::Base && doc.attr(id, Attr::Href).is_some())
            .and_then(|(id, _)| url.join(doc.attr(id, Attr::Href)?.trim()).ok())
            .unwrap_or_else(|| url.clone());
        let mut facts = PageFacts {
            title: doc.first(Tag::Title).map(|id| doc.subtree_text(id)),
            base,
            links: Vec::new(),
            canonical: None,
            robots: MetaRobots::default(),
            language: None,
            links_over_cap: 0,
            hrefs: Vec::new(),
        };
        let mut meta_language = None;
        for (id, tag) in elements() {
            match tag {
                Tag::A | Tag::Area => {
                    let Some(href) = doc.attr(id, Attr::Href) else {
                        continue;
                    };
                    if facts.links.len() + facts.hrefs.len() >= max_links {
                        facts.links_over_cap = facts.links_over_cap.saturating_add(1);
                        continue;
                    }
                    if reading == LinkReading::Deferred {
                        facts.hrefs.push(href.to_owned());
                        continue;
                    }
                    let Some(target) = resolve(&facts.base, href) else {
                        continue;
                    };
                    let rel = doc.attr(id, Attr::Rel).unwrap_or("").to_ascii_lowercase();
                    let nofollow = rel
                        .split_ascii_whitespace()
                        .any(|r| matches!(r, "nofollow" | "ugc" | "sponsored"));
                    let context = match reading {
                        LinkReading::WithContext => context_after(doc, id),
                        _ => String::new(),
                    };
                    facts.links.push(Link {
                        url: target,
                        text: doc.subtree_text(id),
                        nofollow,
                        context,
                    });
                }
                Tag::Link if facts.canonical.is_none() => {
                    let rel = doc.attr(id, Attr::Rel).unwrap_or("");
                    if rel
                        .split_ascii_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("canonical"))
                    {
                        facts.canonical =
                            doc.attr(id, Attr::Href).and_then(|href| resolve(url, href));
                    }
                }
                Tag::Meta => {
                    let name = doc.attr(id, Attr::Name).unwrap_or("");
                    let content = doc.attr(id, Attr::Content).unwrap_or("");
                    if name.eq_ignore_ascii_case("robots") {
                        facts.robots = facts.robots.union(MetaRobots::parse(content));
                    }
                    let http_equiv = doc.attr(id, Attr::HttpEquiv).unwrap_or("");
                    if http_equiv.eq_ignore_ascii_case("content-language")
                        && meta_language.is_none()
                    {
                        meta_language = language_tag(content);
                    }
                }
                Tag::Html if facts.language.is_none() => {
                    facts.language = doc.attr(id, Attr::Lang).and_then(language_tag);
                }
                _ => {}
            }
        }
        facts.language = facts.language.or(meta_language);
        facts
    }

    /// Where the page's links lead, in document order: the resolved links' URLs, and the
    /// deferred `href`s ([`LinkReading::Deferred`]) that resolve to an http(s) URL.
    pub fn for_each_target(&self, mut each: impl FnMut(&Url)) {
        for link in &self.links {
            each(&link.url);
        }
        for href in &self.hrefs {
            if let Some(target) = resolve(&self.base, href) {
                each(&target);
            }
        }
    }
}

/// The text after the link `id` up to the next link (or the end of the page), whitespace
/// collapsed, cut at a word boundary within [`CONTEXT_BYTES`]; raw text (scripts, styles)
/// left out.
fn context_after(doc: &Document, id: NodeId) -> String {
    let mut out = String::new();
    let mut i = doc.node(id).end;
    while (i as usize) < doc.len() && out.len() < CONTEXT_BYTES {
        let node = doc.node(i);
        match node.tag {
            Some(Tag::A | Tag::Area) => break,
            Some(tag) if tag.is_raw_text() => {
                i = node.end;
                continue;
            }
            Some(tag) if tag.is_block() => crate::html::push_collapsed(&mut out, " "),
            Some(_) => {}
            None => crate::html::push_collapsed(&mut out, doc.text(i)),
        }
        i += 1;
    }
    if out.len() > CONTEXT_BYTES {
        let mut cut = CONTEXT_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        cut = out[..cut].rfind(' ').unwrap_or(cut);
        out.truncate(cut);
    }
    out.trim().to_string()
}

/// `href` resolved against `base`, when it is an http(s) URL.
fn resolve(base: &Url, href: &str) -> Option<Url> {
    let target = base.join(href.trim()).ok()?;
    matches!(target.scheme(), "http" | "https").then_some(target)
}

/// The first tag of a language list, lower-cased (`"en-US, fr"` -> `"en-us"`).
fn language_tag(value: &str) -> Option<String> {
    let first = value.split(',').next()?.trim();
    (!first.is_empty()).then(|| first.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_from_one_parse() {
        let html = r#"<html lang="en-GB"><head><title> A  page </title><base href="https://cdn.example/b/">
            <link rel="Canonical" href="/canonical">
            <meta name="ROBOTS" content="NoIndex"><meta name="robots" content="nofollow"></head>
            <body><a href="x.html#frag">X <b>link</b></a> <a href="mailto:a@b">mail</a>
            <a href="javascript:void(0)">js</a> <a rel="external nofollow" href="//other.example/y">y</a>
            <map><area href="/z" alt=z></map> <a>no href</a></body></html>"#;
        let page = Url::parse("https://example.com/dir/page.html").expect("url");
        let facts = PageFacts::read(&Document::parse(html), &page);
        assert_eq!(facts.title.as_deref(), Some("A page"));
        assert_eq!(facts.base.as_str(), "https://cdn.example/b/");
        assert_eq!(
            facts.canonical.as_ref().map(Url::as_str),
            Some("https://example.com/canonical")
        );
        assert_eq!(
            facts.robots,
            MetaRobots {
                noindex: true,
                nofollow: true
            }
        );
        assert_eq!(facts.language.as_deref(), Some("en-gb"));
        let links: Vec<_> = facts
            .links
            .iter()
            .map(|l| (l.url.as_str(), l.text.as_str(), l.nofollow))
            .collect();
        assert_eq!(
            links,
            [
                ("https://cdn.example/b/x.html#frag", "X link", false),
                ("https://other.example/y", "y", true),
                ("https://cdn.example/z", "", false),
            ]
        );
    }

    #[test]
    fn links_past_the_cap_are_counted_not_kept() {
        let html: String = (0..25)
            .map(|i| format!("<a href=\"/p{i}\">{i}</a><a>no href</a>"))
            .collect();
        let doc = Document::parse(&html);
        let url = Url::parse("http://a.test/").expect("url");
        let capped = PageFacts::read_capped(&doc, &url, 10);
        assert_eq!(capped.links.len(), 10);
        assert_eq!(capped.links_over_cap, 15);
        assert_eq!(capped.links[9].url.as_str(), "http://a.test/p9");
        let all = PageFacts::read(&doc, &url);
        assert_eq!((all.links.len(), all.links_over_cap), (25, 0));
        assert_eq!(all.links[..10], capped.links[..]);
    }

    #[test]
    fn with_context_each_link_keeps_the_text_up_to_the_next() {
        let long = "word ".repeat(100);
        let html = format!(
            r#"<dl><dt><a href="/authn">mod_authn_core</a></dt><dd>Core Authentication</dd>
            <dt><a href="/authz">mod_authz_core</a></dt><dd>Core Authorization<script>var
            x = "no";</script></dd></dl><p>See <a href="/long">this</a> {long}</p>"#
        );
        let doc = Document::parse(&html);
        let url = Url::parse("http://a.test/").expect("url");
        let facts = PageFacts::read_links(&doc, &url, usize::MAX, LinkReading::WithContext);
        let contexts: Vec<&str> = facts.links.iter().map(|l| l.context.as_str()).collect();
        assert_eq!(
            contexts[..2],
            ["Core Authentication", "Core Authorization See"]
        );
        assert!(contexts[2].len() <= CONTEXT_BYTES && contexts[2].ends_with("word"));
        assert!(contexts[2].len() > CONTEXT_BYTES - 6, "{}", contexts[2]);
        let full = PageFacts::read(&doc, &url);
        assert!(full.links.iter().all(|l| l.context.is_empty()));
        let strip = |links: &[Link]| -> Vec<(String, String)> {
            links
                .iter()
                .map(|l| (l.url.to_string(), l.text.clone()))
                .collect()
        };
        assert_eq!(strip(&full.links), strip(&facts.links), "the same links");
    }

    #[test]
    fn deferred_links_resolve_to_the_same_targets() {
        let html = r#"<base href="https://cdn.example/b/"><a href="x.html#frag">X</a>
            <a href="mailto:a@b">mail</a> <a href=" /y?q=1 ">y</a><area href="../z"><a>none</a>"#;
        let doc = Document::parse(html);
        let url = Url::parse("https://example.com/dir/page.html").expect("url");
        let targets = |facts: &PageFacts| {
            let mut all = Vec::new();
            facts.for_each_target(|url| all.push(url.to_string()));
            all
        };
        let full = PageFacts::read(&doc, &url);
        let deferred = PageFacts::read_links(&doc, &url, usize::MAX, LinkReading::Deferred);
        assert!(deferred.links.is_empty());
        assert_eq!(deferred.hrefs.len(), 4);
        assert_eq!(targets(&deferred), targets(&full));
        assert_eq!(
            targets(&full),
            [
                "https://cdn.example/b/x.html#frag",
                "https://cdn.example/y?q=1",
                "https://cdn.example/z"
            ]
        );
        let capped = PageFacts::read_links(&doc, &url, 2, LinkReading::Deferred);
        assert_eq!((capped.hrefs.len(), capped.links_over_cap), (2, 2));
    }

    #[test]
    fn meta_language_and_robots_none() {
        let html = r#"<meta http-equiv="Content-Language" content="zh-CN, en"><meta name=robots content="none">"#;
        let facts = PageFacts::read(
            &Document::parse(html),
            &Url::parse("http://a.test/").expect("url"),
        );
        assert_eq!(facts.language.as_deref(), Some("zh-cn"));
        assert_eq!(
            facts.robots,
            MetaRobots {
                noindex: true,
                nofollow: true
            }
        );
        assert!(facts.title.is_none() && facts.canonical.is_none() && facts.links.is_empty());
    }
}
