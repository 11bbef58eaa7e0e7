//! The crawler against local sites, scope and links: the scope's limits, `nofollow`, and
//! sitemaps named by robots.txt. Every site is served in-process on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use crawl_support::{count, local_config, page, prose, record, records, run};
use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_records::Verdict;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scope_limits_and_nofollow() {
    let other = serve(Site::new().page("/", page("other", &prose(30), &[])))
        .await
        .unwrap();
    let site = serve(
        Site::new()
            .page(
                "/",
                page("home", &prose(31), &[&other.url("/"), "/skip/me", "/d1"]),
            )
            .page("/d1", page("d1", &prose(32), &["/d2"]))
            .page("/d2", page("d2", &prose(33), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.scope.exclude = vec!["/skip/".into()];
    config.scope.max_depth = Some(1);
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let away = record(&records, &other.url("/"));
    assert_eq!(away.verdict, Verdict::OutOfScope);
    assert_eq!(away.error.as_deref(), Some("host not in scope"));
    assert_eq!(other.site.hits("/"), 0);
    assert_eq!(record(&records, "/skip/me").verdict, Verdict::OutOfScope);
    assert_eq!(record(&records, "/d1").verdict, Verdict::Unique);
    assert_eq!(
        record(&records, "/d2").verdict,
        Verdict::OutOfScope,
        "depth 2 > max_depth 1"
    );
    assert_eq!(count(&records, Verdict::Unique), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nofollow_links_and_pages_are_not_followed() {
    let site = serve(
        Site::new()
            .page(
                "/",
                Reply::html(format!(
                    "<html><body><p>{}</p><a href=/nf>nf</a> <a rel=\"ugc nofollow\" href=/ugc>ugc</a></body></html>",
                    prose(34)
                )),
            )
            .page(
                "/nf",
                Reply::html(format!(
                    "<html><head><meta name=robots content=nofollow></head><body><p>{}</p><a href=/hidden>x</a></body></html>",
                    prose(35)
                )),
            )
            .page("/hidden", page("hidden", &prose(36), &[]))
            .page("/ugc", page("ugc", &prose(37), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    assert_eq!(record(&records, "/nf").robots, ["nofollow"]);
    assert_eq!(record(&records, "/nf").fates().total("fetch"), 0);
    assert_eq!(site.site.hits("/hidden"), 0);
    assert_eq!(site.site.hits("/ugc"), 0);
    assert_eq!(records.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_named_by_robots_txt_seed_the_frontier_when_enabled() {
    let urlset = |paths: &[&str]| -> String {
        let urls: String = paths
            .iter()
            .map(|p| format!("<url><loc>{p}</loc></url>"))
            .collect();
        format!(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(urlset(&[&format!("{base}/hidden-2")]).as_bytes())
            .unwrap();
        e.finish().unwrap()
    };
    let site = Site::new()
        .page("/robots.txt", Reply::ok("text/plain", format!("User-agent: *\nAllow: /\nSitemap: {base}/sitemap-index.xml\n")))
        .page("/", page("home", &prose(80), &[]))
        .page(
            "/sitemap-index.xml",
            Reply::ok("application/xml", format!("<sitemapindex><sitemap><loc>{base}/s1.xml</loc></sitemap><sitemap><loc>{base}/s2.xml.gz</loc></sitemap></sitemapindex>")),
        )
        .page("/s1.xml", Reply::ok("application/xml", urlset(&[&format!("{base}/hidden-1"), "http://elsewhere.example/x"])))
        .page("/s2.xml.gz", Reply::ok("application/gzip", gz))
        .page("/hidden-1", page("h1", &prose(81), &[]))
        .page("/hidden-2", page("h2", &prose(82), &[]));
    let addr: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let site = nearcrawl_demo_web::serve_on(site, addr).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.links.sitemaps = true;
    run(&site.url("/"), out.path(), config.clone()).await;
    let records = records(out.path());
    assert_eq!(
        record(&records, "/sitemap-index.xml").verdict,
        Verdict::Sitemap
    );
    assert_eq!(
        record(&records, "/s1.xml").fates().total("fetch"),
        1,
        "the other host is out of scope"
    );
    assert_eq!(record(&records, "/hidden-1").verdict, Verdict::Unique);
    assert_eq!(
        record(&records, "/hidden-2").verdict,
        Verdict::Unique,
        "gzip sitemap read"
    );
    // Off by default.
    let out = tempfile::tempdir().unwrap();
    config.links.sitemaps = false;
    run(&site.url("/"), out.path(), config).await;
    assert_eq!(crawl_support::records(out.path()).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_record_keeps_each_pages_link_graph_in_a_dedup_crawl() {
    let other = serve(Site::new().page("/", page("other", &prose(40), &[])))
        .await
        .unwrap();
    let text = prose(41);
    let site = serve(
        Site::new()
            .page(
                "/",
                page(
                    "home",
                    &prose(42),
                    &[&other.url("/"), "/skip/me", "/a", "/copy"],
                ),
            )
            .page("/a", page("a", &text, &["/"]))
            .page("/copy", page("copy", &text, &["/only-the-copy-names-this"]))
            .page("/only-the-copy-names-this", page("x", &prose(43), &[])),
    )
    .await
    .unwrap();
    let mut config = local_config();
    config.scope.exclude = vec!["/skip/".into()];
    config.links.record = true;
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), config.clone()).await;
    let found = records(out.path());
    let links = |path: &str| record(&found, path).links.clone();
    // In scope and admitted, seen before or not; the other host and the excluded path not.
    assert_eq!(links("/"), Some(vec![site.url("/a"), site.url("/copy")]));
    assert_eq!(links("/a"), Some(vec![site.url("/")]));
    // A duplicate's links are its graph too, whatever became of them.
    assert!(record(&found, "/copy").verdict.is_duplicate());
    assert_eq!(
        links("/copy"),
        Some(vec![site.url("/only-the-copy-names-this")])
    );
    // Off by default in a dedup crawl.
    let out = tempfile::tempdir().unwrap();
    config.links.record = false;
    run(&site.url("/"), out.path(), config).await;
    assert!(records(out.path()).iter().all(|r| r.links.is_none()));
}
