//! A fault web at the byte level: an in-process server on loopback whose answers break HTTP
//! in every way we could think of (bodies cut short, stalled and trickling responses, broken
//! chunking, lying lengths and encodings, garbage status lines, oversized headers, resets
//! before and after the head, robots.txt as binary garbage). Every fault must end as a
//! recorded outcome naming what went wrong, the crawl must end, and the healthy pages linked
//! beside the faults must still be fetched.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;
#[path = "support/faults.rs"]
mod faults;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crawl_support::{local_config, prose, records};
use faults::{Script, Step, html_head, ok_html, serve_script};
use nearcrawl_frontier::HostScope;
use nearcrawl_records::{Record, Verdict};

/// The fault table: path to steps, and the healthy pages.
fn faults() -> HashMap<&'static str, Vec<Step>> {
    let page = |n: u64| {
        format!(
            "<html><body><article><p>{}</p></article></body></html>",
            prose(n)
        )
    };
    let mut t: HashMap<&'static str, Vec<Step>> = HashMap::new();
    let mut cut = html_head("Content-Length: 5000\r\n");
    cut.extend_from_slice(&[b'a'; 100]);
    t.insert("/cut-body", vec![Step::Write(cut)]);
    t.insert("/stall-head", vec![Step::Stall]);
    t.insert(
        "/trickle-body",
        vec![
            Step::Write(html_head("Content-Length: 100000\r\n")),
            Step::Trickle(Duration::from_millis(100)),
        ],
    );
    t.insert(
        "/bad-chunk-size",
        vec![Step::Write(
            [
                html_head("Transfer-Encoding: chunked\r\n"),
                b"zz\r\nhello\r\n0\r\n\r\n".to_vec(),
            ]
            .concat(),
        )],
    );
    t.insert(
        "/chunked-cut",
        vec![Step::Write(
            [
                html_head("Transfer-Encoding: chunked\r\n"),
                b"10\r\n<html><body>1234\r\n".to_vec(),
            ]
            .concat(),
        )],
    );
    t.insert(
        "/short-length",
        vec![Step::Write(
            [html_head("Content-Length: 20\r\n"), page(71).into_bytes()].concat(),
        )],
    );
    t.insert(
        "/gzip-lie",
        vec![Step::Write(
            [
                html_head("Content-Encoding: gzip\r\nContent-Length: 30\r\n"),
                b"this is not gzip data at all!!".to_vec(),
            ]
            .concat(),
        )],
    );
    t.insert(
        "/garbage-status",
        vec![Step::Write(b"HTTP/1.1 abc\r\n\r\n".to_vec())],
    );
    t.insert(
        "/not-http",
        vec![Step::Write(b"hello, world\r\n\r\n".to_vec())],
    );
    let huge: String = (0..20_000)
        .map(|i| format!("X-Junk-{i}: {}\r\n", "v".repeat(40)))
        .collect();
    t.insert("/huge-head", vec![Step::Write(html_head(&huge))]);
    t.insert("/reset-before-head", vec![]);
    t.insert(
        "/reset-mid-head",
        vec![Step::Write(b"HTTP/1.1 200 OK\r\nContent-Ty".to_vec())],
    );
    t.insert(
        "/empty",
        vec![Step::Write(html_head("Content-Length: 0\r\n"))],
    );
    t.insert(
        "/slow-but-fine",
        vec![
            Step::Sleep(Duration::from_millis(300)),
            Step::Write(ok_html(&page(72))),
        ],
    );
    t.insert("/healthy-1", vec![Step::Write(ok_html(&page(73)))]);
    t.insert("/healthy-2", vec![Step::Write(ok_html(&page(74)))]);
    let garbage: Vec<u8> = (0..3000u32).map(|i| (i * 7919 % 251) as u8).collect();
    t.insert(
        "/robots.txt",
        vec![Step::Write(
            [
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    garbage.len()
                )
                .into_bytes(),
                garbage,
            ]
            .concat(),
        )],
    );
    t
}

