//! The judge on a thread of its own (`limits.judge_thread`) decides as the judge on the
//! coordinator's thread: the same records one request at a time, and with many requests at
//! once every copy found, including copies judged while their original's commit is still
//! on its way (the judge answers for the pages it kept before the store does).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::collections::HashMap;

use crawl_support::{local_config, page, prose, records, run};
use nearcrawl_demo_web::{Site, serve};
use nearcrawl_engine::JudgeThread;
use nearcrawl_records::{Record, Verdict};

/// Groups of copies this web has.
const GROUPS: usize = 16;

/// An index linking `GROUPS` groups of three pages each: two byte-identical copies of a
/// text and a third with a sentence of its own (a near copy), listed together so that
/// several requests at once fetch a group's copies side by side.
fn site() -> Site {
    let pages: Vec<String> = (0..GROUPS * 3).map(|i| format!("/p/{i}")).collect();
    let links: Vec<&str> = pages.iter().map(String::as_str).collect();
    let mut site = Site::new().page("/", page("index", &prose(999), &links));
    for (i, path) in pages.iter().enumerate() {
        let mut text = prose(i as u64 / 3);
        if i % 3 == 2 {
            text.push_str(" This copy ends with a closing sentence of its very own.");
        }
        site = site.page(path, page(&format!("page {}", i / 3), &text, &[]));
    }
    site
}

/// The group of a page of [`site`], from its URL.
fn group(url: &str) -> Option<usize> {
    let n: usize = url.rsplit('/').next()?.parse().ok()?;
    Some(n / 3)
}

/// What a record says of its page's judgement.
fn judged(r: &Record) -> (String, Verdict, Option<String>, Option<u64>, Option<f64>) {
    (
        r.url.clone(),
        r.verdict,
        r.duplicate_of.clone(),
        r.cluster,
        r.similarity,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_at_a_time_the_judge_away_decides_as_the_judge_here() {
    let web = serve(site()).await.unwrap();
    let mut decided = Vec::new();
    for setting in [JudgeThread::Off, JudgeThread::On] {
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.limits.concurrency = 1;
        config.limits.judge_thread = setting;
        run(&web.url("/"), out.path(), config).await;
        let records = records(out.path());
        decided.push(records.iter().map(judged).collect::<Vec<_>>());
    }
    assert_eq!(decided[0], decided[1]);
    let verdicts = |v: Verdict| decided[0].iter().filter(|r| r.1 == v).count();
    assert_eq!(verdicts(Verdict::Unique), GROUPS + 1, "{:#?}", decided[0]);
    assert_eq!(verdicts(Verdict::Exact), GROUPS);
    assert_eq!(verdicts(Verdict::Near), GROUPS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_requests_at_once_the_judge_away_finds_every_copy() {
    let web = serve(site()).await.unwrap();
    for round in 0..3 {
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.limits.concurrency = 12;
        config.limits.judge_thread = JudgeThread::On;
        run(&web.url("/"), out.path(), config).await;
        let records = records(out.path());
        assert_eq!(records.len(), GROUPS * 3 + 1, "round {round}");
        let by_url: HashMap<&str, &Record> = records.iter().map(|r| (r.url.as_str(), r)).collect();
        let mut unique = vec![0; GROUPS];
        for r in &records {
            let Some(g) = group(&r.url) else { continue };
            match &r.duplicate_of {
                None => {
                    assert_eq!(r.verdict, Verdict::Unique, "round {round}: {r:?}");
                    unique[g] += 1;
                }
                Some(original) => {
                    // A copy of a kept page of its own group, decided before it.
                    let kept = by_url[original.as_str()];
                    assert_eq!(kept.verdict, Verdict::Unique, "round {round}: {r:?}");
                    assert_eq!(group(original), Some(g), "round {round}: {r:?}");
                    assert!(kept.seq < r.seq, "round {round}: {r:?}");
                    assert_eq!(r.cluster, Some(kept.seq), "round {round}: {r:?}");
                }
            }
        }
        assert_eq!(
            unique,
            vec![1; GROUPS],
            "round {round}: one page kept a group"
        );
    }
}
