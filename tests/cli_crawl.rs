//! `nearcrawl crawl` input errors: each names the input and nothing is crawled.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::process::Command;

fn crawl(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .arg("crawl")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_bad_seed_line_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "# job\nhttp://127.0.0.1:9/\nnot a url\n").unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = crawl(&[
        "--seeds",
        seeds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!(
            "{}:3: \"not a url\" is not a URL",
            seeds.display()
        )),
        "{stderr}"
    );
    assert!(
        !out.exists(),
        "nothing is created before the input is valid"
    );
}

#[test]
fn an_unknown_config_key_or_bad_pattern_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "http://127.0.0.1:9/\n").unwrap();
    let config = dir.path().join("job.toml");
    std::fs::write(&config, "[politeness]\nper_host_delay = 5\n").unwrap();
    let out = dir.path().join("out");
    let args = [
        "--seeds",
        seeds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ];
    let (ok, stderr) = crawl(&args);
    assert!(!ok);
    assert!(
        stderr.contains("job.toml") && stderr.contains("unknown field `per_host_delay`"),
        "{stderr}"
    );
    let (ok, stderr) = crawl(&[
        "--seeds",
        seeds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--exclude",
        "(unclosed",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("scope.exclude pattern \"(unclosed\" is invalid"),
        "{stderr}"
    );
    assert!(
        !out.exists(),
        "nothing is created before the configuration is valid"
    );
}

#[test]
fn a_missing_seed_file_is_named() {
    let (ok, stderr) = crawl(&[
        "--seeds",
        "/nonexistent/seeds.txt",
        "--out",
        "/tmp/unused-nearcrawl-out",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("cannot read seed list /nonexistent/seeds.txt"),
        "{stderr}"
    );
}

#[test]
fn a_recrawl_names_the_earlier_job_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, "http://127.0.0.1:9/\n").unwrap();
    let seeds = seeds.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let missing = dir.path().join("nothing-here");
    let missing = missing.to_str().unwrap();
    let (ok, stderr) = crawl(&["--seeds", seeds, "--out", out, "--previous", missing]);
    assert!(!ok);
    assert!(
        stderr.contains(&format!("--previous {missing}: no records.jsonl there")),
        "{stderr}"
    );
    let (ok, stderr) = crawl(&["--seeds", seeds, "--out", out, "--previous", out]);
    assert!(!ok && stderr.contains("use --recrawl"), "{stderr}");
    let (ok, stderr) = crawl(&["--seeds", seeds, "--out", out, "--recrawl"]);
    assert!(!ok && stderr.contains("holds no earlier crawl"), "{stderr}");
}

