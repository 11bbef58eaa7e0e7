//! Running crawl jobs in-process against local sites, and reading their outputs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use nearcrawl_dedup::AnalyzerConfig;
use nearcrawl_demo_web::{RunningSite, Site, serve};
use nearcrawl_engine::{CrawlConfig, Job, Progress, crawl};
use nearcrawl_frontier::parse_seeds;
use nearcrawl_records::{Record, Report, Verdict};

/// A configuration for local tests: no politeness delay, short timeouts, fast back-off; the
/// judge on a thread of its own, as on a machine of many cores (`limits.judge_thread`, whose
/// `auto` keeps it on the coordinator's on this 2-core one; the CLI's tests run it there).
pub fn local_config() -> CrawlConfig {
    let mut config = CrawlConfig::default();
    config.politeness.per_host_delay_ms = 0;
    config.politeness.backoff_initial_ms = 10;
    config.politeness.backoff_max_ms = 200;
    config.fetch.connect_timeout_ms = 2_000;
    config.fetch.total_timeout_ms = 2_000;
    config.limits.concurrency = 4;
    config.limits.judge_thread = nearcrawl_engine::JudgeThread::On;
    config
}

/// Crawls `seeds` (seed-list text) into `out` with `config`.
pub async fn run(seeds: &str, out: &Path, config: CrawlConfig) -> Report {
    let seeds = parse_seeds(seeds, Path::new("seeds.txt")).expect("seed list");
    let job = Job {
        seeds,
        out_dir: out.to_path_buf(),
        config,
        analyzer: AnalyzerConfig::default(),
        shared_index: None,
        redis: None,
    };
    crawl(job, std::future::pending(), Arc::new(Progress::default()))
        .await
        .expect("crawl runs")
}

/// The records of a job, checking that `seq` is dense from 0.
pub fn records(out: &Path) -> Vec<Record> {
    let text = std::fs::read_to_string(out.join("records.jsonl")).expect("records.jsonl");
    let records: Vec<Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("record line"))
        .collect();
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r.seq, i as u64, "records are in decision order, seq dense");
    }
    records
}

/// The record of the URL ending in `suffix`.
pub fn record<'a>(records: &'a [Record], suffix: &str) -> &'a Record {
    records
        .iter()
        .find(|r| r.url.ends_with(suffix))
        .unwrap_or_else(|| {
            panic!(
                "no record for *{suffix}: {:#?}",
                records.iter().map(|r| &r.url).collect::<Vec<_>>()
            )
        })
}

/// How many records have this verdict.
pub fn count(records: &[Record], verdict: Verdict) -> usize {
    records.iter().filter(|r| r.verdict == verdict).count()
}

/// Crawls with an index shared across jobs.
pub async fn run_sharing(seeds: &str, out: &Path, config: CrawlConfig, index: &Path) -> Report {
    let seeds = parse_seeds(seeds, Path::new("seeds.txt")).expect("seed list");
    let job = Job {
        seeds,
        out_dir: out.to_path_buf(),
        config,
        analyzer: AnalyzerConfig::default(),
        shared_index: Some(index.to_path_buf()),
        redis: None,
    };
    crawl(job, std::future::pending(), Arc::new(Progress::default()))
        .await
        .expect("crawl runs")
}

/// Serves `site` on loopback address `ip` (any of 127.0.0.0/8 on Linux), on a free port: a
/// second host for tests that need two.
pub async fn serve_at(site: nearcrawl_demo_web::Site, ip: &str) -> nearcrawl_demo_web::RunningSite {
    let addr = std::net::SocketAddr::new(ip.parse().expect("an IP address"), 0);
    nearcrawl_demo_web::serve_on(site, addr)
        .await
        .expect("127.0.0.0/8 is loopback on Linux")
}

/// Distinct prose per page, long enough for the dedup stage to work with.
pub fn prose(seed: u64) -> String {
    let mut w = nearcrawl_demo_web::Writer::new(seed, 3000);
    (0..5).map(|_| w.paragraph()).collect::<Vec<_>>().join(" ")
}

