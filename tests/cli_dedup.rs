//! `nearcrawl dedup` over corpora it did not write: WARC files from GNU wget (Debian's
//! `wget`, installed by scripts/test.sh; `NEARCRAWL_WGET` names it) and from a nearcrawl
//! crawl, JSON lines; damaged records named by file and offset; an interrupted run resumed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::path::{Path, PathBuf};
use std::process::Command;

use nearcrawl_demo_web::{DemoConfig, DemoWeb, Writer};
use serde_json::Value;

fn dedup(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .arg("dedup")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn wget() -> PathBuf {
    let path = std::env::var_os("NEARCRAWL_WGET")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("wget"));
    let found = Command::new(&path).arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "{} does not run: install Debian's wget (scripts/test.sh does)",
        path.display()
    );
    path
}

/// GNU wget's WARC of the demo web's origin and mirror, two levels deep.
fn wget_warc(dir: &Path) -> PathBuf {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let web = runtime
        .block_on(DemoWeb::start(DemoConfig::default()))
        .unwrap();
    let warc = dir.join("wget");
    let status = Command::new(wget())
        .current_dir(dir)
        .args(["-r", "-l", "2", "-q", "--no-verbose", "-e", "robots=off"])
        .args(["--delete-after", "--no-directories"])
        .arg(format!("--warc-file={}", warc.display()))
        .arg(web.origin.url("/"))
        .arg(web.mirror.url("/"))
        .status()
        .unwrap();
    // wget exits 8 when some page was an HTTP error (the origin's /private/ pages are 404).
    assert!(matches!(status.code(), Some(0 | 8)), "wget: {status}");
    drop(runtime);
    warc.with_extension("warc.gz")
}

#[test]
fn wget_warc_mirror_pages_cluster_with_their_originals_and_damage_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let warc = wget_warc(dir.path());
    let out = dir.path().join("out");
    let (ok, stdout, stderr) = dedup(&[warc.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("clusters"), "{stdout}");
    let records = lines(&out.join("records.jsonl"));
    let story = |r: &&Value| r["url"].as_str().unwrap().contains("/mirror/story-");
    let stories: Vec<&Value> = records.iter().filter(story).collect();
    assert!(
        stories.len() >= 20,
        "wget fetched the mirror's stories: {}",
        stories.len()
    );
    for r in &stories {
        assert_ne!(r["verdict"], "unique", "{r}");
        let original = r["duplicate_of"].as_str().unwrap();
        let n = r["url"].as_str().unwrap().rsplit("story-").next().unwrap();
        let n = n.trim_end_matches(".html");
        assert!(
            original.ends_with(&format!("/articles/{n}"))
                || original.ends_with(&format!("/articles/{n}/")),
            "{} copies {original}",
            r["url"]
        );
        // The record says where the page is in the WARC.
        assert!(r["offset"].as_u64().unwrap() > 0 && r["file"] == warc.to_str().unwrap());
        assert!(r["id"].as_str().unwrap().starts_with("<urn:uuid:"));
    }
    // keep.txt: every unique page, each id once; clusters.jsonl names each original.
    let keep = std::fs::read_to_string(out.join("keep.txt")).unwrap();
    let unique: Vec<&str> = records
        .iter()
        .filter(|r| r["verdict"] == "unique")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(keep.lines().collect::<Vec<_>>(), unique);
    let clusters = lines(&out.join("clusters.jsonl"));
    assert!(!clusters.is_empty());
    let members: usize = clusters
        .iter()
        .map(|c| c["members"].as_array().unwrap().len())
        .sum();
    let duplicates = records.iter().filter(|r| r["verdict"] != "unique").count();
    assert_eq!(members, duplicates);
    for c in &clusters {
        assert!(
            unique.contains(&c["original"]["id"].as_str().unwrap()),
            "{c}"
        );
    }
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["pages"].as_u64().unwrap() as usize, records.len());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg"));

    // A member damaged in the middle of the file: named by file and offset, the rest read.
    let victim = stories[stories.len() / 2];
    let offset = victim["offset"].as_u64().unwrap() as usize;
    let mut bytes = std::fs::read(&warc).unwrap();
    for b in &mut bytes[offset + 20..offset + 60] {
        *b ^= 0x55;
    }
    let damaged = dir.path().join("damaged.warc.gz");
    std::fs::write(&damaged, &bytes).unwrap();
    let out2 = dir.path().join("out2");
    let (ok, _, stderr) = dedup(&[damaged.to_str().unwrap(), "--out", out2.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(&format!("{}: offset {offset}: ", damaged.display())),
        "{stderr}"
    );
    let bad = lines(&out2.join("bad-records.jsonl"));
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert_eq!(bad[0]["offset"].as_u64().unwrap() as usize, offset);
    let after = lines(&out2.join("records.jsonl"));
    assert_eq!(after.len(), records.len() - 1);
    assert!(after.iter().all(|r| r["url"] != victim["url"]));
}