/// A host that answers every path with `steps`, and the paths of `table` (robots.txt) with
/// theirs: one host per fault, so one fault's failures never park another's host.
fn host_script(steps: Vec<Step>, table: HashMap<&'static str, Vec<Step>>) -> Script {
    Arc::new(move |path: &str| table.get(path).cloned().unwrap_or_else(|| steps.clone()))
}

/// One host per fault, and a root page linking `/PATH` on each: the seed.
async fn fault_web() -> String {
    let mut table = faults();
    let robots: HashMap<&'static str, Vec<Step>> = table
        .remove("/robots.txt")
        .map(|r| ("/robots.txt", r))
        .into_iter()
        .collect();
    let mut links = String::new();
    for (path, steps) in table {
        let addr = serve_script(host_script(steps, robots.clone())).await;
        links.push_str(&format!("<a href=\"http://{addr}{path}\">{path}</a> "));
    }
    let root = format!(
        "<html><body><article><p>{}</p></article><nav>{links}</nav></body></html>",
        prose(70)
    );
    let addr = serve_script(host_script(vec![Step::Write(ok_html(&root))], robots)).await;
    format!("http://{addr}/")
}

fn by_path<'a>(records: &'a [Record], path: &str) -> &'a Record {
    records
        .iter()
        .find(|r| url::Url::parse(&r.url).unwrap().path() == path)
        .unwrap_or_else(|| panic!("no record for {path}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_byte_level_fault_is_a_recorded_outcome_and_the_crawl_goes_on() {
    let seed = fault_web().await;
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.fetch.total_timeout_ms = 1_500;
    config.fetch.max_retries = 1;
    config.politeness.max_connections_per_host = 4;
    // Every fault is a host of its own on 127.0.0.1, the seed's address.
    config.scope.hosts = HostScope::Any;
    let report = tokio::time::timeout(
        Duration::from_secs(60),
        crawl_support::run(&seed, out.path(), config),
    )
    .await
    .expect("the crawl ends");
    let records = records(out.path());
    assert_eq!(records.len() as u64, report.decisions);
    // Healthy pages, a slow one within the timeout, a head promising less than it sends (the
    // promised bytes are the body) and an empty page are pages like any other.
    for path in [
        "/",
        "/healthy-1",
        "/healthy-2",
        "/slow-but-fine",
        "/short-length",
        "/empty",
    ] {
        let r = by_path(&records, path);
        assert_eq!(
            (r.verdict, r.status),
            (Verdict::Unique, Some(200)),
            "{path}: {r:?}"
        );
    }
    // Each fault: an error record naming its kind and cause; network faults are retried
    // (max_retries = 1), a body that is not what its encoding says is not.
    let expected: [(&str, &str, Option<u8>); 11] = [
        ("/cut-body", "Broken: error decoding response body", Some(1)),
        (
            "/chunked-cut",
            "Broken: error decoding response body",
            Some(1),
        ),
        ("/bad-chunk-size", "chunk size", Some(1)),
        (
            "/reset-before-head",
            "Broken: error sending request",
            Some(1),
        ),
        ("/reset-mid-head", "Broken: error sending request", Some(1)),
        ("/garbage-status", "invalid HTTP status-code", Some(1)),
        ("/not-http", "invalid HTTP version", Some(1)),
        ("/huge-head", "message head is too large", Some(1)),
        ("/stall-head", "Timeout: error sending request", Some(1)),
        (
            "/trickle-body",
            "Timeout: error decoding response body",
            Some(1),
        ),
        ("/gzip-lie", "Decode: invalid gzip header", None),
    ];
    for (path, cause, retries) in expected {
        let r = by_path(&records, path);
        assert_eq!(r.verdict, Verdict::Error, "{path}: {r:?}");
        assert!(
            r.error.as_deref().unwrap_or_default().contains(cause),
            "{path}: {r:?}"
        );
        assert_eq!(r.retries, retries, "{path}: {r:?}");
    }
    assert_eq!(records.len(), 6 + expected.len(), "every URL once");
}
