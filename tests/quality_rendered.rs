//! A real web whose pages a script writes, rendered (`render.mode = "auto"` in Debian's
//! chromium; `NEARCRAWL_CHROMIUM` names it, else `chromium` on the PATH): the held-out
//! PostgreSQL manual beside its mirror and its syndication, about half of every site's pages
//! served as a script's shell ("Loading..." and the page as data, `real/scripted.rs`). Every
//! content group is reached and judged right on what the browser shows; every shell is
//! rendered and at most 5 % of the pages served as they are. docs/QUALITY.md item 39.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::path::PathBuf;

use nearcrawl_quality::{RealSize, RealWeb, RunConfig, is_script_shell, run_real};
use nearcrawl_records::{Record, Verdict};
use nearcrawl_render::RenderMode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_built_manual_is_crawled_whole_and_only_its_shells_are_rendered() {
    let web = RealWeb::MirrorPostgresql;
    assert!(!web.tuning(), "{web:?} is held out");
    let out = tempfile::tempdir().unwrap();
    let mut config = RunConfig {
        scripted: true,
        ..RunConfig::default()
    };
    config.crawl.render.mode = RenderMode::Auto;
    config.crawl.render.chromium = std::env::var_os("NEARCRAWL_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"));
    config.crawl.limits.concurrency = 4;
    let m = run_real(web, RealSize::Small(150), &config, out.path())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let report = m.summary();
    assert_eq!(
        (m.robots_violations, m.unnamed_requests),
        (0, 0),
        "{report}"
    );
    assert!(m.should_mark >= 150, "{report}");
    assert!(
        m.precision >= 0.99,
        "precision {:.3}\n{report}",
        m.precision
    );
    assert!(m.coverage >= 1.0, "coverage {:.3}\n{report}", m.coverage);
    // What was rendered: every shell fetched, few of the pages served as they are.
    let text = std::fs::read_to_string(out.path().join("dedup/records.jsonl")).unwrap();
    let (mut shells, mut static_pages) = ((0, 0), (0, 0));
    for line in text.lines() {
        let record: Record = serde_json::from_str(line).unwrap();
        if record.status != Some(200)
            || !matches!(
                record.verdict,
                Verdict::Unique | Verdict::Exact | Verdict::Near
            )
        {
            continue;
        }
        let path = url::Url::parse(&record.url).unwrap().path().to_owned();
        let rendered = record.rendered.as_ref().is_some_and(|r| r.ms > 0);
        let counts = match is_script_shell(&path) {
            true => &mut shells,
            false => &mut static_pages,
        };
        counts.0 += 1;
        counts.1 += u32::from(rendered);
    }
    assert!(
        shells.0 >= 100 && shells.1 == shells.0,
        "shells {shells:?}\n{report}"
    );
    assert!(
        static_pages.0 >= 100 && static_pages.1 * 20 <= static_pages.0,
        "pages served as they are, rendered: {static_pages:?}"
    );
}
