//! Detection quality on real documentation no one here wrote (installed by
//! scripts/quality-deps.sh): the CI variants of four held-out real webs, LLVM 15 then 16,
//! Clang 14 then 16 (whole: 150 pages per site hold all of it), the Debian handbook in
//! English, Spanish, Dutch, Russian and Chinese, the PostgreSQL manual beside its mirror and
//! its syndication, and `compare` on pairs drawn from them. A
//! regression in the dedup stage or in how a duplicate's links are followed fails the build.
//! docs/QUALITY.md has the figures of every real web at full size.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use nearcrawl_quality::{Measures, RealSize, RealWeb, RunConfig, run_real, run_real_pairs};

async fn measure(web: RealWeb) -> Measures {
    let out = tempfile::tempdir().unwrap();
    let config = RunConfig::default();
    run_real(web, RealSize::Small(150), &config, out.path())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The floors a web is held to: robots, precision ≥ 0.99, recall ≥ 0.95, and these.
struct Floors {
    /// Duplicate verdicts the truth expects at least (the web must exercise the stage).
    marked: u64,
    coverage: f64,
    saved_vs_oracle: f64,
    /// Of what a crawl that knew each URL's content would save (the floor is half on
    /// the release and language webs).
    saved_vs_content_bound: f64,
    /// Of what skipping every copy at no cost would save, every other page fetched
    /// (docs/QUALITY.md item 26: on the language webs the content-aware bound's half is out
    /// of reach even so).
    saved_vs_copy_bound: f64,
}

/// A held-out web, measured at the CI size, holds `floors`.
async fn holds(web: RealWeb, floors: Floors) {
    assert!(!web.tuning(), "{web:?} is held out");
    assert_floors(&measure(web).await, floors);
}

fn assert_floors(m: &Measures, floors: Floors) {
    let report = m.summary();
    assert_eq!(m.robots_violations, 0, "{report}");
    // A crawler asks only for URLs a seed, a page, a sitemap or a redirect named.
    assert_eq!(m.unnamed_requests, 0, "{report}");
    assert!(
        m.should_mark >= floors.marked,
        "the web must exercise the stage: {report}"
    );
    assert!(
        m.precision >= 0.99,
        "precision {:.3}\n{report}",
        m.precision
    );
    assert!(m.recall >= 0.95, "recall {:.3}\n{report}", m.recall);
    assert!(
        m.coverage >= floors.coverage,
        "coverage {:.3}\n{report}",
        m.coverage
    );
    assert!(
        m.bytes_saved_vs_oracle >= floors.saved_vs_oracle,
        "saved {:.3} of the oracle's saving\n{report}",
        m.bytes_saved_vs_oracle
    );
    assert!(
        m.bytes_saved_vs_content_bound >= floors.saved_vs_content_bound,
        "saved {:.3} of the content-aware bound's saving\n{report}",
        m.bytes_saved_vs_content_bound
    );
    assert!(
        m.bytes_saved_vs_copy_bound >= floors.saved_vs_copy_bound,
        "saved {:.3} of the copy bound's saving\n{report}",
        m.bytes_saved_vs_copy_bound
    );
}

/// Two releases: the floors for precision, recall and coverage hold; every content
/// group of the newer release the `--no-dedup` crawl reaches, the dedup crawl reaches too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_release_is_deduplicated_and_its_new_pages_all_reached() {
    // 0.979 at this writing (docs/QUALITY.md); 0.896 before a hub that led to less than
    // itself was probed instead of fetched (`hub_min_yield`).
    let floors = Floors {
        marked: 20,
        coverage: 1.0,
        saved_vs_oracle: 0.9,
        // 0.885 at this writing.
        saved_vs_content_bound: 0.5,
        // 0.882 at this writing.
        saved_vs_copy_bound: 0.5,
    };
    holds(RealWeb::Llvm15To16, floors).await;
}

/// Two releases two apart, whole: pages changed in place and linked only from copies (the
/// release notes, the index) are found by the probes of the copies' links, and every floor of
/// the issue holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_changed_in_place_behind_copies_are_found_and_every_floor_holds() {
    let floors = Floors {
        marked: 50,
        coverage: 1.0,
        saved_vs_oracle: 0.9,
        // 0.842 at this writing.
        saved_vs_content_bound: 0.5,
        // 0.828 at this writing.
        saved_vs_copy_bound: 0.5,
    };
    holds(RealWeb::Clang14To16, floors).await;
}

