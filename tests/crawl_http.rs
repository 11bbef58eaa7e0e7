//! The crawler against local sites, HTTP and politeness: robots.txt, `Crawl-delay`,
//! redirects, encodings, the body cap, timeouts and resets, 429 back-off, `X-Robots-Tag` and
//! canonical links, the global rate cap. Every site is served in-process on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::time::Duration;

use crawl_support::{local_config, page, prose, record, records, run};
use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_records::Verdict;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_rules_are_obeyed_and_recorded() {
    let site = serve(
        Site::new()
            .page(
                "/robots.txt",
                Reply::ok(
                    "text/plain",
                    "User-agent: *\nDisallow: /secret/\nAllow: /secret/open\n",
                ),
            )
            .page(
                "/",
                page("home", &prose(1), &["/secret/a", "/secret/open", "/public"]),
            )
            .page("/secret/a", page("a", &prose(2), &[]))
            .page("/secret/open", page("open", &prose(3), &[]))
            .page("/public", page("public", &prose(4), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    assert_eq!(
        record(&records, "/secret/a").verdict,
        Verdict::RobotsDisallowed
    );
    assert_eq!(
        site.site.hits("/secret/a"),
        0,
        "a disallowed URL is never requested"
    );
    assert_eq!(record(&records, "/secret/open").verdict, Verdict::Unique);
    assert_eq!(record(&records, "/public").verdict, Verdict::Unique);
    assert_eq!(
        site.site.hits("/robots.txt"),
        1,
        "robots.txt fetched once and cached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_404_allows_everything_and_5xx_blocks_until_the_host_is_parked() {
    let open = serve(
        Site::new()
            .page("/", page("home", &prose(5), &["/x"]))
            .page("/x", page("x", &prose(6), &[])),
    )
    .await
    .unwrap();
    let down = serve(
        Site::new()
            .page("/robots.txt", Reply::status(503))
            .page("/", page("home", &prose(7), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.politeness.max_consecutive_failures = 3;
    run(
        &format!("{}\n{}\n", open.url("/"), down.url("/")),
        out.path(),
        config,
    )
    .await;
    let records = records(out.path());
    assert_eq!(record(&records, &open.url("/x")).verdict, Verdict::Unique);
    let blocked = record(&records, &down.url("/"));
    assert_eq!(blocked.verdict, Verdict::RobotsDisallowed);
    assert!(
        blocked
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("robots.txt unavailable"),
        "{blocked:?}"
    );
    assert_eq!(
        down.site.hits("/"),
        0,
        "nothing fetched while robots.txt is unavailable"
    );
    assert_eq!(
        down.site.hits("/robots.txt"),
        3,
        "robots.txt retried until the host is parked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_delay_spaces_requests() {
    let site = serve(
        Site::new()
            .page(
                "/robots.txt",
                Reply::ok("text/plain", "User-agent: *\nCrawl-delay: 0.3\n"),
            )
            .page("/", page("home", &prose(8), &["/a", "/b"]))
            .page("/a", page("a", &prose(9), &[]))
            .page("/b", page("b", &prose(10), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let times: Vec<_> = site.site.requests().into_iter().map(|(_, t)| t).collect();
    assert_eq!(times.len(), 4);
    // The delay runs from the end of one request to the start of the next; robots.txt's own
    // request comes before the delay is known.
    for pair in times[1..].windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_millis(300),
            "{:?}",
            pair[1] - pair[0]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_followed_hop_by_hop_and_loops_stopped() {
    let site = serve(
        Site::new()
            .page(
                "/",
                page("home", &prose(11), &["/old", "/loop-a", "/chain/0"]),
            )
            .page("/old", Reply::redirect(301, "/new"))
            .page("/new", page("new", &prose(12), &[]))
            .page("/loop-a", Reply::redirect(302, "/loop-b"))
            .page("/loop-b", Reply::redirect(302, "/loop-a"))
            .generated(std::sync::Arc::new(|path: &str| {
                let n: u32 = path.strip_prefix("/chain/")?.parse().ok()?;
                Some(Reply::redirect(302, &format!("/chain/{}", n + 1)))
            })),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.fetch.max_redirects = 3;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let old = record(&records, "/old");
    assert_eq!(old.verdict, Verdict::Redirect);
    assert_eq!(old.final_url.as_deref(), Some(site.url("/new").as_str()));
    let new = record(&records, "/new");
    assert_eq!(new.verdict, Verdict::Unique);
    assert_eq!(
        new.parent,
        Some(old.seq),
        "the hop is recorded as the target's parent"
    );
    assert_eq!(record(&records, "/loop-b").verdict, Verdict::Redirect);
    assert_eq!(
        site.site.hits("/loop-a"),
        1,
        "a loop ends at the first URL seen again"
    );
    let last = record(&records, "/chain/3");
    assert_eq!(last.verdict, Verdict::Error);
    assert!(
        last.error
            .as_deref()
            .unwrap_or_default()
            .contains("more than 3 redirects")
    );
    assert_eq!(site.site.hits("/chain/4"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gbk_and_gzip_pages_fingerprint_like_their_utf8_twins() {
    let text = "长江是中国最长的河流，发源于青藏高原，流经十一个省级行政区，最后注入东海。长江流域的面积约占中国国土面积的五分之一，养育了数亿人口。";
    let html = format!(
        "<html><head><title>长江</title></head><body><article><p>{text}</p><p>{text}</p></article></body></html>"
    );
    let (gbk, _, _) = encoding_rs::GBK.encode(&html);
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(13), &["/utf8", "/gbk", "/gz"]))
            .page("/utf8", Reply::html(html.clone()))
            .page(
                "/gbk",
                Reply::ok("text/html; charset=GBK", gbk.into_owned()),
            )
            .page("/gz", Reply::html(html.clone()).gzipped()),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let utf8 = record(&records, "/utf8");
    assert!(record(&records, "/gbk").little_text.is_none());
    for twin in ["/gbk", "/gz"] {
        let r = record(&records, twin);
        // The third copy's blocks are on 3 of the host's 4 pages: its template, so that page
        // has little text of its own and is fingerprinted with its title and links; it is
        // still the exact copy of its main text.
        if r.little_text.is_none() {
            assert_eq!(r.simhash, utf8.simhash, "{twin}");
        }
        assert_eq!(r.verdict, Verdict::Exact, "{twin}");
        assert_eq!(r.duplicate_of.as_deref(), Some(utf8.url.as_str()));
    }
    assert!(
        record(&records, "/gz").bytes < record(&records, "/utf8").bytes,
        "wire bytes are the compressed size"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_cap_truncates_and_records_it() {
    let big = format!("<html><body><p>{}</p></body></html>", prose(14).repeat(40));
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(15), &["/big"]))
            .page("/big", Reply::html(big)),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.fetch.max_body_bytes = 4096;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let big = record(&records, "/big");
    assert!(big.truncated);
    assert!(big.bytes < 4096 + 1024, "{}", big.bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_and_resets_are_retried_then_recorded() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(16), &["/slow", "/reset", "/fine"]))
            .page(
                "/slow",
                page("slow", &prose(17), &[]).delayed(Duration::from_secs(5)),
            )
            .page("/reset", Reply::reset())
            .page("/fine", page("fine", &prose(18), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.fetch.total_timeout_ms = 300;
    config.fetch.max_retries = 1;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let slow = record(&records, "/slow");
    assert_eq!(slow.verdict, Verdict::Error);
    assert!(
        slow.error
            .as_deref()
            .unwrap_or_default()
            .starts_with("Timeout"),
        "{slow:?}"
    );
    let reset = record(&records, "/reset");
    assert_eq!(reset.verdict, Verdict::Error);
    assert_eq!(reset.retries, Some(1), "the retry is on the record");
    assert_eq!(site.site.hits("/reset"), 2, "one retry");
    assert_eq!(
        record(&records, "/fine").verdict,
        Verdict::Unique,
        "other pages carry on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttled_host_is_retried_after_retry_after() {
    let site = serve(Site::new().page("/", page("home", &prose(19), &["/busy"])))
        .await
        .unwrap();
    // First answer 429 with Retry-After: 1, then the page.
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&calls);
    let busy_page = page("busy", &prose(20), &[]);
    let throttling = serve(
        Site::new()
            .page("/", page("home", &prose(21), &["/busy"]))
            .generated(std::sync::Arc::new(move |path: &str| {
                (path == "/busy").then(|| {
                    if counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        Reply::status(429).header("retry-after", "1")
                    } else {
                        busy_page.clone()
                    }
                })
            })),
    )
    .await
    .unwrap();
    drop(site);
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.politeness.backoff_max_ms = 5_000;
    run(&throttling.url("/"), out.path(), config).await;
    let records = records(out.path());
    let busy = record(&records, "/busy");
    assert_eq!(busy.verdict, Verdict::Unique);
    assert_eq!(busy.status, Some(200));
    let times: Vec<_> = throttling
        .site
        .requests()
        .into_iter()
        .filter(|(p, _)| p == "/busy")
        .map(|(_, t)| t)
        .collect();
    assert_eq!(times.len(), 2);
    assert!(
        times[1] - times[0] >= Duration::from_millis(950),
        "Retry-After honoured: {:?}",
        times[1] - times[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_robots_tag_and_canonical_are_honoured() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(90), &["/tagged", "/variant?sort=asc"]))
            .page("/tagged", page("tagged", &prose(91), &["/behind-tag"]).header("x-robots-tag", "noindex, nofollow"))
            .page("/behind-tag", page("b", &prose(92), &[]))
            .page(
                "/variant?sort=asc",
                Reply::html(format!(
                    "<html><head><link rel=canonical href=/canonical></head><body><p>{}</p></body></html>",
                    prose(93)
                )),
            )
            .page("/canonical", page("canonical", &prose(94), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    let tagged = record(&records, "/tagged");
    assert_eq!(tagged.robots, ["noindex", "nofollow"]);
    assert_eq!(site.site.hits("/behind-tag"), 0);
    let variant = record(&records, "/variant?sort=asc");
    assert_eq!(
        variant.canonical.as_deref(),
        Some(site.url("/canonical").as_str())
    );
    assert_eq!(
        record(&records, "/canonical").parent,
        Some(variant.seq),
        "the canonical target is queued"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_rate_cap_spaces_all_requests() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(95), &["/1", "/2", "/3", "/4"]))
            .page("/1", page("1", &prose(96), &[]))
            .page("/2", page("2", &prose(97), &[]))
            .page("/3", page("3", &prose(98), &[]))
            .page("/4", page("4", &prose(99), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.politeness.global_requests_per_second = 8;
    config.politeness.max_connections_per_host = 4;
    run(&site.url("/"), out.path(), config).await;
    let times: Vec<_> = site.site.requests().into_iter().map(|(_, t)| t).collect();
    assert_eq!(times.len(), 6, "robots.txt and five pages");
    let span = times[5] - times[0];
    assert!(
        span >= Duration::from_millis(5 * 125 - 20),
        "6 requests at 8/s take 625 ms at least: {span:?}"
    );
}
