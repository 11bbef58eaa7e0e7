//! Which of a duplicate's links are followed: as configured, a sequence of copies, a
//! mirror's links by anchor text, and an anchor text leading to more places.

use super::*;

/// A page of document `doc` with these links (href, anchor text).
fn html_links(doc: u64, links: &[(&str, &str)]) -> Vec<u8> {
    let links: String = links
        .iter()
        .map(|(href, text)| format!("<a href=\"{href}\">{text}</a> "))
        .collect();
    format!(
        "<html><body><article><p>{}</p></article><nav>{links}</nav></body></html>",
        document(doc, 15)
    )
    .into_bytes()
}

/// A duplicate whose links are matched with its original's by anchor text.
fn assert_matched_by_anchor(copy: &Judgement) {
    assert!(
        matches!(
            &copy.follow,
            Follow::NewLinks {
                by: LinkMatch::Anchor,
                ..
            }
        ),
        "{:?}",
        copy.verdict
    );
}

#[test]
fn a_duplicates_links_are_followed_as_configured() {
    let first_url = url::Url::parse("http://v1.example.org/guide/a.html").unwrap();
    let copy_url = url::Url::parse("http://v2.example.org/guide/a.html").unwrap();
    let cases = [
        (true, DuplicateOutlinks::New, None),
        (true, DuplicateOutlinks::Skip, Some(Follow::None)),
        (true, DuplicateOutlinks::Keep, Some(Follow::All)),
        (false, DuplicateOutlinks::Skip, Some(Follow::All)),
    ];
    for (enabled, outlinks, expected) in cases {
        let config = DedupStageConfig {
            enabled,
            duplicate_outlinks: outlinks,
            ..DedupStageConfig::default()
        };
        let mut stage = stage_with(config, AnalyzerConfig::default());
        let mut kept = MemoryOriginals::default();
        let page = html_links(
            8,
            &[
                ("/day/2024-05-03", "Next: 3 May"),
                ("../index.html", "Home"),
                ("b.html", ""),
                ("http://elsewhere.example/x", "Elsewhere"),
            ],
        );
        let page = stage.analyzer().extract_html(&page, None, &first_url);
        let Ok(first) = stage.judge("v1.example.org", page, &kept);
        let admission = stage.admit(0, "v1.example.org", &first);
        assert_eq!(
            admission.links.is_some(),
            outlinks == DuplicateOutlinks::New
        );
        kept.keep(admission);
        let copy = html_links(8, &[("/day/2024-05-04", "Next: 4 May")]);
        let copy = stage.analyzer().extract_html(&copy, None, &copy_url);
        let Ok(copy) = stage.judge("v2.example.org", copy, &kept);
        assert!(copy.verdict != Likeness::Unique);
        let at = |target: &str| copy_url.join(target).unwrap();
        let follows =
            |target: &str, anchor: &str| copy.follow.follows(&copy_url, &at(target), anchor);
        match expected {
            Some(follow) => assert_eq!(copy.follow, follow, "{enabled} {outlinks:?}"),
            None => {
                // Where the original's links lead, relative to each site: not followed.
                assert!(!follows("/index.html", "Home"), "copied navigation");
                assert!(!follows("/index.html", "Start"), "same target, other text");
                assert!(!follows("b.html#top", ""), "same target, fragment aside");
                assert!(!follows("http://elsewhere.example/x", "Elsewhere"));
                // Somewhere new: followed, whatever the anchor text (a calendar's next day
                // too: the trap rules contain those).
                assert!(follows("/day/2024-05-09", "Next: 9 May"), "a new day");
                assert!(follows("c.html", ""), "a next arrow to a new page");
                assert!(follows("appendix.html", "Home"), "a new target, known text");
                assert!(
                    follows("http://v1.example.org/guide/b.html", ""),
                    "another host"
                );
                assert!(follows("/day/2024-05-04", "Calendar"), "digits, other text");
            }
        }
    }
}

#[test]
fn the_next_step_of_a_sequence_of_copies_is_not_followed() {
    let mut stage = stage();
    let mut kept = MemoryOriginals::default();
    let day = |n: u32| url::Url::parse(&format!("http://cal.example/day/2024-05-{n:02}")).unwrap();
    let analyzer = Arc::clone(stage.analyzer());
    let page = |n: u32| {
        let next = format!("/day/2024-05-{:02}", n + 1);
        let text = format!("Next: {} May", n + 1);
        let links = [(next.as_str(), text.as_str()), ("/index.html", "Home")];
        analyzer.extract_html(&html_links(8, &links), None, &day(n))
    };
    let first = page(3);
    let Ok(first) = stage.judge("cal.example", first, &kept);
    kept.keep(stage.admit(0, "cal.example", &first));
    // Day 4 copies day 3, which links to it: its "next" differs from day 3's in digits only.
    let copy = page(4);
    let Ok(copy) = stage.judge("cal.example", copy, &kept);
    assert!(matches!(
        &copy.follow,
        Follow::NewLinks {
            in_sequence: true,
            ..
        }
    ));
    let follows = |target: &str, anchor: &str| {
        copy.follow
            .follows(&day(4), &day(4).join(target).unwrap(), anchor)
    };
    assert!(!follows("/day/2024-05-05", "Next: 5 May"), "the next step");
    assert!(follows("/day/2024-06-05", "Calendar"), "somewhere new");
}