/// An HTML page: `title` as title and heading, `body` in an article, `links` in a nav, each
/// with its target as anchor text.
pub fn page(title: &str, body: &str, links: &[&str]) -> nearcrawl_demo_web::Reply {
    let links: Vec<(&str, &str)> = links.iter().map(|l| (*l, *l)).collect();
    anchored_page(title, body, &links)
}

/// An HTML page: `title` as title and heading, `body` in an article, `links` (target, anchor
/// text) in a nav.
pub fn anchored_page(
    title: &str,
    body: &str,
    links: &[(impl AsRef<str>, impl AsRef<str>)],
) -> nearcrawl_demo_web::Reply {
    let links: String = links
        .iter()
        .map(|(href, text)| format!("<a href=\"{}\">{}</a> ", href.as_ref(), text.as_ref()))
        .collect();
    nearcrawl_demo_web::Reply::html(format!(
        "<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{body}</p></article><nav>{links}</nav></body></html>"
    ))
}

/// An HTML page: `title` as title and heading, `body` in an article, `links` (anchor text
/// "link") in a nav, `extra_head` inside the head.
pub fn html_page(
    title: &str,
    body: &str,
    extra_head: &str,
    links: &[String],
) -> nearcrawl_demo_web::Reply {
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">link</a> "))
        .collect();
    nearcrawl_demo_web::Reply::html(format!(
        "<html><head><title>{title}</title>{extra_head}</head><body><article><h1>{title}</h1><p>{body}</p></article><nav>{links}</nav></body></html>"
    ))
}

/// A site of ten articles listed on `/list`, and its mirror under another URL scheme: the
/// listing copied at `/page`, each article at `/m/story?id=N`, and for each N of `extras` the
/// mirror's copy adds a link to a page of its own (`/extra/N`, readers' notes). The mirror's
/// listing is a copy of the site's, its links matched by anchor text (the titles). Every
/// answer waits `delay`. With `via_redirects`, the mirror's listing links to `/go?id=N`,
/// which answers 301 to the story.
pub fn site_and_mirror(
    extras: &[usize],
    delay: std::time::Duration,
    via_redirects: bool,
) -> (nearcrawl_demo_web::Site, nearcrawl_demo_web::Site) {
    use nearcrawl_demo_web::Site;
    let titles: Vec<String> = (0..10).map(|n| format!("Article number {n}")).collect();
    let listing = prose(400);
    let links = |href: &dyn Fn(usize) -> String| -> Vec<(String, String)> {
        (0..10).map(|n| (href(n), titles[n].clone())).collect()
    };
    let none: &[(&str, &str)] = &[];
    let mut origin = Site::new().page(
        "/list",
        anchored_page("articles", &listing, &links(&|n| format!("/a/{n}"))).delayed(delay),
    );
    let mut mirror = Site::new().page(
        "/page",
        anchored_page(
            "articles",
            &listing,
            &links(&|n| match via_redirects {
                true => format!("/go?id={n}"),
                false => format!("/m/story?id={n}"),
            }),
        )
        .delayed(delay),
    );
    for (n, title) in titles.iter().enumerate() {
        let text = prose(410 + n as u64);
        origin = origin.page(
            &format!("/a/{n}"),
            anchored_page(title, &text, none).delayed(delay),
        );
        let notes: Vec<(String, String)> = match extras.contains(&n) {
            true => vec![(format!("/extra/{n}"), "Readers' notes".to_string())],
            false => Vec::new(),
        };
        mirror = mirror.page(
            &format!("/m/story?id={n}"),
            anchored_page(title, &text, &notes).delayed(delay),
        );
        if via_redirects {
            let story = format!("/m/story?id={n}");
            let go = nearcrawl_demo_web::Reply::redirect(301, &story).delayed(delay);
            mirror = mirror.page(&format!("/go?id={n}"), go);
        }
        mirror = mirror.page(
            &format!("/extra/{n}"),
            anchored_page("notes", &prose(430 + n as u64), none).delayed(delay),
        );
    }
    (origin, mirror)
}

