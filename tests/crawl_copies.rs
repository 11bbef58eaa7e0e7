//! The crawler against sites that copy others (a mirror, a new release) crawled side by side:
//! a mirror's copies sampled for pages of their own, links parked until their counterpart is
//! decided, and a copying site's pages judged against the pages they copy. Every site is
//! served in-process on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::time::Duration;

use crawl_support::{
    anchored_page, local_config, page, prose, record, records, run, side_by_side, site_and_mirror,
};
use nearcrawl_demo_web::{Site, serve};
use nearcrawl_records::Verdict;

/// A mirror's copies are sampled (`mirror_samples`): its listing copies the site's, so
/// its stories, copies of the site's articles by their titles, would not be followed; they
/// wait, parked on the pair of sites, and two are drawn as samples (no URL rule predicts their
/// counterparts yet, so in the order found). When a sample adds a page of its own, the rest are
/// followed, and every page only the mirror has is found. When the samples add nothing, the
/// rest are dropped. Without samples, no story is fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirrors_copies_are_sampled_for_pages_of_their_own() {
    let crawl = |extras: &'static [usize], samples: u32, via_redirects: bool| async move {
        let (origin, mirror) = site_and_mirror(extras, Duration::ZERO, via_redirects);
        let origin = serve(origin).await.unwrap();
        let mirror = serve(mirror).await.unwrap();
        let seeds = format!("{}\n{}\n", origin.url("/list"), mirror.url("/page"));
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.limits.concurrency = 1;
        config.dedup.tuning.links.mirror_samples = samples;
        run(&seeds, out.path(), config).await;
        let records = records(out.path());
        let stories = (0..10)
            .filter(|n| mirror.site.hits(&format!("/m/story?id={n}")) == 1)
            .count();
        (mirror, records, stories)
    };

    let (mirror, records, stories) = crawl(&[0, 7], 2, false).await;
    let listing = record(&records, &mirror.url("/page"));
    assert!(listing.verdict.is_duplicate(), "{listing:?}");
    assert_eq!(
        listing.fates().matched_by,
        Some(nearcrawl_link_policy::LinkMatch::Anchor)
    );
    assert_eq!(listing.fates().total("wait"), 10, "{listing:?}");
    assert_eq!(
        listing
            .released
            .as_ref()
            .map(|r| r.count("fetch", "sample")),
        Some(2),
        "{listing:?}"
    );
    let sample = record(&records, &mirror.url("/m/story?id=0"));
    assert!(sample.verdict.is_duplicate(), "{sample:?}");
    let released = settled(&records).expect("the parked stories released");
    assert_eq!((followed(&released), released.total("drop")), (8, 0));
    assert_eq!(stories, 10, "every story fetched");
    for n in [0, 7] {
        let notes = record(&records, &mirror.url(&format!("/extra/{n}")));
        assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    }

    let (_, records, stories) = crawl(&[], 2, false).await;
    let released = settled(&records).unwrap();
    assert_eq!((followed(&released), released.total("drop")), (0, 8));
    assert_eq!(stories, 2, "the samples only");

    let (mirror, _, stories) = crawl(&[0, 7], 0, false).await;
    assert_eq!(stories, 0);
    assert_eq!(mirror.site.hits("/extra/0"), 0, "lost behind the copies");

    // Samples that redirect: the story each leads to is the sample, and decides as above.
    let (mirror, records, stories) = crawl(&[0, 7], 2, true).await;
    assert_eq!(stories, 10, "every story fetched");
    let notes = record(&records, &mirror.url("/extra/7"));
    assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    let (_, records, stories) = crawl(&[], 2, true).await;
    let released = settled(&records).unwrap();
    assert_eq!((followed(&released), released.total("drop")), (0, 8));
    assert_eq!(stories, 2, "the samples only");
}

/// The links parked on the pair of sites settled: the record that says how many of them were
/// followed and how many dropped once the samples were decided.
fn settled(records: &[nearcrawl_records::Record]) -> Option<nearcrawl_records::LinkFates> {
    records
        .iter()
        .filter_map(|r| r.released.clone())
        .find(|r| followed(r) + r.total("drop") > 0)
}