/// Translations: untranslated pages are found, pages a translation left partly in English
/// (which the truth calls distinct) are not called duplicates, and nothing is lost; a
/// language's untranslated pages are sampled rather than fetched where its URL rule's rate
/// pays for it (docs/QUALITY.md item 19: 0.232 of the content-aware bound at this writing,
/// 0.000 before, the bound's other half being pages the truth leaves unscored).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untranslated_pages_are_found_and_no_translation_is_lost() {
    let floors = Floors {
        marked: 100,
        coverage: 0.995,
        saved_vs_oracle: 0.9,
        // The held-out bandwidth issue's floor for language webs: no worse than 0.232.
        saved_vs_content_bound: 0.23,
        // 0.467 at this writing.
        saved_vs_copy_bound: 0.4,
    };
    holds(RealWeb::HandbookHeldOut, floors).await;
}

/// The Debian Reference in its eleven languages, the language in each file's name
/// (`ch07.pt-br.html`): the Brazilian Portuguese, a copy of the Portuguese, is sampled
/// rather than downloaded once its URL rule has its pairs, and a page copied from one the
/// truth leaves unscored still counts as reached (174 % of the oracle's saving and 0.361 of
/// the content-aware bound at this writing, docs/QUALITY.md items 19 and 31). The mirror's
/// samples are its cheapest copies, a quarter of them (item 31), so 9 copies are fetched
/// and judged where 10 or more were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manual_in_eleven_languages_saves_more_than_the_oracle() {
    let floors = Floors {
        marked: 8,
        coverage: 1.0,
        saved_vs_oracle: 0.9,
        saved_vs_content_bound: 0.2,
        // 0.828 at this writing.
        saved_vs_copy_bound: 0.5,
    };
    holds(RealWeb::ReferenceLanguages, floors).await;
}

/// A manual crawled beside its mirror under another URL scheme (with "related" links of its
/// own) and a syndication that rewrites a third of what it copies (docs/QUALITY.md items 36
/// to 41): nothing is lost, no rewrite is called a copy, and the mirror's rule is acted on
/// (0.386 of the content-aware bound one request at a time at this writing, 0.151 before its
/// first copy's related links, each to another copy, stopped holding it back, and 0.106
/// before they stopped blocking it for good). Recall is not held to 0.95 here: the mirror's
/// table-of-contents pages, a few hundred words beside its banner and related links, are
/// judged unique (0.889 at this writing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_and_a_syndication_crawled_beside_their_origin() {
    let web = RealWeb::MirrorPostgresql;
    assert!(!web.tuning(), "{web:?} is held out");
    let m = measure(web).await;
    let report = m.summary();
    assert_eq!(m.robots_violations, 0, "{report}");
    assert_eq!(m.unnamed_requests, 0, "{report}");
    assert!(m.should_mark >= 150, "{report}");
    assert!(
        m.precision >= 0.99,
        "precision {:.3}\n{report}",
        m.precision
    );
    assert!(m.recall >= 0.8, "recall {:.3}\n{report}", m.recall);
    assert!(m.coverage >= 1.0, "coverage {:.3}\n{report}", m.coverage);
    assert!(
        m.bytes_saved_vs_content_bound >= 0.37,
        "saved {:.3} of the content-aware bound's saving\n{report}",
        m.bytes_saved_vs_content_bound
    );
}

/// `compare` on labelled pairs drawn from the held-out webs' CI variants: the floor,
/// F1 ≥ 0.92 (docs/QUALITY.md has every web at full size, and why the LLVM webs' precision
/// is lower than the crawl's: pairs of operand pages that share their navigation, which a
/// crawl's host template model removes and `compare` cannot).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_on_pairs_drawn_from_the_held_out_webs() {
    for web in [
        RealWeb::Llvm15To16,
        RealWeb::Clang14To16,
        RealWeb::HandbookHeldOut,
    ] {
        let out = tempfile::tempdir().unwrap();
        let report = run_real_pairs(web, RealSize::Small(150), &RunConfig::default(), out.path())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let d = report.defaults;
        assert!(
            report.positives >= 50 && report.negatives >= 10,
            "{web:?}: {} positive and {} negative pairs",
            report.positives,
            report.negatives
        );
        assert!(d.f1 >= 0.92, "{web:?}: {d:?}");
    }
}