/// What `site` was asked for (GET, HEAD or `Range`) that is none of its pages nor its
/// robots.txt: in a test web whose pages link only to pages it serves, a request for a URL
/// that no page, seed, sitemap or redirect named.
pub fn unnamed_requests(site: &nearcrawl_demo_web::RunningSite) -> Vec<String> {
    let pages: std::collections::HashSet<&str> = site.site.paths().collect();
    let gets = site.site.requests().into_iter().map(|(path, _)| path);
    let asked: Vec<String> = gets
        .chain(site.site.head_requests())
        .chain(site.site.range_requests())
        .collect();
    asked
        .into_iter()
        .filter(|path| path != "/robots.txt" && !pages.contains(path.as_str()))
        .collect()
}

/// Two releases crawled one request at a time, the older first, probes on.
pub struct InOrder {
    pub old: RunningSite,
    pub new: RunningSite,
    /// The seed list (both top pages), to crawl them again.
    pub seeds: String,
    /// The configuration they were crawled with.
    pub config: CrawlConfig,
    pub records: Vec<Record>,
}

/// Serves `old` and `new`, each on a host of its own, and crawls them in order.
pub async fn in_order(old: Site, new: Site) -> InOrder {
    let old = serve(old).await.unwrap();
    let new = serve(new).await.unwrap();
    let seeds = format!("{}\n{}\n", old.url("/"), new.url("/"));
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.tuning.links.probe_links = true;
    run(&seeds, out.path(), config.clone()).await;
    InOrder {
        records: records(out.path()),
        old,
        new,
        seeds,
        config,
    }
}

/// Serves `release(false)` (the old release) and `release(true)` (the new one), each on a host
/// of its own, and crawls both two requests at once: the sites and the records.
pub async fn side_by_side(
    release: impl Fn(bool) -> Site,
) -> (RunningSite, RunningSite, Vec<Record>) {
    let old = serve(release(false)).await.unwrap();
    let new = serve(release(true)).await.unwrap();
    let seeds = format!("{}\n{}\n", old.url("/"), new.url("/"));
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 2;
    run(&seeds, out.path(), config).await;
    (old, new, records(out.path()))
}

/// The `warcio` of scripts/test.sh's virtual environment, or `$NEARCRAWL_WARCIO`.
pub fn warcio() -> std::path::PathBuf {
    let path = std::env::var_os("NEARCRAWL_WARCIO")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/test-tools/venv/bin/warcio")
        });
    assert!(
        path.exists(),
        "warcio not found at {}: run ./scripts/test.sh (it installs warcio), or set NEARCRAWL_WARCIO",
        path.display()
    );
    path
}

/// Debian's chromium for rendering tests: `$NEARCRAWL_CHROMIUM` (scripts/test.sh sets it),
/// else `chromium` on the PATH.
pub fn chromium() -> std::path::PathBuf {
    std::env::var_os("NEARCRAWL_CHROMIUM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("chromium"))
}

/// The job's WARC files, in order.
pub fn warc_files(out: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(out.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// A worker's configuration in a shared job's tests: local, two connections per host, and
/// one request at a time per worker (the job's connections are shared out among them).
pub fn shared_config() -> CrawlConfig {
    let mut config = local_config();
    config.politeness.max_connections_per_host = 2;
    config.limits.concurrency = 1;
    config
}

/// Worker `worker` of the job `job` shared through the Redis at `redis`, crawling `seeds`
/// (seed-list text) into `out` with `config`.
pub async fn shared_worker(
    seeds: &str,
    out: &Path,
    (redis, job, worker): (&str, &str, &str),
    config: CrawlConfig,
) -> Report {
    let job = Job {
        seeds: parse_seeds(seeds, Path::new("seeds.txt")).expect("seed list"),
        out_dir: out.to_path_buf(),
        config,
        analyzer: AnalyzerConfig::default(),
        shared_index: None,
        redis: Some(nearcrawl_engine::RedisJob {
            target: nearcrawl_redis_job::RedisTarget::parse(redis).unwrap(),
            job: nearcrawl_redis_job::JobName::new(job).unwrap(),
            worker: worker.to_string(),
        }),
    };
    crawl(job, std::future::pending(), Arc::new(Progress::default()))
        .await
        .expect("the worker's crawl runs")
}
