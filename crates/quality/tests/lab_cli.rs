//! The evaluation harness's own binary, `nearcrawl-lab`: its commands are there, and bad
//! input gets a clear error naming it (the measurements themselves are tested through the
//! library, in the workspace's tests/quality_*.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::process::Command;

fn lab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nearcrawl-lab"))
        .args(args)
        .output()
        .expect("nearcrawl-lab runs")
}

#[test]
fn the_lab_lists_its_measurements() {
    let out = lab(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for command in ["quality", "dedup-quality", "focus-quality"] {
        assert!(help.contains(command), "{command} missing from:\n{help}");
    }
}

#[test]
fn a_bad_size_or_web_is_named() {
    let out = lab(&["focus-quality", "--size", "huge"]);
    assert!(!out.status.success());
    let error = String::from_utf8(out.stderr).unwrap();
    assert!(error.contains("--size \"huge\""), "{error}");

    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let out = lab(&["quality", "--web", "no-such-web", "--out", out_dir]);
    assert!(!out.status.success());
    let error = String::from_utf8(out.stderr).unwrap();
    assert!(error.contains("no-such-web"), "{error}");
}