#[test]
fn a_mirrors_links_are_matched_by_anchor_text() {
    let mut stage = stage();
    let mut kept = MemoryOriginals::default();
    let origin = url::Url::parse("http://origin.example/list").unwrap();
    let titles = ["Rivers", "Glaciers", "Deltas", "Canyons"];
    // The page at `url` listing the titles, each linked to `href(i, title)`.
    let analyzer = Arc::clone(stage.analyzer());
    let listing = |url: &url::Url, href: &dyn Fn(usize, &str) -> String| {
        let hrefs: Vec<String> = titles.iter().enumerate().map(|(i, t)| href(i, t)).collect();
        let links: Vec<(&str, &str)> = hrefs.iter().map(String::as_str).zip(titles).collect();
        analyzer.extract_html(&html_links(8, &links), None, url)
    };
    let page = listing(&origin, &|_, t| {
        format!("/article/{}.html", t.to_lowercase())
    });
    let Ok(first) = stage.judge("origin.example", page, &kept);
    kept.keep(stage.admit(0, "origin.example", &first));
    // The mirror's URL scheme differs: the same titles lead to other paths.
    let mirror = url::Url::parse("http://mirror.example/page/0").unwrap();
    let copy = listing(&mirror, &|i, _| format!("/m/story.php?id={i}"));
    let Ok(copy) = stage.judge("mirror.example", copy, &kept);
    assert_matched_by_anchor(&copy);
    let at = |target: &str| mirror.join(target).unwrap();
    let follows = |target: &str, anchor: &str| copy.follow.follows(&mirror, &at(target), anchor);
    assert!(!follows("/m/story.php?id=0", "Rivers"), "a copied item");
    assert!(
        follows("/m/story.php?id=9", "Moraines"),
        "an item the origin lacks"
    );
    assert!(
        !follows("/m/story.php?id=8", ""),
        "no text, nothing new to tell"
    );
}

#[test]
fn an_anchor_text_leading_to_more_places_than_on_the_original_is_followed_beyond_its_count() {
    let mut stage = stage();
    let mut kept = MemoryOriginals::default();
    let analyzer = Arc::clone(stage.analyzer());
    let page = |url: &url::Url, links: &[(String, &str)]| {
        let links: Vec<(&str, &str)> = links.iter().map(|(h, t)| (h.as_str(), *t)).collect();
        analyzer.extract_html(&html_links(8, &links), None, url)
    };
    // The original: "saddr" leads to two places (one linked three times), and other texts
    // to pages of their own, under one URL scheme.
    let origin = url::Url::parse("http://origin.example/gfx10.html").unwrap();
    let mut links: Vec<(String, &str)> = ["Rivers", "Glaciers", "Deltas", "Canyons"]
        .iter()
        .map(|t| (format!("/a/{}.html", t.to_lowercase()), *t))
        .collect();
    links.extend((0..3).map(|_| ("/ops/saddr_a.html".to_string(), "saddr")));
    links.push(("/ops/saddr_b.html".to_string(), "saddr"));
    let Ok(first) = stage.judge("origin.example", page(&origin, &links), &kept);
    kept.keep(stage.admit(0, "origin.example", &first));
    // Its copy, under another scheme: "saddr" leads to three places, the third linked once.
    let copy_url = url::Url::parse("http://origin.example/gfx1030.html").unwrap();
    let mut links: Vec<(String, &str)> = ["Rivers", "Glaciers", "Deltas", "Canyons"]
        .iter()
        .map(|t| (format!("/b/{}.html", t.to_lowercase()), *t))
        .collect();
    links.extend((0..3).map(|_| ("/ops/1030_saddr_a.html".to_string(), "saddr")));
    links.extend((0..2).map(|_| ("/ops/1030_saddr_b.html".to_string(), "saddr")));
    links.push(("/ops/1030_saddr_c.html".to_string(), "saddr"));
    let Ok(copy) = stage.judge("origin.example", page(&copy_url, &links), &kept);
    assert_matched_by_anchor(&copy);
    let follows = |target: &str, anchor: &str| {
        copy.follow
            .follows(&copy_url, &copy_url.join(target).unwrap(), anchor)
    };
    assert!(!follows("/b/rivers.html", "Rivers"), "a copied text");
    assert!(
        !follows("/ops/1030_saddr_a.html", "saddr"),
        "the most linked"
    );
    assert!(!follows("/ops/1030_saddr_b.html", "saddr"), "the second");
    assert!(
        follows("/ops/1030_saddr_c.html", "saddr"),
        "beyond the original's two"
    );
}
