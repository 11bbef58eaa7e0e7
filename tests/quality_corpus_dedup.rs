//! Corpus dedup quality on real documentation (installed by scripts/quality-deps.sh): the CI
//! variant of a held-out real web, LLVM 15 then 16, crawled with `--no-dedup` into WARC files
//! and deduplicated by `nearcrawl dedup`; its clusters scored as pairs against the web's truth.
//! docs/CORPUS.md has the full-size figures and the comparison with datasketch's MinHashLSH
//! (scripts/bench-corpus-dedup.sh and `nearcrawl-lab dedup-quality --minhash-python`).

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use nearcrawl_quality::{RealSize, RealWeb, RunConfig, run_corpus_dedup};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawls_warc_files_cluster_as_the_truth_groups_them() {
    assert!(!RealWeb::Llvm15To16.tuning());
    let out = tempfile::tempdir().unwrap();
    let report = run_corpus_dedup(
        RealWeb::Llvm15To16,
        RealSize::Small(150),
        &RunConfig::default(),
        out.path(),
        nearcrawl_corpus::TEMPLATE_LOOKAHEAD,
        None,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let run = &report.runs[0];
    let s = &run.score;
    let shown = format!("{report:?}");
    assert!(report.pages >= 250, "the WARC holds both releases: {shown}");
    assert_eq!(run.pages, report.pages);
    assert!(s.positives >= 100, "the web must exercise dedup: {shown}");
    assert!(s.precision >= 0.99, "precision {:.3}: {shown}", s.precision);
    assert!(s.recall >= 0.95, "recall {:.3}: {shown}", s.recall);
    assert!(out.path().join("dedup-quality.json").exists());
    assert!(out.path().join("nearcrawl/keep.txt").exists());
}
