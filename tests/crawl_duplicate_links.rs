//! What a crawl does with the links of duplicates and of pages it did not download: a
//! crawler asks only for URLs that a page, a seed, a sitemap or a redirect named. Every site
//! is served in-process on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use crawl_support::{
    InOrder, in_order, local_config, page, prose, record, records, run, unnamed_requests,
};
use nearcrawl_demo_web::{Site, serve};
use nearcrawl_records::Verdict;

/// A new release renames a chapter's file (`old-name` to `new-name`, the same length) and
/// rewrites it. Its guide, which links to the chapter, keeps the old guide's text and length:
/// its probe finds it unchanged, but the old guide's link, taken to the new release's host,
/// names a URL no page of it names. That URL is never asked for; the guide is fetched for its
/// own links instead, and through them the new chapter is found. The release notes, unchanged
/// and linking nowhere, are still decided without a download.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_page_is_fetched_for_its_links_and_no_url_is_made_up() {
    let release = |chapter: &str, text: &str| {
        let path = format!("/guide/{chapter}.html");
        Site::new()
            .page("/", page("manual", &prose(70), &["/guide", "/notes"]))
            .page("/guide", page("guide", &prose(71), &[path.as_str()]))
            .page("/notes", page("release notes", &prose(72), &[]))
            .page(&path, page("chapter", text, &[]))
    };
    let new_text = format!("{} {}", prose(74), prose(75));
    let InOrder {
        old, new, records, ..
    } = in_order(
        release("old-name", &prose(73)),
        release("new-name", &new_text),
    )
    .await;

    assert_eq!(unnamed_requests(&new), Vec::<String>::new());
    assert_eq!(unnamed_requests(&old), Vec::<String>::new());
    let guide = record(&records, &new.url("/guide"));
    assert!(guide.verdict.is_duplicate(), "{guide:?}");
    let probe = guide.probe().expect("probed first");
    assert_eq!(probe.length, probe.counterpart_length, "{guide:?}");
    assert_eq!(probe.links_unknown, 1, "{guide:?}");
    assert_eq!(new.site.hits("/guide"), 1);
    let chapter = record(&records, &new.url("/guide/new-name.html"));
    assert_eq!(chapter.verdict, Verdict::Unique, "{chapter:?}");
    assert_eq!(chapter.parent, Some(guide.seq));

    let notes = record(&records, &new.url("/notes"));
    assert_eq!(notes.verdict, Verdict::Unchanged, "{notes:?}");
    assert_eq!(
        new.site.hits("/notes"),
        0,
        "an unchanged page is not fetched"
    );
    assert!(
        records
            .iter()
            .all(|r| !r.url.ends_with("/old-name.html") || r.url.starts_with(&old.url("/"))),
        "no record of a made-up URL"
    );
}

/// Two releases crawled in turn: the new release's guide is found unchanged by its probe
/// while the page that also names its chapter, the new table of contents (rewritten, so
/// fetched whole), is still queued. The guide is not downloaded for the chapter, which
/// nothing has named yet: its decision waits for the crawl's end (`probe.deferred`), when
/// the table of contents has named the chapter, and it is decided unchanged without a GET.
/// (Before, the guide was fetched whole for a link the next page named anyway.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_page_waits_for_the_crawl_s_end_before_it_is_fetched_for_its_links() {
    let release = |toc: &str| {
        Site::new()
            .page("/", page("manual", &prose(60), &["/guide", "/toc"]))
            .page(
                "/guide",
                page("guide", &prose(61), &["/guide/chapter.html"]),
            )
            .page("/toc", page("contents", toc, &["/guide/chapter.html"]))
            .page("/guide/chapter.html", page("chapter", &prose(62), &[]))
    };
    let toc = format!("{} {}", prose(64), prose(65));
    let InOrder { new, records, .. } = in_order(release(&prose(63)), release(&toc)).await;

    assert_eq!(unnamed_requests(&new), Vec::<String>::new());
    let guide = record(&records, &new.url("/guide"));
    assert_eq!(guide.verdict, Verdict::Unchanged, "{guide:?}");
    let probe = guide.probe().expect("probed");
    assert!(probe.deferred, "{guide:?}");
    assert_eq!(
        probe.links_unknown, 0,
        "named by the contents meanwhile: {guide:?}"
    );
    assert_eq!(new.site.hits("/guide"), 0, "not downloaded");
    let toc = record(&records, &new.url("/toc"));
    assert_eq!(toc.verdict, Verdict::Unique, "{toc:?}");
    let chapter = record(&records, &new.url("/guide/chapter.html"));
    assert_eq!(chapter.parent, Some(toc.seq), "{chapter:?}");
}

