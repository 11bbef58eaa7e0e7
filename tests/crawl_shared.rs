//! A crawl job shared by several workers through Redis (Debian's redis-server, started per
//! test on loopback): the workers split the pages of two local sites between them, every
//! page is fetched once, robots.txt once per site, the pages are those one worker fetches,
//! and with dedup on each pair of near-duplicates has exactly one original across workers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::collections::BTreeSet;
use std::path::Path;

use crawl_support::{html_page, prose, records, serve_at, shared_config, shared_worker};
use nearcrawl_demo_web::{Reply, RunningSite, Site, serve};
use nearcrawl_engine::CrawlConfig;
use nearcrawl_records::{Report, Verdict};
use nearcrawl_redis_job::server::{LocalCluster, LocalRedis};

const PAGES: usize = 40;

/// Page `i` of a site links to its children `2i+1`, `2i+2`, and to the same page of `other`.
fn site(prefix: u64, other: Option<&str>) -> Site {
    let mut site = Site::new().page(
        "/robots.txt",
        Reply::ok("text/plain", "User-agent: *\nDisallow: /private\n"),
    );
    for i in 0..PAGES {
        let mut links: Vec<String> = [2 * i + 1, 2 * i + 2]
            .into_iter()
            .filter(|&c| c < PAGES)
            .map(|c| format!("/p{c}"))
            .collect();
        if let Some(other) = other {
            links.push(format!("{other}/p{i}"));
        }
        links.push("/private".to_string());
        // Out of the job's scope (not a seed's host): recorded once for the job.
        links.push("http://outside.test/page".to_string());
        let body = prose(prefix * 1000 + i as u64);
        site = site.page(
            &format!("/p{i}"),
            html_page(&format!("page {i}"), &body, "", &links),
        );
    }
    site
}

/// Worker `name` of job `job` on `redis`, with dedup off (`--no-dedup`).
async fn worker(seeds: &str, out: &Path, redis: &str, job: &str, name: &str) -> Report {
    let mut config = shared_config();
    config.dedup.enabled = false;
    shared_worker(seeds, out, (redis, job, name), config).await
}

async fn dedup_worker(seeds: &str, out: &Path, redis: &str, job: &str, name: &str) -> Report {
    shared_worker(seeds, out, (redis, job, name), shared_config()).await
}

/// Two workers `w0` and `w1` of job `job` on `redis`, run at once: their output directories.
async fn two_workers(
    seeds: &str,
    redis: &str,
    job: &str,
    config: CrawlConfig,
) -> [tempfile::TempDir; 2] {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    tokio::join!(
        shared_worker(seeds, dirs[0].path(), (redis, job, "w0"), config.clone()),
        shared_worker(seeds, dirs[1].path(), (redis, job, "w1"), config),
    );
    dirs
}

fn fetched_urls(out: &Path) -> Vec<String> {
    records(out)
        .into_iter()
        .filter(|r| r.status.is_some())
        .map(|r| r.url)
        .collect()
}

/// Three sites, A linking to B and B to C: as many hosts as the three workers of a test,
/// for a worker keeps the host it picked hidden from the others while it works there.
async fn three_sites() -> [RunningSite; 3] {
    let c = serve(site(3, None)).await.unwrap();
    let b = serve(site(2, Some(c.url("").trim_end_matches('/'))))
        .await
        .unwrap();
    let a = serve(site(1, Some(b.url("").trim_end_matches('/'))))
        .await
        .unwrap();
    [a, b, c]
}

