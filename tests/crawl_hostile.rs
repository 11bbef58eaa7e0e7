//! The crawler against hostile webs: requests steered at internal addresses (SSRF), bodies
//! cut mid-way, URLs too long to send, failing servers. Every
//! site is served in-process on loopback; the "internal service" listens on 127.0.0.2, an
//! address no seed is on, so the job's address policy must refuse it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;
#[path = "support/faults.rs"]
mod faults;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crawl_support::{html_page as page, local_config, prose, record, records, run, serve_at};
use nearcrawl_demo_web::{Reply, RunningSite, Site, serve, serve_on};
use nearcrawl_fetch::{FailureKind, FetchConfig, Fetcher};
use nearcrawl_frontier::{AddressPolicy, CanonicalUrl, HostScope};
use nearcrawl_records::Verdict;

const SECRET: &str = "internal service: secret deleted";

/// An internal service on 127.0.0.2 that answers every path with [`SECRET`].
async fn internal_service() -> RunningSite {
    let site = Site::new().generated(std::sync::Arc::new(|_: &str| {
        Some(Reply::ok("text/html", SECRET))
    }));
    serve_at(site, "127.0.0.2").await
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

/// A server whose first answer on `/cut` promises 5,000 bytes and closes after 100; every
/// other answer is a whole page. The counter counts requests of `/cut`.
async fn cutting_server() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let cuts = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&cuts);
    let script: faults::Script = Arc::new(move |path: &str| {
        let reply = if path == "/robots.txt" {
            faults::not_found()
        } else if path == "/cut" && counter.fetch_add(1, Ordering::SeqCst) == 0 {
            let mut r = faults::html_head("Content-Length: 5000\r\n");
            r.extend_from_slice(&[b'a'; 100]);
            r
        } else {
            faults::ok_html(&format!("<html><body><p>{}</p></body></html>", prose(5)))
        };
        vec![faults::Step::Write(reply)]
    });
    (faults::serve_script(script).await, cuts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_cut_mid_way_is_a_network_failure_and_retried() {
    let (addr, cuts) = cutting_server().await;
    let seed = CanonicalUrl::parse(&format!("http://{addr}/")).unwrap();
    let fetcher =
        Fetcher::new(FetchConfig::default(), AddressPolicy::new(false, &[&seed])).unwrap();
    let url = url::Url::parse(&format!("http://{addr}/cut")).unwrap();
    let failure = fetcher.fetch(&url).await.expect_err("the body is cut");
    assert_eq!(failure.kind, FailureKind::Broken, "{failure}");
    assert!(failure.kind.is_transient());
    assert!(
        failure.wire_bytes >= 100,
        "bytes received are counted: {}",
        failure.wire_bytes
    );
    // In a crawl: retried, then fetched whole.
    cuts.store(0, Ordering::SeqCst);
    let out = tempfile::tempdir().unwrap();
    run(&format!("http://{addr}/cut"), out.path(), local_config()).await;
    let records = records(out.path());
    let cut = record(&records, "/cut");
    assert_eq!(cut.verdict, Verdict::Unique, "{cut:?}");
    assert_eq!(cut.retries, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_that_cannot_be_sent_fails_once_and_is_written_once() {
    let long = format!("/long/{}", "x".repeat(100_000));
    let site = serve(Site::new().page(
        "/",
        page("home", &prose(3), "", std::slice::from_ref(&long)),
    ))
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    let failed = record(&records, &long);
    assert_eq!(failed.verdict, Verdict::Error);
    assert_eq!(failed.retries, None, "never retried: {:?}", failed.error);
    assert!(
        failed
            .error
            .as_deref()
            .unwrap_or_default()
            .starts_with("Unsendable"),
        "{:?}",
        failed.error
    );
    let line = serde_json::to_string(failed).unwrap();
    assert_eq!(line.matches(&long).count(), 1, "the URL once per record");
    assert_eq!(site.site.hits(&long), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_back_off_before_each_retry() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(4), "", &["/broken".to_string()]))
            .page("/broken", Reply::status(500)),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.politeness.backoff_initial_ms = 150;
    config.politeness.backoff_max_ms = 2_000;
    run(&site.url("/"), out.path(), config).await;
    let times: Vec<_> = site
        .site
        .requests()
        .into_iter()
        .filter(|(path, _)| path == "/broken")
        .map(|(_, t)| t)
        .collect();
    assert_eq!(times.len(), 3, "the first attempt and two retries");
    // Back-off from 150 ms, doubling: 150 ms, then 300 ms (the 500s in a row).
    assert!(
        times[1] - times[0] >= Duration::from_millis(150),
        "{:?}",
        times[1] - times[0]
    );
    assert!(
        times[2] - times[1] >= Duration::from_millis(300),
        "{:?}",
        times[2] - times[1]
    );
    let broken = record(&records(out.path()), "/broken").clone();
    assert_eq!((broken.verdict, broken.retries), (Verdict::Error, Some(2)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_past_the_per_page_cap_are_counted_not_followed() {
    let links: Vec<String> = (0..25).map(|i| format!("/p/{i}")).collect();
    let mut site = Site::new().page("/", page("home", &prose(3), "", &links));
    for (i, link) in links.iter().enumerate() {
        site = site.page(link, page("leaf", &prose(40 + i as u64), "", &[]));
    }
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.links.max_per_page = 10;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let home = record(&records, "/");
    assert_eq!(
        (
            home.outlinks,
            home.fates().total("fetch"),
            home.fates().over_cap
        ),
        (Some(10), 10, 15),
        "{home:?}"
    );
    assert_eq!(records.len(), 11, "the first 10 links, in document order");
    assert!(records.iter().any(|r| r.url.ends_with("/p/9")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_wait_for_a_place_in_flight() {
    // Two bodies over large_body_bytes with one place: the second is read only once the
    // first response is dropped.
    let big = "x".repeat(300 << 10);
    let site = Site::new()
        .page("/a", Reply::html(big.clone()))
        .page("/b", Reply::html(big))
        .page("/small", Reply::html("small"));
    let site = serve(site).await.unwrap();
    let seed = CanonicalUrl::parse(&site.url("/a")).unwrap();
    let config = FetchConfig {
        large_body_bytes: 64 << 10,
        max_large_bodies: 1,
        ..FetchConfig::default()
    };
    let fetcher = Arc::new(Fetcher::new(config, AddressPolicy::new(false, &[&seed])).unwrap());
    let url = |path: &str| url::Url::parse(&site.url(path)).unwrap();
    let first = fetcher.fetch(&url("/a")).await.unwrap();
    assert!(first.large.is_some());
    let second = tokio::spawn({
        let (fetcher, b) = (Arc::clone(&fetcher), url("/b"));
        async move { fetcher.fetch(&b).await.unwrap() }
    });
    // Small bodies are not held back.
    let small = fetcher.fetch(&url("/small")).await.unwrap();
    assert!(small.large.is_none());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "the second large body waits");
    drop(first);
    let second = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("read once the first is dropped")
        .unwrap();
    assert_eq!(second.body.len(), 300 << 10);
}