#[test]
fn a_nearcrawl_crawls_warc_clusters_as_the_crawl_judged() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    let output = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(["demo", "--out", crawl.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The baseline crawl fetched every page; its WARC holds them all.
    let warcs: Vec<PathBuf> = std::fs::read_dir(crawl.join("baseline/warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let out = dir.path().join("out");
    let mut args: Vec<&str> = warcs.iter().map(|p| p.to_str().unwrap()).collect();
    args.extend(["--out", out.to_str().unwrap()]);
    let (ok, _, stderr) = dedup(&args);
    assert!(ok, "{stderr}");
    let records = lines(&out.join("records.jsonl"));
    let baseline = lines(&crawl.join("baseline/records.jsonl"));
    let fetched = baseline
        .iter()
        .filter(|r| ["unique", "exact", "near"].contains(&r["verdict"].as_str().unwrap()))
        .filter(|r| !r["url"].as_str().unwrap().ends_with("/robots.txt"))
        .count();
    assert_eq!(records.len(), fetched, "every page of the WARC judged once");
    // Each mirror story is in one cluster with its origin article, whichever the crawl
    // fetched first (it fetched concurrently).
    let cluster_of = |suffix: &str| {
        records
            .iter()
            .find(|r| r["url"].as_str().unwrap().ends_with(suffix))
            .map(|r| r["cluster"].as_u64().unwrap())
    };
    let mut pairs = 0;
    for n in 1..=24 {
        if let (Some(story), Some(article)) = (
            cluster_of(&format!("/mirror/story-{n}.html")),
            cluster_of(&format!("/articles/{n}")),
        ) {
            assert_eq!(story, article, "story {n}");
            pairs += 1;
        }
    }
    assert!(pairs >= 20, "{pairs}");
    // One page at a time on one thread: the same records (simhashes included), since a
    // page's template is decided as it comes.
    let one = dir.path().join("one");
    let mut one_args: Vec<&str> = warcs.iter().map(|p| p.to_str().unwrap()).collect();
    one_args.extend([
        "--out",
        one.to_str().unwrap(),
        "--batch",
        "1",
        "--threads",
        "1",
    ]);
    let (ok, _, stderr) = dedup(&one_args);
    assert!(ok, "{stderr}");
    assert_eq!(
        strip(&one.join("records.jsonl")),
        strip(&out.join("records.jsonl"))
    );
    let unique = |rs: &[Value]| rs.iter().filter(|r| r["verdict"] == "unique").count();
    let crawl_unique = unique(&baseline) - 1; // its robots.txt
    let diff = unique(&records).abs_diff(crawl_unique);
    assert!(
        diff <= 2,
        "{} unique against the crawl's {crawl_unique}",
        unique(&records)
    );
}

/// JSON lines: `n` documents, each fifth a lightly edited copy of an earlier one and each
/// seventh an exact copy; ids "d0", "d1", ...
fn corpus(n: usize) -> String {
    let mut writer = Writer::new(11, 3000);
    let mut texts: Vec<String> = Vec::new();
    let mut out = String::new();
    for i in 0..n {
        let fresh = |j: usize| j % 7 != 6 && j % 5 != 4;
        let text = if i % 7 == 6 {
            let source = (0..=i / 2).rev().find(|&j| fresh(j)).unwrap();
            texts[source].clone()
        } else if i % 5 == 4 {
            writer.change_words(&texts[i - 3], 0.05)
        } else {
            (0..4)
                .map(|_| writer.paragraph())
                .collect::<Vec<_>>()
                .join("\n")
        };
        out.push_str(&serde_json::json!({"doc": format!("d{i}"), "body": text}).to_string());
        out.push('\n');
        texts.push(text);
    }
    out
}

#[test]
fn json_lines_with_named_fields_and_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    let mut text = corpus(40);
    text.push_str("{\"doc\": \"broken\", \"body\": 3}\nnot json at all\n");
    std::fs::write(&input, text).unwrap();
    let out = dir.path().join("out");
    let args = [
        input.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--text-field",
        "body",
        "--id-field",
        "doc",
    ];
    let (ok, _, stderr) = dedup(&args);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: line 41: field \"body\" is not a string",
            input.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{}: line 42: not JSON", input.display())),
        "{stderr}"
    );
    let records = lines(&out.join("records.jsonl"));
    assert_eq!(records.len(), 40);
    for (i, r) in records.iter().enumerate() {
        let want_duplicate = i % 7 == 6 || i % 5 == 4;
        assert_eq!(r["verdict"] != "unique", want_duplicate, "d{i}: {r}");
        if i % 7 == 6 {
            assert_eq!(r["verdict"], "exact", "{r}");
            let source = (0..=i / 2)
                .rev()
                .find(|&j| j % 7 != 6 && j % 5 != 4)
                .unwrap();
            assert_eq!(r["original_id"], format!("d{source}"), "{r}");
        }
    }
    let keep = std::fs::read_to_string(out.join("keep.txt")).unwrap();
    assert_eq!(
        keep.lines().count(),
        records.iter().filter(|r| r["verdict"] == "unique").count()
    );
    // Run again: complete, nothing redone, outputs the same.
    let before = std::fs::read(out.join("records.jsonl")).unwrap();
    let (ok, _, stderr) = dedup(&args);
    assert!(ok, "{stderr}");
    assert_eq!(std::fs::read(out.join("records.jsonl")).unwrap(), before);
    // Other inputs into the same directory: refused, nothing touched.
    let (ok, _, stderr) = dedup(&[
        out.join("keep.txt").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(stderr.contains("keep.txt"), "{stderr}");
    assert_eq!(std::fs::read(out.join("records.jsonl")).unwrap(), before);
}

#[test]
fn a_run_stopped_part_way_resumes_to_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("corpus.jsonl");
    std::fs::write(&input, corpus(1400)).unwrap();
    let fields = ["--text-field", "body", "--id-field", "doc"];
    stopped_and_resumed(dir.path(), &input, &fields, 600);
    // HTML pages: the host template model is rebuilt too.
    let warc = wget_warc(dir.path());
    let lookahead = ["--batch", "8", "--template-lookahead", "8"];
    stopped_and_resumed(dir.path(), &warc, &lookahead, 20);
    // Neither the batch size nor the threads change a verdict: each page's template is
    // decided as it comes, in corpus order.
    let one = dir.path().join("one");
    let (ok, _, stderr) = dedup(&[
        warc.to_str().unwrap(),
        "--out",
        one.to_str().unwrap(),
        "--batch",
        "1",
        "--threads",
        "1",
        "--template-lookahead",
        "8",
    ]);
    assert!(ok, "{stderr}");
    let name = warc.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        strip(&one.join("records.jsonl")),
        strip(&dir.path().join(format!("{name}-whole/records.jsonl")))
    );
}

/// The records of `path` without their timings.
fn strip(path: &Path) -> Vec<Value> {
    lines(path)
        .into_iter()
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("dedup_us");
            r
        })
        .collect()
}

