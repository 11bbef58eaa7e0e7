//! Resume: the `nearcrawl` binary is killed with SIGKILL mid-crawl, several times, then run
//! again on the same output directory; and stopped with SIGINT (Ctrl-C), which writes the
//! report. No discovered URL may be lost, no URL decided twice, and only pages that were in
//! flight fetched again.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nearcrawl_demo_web::{Reply, RunningSite, Site, serve};

const PAGES: usize = 60;
const CONCURRENCY: usize = 2;

/// Page i links to 2i and 2i+1 (a binary tree), each answer delayed so a crawl takes a while.
async fn tree_site() -> RunningSite {
    let mut writer = nearcrawl_demo_web::Writer::new(99, 3000);
    let mut site = Site::new();
    for i in 1..=PAGES {
        let links: String = [2 * i, 2 * i + 1]
            .iter()
            .filter(|&&j| j <= PAGES)
            .map(|j| format!("<a href=\"/p/{j}\">page {j}</a> "))
            .collect();
        let html = format!(
            "<html><body><article><p>{}</p><p>{}</p></article>{links}</body></html>",
            writer.paragraph(),
            writer.paragraph()
        );
        site.insert(
            &format!("/p/{i}"),
            Reply::html(html).delayed(Duration::from_millis(25)),
        );
    }
    serve(site).await.unwrap()
}

/// The tree site and a job directory holding its seed list.
async fn tree_job() -> (RunningSite, tempfile::TempDir) {
    let site = tree_site().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seeds.txt"), site.url("/p/1")).unwrap();
    (site, dir)
}

fn start(seeds: &Path, out: &Path) -> Child {
    start_with(seeds, out, &[])
}

fn start_with(seeds: &Path, out: &Path, extra: &[&str]) -> Child {
    start_at(seeds, out, CONCURRENCY, extra)
}

