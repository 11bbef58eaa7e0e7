//! The outputs a user reads: WARC files valid for `warcio check` (installed by
//! scripts/test.sh, found through NEARCRAWL_WARCIO), report.json consistent with
//! records.jsonl, and `nearcrawl demo` doing what the README says; the `--no-dedup`
//! baseline's records, the index shared across jobs (`--index`), and the what-if replay.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::process::Command;

use crawl_support::{local_config, page, prose, record, records, run, warc_files, warcio};
use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_engine::DuplicateOutlinks;
use nearcrawl_records::Verdict;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warc_files_pass_warcio_check_and_hold_every_fetch() {
    let text = "<html><body><article><p>Identical bodies at two addresses become a response and a revisit record in the archive, with the same payload digest and the original's address.</p></article></body></html>";
    let site = serve(
        Site::new()
            .page("/robots.txt", Reply::ok("text/plain", "User-agent: *\nDisallow: /no\n"))
            .page("/", Reply::html("<html><body><p>Home page with a few words of its own.</p><a href=/a>a</a> <a href=/b>b</a> <a href=/gz>gz</a> <a href=/no>no</a> <a href=/img>img</a></body></html>"))
            .page("/a", Reply::html(text))
            .page("/b", Reply::html(text))
            .page("/gz", Reply::html("<html><body><p>A compressed page is archived as it came over the wire, gzip and all, so its digest is of those bytes.</p></body></html>").gzipped())
            .page("/img", Reply::ok("image/png", vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = crawl_support::local_config();
    config.limits.concurrency = 1;
    crawl_support::run(&site.url("/"), out.path(), config).await;
    let records = crawl_support::records(out.path());
    assert_eq!(
        crawl_support::record(&records, "/b").verdict,
        Verdict::Exact
    );
    assert_eq!(
        crawl_support::record(&records, "/img").verdict,
        Verdict::NotHtml
    );

    let files = warc_files(out.path());
    assert_eq!(files.len(), 1);
    let check = Command::new(warcio())
        .arg("check")
        .arg("-v")
        .args(&files)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "warcio check failed:\n{report}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let index = Command::new(warcio())
        .arg("index")
        .arg("-f")
        .arg("warc-type,warc-target-uri")
        .args(&files)
        .output()
        .unwrap();
    assert!(index.status.success());
    let index = String::from_utf8_lossy(&index.stdout);
    let kinds: Vec<String> = index
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["warc-type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let n = |k: &str| kinds.iter().filter(|x| *x == k).count();
    assert_eq!(n("warcinfo"), 1);
    // robots.txt, /, /a, /gz, /img as responses; /b as a revisit of /a.
    assert_eq!(n("response"), 5, "{index}");
    assert_eq!(n("revisit"), 1, "{index}");
    assert_eq!(n("request"), 6, "{index}");
    assert!(
        index.contains(&format!(
            "\"warc-type\": \"revisit\", \"warc-target-uri\": \"{}\"",
            site.url("/b")
        )),
        "{index}"
    );
    assert!(n("metadata") >= 5);
}

#[test]
fn demo_crawls_the_local_web_and_prints_the_report() {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(["demo", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("bandwidth saved: at least") && stdout.contains("a lower bound"),
        "{stdout}"
    );
    // The HTML report, written at the end of the crawl, and again by `nearcrawl report`.
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(html.contains("<h2>Hosts</h2>") && html.contains("<svg role=\"img\""));
    assert!(
        html.contains("<td>fingerprint index (held in memory per kept page)</td>"),
        "{html}"
    );
    std::fs::remove_file(out.path().join("report.html")).unwrap();
    let again = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(["report"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(again.status.success());
    assert_eq!(
        std::fs::read_to_string(out.path().join("report.html")).unwrap(),
        html
    );
    // The exact figure: the same web crawled again without dedup, into OUT/baseline.
    let savings = stdout
        .lines()
        .find(|l| l.starts_with("exact savings against a --no-dedup baseline crawl"))
        .unwrap_or_else(|| panic!("no exact savings line: {stdout}"));
    let baseline: nearcrawl_records::Report =
        serde_json::from_slice(&std::fs::read(out.path().join("baseline/report.json")).unwrap())
            .unwrap();
    assert!(
        savings.contains(&format!("({} pages,", baseline.pages_fetched)),
        "{savings}"
    );
    assert_eq!(
        baseline.by_verdict.values().sum::<u64>(),
        baseline.decisions,
        "a whole baseline crawl"
    );
    let records = crawl_support::records(out.path());
    let disallowed: Vec<_> = records
        .iter()
        .filter(|r| r.verdict == Verdict::RobotsDisallowed)
        .collect();
    assert_eq!(disallowed.len(), 2, "the origin's /private/ pages");
    assert!(disallowed.iter().all(|r| r.url.contains("/private/")));
    let near = crawl_support::count(&records, Verdict::Near)
        + crawl_support::count(&records, Verdict::Exact);
    let report: nearcrawl_records::Report =
        serde_json::from_slice(&std::fs::read(out.path().join("report.json")).unwrap()).unwrap();
    // Which home page comes first depends on timing: when the origin's is judged a copy of the
    // mirror's, the origin's articles (copies of the mirror's stories) are never fetched, and
    // their links count as dropped instead.
    assert!(
        near as u64 + report.dropped_never_fetched >= 20,
        "mirror and origin articles found as duplicates ({near}) or skipped ({})",
        report.dropped_never_fetched
    );
    let days = records.iter().filter(|r| r.url.contains("/cal/")).count();
    assert!(days <= 4, "the calendar trap is cut: {days} days fetched");
    assert_eq!(report.decisions, records.len() as u64);
    assert_eq!(
        report.near_duplicates + report.exact_duplicates,
        near as u64
    );
    assert_eq!(
        report.bytes_fetched,
        records.iter().map(|r| r.bytes).sum::<u64>()
    );
    assert!(report.estimated_bytes_saved > 0);
    // Where the time went: every stage that works on an HTML page took some (the demo writes
    // WARC files), in pipeline order, and the summary says so.
    let stages: Vec<&str> = report.run_stages.iter().map(|s| s.stage.as_str()).collect();
    assert_eq!(
        stages,
        [
            "fetch", "decode", "parse", "extract", "template", "tokenize", "features", "index",
            "verify", "commit", "warc"
        ]
    );
    for stage in &report.run_stages {
        assert!(stage.total_ms > 0.0, "{stage:?}");
        assert!(stage.per_page_us > 0.0, "{stage:?}");
    }
    assert!(stdout.contains("us per page by stage: decode "), "{stdout}");
    // The verification work beside its time: the mirrored articles' sentences list their
    // originals.
    assert!(
        report.run_sentence_matches_per_page > 0.0,
        "{}",
        report.run_sentence_matches_per_page
    );
    // The one thing held in memory per kept page: its fingerprint in the index, whose design
    // keeps within INDEX_BYTES_PER_PAGE (past its directories' fixed cost, which a crawl this
    // small does not amortise).
    let index = &report.fingerprint_index;
    assert_eq!(
        index.entries,
        crawl_support::count(&records, Verdict::Unique) as u64,
        "{index:?}"
    );
    assert_eq!(index.tables, 4, "{index:?}");
    assert!(index.heap_bytes > 0, "{index:?}");
    assert!(
        stdout.contains(&format!("fingerprint index (what the crawl holds in memory per kept page): {} fingerprints in 4 tables", index.entries)),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_dedup_baseline_records_verdicts_but_skips_nothing() {
    let article = prose(27);
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(28), &["/original", "/copy"]))
            .page("/original", page("story", &article, &[]))
            .page("/copy", page("story", &article, &["/only-from-copy"]))
            .page("/only-from-copy", page("c", &prose(29), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.enabled = false;
    run(&site.url("/"), out.path(), config.clone()).await;
    let records = records(out.path());
    assert!(record(&records, "/copy").verdict.is_duplicate());
    assert_eq!(record(&records, "/only-from-copy").verdict, Verdict::Unique);
    // Keeping a duplicate's outlinks is also a setting of the dedup stage.
    let out = tempfile::tempdir().unwrap();
    config.dedup.enabled = true;
    config.dedup.duplicate_outlinks = DuplicateOutlinks::Keep;
    run(&site.url("/"), out.path(), config).await;
    let kept = crawl_support::records(out.path());
    assert_eq!(record(&kept, "/only-from-copy").verdict, Verdict::Unique);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_index_makes_a_later_job_skip_what_an_earlier_one_has() {
    let story = prose(60);
    let first = serve(
        Site::new()
            .page("/", page("home", &prose(61), &["/story"]))
            .page("/story", page("story", &story, &[])),
    )
    .await
    .unwrap();
    let second = serve(
        Site::new()
            .page("/", page("other home", &prose(62), &["/copied"]))
            .page("/copied", page("story again", &story, &["/behind-copy"]))
            .page("/behind-copy", page("x", &prose(63), &[])),
    )
    .await
    .unwrap();
    let index = tempfile::tempdir().unwrap();
    let out1 = tempfile::tempdir().unwrap();
    crawl_support::run_sharing(&first.url("/"), out1.path(), local_config(), index.path()).await;
    assert!(index.path().join("fingerprints.idx").exists());
    let out2 = tempfile::tempdir().unwrap();
    crawl_support::run_sharing(&second.url("/"), out2.path(), local_config(), index.path()).await;
    let records = records(out2.path());
    let copied = record(&records, "/copied");
    assert_eq!(copied.verdict, Verdict::Near, "{copied:?}");
    assert_eq!(
        copied.duplicate_of.as_deref(),
        Some(first.url("/story").as_str())
    );
    assert_eq!(second.site.hits("/behind-copy"), 0);
    // The second job's unique pages joined the shared index: a third job sees them too.
    let urls = std::fs::read_to_string(index.path().join("urls.txt")).unwrap();
    assert_eq!(urls.lines().count(), 3, "{urls}");
    // Each entry carries the day its page was crawled. Aged by a year, the story no longer
    // counts as crawled for a job with index.max_age_days = 30, and still does without it.
    assert!(
        urls.lines()
            .all(|l| l.split('\t').nth(1).is_some_and(|d| d.len() == 10))
    );
    let aged: String = urls
        .lines()
        .map(|l| format!("{}\t2000-01-01\n", l.split('\t').next().unwrap()))
        .collect();
    std::fs::write(index.path().join("urls.txt"), &aged).unwrap();
    let mut fresh_only = local_config();
    fresh_only.index.max_age_days = Some(30);
    let out_aged = tempfile::tempdir().unwrap();
    crawl_support::run_sharing(&second.url("/"), out_aged.path(), fresh_only, index.path()).await;
    let copied = record(&crawl_support::records(out_aged.path()), "/copied").clone();
    assert_eq!(
        copied.verdict,
        Verdict::Unique,
        "an expired entry: {copied:?}"
    );
    let kept = std::fs::read_to_string(index.path().join("urls.txt")).unwrap();
    assert!(
        kept.starts_with(&aged),
        "expired entries stay in the index: {kept}"
    );
    // Without the age limit the whole second site is in the index: its home page is a
    // duplicate of itself, and nothing behind it is fetched again.
    let out_all = tempfile::tempdir().unwrap();
    crawl_support::run_sharing(
        &second.url("/"),
        out_all.path(),
        local_config(),
        index.path(),
    )
    .await;
    let all = crawl_support::records(out_all.path());
    assert!(record(&all, "/").verdict.is_duplicate(), "{all:?}");
    assert_eq!(all.len(), 1);
    // A damaged pair of files is an error naming the index, not a partial load.
    std::fs::write(index.path().join("urls.txt"), "only-one-line\n").unwrap();
    let seeds =
        nearcrawl_frontier::parse_seeds(&second.url("/"), std::path::Path::new("s")).unwrap();
    let out3 = tempfile::tempdir().unwrap();
    let job = nearcrawl_engine::Job {
        seeds,
        out_dir: out3.path().join("out"),
        config: local_config(),
        analyzer: Default::default(),
        shared_index: Some(index.path().to_path_buf()),
        redis: None,
    };
    let err = nearcrawl_engine::crawl(job, std::future::pending(), Default::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("has no URL"), "{err}");
    assert!(
        !out3.path().join("out").exists(),
        "nothing created for a job that cannot start"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_if_on_a_baseline_predicts_the_dedup_crawl_exactly() {
    let story = prose(70);
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(71), &["/a", "/b"]))
            .page("/a", page("story", &story, &["/d", "/b"]))
            .page("/b", page("story", &story, &["/c", "/a"]))
            .page("/c", page("c", &prose(72), &["/e", "/d"]))
            .page("/d", page("d", &prose(73), &[]))
            .page("/e", page("e", &prose(74), &[])),
    )
    .await
    .unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    // The what-if replays "skip" semantics: the oracle of the quality measures.
    config.dedup.duplicate_outlinks = DuplicateOutlinks::Skip;
    let baseline = tempfile::tempdir().unwrap();
    config.dedup.enabled = false;
    let base_report = run(&site.url("/"), baseline.path(), config.clone()).await;
    assert_eq!(base_report.pages_fetched, 6);
    let predicted = nearcrawl_records::what_if(baseline.path()).unwrap();
    assert_eq!(
        (
            predicted.baseline_pages,
            predicted.dedup_pages,
            predicted.pages_saved
        ),
        (6, 4, 2)
    );
    assert_eq!(
        predicted.unique_pages_lost, 2,
        "/c and /e are reachable only through the copy"
    );

    let deduped = tempfile::tempdir().unwrap();
    config.dedup.enabled = true;
    let report = run(&site.url("/"), deduped.path(), config).await;
    assert_eq!(report.pages_fetched, predicted.dedup_pages);
    assert_eq!(report.bytes_fetched, predicted.dedup_bytes);
    assert_eq!(
        base_report.bytes_fetched - report.bytes_fetched,
        predicted.bytes_saved
    );

    // A crawl that was not a baseline cannot be replayed.
    let err = nearcrawl_records::what_if(deduped.path()).unwrap_err();
    assert!(err.to_string().contains("--no-dedup"), "{err}");
}
