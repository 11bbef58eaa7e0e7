//! Focused crawls against local sites: relevant links first across hosts, tunnelling through
//! off-topic pages (seeds always expanded), and a topic given as terms, example pages (URLs
//! and files) or a description. Every site is served in-process on 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::path::Path;
use std::sync::Arc;

use crawl_support::{anchored_page, local_config, prose, record, records, run, serve_at};
use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_engine::{CrawlConfig, Job, Progress, crawl};
use nearcrawl_frontier::parse_seeds;
use nearcrawl_records::Verdict;

fn page(title: &str, body: &str, links: &[(&str, &str)]) -> Reply {
    anchored_page(title, body, links)
}

fn river_text(n: u64) -> String {
    format!(
        "The river flows through the valley; river floods shape the river valley and its \
         watershed. {}",
        prose(40 + n)
    )
}

fn rivers(config: &mut CrawlConfig) {
    config.focus.terms = [
        ("river".to_string(), 2.0),
        ("valley".to_string(), 1.0),
        ("flood".to_string(), 1.0),
    ]
    .into_iter()
    .collect();
    // The river pages are one river sentence and five paragraphs of other prose.
    config.focus.threshold = 0.05;
}

/// Crawls from `seeds` on the rivers topic, one request at a time.
async fn rivers_one_at_a_time(seeds: &str, out: &Path) {
    let mut config = local_config();
    config.limits.concurrency = 1;
    rivers(&mut config);
    run(seeds, out, config).await;
}

