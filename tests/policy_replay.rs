//! The link policy decides alone what the crawl decided with it: a crawl journals the
//! policy's input events (`links.policy_events`), and `nearcrawl policy-replay` feeds them to
//! the policy with nothing else and gets every link's fate back, on the generated web (mirrors
//! and their samples, URL variants, traps) and on a real web no one here wrote (two Clang
//! releases: hubs, probes, pages changed in place). A journal whose fate was changed is
//! refused at the line that holds it.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::path::Path;
use std::process::Command;

use nearcrawl_quality::{RealSize, RealWeb, RunConfig, run, run_real};

/// `nearcrawl policy-replay FILE`: whether it succeeded, and what it printed.
fn replay(file: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .arg("policy-replay")
        .arg(file)
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The journal of the dedup crawl under `out` replays to the same fates (at least
/// `at_least` of them), and the same journal with one found link's fate changed does not.
fn replays(out: &Path, at_least: u64) {
    let journal = out.join("dedup").join("policy-events.jsonl");
    let (ok, text) = replay(&journal);
    assert!(ok, "{text}");
    let fates: u64 = text
        .split(" events, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(fates >= at_least, "{fates} fates: {text}");

    // A found link whose fate the policy asked the crawl about, told another fate.
    let lines: Vec<String> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    // Links found, the URL rules asked, and what they learned from.
    for kind in ["found", "rule-fate", "learned"] {
        let event = format!(r#""event":"{kind}""#);
        assert!(lines.iter().any(|l| l.contains(&event)), "no {kind} event");
    }
    // (Fetched or dropped: the two fates the tampering swaps, each with what decided it.)
    let swappable = |l: &String| {
        let event: serde_json::Value = serde_json::from_str(l).unwrap();
        event["event"] == "found"
            && l.contains(r#""asked":"#)
            && ["fetch", "drop"].contains(&event["fate"]["fate"].as_str().unwrap_or(""))
    };
    let at = lines
        .iter()
        .position(swappable)
        .expect("a link whose fate turned on what the crawl knew");
    let mut changed = lines.clone();
    let mut event: serde_json::Value = serde_json::from_str(&lines[at]).unwrap();
    let other = match event["fate"]["fate"] == "fetch" {
        true => "drop",
        false => "fetch",
    };
    event["fate"]["fate"] = other.into();
    changed[at] = event.to_string();
    assert_ne!(changed[at], lines[at]);
    let tampered = out.join("tampered.jsonl");
    std::fs::write(&tampered, changed.join("\n") + "\n").unwrap();
    let (ok, text) = replay(&tampered);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "tampered.jsonl:{}: the policy decided otherwise",
            at + 1
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_web_s_link_fates_replay_from_the_journal_alone() {
    let out = tempfile::tempdir().unwrap();
    let mut config = RunConfig::default();
    config.crawl.links.policy_events = true;
    let measures = run(&config, out.path()).await.unwrap();
    assert!(measures.should_mark > 0, "{}", measures.summary());
    replays(out.path(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_web_s_link_fates_replay_from_the_journal_alone() {
    let out = tempfile::tempdir().unwrap();
    let mut config = RunConfig::default();
    config.crawl.links.policy_events = true;
    let measures = run_real(
        RealWeb::Clang14To16,
        RealSize::Small(150),
        &config,
        out.path(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(measures.should_mark > 0, "{}", measures.summary());
    replays(out.path(), 100);
}