/// A long page that is the first to name one short page (a reference manual and its short
/// appendix): the new release's copy of the long page, its text unchanged, names a URL
/// nothing else names, but what the old copy's link led to weighs less than the long page,
/// so it is not fetched again to find out (`hub_min_yield`, as for a hub), and the
/// appendix, changed or not, is not reached through it (`probe.led_to_less`). With
/// `hub_min_yield` 0 the long page is fetched for its link and the changed appendix found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_is_not_fetched_for_links_that_weigh_less_than_itself() {
    let long = (80..90).map(prose).collect::<Vec<_>>().join(" ");
    let release = |appendix: &str| {
        Site::new()
            .page("/", page("manual", &prose(76), &["/reference", "/notes"]))
            .page(
                "/reference",
                page("reference", &long, &["/reference/appendix"]),
            )
            .page("/notes", page("release notes", &prose(77), &[]))
            .page("/reference/appendix", page("appendix", appendix, &[]))
    };
    let crawl = |hub_min_yield: f64| {
        let release = &release;
        async move {
            let old = serve(release(&prose(78))).await.unwrap();
            let new = serve(release(&prose(79))).await.unwrap();
            let seeds = format!("{}\n{}\n", old.url("/"), new.url("/"));
            let out = tempfile::tempdir().unwrap();
            let mut config = local_config();
            config.limits.concurrency = 1;
            config.dedup.tuning.links.probe_links = true;
            config.dedup.tuning.links.hub_min_yield = hub_min_yield;
            run(&seeds, out.path(), config).await;
            (new, records(out.path()))
        }
    };

    let (new, records) = crawl(1.0).await;
    assert_eq!(unnamed_requests(&new), Vec::<String>::new());
    let reference = record(&records, &new.url("/reference"));
    assert_eq!(reference.verdict, Verdict::Unchanged, "{reference:?}");
    let probe = reference.probe().unwrap();
    assert_eq!((probe.links_unknown, probe.led_to_less), (1, true));
    assert_eq!(new.site.hits("/reference"), 0);
    assert_eq!(new.site.hits("/reference/appendix"), 0);

    let (new, records) = crawl(0.0).await;
    assert_eq!(unnamed_requests(&new), Vec::<String>::new());
    let reference = record(&records, &new.url("/reference"));
    assert!(reference.verdict.is_duplicate(), "{reference:?}");
    let probe = reference.probe().unwrap();
    assert_eq!((probe.links_unknown, probe.led_to_less), (1, false));
    let appendix = record(&records, &new.url("/reference/appendix"));
    assert_eq!(appendix.verdict, Verdict::Unique, "{appendix:?}");
}