/// The paths requested from `site` after its first `skip` requests, in order, robots.txt
/// left out.
fn order(site: &nearcrawl_demo_web::RunningSite, skip: usize) -> Vec<String> {
    site.site
        .requests()
        .into_iter()
        .skip(skip)
        .map(|(p, _)| p)
        .filter(|p| p != "/robots.txt")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn focused_crawl_fetches_relevant_links_first_and_prunes_off_topic_pages() {
    let site = serve(
        Site::new()
            .page(
                "/",
                Reply::html(format!(
                    "<html><body><p>{}</p><a href=/off1>Stock market news</a> <a href=/off2>Celebrity gossip</a> <a href=/on1>River valley floods</a> <a href=/on2>The river delta</a></body></html>",
                    river_text(0)
                )),
            )
            .page("/on1", page("river", &river_text(1), &[("/on1/more", "more")]))
            .page("/on2", page("river", &river_text(2), &[]))
            .page("/on1/more", page("river", &river_text(3), &[]))
            .page("/off1", page("stocks", &prose(50), &[("/off1/more", "more")]))
            .page("/off2", page("gossip", &prose(51), &[]))
            .page("/off1/more", page("stocks", &prose(52), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    rivers(&mut config);
    config.focus.tunnel = 0;
    run(&site.url("/"), out.path(), config).await;
    let order = order(&site, 0);
    let at = |p: &str| order.iter().position(|x| x == p).unwrap_or(usize::MAX);
    assert!(
        at("/on1") < at("/off1") && at("/on2") < at("/off1") && at("/on2") < at("/off2"),
        "{order:?}"
    );
    let records = records(out.path());
    let off = record(&records, "/off1");
    assert!(off.relevance.unwrap() < 0.05, "{off:?}");
    assert_eq!(off.off_topic, Some(1));
    assert_eq!(
        off.fates().total("fetch"),
        0,
        "no tunnel: an off-topic page is not expanded"
    );
    assert_eq!(site.site.hits("/off1/more"), 0);
    let on = record(&records, "/on1/more");
    assert_eq!(on.verdict, Verdict::Unique);
    assert_eq!(on.off_topic, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_off_topic_seed_leads_through_a_tunnel_to_its_topic() {
    // A language chooser, a table of contents and a list of modules: none of them about
    // rivers; the river pages are three off-topic pages away from the seed (the seed, where
    // the user wants to be, starts no tunnel).
    let site = serve(
        Site::new()
            .page(
                "/",
                page("Choose a language", &prose(60), &[("/en/", "English")]),
            )
            .page(
                "/en/",
                page(
                    "Contents",
                    &prose(61),
                    &[("/en/mods/", "Modules"), ("/en/misc1", "Miscellany")],
                ),
            )
            .page(
                "/en/mods/",
                page("Modules", &prose(62), &[("/en/mods/water", "water")]),
            )
            .page(
                "/en/mods/water",
                page("Rivers", &river_text(4), &[("/en/mods/delta", "the delta")]),
            )
            .page("/en/mods/delta", page("Deltas", &river_text(5), &[]))
            .page(
                "/en/misc1",
                page("Misc", &prose(63), &[("/en/misc2", "more")]),
            )
            .page(
                "/en/misc2",
                page("Misc", &prose(64), &[("/en/misc3", "more")]),
            )
            .page(
                "/en/misc3",
                page("Misc", &prose(65), &[("/en/misc4", "more")]),
            )
            .page("/en/misc4", page("Misc", &prose(66), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    rivers(&mut config);
    config.focus.tunnel = 3;
    let report = run(&site.url("/"), out.path(), config).await;
    // The focus work is timed as a stage of its own.
    let focus = report.run_stages.iter().find(|s| s.stage == "focus");
    assert!(
        focus.is_some_and(|s| s.total_ms > 0.0),
        "{:?}",
        report.run_stages
    );
    let records = records(out.path());
    let seed = record(&records, "/");
    assert!(
        seed.fates().total("fetch") == 1,
        "a seed is always expanded: {seed:?}"
    );
    assert_eq!(seed.off_topic, Some(0), "a seed starts no tunnel");
    assert_eq!(record(&records, "/en/mods/").off_topic, Some(2));
    let water = record(&records, "/en/mods/water");
    assert_eq!(water.off_topic, Some(0), "{water:?}");
    assert_eq!(site.site.hits("/en/mods/delta"), 1);
    let misc3 = record(&records, "/en/misc3");
    assert_eq!(misc3.off_topic, Some(4));
    assert_eq!(
        misc3.fates().total("fetch"),
        0,
        "past the tunnel: {misc3:?}"
    );
    assert_eq!(site.site.hits("/en/misc4"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_best_link_of_any_host_goes_first() {
    let off_links: Vec<(String, String)> = (1..=4)
        .map(|i| (format!("/a{i}"), format!("shares {i}")))
        .collect();
    let on_links: Vec<(String, String)> = (1..=4)
        .map(|i| (format!("/r{i}"), format!("river valley {i}")))
        .collect();
    let as_refs = |links: &[(String, String)]| -> Vec<(String, String)> { links.to_vec() };
    let mut markets = Site::new();
    let mut waters = Site::new();
    let refs: Vec<(&str, &str)> = off_links
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    markets = markets.page("/", page("Markets", &prose(70), &refs));
    for (i, (href, _)) in as_refs(&off_links).iter().enumerate() {
        markets = markets.page(href, page("Shares", &prose(71 + i as u64), &[]));
    }
    let refs: Vec<(&str, &str)> = on_links
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    waters = waters.page("/", page("Rivers", &river_text(6), &refs));
    for (i, (href, _)) in as_refs(&on_links).iter().enumerate() {
        waters = waters.page(href, page("River", &river_text(7 + i as u64), &[]));
    }
    // Two hosts: 127.0.0.1 and 127.0.0.2.
    let markets = serve_at(markets, "127.0.0.1").await;
    let waters = serve_at(waters, "127.0.0.2").await;
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    config.limits.concurrency = 1;
    config.scope.hosts = nearcrawl_frontier::HostScope::Any;
    rivers(&mut config);
    // Priority alone (no fetch given to the host fetched least).
    config.focus.explore_every = 0;
    let seeds = format!("{}\n{}\n", markets.url("/"), waters.url("/"));
    run(&seeds, out.path(), config).await;
    let records = records(out.path());
    let fetched: Vec<&str> = records
        .iter()
        .filter(|r| r.status == Some(200) && r.depth == 1)
        .map(|r| r.url.as_str())
        .collect();
    let first_market = fetched.iter().position(|u| u.contains("/a")).unwrap();
    let last_river = fetched.iter().rposition(|u| u.contains("/r")).unwrap();
    assert!(
        last_river < first_market,
        "every river page before any market page, across hosts: {fetched:?}"
    );
}

async fn crawl_with(seeds: &str, out: &Path, config: CrawlConfig) -> Result<(), String> {
    let seeds = parse_seeds(seeds, Path::new("seeds.txt")).unwrap();
    let job = Job {
        seeds,
        out_dir: out.to_path_buf(),
        config,
        analyzer: nearcrawl_dedup::AnalyzerConfig::default(),
        shared_index: None,
        redis: None,
    };
    crawl(job, std::future::pending(), Arc::new(Progress::default()))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_from_example_pages_and_a_description() {
    let coroutine = |n: u64| {
        format!(
            "Coroutines and tasks run on the event loop; an awaitable task wraps a coroutine \
             and the event loop schedules it. {}",
            prose(80 + n)
        )
    };
    let site = serve(
        Site::new()
            .page(
                "/",
                page(
                    "Library",
                    &prose(90),
                    &[
                        ("/re", "re"),
                        ("/email", "email"),
                        ("/tasks", "tasks"),
                        ("/loop", "loop"),
                    ],
                ),
            )
            .page("/example", page("Example", &coroutine(0), &[]))
            .page("/re", page("Patterns", &prose(91), &[]))
            .page("/email", page("Messages", &prose(92), &[]))
            .page("/tasks", page("Tasks", &coroutine(1), &[]))
            .page("/loop", page("Loop", &coroutine(2), &[])),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("example.txt");
    std::fs::write(&file, coroutine(3)).unwrap();
    for (examples, description) in [
        (vec![site.url("/example")], ""),
        (vec![file.display().to_string()], ""),
        (Vec::new(), "coroutines, tasks and the event loop"),
    ] {
        let out = tempfile::tempdir().unwrap();
        let mut config = local_config();
        config.limits.concurrency = 1;
        config.focus.examples = examples.clone();
        config.focus.description = description.to_string();
        let before = site.site.requests().len();
        crawl_with(&site.url("/"), out.path(), config)
            .await
            .unwrap();
        let order = order(&site, before);
        let at = |p: &str| order.iter().position(|x| x == p).unwrap_or(usize::MAX);
        assert!(
            at("/tasks") < at("/re") && at("/loop") < at("/re") && at("/loop") < at("/email"),
            "{examples:?} {description:?}: {order:?}"
        );
        let records = records(out.path());
        assert!(record(&records, "/tasks").relevance > record(&records, "/re").relevance);
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
                .unwrap();
        let topic = report["topic"].as_array().unwrap();
        assert!(!topic.is_empty(), "the topic's words are reported");
    }
    // An example that cannot be had stops the crawl before it starts, naming the example.
    let out = tempfile::tempdir().unwrap();
    let mut config = local_config();
    let missing = dir.path().join("missing.html").display().to_string();
    config.focus.examples = vec![missing.clone()];
    let err = crawl_with(&site.url("/"), out.path(), config)
        .await
        .unwrap_err();
    assert!(err.contains(&missing), "{err}");
    let mut config = local_config();
    config.focus.examples = vec![site.url("/nowhere")];
    let err = crawl_with(&site.url("/"), out.path(), config)
        .await
        .unwrap_err();
    assert!(err.contains("/nowhere") && err.contains("404"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_better_link_to_a_queued_url_moves_it_up_and_names_its_page() {
    // The seed queues /shares on a weak link; /r, about rivers, links to it as a river page:
    // it is reached through /r now, and /r's record says it moved a link up.
    let site = serve(
        Site::new()
            .page(
                "/",
                page(
                    "Home",
                    &prose(80),
                    &[("/shares", "shares"), ("/r", "river valley")],
                ),
            )
            .page(
                "/r",
                page(
                    "River",
                    &river_text(81),
                    &[("/shares", "river flood valley")],
                ),
            )
            .page("/shares", page("Shares", &prose(82), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    rivers_one_at_a_time(&site.url("/"), out.path()).await;
    let records = records(out.path());
    let r = record(&records, "/r");
    assert_eq!(r.fates().raised, 1, "{r:?}");
    let shares = record(&records, "/shares");
    assert_eq!(
        shares.parent,
        Some(r.seq),
        "reached through /r now: {shares:?}"
    );
    assert_eq!(site.site.hits("/shares"), 1, "fetched once");
    assert_eq!(record(&records, "/").fates().raised, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_after_a_link_ranks_it_when_its_anchor_says_nothing() {
    // Two links whose anchors say nothing of the topic, in a list that describes them: the
    // one described as about rivers is fetched first, though found second.
    let seed = Reply::html(format!(
        "<html><head><title>Index</title></head><body><p>{}</p><ul>\
         <li><a href=\"/x\">item one</a> stock prices and shares</li>\
         <li><a href=\"/y\">item two</a> the river valley and its floods</li></ul></body></html>",
        prose(90)
    ));
    let site = serve(
        Site::new()
            .page("/", seed)
            .page("/x", page("One", &prose(91), &[]))
            .page("/y", page("Two", &prose(92), &[])),
    )
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    rivers_one_at_a_time(&site.url("/"), out.path()).await;
    assert_eq!(order(&site, 0), ["/", "/y", "/x"]);
}
