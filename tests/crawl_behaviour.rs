//! The crawler against local sites: robots, redirects, encodings, size cap, timeouts and
//! resets, 429 back-off, traps, duplicates and their outlinks. Every site is served in-process
//! on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::time::Duration;

use crawl_support::{count, local_config, page, prose, record, records, run, site_and_mirror};
use nearcrawl_demo_web::{Reply, RunningSite, Site, serve};
use nearcrawl_engine::{CrawlConfig, DuplicateOutlinks, Record, Verdict};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_rules_are_obeyed_and_recorded() {
    let site = serve(
        Site::new()
            .page(
                "/robots.txt",
                Reply::ok(
                    "text/plain",
                    "User-agent: *\nDisallow: /secret/\nAllow: /secret/open\n",
                ),
            )
            .page(
                "/",
                page("home", &prose(1), &["/secret/a", "/secret/open", "/public"]),
            )
            .page("/secret/a", page("a", &prose(2), &[]))
            .page("/secret/open", page("open", &prose(3), &[]))
            .page("/public", page("public", &prose(4), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    assert_eq!(
        record(&records, "/secret/a").verdict,
        Verdict::RobotsDisallowed
    );
    assert_eq!(
        site.site.hits("/secret/a"),
        0,
        "a disallowed URL is never requested"
    );
    assert_eq!(record(&records, "/secret/open").verdict, Verdict::Unique);
    assert_eq!(record(&records, "/public").verdict, Verdict::Unique);
    assert_eq!(
        site.site.hits("/robots.txt"),
        1,
        "robots.txt fetched once and cached"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_404_allows_everything_and_5xx_blocks_until_the_host_is_parked() {
    let open = serve(
        Site::new()
            .page("/", page("home", &prose(5), &["/x"]))
            .page("/x", page("x", &prose(6), &[])),
    )
    .await
    .unwrap();
    let down = serve(
        Site::new()
            .page("/robots.txt", Reply::status(503))
            .page("/", page("home", &prose(7), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.politeness.max_consecutive_failures = 3;
    run(
        &format!("{}\n{}\n", open.url("/"), down.url("/")),
        out.path(),
        config,
    )
    .await;
    let records = records(out.path());
    assert_eq!(record(&records, &open.url("/x")).verdict, Verdict::Unique);
    let blocked = record(&records, &down.url("/"));
    assert_eq!(blocked.verdict, Verdict::RobotsDisallowed);
    assert!(
        blocked
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("robots.txt unavailable"),
        "{blocked:?}"
    );
    assert_eq!(
        down.site.hits("/"),
        0,
        "nothing fetched while robots.txt is unavailable"
    );
    assert_eq!(
        down.site.hits("/robots.txt"),
        3,
        "robots.txt retried until the host is parked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_delay_spaces_requests() {
    let site = serve(
        Site::new()
            .page(
                "/robots.txt",
                Reply::ok("text/plain", "User-agent: *\nCrawl-delay: 0.3\n"),
            )
            .page("/", page("home", &prose(8), &["/a", "/b"]))
            .page("/a", page("a", &prose(9), &[]))
            .page("/b", page("b", &prose(10), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let times: Vec<_> = site.site.requests().into_iter().map(|(_, t)| t).collect();
    assert_eq!(times.len(), 4);
    // The delay runs from the end of one request to the start of the next; robots.txt's own
    // request comes before the delay is known.
    for pair in times[1..].windows(2) {
        assert!(
            pair[1] - pair[0] >= Duration::from_millis(300),
            "{:?}",
            pair[1] - pair[0]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_followed_hop_by_hop_and_loops_stopped() {
    let site = serve(
        Site::new()
            .page(
                "/",
                page("home", &prose(11), &["/old", "/loop-a", "/chain/0"]),
            )
            .page("/old", Reply::redirect(301, "/new"))
            .page("/new", page("new", &prose(12), &[]))
            .page("/loop-a", Reply::redirect(302, "/loop-b"))
            .page("/loop-b", Reply::redirect(302, "/loop-a"))
            .generated(std::sync::Arc::new(|path: &str| {
                let n: u32 = path.strip_prefix("/chain/")?.parse().ok()?;
                Some(Reply::redirect(302, &format!("/chain/{}", n + 1)))
            })),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.fetch.max_redirects = 3;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let old = record(&records, "/old");
    assert_eq!(old.verdict, Verdict::Redirect);
    assert_eq!(old.final_url.as_deref(), Some(site.url("/new").as_str()));
    let new = record(&records, "/new");
    assert_eq!(new.verdict, Verdict::Unique);
    assert_eq!(
        new.parent,
        Some(old.seq),
        "the hop is recorded as the target's parent"
    );
    assert_eq!(record(&records, "/loop-b").verdict, Verdict::Redirect);
    assert_eq!(
        site.site.hits("/loop-a"),
        1,
        "a loop ends at the first URL seen again"
    );
    let last = record(&records, "/chain/3");
    assert_eq!(last.verdict, Verdict::Error);
    assert!(
        last.error
            .as_deref()
            .unwrap_or_default()
            .contains("more than 3 redirects")
    );
    assert_eq!(site.site.hits("/chain/4"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gbk_and_gzip_pages_fingerprint_like_their_utf8_twins() {
    let text = "长江是中国最长的河流，发源于青藏高原，流经十一个省级行政区，最后注入东海。长江流域的面积约占中国国土面积的五分之一，养育了数亿人口。";
    let html = format!(
        "<html><head><title>长江</title></head><body><article><p>{text}</p><p>{text}</p></article></body></html>"
    );
    let (gbk, _, _) = encoding_rs::GBK.encode(&html);
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(13), &["/utf8", "/gbk", "/gz"]))
            .page("/utf8", Reply::html(html.clone()))
            .page(
                "/gbk",
                Reply::ok("text/html; charset=GBK", gbk.into_owned()),
            )
            .page("/gz", Reply::html(html.clone()).gzipped()),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let utf8 = record(&records, "/utf8");
    assert!(record(&records, "/gbk").little_text.is_none());
    for twin in ["/gbk", "/gz"] {
        let r = record(&records, twin);
        // The third copy's blocks are on 3 of the host's 4 pages: its template, so that page
        // has little text of its own and is fingerprinted with its title and links; it is
        // still the exact copy of its main text.
        if r.little_text.is_none() {
            assert_eq!(r.simhash, utf8.simhash, "{twin}");
        }
        assert_eq!(r.verdict, Verdict::Exact, "{twin}");
        assert_eq!(r.duplicate_of.as_deref(), Some(utf8.url.as_str()));
    }
    assert!(
        record(&records, "/gz").bytes < record(&records, "/utf8").bytes,
        "wire bytes are the compressed size"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_cap_truncates_and_records_it() {
    let big = format!("<html><body><p>{}</p></body></html>", prose(14).repeat(40));
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(15), &["/big"]))
            .page("/big", Reply::html(big)),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.fetch.max_body_bytes = 4096;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let big = record(&records, "/big");
    assert!(big.truncated);
    assert!(big.bytes < 4096 + 1024, "{}", big.bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_and_resets_are_retried_then_recorded() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(16), &["/slow", "/reset", "/fine"]))
            .page(
                "/slow",
                page("slow", &prose(17), &[]).delayed(Duration::from_secs(5)),
            )
            .page("/reset", Reply::reset())
            .page("/fine", page("fine", &prose(18), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.fetch.total_timeout_ms = 300;
    config.fetch.max_retries = 1;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let slow = record(&records, "/slow");
    assert_eq!(slow.verdict, Verdict::Error);
    assert!(
        slow.error
            .as_deref()
            .unwrap_or_default()
            .starts_with("Timeout"),
        "{slow:?}"
    );
    let reset = record(&records, "/reset");
    assert_eq!(reset.verdict, Verdict::Error);
    assert_eq!(reset.retries, Some(1), "the retry is on the record");
    assert_eq!(site.site.hits("/reset"), 2, "one retry");
    assert_eq!(
        record(&records, "/fine").verdict,
        Verdict::Unique,
        "other pages carry on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttled_host_is_retried_after_retry_after() {
    let site = serve(Site::new().page("/", page("home", &prose(19), &["/busy"])))
        .await
        .unwrap();
    // First answer 429 with Retry-After: 1, then the page.
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&calls);
    let busy_page = page("busy", &prose(20), &[]);
    let throttling = serve(
        Site::new()
            .page("/", page("home", &prose(21), &["/busy"]))
            .generated(std::sync::Arc::new(move |path: &str| {
                (path == "/busy").then(|| {
                    if counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                        Reply::status(429).header("retry-after", "1")
                    } else {
                        busy_page.clone()
                    }
                })
            })),
    )
    .await
    .unwrap();
    drop(site);
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.politeness.backoff_max_ms = 5_000;
    run(&throttling.url("/"), out.path(), config).await;
    let records = records(out.path());
    let busy = record(&records, "/busy");
    assert_eq!(busy.verdict, Verdict::Unique);
    assert_eq!(busy.status, Some(200));
    let times: Vec<_> = throttling
        .site
        .requests()
        .into_iter()
        .filter(|(p, _)| p == "/busy")
        .map(|(_, t)| t)
        .collect();
    assert_eq!(times.len(), 2);
    assert!(
        times[1] - times[0] >= Duration::from_millis(950),
        "Retry-After honoured: {:?}",
        times[1] - times[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_are_skipped_with_their_outlinks_and_traps_cut() {
    let article = prose(22);
    let site = serve(
        Site::new()
            .page(
                "/",
                page("home", &prose(23), &["/original", "/copy", "/cal/1"]),
            )
            .page("/original", page("story", &article, &["/from-original"]))
            .page(
                "/copy",
                page("story (copy)", &article, &["/only-from-copy"]),
            )
            .page("/from-original", page("o", &prose(24), &[]))
            .page("/only-from-copy", page("c", &prose(25), &[]))
            .generated(std::sync::Arc::new(|path: &str| {
                let n: u32 = path.strip_prefix("/cal/")?.parse().ok()?;
                let body = format!("Day {n}. {}", prose(26));
                Some(page("calendar", &body, &[&format!("/cal/{}", n + 1)]))
            })),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.duplicate_outlinks = DuplicateOutlinks::Skip;
    let report = run(&site.url("/"), out.path(), config.clone()).await;
    let records = records(out.path());
    let copy = record(&records, "/copy");
    assert!(copy.verdict.is_duplicate(), "{copy:?}");
    assert_eq!(
        copy.duplicate_of.as_deref(),
        Some(site.url("/original").as_str())
    );
    assert_eq!(copy.dropped, Some(1));
    assert_eq!(
        site.site.hits("/only-from-copy"),
        0,
        "a duplicate's outlinks are not followed"
    );
    assert_eq!(record(&records, "/from-original").verdict, Verdict::Unique);
    // The calendar: pages differing by their date only. With short pages a one-word change can
    // move a 64-bit simhash by more than k = 3 bits, so a day or two may pass as unique; the
    // first day recognised as a duplicate ends the trap.
    let days: Vec<_> = records.iter().filter(|r| r.url.contains("/cal/")).collect();
    let last = days.last().unwrap();
    assert!(last.verdict.is_duplicate(), "{last:?}");
    assert!(
        days.len() <= 4,
        "the trap is cut within a few pages: {}",
        days.len()
    );
    let next_day = format!("/cal/{}", days.len() + 1);
    assert_eq!(site.site.hits(&next_day), 0);
    assert_eq!(
        report.dropped_never_fetched, 2,
        "only-from-copy and the next calendar day"
    );
    assert_eq!(report.near_duplicates + report.exact_duplicates, 2);

    // The default, "new": the copy's link that leads somewhere the original's do not is
    // followed; the calendar's next day is not: the day before links to this day, and its own
    // "next" link differs from this one only in its digits (a sequence), so the trap is cut.
    let out = tempfile::tempdir().unwrap();
    config.dedup.duplicate_outlinks = DuplicateOutlinks::New;
    run(&site.url("/"), out.path(), config).await;
    let records = crawl_support::records(out.path());
    assert_eq!(record(&records, "/only-from-copy").verdict, Verdict::Unique);
    let days = records.iter().filter(|r| r.url.contains("/cal/")).count();
    assert!(days <= 4, "the trap is cut: {days} days");
}

/// A new release on a host of its own: its top page is a duplicate of the old release's,
/// and its links lead where the old one's do (relative to each site). Each is probed with
/// HEAD: the page of the same length as its counterpart and linking nowhere new is not
/// fetched (`unchanged`), the changed one is. A page of its counterpart's length whose
/// counterpart was the first to name a page is fetched for its own links (a page not
/// downloaded names none, and its counterpart's are not asked for on its site), its links
/// probed in turn, so the changed page below a run of copies is found, however deep; with
/// `probe_links` off, none is. (Each page of the run names one page about its own size:
/// `hub_min_yield` is 0 here, so each is worth fetching for it; the default's trade-off is
/// tests/crawl_duplicate_links.rs's.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicates_links_are_probed_and_only_changed_pages_fetched() {
    let top = prose(50);
    let release = |notes: &str, deep: &str| {
        Site::new()
            .page("/", page("manual", &top, &["/intro", "/notes"]))
            .page("/intro", page("intro", &prose(51), &["/intro/1"]))
            .page("/notes", page("release notes", notes, &[]))
            // Unchanged pages deeper than `max_duplicate_chain` duplicates in a row.
            .page("/intro/1", page("one", &prose(58), &["/intro/2"]))
            .page("/intro/2", page("two", &prose(59), &["/intro/3"]))
            .page("/intro/3", page("three", &prose(60), &["/intro/deep"]))
            .page("/intro/deep", page("deep", deep, &[]))
    };
    let old = serve(release(&prose(52), &prose(55))).await.unwrap();
    let new = serve(release(
        &format!("{} {}", prose(53), prose(54)),
        &format!("{} {}", prose(56), prose(57)),
    ))
    .await
    .unwrap();
    let seeds = format!("{}\n{}\n", old.url("/"), new.url("/"));
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.probe_links = true;
    config.dedup.hub_min_yield = 0.0;
    let report = run(&seeds, out.path(), config.clone()).await;
    let records = records(out.path());
    let top = record(&records, &new.url("/"));
    assert!(top.verdict.is_duplicate(), "{top:?}");
    assert_eq!(top.probed, Some(2), "{top:?}");

    assert_eq!(crawl_support::unnamed_requests(&new), Vec::<String>::new());
    let intro = record(&records, &new.url("/intro"));
    assert!(intro.verdict.is_duplicate(), "{intro:?}");
    assert_eq!(
        intro.duplicate_of.as_deref(),
        Some(old.url("/intro").as_str())
    );
    let probe = intro
        .probe
        .as_ref()
        .expect("the probe's answer is recorded");
    assert_eq!(probe.status, Some(200));
    assert_eq!(probe.length, probe.counterpart_length);
    assert_eq!(probe.links_unknown, 1, "the old intro named /intro/1 first");
    assert!(intro.bytes > probe.bytes, "the GET's bytes and the probe's");
    assert!(new.site.head_requests().contains(&"/intro".to_string()));
    assert_eq!(new.site.hits("/intro"), 1, "fetched for its links");
    assert_eq!(intro.probed, Some(1), "its own link: {intro:?}");
    let three = record(&records, &new.url("/intro/3"));
    assert!(three.verdict.is_duplicate(), "{three:?}");
    assert_eq!(three.probe.as_ref().map(|p| p.links_unknown), Some(1));
    let deep = record(&records, &new.url("/intro/deep"));
    assert_eq!(deep.verdict, Verdict::Unique, "found below: {deep:?}");
    assert_eq!(deep.parent, Some(three.seq));

    let notes = record(&records, &new.url("/notes"));
    assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    let probe = notes
        .probe
        .as_ref()
        .expect("the probe's answer is recorded");
    assert!(probe.length.is_some() && probe.length != probe.counterpart_length);
    assert!(notes.bytes > probe.bytes, "the GET's bytes and the probe's");
    assert_eq!(new.site.hits("/notes"), 1);
    assert_eq!(report.by_verdict.get("unchanged").copied().unwrap_or(0), 0);
    assert_eq!(
        report.pages_fetched, 14,
        "the probes are not pages: {report:?}"
    );

    // Off: the duplicate's links are dropped, probed or not.
    let heads = new.site.head_requests().len();
    let out = tempfile::tempdir().unwrap();
    config.dedup.probe_links = false;
    run(&seeds, out.path(), config).await;
    let records = crawl_support::records(out.path());
    assert_eq!(record(&records, &new.url("/")).dropped, Some(2));
    assert_eq!(new.site.head_requests().len(), heads);
    assert_eq!(new.site.hits("/notes"), 1, "not fetched again");
}

/// A new release whose guide is highlighted anew (the same text in other markup: its length
/// changed) and whose release notes were rewritten, both large: each probe's HEAD says the
/// length changed, so each page is sampled (parts asked with `Range`); the guide's parts have
/// the old guide's text and it is not fetched (`unchanged`), the notes' do not and they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_probed_page_whose_length_changed_is_sampled_before_it_is_fetched() {
    let top = prose(80);
    let long = |from: u64| (from..from + 24).map(prose).collect::<Vec<_>>().join(" ");
    let guide = long(100);
    // One word in eight emphasised: the same text, a length 10 to 20 % longer.
    let highlighted: String = guide
        .split(' ')
        .enumerate()
        .map(|(i, w)| match i % 8 {
            0 => format!("<em>{w}</em> "),
            _ => format!("{w} "),
        })
        .collect();
    let release = |guide: &str, notes: &str| {
        Site::new()
            .page("/", page("manual", &top, &["/guide", "/notes"]))
            .page("/guide", page("guide", guide, &[]))
            .page("/notes", page("release notes", notes, &[]))
    };
    // The old release is served until the end: the second crawl reads it too.
    let InOrder {
        old: _old,
        new,
        seeds,
        mut config,
        records,
    } = in_order(
        release(&guide, &long(200)),
        release(&highlighted, &long(300)),
    )
    .await;

    let guide = record(&records, &new.url("/guide"));
    assert_eq!(guide.verdict, Verdict::Unchanged, "{guide:?}");
    let probe = guide
        .probe
        .as_ref()
        .expect("the probe's answer is recorded");
    let (length, counterpart) = (probe.length.unwrap(), probe.counterpart_length.unwrap());
    assert!(
        length >= nearcrawl_dedup::SAMPLE_MIN_LENGTH && length > counterpart * 11 / 10,
        "{probe:?}"
    );
    let sample = probe.sample.as_ref().expect("sampled");
    assert_eq!((sample.status, sample.parts), (Some(206), 4), "{sample:?}");
    assert_eq!(sample.matched, sample.informative, "{sample:?}");
    assert!(
        guide.bytes < 5_000,
        "a head and four parts, not {length} bytes: {guide:?}"
    );
    assert_eq!(new.site.hits("/guide"), 0, "not fetched");

    let notes = record(&records, &new.url("/notes"));
    assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    let sample = notes.probe.as_ref().and_then(|p| p.sample.as_ref());
    assert!(
        sample.is_some_and(|s| s.informative >= 2 && s.matched == 0),
        "{notes:?}"
    );
    assert_eq!(new.site.hits("/notes"), 1, "fetched, once");
    assert_eq!(
        new.site.range_requests(),
        ["/guide", "/notes"],
        "one sample each"
    );

    // Without samples, the guide is fetched on its length alone.
    let out = tempfile::tempdir().unwrap();
    config.dedup.probe_samples = false;
    run(&seeds, out.path(), config).await;
    let records = crawl_support::records(out.path());
    let guide = record(&records, &new.url("/guide"));
    assert!(guide.verdict.is_duplicate(), "{guide:?}");
    assert_eq!(new.site.hits("/guide"), 1);
}

/// Two releases, the older crawled first. Both of its tables of contents led to new pages
/// (hubs): a long table to five short pages, weighing less than itself together, and a short
/// guide to three chapters longer than itself. The new release's copy of the guide is fetched
/// for what it may list (its new chapter is found); its copy of the table, whose links were
/// all renamed, is probed like any page (`dedup.hub_min_yield`; the top page's record counts
/// it in `hubs_declined`) and, its text unchanged, not fetched: the pages its counterpart
/// named first, which nothing on the new site names yet, weigh less than it
/// (`probe.led_to_less`). Its links are not known, and none is asked for under the old
/// table's names. With the rule off, it is fetched as a hub.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_that_led_to_less_than_itself_is_probed_not_fetched() {
    let (top, guide) = (prose(90), prose(91));
    let table = (100..124).map(prose).collect::<Vec<_>>().join(" ");
    let release = |new: bool, ops_are: Ops| {
        let ops: Vec<String> = (1..=5)
            .map(|n| match new {
                true => format!("/op/{n}-renamed"),
                false => format!("/op/{n}"),
            })
            .collect();
        let op_links: Vec<&str> = ops.iter().map(String::as_str).collect();
        let mut chapters = vec!["/guide/a", "/guide/b", "/guide/c"];
        if new {
            chapters.push("/guide/new");
        }
        // Crawled side by side, the new release's top page comes after the old one's, and
        // before the old table is decided.
        let top_delay = Duration::from_millis(if new { 200 } else { 0 });
        let table_delay = Duration::from_millis(if new { 0 } else { 600 });
        let mut site = Site::new()
            .page(
                "/",
                page("manual", &top, &["/table", "/guide"]).delayed(top_delay),
            )
            .page(
                "/table",
                page("instructions", &table, &op_links).delayed(table_delay),
            )
            .page("/guide", page("guide", &guide, &chapters));
        for (n, op) in ops.iter().enumerate() {
            let operand = page("operand", &prose(130 + n as u64), &[]);
            site = match ops_are {
                Ops::Pages => site.page(op, operand),
                Ops::Redirects => site
                    .page(op, Reply::redirect(301, &format!("{op}/")))
                    .page(&format!("{op}/"), operand),
                Ops::RedirectsToOne => site
                    .page(op, Reply::redirect(301, "/op/all"))
                    .page("/op/all", page("operand", &prose(130), &[])),
                Ops::Files => site.page(op, Reply::ok("application/pdf", vec![b'%'; 30_000])),
            };
        }
        for (n, chapter) in chapters.iter().enumerate() {
            let text = format!("{} {}", prose(140 + n as u64), prose(150 + n as u64));
            site = site.page(chapter, page("chapter", &text, &[]));
        }
        site
    };
    let InOrder {
        old,
        new,
        seeds,
        mut config,
        records,
    } = in_order(release(false, Ops::Pages), release(true, Ops::Pages)).await;

    let old_table = record(&records, &old.url("/table"));
    assert_eq!(old_table.enqueued, Some(5), "a hub: {old_table:?}");
    let top = record(&records, &new.url("/"));
    assert!(top.verdict.is_duplicate(), "{top:?}");
    assert_eq!(top.via_hub, Some(1), "the guide: {top:?}");
    assert_eq!(top.hubs_declined, Some(1), "the table: {top:?}");
    let table = record(&records, &new.url("/table"));
    assert_eq!(table.verdict, Verdict::Unchanged, "{table:?}");
    let probe = table.probe.as_ref().expect("probed");
    let sample = probe.sample.as_ref().expect("a large page, sampled");
    assert_eq!(
        sample.matched, sample.parts,
        "its text unchanged: {table:?}"
    );
    assert_eq!(
        (probe.links_unknown, probe.led_to_less),
        (5, true),
        "{table:?}"
    );
    assert_eq!(new.site.hits("/table"), 0, "not fetched");
    assert_eq!(crawl_support::unnamed_requests(&new), Vec::<String>::new());
    assert_eq!(new.site.hits("/guide"), 1);
    let chapter = record(&records, &new.url("/guide/new"));
    assert_eq!(chapter.verdict, Verdict::Unique, "the new chapter is found");

    // Every hub fetched again.
    let out = tempfile::tempdir().unwrap();
    config.dedup.hub_min_yield = 0.0;
    run(&seeds, out.path(), config).await;
    let records = crawl_support::records(out.path());
    let top = record(&records, &new.url("/"));
    assert_eq!((top.via_hub, top.hubs_declined), (Some(2), None), "{top:?}");
    assert_eq!(new.site.hits("/table"), 1, "fetched as a hub this time");

    // Links that redirect (no final slash): each target is queued with its link and counts
    // for it, so what the table led to is known, and it is declined as before.
    let InOrder {
        old, new, records, ..
    } = in_order(
        release(false, Ops::Redirects),
        release(true, Ops::Redirects),
    )
    .await;
    assert_eq!(crawl_support::unnamed_requests(&new), Vec::<String>::new());
    let target = record(&records, &old.url("/op/1/"));
    let old_table = record(&records, &old.url("/table"));
    assert_eq!(target.link_of, Some(old_table.seq), "{target:?}");
    assert_eq!(target.verdict, Verdict::Unique, "{target:?}");
    let top = record(&records, &new.url("/"));
    assert_eq!(
        (top.via_hub, top.hubs_declined),
        (Some(1), Some(1)),
        "{top:?}"
    );
    assert_eq!(new.site.hits("/table"), 0, "not fetched");

    // Links that redirect to a page another link reached first: where they lead is that
    // link's to tell, what the table led to is not known, and it is fetched again.
    let InOrder { new, records, .. } = in_order(
        release(false, Ops::RedirectsToOne),
        release(true, Ops::RedirectsToOne),
    )
    .await;
    let top = record(&records, &new.url("/"));
    assert_eq!((top.via_hub, top.hubs_declined), (Some(2), None), "{top:?}");
    assert_eq!(new.site.hits("/table"), 1);

    // Side by side: when the new top page is judged, the old table is not decided; its
    // copy's link waits for it, then for its links, then is probed, and the table is not
    // fetched.
    let (old, new, records) = side_by_side(|new| release(new, Ops::Pages)).await;
    let top = record(&records, &new.url("/"));
    assert!(top.verdict.is_duplicate(), "{top:?}");
    let old_table = record(&records, &old.url("/table"));
    assert_eq!(
        old_table.released.map(|r| r.parked),
        Some(1),
        "{old_table:?}"
    );
    assert_eq!(
        new.site.hits("/table"),
        0,
        "not fetched side by side either"
    );
    assert_eq!(crawl_support::unnamed_requests(&new), Vec::<String>::new());
    let chapter = record(&records, &new.url("/guide/new"));
    assert_eq!(chapter.verdict, Verdict::Unique, "{chapter:?}");

    // Files that are no pages, weighing more than the table together: new content too.
    let InOrder { new, records, .. } =
        in_order(release(false, Ops::Files), release(true, Ops::Files)).await;
    let top = record(&records, &new.url("/"));
    assert_eq!((top.via_hub, top.hubs_declined), (Some(2), None), "{top:?}");
}

/// What the operand links of the hub test lead to.
#[derive(Clone, Copy)]
enum Ops {
    /// Short pages.
    Pages,
    /// A 301 to the same path with a final slash, then a short page.
    Redirects,
    /// A 301 each to one short page (one link's target, the others' seen already).
    RedirectsToOne,
    /// Files of 30 kB that are no pages.
    Files,
}

/// A mirror's copies are sampled (`dedup.mirror_samples`): its listing copies the site's, so
/// its stories, copies of the site's articles by their titles, would not be followed; the first
/// two are, as samples, and the rest wait for them (parked). When a sample adds a page of its
/// own, the rest are followed, and every page only the mirror has is found. When the samples
/// add nothing, the rest are dropped. Without samples, no story is fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirrors_copies_are_sampled_for_pages_of_their_own() {
    let crawl = |extras: &'static [usize], samples: u32, via_redirects: bool| async move {
        let (origin, mirror) = site_and_mirror(extras, Duration::ZERO, via_redirects);
        let origin = serve(origin).await.unwrap();
        let mirror = serve(mirror).await.unwrap();
        let seeds = format!("{}\n{}\n", origin.url("/list"), mirror.url("/page"));
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.limits.concurrency = 1;
        config.dedup.mirror_samples = samples;
        run(&seeds, out.path(), config).await;
        let records = records(out.path());
        let stories = (0..10)
            .filter(|n| mirror.site.hits(&format!("/m/story?id={n}")) == 1)
            .count();
        (mirror, records, stories)
    };

    let (mirror, records, stories) = crawl(&[0, 7], 2, false).await;
    let listing = record(&records, &mirror.url("/page"));
    assert!(listing.verdict.is_duplicate(), "{listing:?}");
    assert_eq!(
        listing.links_matched_by,
        Some(nearcrawl_dedup::LinkMatch::Anchor)
    );
    assert_eq!(
        (listing.mirror_sampled, listing.parked),
        (Some(2), Some(8)),
        "{listing:?}"
    );
    let sample = record(&records, &mirror.url("/m/story?id=0"));
    assert!(sample.verdict.is_duplicate(), "{sample:?}");
    let released = records
        .iter()
        .find_map(|r| r.released)
        .expect("the parked stories released");
    assert_eq!((released.followed, released.dropped), (8, 0));
    assert_eq!(stories, 10, "every story fetched");
    for n in [0, 7] {
        let notes = record(&records, &mirror.url(&format!("/extra/{n}")));
        assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    }

    let (_, records, stories) = crawl(&[], 2, false).await;
    let released = records.iter().find_map(|r| r.released).unwrap();
    assert_eq!((released.followed, released.dropped), (0, 8));
    assert_eq!(stories, 2, "the samples only");

    let (mirror, _, stories) = crawl(&[0, 7], 0, false).await;
    assert_eq!(stories, 0);
    assert_eq!(mirror.site.hits("/extra/0"), 0, "lost behind the copies");

    // Samples that redirect: the story each leads to is the sample, and decides as above.
    let (mirror, records, stories) = crawl(&[0, 7], 2, true).await;
    assert_eq!(stories, 10, "every story fetched");
    let notes = record(&records, &mirror.url("/extra/7"));
    assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    let (_, records, stories) = crawl(&[], 2, true).await;
    let released = records.iter().find_map(|r| r.released).unwrap();
    assert_eq!((released.followed, released.dropped), (0, 8));
    assert_eq!(stories, 2, "the samples only");
}

/// Two releases crawled one request at a time, the older first, probes on.
struct InOrder {
    old: RunningSite,
    new: RunningSite,
    /// The seed list (both top pages), to crawl them again.
    seeds: String,
    /// The configuration they were crawled with.
    config: CrawlConfig,
    records: Vec<Record>,
}

/// Serves `old` and `new`, each on a host of its own, and crawls them in order.
async fn in_order(old: Site, new: Site) -> InOrder {
    let old = serve(old).await.unwrap();
    let new = serve(new).await.unwrap();
    let seeds = format!("{}\n{}\n", old.url("/"), new.url("/"));
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.dedup.probe_links = true;
    run(&seeds, out.path(), config.clone()).await;
    InOrder {
        records: records(out.path()),
        old,
        new,
        seeds,
        config,
    }
}

/// A link parked on something that can no longer be decided (here planted in the state of a
/// job before it starts: no URL, hub or mirror answers to its key) is followed when nothing
/// is left to crawl, not lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_still_parked_when_nothing_is_left_is_followed() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(500), &[]))
            .page("/waiting", page("waiting", &prose(501), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    {
        let store = nearcrawl_store::FjallStore::open(&out.path().join("state")).unwrap();
        let entry = nearcrawl_store::QueuedUrl {
            url: site.url("/waiting"),
            depth: 1,
            ..nearcrawl_store::QueuedUrl::default()
        };
        let link = nearcrawl_store::ParkedLink {
            entry,
            priority: 1,
            always: false,
        };
        let on = nearcrawl_store::url_key("nothing answers to this");
        let commit = nearcrawl_store::Commit {
            parked: vec![(on, nearcrawl_store::url_key(&site.url("/waiting")), link)],
            ..nearcrawl_store::Commit::default()
        };
        nearcrawl_store::CrawlStore::commit(&store, commit).unwrap();
    }
    let mut config = local_config();
    config.limits.concurrency = 1;
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let waiting = record(&records, &site.url("/waiting"));
    assert_eq!(waiting.verdict, Verdict::Unique, "{waiting:?}");
}

/// Serves `release(false)` (the old release) and `release(true)` (the new one), each on a host
/// of its own, and crawls both two requests at once: the sites and the records.
async fn side_by_side(release: impl Fn(bool) -> Site) -> (RunningSite, RunningSite, Vec<Record>) {
    let old = serve(release(false)).await.unwrap();
    let new = serve(release(true)).await.unwrap();
    let seeds = format!("{}\n{}\n", old.url("/"), new.url("/"));
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 2;
    run(&seeds, out.path(), config).await;
    (old, new, records(out.path()))
}

/// Two releases crawled at once: the new one's top page is judged a duplicate while the old
/// release's table of contents is being fetched (it answers slowly), so whether the link to
/// it leads to new pages is not known yet. The link is parked until the old table of contents
/// is decided; it led to new pages (a hub) outweighing it, so once those are decided the new
/// one is fetched and, through it, the new release's new chapter. The link to a page that led nowhere is probed then (and found
/// unchanged, not fetched).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicates_link_waits_for_its_counterpart_and_the_new_part_is_found() {
    let (top, toc, intro) = (prose(60), prose(61), prose(62));
    let chapters = ["/part/a", "/part/b", "/part/c"];
    let release = |new_chapter: bool| {
        let mut toc_links = chapters.to_vec();
        if new_chapter {
            toc_links.push("/part/new");
        }
        // The new release's top page comes after the old one's, before its table of contents.
        let (top_delay, toc_delay) = match new_chapter {
            true => (200, 0),
            false => (0, 800),
        };
        let mut site = Site::new()
            .page(
                "/",
                page("manual", &top, &["/part/", "/intro"])
                    .delayed(Duration::from_millis(top_delay)),
            )
            .page(
                "/part/",
                page("contents", &toc, &toc_links).delayed(Duration::from_millis(toc_delay)),
            )
            .page("/intro", page("intro", &intro, &[]));
        for (n, path) in chapters.iter().enumerate() {
            site = site.page(path, page("chapter", &prose(63 + n as u64), &[]));
        }
        site.page("/part/new", page("new chapter", &prose(70), &[]))
    };
    let (old, new, records) = side_by_side(release).await;

    let new_top = record(&records, &new.url("/"));
    assert!(new_top.verdict.is_duplicate(), "{new_top:?}");
    assert_eq!(new_top.parked, Some(2), "{new_top:?}");
    // The old table of contents led to new pages: a hub. Whether they outweigh it is known
    // once its chapters are decided (`dedup.hub_min_yield`): the link waits again, and the
    // chapter that completes it releases it, followed (the chapters outweigh the table).
    let old_toc = record(&records, &old.url("/part/"));
    let released = old_toc.released.expect("the parked link released");
    assert_eq!(
        (released.followed, released.parked, released.dropped),
        (0, 1, 0),
        "{old_toc:?}"
    );
    let completing = records
        .iter()
        .filter(|r| r.url.starts_with(&old.url("/part/")) && r.url != old.url("/part/"))
        .find_map(|r| r.released)
        .expect("a chapter releases it");
    assert_eq!((completing.followed, completing.dropped), (1, 0));
    // The link to a page that led nowhere is probed (`dedup.probe_links`): unchanged.
    let released = record(&records, &old.url("/intro")).released.unwrap();
    assert_eq!(
        (released.followed, released.probed, released.dropped),
        (0, 1, 0)
    );
    let intro = record(&records, &new.url("/intro"));
    assert_eq!(intro.verdict, Verdict::Unchanged, "{intro:?}");

    let new_toc = record(&records, &new.url("/part/"));
    assert!(new_toc.verdict.is_duplicate(), "{new_toc:?}");
    let chapter = record(&records, &new.url("/part/new"));
    assert_eq!(chapter.verdict, Verdict::Unique, "the new part is found");
    assert_eq!(
        new.site.hits("/intro"),
        0,
        "a link that led nowhere is not fetched"
    );
    for path in chapters {
        assert_eq!(
            new.site.hits(path),
            0,
            "{path}: the same chapter, not fetched"
        );
    }
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
async fn scope_limits_and_nofollow() {
    let other = serve(Site::new().page("/", page("other", &prose(30), &[])))
        .await
        .unwrap();
    let site = serve(
        Site::new()
            .page(
                "/",
                page("home", &prose(31), &[&other.url("/"), "/skip/me", "/d1"]),
            )
            .page("/d1", page("d1", &prose(32), &["/d2"]))
            .page("/d2", page("d2", &prose(33), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.scope.exclude = vec!["/skip/".into()];
    config.scope.max_depth = Some(1);
    run(&site.url("/"), out.path(), config).await;
    let records = records(out.path());
    let away = record(&records, &other.url("/"));
    assert_eq!(away.verdict, Verdict::OutOfScope);
    assert_eq!(away.error.as_deref(), Some("host not in scope"));
    assert_eq!(other.site.hits("/"), 0);
    assert_eq!(record(&records, "/skip/me").verdict, Verdict::OutOfScope);
    assert_eq!(record(&records, "/d1").verdict, Verdict::Unique);
    assert_eq!(
        record(&records, "/d2").verdict,
        Verdict::OutOfScope,
        "depth 2 > max_depth 1"
    );
    assert_eq!(count(&records, Verdict::Unique), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nofollow_links_and_pages_are_not_followed() {
    let site = serve(
        Site::new()
            .page(
                "/",
                Reply::html(format!(
                    "<html><body><p>{}</p><a href=/nf>nf</a> <a rel=\"ugc nofollow\" href=/ugc>ugc</a></body></html>",
                    prose(34)
                )),
            )
            .page(
                "/nf",
                Reply::html(format!(
                    "<html><head><meta name=robots content=nofollow></head><body><p>{}</p><a href=/hidden>x</a></body></html>",
                    prose(35)
                )),
            )
            .page("/hidden", page("hidden", &prose(36), &[]))
            .page("/ugc", page("ugc", &prose(37), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    assert_eq!(record(&records, "/nf").robots, ["nofollow"]);
    assert_eq!(record(&records, "/nf").enqueued, Some(0));
    assert_eq!(site.site.hits("/hidden"), 0);
    assert_eq!(site.site.hits("/ugc"), 0);
    assert_eq!(records.len(), 2);
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
    let predicted = nearcrawl_engine::what_if(baseline.path()).unwrap();
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
    let err = nearcrawl_engine::what_if(deduped.path()).unwrap_err();
    assert!(err.to_string().contains("--no-dedup"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_named_by_robots_txt_seed_the_frontier_when_enabled() {
    let urlset = |paths: &[&str]| -> String {
        let urls: String = paths
            .iter()
            .map(|p| format!("<url><loc>{p}</loc></url>"))
            .collect();
        format!(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(urlset(&[&format!("{base}/hidden-2")]).as_bytes())
            .unwrap();
        e.finish().unwrap()
    };
    let site = Site::new()
        .page("/robots.txt", Reply::ok("text/plain", format!("User-agent: *\nAllow: /\nSitemap: {base}/sitemap-index.xml\n")))
        .page("/", page("home", &prose(80), &[]))
        .page(
            "/sitemap-index.xml",
            Reply::ok("application/xml", format!("<sitemapindex><sitemap><loc>{base}/s1.xml</loc></sitemap><sitemap><loc>{base}/s2.xml.gz</loc></sitemap></sitemapindex>")),
        )
        .page("/s1.xml", Reply::ok("application/xml", urlset(&[&format!("{base}/hidden-1"), "http://elsewhere.example/x"])))
        .page("/s2.xml.gz", Reply::ok("application/gzip", gz))
        .page("/hidden-1", page("h1", &prose(81), &[]))
        .page("/hidden-2", page("h2", &prose(82), &[]));
    let addr: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let site = nearcrawl_demo_web::serve_on(site, addr).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.links.sitemaps = true;
    run(&site.url("/"), out.path(), config.clone()).await;
    let records = records(out.path());
    assert_eq!(
        record(&records, "/sitemap-index.xml").verdict,
        Verdict::Sitemap
    );
    assert_eq!(
        record(&records, "/s1.xml").enqueued,
        Some(1),
        "the other host is out of scope"
    );
    assert_eq!(record(&records, "/hidden-1").verdict, Verdict::Unique);
    assert_eq!(
        record(&records, "/hidden-2").verdict,
        Verdict::Unique,
        "gzip sitemap read"
    );
    // Off by default.
    let out = tempfile::tempdir().unwrap();
    config.links.sitemaps = false;
    run(&site.url("/"), out.path(), config).await;
    assert_eq!(crawl_support::records(out.path()).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_robots_tag_and_canonical_are_honoured() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(90), &["/tagged", "/variant?sort=asc"]))
            .page("/tagged", page("tagged", &prose(91), &["/behind-tag"]).header("x-robots-tag", "noindex, nofollow"))
            .page("/behind-tag", page("b", &prose(92), &[]))
            .page(
                "/variant?sort=asc",
                Reply::html(format!(
                    "<html><head><link rel=canonical href=/canonical></head><body><p>{}</p></body></html>",
                    prose(93)
                )),
            )
            .page("/canonical", page("canonical", &prose(94), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let records = records(out.path());
    let tagged = record(&records, "/tagged");
    assert_eq!(tagged.robots, ["noindex", "nofollow"]);
    assert_eq!(site.site.hits("/behind-tag"), 0);
    let variant = record(&records, "/variant?sort=asc");
    assert_eq!(
        variant.canonical.as_deref(),
        Some(site.url("/canonical").as_str())
    );
    assert_eq!(
        record(&records, "/canonical").parent,
        Some(variant.seq),
        "the canonical target is queued"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_rate_cap_spaces_all_requests() {
    let site = serve(
        Site::new()
            .page("/", page("home", &prose(95), &["/1", "/2", "/3", "/4"]))
            .page("/1", page("1", &prose(96), &[]))
            .page("/2", page("2", &prose(97), &[]))
            .page("/3", page("3", &prose(98), &[]))
            .page("/4", page("4", &prose(99), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.politeness.global_requests_per_second = 8;
    config.politeness.max_connections_per_host = 4;
    run(&site.url("/"), out.path(), config).await;
    let times: Vec<_> = site.site.requests().into_iter().map(|(_, t)| t).collect();
    assert_eq!(times.len(), 6, "robots.txt and five pages");
    let span = times[5] - times[0];
    assert!(
        span >= Duration::from_millis(5 * 125 - 20),
        "6 requests at 8/s take 625 ms at least: {span:?}"
    );
}

/// A new release crawled side by side with the old one (here, the old release's chapter
/// answers slowly). Once the new release's top page is found to copy the old one's (same
/// path), a link to the new release's copy of the chapter, found on a page of its own, waits
/// until the old chapter is decided: the copy is then judged against it, a duplicate, and its
/// links are not followed. Fetched first, it would have been kept as an original and its
/// subtree crawled too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copying_sites_link_waits_for_its_counterpart_and_is_judged_against_it() {
    let (top, chapter, child) = (prose(80), prose(81), prose(82));
    let release = |new: bool| {
        let mut top_links = vec!["/chapter"];
        if new {
            top_links.push("/news");
        }
        let (top_delay, chapter_delay) = if new { (100, 0) } else { (0, 800) };
        let mut site = Site::new()
            .page(
                "/",
                page("manual", &top, &top_links).delayed(Duration::from_millis(top_delay)),
            )
            .page(
                "/chapter",
                page("chapter", &chapter, &["/chapter/child"])
                    .delayed(Duration::from_millis(chapter_delay)),
            )
            .page("/chapter/child", page("child", &child, &[]));
        if new {
            site = site.page("/news", page("news", &prose(83), &["/chapter"]));
        }
        site
    };
    let (old, new, records) = side_by_side(release).await;

    assert!(record(&records, &new.url("/")).verdict.is_duplicate());
    let news = record(&records, &new.url("/news"));
    assert_eq!(news.verdict, Verdict::Unique, "{news:?}");
    assert_eq!(
        news.parked,
        Some(1),
        "its link waits for the old chapter: {news:?}"
    );
    let copy = record(&records, &new.url("/chapter"));
    assert!(
        copy.verdict.is_duplicate(),
        "judged against the old chapter: {copy:?}"
    );
    assert_eq!(
        copy.duplicate_of.as_deref(),
        Some(old.url("/chapter").as_str())
    );
    assert_eq!(
        new.site.hits("/chapter/child"),
        0,
        "the copy's subtree is not crawled"
    );
    assert_eq!(old.site.hits("/chapter/child"), 1);
}