/// The link policy on a mirror under another URL scheme (`/m/story?id=N` for `/a/N`): the
/// first stories are fetched and judged copies, and teach the rule; its next predictions
/// are fetched to check it; once it is trusted, the mirror's other stories are not fetched:
/// with `predict = "skip"` they are recorded as predicted duplicates without a request,
/// with `"verify"` each is asked with HEAD and, of its counterpart's length, decided
/// `unchanged`. Each record names the rule and its record when it was asked. A mirror whose
/// copies link to pages of their own (readers' notes on the first and the eighth story) is
/// never trusted: its stories are all fetched, and the notes found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_url_rule_spares_the_mirrors_copies() {
    use nearcrawl_dedup::Predict;
    let crawl = |predict: Predict, extras: &'static [usize]| async move {
        let (origin, mirror) =
            crawl_support::site_and_mirror(extras, std::time::Duration::ZERO, false);
        let (origin, mirror) = (serve(origin).await.unwrap(), serve(mirror).await.unwrap());
        let seeds = format!("{}\n{}\n", origin.url("/list"), mirror.url("/page"));
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.limits.concurrency = 1;
        config.dedup.predict = predict;
        config.dedup.tuning.min_support = 2;
        config.dedup.tuning.min_trust = 0.75;
        config.dedup.predict_explore = 0;
        // Every story followed, so that the rule has copies to learn from.
        config.dedup.tuning.links.mirror_samples = 100;
        config.dedup.tuning.links.mirror_sample_share = 1.0;
        run(&seeds, out.path(), config).await;
        (origin, mirror, records(out.path()))
    };
    let story = |n: usize| format!("/m/story?id={n}");

    let (origin, mirror, records) = crawl(Predict::Skip, &[]).await;
    assert_eq!(unnamed_requests(&mirror), Vec::<String>::new());
    let predicted: Vec<&nearcrawl_records::Record> = records
        .iter()
        .filter(|r| r.verdict == Verdict::Predicted)
        .collect();
    assert!(predicted.len() >= 5, "{predicted:#?}");
    for record in &predicted {
        let n = record.url.rsplit('=').next().unwrap();
        let counterpart = origin.url(&format!("/a/{n}"));
        assert_eq!(record.duplicate_of.as_deref(), Some(counterpart.as_str()));
        let prediction = record.prediction().unwrap();
        assert_eq!(record.predicted(), Some("skip"));
        let rule = format!("/m/story?id={{1}} -> {}", origin.url("/a/{1}"));
        assert!(prediction.rule.ends_with(&rule), "{prediction:?}");
        assert!(
            prediction.support >= 2 && prediction.confirmed >= 2,
            "{prediction:?}"
        );
        assert_eq!(mirror.site.hits(&format!("/m/story?id={n}")), 0);
    }
    // The first stories were fetched, and the predictions made of them checked.
    let first = record(&records, &mirror.url(&story(0)));
    assert!(first.verdict.is_duplicate(), "{first:?}");
    let checked = records
        .iter()
        .filter(|r| r.predicted() == Some("check"))
        .filter_map(|r| r.prediction())
        .collect::<Vec<_>>();
    assert!(!checked.is_empty() && checked.iter().all(|p| p.right == Some(true)));

    let (_, mirror, records) = crawl(Predict::Verify, &[]).await;
    assert_eq!(unnamed_requests(&mirror), Vec::<String>::new());
    let verified: Vec<&nearcrawl_records::Record> = records
        .iter()
        .filter(|r| r.predicted() == Some("verify"))
        .collect();
    assert!(verified.len() >= 5, "{verified:#?}");
    for record in verified {
        assert_eq!(record.verdict, Verdict::Unchanged, "{record:?}");
        assert_eq!(record.prediction().unwrap().right, Some(true));
        let path = &record.url[mirror.url("").len()..];
        assert_eq!(mirror.site.hits(path), 0, "a HEAD only");
        assert!(mirror.site.head_requests().iter().any(|p| p == path));
    }

    let (_, mirror, records) = crawl(Predict::Skip, &[0, 7]).await;
    assert!(records.iter().all(|r| r.verdict != Verdict::Predicted));
    for n in 0..10 {
        assert_eq!(mirror.site.hits(&story(n)), 1, "story {n}");
    }
    for n in [0, 7] {
        let notes = record(&records, &mirror.url(&format!("/extra/{n}")));
        assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    }
}

