//! The crawl's scheduling without HTTP or real time: a scripted fetcher answers from a table,
//! the store is in memory, and tokio's clock is paused, so politeness delays, back-off,
//! `Retry-After` and `Crawl-delay` are checked to the millisecond and run instantly.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use nearcrawl_dedup::AnalyzerConfig;
use nearcrawl_engine::{CrawlConfig, Job, Parts, Progress, crawl_with};
use nearcrawl_fetch::{
    BoxFuture, FailureKind, Fetch, FetchFailure, Fetched, RobotsFetch, RobotsRules, RobotsSource,
};
use nearcrawl_frontier::parse_seeds;
use nearcrawl_records::{Record, Verdict};
use nearcrawl_store::MemoryStore;
use tokio::time::Instant;
use url::Url;

/// One scripted answer.
#[derive(Clone)]
enum Answer {
    /// A response: status, extra headers, body.
    Response(u16, Vec<(&'static str, String)>, String),
    /// No response: a connection failure.
    Refused,
}

/// Answers from a table (each URL's answers in turn, the last repeated), logging when each
/// request arrived by tokio's clock.
#[derive(Default)]
struct Scripted {
    answers: Mutex<HashMap<String, Vec<Answer>>>,
    robots: HashMap<String, String>,
    log: Mutex<Vec<(String, Instant)>>,
    /// How long each answer takes to arrive.
    latency: Duration,
}

impl Scripted {
    fn answer(mut self, url: &str, answers: Vec<Answer>) -> Scripted {
        self.answers
            .get_mut()
            .unwrap()
            .insert(url.to_string(), answers);
        self
    }

    fn robots(mut self, origin: &str, body: &str) -> Scripted {
        self.robots.insert(origin.to_string(), body.to_string());
        self
    }

    fn requests(&self, prefix: &str) -> Vec<Instant> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|(u, _)| u.starts_with(prefix))
            .map(|(_, t)| *t)
            .collect()
    }

    fn next_answer(&self, url: &Url) -> Answer {
        let mut answers = self.answers.lock().unwrap();
        match answers.get_mut(url.as_str()) {
            Some(list) if list.len() > 1 => list.remove(0),
            Some(list) => list[0].clone(),
            None => Answer::Response(404, Vec::new(), String::new()),
        }
    }
}

fn response(url: &Url, status: u16, headers: Vec<(&'static str, String)>, body: String) -> Fetched {
    let mut headers: Vec<(String, Vec<u8>)> = headers
        .into_iter()
        .map(|(n, v)| (n.to_string(), v.into_bytes()))
        .collect();
    headers.push(("content-type".into(), b"text/html".to_vec()));
    Fetched {
        url: url.clone(),
        status,
        version: "HTTP/1.1".into(),
        headers,
        wire_body: body.clone().into_bytes(),
        wire_bytes: body.len() as u64 + 100,
        body: body.into_bytes(),
        truncated: false,
        request_head: Vec::new(),
        started: SystemTime::now(),
        elapsed: Duration::ZERO,
        remote_addr: None,
        large: None,
    }
}

impl Fetch for Scripted {
    fn fetch<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        Box::pin(async move {
            self.log
                .lock()
                .unwrap()
                .push((url.to_string(), Instant::now()));
            tokio::time::sleep(self.latency).await;
            match self.next_answer(url) {
                Answer::Response(status, headers, body) => Ok(response(url, status, headers, body)),
                Answer::Refused => Err(FetchFailure {
                    url: url.clone(),
                    kind: FailureKind::Connect,
                    message: "connection refused".into(),
                    wire_bytes: 0,
                }),
            }
        })
    }

    /// The GET's answer without its body, declaring the body's length.
    fn head<'a>(&'a self, url: &'a Url) -> BoxFuture<'a, Result<Fetched, FetchFailure>> {
        Box::pin(async move {
            let mut page = self.fetch(url).await?;
            let length = page.wire_body.len().to_string().into_bytes();
            page.headers.push(("content-length".into(), length));
            page.body.clear();
            page.wire_body.clear();
            Ok(page)
        })
    }

    fn fetch_robots<'a>(&'a self, site: &'a Url) -> BoxFuture<'a, RobotsFetch> {
        Box::pin(async move {
            let url = site.join("/robots.txt").unwrap();
            self.log
                .lock()
                .unwrap()
                .push((url.to_string(), Instant::now()));
            tokio::time::sleep(self.latency).await;
            let rules = match self.robots.get(site.as_str()) {
                Some(body) => RobotsRules::from_response("nearcrawl", 200, body.as_bytes()),
                None => RobotsRules::allow_all(RobotsSource::Missing(404)),
            };
            RobotsFetch {
                rules,
                responses: Vec::new(),
            }
        })
    }
}

