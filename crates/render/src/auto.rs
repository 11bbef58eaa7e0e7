//! `render.mode = "auto"`: which pages are rendered, decided per page from what its static
//! HTML shows and per host from what rendering its pages added ([`AutoHosts`]). A page is
//! rendered when its HTML loads a script and shows little text ([`AUTO_MAX_TEXT`]
//! characters of main text at most): a script-built page's shell ("Loading..."), not a page
//! of text that also loads an analytics script. A host whose first [`AUTO_TRIES`] renders
//! added no text or links is not rendered any more: its scripts do not write its pages.

use std::collections::HashMap;
use std::sync::Mutex;

/// The most characters of main text a page's static HTML may show and still be rendered.
pub const AUTO_MAX_TEXT: usize = 200;

/// Renders of a host that added nothing after which the host is not rendered any more.
pub const AUTO_TRIES: u32 = 3;

/// Characters a render must add to a page's main text to count as adding text.
const ADDED_TEXT: usize = 50;

/// What auto mode learned of one host's renders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostRenders {
    /// Pages rendered.
    pub rendered: u32,
    /// Of those, pages whose render added text or links.
    pub added: u32,
}

/// What a page's static HTML shows, for auto mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shown {
    /// Characters of main text.
    pub text: usize,
    /// Links.
    pub links: usize,
}

/// Whether a page is rendered, and why (for its record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Rendered, for this reason.
    Render(String),
    /// Judged on its static HTML; the reason, when it was a page auto mode would render.
    Static(Option<String>),
}

/// Whether auto mode renders a page that loads a script or not (`scripts`) and shows
/// `shown`, on a host whose renders so far are `host`.
pub fn choose(scripts: bool, shown: Shown, host: HostRenders) -> Choice {
    if !scripts || shown.text > AUTO_MAX_TEXT {
        return Choice::Static(None);
    }
    if host.rendered >= AUTO_TRIES && host.added == 0 {
        return Choice::Static(Some(format!(
            "not rendered: this host's first {} renders added no text or links",
            host.rendered
        )));
    }
    Choice::Render(format!(
        "a script and {} characters of text in its HTML",
        shown.text
    ))
}

/// Whether a render added to a page what its static HTML did not show: more text, or more
/// links.
pub fn added(before: Shown, after: Shown) -> bool {
    after.text > before.text + ADDED_TEXT || after.links > before.links
}

/// Characters of visible text past which a page's static HTML is taken to show more than
/// [`AUTO_MAX_TEXT`] characters of main text without extracting it ([`glance`]).
pub const GLANCE_MAX_TEXT: usize = 20 * AUTO_MAX_TEXT;

/// What a glance at HTML sees, without parsing it: characters of text outside tags, scripts
/// and styles (whitespace aside), counted up to `cap`, and `<a` tags. A page's main text is
/// part of its visible text: a glance of at most [`AUTO_MAX_TEXT`] characters shows little
/// text for sure, one of [`GLANCE_MAX_TEXT`] or more shows much for all but a page whose
/// template outweighs its text twenty times; in between, the crawler extracts the page.
pub fn glance(html: &[u8], cap: usize) -> Shown {
    let mut shown = Shown::default();
    let mut at = 0;
    while at < html.len() && shown.text < cap {
        if html[at] != b'<' {
            shown.text +=
                usize::from(!html[at].is_ascii_whitespace() && !is_continuation(html[at]));
            at += 1;
            continue;
        }
        let tag = &html[at + 1..];
        let starts = |name: &[u8]| {
            tag.len() > name.len()
                && tag[..name.len()].eq_ignore_ascii_case(name)
                && !tag[name.len()].is_ascii_alphanumeric()
        };
        if starts(b"a") {
            shown.links += 1;
        }
        // A script's or a style's content is no text: skipped to its end tag.
        let skip_to: Option<&[u8]> = if starts(b"script") {
            Some(b"</script")
        } else if starts(b"style") {
            Some(b"</style")
        } else {
            None
        };
        let end = match skip_to {
            Some(close) => find_ignore_case(&html[at..], close).map(|i| at + i + close.len()),
            None => Some(at + 1),
        };
        let Some(end) = end else {
            break;
        };
        match html[end..].iter().position(|&b| b == b'>') {
            Some(i) => at = end + i + 1,
            None => break,
        }
    }
    shown
}

/// A UTF-8 continuation byte (not the start of a character).
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// Whether HTML loads a script (a `<script` tag, in any case).
pub fn has_script(html: &[u8]) -> bool {
    // Every page of a crawl in `auto` is asked: only its `<`s are looked at.
    memchr::memchr_iter(b'<', html).any(|at| {
        (html.get(at + 1..at + 7)).is_some_and(|name| name.eq_ignore_ascii_case(b"script"))
    })
}

