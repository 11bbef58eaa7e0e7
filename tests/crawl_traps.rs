//! Crawler traps: endless spaces of URLs a site generates (an ever-deeper path, a looping
//! relative link, endless calendars, "next page" chains, session ids), each served
//! in-process on loopback, and the per-host budgets of the `[traps]` rules. Each trap must
//! stop within a few hundred pages, its records naming the rule that fired.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crawl_support::{anchored_page, html_page as page, local_config, prose, record, records, run};
use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_records::{Record, Verdict};

/// Requests whose path starts with `prefix`.
fn fetched(site: &nearcrawl_demo_web::RunningSite, prefix: &str) -> usize {
    site.site
        .requests()
        .iter()
        .filter(|(p, _)| p.starts_with(prefix))
        .count()
}

/// The records whose `trap` or `error` names `rule`.
fn naming<'a>(records: &'a [Record], rule: &str) -> Vec<&'a Record> {
    records
        .iter()
        .filter(|r| {
            r.trap.as_deref().unwrap_or_default().contains(rule)
                || (r.verdict == Verdict::Trap
                    && r.error.as_deref().unwrap_or_default().contains(rule))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ever_deeper_path_and_a_looping_relative_link_stop_as_traps() {
    let site = Site::new()
        .page(
            "/",
            page(
                "home",
                &prose(6),
                "",
                &["/loop/".to_string(), "/deep/0/".to_string()],
            ),
        )
        .generated(Arc::new(|path: &str| {
            let depth = path.matches('/').count() as u64;
            if path.starts_with("/loop/") {
                // A relative link resolved against its own page: /loop/loop/loop/...
                Some(page(
                    "loop",
                    &prose(100 + depth),
                    "",
                    &["loop/".to_string()],
                ))
            } else if let Some(rest) = path.strip_prefix("/deep/") {
                let next = rest
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()?
                    .parse::<u64>()
                    .ok()?
                    + 1;
                Some(page("deep", &prose(200 + depth), "", &[format!("{next}/")]))
            } else {
                None
            }
        }));
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    let traps: Vec<_> = records
        .iter()
        .filter(|r| r.verdict == Verdict::Trap)
        .collect();
    assert_eq!(traps.len(), 2, "{traps:#?}");
    let looped = record(&records, "/loop/loop/loop/");
    assert_eq!(looped.verdict, Verdict::Trap);
    assert!(
        looped
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("repeats \"loop/\" 3 times")
    );
    let deep = traps.iter().find(|r| r.url.contains("/deep/")).unwrap();
    assert!(
        deep.error
            .as_deref()
            .unwrap_or_default()
            .contains("max_path_segments = 24"),
        "{deep:?}"
    );
    // Each trap cost the pages before its rule fired, no more.
    let fetched = |prefix: &str| {
        site.site
            .requests()
            .iter()
            .filter(|(p, _)| p.starts_with(prefix))
            .count()
    };
    assert_eq!(fetched("/loop/"), 2);
    assert_eq!(
        fetched("/deep/"),
        23,
        "/deep/0/ .. /deep/0/.../22/ (24 segments)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calendar_whose_days_copy_their_month_stops_after_a_few_days() {
    // Month pages are unique; a day page is its month's text plus a heading, with a
    // "next day" link its month lacks, so "new anchors" alone would follow every day.
    let site = Site::new()
        .page("/", page("home", &prose(7), "", &["/cal/1".to_string()]))
        .generated(Arc::new(|path: &str| {
            let mut parts = path.strip_prefix("/cal/")?.split('/');
            let month: u64 = parts.next()?.parse().ok()?;
            if month > 3 {
                return None;
            }
            let text = prose(300 + month);
            Some(match parts.next() {
                None => {
                    let mut links = vec![format!("/cal/{month}/1")];
                    links.push(format!("/cal/{}", month + 1));
                    let links: String = ["Day 1", "Next month"]
                        .iter()
                        .zip(&links)
                        .map(|(a, l)| format!("<a href=\"{l}\">{a}</a> "))
                        .collect();
                    Reply::html(format!(
                        "<html><body><article><h1>Month {month}</h1><p>{text}</p></article><nav>{links}</nav></body></html>"
                    ))
                }
                Some(day) => {
                    let day: u64 = day.parse().ok()?;
                    Reply::html(format!(
                        "<html><body><article><h1>Month {month}, day {day}</h1><p>{text}</p></article><nav><a href=\"/cal/{month}/{}\">Next day</a></nav></body></html>",
                        day + 1
                    ))
                }
            })
        }));
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    let days = |m: u64| {
        site.site
            .requests()
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("/cal/{m}/")))
            .count()
    };
    for month in 1..=3 {
        assert_eq!(
            record(&records, &format!("/cal/{month}")).verdict,
            Verdict::Unique
        );
        assert_eq!(
            days(month),
            4,
            "month {month}: days 1-4, then the chain of copies stops"
        );
        let fourth = record(&records, &format!("/cal/{month}/4"));
        assert!(fourth.verdict.is_duplicate(), "{fourth:?}");
        assert!(
            fourth
                .trap
                .as_deref()
                .unwrap_or_default()
                .contains("max_duplicate_chain = 3"),
            "{fourth:?}"
        );
        assert_eq!(fourth.fates().count("drop", "trap"), 1);
        assert_eq!(record(&records, &format!("/cal/{month}/3")).trap, None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_calendar_of_unique_pages_stops_within_a_few_hundred() {
    // Every month and every day is a unique page. A month links its 28 days and the next
    // month; a day links the next day (across months) and its month view, so a path can
    // alternate month and day views without ever repeating a page.
    let site = Site::new()
        .page("/", page("home", &prose(7), "", &["/cal/1".to_string()]))
        .generated(Arc::new(|path: &str| {
            let mut parts = path.strip_prefix("/cal/")?.split('/');
            let month: u64 = parts.next()?.parse().ok()?;
            Some(match parts.next() {
                None => {
                    let mut links: Vec<(String, String)> = (1..=28)
                        .map(|d| (format!("/cal/{month}/{d}"), format!("Day {d}")))
                        .collect();
                    links.push((format!("/cal/{}", month + 1), "Next month".into()));
                    anchored_page(&format!("Month {month}"), &prose(1000 + month), &links)
                }
                Some(day) => {
                    let day: u64 = day.parse().ok()?;
                    let next = if day == 28 {
                        format!("/cal/{}/1", month + 1)
                    } else {
                        format!("/cal/{month}/{}", day + 1)
                    };
                    let links = [
                        (next, "Next day".to_string()),
                        (format!("/cal/{month}"), "Month view".to_string()),
                    ];
                    let text = prose(100_000 + month * 100 + day);
                    anchored_page(&format!("Month {month}, day {day}"), &text, &links)
                }
            })
        }));
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    let pages = fetched(&site, "/cal/");
    assert!(
        (12 * 29..500).contains(&pages),
        "{pages} calendar pages fetched"
    );
    assert!(!naming(&records, "max_pattern_on_path = 12").is_empty());
    // Months 1-12 whole, nothing far beyond.
    for month in 1..=12 {
        assert_eq!(
            record(&records, &format!("/cal/{month}")).verdict,
            Verdict::Unique
        );
        assert_eq!(
            record(&records, &format!("/cal/{month}/28")).verdict,
            Verdict::Unique
        );
    }
    assert_eq!(fetched(&site, "/cal/16"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_next_page_chain_of_unique_pages_stops_at_the_pattern_limit() {
    let site = Site::new()
        .page(
            "/",
            page("home", &prose(8), "", &["/list?page=1".to_string()]),
        )
        .generated(Arc::new(|path: &str| {
            let n: u64 = path.strip_prefix("/list?page=")?.parse().ok()?;
            let next = vec![(format!("/list?page={}", n + 1), "Next page".to_string())];
            Some(anchored_page(&format!("Page {n}"), &prose(5000 + n), &next))
        }));
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    assert_eq!(
        fetched(&site, "/list"),
        12,
        "pages 1-12 of the pattern list?page=*"
    );
    let last = record(&records, "/list?page=12");
    assert_eq!(last.verdict, Verdict::Unique);
    assert_eq!(last.fates().count("drop", "trap"), 1, "{last:?}");
    assert!(
        last.trap
            .as_deref()
            .unwrap_or_default()
            .contains("/list?page=*"),
        "{last:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_ids_in_every_link_cost_a_few_fetches_per_page() {
    // Twenty pages; every answer hands out a fresh visit id in all its links, under a name
    // canonicalisation knows (PHPSESSID, stripped) on /k/ and one it cannot (visit) on /u/.
    // Without learning the parameter, each page would be fetched once per page linking to
    // it: 400 fetches.
    const PAGES: u64 = 20;
    let visits = Arc::new(AtomicU64::new(0));
    let site = Site::new()
        .page(
            "/",
            page(
                "home",
                &prose(9),
                "",
                &["/k/p0".to_string(), "/u/p0".to_string()],
            ),
        )
        .generated(Arc::new(move |path: &str| {
            let (dir, rest) = path[1..].split_once('/')?;
            let n: u64 = rest.split('?').next()?.strip_prefix('p')?.parse().ok()?;
            if n >= PAGES {
                return None;
            }
            let visit = visits.fetch_add(1, Ordering::Relaxed);
            let id = format!(
                "{:016x}",
                visit.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1 << 63
            );
            let param = if dir == "k" { "PHPSESSID" } else { "visit" };
            let links: Vec<(String, String)> = (0..PAGES)
                .map(|m| (format!("/{dir}/p{m}?{param}={id}"), format!("Page {m}")))
                .collect();
            let seed = n + if dir == "k" { 0 } else { 50 };
            let body = format!("{} Your visit number is {visit}.", prose(seed));
            Some(anchored_page(&format!("Page {n}"), &body, &links))
        }));
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    // Known name: stripped by canonicalisation, every page fetched once.
    assert_eq!(fetched(&site, "/k/"), PAGES as usize);
    // Unknown name: learned from the first duplicates, then stripped from links and from
    // URLs queued before; the pages fetched under it before it was learned are held under
    // their URLs without it (42 fetches when they were fetched again under those).
    let unknown = fetched(&site, "/u/");
    assert!(
        (PAGES as usize..=PAGES as usize + PAGES as usize / 4).contains(&unknown),
        "{unknown} fetches of {PAGES} pages"
    );
    let unique = records
        .iter()
        .filter(|r| r.url.contains("/u/") && r.verdict == Verdict::Unique)
        .count();
    assert_eq!(unique, PAGES as usize);
    assert_eq!(naming(&records, "session parameter visit learned").len(), 1);
    let vetoed = naming(&records, "the session parameter visit");
    assert!(!vetoed.is_empty());
    assert!(vetoed.iter().all(|r| r.verdict == Verdict::Trap));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_host_budgets_of_patterns_and_duplicate_links_are_spent_and_recorded() {
    // /items links 20 item pages of one pattern; /copy is a near-duplicate of /items
    // whose 6 links are new (anchors its original lacks).
    let items: Vec<String> = (1..=20).map(|i| format!("/item/{i}")).collect();
    let extras: Vec<(String, String)> = (1..=6)
        .map(|i| {
            (
                format!("/extra-{}", char::from(b'a' + i)),
                format!("Extra {i}"),
            )
        })
        .collect();
    let text = prose(11);
    let mut site = Site::new()
        .page(
            "/",
            page("home", &prose(10), "", &["/items".into(), "/copy".into()]),
        )
        .page("/items", page("items", &text, "", &items))
        .page("/copy", anchored_page("items", &text, &extras));
    for i in 1..=20 {
        site = site.page(&format!("/item/{i}"), page("item", &prose(20 + i), "", &[]));
    }
    for (href, _) in &extras {
        site = site.page(href, page("extra", &prose(60 + href.len() as u64), "", &[]));
    }
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.traps.max_pages_per_pattern = 5;
    config.traps.max_duplicate_links = 2;
    config.limits.concurrency = 1;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    assert_eq!(fetched(&site, "/item/"), 5);
    // The 15 over budget are counted on the page that linked them, one record, not 15.
    let listing = record(&records, "/items");
    assert_eq!(
        (
            listing.fates().total("fetch"),
            listing.fates().count("drop", "trap")
        ),
        (5, 15),
        "{listing:?}"
    );
    assert_eq!(naming(&records, "max_pages_per_pattern = 5").len(), 1);
    let copy = record(&records, "/copy");
    assert!(copy.verdict.is_duplicate(), "{copy:?}");
    assert_eq!(copy.fates().total("fetch"), 2, "{copy:?}");
    assert_eq!(copy.fates().total("drop"), 4, "{copy:?}");
    assert!(
        copy.trap
            .as_deref()
            .unwrap_or_default()
            .contains("max_duplicate_links = 2"),
        "{copy:?}"
    );
    assert_eq!(fetched(&site, "/extra-"), 2);
}

/// A tree of pages of one pattern (`/p/N`, each linking its two children), more of them
/// than the pattern's budget: every page distinct, each earns the pattern more
/// (`traps.pattern_growth`), and the whole tree is crawled; the same tree of near-empty
/// pages earns nothing and stops at the budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_of_distinct_pages_is_never_capped_one_of_empty_pages_is() {
    const PAGES: u64 = 60;
    let tree = |distinct: bool| {
        let mut site = Site::new().page("/", page("home", &prose(1), "", &["/p/1".into()]));
        for i in 1..=PAGES {
            let children: Vec<String> = [2 * i, 2 * i + 1]
                .into_iter()
                .filter(|c| *c <= PAGES)
                .map(|c| format!("/p/{c}"))
                .collect();
            let text = match distinct {
                true => prose(100 + i),
                false => prose(100 + i).chars().take(40).collect(),
            };
            site = site.page(&format!("/p/{i}"), page("p", &text, "", &children));
        }
        site
    };
    for distinct in [true, false] {
        let site = serve(tree(distinct)).await.unwrap();
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.traps.max_pages_per_pattern = 5;
        config.traps.pattern_growth = 2;
        config.limits.concurrency = 1;
        run(&site.url("/"), out.path(), config).await;
        let records = records(out.path());
        match distinct {
            true => {
                assert_eq!(fetched(&site, "/p/"), PAGES as usize);
                assert!(naming(&records, "max_pages_per_pattern").is_empty());
            }
            false => {
                let ps: Vec<_> = records.iter().filter(|r| r.url.contains("/p/")).collect();
                assert_eq!(fetched(&site, "/p/"), 5, "{ps:#?}");
                assert!(!naming(&records, "0 of its pages distinct").is_empty());
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_that_branches_below_every_page_on_letters_stops_within_a_few_hundred() {
    // Every page under /g/ says the same short thing and links two pages below it, `a/` and
    // `b/`: /g/a/b/b/a/... (letters only: no number to count, no segment repeated thrice
    // in a row on most paths).
    let site = Site::new()
        .page("/", page("home", &prose(8), "", &["/g/".to_string()]))
        .generated(Arc::new(|path: &str| {
            path.strip_prefix("/g/")?;
            Some(page(
                "Gallery",
                "Nothing to see here yet. Come back later for more pictures.",
                "",
                &["a/".to_string(), "b/".to_string()],
            ))
        }));
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.max_pages = Some(5_000);
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let pages = fetched(&site, "/g/");
    let trapped = records
        .iter()
        .filter(|r| r.verdict == Verdict::Trap)
        .count();
    assert!(
        pages < 500,
        "{pages} pages fetched under /g/ ({trapped} trapped)"
    );
    // The pages past the limit name it, and their links went nowhere.
    let named = naming(&records, "traps.max_same_text = 100");
    assert!(!named.is_empty());
    assert!(
        named.iter().all(|r| r.fates().count("drop", "trap") == 2),
        "{named:#?}"
    );
}
