//! The HTML report in a real browser: Debian's chromium (scripts/browser-deps.sh installs it;
//! `NEARCRAWL_CHROMIUM` names it, else `chromium` on the PATH) opens the report of a crawl of
//! a local site headless. The page must load without an error in the browser's console, its
//! DOM must hold every chart, and a screenshot must show the charts' colours drawn.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use crawl_support::{html_page, local_config, prose, run};
use nearcrawl_demo_web::{Site, serve};

fn chromium() -> PathBuf {
    let path = std::env::var_os("NEARCRAWL_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"));
    let found = Command::new(&path).arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "{} does not run: install it with scripts/browser-deps.sh (scripts/test.sh does)",
        path.display()
    );
    path
}

/// Runs headless chromium on `file` with `args`; its stdout and stderr.
fn headless(file: &Path, args: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", file.display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_opens_in_chromium_without_errors_and_its_charts_are_drawn() {
    // A small web with unique pages and copies, so every chart has something to draw.
    let text = prose(80);
    let mut links: Vec<String> = (0..6).map(|i| format!("/p/{i}")).collect();
    links.extend((0..4).map(|i| format!("/copy/{i}")));
    let mut site = Site::new().page("/", html_page("home", &prose(81), "", &links));
    for i in 0..6 {
        site = site.page(
            &format!("/p/{i}"),
            html_page("page", &prose(90 + i), "", &[]),
        );
    }
    for i in 0..4 {
        let edited = text.replacen("the", "a", i as usize);
        site = site.page(&format!("/copy/{i}"), html_page("copy", &edited, "", &[]));
    }
    let site = serve(site).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    run(&site.url("/"), out.path(), local_config()).await;
    let report = nearcrawl_report::write(out.path()).unwrap();

    let (dom, log) = tokio::task::block_in_place(|| headless(&report, &["--dump-dom"]));
    let console_errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console_errors.is_empty(), "{console_errors:#?}");
    // Six charts of the records, and the time by stage from report.json.
    assert_eq!(dom.matches("<svg").count(), 7, "every chart in the DOM");
    assert!(dom.contains("<h2>Hosts</h2>"));
    assert!(dom.contains("<h2>Where the time went</h2>"));

    let shot = out.path().join("report.png");
    let arg = format!("--screenshot={}", shot.display());
    tokio::task::block_in_place(|| headless(&report, &[&arg, "--window-size=1000,1800"]));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let near = |p: &[u8], rgb: [u8; 3]| p.iter().zip(rgb).all(|(a, b)| a.abs_diff(b) < 24);
    let count = |rgb: [u8; 3]| {
        pixels[..info.buffer_size()]
            .chunks(channels)
            .filter(|p| near(p, rgb))
            .count()
    };
    // The charts' blue (unique pages, bars) and orange (duplicates) are on screen.
    let (blue, orange) = (count([0x2b, 0x7b, 0xb9]), count([0xd9, 0x82, 0x2b]));
    assert!(blue > 2_000, "blue pixels: {blue}");
    assert!(orange > 500, "orange pixels: {orange}");
}

#[test]
fn a_corpus_report_opens_in_chromium_without_errors() {
    // JSON lines: unique texts and edited copies, deduplicated by `nearcrawl dedup`.
    let dir = tempfile::tempdir().unwrap();
    let mut lines = String::new();
    for i in 0..8u64 {
        let text = prose(200 + i % 5).replacen("the", "a", (i / 5) as usize);
        lines.push_str(&serde_json::json!({"id": i, "text": text}).to_string());
        lines.push('\n');
    }
    let input = dir.path().join("corpus.jsonl");
    std::fs::write(&input, lines).unwrap();
    let out = dir.path().join("out");
    let status = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .arg("dedup")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let report = out.join("report.html");
    let (dom, log) = headless(&report, &["--dump-dom"]);
    let console_errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console_errors.is_empty(), "{console_errors:#?}");
    assert!(dom.contains("<h1>nearcrawl dedup report</h1>"));
    assert!(dom.contains("<h2>Over the corpus</h2>"));
    assert!(dom.contains("<h2>Largest duplicate clusters</h2>"));
    // Pages and bytes over the corpus, distance, similarity and time histograms, time by stage.
    assert_eq!(dom.matches("<svg").count(), 6, "every chart in the DOM");
}
