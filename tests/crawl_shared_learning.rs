//! What the workers of a job shared through Redis learn from each other (Debian's
//! redis-server, started per test on loopback): the link policy's URL rules, one book for the
//! job, and what each fetched page declared, which the probes of its copies found by other
//! workers compare with.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::collections::BTreeSet;

use crawl_support::{html_page, prose, records, shared_config, shared_worker};
use nearcrawl_demo_web::{Site, serve};
use nearcrawl_records::Verdict;
use nearcrawl_redis_job::server::LocalRedis;

/// The link policy in a shared job: three workers learn one rule book through the job's log
/// and compare with what any of them fetched. A site of 20 articles and a mirror under
/// another URL scheme (`/m/story?id=N` for `/a/N`, its listing a page of its own, each of
/// its answers 120 ms late so that the articles are fetched first, with room for a loaded
/// machine: at 40 ms a full test run once decided a story before its article): the first stories teach
/// the rule and check it; once it is trusted, the others are not downloaded. With
/// `predict = "skip"` they are recorded as predicted duplicates without a request; with
/// `"verify"` each is asked with HEAD against its counterpart's length, which another
/// worker may have fetched, and decided `unchanged`. Every rule number names one rule,
/// whichever worker recorded it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_the_url_rules_they_learn() {
    use nearcrawl_dedup::Predict;
    const STORIES: usize = 20;
    let server = LocalRedis::start(false).unwrap();
    let late = std::time::Duration::from_millis(120);
    let crawl = |predict: Predict, job: &'static str| {
        let url = server.url();
        async move {
            let mut origin = Site::new();
            let mut mirror = Site::new();
            let (mut articles, mut stories) = (Vec::new(), Vec::new());
            for n in 0..STORIES {
                let text = prose(700 + n as u64);
                let (a, m) = (format!("/a/{n}"), format!("/m/story?id={n}"));
                let none: [String; 0] = [];
                origin = origin.page(&a, html_page(&format!("Article {n}"), &text, "", &none));
                mirror = mirror.page(
                    &m,
                    html_page(&format!("Article {n}"), &text, "", &none).delayed(late),
                );
                articles.push(a);
                stories.push(m);
            }
            origin = origin.page("/list", html_page("articles", &prose(690), "", &articles));
            mirror = mirror.page(
                "/index",
                html_page("stories", &prose(691), "", &stories).delayed(late),
            );
            let (origin, mirror) = (serve(origin).await.unwrap(), serve(mirror).await.unwrap());
            let seeds = format!("{}\n{}\n", origin.url("/list"), mirror.url("/index"));
            let mut config = shared_config();
            config.dedup.predict = predict;
            config.dedup.tuning.min_support = 2;
            config.dedup.tuning.min_trust = 0.75;
            config.dedup.predict_explore = 0;
            let outs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
            tokio::join!(
                shared_worker(&seeds, outs[0].path(), (&url, job, "w0"), config.clone()),
                shared_worker(&seeds, outs[1].path(), (&url, job, "w1"), config.clone()),
                shared_worker(&seeds, outs[2].path(), (&url, job, "w2"), config),
            );
            let all: Vec<_> = outs.iter().flat_map(|o| records(o.path())).collect();
            (origin, mirror, all)
        }
    };
    let one_rule_per_number = |records: &[nearcrawl_records::Record]| {
        let mut rules = std::collections::BTreeMap::<u32, BTreeSet<&str>>::new();
        for p in records.iter().filter_map(|r| r.prediction()) {
            rules.entry(p.rule_id).or_default().insert(&p.rule);
        }
        assert!(rules.values().all(|texts| texts.len() == 1), "{rules:?}");
    };

    let (origin, mirror, records) = crawl(Predict::Skip, "rules-skip").await;
    let predicted: Vec<_> = records
        .iter()
        .filter(|r| r.verdict == Verdict::Predicted)
        .collect();
    assert!(predicted.len() >= 5, "{records:#?}");
    for record in &predicted {
        let n = record.url.rsplit('=').next().unwrap();
        assert_eq!(
            record.duplicate_of.as_deref(),
            Some(origin.url(&format!("/a/{n}")).as_str())
        );
        assert_eq!(record.predicted(), Some("skip"));
        assert_eq!(mirror.site.hits(&format!("/m/story?id={n}")), 0);
    }
    let checked: Vec<_> = records
        .iter()
        .filter(|r| r.predicted() == Some("check"))
        .filter_map(|r| r.prediction())
        .collect();
    assert!(checked.iter().any(|p| p.right == Some(true)));
    one_rule_per_number(&records);

    let (_, mirror, records) = crawl(Predict::Verify, "rules-verify").await;
    let verified: Vec<_> = records
        .iter()
        .filter(|r| r.predicted() == Some("verify"))
        .collect();
    assert!(verified.len() >= 5, "{records:#?}");
    for record in verified {
        assert_eq!(record.verdict, Verdict::Unchanged, "{record:?}");
        assert_eq!(record.prediction().unwrap().right, Some(true));
        let path = &record.url[mirror.url("").len()..];
        assert_eq!(mirror.site.hits(path), 0, "a HEAD only");
    }
    one_rule_per_number(&records);
}

