//! A link of a site found to copy another waits for its counterpart to be judged first: a
//! site copying another path for path, or one whose pages a URL rule maps to another's.

use super::*;

/// A mirror's stories and the origin's articles they copy.
const MIRROR: &str = "http://m.test/story/";
const ORIGIN: &str = "http://o.test/a/";

/// The fate of the link to `link`, followed as new, found on a unique page (`local`: in this
/// process; `trapped`: a trap rule stops the page's links; `page`: its URL's key).
fn on_a_unique_page(
    crawl: &Known,
    rules: LearnedUrls<'_>,
    sites: &CopiedSites,
    (local, trapped, page): (bool, bool, Option<Key>),
    link: &Url,
) -> Fate<Url> {
    let (new, old) = (url(NEW), url(OLD));
    let on = FoundOn {
        local,
        trapped,
        page,
        ..on(Page::Unique, &new, &old)
    };
    let mirrors = &mut Mirrors::default();
    let Ok(found) = found_link(crawl, rules, sites, mirrors, &on, link, Followed::New);
    found
}

#[test]
fn a_copying_site_s_link_waits_for_its_counterpart_to_be_judged_first() {
    let (new, old) = (url(NEW), url(OLD));
    let mut sites = CopiedSites::default();
    sites.note(&new, &old);
    // (what it protects, local, trapped, the counterpart decided, fate)
    let cases = [
        (
            "a link of a site copying another path for path waits",
            true,
            false,
            false,
            Want::Always,
        ),
        (
            "... not once its counterpart is decided",
            true,
            false,
            true,
            Want::Fetch,
        ),
        (
            "... nor where a trap stops the page's links",
            true,
            true,
            false,
            Want::Fetch,
        ),
        (
            "... nor in a shared job's worker",
            false,
            false,
            false,
            Want::Fetch,
        ),
    ];
    for (what, local, trapped, decided, fate) in cases {
        let crawl = match decided {
            true => known(Some(false), HubWorth::Worth, true, true),
            false => known(None, HubWorth::Worth, true, true),
        };
        let rules: LearnedUrls<'_> = (&SessionParams::default(), &|_: &Url| None);
        let found = on_a_unique_page(&crawl, rules, &sites, (local, trapped, None), &url(LINK));
        assert_eq!(want(&found), fate, "{what}");
    }
}

#[test]
fn a_link_a_url_rule_maps_to_a_queued_page_waits_for_it_to_be_judged_first() {
    // Two of the mirror's stories were judged copies of the origin's articles: the rule
    // `/story/{1}/ -> /a/{1}.html`, trusted or not.
    let config = crate::PolicyConfig {
        predict: crate::Predict::Check,
        ..crate::PolicyConfig::default()
    };
    let mut learned = crate::Learned::new(config, None).unwrap_or_default();
    for n in [1, 2] {
        let (copy, original) = (format!("{MIRROR}{n}/"), format!("{ORIGIN}{n}.html"));
        let event = learned.learned(&copy, &original, crate::CopyFacts::default());
        learned.apply(event.expect("rules on"));
    }
    let link = url(&format!("{MIRROR}3/"));
    let counterpart = format!("{ORIGIN}3.html");
    let counterpart: &'static str = Box::leak(counterpart.into_boxed_str());
    // (what it protects, local, trapped, the counterpart seen, decided, found on it, fate)
    let article = Some(crate::key(counterpart));
    let cases = [
        (
            "a story whose article is queued waits for it",
            true,
            false,
            true,
            false,
            None,
            Want::Always,
        ),
        (
            "... not once the article is decided",
            true,
            false,
            true,
            true,
            None,
            Want::Fetch,
        ),
        (
            "... nor when nothing named the article",
            true,
            false,
            false,
            false,
            None,
            Want::Fetch,
        ),
        (
            "... nor where a trap stops the page's links",
            true,
            true,
            true,
            false,
            None,
            Want::Fetch,
        ),
        (
            "... nor on the page the rule maps it to (a calendar's day on its month)",
            true,
            false,
            true,
            false,
            article,
            Want::Fetch,
        ),
        (
            "... nor in a shared job's worker",
            false,
            false,
            true,
            false,
            None,
            Want::Fetch,
        ),
    ];
    for (what, local, trapped, seen, decided, on_it, fate) in cases {
        let mut crawl = Known::default();
        if seen {
            crawl.seen.insert(counterpart);
        }
        if decided {
            crawl.hubs.insert(counterpart, false);
        }
        let counterpart_of = |u: &Url| learned.counterpart_of(u);
        let rules: LearnedUrls<'_> = (learned.sessions(), &counterpart_of);
        let sites = CopiedSites::default();
        let found = on_a_unique_page(&crawl, rules, &sites, (local, trapped, on_it), &link);
        let waits = match &found {
            Fate::Wait {
                until: Until::Page { page, on },
                always: true,
                probe: None,
            } => page.as_str() == counterpart && *on == crate::key(counterpart),
            Fate::Fetch { by: By::New } => false,
            other => panic!("{what}: {other:?}"),
        };
        assert_eq!(waits, fate == Want::Always, "{what}: {found:?}");
    }
}