/// A mirror's samples are drawn at least cost: a pair of seeds, the mirror's story 99 and the
/// site's article 99, teaches the rule `/m/story?id={1} -> /a/{1}`, so each story parked on
/// the pair of sites (the mirror's listing copies the site's) has a counterpart whose length
/// is known once it is decided. The two stories drawn are the two whose counterparts are
/// shortest, not the first two found; the one with a page of its own is among them, so the
/// rest are followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirrors_samples_are_its_cheapest_copies() {
    // Paragraphs per story: stories 4 and 2 are the shortest.
    let lengths = [5, 9, 2, 7, 1, 8, 3, 10, 4, 6];
    let title = |n: usize| format!("Article number {n}");
    let story = |n: usize, paragraphs: usize| {
        let mut w = nearcrawl_demo_web::Writer::new(700 + n as u64, 3000);
        (0..paragraphs)
            .map(|_| w.paragraph())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let links = |href: &dyn Fn(usize) -> String| -> Vec<(String, String)> {
        (0..10).map(|n| (href(n), title(n))).collect()
    };
    let none: &[(&str, &str)] = &[];
    let listing = prose(600);
    let delay = Duration::from_millis(20);
    let mut origin = Site::new()
        .page(
            "/list",
            anchored_page("articles", &listing, &links(&|n| format!("/a/{n}"))),
        )
        .page("/a/99", anchored_page(&title(99), &story(99, 4), none));
    let mut mirror = Site::new()
        .page(
            "/page",
            anchored_page(
                "articles",
                &listing,
                &links(&|n| format!("/m/story?id={n}")),
            ),
        )
        .page(
            "/m/story?id=99",
            anchored_page(&title(99), &story(99, 4), none),
        )
        .page("/extra/4", anchored_page("notes", &prose(601), none));
    for (n, &paragraphs) in lengths.iter().enumerate() {
        let text = story(n, paragraphs);
        let article = anchored_page(&title(n), &text, none).delayed(delay);
        origin = origin.page(&format!("/a/{n}"), article);
        let notes: Vec<(String, String)> = match n {
            4 => vec![("/extra/4".to_string(), "Readers' notes".to_string())],
            _ => Vec::new(),
        };
        let copy = anchored_page(&title(n), &text, &notes);
        mirror = mirror.page(&format!("/m/story?id={n}"), copy);
    }
    let origin = serve(origin).await.unwrap();
    let mirror = serve(mirror).await.unwrap();
    let seeds = [
        origin.url("/a/99"),
        mirror.url("/m/story?id=99"),
        origin.url("/list"),
        mirror.url("/page"),
    ]
    .join("\n");
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.tuning.links.mirror_samples = 2;
    run(&seeds, out.path(), config).await;
    let records = records(out.path());

    let taught = record(&records, &mirror.url("/m/story?id=99"));
    assert!(taught.verdict.is_duplicate(), "{taught:?}");
    let listing = record(&records, &mirror.url("/page"));
    assert!(listing.verdict.is_duplicate(), "{listing:?}");
    assert_eq!(listing.fates().total("wait"), 10, "{listing:?}");
    let mut sampled: Vec<&str> = records
        .iter()
        .filter(|r| r.url.contains("/m/story?id=") && r.url != taught.url)
        .take(2)
        .map(|r| r.url.as_str())
        .collect();
    sampled.sort_unstable();
    let cheapest = [mirror.url("/m/story?id=2"), mirror.url("/m/story?id=4")];
    assert_eq!(sampled, cheapest, "{records:#?}");
    let released = settled(&records).expect("the parked stories released");
    assert_eq!((followed(&released), released.total("drop")), (8, 0));
    let notes = record(&records, &mirror.url("/extra/4"));
    assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
}

