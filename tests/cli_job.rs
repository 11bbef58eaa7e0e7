//! `nearcrawl crawl --redis URL --job NAME` in two processes sharing one job, and `nearcrawl
//! job status|report|stop` on it (Debian's redis-server, started on loopback).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::path::Path;
use std::process::{Command, Output};

use nearcrawl_demo_web::{Reply, Site, serve};
use nearcrawl_redis_job::server::LocalRedis;

const PAGES: usize = 30;

fn nearcrawl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Page `i` links to `2i+1` and `2i+2`; prose of its own (seeded from `seed + i`); each
/// reply after `delay`.
fn tree(seed: u64, delay: std::time::Duration) -> Site {
    let mut site = Site::new();
    for i in 0..PAGES {
        let links: String = [2 * i + 1, 2 * i + 2]
            .into_iter()
            .filter(|&c| c < PAGES)
            .map(|c| format!("<a href=\"/p{c}\">{c}</a> "))
            .collect();
        let mut writer = nearcrawl_demo_web::Writer::new(seed + i as u64, 3000);
        let words: String = (0..4).map(|_| writer.paragraph() + " ").collect();
        site = site.page(
            &format!("/p{i}"),
            Reply::html(format!(
                "<html><head><title>p{i}</title></head><body><article><p>{words}</p></article><nav>{links}</nav></body></html>"
            ))
            .delayed(delay),
        );
    }
    site
}