/// Two releases of a manual crawled by three workers, the new one answering first: the old
/// release's contents page is judged a copy of the new one's, and its links, matched with the
/// new one's, are probed against their counterparts whichever worker queued and fetched
/// them (the job's seen set and declarations, not the worker's own). The one chapter that
/// differs is fetched and kept; the others are found unchanged by a HEAD; the appendix
/// that one chapter alone names, which differs too, is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_s_links_are_probed_against_what_other_workers_fetched() {
    const CHAPTERS: u64 = 8;
    let server = LocalRedis::start(false).unwrap();
    let late = std::time::Duration::from_millis(50);
    let release = |changed: Option<u64>, delay: std::time::Duration| {
        let chapters: Vec<String> = (0..CHAPTERS).map(|n| format!("/ch{n}.html")).collect();
        let mut site = Site::new().page(
            "/index.html",
            html_page("Contents", &prose(800), "", &chapters).delayed(delay),
        );
        for (n, path) in (0..CHAPTERS).zip(&chapters) {
            let text = match changed == Some(n) {
                true => prose(900 + n),
                false => prose(810 + n),
            };
            // Chapter 5 alone names an appendix, which each release wrote its own way.
            let links: Vec<String> = match n {
                5 => vec!["/appendix.html".into()],
                _ => Vec::new(),
            };
            site = site.page(
                path,
                html_page(&format!("Chapter {n}"), &text, "", &links).delayed(delay),
            );
        }
        // Longer than the chapter: worth fetching the chapter for (`hub_min_yield`).
        let seed = 950 + 10 * u64::from(changed.is_some());
        let appendix = (seed..seed + 4).map(prose).collect::<Vec<_>>().join(" ");
        let none: [String; 0] = [];
        site.page(
            "/appendix.html",
            html_page("Appendix", &appendix, "", &none).delayed(delay),
        )
    };
    let old = serve(release(Some(3), late)).await.unwrap();
    let new = serve(release(None, std::time::Duration::ZERO))
        .await
        .unwrap();
    let seeds = format!("{}\n{}\n", old.url("/index.html"), new.url("/index.html"));
    let mut config = shared_config();
    config.dedup.tuning.links.probe_links = true;
    let outs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let url = server.url();
    tokio::join!(
        shared_worker(
            &seeds,
            outs[0].path(),
            (&url, "probes", "w0"),
            config.clone()
        ),
        shared_worker(
            &seeds,
            outs[1].path(),
            (&url, "probes", "w1"),
            config.clone()
        ),
        shared_worker(&seeds, outs[2].path(), (&url, "probes", "w2"), config),
    );
    let records: Vec<_> = outs.iter().flat_map(|o| records(o.path())).collect();
    let of = |url: String| {
        records
            .iter()
            .find(|r| r.url == url)
            .unwrap_or_else(|| panic!("{url} decided: {records:#?}"))
    };
    // The new release answers first, so its contents page is most often the original; the
    // other way round, the new release's chapter 3 differs from the old one's as much.
    let copy = match of(old.url("/index.html")).verdict.is_duplicate() {
        true => &old,
        false => &new,
    };
    let contents = of(copy.url("/index.html"));
    assert!(contents.verdict.is_duplicate(), "{records:#?}");
    let changed = of(copy.url("/ch3.html"));
    assert_eq!(changed.verdict, Verdict::Unique, "{changed:?}");
    assert!(changed.probe().is_some(), "probed first: {changed:?}");
    let unchanged = records
        .iter()
        .filter(|r| r.url.starts_with(&copy.url("/ch")) && r.verdict == Verdict::Unchanged)
        .count();
    assert!(unchanged >= 5, "{records:#?}");
    // The copy's chapter 5, however it was decided, did not lose the appendix only it
    // names: a page found unchanged is fetched for the links its counterpart named first
    // (another worker's decision named them) when they are not named on its own site and
    // weigh more than itself.
    let appendix = of(copy.url("/appendix.html"));
    assert_eq!(appendix.verdict, Verdict::Unique, "{appendix:?}");
}