/// Runs `input` at once and in two runs (the first stopped after `stop` documents); the two
/// give the same records, clusters and keep list.
fn stopped_and_resumed(dir: &Path, input: &Path, extra: &[&str], stop: u64) {
    let name = input.file_name().unwrap().to_str().unwrap();
    let whole = dir.join(format!("{name}-whole"));
    let mut args = vec![input.to_str().unwrap(), "--out", whole.to_str().unwrap()];
    args.extend(extra);
    let (ok, _, stderr) = dedup(&args);
    assert!(ok, "{stderr}");
    let parts = dir.join(format!("{name}-parts"));
    let mut args = vec![input.to_str().unwrap(), "--out", parts.to_str().unwrap()];
    args.extend(extra);
    let mut first = args.clone();
    let stop_text = stop.to_string();
    first.extend(["--max-documents", &stop_text]);
    let (ok, stdout, stderr) = dedup(&first);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("run the same command again"), "{stdout}");
    assert!(!parts.join("keep.txt").exists());
    let judged = lines(&parts.join("records.jsonl")).len() as u64;
    let total = lines(&whole.join("records.jsonl")).len() as u64;
    assert!(judged >= stop && judged < total, "{judged} of {total}");
    let (ok, _, stderr) = dedup(&args);
    assert!(ok, "{stderr}");
    assert_eq!(
        strip(&parts.join("records.jsonl")),
        strip(&whole.join("records.jsonl"))
    );
    assert_eq!(
        std::fs::read(parts.join("clusters.jsonl")).unwrap(),
        std::fs::read(whole.join("clusters.jsonl")).unwrap()
    );
    assert_eq!(
        std::fs::read(parts.join("keep.txt")).unwrap(),
        std::fs::read(whole.join("keep.txt")).unwrap()
    );
}
