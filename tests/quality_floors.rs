//! Detection quality on the CI variant of the labelled web (text from Debian documentation,
//! installed by scripts/quality-deps.sh, which scripts/test.sh runs): a regression in the
//! dedup stage fails the build. The floors are the issue's; docs/QUALITY.md has the figures
//! for other seeds and the held-out text.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use nearcrawl_quality::{RunConfig, Source, WebConfig, run};

/// Held out: git text (never used while choosing defaults) and a generator seed no default
/// was chosen on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_dedup_stage_meets_the_quality_floors_on_held_out_text() {
    check_floors(Source::GitDocs, 7).await;
}

/// The text the defaults were tuned on, as a second regression guard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_dedup_stage_meets_the_quality_floors_on_tuning_text() {
    check_floors(Source::PythonDocs, 1).await;
}

async fn check_floors(english: Source, seed: u64) {
    let out = tempfile::tempdir().unwrap();
    let config = RunConfig {
        web: WebConfig::small(seed),
        english,
        ..RunConfig::default()
    };
    let m = run(&config, out.path())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let report = m.summary();
    assert_eq!(m.robots_violations, 0, "{report}");
    // A crawler asks only for URLs a seed, a page, a sitemap or a redirect named.
    assert_eq!(m.unnamed_requests, 0, "{report}");
    assert!(
        m.verdicts >= 30 && m.should_mark >= 30,
        "the web must exercise the stage: {report}"
    );
    // Issue 20's floors (issue 5's were precision 0.98 and coverage 0.98).
    assert!(
        m.precision >= 0.99,
        "precision {:.3}\n{report}",
        m.precision
    );
    assert!(m.recall >= 0.95, "recall {:.3}\n{report}", m.recall);
    assert!(
        m.bytes_saved_vs_oracle >= 0.90,
        "bytes saved vs oracle {:.3}\n{report}",
        m.bytes_saved_vs_oracle
    );
    assert!(m.coverage >= 0.995, "coverage {:.3}\n{report}", m.coverage);
    // The hard cases are exercised, the pages only the mirror's copies link to among them
    // (found by sampling the mirror's copies, `mirror_samples`).
    for kind in [
        "url-variant",
        "changed-words",
        "contains",
        "template-negative",
        "trap",
        "only-via-mirror",
    ] {
        let counts = m
            .by_kind
            .iter()
            .find(|(k, _)| serde_json::to_string(k).unwrap().trim_matches('"') == kind);
        assert!(
            counts.is_some_and(|(_, c)| c.fetched > 0),
            "no {kind} page fetched\n{report}"
        );
    }
}

/// `compare` on labelled pairs: the LCS verification finds every kind of duplicate, and the
/// simhash at k = 3 alone does not (the reason candidates are verified, not trusted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_on_labelled_pairs() {
    let out = tempfile::tempdir().unwrap();
    let config = RunConfig {
        web: WebConfig::small(7),
        english: Source::GitDocs,
        ..RunConfig::default()
    };
    let report = nearcrawl_quality::run_pairs(&config, out.path())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let summary = report.summary();
    assert!(
        report.positives >= 50 && report.negatives >= 100,
        "{summary}"
    );
    let d = report.defaults_without_template_pairs;
    assert!(d.precision >= 0.98 && d.recall >= 0.95, "{summary}");
    let k3 = report
        .simhash_k
        .iter()
        .find(|p| p.threshold == 3.0)
        .unwrap();
    assert!(k3.recall < d.recall, "{summary}");
    let svg = std::fs::read_to_string(out.path().join("pr-curve.svg")).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 3);
}

/// `dedup.predict = "skip"` on held-out text: the pages a trusted URL rule says are copies
/// are recorded without a request, and every one of them is a copy of the page it names (the
/// truth is the generated web's groups); nothing else is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predicted_duplicates_are_right_and_lose_nothing_on_held_out_text() {
    let out = tempfile::tempdir().unwrap();
    let mut config = RunConfig {
        web: WebConfig::small(1),
        english: Source::GitDocs,
        ..RunConfig::default()
    };
    config.crawl.dedup.predict = nearcrawl_dedup::Predict::Skip;
    let m = run(&config, out.path())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let report = m.summary();
    assert!(m.predicted > 0, "the web must exercise the rules: {report}");
    assert_eq!(m.predicted_wrong, 0, "{report}");
    assert_eq!(m.unnamed_requests, 0, "{report}");
    assert!(m.precision >= 0.99, "{report}");
    assert!(m.coverage >= 0.995, "{report}");
    assert!(
        m.bytes_saved_vs_oracle > 1.0,
        "skipping saves more than the oracle: {report}"
    );
}

/// The shop web (held-out text): listings with sort, stock-filter and page parameters, a
/// session id in every listing link, products with print and colour variants. Every
/// verdict right, nothing lost, the cart never asked for, no URL made up; the session
/// parameter is learned, so queued URLs that differ from a decided one only by it are
/// recorded as traps without a request; the variants a URL rule names (without the session
/// id) are verified by a HEAD, or with `predict = "skip"` not requested, and none of those
/// predictions is wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shop_s_parameters_cost_no_verdict_and_its_session_ids_are_learned() {
    use nearcrawl_quality::{ShopConfig, run_shop};
    for predict in [
        nearcrawl_dedup::Predict::Verify,
        nearcrawl_dedup::Predict::Skip,
    ] {
        let out = tempfile::tempdir().unwrap();
        let mut config = RunConfig {
            english: Source::GitDocs,
            ..RunConfig::default()
        };
        config.crawl.dedup.predict = predict;
        let m = run_shop(ShopConfig::small(3), &config, out.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let report = m.summary();
        assert!(m.precision >= 0.99, "{report}");
        assert!(m.recall >= 0.95, "{report}");
        assert!(m.coverage >= 0.995, "{report}");
        assert_eq!(m.robots_violations, 0, "{report}");
        assert_eq!(m.unnamed_requests, 0, "{report}");
        assert_eq!(m.predicted_wrong, 0, "{report}");
        let records = std::fs::read_to_string(out.path().join("dedup/records.jsonl")).unwrap();
        let traps = records
            .lines()
            .filter(|l| l.contains("\"verdict\":\"trap\""))
            .count();
        assert!(traps > 0, "session ids learned: {report}");
        assert!(m.dedup_pages < m.baseline_pages, "{report}");
        // The colour variants' rule names the product without its session id: copies are
        // verified by a HEAD (or, with `skip`, not requested). Before that, 0.05. Since
        // 2026-11-28 (640b8e4) the products fetched under a session id before it was
        // learned are not fetched again under their plain URLs: 0.352 (`verify`) and 0.358
        // (`skip`).
        assert!(m.bytes_saved_vs_content_bound >= 0.25, "{report}");
        match predict {
            nearcrawl_dedup::Predict::Skip => assert!(m.predicted > 0, "{report}"),
            _ => assert!(
                records.contains("\"verdict\":\"unchanged\""),
                "copies verified by a HEAD: {report}"
            ),
        }
    }
}