/// A link parked on something that can no longer be decided (here planted in the state of a
/// job before it starts: no URL, hub or mirror answers to its key) is followed when nothing
/// is left to crawl, not lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_still_parked_when_nothing_is_left_is_followed() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(500), &[]))
            .page("/waiting", page("waiting", &prose(501), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    {
        let store = nearcrawl_store::FjallStore::open(&out.path().join("state")).unwrap();
        let entry = nearcrawl_store::QueuedUrl {
            url: site.url("/waiting"),
            depth: 1,
            ..nearcrawl_store::QueuedUrl::default()
        };
        let link = nearcrawl_store::ParkedLink {
            entry,
            priority: 1,
            always: false,
        };
        let on = nearcrawl_store::url_key("nothing answers to this");
        let commit = nearcrawl_store::Commit {
            parked: vec![(on, nearcrawl_store::url_key(&site.url("/waiting")), link)],
            ..nearcrawl_store::Commit::default()
        };
        nearcrawl_store::CrawlStore::commit(&store, commit).unwrap();
    }
    let mut config = local_config();
    config.limits.concurrency = 1;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let waiting = record(&records, &site.url("/waiting"));
    assert_eq!(waiting.verdict, Verdict::Unique, "{waiting:?}");
}

/// Two releases crawled at once: the new one's top page is judged a duplicate while the old
/// release's table of contents is being fetched (it answers slowly), so whether the link to
/// it leads to new pages is not known yet. The link is parked until the old table of contents
/// is decided; it led to new pages (a hub) outweighing it, so once those are decided the new
/// one is fetched and, through it, the new release's new chapter. The link to a page that led nowhere is probed then (and found
/// unchanged, not fetched).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicates_link_waits_for_its_counterpart_and_the_new_part_is_found() {
    let (top, toc, intro) = (prose(60), prose(61), prose(62));
    let chapters = ["/part/a", "/part/b", "/part/c"];
    let release = |new_chapter: bool| {
        let mut toc_links = chapters.to_vec();
        if new_chapter {
            toc_links.push("/part/new");
        }
        // The new release's top page comes after the old one's, before its table of contents.
        let (top_delay, toc_delay) = match new_chapter {
            true => (200, 0),
            false => (0, 800),
        };
        let mut site = Site::new()
            .page(
                "/",
                page("manual", &top, &["/part/", "/intro"])
                    .delayed(Duration::from_millis(top_delay)),
            )
            .page(
                "/part/",
                page("contents", &toc, &toc_links).delayed(Duration::from_millis(toc_delay)),
            )
            .page("/intro", page("intro", &intro, &[]));
        for (n, path) in chapters.iter().enumerate() {
            site = site.page(path, page("chapter", &prose(63 + n as u64), &[]));
        }
        site.page("/part/new", page("new chapter", &prose(70), &[]))
    };
    let (old, new, records) = side_by_side(release).await;

    let new_top = record(&records, &new.url("/"));
    assert!(new_top.verdict.is_duplicate(), "{new_top:?}");
    assert_eq!(new_top.fates().total("wait"), 2, "{new_top:?}");
    // The old table of contents led to new pages: a hub. Whether they outweigh it is known
    // once its chapters are decided (`hub_min_yield`): the link waits again, and the
    // chapter that completes it releases it, followed (the chapters outweigh the table).
    let old_toc = record(&records, &old.url("/part/"));
    let released = old_toc.released.clone().expect("the parked link released");
    assert_eq!(
        (
            followed(&released),
            released.total("wait"),
            released.total("drop")
        ),
        (0, 1, 0),
        "{old_toc:?}"
    );
    let completing = records
        .iter()
        .filter(|r| r.url.starts_with(&old.url("/part/")) && r.url != old.url("/part/"))
        .find_map(|r| r.released.clone())
        .expect("a chapter releases it");
    assert_eq!((followed(&completing), completing.total("drop")), (1, 0));
    // The link to a page that led nowhere is probed (`probe_links`): unchanged.
    let released = record(&records, &old.url("/intro"))
        .released
        .clone()
        .unwrap();
    assert_eq!(
        (
            followed(&released),
            released.total("check"),
            released.total("drop")
        ),
        (0, 1, 0)
    );
    let intro = record(&records, &new.url("/intro"));
    assert_eq!(intro.verdict, Verdict::Unchanged, "{intro:?}");

    let new_toc = record(&records, &new.url("/part/"));
    assert!(new_toc.verdict.is_duplicate(), "{new_toc:?}");
    let chapter = record(&records, &new.url("/part/new"));
    assert_eq!(chapter.verdict, Verdict::Unique, "the new part is found");
    assert_eq!(
        new.site.hits("/intro"),
        0,
        "a link that led nowhere is not fetched"
    );
    for path in chapters {
        assert_eq!(
            new.site.hits(path),
            0,
            "{path}: the same chapter, not fetched"
        );
    }
}

/// A new release crawled side by side with the old one (here, the old release's chapter
/// answers slowly). Once the new release's top page is found to copy the old one's (same
/// path), a link to the new release's copy of the chapter, found on a page of its own, waits
/// until the old chapter is decided: the copy is then judged against it, a duplicate, and its
/// links are not followed. Fetched first, it would have been kept as an original and its
/// subtree crawled too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copying_sites_link_waits_for_its_counterpart_and_is_judged_against_it() {
    let (top, chapter, child) = (prose(80), prose(81), prose(82));
    let release = |new: bool| {
        let mut top_links = vec!["/chapter"];
        if new {
            top_links.push("/news");
        }
        let (top_delay, chapter_delay) = if new { (100, 0) } else { (0, 800) };
        let mut site = Site::new()
            .page(
                "/",
                page("manual", &top, &top_links).delayed(Duration::from_millis(top_delay)),
            )
            .page(
                "/chapter",
                page("chapter", &chapter, &["/chapter/child"])
                    .delayed(Duration::from_millis(chapter_delay)),
            )
            .page("/chapter/child", page("child", &child, &[]));
        if new {
            site = site.page("/news", page("news", &prose(83), &["/chapter"]));
        }
        site
    };
    let (old, new, records) = side_by_side(release).await;

    assert!(record(&records, &new.url("/")).verdict.is_duplicate());
    let news = record(&records, &new.url("/news"));
    assert_eq!(news.verdict, Verdict::Unique, "{news:?}");
    assert_eq!(
        news.fates().total("wait"),
        1,
        "its link waits for the old chapter: {news:?}"
    );
    let copy = record(&records, &new.url("/chapter"));
    assert!(
        copy.verdict.is_duplicate(),
        "judged against the old chapter: {copy:?}"
    );
    assert_eq!(
        copy.duplicate_of.as_deref(),
        Some(old.url("/chapter").as_str())
    );
    assert_eq!(
        new.site.hits("/chapter/child"),
        0,
        "the copy's subtree is not crawled"
    );
    assert_eq!(old.site.hits("/chapter/child"), 1);
}

/// Links released and fetched, a mirror's samples drawn aside.
fn followed(fates: &nearcrawl_records::LinkFates) -> u32 {
    fates.total("fetch") - fates.count("fetch", "sample")
}
