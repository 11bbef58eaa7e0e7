//! Focused crawling on real documentation no one here wrote (installed by
//! scripts/quality-deps.sh): the CI variant of the focused web, Debian's Apache and
//! PostgreSQL manuals behind a portal page that names them, crawled from the portal (a seed
//! about nothing) breadth-first and focused on a held-out topic. docs/FOCUSED.md has the
//! figures of every topic on all four manuals.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use nearcrawl_quality::{FocusedSize, RunConfig, Topic, TopicFrom, run_focused};

/// Full text search, given as terms: the floors of docs/FOCUSED.md hold (twice
/// breadth-first's harvest over its first fifth, 0.95 of the relevant pages found sooner than
/// breadth-first finds them and by the end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_focused_crawl_from_an_off_topic_portal_harvests_its_topic_first() {
    let topic = Topic::parse("postgres-full-text").unwrap();
    assert!(!topic.tuning);
    let out = tempfile::tempdir().unwrap();
    let config = RunConfig::default();
    let measures = run_focused(
        FocusedSize::Small,
        &[topic],
        &[TopicFrom::Terms],
        &config,
        out.path(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let m = &measures[0];
    let line = m.line();
    assert!(m.relevant >= 10, "{line}");
    assert!(
        m.focused_early_found > 0 && m.focused_early_found >= 2 * m.bfs_early_found,
        "{line}"
    );
    assert!(m.focused_recall_at_bfs_95 >= 0.95, "{line}");
    assert!(m.focused_final_recall >= 0.95, "{line}");
    assert!(
        m.focused_pages_to_95.unwrap() * 4 <= m.bfs_pages_to_95.unwrap(),
        "a quarter of breadth-first's pages at most: {line}"
    );
    assert!(m.floors_hold, "{line}");
    assert!(out.path().join("harvest-postgres-full-text.svg").exists());
    // No URL is fetched twice (a URL moved up is queued once).
    for crawl in ["bfs", "postgres-full-text-terms"] {
        let records = std::fs::read_to_string(out.path().join(crawl).join("records.jsonl"))
            .unwrap_or_else(|e| panic!("{crawl}: {e}"));
        let mut fetched = std::collections::HashSet::new();
        for line in records.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            if record.get("status").is_some() {
                let url = record["url"].as_str().unwrap().to_string();
                assert!(fetched.insert(url.clone()), "{crawl}: {url} fetched twice");
            }
        }
    }
}
