//! Recrawls (`--previous`): a job's pages asked again with their validators. Against a server
//! that sends and honours them (nginx itself, and the test server acting as it does), nothing changed costs a few hundred bytes of
//! 304s; an edit, a removal and a new page are each found and nothing else is downloaded
//! whole. Against one without validators, byte-identical pages are told `unchanged` and their
//! bytes counted. The WARC files pass `warcio check`, their revisit records naming the
//! capture they refer to.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;
#[path = "support/nginx.rs"]
mod crawl_support_nginx;

use std::collections::BTreeMap;
use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;

use crawl_support::{local_config, page, prose, records, run, shared_worker, warc_files, warcio};
use nearcrawl_demo_web::{Site, serve_on};
use nearcrawl_engine::CrawlConfig;
use nearcrawl_records::{Change, Report, Verdict};

const PAGES: u64 = 20;

/// A page's text: about 8 kB, as the pages of a manual are (a 304 answers in about 140).
fn text(n: u64) -> String {
    (0..4)
        .map(|k| prose(n * 10 + k))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The site: `/` links to pages 1..PAGES; with `edits`, pages 3 and 7 have a few words
/// changed (3 now linking to a new page 21) and page 5 is gone.
fn site(edits: bool, validators: bool) -> Site {
    let links: Vec<String> = (1..=PAGES).map(|n| format!("/p{n}")).collect();
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    let mut site = Site::new().page("/", page("home", &text(100), &links));
    for n in 1..=PAGES {
        let mut text = text(n);
        let mut more = Vec::new();
        if edits && (n == 3 || n == 7) {
            text = text.replacen(' ', " newly edited ", 2);
        }
        if edits && n == 3 {
            more.push("/p21");
        }
        if edits && n == 5 {
            continue;
        }
        site = site.page(&format!("/p{n}"), page(&format!("page {n}"), &text, &more));
    }
    if edits {
        site = site.page("/p21", page("page 21", &text(21), &[]));
    }
    if validators {
        site.with_validators()
    } else {
        site
    }
}

fn config(previous: Option<&Path>) -> CrawlConfig {
    let mut config = local_config();
    config.previous = previous.map(Path::to_path_buf);
    config
}

/// Each page's record by path.
fn by_path(out: &Path) -> BTreeMap<String, nearcrawl_records::Record> {
    records(out)
        .into_iter()
        .map(|r| (url::Url::parse(&r.url).unwrap().path().to_string(), r))
        .collect()
}

/// The paths of the pages downloaded whole (a 200), in order.
fn downloaded_whole(pages: &BTreeMap<String, nearcrawl_records::Record>) -> Vec<&str> {
    pages
        .iter()
        .filter(|(_, r)| r.status == Some(200))
        .map(|(p, _)| p.as_str())
        .collect()
}

/// A loopback address free now: each crawl of a test serves its version of the site there.
async fn free_addr() -> SocketAddr {
    serve_on(Site::new(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
        .addr
}

/// The WARC files' headers, gzip members decompressed.
fn warc_text(out: &Path) -> String {
    let mut text = String::new();
    for file in warc_files(out) {
        let bytes = std::fs::read(file).unwrap();
        let mut decoder = flate2::read::MultiGzDecoder::new(&bytes[..]);
        let mut raw = Vec::new();
        decoder.read_to_end(&mut raw).unwrap();
        text.push_str(&String::from_utf8_lossy(&raw));
    }
    text
}

fn warcio_check(out: &Path) {
    for file in warc_files(out) {
        let check = std::process::Command::new(warcio())
            .arg("check")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "warcio check {}: {}",
            file.display(),
            String::from_utf8_lossy(&check.stdout)
        );
    }
}

/// A recrawl in which nothing changed received at most 3 % of the bytes the job it crawls
/// again did.
fn assert_little_downloaded_again(report: &Report, before: &Report) {
    assert!(
        report.bytes_fetched * 100 <= before.bytes_fetched * 3,
        "nothing changed: {} bytes against {} (at most 3 %)",
        report.bytes_fetched,
        before.bytes_fetched
    );
}

async fn crawl(site: Site, addr: SocketAddr, out: &Path, previous: Option<&Path>) -> Report {
    let server = serve_on(site, addr).await.unwrap();
    let report = run(&server.url("/"), out, config(previous)).await;
    drop(server);
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_asks_with_validators_and_downloads_only_what_changed() {
    let addr = free_addr().await;
    let [first, same, edited] = [(); 3].map(|_| tempfile::tempdir().unwrap());
    let before = crawl(site(false, true), addr, first.path(), None).await;
    assert_eq!(before.pages_fetched, PAGES + 1);

    // Nothing changed: every page answered 304.
    let report = crawl(site(false, true), addr, same.path(), Some(first.path())).await;
    let pages = by_path(same.path());
    for (path, record) in &pages {
        assert_eq!(record.verdict, Verdict::NotModified, "{path}");
        assert_eq!(record.change, Some(Change::NotModified), "{path}");
        assert!(
            record.simhash.is_some() && record.payload_digest.is_some(),
            "{path}: kept"
        );
    }
    let recrawl = report.recrawl.clone().unwrap();
    assert_eq!(
        (recrawl.previous_pages, recrawl.asked),
        (PAGES + 1, PAGES + 1)
    );
    assert_little_downloaded_again(&report, &before);
    assert_eq!(
        recrawl.hosts.values().next().unwrap().not_modified,
        PAGES + 1
    );
    let warc = warc_text(same.path());
    assert_eq!(
        warc.matches("WARC-Profile: http://netpreserve.org/warc/1.1/revisit/server-not-modified")
            .count(),
        (PAGES + 1) as usize
    );
    assert!(warc.contains(&format!("WARC-Refers-To-Target-URI: http://{addr}/p7")));
    // Each revisit names the record holding the payload, and the record says which it is.
    let first_p7 = by_path(first.path())["/p7"].warc_record_id.clone().unwrap();
    assert_eq!(
        pages["/p7"].warc_record_id.as_deref(),
        Some(first_p7.as_str())
    );
    assert!(
        warc.contains(&format!("WARC-Refers-To: {first_p7}")),
        "WARC-Refers-To"
    );
    warcio_check(same.path());

    // Two pages edited, one removed, one added; compared with the last crawl (itself a
    // recrawl: its 304s carried the captures forward).
    let report = crawl(site(true, true), addr, edited.path(), Some(same.path())).await;
    let pages = by_path(edited.path());
    let changed: Vec<&str> = pages
        .iter()
        .filter(|(_, r)| r.change == Some(Change::Changed))
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(changed, ["/p3", "/p7"]);
    assert!(pages["/p3"].change_distance.is_some());
    // Compared with a recrawl whose 304s kept their previous text: the similarity is there.
    let similarity = pages["/p3"].change_similarity.unwrap();
    assert!((0.9..1.0).contains(&similarity), "{similarity}");
    assert_eq!(pages["/p5"].change, Some(Change::Gone));
    assert_eq!(
        pages["/p21"].verdict,
        Verdict::Unique,
        "the new page reached"
    );
    assert_eq!(pages["/p21"].change, None, "new, not a revisit");
    let whole = downloaded_whole(&pages);
    assert_eq!(
        whole,
        ["/p21", "/p3", "/p7"],
        "nothing else downloaded whole"
    );
    let recrawl = report.recrawl.unwrap();
    assert_eq!(recrawl.by_change["not-modified"].pages, PAGES - 2);
    assert_eq!(recrawl.new_pages, 1);
    warcio_check(edited.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_validators_identical_pages_are_unchanged_and_their_bytes_counted() {
    let addr = free_addr().await;
    let [first, again] = [(); 2].map(|_| tempfile::tempdir().unwrap());
    let before = crawl(site(false, false), addr, first.path(), None).await;
    let report = crawl(site(true, false), addr, again.path(), Some(first.path())).await;
    let pages = by_path(again.path());
    assert_eq!(pages["/p1"].change, Some(Change::Unchanged));
    assert_eq!(
        pages["/p1"].status,
        Some(200),
        "downloaded whole: no validators"
    );
    assert_eq!(pages["/p7"].change, Some(Change::Changed));
    let similarity = pages["/p7"].change_similarity.unwrap();
    assert!(
        (0.9..1.0).contains(&similarity),
        "a few words changed: LCS similarity {similarity} to the text the first job kept"
    );
    let recrawl = report.recrawl.unwrap();
    assert_eq!(
        recrawl.by_change["unchanged"].pages,
        PAGES - 3 + 1,
        "the home page too"
    );
    assert!(
        recrawl.bytes * 10 >= before.bytes_fetched * 9,
        "the bytes are what they cost: {} of {}",
        recrawl.bytes,
        before.bytes_fetched
    );
    let warc = warc_text(again.path());
    assert!(
        warc.matches("revisit/identical-payload-digest").count() >= (PAGES - 2) as usize,
        "unchanged pages archived as revisits of their previous capture"
    );
    warcio_check(again.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_on_a_budget_asks_first_the_pages_that_changed_last_time() {
    let addr = free_addr().await;
    let [first, second, third] = [(); 3].map(|_| tempfile::tempdir().unwrap());
    crawl(site(false, false), addr, first.path(), None).await;
    crawl(site(true, false), addr, second.path(), Some(first.path())).await;
    let server = serve_on(site(true, false), addr).await.unwrap();
    let mut config = config(Some(second.path()));
    config.limits.max_pages = Some(2);
    config.limits.concurrency = 1;
    run(&server.url("/"), third.path(), config).await;
    let fetched: Vec<String> = records(third.path())
        .into_iter()
        .filter(|r| r.status.is_some())
        .map(|r| url::Url::parse(&r.url).unwrap().path().to_string())
        .collect();
    assert_eq!(
        fetched,
        ["/p3", "/p7"],
        "the two pages that changed last time"
    );
}

/// Writes page `n` of the served directory (0: the index, linking pages 1..=30 and `extra`).
fn write_page(root: &Path, n: u64, text: &str, extra: &[&str]) {
    let links: Vec<String> = match n {
        0 => (1..=30).map(|k| format!("p{k}.html")).collect(),
        _ => extra.iter().map(|l| l.to_string()).collect(),
    };
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    let name = if n == 0 {
        "index.html".to_string()
    } else {
        format!("p{n}.html")
    };
    let html = page(&format!("page {n}"), text, &links).body;
    std::fs::write(root.join(name), html).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_nginx_only_what_changed_is_downloaded_whole() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    // nginx's workers run as another user: the files must be readable by all.
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for n in 0..=30 {
        write_page(root.path(), n, &text(n), &[]);
    }
    let nginx =
        crawl_support_nginx::Nginx::serve(root.path(), &["", "etag off; if_modified_since off;"]);
    let url = |port: u16| format!("http://127.0.0.1:{port}/index.html\n");
    let [first, same, edited, plain, plain_again] = [(); 5].map(|_| tempfile::tempdir().unwrap());
    let before = run(&url(nginx.ports[0]), first.path(), config(None)).await;
    let report = run(
        &url(nginx.ports[0]),
        same.path(),
        config(Some(first.path())),
    )
    .await;
    assert_little_downloaded_again(&report, &before);
    assert!(
        records(same.path())
            .iter()
            .all(|r| r.change == Some(Change::NotModified))
    );
    warcio_check(same.path());
    // The server without validators, before the edits.
    run(&url(nginx.ports[1]), plain.path(), config(None)).await;
    let again = run(
        &url(nginx.ports[1]),
        plain_again.path(),
        config(Some(plain.path())),
    )
    .await;
    let unchanged = &again.recrawl.unwrap().by_change["unchanged"];
    assert_eq!(
        unchanged.pages, 31,
        "byte-identical pages, downloaded whole"
    );
    assert!(
        unchanged.bytes * 10 >= before.bytes_fetched * 9,
        "their bytes counted"
    );
    // Page 3 edited, page 5 removed, page 7 given a link to a new page 31.
    write_page(
        root.path(),
        3,
        &text(3).replacen(' ', " newly edited ", 2),
        &[],
    );
    std::fs::remove_file(root.path().join("p5.html")).unwrap();
    write_page(root.path(), 7, &text(7), &["p31.html"]);
    write_page(root.path(), 31, &text(31), &[]);
    run(
        &url(nginx.ports[0]),
        edited.path(),
        config(Some(first.path())),
    )
    .await;
    let pages = by_path(edited.path());
    assert_eq!(pages["/p3.html"].change, Some(Change::Changed));
    assert_eq!(pages["/p7.html"].change, Some(Change::Changed));
    assert_eq!(pages["/p5.html"].change, Some(Change::Gone));
    let whole = downloaded_whole(&pages);
    assert_eq!(
        whole,
        ["/p3.html", "/p31.html", "/p7.html"],
        "nothing else downloaded whole"
    );
    warcio_check(edited.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_of_a_page_the_server_held_unchanged_is_its_duplicate() {
    let addr = free_addr().await;
    let two = |edited: bool| {
        let more: &[&str] = if edited { &["/copy"] } else { &[] };
        let site = Site::new()
            .page("/", page("home", &text(100), &["/p1", "/p2"]))
            .page("/p1", page("page 1", &text(1), &[]))
            .page("/p2", page("page 2", &text(2), more))
            .page("/copy", page("a copy", &text(1), &[]));
        site.with_validators()
    };
    let [first, again] = [(); 2].map(|_| tempfile::tempdir().unwrap());
    crawl(two(false), addr, first.path(), None).await;
    let server = serve_on(two(true), addr).await.unwrap();
    let mut config = config(Some(first.path()));
    config.limits.concurrency = 1;
    run(&server.url("/"), again.path(), config).await;
    let pages = by_path(again.path());
    assert_eq!(pages["/p1"].verdict, Verdict::NotModified);
    assert_eq!(pages["/p2"].change, Some(Change::Changed));
    let copy = &pages["/copy"];
    assert!(copy.verdict.is_duplicate(), "{:?}", copy.verdict);
    assert_eq!(
        copy.duplicate_of.as_deref(),
        Some(server.url("/p1").as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recrawl_goes_on_from_where_the_previous_job_stopped() {
    let addr = free_addr().await;
    let [first, again] = [(); 2].map(|_| tempfile::tempdir().unwrap());
    let server = serve_on(site(false, true), addr).await.unwrap();
    let mut limited = config(None);
    limited.limits.max_pages = Some(5);
    let before = run(&server.url("/"), first.path(), limited).await;
    assert_eq!(before.pages_fetched, 5);
    run(&server.url("/"), again.path(), config(Some(first.path()))).await;
    let pages = by_path(again.path());
    let revisited = pages.values().filter(|r| r.change.is_some()).count();
    let new = pages
        .values()
        .filter(|r| r.verdict == Verdict::Unique)
        .count();
    assert_eq!((revisited, new), (5, PAGES as usize + 1 - 5), "{pages:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_of_a_shared_job_recrawl_together() {
    let redis = nearcrawl_redis_job::server::LocalRedis::start(false).unwrap();
    let addr = free_addr().await;
    let [first, w0, w1] = [(); 3].map(|_| tempfile::tempdir().unwrap());
    crawl(site(false, true), addr, first.path(), None).await;
    let server = serve_on(site(true, true), addr).await.unwrap();
    let (seeds, url) = (server.url("/"), redis.url());
    let config = config(Some(first.path()));
    let (a, b) = tokio::join!(
        shared_worker(&seeds, w0.path(), (&url, "recrawl", "w0"), config.clone()),
        shared_worker(&seeds, w1.path(), (&url, "recrawl", "w1"), config),
    );
    let mut pages = by_path(w0.path());
    let theirs = by_path(w1.path());
    let decided = pages.len() + theirs.len();
    pages.extend(theirs);
    assert_eq!(
        decided,
        pages.len(),
        "each URL decided once across the workers"
    );
    let class = |path: &str| pages[path].change;
    assert_eq!(
        (class("/p3"), class("/p7")),
        (Some(Change::Changed), Some(Change::Changed))
    );
    assert_eq!(class("/p5"), Some(Change::Gone));
    assert_eq!(
        pages["/p21"].verdict,
        Verdict::Unique,
        "the new page reached"
    );
    let not_modified = pages
        .values()
        .filter(|r| r.change == Some(Change::NotModified))
        .count();
    assert_eq!(not_modified, PAGES as usize - 2, "the rest answered 304");
    let asked: u64 = [a, b]
        .iter()
        .map(|r| r.recrawl.as_ref().unwrap().asked)
        .sum();
    assert_eq!(asked, PAGES + 1, "the workers' reports add up");
}
