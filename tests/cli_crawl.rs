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
