//! Politeness per server address: a hundred names on one loopback server (named through
//! `[fetch.hosts]`, as curl's `--resolve` does) share its budget, in one process and across
//! three workers of a job shared through Redis. Checked from the server's own log: at no
//! moment more requests open than `max_connections_per_address`, and no two starting closer
//! than `per_address_delay_ms`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::time::{Duration, Instant};

use crawl_support::{local_config, page, prose, records, run, shared_worker};
use nearcrawl_demo_web::{Exchange, RunningSite, Site, serve};
use nearcrawl_engine::CrawlConfig;
use nearcrawl_records::Verdict;
use nearcrawl_redis_job::server::LocalRedis;

const NAMES: usize = 100;
/// The shared job's name.
const JOB: &str = "shared-host";
const CONNECTIONS: u32 = 2;
const DELAY_MS: u64 = 20;
/// Arrivals in a row whose span is judged: a request held up on its way by the test's own
/// scheduling on a busy machine (by up to `LATE_MS`) arrives late and the next on time,
/// which shortens one span of the window but not the window's whole span by more than that.
const WINDOW: usize = 10;
/// How late one request may reach the server's log.
const LATE_MS: u64 = 2 * DELAY_MS;

/// One crawl of the shared host at a time: the spacing the server sees is the crawler's plus
/// the machine's scheduling, which two crawls at once on two cores stretch past `LATE_MS`.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One server for every name: name `i`'s pages live under `/s{i}/` (the server does not look
/// at the `Host` header), its first page linking to its second; each answer takes 30 ms, so
/// requests overlap at the server if the crawler lets them.
async fn shared_host() -> RunningSite {
    let mut site = Site::new();
    for i in 0..NAMES {
        let first = page(&format!("site {i}"), &prose(2 * i as u64), &["next.html"]);
        let second = page(&format!("site {i}, more"), &prose(2 * i as u64 + 1), &[]);
        let slow = Duration::from_millis(30);
        site = site
            .page(&format!("/s{i}/"), first.delayed(slow))
            .page(&format!("/s{i}/next.html"), second.delayed(slow));
    }
    serve(site).await.unwrap()
}

/// The seeds, one per name, and a configuration resolving every name to the server.
fn job(server: &RunningSite) -> (String, CrawlConfig) {
    let mut config = local_config();
    config.politeness.max_connections_per_host = 4;
    config.politeness.max_connections_per_address = Some(CONNECTIONS);
    config.politeness.per_address_delay_ms = Some(DELAY_MS);
    config.limits.concurrency = 16;
    let port = server.addr.port();
    let mut seeds = String::new();
    for i in 0..NAMES {
        let name = format!("n{i}.shared.test");
        config.fetch.hosts.insert(name.clone(), server.addr.ip());
        seeds.push_str(&format!("http://{name}:{port}/s{i}/\n"));
    }
    (seeds, config)
}

/// The most of these spans open at once (one ending at the instant another begins was no
/// longer open).
fn most_at_once(spans: impl Iterator<Item = (Instant, Instant)>) -> usize {
    let mut events: Vec<(Instant, i32)> = spans.flat_map(|(a, b)| [(a, 1), (b, -1)]).collect();
    events.sort_by_key(|(at, delta)| (*at, *delta));
    let (mut open, mut most) = (0, 0);
    for (_, delta) in events {
        open += delta;
        most = most.max(open);
    }
    most as usize
}

/// The most requests open at once, and the shortest span of `WINDOW` arrivals in a row in
/// the log (a crawler that did not share the budget sends many in one spacing).
fn most_open_and_closest(log: &[Exchange]) -> (usize, Duration) {
    let most = most_at_once(log.iter().map(|e| (e.began, e.ended)));
    let closest = log
        .windows(WINDOW)
        .map(|w| w[WINDOW - 1].began - w[0].began)
        .min()
        .unwrap_or(Duration::MAX);
    (most, closest)
}

/// The server's log holds every name's robots.txt and two pages, and keeps the budget.
fn assert_polite(server: &RunningSite) {
    let log = server.site.exchanges();
    assert_eq!(log.len(), 3 * NAMES, "two pages and a robots.txt per name");
    let names: std::collections::BTreeSet<&str> = log.iter().map(|e| e.host.as_str()).collect();
    assert_eq!(names.len(), NAMES, "asked under each name");
    let (most, closest) = most_open_and_closest(&log);

    assert!(most <= CONNECTIONS as usize, "{most} requests open at once");
    assert!(most == CONNECTIONS as usize, "the budget is used: {most}");
    let spacing = (WINDOW as u64 - 1) * DELAY_MS;
    assert!(
        closest + Duration::from_millis(LATE_MS) >= Duration::from_millis(spacing),
        "{WINDOW} requests in a row within {closest:?}, not {spacing} ms"
    );
    // Names sharing a server do not keep their connections open between requests: the
    // connections open are the requests in flight. (The crawl's end closes any left.)
    let connections = server.site.connections();
    let most = most_at_once(connections.into_iter());
    assert!(
        most <= CONNECTIONS as usize,
        "{most} connections open at once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_names_on_one_server_share_its_budget() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let server = shared_host().await;
    let (seeds, config) = job(&server);
    let out = tempfile::tempdir().unwrap();
    let report = run(&seeds, out.path(), config).await;
    let records = records(out.path());
    let unique = records.iter().filter(|r| r.verdict == Verdict::Unique);
    assert_eq!(unique.count(), 2 * NAMES, "every page of every name");
    assert_polite(&server);
    // The records and the report name the address.
    let address = server.addr.ip().to_string();
    assert!(
        records
            .iter()
            .filter(|r| r.status.is_some())
            .all(|r| r.address.as_deref() == Some(address.as_str())),
        "each response's record names its server"
    );
    assert_eq!(report.addresses.len(), 1, "{:?}", report.addresses);
    assert_eq!(report.addresses[0].address, address);
    assert_eq!(report.addresses[0].names, NAMES);
    nearcrawl_report::write(out.path()).unwrap();
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    let row = format!(
        "<tr><td>{address}</td><td>{NAMES}</td><td>{}</td>",
        2 * NAMES
    );
    assert!(html.contains(&row), "the report's table of addresses");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_the_budget_of_the_server_of_a_hundred_names() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let redis = LocalRedis::start(false).unwrap();
    let server = shared_host().await;
    let (seeds, mut config) = job(&server);
    config.dedup.enabled = false;
    let dirs = [(); 3].map(|_| tempfile::tempdir().unwrap());
    let url = redis.url();
    let reports = tokio::join!(
        shared_worker(&seeds, dirs[0].path(), (&url, JOB, "w0"), config.clone()),
        shared_worker(&seeds, dirs[1].path(), (&url, JOB, "w1"), config.clone()),
        shared_worker(&seeds, dirs[2].path(), (&url, JOB, "w2"), config),
    );
    let fetched: usize = [&reports.0, &reports.1, &reports.2]
        .iter()
        .map(|r| r.pages_fetched as usize)
        .sum();
    assert_eq!(fetched, 2 * NAMES, "each page once, across the workers");
    assert!(
        [&reports.0, &reports.1, &reports.2]
            .iter()
            .filter(|r| r.pages_fetched > 0)
            .count()
            >= 2,
        "the work was shared"
    );
    assert_polite(&server);
}