/// Distinct prose for page `n`, with links.
fn page(n: u64, links: &[&str]) -> Answer {
    const WORDS: [&str; 16] = [
        "river", "valley", "stone", "glacier", "forest", "harbour", "engine", "signal", "market",
        "window", "ladder", "garden", "copper", "lantern", "meadow", "violin",
    ];
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let text: String = (0..300)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let word = WORDS[(x % 16) as usize];
            if i % 12 == 11 {
                format!("{word}.")
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a> "))
        .collect();
    Answer::Response(
        200,
        Vec::new(),
        format!("<html><body><article><p>{text}</p></article><nav>{links}</nav></body></html>"),
    )
}

fn config() -> CrawlConfig {
    let mut config = CrawlConfig::default();
    config.output.warc = false;
    config.politeness.per_host_delay_ms = 1_000;
    config.politeness.backoff_initial_ms = 500;
    config.politeness.backoff_max_ms = 4_000;
    config
}

async fn run(seeds: &str, out: &Path, config: CrawlConfig, fetcher: Arc<Scripted>) -> Vec<Record> {
    let job = Job {
        seeds: parse_seeds(seeds, Path::new("seeds.txt")).unwrap(),
        out_dir: out.to_path_buf(),
        config,
        analyzer: AnalyzerConfig::default(),
        shared_index: None,
        redis: None,
    };
    let parts = Parts {
        store: Arc::new(MemoryStore::default()),
        fetcher,
    };
    crawl_with(
        job,
        parts,
        std::future::pending(),
        Arc::new(Progress::default()),
    )
    .await
    .unwrap();
    let text = std::fs::read_to_string(out.join("records.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Gaps between consecutive requests, in milliseconds.
fn gaps(times: &[Instant]) -> Vec<u128> {
    times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn one_host_is_fetched_one_request_at_a_time_a_delay_apart() {
    let fetcher = Arc::new(
        Scripted {
            latency: Duration::from_millis(200),
            ..Scripted::default()
        }
        .answer("http://a.example/", vec![page(1, &["/1", "/2", "/3"])])
        .answer("http://a.example/1", vec![page(2, &[])])
        .answer("http://a.example/2", vec![page(3, &[])])
        .answer("http://a.example/3", vec![page(4, &[])]),
    );
    let out = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let records = run(
        "http://a.example/\n",
        out.path(),
        config(),
        Arc::clone(&fetcher),
    )
    .await;
    assert_eq!(
        records
            .iter()
            .filter(|r| r.verdict == Verdict::Unique)
            .count(),
        4
    );
    let times = fetcher.requests("http://a.example/");
    assert_eq!(times.len(), 5, "robots.txt and four pages");
    // One connection per host by default, and the delay (1 s) runs from when the previous
    // answer arrived (200 ms after its request).
    assert_eq!(gaps(&times), [1_200, 1_200, 1_200, 1_200]);
    assert!(started.elapsed() >= Duration::from_millis(4_200));
}

#[tokio::test(start_paused = true)]
async fn hosts_are_fetched_side_by_side_each_at_its_own_pace() {
    let fetcher = Arc::new(
        Scripted::default()
            .answer("http://a.example/", vec![page(1, &["/x"])])
            .answer("http://a.example/x", vec![page(2, &[])])
            .answer("http://b.example/", vec![page(3, &["/y"])])
            .answer("http://b.example/y", vec![page(4, &[])])
            .robots("http://b.example/", "User-agent: *\nCrawl-delay: 3\n"),
    );
    let out = tempfile::tempdir().unwrap();
    let mut config = config();
    config.scope.hosts = nearcrawl_frontier::HostScope::Any;
    run(
        "http://a.example/\nhttp://b.example/\n",
        out.path(),
        config,
        Arc::clone(&fetcher),
    )
    .await;
    let a = fetcher.requests("http://a.example/");
    let b = fetcher.requests("http://b.example/");
    assert_eq!(
        gaps(&a),
        [1_000, 1_000],
        "a: robots.txt, /, /x a second apart"
    );
    assert_eq!(
        gaps(&b),
        [3_000, 3_000],
        "b: Crawl-delay 3 from its robots.txt on"
    );
    assert_eq!(a[0], b[0], "the two hosts start together");
}

#[tokio::test(start_paused = true)]
async fn a_throttled_url_waits_for_retry_after_and_failures_back_off() {
    let busy = Answer::Response(429, vec![("retry-after", "7".into())], String::new());
    let fetcher = Arc::new(
        Scripted::default()
            .answer("http://a.example/", vec![page(1, &["/busy", "/down"])])
            .answer("http://a.example/busy", vec![busy, page(2, &[])])
            .answer(
                "http://a.example/down",
                vec![Answer::Refused, Answer::Refused, page(3, &[])],
            ),
    );
    let out = tempfile::tempdir().unwrap();
    let mut config = config();
    config.politeness.backoff_max_ms = 60_000; // Retry-After is capped to it
    config.politeness.per_host_delay_ms = 100;
    config.politeness.backoff_initial_ms = 400;
    let records = run(
        "http://a.example/\n",
        out.path(),
        config,
        Arc::clone(&fetcher),
    )
    .await;
    let busy = fetcher.requests("http://a.example/busy");
    assert_eq!(busy.len(), 2);
    assert!(
        busy[1] - busy[0] >= Duration::from_secs(7),
        "Retry-After: 7 honoured: {:?}",
        busy[1] - busy[0]
    );
    let down = fetcher.requests("http://a.example/down");
    assert_eq!(down.len(), 3, "two connection failures retried");
    let record = |suffix: &str| records.iter().find(|r| r.url.ends_with(suffix)).unwrap();
    assert_eq!(record("/busy").verdict, Verdict::Unique);
    assert_eq!(record("/busy").retries, Some(1));
    assert_eq!(record("/down").verdict, Verdict::Unique);
    assert_eq!(record("/down").retries, Some(2));
    // The whole host waits: Retry-After (7 s) after the 429, then back-off from 400 ms,
    // doubling with each failure in a row (the 429 was the first), instead of the 100 ms delay.
    let all = fetcher.requests("http://a.example/");
    assert_eq!(gaps(&all), [100, 100, 7_000, 800, 100, 400]);
}
