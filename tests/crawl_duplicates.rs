//! The crawler against local sites, a duplicate's outlinks: skipped with their traps cut,
//! probed where the original's lead (a large page sampled first), and hubs that led to less
//! than themselves. Every site is served in-process on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::time::Duration;

use crawl_support::{
    InOrder, in_order, local_config, page, prose, record, records, run, side_by_side,
};
use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_engine::DuplicateOutlinks;
use nearcrawl_records::Verdict;

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
    assert_eq!(copy.fates().total("drop"), 1);
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
    config.dedup.tuning.links.probe_links = true;
    config.dedup.tuning.links.hub_min_yield = 0.0;
    let report = run(&seeds, out.path(), config.clone()).await;
    let records = records(out.path());
    let top = record(&records, &new.url("/"));
    assert!(top.verdict.is_duplicate(), "{top:?}");
    assert_eq!(top.fates().total("check"), 2, "{top:?}");

    assert_eq!(crawl_support::unnamed_requests(&new), Vec::<String>::new());
    let intro = record(&records, &new.url("/intro"));
    assert!(intro.verdict.is_duplicate(), "{intro:?}");
    assert_eq!(
        intro.duplicate_of.as_deref(),
        Some(old.url("/intro").as_str())
    );
    let probe = intro.probe().expect("the probe's answer is recorded");
    assert_eq!(probe.status, Some(200));
    assert_eq!(probe.length, probe.counterpart_length);
    assert_eq!(probe.links_unknown, 1, "the old intro named /intro/1 first");
    assert!(intro.bytes > probe.bytes, "the GET's bytes and the probe's");
    assert!(new.site.head_requests().contains(&"/intro".to_string()));
    assert_eq!(new.site.hits("/intro"), 1, "fetched for its links");
    assert_eq!(intro.fates().total("check"), 1, "its own link: {intro:?}");
    let three = record(&records, &new.url("/intro/3"));
    assert!(three.verdict.is_duplicate(), "{three:?}");
    assert_eq!(three.probe().map(|p| p.links_unknown), Some(1));
    let deep = record(&records, &new.url("/intro/deep"));
    assert_eq!(deep.verdict, Verdict::Unique, "found below: {deep:?}");
    assert_eq!(deep.parent, Some(three.seq));

    let notes = record(&records, &new.url("/notes"));
    assert_eq!(notes.verdict, Verdict::Unique, "{notes:?}");
    let probe = notes.probe().expect("the probe's answer is recorded");
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
    config.dedup.tuning.links.probe_links = false;
    run(&seeds, out.path(), config).await;
    let records = crawl_support::records(out.path());
    assert_eq!(record(&records, &new.url("/")).fates().total("drop"), 2);
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
    let probe = guide.probe().expect("the probe's answer is recorded");
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
    let sample = notes.probe().and_then(|p| p.sample.as_ref());
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
    config.dedup.tuning.links.probe_samples = false;
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
/// all renamed, is probed like any page (`hub_min_yield`; the top page's record counts
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
    assert_eq!(old_table.fates().total("fetch"), 5, "a hub: {old_table:?}");
    let top = record(&records, &new.url("/"));
    assert!(top.verdict.is_duplicate(), "{top:?}");
    assert_eq!(top.fates().count("fetch", "hub"), 1, "the guide: {top:?}");
    assert_eq!(declined(top.fates()), 1, "the table: {top:?}");
    let table = record(&records, &new.url("/table"));
    assert_eq!(table.verdict, Verdict::Unchanged, "{table:?}");
    let probe = table.probe().expect("probed");
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
    config.dedup.tuning.links.hub_min_yield = 0.0;
    run(&seeds, out.path(), config).await;
    let records = crawl_support::records(out.path());
    let top = record(&records, &new.url("/"));
    assert_eq!(
        (top.fates().count("fetch", "hub"), declined(top.fates())),
        (2, 0),
        "{top:?}"
    );
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
        (top.fates().count("fetch", "hub"), declined(top.fates())),
        (1, 1),
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
    assert_eq!(
        (top.fates().count("fetch", "hub"), declined(top.fates())),
        (2, 0),
        "{top:?}"
    );
    assert_eq!(new.site.hits("/table"), 1);

    // Side by side: when the new top page is judged, the old table is not decided; its
    // copy's link waits for it, then for its links, then is probed, and the table is not
    // fetched.
    let (old, new, records) = side_by_side(|new| release(new, Ops::Pages)).await;
    let top = record(&records, &new.url("/"));
    assert!(top.verdict.is_duplicate(), "{top:?}");
    let old_table = record(&records, &old.url("/table"));
    assert_eq!(
        old_table.released.as_ref().map(|r| r.total("wait")),
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
    assert_eq!(
        (top.fates().count("fetch", "hub"), declined(top.fates())),
        (2, 0),
        "{top:?}"
    );
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

/// Links to a hub's counterpart not fetched again for what the hub led to (less than itself):
/// checked or dropped instead.
fn declined(fates: &nearcrawl_records::LinkFates) -> u32 {
    fates.count("check", "led-to-less") + fates.count("drop", "led-to-less")
}
