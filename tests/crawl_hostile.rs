//! The crawler against hostile webs: requests steered at internal addresses (SSRF). Every
//! site is served in-process on loopback; the "internal service" listens on 127.0.0.2, an
//! address no seed is on, so the job's address policy must refuse it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::net::SocketAddr;

use crawl_support::{local_config, prose, record, records, run};
use nearcrawl_demo_web::{Reply, RunningSite, Site, serve, serve_on};
use nearcrawl_engine::Verdict;
use nearcrawl_fetch::{FailureKind, FetchConfig, Fetcher};
use nearcrawl_frontier::{AddressPolicy, CanonicalUrl, HostScope};

const SECRET: &str = "internal service: secret deleted";

/// An internal service on 127.0.0.2 that answers every path with [`SECRET`].
async fn internal_service() -> RunningSite {
    let site = Site::new().generated(std::sync::Arc::new(|_: &str| {
        Some(Reply::ok("text/html", SECRET))
    }));
    serve_on(site, "127.0.0.2:0".parse::<SocketAddr>().unwrap())
        .await
        .expect("127.0.0.2 is loopback on Linux")
}

fn page(title: &str, body: &str, extra_head: &str, links: &[String]) -> Reply {
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">link</a> "))
        .collect();
    Reply::html(format!(
        "<html><head><title>{title}</title>{extra_head}</head><body><article><h1>{title}</h1><p>{body}</p></article><nav>{links}</nav></body></html>"
    ))
}

/// Every WARC file of a job, decompressed, as one string.
fn warc_text(out: &std::path::Path) -> String {
    let mut all = String::new();
    let Ok(dir) = std::fs::read_dir(out.join("warc")) else {
        return all;
    };
    for entry in dir {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let mut text = String::new();
        use std::io::Read;
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        all.push_str(&text);
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_txt_redirect_to_an_internal_address_is_never_requested() {
    let internal = internal_service().await;
    let target = internal.url("/admin/secret?action=delete");
    let site = serve(
        Site::new()
            .page("/robots.txt", Reply::redirect(302, &target))
            .page("/", page("home", &prose(1), "", &[])),
    )
    .await
    .unwrap();
    // Both the default host scope and any host: the address policy refuses, not the scope.
    for hosts in [HostScope::SeedHosts, HostScope::Any] {
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.scope.hosts = hosts;
        run(&site.url("/"), out.path(), config).await;
        assert_eq!(
            internal.site.hits("/admin/secret?action=delete"),
            0,
            "{hosts:?}: the internal URL was requested"
        );
        let records = records(out.path());
        let home = record(&records, "/");
        assert_eq!(
            home.verdict,
            Verdict::RobotsDisallowed,
            "robots.txt unavailable: the host waits, then is parked"
        );
        let reason = home.error.as_deref().unwrap_or_default();
        assert!(
            reason.contains("127.0.0.2") && reason.contains("not requested"),
            "{reason}"
        );
        assert!(!warc_text(out.path()).contains(SECRET));
    }
    assert!(internal.site.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_redirects_canonicals_and_sitemaps_to_an_internal_address_are_refused() {
    let internal = internal_service().await;
    let port = internal.addr.port();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let internal_urls = [
        format!("http://127.0.0.2:{port}/link"),
        format!("http://[::ffff:127.0.0.2]:{port}/mapped"),
        format!("http://2130706434:{port}/decimal"),
        format!("http://localhost:{port}/named"),
    ];
    let urlset = format!(
        "<urlset><url><loc>http://127.0.0.2:{port}/sitemap-loc</loc></url><url><loc>{base}/ok</loc></url></urlset>"
    );
    let mut links: Vec<String> = internal_urls.to_vec();
    links.extend(["/redirect".to_string(), "/ok".to_string()]);
    let site = Site::new()
        .page(
            "/robots.txt",
            Reply::ok(
                "text/plain",
                format!(
                    "User-agent: *\nAllow: /\nSitemap: {base}/sitemap.xml\nSitemap: {base}/moved-sitemap.xml\nSitemap: http://127.0.0.2:{port}/direct-sitemap.xml\n"
                ),
            ),
        )
        .page(
            "/",
            page("home", &prose(2), &format!("<link rel=\"canonical\" href=\"http://127.0.0.2:{port}/canonical\">"), &links),
        )
        .page("/redirect", Reply::redirect(301, &format!("http://127.0.0.2:{port}/redirected")))
        .page("/sitemap.xml", Reply::ok("application/xml", urlset))
        .page("/moved-sitemap.xml", Reply::redirect(302, &format!("http://127.0.0.2:{port}/moved")))
        .page("/ok", page("ok", &prose(3), "", &[]));
    let site = serve_on(site, base.trim_start_matches("http://").parse().unwrap())
        .await
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.scope.hosts = HostScope::Any;
    config.links.sitemaps = true;
    config.links.follow_canonical = true;
    run(&site.url("/"), out.path(), config).await;
    assert!(
        internal.site.requests().is_empty(),
        "requested: {:?}",
        internal.site.requests()
    );
    let records = records(out.path());
    assert_eq!(
        record(&records, "/ok").verdict,
        Verdict::Unique,
        "the public pages are crawled"
    );
    // Sitemaps' URLs out of scope are skipped without a record, like a duplicate's links.
    assert!(
        !records
            .iter()
            .any(|r| r.url.ends_with("/sitemap-loc") || r.url.ends_with("/direct-sitemap.xml"))
    );
    for suffix in [
        "/link",
        "/mapped",
        "/decimal",
        "/named",
        "/redirected",
        "/canonical",
        "/moved",
    ] {
        let r = record(&records, suffix);
        assert_eq!(r.verdict, Verdict::OutOfScope, "{suffix}");
        assert_eq!(
            r.error.as_deref(),
            Some("private or loopback address"),
            "{suffix}"
        );
    }
    assert!(!warc_text(out.path()).contains(SECRET));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fetcher_refuses_internal_literals_and_other_schemes_before_sending() {
    let internal = internal_service().await;
    let port = internal.addr.port();
    let seed = CanonicalUrl::parse("http://127.0.0.1:1/").unwrap();
    let fetcher =
        Fetcher::new(FetchConfig::default(), AddressPolicy::new(false, &[&seed])).unwrap();
    for raw in [
        format!("http://127.0.0.2:{port}/"),
        format!("http://[::ffff:127.0.0.2]:{port}/"),
        format!("http://[::ffff:7f00:2]:{port}/"),
        format!("http://localhost:{port}/"),
        "file:///etc/passwd".to_string(),
    ] {
        let url = url::Url::parse(&raw).unwrap();
        let failure = fetcher.fetch(&url).await.expect_err(&raw);
        assert_eq!(failure.kind, FailureKind::Refused, "{raw}: {failure}");
        assert!(
            !failure.kind.is_transient(),
            "a refused URL is never retried"
        );
    }
    let robots = fetcher
        .fetch_robots(&url::Url::parse(&format!("http://127.0.0.2:{port}/")).unwrap())
        .await;
    assert!(robots.rules.is_unavailable() && robots.responses.is_empty());
    assert!(internal.site.requests().is_empty());
    // The policy lets a seed's own address through.
    let allowed = Fetcher::new(
        FetchConfig::default(),
        AddressPolicy::new(false, &[&CanonicalUrl::parse(&internal.url("/")).unwrap()]),
    )
    .unwrap();
    let page = allowed
        .fetch(&url::Url::parse(&internal.url("/x")).unwrap())
        .await
        .unwrap();
    assert_eq!(page.body, SECRET.as_bytes());
}