/// What auto mode learned of every host's renders, shared by a job's page tasks.
#[derive(Debug, Default)]
pub struct AutoHosts {
    hosts: Mutex<HashMap<String, HostRenders>>,
}

impl AutoHosts {
    /// What was learned of `host`.
    pub fn of(&self, host: &str) -> HostRenders {
        self.lock().get(host).copied().unwrap_or_default()
    }

    /// A page of `host` was rendered; `added`: the render added text or links.
    pub fn learn(&self, host: &str, added: bool) {
        let mut hosts = self.lock();
        let renders = hosts.entry(host.to_owned()).or_default();
        renders.rendered += 1;
        renders.added += u32::from(added);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HostRenders>> {
        self.hosts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: usize, links: usize) -> Shown {
        Shown { text, links }
    }

    fn host(rendered: u32, added: u32) -> HostRenders {
        HostRenders { rendered, added }
    }

    #[test]
    fn a_page_is_rendered_when_its_html_loads_a_script_and_shows_little_text() {
        // (what it protects, a script, what the HTML shows, the host so far) -> rendered
        let cases = [
            ("a script-built shell", true, shown(10, 0), host(0, 0), true),
            (
                "a page of text with an analytics script",
                true,
                shown(5_000, 40),
                host(0, 0),
                false,
            ),
            (
                "a short page without a script",
                false,
                shown(10, 2),
                host(0, 0),
                false,
            ),
            (
                "a shell on a host whose renders add pages",
                true,
                shown(10, 0),
                host(9, 9),
                true,
            ),
            (
                "a host learning: two renders that added nothing",
                true,
                shown(10, 0),
                host(2, 0),
                true,
            ),
            (
                "a host whose three renders added nothing",
                true,
                shown(10, 0),
                host(3, 0),
                false,
            ),
            (
                "one render of many that added: still rendered",
                true,
                shown(10, 0),
                host(20, 1),
                true,
            ),
            (
                "at the limit of text",
                true,
                shown(AUTO_MAX_TEXT, 0),
                host(0, 0),
                true,
            ),
        ];
        for (what, scripts, page, so_far, rendered) in cases {
            let choice = choose(scripts, page, so_far);
            assert_eq!(
                matches!(choice, Choice::Render(_)),
                rendered,
                "{what}: {choice:?}"
            );
        }
        let Choice::Static(Some(why)) = choose(true, shown(0, 0), host(3, 0)) else {
            panic!("a host given up is said so");
        };
        assert!(
            why.contains("first 3 renders added no text or links"),
            "{why}"
        );
        assert_eq!(choose(false, shown(0, 0), host(3, 0)), Choice::Static(None));
    }

    #[test]
    fn a_render_adds_when_it_shows_more_text_or_more_links() {
        assert!(added(shown(10, 0), shown(500, 0)));
        assert!(added(shown(10, 0), shown(10, 3)));
        assert!(
            !added(shown(10, 2), shown(40, 2)),
            "a few words of a banner"
        );
        assert!(!added(shown(300, 5), shown(300, 5)));
    }

    #[test]
    fn a_script_tag_is_found_in_any_case() {
        assert!(has_script(b"<html><SCRIPT src=a.js></SCRIPT>"));
        assert!(has_script(b"<script>"));
        assert!(!has_script(b"<p>a script of a play</p><noscript>"));
        assert!(!has_script(b"<scrip"));
    }

    #[test]
    fn a_glance_counts_the_text_outside_tags_scripts_and_styles_and_the_links() {
        let page = b"<html><head><title>T</title><style>p { color: red }</style></head>\
            <body><p>Caf\xc3\xa9 au lait</p><script>var x = '<a href>';</script>\
            <A href=\"/b\">b</A><abbr>x</abbr></body></html>";
        // "T", "Caf\u{e9}aulait" less spaces, "b", "x": 1 + 10 + 1 + 1.
        assert_eq!(glance(page, 1_000), Shown { text: 13, links: 1 });
        assert_eq!(glance(page, 5).text, 5, "counted up to the cap");
        let shell = b"<div id=root>Loading...</div><script src=/app.js></script>";
        assert_eq!(glance(shell, 1_000), Shown { text: 10, links: 0 });
        assert_eq!(
            glance(b"<p>cut <scr", 100).text,
            3,
            "a tag cut short ends the glance"
        );
    }

    #[test]
    fn hosts_learn_apart() {
        let hosts = AutoHosts::default();
        hosts.learn("a.test", false);
        hosts.learn("a.test", true);
        hosts.learn("b.test", false);
        assert_eq!(hosts.of("a.test"), host(2, 1));
        assert_eq!(hosts.of("b.test"), host(1, 0));
        assert_eq!(hosts.of("c.test"), host(0, 0));
    }
}