/// Two local sites: the seed's (A), whose page links to 20 pages of B and to 127.0.0.2,
/// where no seed is.
async fn two_sites() -> (
    nearcrawl_demo_web::RunningSite,
    nearcrawl_demo_web::RunningSite,
    nearcrawl_demo_web::RunningSite,
) {
    use nearcrawl_demo_web::{Reply, Site, serve, serve_on};
    let text = |n: u64| {
        let mut w = nearcrawl_demo_web::Writer::new(n, 3000);
        (0..4).map(|_| w.paragraph()).collect::<Vec<_>>().join(" ")
    };
    let mut b = Site::new();
    for i in 0..20 {
        b = b.page(
            &format!("/docs/{i}"),
            Reply::html(format!(
                "<html><body><p>{}</p></body></html>",
                text(100 + i)
            )),
        );
    }
    let b = serve(b).await.unwrap();
    let internal = serve_on(
        Site::new().page(
            "/private",
            Reply::html(format!("<html><body><p>{}</p></body></html>", text(300))),
        ),
        "127.0.0.2:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let mut links: String = (0..20)
        .map(|i| format!("<a href=\"{}\">doc {i}</a> ", b.url(&format!("/docs/{i}"))))
        .collect();
    links.push_str(&format!(
        "<a href=\"{}\">private</a>",
        internal.url("/private")
    ));
    let a = serve(Site::new().page(
        "/",
        Reply::html(format!(
            "<html><body><p>{}</p>{links}</body></html>",
            text(1)
        )),
    ))
    .await
    .unwrap();
    (a, b, internal)
}

/// Runs `nearcrawl crawl` from `seed` with `flags`; stderr and the records' (url, verdict).
fn crawl_records(seed: &str, flags: &[&str]) -> (String, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{seed}\n")).unwrap();
    let out = dir.path().join("out");
    let mut args = vec![
        "--seeds",
        seeds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--per-host-delay-ms",
        "0",
    ];
    args.extend_from_slice(flags);
    let (ok, stderr) = crawl(&args);
    assert!(ok, "{stderr}");
    let records = std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                v["url"].as_str().unwrap().to_string(),
                v["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (stderr, records)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scope_flags_widen_the_hosts_and_a_refusing_scope_is_named() {
    let (a, b, internal) = two_sites().await;
    let seed = a.url("/");
    let b_docs = format!("^{}", regex_escape(&b.url("/docs/")));
    let count = |records: &[(String, String)], prefix: &str, verdict: &str| {
        records
            .iter()
            .filter(|(u, v)| u.starts_with(prefix) && v == verdict)
            .count()
    };
    // --include on another host than the seed's, without --hosts: nothing of B is crawled,
    // and the crawl says why on stderr.
    let include = ["--include", b_docs.as_str()];
    let (stderr, records) = tokio::task::block_in_place(|| crawl_records(&seed, &include));
    assert_eq!(count(&records, &b.url("/docs/"), "out-of-scope"), 20);
    assert!(
        stderr.contains("warning: the scope refused 21 of the first 21 links")
            && stderr.contains("--hosts"),
        "{stderr}"
    );
    // --hosts any: B's pages are crawled; the internal address still is not.
    let flags = [
        "--include",
        b_docs.as_str(),
        "--hosts",
        "any",
        "--max-connections-per-host",
        "4",
    ];
    let (stderr, records) = tokio::task::block_in_place(|| crawl_records(&seed, &flags));
    assert_eq!(
        count(&records, &b.url("/docs/"), "unique"),
        20,
        "{records:?}"
    );
    assert!(!stderr.contains("warning: the scope"), "{stderr}");
    let private = internal.url("/private");
    assert_eq!(count(&records, &private, "unique"), 0);
    // --allow-private: 127.0.0.2 too (it matches no --include, so none here).
    let flags = ["--hosts", "any", "--allow-private"];
    let (_, records) = tokio::task::block_in_place(|| crawl_records(&seed, &flags));
    assert_eq!(count(&records, &private, "unique"), 1, "{records:?}");
    let (_, records) = tokio::task::block_in_place(|| crawl_records(&seed, &["--hosts", "any"]));
    assert_eq!(count(&records, &private, "out-of-scope"), 1, "{records:?}");
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = ".+*?()|[]{}^$\\".contains(c);
            escape.then_some('\\').into_iter().chain(std::iter::once(c))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_progress_is_plain_lines() {
    use nearcrawl_demo_web::{Reply, Site, serve};
    // Five slow pages: the crawl lasts over a second.
    let mut site = Site::new();
    let links: String = (0..5)
        .map(|i| format!("<a href=\"/p{i}\">{i}</a>"))
        .collect();
    site = site.page(
        "/",
        Reply::html(format!("<html><body>{links}</body></html>")),
    );
    for i in 0..5 {
        site = site.page(
            &format!("/p{i}"),
            Reply::html(format!("<html><body><p>page {i}</p></body></html>"))
                .delayed(std::time::Duration::from_millis(400)),
        );
    }
    let site = serve(site).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", site.url("/"))).unwrap();
    let out = dir.path().join("out");
    let output = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
            .args(["crawl", "--seeds", seeds.to_str().unwrap(), "--out"])
            .arg(&out)
            .args(["--per-host-delay-ms", "0"])
            .env("NEARCRAWL_PROGRESS_SECS", "0.3")
            .output()
            .unwrap()
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("progress: "))
        .unwrap_or_else(|| panic!("no progress line: {stderr}"));
    assert!(
        line.contains("pages (") && line.contains("queued"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_topic_flags_make_a_focused_crawl_and_a_missing_example_is_named() {
    use nearcrawl_demo_web::{Reply, Site, serve};
    let site = serve(
        Site::new()
            .page(
                "/",
                Reply::html("<html><body><p>Welcome.</p><a href=/river>a</a> <a href=/shop>b</a></body></html>"),
            )
            .page(
                "/river",
                Reply::html("<html><body><p>The river floods the valley; rivers carve valleys and deltas over the years.</p></body></html>"),
            )
            .page(
                "/shop",
                Reply::html("<html><body><p>Shoes, shirts and hats at low prices this week only.</p></body></html>"),
            ),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", site.url("/"))).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = crawl(&[
        "--seeds",
        seeds.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--per-host-delay-ms",
        "0",
        "--topic",
        "rivers, valleys and floods",
    ]);
    assert!(ok, "{stderr}");
    let records: Vec<serde_json::Value> = std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let relevance = |suffix: &str| {
        records
            .iter()
            .find(|r| r["url"].as_str().unwrap().ends_with(suffix))
            .and_then(|r| r["relevance"].as_f64())
            .unwrap()
    };
    assert!(relevance("/river") > relevance("/shop"), "{records:?}");
    let missing = dir.path().join("no-such-example.html");
    let (ok, stderr) = crawl(&[
        "--seeds",
        seeds.to_str().unwrap(),
        "--out",
        dir.path().join("out2").to_str().unwrap(),
        "--topic-example",
        missing.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(stderr.contains("no-such-example.html"), "{stderr}");
}