async fn two_sites() -> (RunningSite, RunningSite) {
    let b = serve(site(2, None)).await.unwrap();
    let a = serve(site(1, Some(b.url("").trim_end_matches('/'))))
        .await
        .unwrap();
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_fetch_each_page_once_and_the_pages_one_worker_fetches() {
    let server = LocalRedis::start(false).unwrap();
    let sites = three_sites().await;
    let seeds: Vec<String> = sites.iter().map(|s| s.url("/p0")).collect();
    let seeds = seeds.join("\n");
    let outs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let url = server.url();
    let (r0, r1, r2) = tokio::join!(
        worker(&seeds, outs[0].path(), &url, "three", "w0"),
        worker(&seeds, outs[1].path(), &url, "three", "w1"),
        worker(&seeds, outs[2].path(), &url, "three", "w2"),
    );
    let fetched: Vec<Vec<String>> = outs.iter().map(|o| fetched_urls(o.path())).collect();
    let outside = outs
        .iter()
        .flat_map(|o| records(o.path()))
        .filter(|r| r.url == "http://outside.test/page")
        .count();
    assert!(
        fetched.iter().all(|f| !f.is_empty()),
        "every worker had a share: {:?}",
        fetched.iter().map(Vec::len).collect::<Vec<_>>()
    );
    assert_eq!(
        outside, 1,
        "a link out of scope is recorded once across the workers"
    );
    let all: Vec<&String> = fetched.iter().flatten().collect();
    let distinct: BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(all.len(), distinct.len(), "no page fetched by two workers");
    assert_eq!(distinct.len(), 3 * PAGES, "every page of the three sites");
    for site in &sites {
        for i in 0..PAGES {
            assert_eq!(site.site.hits(&format!("/p{i}")), 1, "p{i} fetched once");
        }
        assert_eq!(
            site.site.hits("/private"),
            0,
            "robots.txt obeyed by every worker"
        );
        assert_eq!(
            site.site.hits("/robots.txt"),
            1,
            "robots.txt read once for the job"
        );
    }
    let reports = [r0, r1, r2];
    for (n, report) in reports.iter().enumerate() {
        let shared = report
            .shared_job
            .as_ref()
            .expect("a shared job's report says so");
        assert_eq!(
            (shared.job.as_str(), shared.worker.clone()),
            ("three", format!("w{n}"))
        );
        assert_eq!((shared.stale_leases, shared.redis_reconnects), (0, 0));
    }
    assert_eq!(
        reports.iter().map(|r| r.pages_fetched).sum::<u64>(),
        3 * PAGES as u64
    );

    // One worker alone, on a job of its own, fetches the same pages.
    let out = tempfile::tempdir().unwrap();
    worker(&seeds, out.path(), &url, "alone", "solo").await;
    let alone: BTreeSet<String> = fetched_urls(out.path()).into_iter().collect();
    assert_eq!(
        alone,
        distinct.into_iter().cloned().collect::<BTreeSet<_>>()
    );
}

/// Site A: page `i` links to its children and to page `i` of B, a mirror that copies A's
/// text (a near-duplicate per pair) and links nowhere: every page is fetched in any order.
fn mirrored_sites(a_url: Option<&str>) -> Site {
    let mut site = Site::new();
    for i in 0..PAGES {
        let body = prose(7000 + i as u64);
        let links: Vec<String> = match a_url {
            Some(mirror) => [2 * i + 1, 2 * i + 2]
                .into_iter()
                .filter(|&c| c < PAGES)
                .map(|c| format!("/p{c}"))
                .chain([format!("{mirror}/p{i}")])
                .collect(),
            None => Vec::new(),
        };
        site = site.page(
            &format!("/p{i}"),
            html_page(&format!("page {i}"), &body, "", &links),
        );
    }
    site
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_one_index_one_original_per_pair_of_near_duplicates() {
    let server = LocalRedis::start(false).unwrap();
    one_original_per_pair(&server.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_one_index_on_a_redis_cluster() {
    let cluster = LocalCluster::start(3).unwrap();
    one_original_per_pair(&cluster.url()).await;
}

async fn one_original_per_pair(url: &str) {
    let mirror = serve(mirrored_sites(None)).await.unwrap();
    let mirror_root = mirror.url("");
    let a = serve(mirrored_sites(Some(mirror_root.trim_end_matches('/'))))
        .await
        .unwrap();
    let seeds = format!("{}\n{}", a.url("/p0"), mirror.url("/p0"));
    let outs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    tokio::join!(
        dedup_worker(&seeds, outs[0].path(), url, "mirror", "w0"),
        dedup_worker(&seeds, outs[1].path(), url, "mirror", "w1"),
        dedup_worker(&seeds, outs[2].path(), url, "mirror", "w2"),
    );
    let all: Vec<_> = outs.iter().flat_map(|o| records(o.path())).collect();
    for site in [&a, &mirror] {
        for i in 0..PAGES {
            assert_eq!(site.site.hits(&format!("/p{i}")), 1, "p{i} fetched once");
        }
    }
    for i in 0..PAGES {
        let pair: Vec<_> = all
            .iter()
            .filter(|r| r.url == a.url(&format!("/p{i}")) || r.url == mirror.url(&format!("/p{i}")))
            .collect();
        assert_eq!(pair.len(), 2, "p{i}: one record per copy");
        let unique: Vec<_> = pair
            .iter()
            .filter(|r| r.verdict == Verdict::Unique)
            .collect();
        assert_eq!(
            unique.len(),
            1,
            "p{i}: exactly one original across the workers"
        );
        let copy = pair.iter().find(|r| r.verdict != Verdict::Unique).unwrap();
        assert_eq!(
            copy.duplicate_of.as_deref(),
            Some(unique[0].url.as_str()),
            "p{i}"
        );
        assert_eq!(
            copy.cluster, unique[0].cluster,
            "p{i}: one cluster, numbered by the job"
        );
    }

    // One worker alone keeps as many originals.
    let out = tempfile::tempdir().unwrap();
    dedup_worker(&seeds, out.path(), url, "mirror-alone", "solo").await;
    let alone = records(out.path());
    let uniques = |records: &[nearcrawl_records::Record]| {
        records
            .iter()
            .filter(|r| r.verdict == Verdict::Unique)
            .count()
    };
    assert_eq!(uniques(&alone), uniques(&all));
    assert_eq!(uniques(&all), PAGES);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_redis_restart_from_its_append_only_file_mid_crawl_loses_nothing() {
    let mut server = LocalRedis::start(true).unwrap();
    let url = server.url();
    // Slow pages: the crawl is under way when the server goes.
    let mut slow = Site::new();
    for i in 0..PAGES {
        let links: Vec<String> = [2 * i + 1, 2 * i + 2]
            .into_iter()
            .filter(|&c| c < PAGES)
            .map(|c| format!("/p{c}"))
            .collect();
        let page = html_page(&format!("page {i}"), &prose(9000 + i as u64), "", &links);
        slow = slow.page(
            &format!("/p{i}"),
            page.delayed(std::time::Duration::from_millis(50)),
        );
    }
    let site = serve(slow).await.unwrap();
    let seeds = site.url("/p0");
    let outs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let crawls = async {
        tokio::join!(
            dedup_worker(&seeds, outs[0].path(), &url, "restart", "w0"),
            dedup_worker(&seeds, outs[1].path(), &url, "restart", "w1"),
        )
    };
    let outage = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        tokio::task::block_in_place(|| {
            server.kill();
            std::thread::sleep(std::time::Duration::from_millis(1000));
            server.restart().unwrap();
        });
    };
    let ((r0, r1), ()) = tokio::join!(crawls, outage);
    for i in 0..PAGES {
        assert_eq!(site.site.hits(&format!("/p{i}")), 1, "p{i} fetched once");
    }
    let retries: u64 = [&r0, &r1]
        .iter()
        .map(|r| r.shared_job.as_ref().unwrap().redis_retries)
        .sum();
    assert!(retries > 0, "the outage was met and counted");
    let all: Vec<_> = outs.iter().flat_map(|o| records(o.path())).collect();
    assert_eq!(all.len(), PAGES, "one decision per page");
}

/// `limits.max_pages_per_host` holds for the job, not per worker: two workers together fetch
/// that many pages of each site, and record the rest of its URLs as out of scope, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_budget_of_a_host_holds_across_workers() {
    const BUDGET: u64 = 7;
    let server = LocalRedis::start(false).unwrap();
    let (a, b) = two_sites().await;
    let seeds = format!("{}\n{}\n", a.url("/p0"), b.url("/p0"));
    let mut config = shared_config();
    config.dedup.enabled = false;
    config.limits.max_pages_per_host = Some(BUDGET);
    let dirs = two_workers(&seeds, &server.url(), "budget", config).await;
    let all: Vec<_> = dirs.iter().flat_map(|d| records(d.path())).collect();
    for site in [&a, &b] {
        let prefix = site.url("");
        let fetched = all
            .iter()
            .filter(|r| r.url.starts_with(&prefix) && r.status.is_some())
            .count();
        assert_eq!(fetched as u64, BUDGET, "{prefix}");
        let over: BTreeSet<&str> = all
            .iter()
            .filter(|r| r.url.starts_with(&prefix))
            .filter(|r| r.error.as_deref() == Some("max_pages_per_host (7) reached"))
            .map(|r| r.url.as_str())
            .collect();
        assert!(!over.is_empty(), "{prefix}: the rest is recorded");
        let refused = all
            .iter()
            .filter(|r| over.contains(r.url.as_str()))
            .inspect(|r| assert_eq!(r.verdict, Verdict::OutOfScope, "{r:?}"))
            .count();
        assert_eq!(refused, over.len(), "{prefix}: each recorded once");
    }
}

/// A focused job hands out the best link of any host first, across hosts, as a focused
/// single-process crawl does (tests/crawl_focused.rs): one worker of the job fetches every
/// river page before any market page; two workers fetch every page once between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_focused_job_fetches_the_best_link_of_any_host_first() {
    let river = |n: u64| {
        format!(
            "The river flows through the valley; river floods shape the river valley. {}",
            prose(40 + n)
        )
    };
    let four = |prefix: &str, text: &str| -> Vec<String> {
        (1..=4)
            .map(|i| format!("<a href=\"/{prefix}{i}\">{text} {i}</a>"))
            .collect()
    };
    let page = |body: &str, links: &[String]| {
        Reply::html(format!(
            "<html><body><article><p>{body}</p></article><nav>{}</nav></body></html>",
            links.join(" ")
        ))
    };
    let mut markets = Site::new().page("/", page(&prose(70), &four("a", "shares")));
    let mut waters = Site::new().page("/", page(&river(6), &four("r", "river valley")));
    for i in 1..=4u64 {
        markets = markets.page(&format!("/a{i}"), page(&prose(71 + i), &[]));
        waters = waters.page(&format!("/r{i}"), page(&river(7 + i), &[]));
    }
    let markets = serve_at(markets, "127.0.0.1").await;
    let waters = serve_at(waters, "127.0.0.2").await;
    let seeds = format!("{}\n{}\n", markets.url("/"), waters.url("/"));
    let mut config = shared_config();
    config.dedup.enabled = false;
    config.focus.terms = [("river".to_string(), 2.0), ("valley".to_string(), 1.0)]
        .into_iter()
        .collect();
    config.focus.threshold = 0.05;
    let server = LocalRedis::start(false).unwrap();
    let url = server.url();

    let out = tempfile::tempdir().unwrap();
    shared_worker(&seeds, out.path(), (&url, "focused", "w0"), config.clone()).await;
    let mut requests: Vec<(std::time::Instant, String)> = [&markets, &waters]
        .iter()
        .flat_map(|site| site.site.requests())
        .filter(|(path, _)| path.len() == 3)
        .map(|(path, at)| (at, path))
        .collect();
    requests.sort();
    let order: Vec<&str> = requests.iter().map(|(_, p)| p.as_str()).collect();
    let first_market = order.iter().position(|p| p.starts_with("/a")).unwrap();
    let last_river = order.iter().rposition(|p| p.starts_with("/r")).unwrap();
    assert!(
        last_river < first_market,
        "rivers first, across hosts: {order:?}"
    );

    let dirs = two_workers(&seeds, &url, "focused2", config).await;
    let mut fetched: Vec<String> = dirs.iter().flat_map(|d| fetched_urls(d.path())).collect();
    let all = fetched.len();
    fetched.sort();
    fetched.dedup();
    assert_eq!(all, fetched.len(), "each page once: {fetched:?}");
    let relevant = dirs
        .iter()
        .flat_map(|d| records(d.path()))
        .filter(|r| r.url.contains("/r") && r.relevance.is_some_and(|v| v > 0.0))
        .count();
    assert_eq!(relevant, 4, "every river page fetched and judged on topic");
}
