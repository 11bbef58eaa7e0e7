//! What a crawl does with the links of duplicates and of pages it did not download: a
//! crawler asks only for URLs that a page, a seed, a sitemap or a redirect named. Every site
//! is served in-process on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use crawl_support::{local_config, prose, record, records, run, unnamed_requests};
use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_engine::Verdict;

fn page(title: &str, body: &str, links: &[&str]) -> Reply {
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a> "))
        .collect();
    Reply::html(format!(
        "<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{body}</p></article><nav>{links}</nav></body></html>"
    ))
}

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
    let old = serve(release("old-name", &prose(73))).await.unwrap();
    let new = serve(release("new-name", &format!("{} {}", prose(74), prose(75))))
        .await
        .unwrap();
    let seeds = format!("{}\n{}\n", old.url("/"), new.url("/"));
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.probe_links = true;
    run(&seeds, out.path(), config).await;
    let records = records(out.path());

    assert_eq!(unnamed_requests(&new), Vec::<String>::new());
    assert_eq!(unnamed_requests(&old), Vec::<String>::new());
    let guide = record(&records, &new.url("/guide"));
    assert!(guide.verdict.is_duplicate(), "{guide:?}");
    let probe = guide.probe.as_ref().expect("probed first");
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