/// A manual and its translation on another host, whose index is found last: three pages in
/// four untranslated (the English text under the translation's own title), the others
/// translated. Its URL rule (`/cs/* -> /en/*`) is wrong one time in four, too often to
/// trust, but a copy saves enough to pay for a sample: once the rule has its pairs, an
/// untranslated page is asked a HEAD and four `Range` parts, decided `unchanged` without
/// a download (its prediction's fate `sample`), and no translated page is ever taken for a
/// copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_language_s_untranslated_pages_are_sampled_not_downloaded() {
    const PAGES: u64 = 16;
    // About 8 kB a page: a sample costs under half of one.
    let text = |seed: u64| {
        (0..5)
            .map(|k| prose(seed + 1000 * k))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let english = |i: u64| text(300 + i);
    let translated = |i: u64| i % 4 == 3;
    let paths =
        |lang: &str| -> Vec<String> { (0..PAGES).map(|i| format!("/{lang}/p{i}.html")).collect() };
    let (en_paths, cs_paths) = (paths("en"), paths("cs"));
    let cs_site = {
        let links: Vec<&str> = cs_paths.iter().map(String::as_str).collect();
        let mut site = Site::new().page("/cs/index.html", page("Obsah", &prose(500), &links));
        for (i, path) in (0..PAGES).zip(&cs_paths) {
            let text = match translated(i) {
                true => text(600 + i),
                false => english(i),
            };
            site = site.page(path, page(&format!("Kapitola {i}"), &text, &[]));
        }
        site
    };
    let cs = serve(cs_site).await.unwrap();
    let cs_index = cs.url("/cs/index.html");
    let en_site = {
        // The translation's index is the English index's last link: found at depth 1, its
        // pages at depth 2, after the English pages they copy.
        let mut links: Vec<&str> = en_paths.iter().map(String::as_str).collect();
        links.push(cs_index.as_str());
        let mut site = Site::new().page("/en/index.html", page("Contents", &prose(501), &links));
        for (i, path) in (0..PAGES).zip(&en_paths) {
            site = site.page(path, page(&format!("Chapter {i}"), &english(i), &[]));
        }
        site
    };
    let en = serve(en_site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.tuning.links.probe_links = true;
    config.scope.hosts = nearcrawl_frontier::HostScope::Any;
    let report = run(
        &format!("{}\n", en.url("/en/index.html")),
        out.path(),
        config,
    )
    .await;
    let records = records(out.path());

    assert_eq!(unnamed_requests(&cs), Vec::<String>::new());
    let mut sampled = 0;
    for (i, path) in (0..PAGES).zip(&cs_paths) {
        let r = record(&records, &cs.url(path));
        if translated(i) {
            assert_eq!(r.verdict, Verdict::Unique, "a translation: {r:?}");
            continue;
        }
        assert!(
            r.verdict.is_duplicate() || r.verdict == Verdict::Unchanged,
            "untranslated: {r:?}"
        );
        let fate = r.predicted();
        if r.verdict == Verdict::Unchanged && fate == Some("sample") {
            let probe = r.probe().expect("its probe");
            let sample = probe.sample.as_ref().expect("its sample");
            assert_eq!((sample.informative, sample.matched), (4, 4), "{r:?}");
            assert!(probe.window.is_some(), "{r:?}");
            assert_eq!(cs.site.hits(path), 0, "not downloaded: {r:?}");
            sampled += 1;
        }
    }
    // Twelve untranslated pages; the first three teach the rule.
    assert!(sampled >= 6, "{sampled} sampled");
    // The report counts the predictions by fate: the sampled ones found unchanged are
    // right; the translations sampled, then fetched whole, are the rule's wrong ones.
    let samples = &report.predictions["sample"];
    assert_eq!(samples.right, sampled, "{samples:?}");
    assert_eq!(samples.right + samples.wrong, samples.pages, "all decided");
    assert!(report.summary().contains("URL rules' predictions"));
}
