use super::*;
use crate::kinds::Change;
use crate::probe::Prediction;

fn fetched(seq: u64, url: &str, verdict: Verdict, bytes: u64) -> Record {
    Record {
        status: Some(200),
        bytes,
        ..Record::new(seq, url.into(), 1, verdict)
    }
}

#[test]
fn a_report_counts_its_records() {
    let mut unique = fetched(0, "http://a.example/", Verdict::Unique, 3_000);
    unique.dedup_us = Some(10);
    let mut near = fetched(1, "http://a.example/copy", Verdict::Near, 1_000);
    near.dedup_us = Some(30);
    let mut fates = crate::LinkFates::default();
    fates.add_named("drop", "original", 3);
    fates.add_named("drop", "trap", 1);
    near.link_fates = Some(fates);
    let by_rule = |fate: &str, how: Option<&str>, right| {
        Some(crate::UrlFate {
            fate: fate.into(),
            by: "rule".into(),
            how: how.map(String::from),
            rule: Some(Prediction {
                right,
                ..Prediction::default()
            }),
            check: None,
        })
    };
    let mut predicted = Record::new(2, "http://m.example/x".into(), 2, Verdict::Predicted);
    predicted.fate = by_rule("skip", None, None);
    let mut probed = fetched(3, "http://m.example/y", Verdict::Unchanged, 200);
    probed.fate = by_rule("check", Some("verify"), Some(true));
    let refused = Record::new(4, "http://b.example/".into(), 0, Verdict::RobotsDisallowed);
    let mut report = ReportBuilder::new(RunFacts {
        dropped_never_fetched: 3,
        ..RunFacts::default()
    });
    for record in [&unique, &near, &predicted, &probed, &refused] {
        report.add(record);
    }
    let report = report.finish();
    assert_eq!(report.decisions, 5);
    // The HEAD-only `unchanged` counts its bytes, not as a page.
    assert_eq!((report.pages_fetched, report.bytes_fetched), (2, 4_200));
    assert_eq!(report.by_status.get("200"), Some(&3));
    assert_eq!(report.by_status.get("none"), Some(&2));
    assert_eq!(report.by_verdict.get("robots-disallowed"), Some(&1));
    assert_eq!(
        report.by_verdict.get("exact"),
        Some(&0),
        "every verdict listed"
    );
    assert_eq!(report.bytes_by_verdict.get("near"), Some(&1_000));
    assert_eq!((report.near_duplicates, report.duplicate_bytes), (1, 1_000));
    assert_eq!(report.outlinks_dropped, 4);
    // Mean over the pages judged (unique and duplicates): 2,000; three never fetched.
    assert_eq!(report.mean_page_bytes, 2_000);
    assert_eq!(report.estimated_bytes_saved, 6_000);
    assert_eq!(report.dedup_timing.pages, 2);
    assert_eq!(report.dedup_timing.mean_us, 20);
    assert_eq!(report.dedup_timing.max_us, 30);
    let skip = &report.predictions["skip"];
    assert_eq!(
        (skip.pages, skip.right, skip.wrong, skip.bytes),
        (1, 0, 0, 0)
    );
    let verify = &report.predictions["verify"];
    assert_eq!((verify.pages, verify.right, verify.bytes), (1, 1, 200));
    let text = report.summary();
    assert!(
        text.contains("5 decisions; 2 pages fetched, 4.2 kB"),
        "{text}"
    );
    assert!(text.contains("skip 1 (0 right, 0 wrong, 0 B)"), "{text}");
}

#[test]
fn a_recrawl_counts_revisits_by_class_and_host() {
    let mut figures = RecrawlFigures::default();
    let mut not_modified = fetched(0, "http://a.example:8080/", Verdict::NotModified, 150);
    not_modified.status = Some(304);
    not_modified.change = Some(Change::NotModified);
    let mut changed = fetched(1, "http://a.example:8080/b", Verdict::Unique, 900);
    changed.change = Some(Change::Changed);
    let new = fetched(2, "http://a.example:8080/new", Verdict::Unique, 700);
    let unasked = Record::new(3, "http://a.example:8080/c".into(), 1, Verdict::Error);
    figures.add(&not_modified, true);
    figures.add(&changed, true);
    figures.add(&new, false);
    figures.add(&unasked, true);
    assert_eq!((figures.asked, figures.bytes), (2, 1_050));
    assert_eq!((figures.new_pages, figures.new_bytes), (1, 700));
    assert_eq!(figures.by_change["not-modified"].pages, 1);
    assert_eq!(figures.by_change["changed"].bytes, 900);
    let host = figures.hosts["a.example:8080"];
    assert_eq!((host.asked, host.not_modified), (2, 1));
}
