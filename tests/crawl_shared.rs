//! A crawl job shared by several workers through Redis (Debian's redis-server, started per
//! test on loopback): the workers split the pages of two local sites between them, every
//! page is fetched once, robots.txt once per site, and the pages are those one worker fetches.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use crawl_support::{html_page, local_config, prose, records};
use nearcrawl_dedup::AnalyzerConfig;
use nearcrawl_demo_web::{Reply, RunningSite, Site, serve};
use nearcrawl_engine::{CrawlConfig, Job, Progress, RedisJob, Report, crawl};
use nearcrawl_frontier::parse_seeds;
use nearcrawl_redis_job::server::LocalRedis;
use nearcrawl_redis_job::{JobName, RedisTarget};

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
        let body = prose(prefix * 1000 + i as u64);
        site = site.page(
            &format!("/p{i}"),
            html_page(&format!("page {i}"), &body, "", &links),
        );
    }
    site
}

fn shared_config() -> CrawlConfig {
    let mut config = local_config();
    config.dedup.enabled = false;
    config.politeness.max_connections_per_host = 2;
    config
}

async fn worker(seeds: &str, out: &Path, redis: &str, job: &str, worker: &str) -> Report {
    let job = Job {
        seeds: parse_seeds(seeds, Path::new("seeds.txt")).unwrap(),
        out_dir: out.to_path_buf(),
        config: shared_config(),
        analyzer: AnalyzerConfig::default(),
        shared_index: None,
        redis: Some(RedisJob {
            target: RedisTarget::parse(redis).unwrap(),
            job: JobName::new(job).unwrap(),
            worker: worker.to_string(),
        }),
    };
    crawl(job, std::future::pending(), Arc::new(Progress::default()))
        .await
        .expect("the worker's crawl runs")
}

fn fetched_urls(out: &Path) -> Vec<String> {
    records(out)
        .into_iter()
        .filter(|r| r.status.is_some())
        .map(|r| r.url)
        .collect()
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
    let (a, b) = two_sites().await;
    let seeds = format!("{}\n{}", a.url("/p0"), b.url("/p0"));
    let outs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let url = server.url();
    let (r0, r1, r2) = tokio::join!(
        worker(&seeds, outs[0].path(), &url, "three", "w0"),
        worker(&seeds, outs[1].path(), &url, "three", "w1"),
        worker(&seeds, outs[2].path(), &url, "three", "w2"),
    );
    let fetched: Vec<Vec<String>> = outs.iter().map(|o| fetched_urls(o.path())).collect();
    let all: Vec<&String> = fetched.iter().flatten().collect();
    let distinct: BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(all.len(), distinct.len(), "no page fetched by two workers");
    assert_eq!(distinct.len(), 2 * PAGES, "every page of both sites");
    for site in [&a, &b] {
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
    assert_eq!(
        reports.iter().map(|r| r.pages_fetched).sum::<u64>(),
        2 * PAGES as u64
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_job_with_dedup_on_is_refused_by_name_until_the_index_is_shared() {
    let server = LocalRedis::start(false).unwrap();
    let out = tempfile::tempdir().unwrap();
    let job = Job {
        seeds: parse_seeds("http://127.0.0.1:9/", Path::new("seeds.txt")).unwrap(),
        out_dir: out.path().to_path_buf(),
        config: local_config(),
        analyzer: AnalyzerConfig::default(),
        shared_index: None,
        redis: Some(RedisJob {
            target: RedisTarget::parse(&server.url()).unwrap(),
            job: JobName::new("dedup").unwrap(),
            worker: "w".into(),
        }),
    };
    let err = crawl(job, std::future::pending(), Arc::new(Progress::default()))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("near-duplicate index"), "{err}");
}