/// [`start_with`], `concurrency` requests at once.
fn start_at(seeds: &Path, out: &Path, concurrency: usize, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(["crawl", "--seeds"])
        .arg(seeds)
        .arg("--out")
        .arg(out)
        .args([
            "--per-host-delay-ms",
            "0",
            "--concurrency",
            &concurrency.to_string(),
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nearcrawl runs")
}

fn lines(out: &Path) -> usize {
    std::fs::read_to_string(out.join("records.jsonl")).map_or(0, |t| t.lines().count())
}

async fn wait_for_records(out: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(out) < n {
        assert!(Instant::now() < deadline, "crawl made no progress");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn finish(child: Child) -> String {
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn check_complete(out: &Path, site: &RunningSite) {
    let records = crawl_support::records(out);
    let urls: Vec<&str> = records.iter().map(|r| r.url.as_str()).collect();
    let distinct: HashSet<&str> = urls.iter().copied().collect();
    assert_eq!(distinct.len(), urls.len(), "no URL decided twice");
    assert_eq!(urls.len(), PAGES, "every discovered URL decided");
    for i in 1..=PAGES {
        assert!(
            distinct.contains(site.url(&format!("/p/{i}")).as_str()),
            "page {i} decided"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_jobs_resume_without_losing_or_repeating_urls() {
    killed_and_resumed(&[]).await;
}

/// The same with the dedup stage's judge on a thread of its own (`limits.judge_thread`),
/// which keeps pages before their commits: a kill loses none of them either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_jobs_with_the_judge_away_resume_without_losing_or_repeating_urls() {
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(config.path(), "[limits]\njudge_thread = \"on\"\n").unwrap();
    let path = config.path().to_str().unwrap();
    killed_and_resumed(&["--config", path]).await;
}

/// A job killed four times mid-crawl and run to its end, with `extra` flags: every URL
/// decided once, only pages in flight at a kill fetched again.
async fn killed_and_resumed(extra: &[&str]) {
    let (site, dir) = tree_job().await;
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    let kills = [5, 17, 31, 44];
    for at in kills {
        let mut child = start_with(&seeds, &out, extra);
        wait_for_records(&out, at).await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    let summary = finish(start_with(&seeds, &out, extra));
    assert!(summary.contains(&format!("{PAGES} decisions")), "{summary}");
    check_complete(&out, &site);
    let page_fetches: usize = (1..=PAGES)
        .map(|i| site.site.hits(&format!("/p/{i}")))
        .sum();
    assert!(
        page_fetches <= PAGES + kills.len() * CONCURRENCY,
        "only pages in flight at a kill are fetched again: {page_fetches} fetches"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["decisions"], PAGES as u64);
    assert_eq!(report["queued"], 0);
}

/// A mirror's copies being sampled when the crawl is killed: the links parked on the pair of
/// sites and the samples drawn from them are kept in the store, and the resumed crawl settles
/// the mirror (a sampled copy adds a page of its own) and follows the parked copies too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_being_sampled_when_killed_is_settled_after_the_resume() {
    let (origin, mirror) = crawl_support::site_and_mirror(&[1], Duration::from_millis(40), false);
    let (origin, mirror) = (serve(origin).await.unwrap(), serve(mirror).await.unwrap());
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    let list = format!("{}\n{}\n", origin.url("/list"), mirror.url("/page"));
    std::fs::write(&seeds, list).unwrap();
    let out = dir.path().join("out");
    let mut child = start_at(&seeds, &out, 1, &[]);
    // Killed once the samples are drawn: the ten stories parked on the pair of sites, three
    // of them (a quarter, `mirror_sample_share`) queued as samples, in the order found.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(out.join("records.jsonl"))
        .is_ok_and(|t| t.contains("\"sample\":3"))
    {
        assert!(Instant::now() < deadline, "the samples never drawn");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let records = crawl_support::records(&out);
    let listing = crawl_support::record(&records, &mirror.url("/page"));
    assert_eq!(listing.fates().total("wait"), 10, "{listing:?}");
    finish(start_at(&seeds, &out, 1, &[]));
    let records = crawl_support::records(&out);
    for n in 0..10 {
        let url = mirror.url(&format!("/m/story?id={n}"));
        assert!(records.iter().any(|r| r.url == url), "story {n} decided");
    }
    let notes = crawl_support::record(&records, &mirror.url("/extra/1"));
    assert_eq!(
        notes.verdict,
        nearcrawl_records::Verdict::Unique,
        "{notes:?}"
    );
    let released = records
        .iter()
        .filter_map(|r| r.released.clone())
        .find(|r| followed(r) + r.total("drop") > 0);
    assert_eq!(
        released.map(|r| followed(&r)),
        Some(7),
        "the parked stories"
    );
}

/// A focused crawl resumes too: the tunnel and the potential each queued URL was given are
/// kept with it, the topic is built again from its sources, and the crawl's document
/// frequencies go on from what the earlier runs counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_focused_jobs_resume_without_losing_or_repeating_urls() {
    let (site, dir) = tree_job().await;
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    let config = dir.path().join("job.toml");
    // A tunnel longer than the tree is deep: every page is expanded, whatever its relevance.
    std::fs::write(
        &config,
        "[focus]\ndescription = \"the pages of a binary tree\"\ntunnel = 100\n",
    )
    .unwrap();
    let flags = ["--config", config.to_str().unwrap()];
    for at in [7, 29] {
        let mut child = start_with(&seeds, &out, &flags);
        wait_for_records(&out, at).await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    let before = lines(&out);
    finish(start_with(&seeds, &out, &flags));
    check_complete(&out, &site);
    let records = crawl_support::records(&out);
    assert!(
        records
            .iter()
            .all(|r| r.relevance.is_some() && r.off_topic.is_some()),
        "every page scored against the topic"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let counted = report["topic_pages"].as_u64().unwrap();
    let last_run = (records.len() - before) as u64;
    assert!(
        counted > last_run,
        "{counted} pages in the document frequencies: the last run scored {last_run}"
    );
    // The report's best relevance is that of the best page any run found (seeds aside).
    let best = records
        .iter()
        .filter(|r| r.depth > 0)
        .filter_map(|r| r.relevance)
        .fold(0.0f32, f32::max);
    let reported = report["topic_best"].as_f64().unwrap() as f32;
    assert!((reported - best).abs() < 0.002, "{reported} {best}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_flushes_and_writes_the_report() {
    let (site, dir) = tree_job().await;
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    let child = start(&seeds, &out);
    wait_for_records(&out, 10).await;
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let summary = finish(child);
    assert!(summary.contains("interrupted"), "{summary}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    let decided = report["decisions"].as_u64().unwrap();
    assert!(decided < PAGES as u64 && report["queued"].as_u64().unwrap() > 0);
    assert_eq!(lines(&out) as u64, decided, "records.jsonl flushed");
    finish(start(&seeds, &out));
    check_complete(&out, &site);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_endpoint_serves_prometheus_counters_during_a_crawl() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_site, dir) = tree_job().await; // served until the test ends
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let addr = format!("127.0.0.1:{port}");
    let child = start_with(&seeds, &out, &["--metrics", &addr]);
    wait_for_records(&out, 5).await;
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let pages: u64 = response
        .lines()
        .find_map(|l| l.strip_prefix("nearcrawl_pages_fetched_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{response}"));
    assert!(pages >= 5, "{response}");
    assert!(response.contains("# TYPE nearcrawl_queue_length gauge"));
    finish(child);
}

/// Runs the binary to its end; returns (success, stderr).
fn run_to_end(child: Child) -> (bool, String) {
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_or_rolled_back_state_is_an_error_never_a_silent_truncation() {
    let (site, dir) = tree_job().await;
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    // An early copy of the state, then the whole crawl.
    finish(start_with(&seeds, &out, &["--max-pages", "10"]));
    let early = dir.path().join("state-early");
    copy_dir(&out.join("state"), &early);
    finish(start(&seeds, &out));
    check_complete(&out, &site);
    let records = std::fs::read(out.join("records.jsonl")).unwrap();

    // state/ deleted: an error naming records.jsonl and the way on; nothing rewritten.
    std::fs::remove_dir_all(out.join("state")).unwrap();
    let (ok, stderr) = run_to_end(start(&seeds, &out));
    assert!(
        !ok,
        "a crawl whose state is gone must not start over silently"
    );
    assert!(
        stderr.contains("records.jsonl") && stderr.contains("--restart"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("holds {PAGES} decisions")),
        "{stderr}"
    );
    assert_eq!(std::fs::read(out.join("records.jsonl")).unwrap(), records);

    // state/ rolled back to the early copy: the same error, the same file.
    std::fs::remove_dir_all(out.join("state")).unwrap();
    copy_dir(&early, &out.join("state"));
    let (ok, stderr) = run_to_end(start(&seeds, &out));
    assert!(!ok);
    assert!(stderr.contains("accounts for 10"), "{stderr}");
    assert_eq!(std::fs::read(out.join("records.jsonl")).unwrap(), records);

    // --restart: the old outputs moved aside whole, a fresh crawl in their place.
    let stdout = finish(start_with(&seeds, &out, &["--restart"]));
    assert!(stdout.contains(&format!("{PAGES} decisions")), "{stdout}");
    check_complete(&out, &site);
    let aside = out.join("previous-1");
    assert_eq!(std::fs::read(aside.join("records.jsonl")).unwrap(), records);
    assert!(aside.join("state").is_dir() && aside.join("report.json").is_file());
}

/// Overwrites `len` bytes of `path` at `at` with a pattern no checksum matches.
fn garble(path: &Path, at: u64, len: usize) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(at)).unwrap();
    let bytes: Vec<u8> = (0..len).map(|i| (i * 151 + 7) as u8).collect();
    file.write_all(&bytes).unwrap();
}

/// The state's journal files with how many bytes of each hold data (the rest is
/// preallocated zeros).
fn journals(state: &Path) -> Vec<(std::path::PathBuf, u64)> {
    std::fs::read_dir(state)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jnl"))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let used = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
            (p, used as u64)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_state_files_are_an_error_naming_them_never_a_silent_rollback() {
    let (site, dir) = tree_job().await;
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    finish(start(&seeds, &out));
    check_complete(&out, &site);
    let records = std::fs::read(out.join("records.jsonl")).unwrap();
    let pristine = dir.path().join("state-pristine");
    copy_dir(&out.join("state"), &pristine);
    let restore = || {
        std::fs::remove_dir_all(out.join("state")).unwrap();
        copy_dir(&pristine, &out.join("state"));
    };
    let fails_naming = |what: &str| {
        let (ok, stderr) = run_to_end(start(&seeds, &out));
        assert!(!ok, "{what}: the crawl must stop");
        assert!(stderr.contains("--restart"), "{what}: {stderr}");
        assert_eq!(
            std::fs::read(out.join("records.jsonl")).unwrap(),
            records,
            "{what}: records.jsonl must not change"
        );
        stderr
    };

    // The journal cut in half, then garbled in the middle: the store recovers what reads
    // back, which is behind records.jsonl: an error naming it, nothing rolled back.
    let (journal, used) = journals(&out.join("state"))
        .into_iter()
        .max_by_key(|j| j.1)
        .unwrap();
    assert!(used > 1000, "the journal holds the crawl: {used} bytes");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&journal)
        .unwrap()
        .set_len(used / 2)
        .unwrap();
    let stderr = fails_naming("journal cut");
    assert!(stderr.contains("records.jsonl: holds"), "{stderr}");
    restore();
    garble(&journal, used / 2, 4096);
    let stderr = fails_naming("journal garbled");
    // Recovered up to the garbling (behind records.jsonl), or the journal itself reported
    // damaged, as fjall's recovery meets the bytes.
    assert!(
        stderr.contains("records.jsonl: holds") || stderr.contains("is damaged"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    // Table files garbled: the store says it is damaged and where.
    restore();
    let mut tables = 0;
    for keyspace in std::fs::read_dir(out.join("state/keyspaces")).unwrap() {
        let Ok(files) = std::fs::read_dir(keyspace.unwrap().path().join("tables")) else {
            continue;
        };
        for file in files {
            let path = file.unwrap().path();
            let len = std::fs::metadata(&path).unwrap().len();
            garble(&path, len / 3, 256);
            tables += 1;
        }
    }
    assert!(tables > 0, "a finished crawl has flushed table files");
    let stderr = fails_naming("table files garbled");
    let state = out.join("state");
    assert!(
        stderr.contains(&format!("crawl store {} is damaged", state.display())),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_recrawl_is_resumed_by_the_same_command_and_loses_nothing() {
    let (site, dir) = tree_job().await;
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    finish(start(&seeds, &out));
    for at in [10, 30] {
        let mut child = start_with(&seeds, &out, &["--recrawl"]);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !out.join(nearcrawl_records::PREVIOUS_FILE).exists() {
            assert!(Instant::now() < deadline, "the recrawl did not start");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        wait_for_records(&out, at).await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }
    let summary = finish(start_with(&seeds, &out, &["--recrawl"]));
    assert!(
        summary.contains("recrawl: 60 of the previous job's 60 pages"),
        "{summary}"
    );
    check_complete(&out, &site);
    let records = crawl_support::records(&out);
    assert!(
        records
            .iter()
            .all(|r| r.change == Some(nearcrawl_records::Change::Unchanged)),
        "every page asked again and found unchanged (the site sends no validators)"
    );
    assert!(out.join("previous-1").exists() && !out.join("previous-2").exists());
}

/// A queued URL whose stored text does not parse (a damaged or hand-edited state) is an error
/// record naming it, never a request and never a stopped crawl: the rest is crawled to its end.
/// One is queued first on the site's host (it goes out to be fetched and is recorded there),
/// one on a host of its own (no origin to ask robots.txt of: recorded by the frontier).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_url_that_does_not_parse_is_an_error_record_and_the_crawl_goes_on() {
    let (_site, dir) = tree_job().await;
    let (seeds, out) = (dir.path().join("seeds.txt"), dir.path().join("out"));
    finish(start_with(&seeds, &out, &["--max-pages", "10"]));
    let broken = ["http://not a host/p/1", "http://[not an address/"];
    {
        use nearcrawl_store::CrawlStore;
        let store = nearcrawl_store::FjallStore::open(&out.join("state")).unwrap();
        let hosts = store.hosts().unwrap();
        assert_eq!(hosts.len(), 1, "{hosts:?}");
        let own = store.host_id("broken.invalid").unwrap();
        let mut commit = nearcrawl_store::Commit::default();
        for (host, url) in [hosts[0].0, own].into_iter().zip(broken) {
            let key = nearcrawl_store::QueueKey {
                host,
                priority: 0,
                order: u64::MAX / 2,
            };
            let entry = nearcrawl_store::QueuedUrl {
                url: url.to_string(),
                depth: 1,
                ..nearcrawl_store::QueuedUrl::default()
            };
            commit.enqueue(key, nearcrawl_store::url_key(url), entry);
        }
        store.commit(commit).unwrap();
    }
    finish(start(&seeds, &out));
    let records = crawl_support::records(&out);
    for url in broken {
        let bad: Vec<_> = records.iter().filter(|r| r.url == url).collect();
        assert_eq!(bad.len(), 1, "one record for {url}");
        assert_eq!(bad[0].verdict, nearcrawl_records::Verdict::Error, "{url}");
        assert_eq!(bad[0].status, None, "never requested: {:?}", bad[0]);
        let error = bad[0].error.as_deref().unwrap_or_default();
        assert!(
            error.contains("stored URL does not parse"),
            "{url}: {error}"
        );
    }
    // Every page of the site decided once, besides.
    let pages: HashSet<&str> = records
        .iter()
        .filter(|r| !broken.contains(&r.url.as_str()))
        .map(|r| r.url.as_str())
        .collect();
    assert_eq!(pages.len(), PAGES);
    assert_eq!(records.len(), PAGES + broken.len());
}

/// Links released and fetched, a mirror's samples drawn aside.
fn followed(fates: &nearcrawl_records::LinkFates) -> u32 {
    fates.total("fetch") - fates.count("fetch", "sample")
}