/// Worker `name` of job `job` on `redis`, a process of its own, with no politeness delay and
/// `more` arguments (connections per host among them): its stderr is kept for the test.
fn worker(
    seeds: &Path,
    out: &Path,
    redis: &str,
    (job, name): (&str, &str),
    more: &[&str],
) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(["crawl", "--seeds"])
        .arg(seeds)
        .arg("--out")
        .arg(out)
        .args(["--redis", redis, "--job", job, "--worker", name])
        .args(["--per-host-delay-ms", "0"])
        .args(more)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_worker_processes_share_a_job_that_job_commands_report_and_stop() {
    let server = LocalRedis::start(false).unwrap();
    let redis = server.url();
    let site = serve(tree(100, std::time::Duration::ZERO)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, site.url("/p0") + "\n").unwrap();
    let outs = [dir.path().join("w1"), dir.path().join("w2")];
    let children: Vec<_> = outs
        .iter()
        .zip(["w1", "w2"])
        .map(|(out, name)| {
            let more = ["--max-connections-per-host", "2"];
            worker(&seeds, out, &redis, ("cli", name), &more)
        })
        .collect();
    for child in children {
        let output = tokio::task::block_in_place(|| child.wait_with_output().unwrap());
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    for i in 0..PAGES {
        assert_eq!(site.site.hits(&format!("/p{i}")), 1, "p{i} fetched once");
    }

    let status = nearcrawl(&["job", "status", "--redis", &redis, "--job", "cli"]);
    let stdout = text(&status.stdout);
    assert!(status.status.success(), "{}", text(&status.stderr));
    assert!(stdout.contains("job cli: running"), "{stdout}");
    assert!(
        stdout.contains(&format!("queued: 0  leased: 0  seen: {PAGES}")),
        "{stdout}"
    );
    assert!(
        stdout.contains("worker w1") && stdout.contains("worker w2"),
        "{stdout}"
    );

    let merged = dir.path().join("merged.json");
    let report = nearcrawl(&[
        "job",
        "report",
        "--redis",
        &redis,
        "--job",
        "cli",
        "--out",
        merged.to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(json["pages_fetched"], PAGES as u64);
    assert_eq!(json["workers"].as_array().unwrap().len(), 2);
    assert!(text(&report.stdout).contains(&format!("2 workers, {PAGES} decisions")));

    let stop = nearcrawl(&["job", "stop", "--redis", &redis, "--job", "cli"]);
    assert!(stop.status.success(), "{}", text(&stop.stderr));
    let status = nearcrawl(&["job", "status", "--redis", &redis, "--job", "cli"]);
    assert!(text(&status.stdout).contains("job cli: stopped"));

    // A job that does not exist, a bad name and a bad address are named.
    let missing = nearcrawl(&["job", "status", "--redis", &redis, "--job", "nothing"]);
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("job nothing: no such job"));
    let bad = nearcrawl(&["job", "stop", "--redis", &redis, "--job", "a b"]);
    assert!(
        text(&bad.stderr).contains("job name \"a b\""),
        "{}",
        text(&bad.stderr)
    );
    let address = nearcrawl(&["job", "status", "--redis", "http://x/", "--job", "cli"]);
    assert!(text(&address.stderr).contains("redis address \"http://x/\""));
}

fn decided_urls(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("records.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|r| r["url"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_crawl_loses_nothing_its_leases_go_to_the_other() {
    let server = LocalRedis::start(false).unwrap();
    let redis = server.url();
    // Pages that take a while, so the worker is killed while it holds leases.
    let site = serve(tree(500, std::time::Duration::from_millis(150)))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, site.url("/p0") + "\n").unwrap();
    let config = dir.path().join("job.toml");
    std::fs::write(
        &config,
        "[redis]\nlease_secs = 2\n\n[limits]\nconcurrency = 2\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let spawn = |name: &str| {
        let more = ["--config", config, "--max-connections-per-host", "4"];
        worker(
            &seeds,
            &dir.path().join(name),
            &redis,
            ("kill", name),
            &more,
        )
    };
    let mut doomed = spawn("doomed");
    let survivor = spawn("survivor");
    // Killed (SIGKILL) once it has decided a few pages, with requests in flight.
    let started = std::time::Instant::now();
    while decided_urls(&dir.path().join("doomed")).len() < 4 {
        assert!(
            started.elapsed().as_secs() < 60,
            "the doomed worker never got going"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    doomed.kill().unwrap();
    tokio::task::block_in_place(|| doomed.wait().unwrap());
    let output = tokio::task::block_in_place(|| survivor.wait_with_output().unwrap());
    assert!(output.status.success(), "{}", text(&output.stderr));

    // Every page was decided by one worker or the other; only the URLs the dead worker held
    // were fetched twice, and each of those went back to the queue when its lease expired.
    let mut decided: Vec<String> = decided_urls(&dir.path().join("doomed"));
    decided.extend(decided_urls(&dir.path().join("survivor")));
    for i in 0..PAGES {
        assert!(site.site.hits(&format!("/p{i}")) >= 1, "p{i} fetched");
        assert!(
            decided.contains(&site.url(&format!("/p{i}"))),
            "p{i} decided"
        );
    }
    let extra: usize = (0..PAGES)
        .map(|i| site.site.hits(&format!("/p{i}")) - 1)
        .sum();
    let status = nearcrawl(&["job", "status", "--redis", &redis, "--job", "kill"]);
    let stdout = text(&status.stdout);
    let reclaimed: usize = stdout
        .split("leases expired and requeued: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        extra <= reclaimed && reclaimed <= 4,
        "{extra} fetched again, {reclaimed} reclaimed"
    );
    assert!(stdout.contains("queued: 0  leased: 0"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_worker_processes_keep_one_original_per_pair_of_near_duplicates() {
    let server = LocalRedis::start(false).unwrap();
    let redis = server.url();
    // A mirror copies each page of the site under another address; every page of both is a
    // seed, so all are decided whatever the verdicts (fetched, or, once the job's URL rule
    // for the mirror is trusted, probed).
    let site = serve(tree(900, std::time::Duration::from_millis(20)))
        .await
        .unwrap();
    let mirror = serve(tree(900, std::time::Duration::from_millis(20)))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds.txt");
    let list: String = (0..PAGES)
        .flat_map(|i| [site.url(&format!("/p{i}")), mirror.url(&format!("/p{i}"))])
        .map(|u| u + "\n")
        .collect();
    std::fs::write(&seeds, list).unwrap();
    let children: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            let more = ["--max-connections-per-host", "2", "--concurrency", "1"];
            worker(
                &seeds,
                &dir.path().join(name),
                &redis,
                ("pairs", name),
                &more,
            )
        })
        .collect();
    for child in children {
        let output = tokio::task::block_in_place(|| child.wait_with_output().unwrap());
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    let per_worker: Vec<Vec<serde_json::Value>> = ["a", "b", "c"]
        .iter()
        .map(|name| {
            std::fs::read_to_string(dir.path().join(name).join("records.jsonl"))
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        })
        .collect();
    assert!(
        per_worker.iter().all(|r| !r.is_empty()),
        "each process decided pages: {:?}",
        per_worker.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let records: Vec<serde_json::Value> = per_worker.into_iter().flatten().collect();
    for i in 0..PAGES {
        let urls = [site.url(&format!("/p{i}")), mirror.url(&format!("/p{i}"))];
        let pair: Vec<&serde_json::Value> = records
            .iter()
            .filter(|r| urls.iter().any(|u| r["url"] == u.as_str()))
            .collect();
        assert_eq!(pair.len(), 2, "p{i}: one record per copy");
        let originals = pair.iter().filter(|r| r["verdict"] == "unique").count();
        assert_eq!(
            originals, 1,
            "p{i}: exactly one original across the processes: {pair:?}"
        );
        // A copy judged by its text is in its original's cluster; one decided against its
        // counterpart without a download (a URL rule the job learned: `unchanged` after a
        // HEAD, or `predicted`) names it.
        let original = pair.iter().find(|r| r["verdict"] == "unique").unwrap();
        let copy = pair.iter().find(|r| r["verdict"] != "unique").unwrap();
        match copy["verdict"].as_str() {
            Some("unchanged" | "predicted") => {
                assert_eq!(copy["duplicate_of"], original["url"], "p{i}: {pair:?}")
            }
            _ => assert_eq!(copy["cluster"], original["cluster"], "p{i}: one cluster"),
        }
    }
}
