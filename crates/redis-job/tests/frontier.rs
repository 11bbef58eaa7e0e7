//! The shared frontier against a real redis-server (Debian's; `scripts/test.sh` installs it),
//! one server and a three-node Redis Cluster: work shared out, politeness, leases, failures,
//! restarts. Parking, page budgets and the order of work: `frontier_order.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nearcrawl_redis_job::server::{LocalCluster, LocalRedis};
use nearcrawl_redis_job::{
    Finished, JobName, Next, Outcome, Role, Settings, SharedFrontier, key_hex,
};

mod common;
use common::*;

/// Three workers, the third leasing several URLs of a host at once and finishing them in
/// groups (`batch` > 1).
fn three_workers_fetch_every_page_once(url: &str, batch: usize) {
    let (size, hosts) = (400, 7);
    let handles: Vec<_> = (0..3)
        .map(|w| {
            let url = url.to_string();
            std::thread::spawn(move || match w {
                2 => work_batched(&url, "web", "w2", (size, hosts), batch),
                _ => work(&url, "web", &format!("w{w}"), size, hosts),
            })
        })
        .collect();
    let mut counts: HashMap<u32, usize> = HashMap::new();
    let mut per_worker = Vec::new();
    for handle in handles {
        let fetched = handle.join().unwrap();
        per_worker.push(fetched.len());
        for n in fetched {
            *counts.entry(n).or_default() += 1;
        }
    }
    assert_eq!(counts.len(), size as usize, "every page reached");
    assert!(counts.values().all(|&c| c == 1), "no page fetched twice");
    let (mut frontier, _) = join(url, "web", "status", open_settings());
    let status = frontier.status().unwrap();
    assert_eq!((status.queued, status.leased), (0, 0));
    assert_eq!(status.seen, u64::from(size));
    assert_eq!(status.hosts, u64::from(hosts));
    assert!(status.seeded);
    // The workers that asked for work are named in the status.
    assert_eq!(
        status.workers.len(),
        3,
        "{:?} {per_worker:?}",
        status.workers
    );
}

#[test]
fn three_workers_share_one_crawl_on_one_server() {
    let server = LocalRedis::start(false).unwrap();
    three_workers_fetch_every_page_once(&server.url(), 1);
}

#[test]
fn a_worker_leasing_and_finishing_in_groups_shares_the_crawl_with_the_others() {
    let server = LocalRedis::start(false).unwrap();
    three_workers_fetch_every_page_once(&server.url(), 4);
}

#[test]
fn a_take_leases_as_many_urls_as_the_hosts_connections_allow_and_gives_back_the_unstarted() {
    let server = LocalRedis::start(false).unwrap();
    let (mut a, _) = join(&server.url(), "batch", "a", open_settings());
    let (mut b, _) = join(&server.url(), "batch", "b", open_settings());
    // One host, six URLs, four connections.
    offer_nodes(&mut a, &[0, 1, 2, 3, 4, 5], 1);
    a.seeded().unwrap();
    a.set_batch(8);
    let Next::Fetch(first) = a.next_step().unwrap() else {
        panic!("a lease")
    };
    let mut leased = vec![first];
    while a.has_leased() {
        let Next::Fetch(lease) = a.next_step().unwrap() else {
            panic!("a lease handed out without asking the job")
        };
        leased.push(lease);
    }
    assert_eq!(leased.len(), 4, "the host's four connections");
    assert!(matches!(b.next_step().unwrap(), Next::Wait(_)));
    // Two finished, one of them leased again at once and not started: given back.
    for lease in leased.drain(..2) {
        assert_eq!(
            a.finish(&lease, Outcome::Answered, None).unwrap(),
            Finished::Done { parked: false }
        );
    }
    a.set_batch(2);
    assert!(matches!(a.next_step().unwrap(), Next::Fetch(_)));
    assert!(a.has_leased());
    a.give_back().unwrap();
    assert!(!a.has_leased());
    let status = a.status().unwrap();
    assert_eq!((status.queued, status.leased), (1, 3), "{status:?}");
}

#[test]
fn three_workers_share_one_crawl_on_a_cluster() {
    let cluster = LocalCluster::start(3).unwrap();
    three_workers_fetch_every_page_once(&cluster.url(), 4);
}

#[test]
fn a_url_is_queued_once_and_robots_txt_is_read_once_for_every_worker() {
    let server = LocalRedis::start(false).unwrap();
    let settings = Settings {
        obey_robots: true,
        per_host_delay_ms: 0,
        ..Settings::default()
    };
    let (mut a, role) = join(&server.url(), "robots", "a", settings.clone());
    assert_eq!(role, Role::Seed);
    let (mut b, role) = join(&server.url(), "robots", "b", Settings::default());
    assert_eq!(role, Role::Join, "the job exists: b joins");
    assert_eq!(
        b.settings(),
        &settings,
        "b uses the job's settings, not its own"
    );
    // Before the seeds are in, b is told to wait, not that the job is done.
    assert!(matches!(b.next_step().unwrap(), Next::Wait(_)));
    assert_eq!(offer_nodes(&mut a, &[0, 7, 14], 7), 3);
    assert_eq!(
        offer_nodes(&mut b, &[7, 14, 21], 7),
        1,
        "seen URLs are not queued again"
    );
    a.seeded().unwrap();

    assert_eq!(
        a.next_step().unwrap(),
        Next::Robots {
            host: "h0.test".into(),
            address: None,
        }
    );
    // While a fetches robots.txt, b is not sent to fetch it too, nor any page of the host.
    assert!(matches!(b.next_step().unwrap(), Next::Wait(_)));
    let version = a
        .robots_read("h0.test", b"User-agent: *\nDisallow: /private", None)
        .unwrap();
    assert!(version > 0);
    assert_eq!(
        b.robots_rules("h0.test").unwrap().as_deref(),
        Some(&b"User-agent: *\nDisallow: /private"[..])
    );
    let Next::Fetch(lease) = b.next_step().unwrap() else {
        panic!("b should fetch now")
    };
    assert_eq!(lease.robots_version, version);
    assert_eq!(lease.key, key_hex(&node(0, 7).1.key));
}

#[test]
fn politeness_holds_across_workers() {
    let server = LocalRedis::start(false).unwrap();
    let settings = Settings {
        obey_robots: false,
        max_connections_per_host: 2,
        per_host_delay_ms: 0,
        ..Settings::default()
    };
    let mut workers: Vec<SharedFrontier> = (0..3)
        .map(|w| join(&server.url(), "polite", &format!("w{w}"), settings.clone()).0)
        .collect();
    offer_nodes(&mut workers[0], &[0, 1, 2, 3, 4], 1);
    workers[0].seeded().unwrap();
    let mut leases = Vec::new();
    for worker in workers.iter_mut().take(2) {
        match worker.next_step().unwrap() {
            Next::Fetch(lease) => leases.push(lease),
            other => panic!("expected a lease, got {other:?}"),
        }
    }
    // Two connections to the host are open: the third worker waits.
    assert!(matches!(workers[2].next_step().unwrap(), Next::Wait(_)));
    workers[0]
        .finish(&leases[0], Outcome::Answered, None)
        .unwrap();
    assert!(matches!(workers[2].next_step().unwrap(), Next::Fetch(_)));

    // A delay between requests holds across workers too.
    let slow = Settings {
        per_host_delay_ms: 60_000,
        ..settings
    };
    let (mut a, _) = join(&server.url(), "slow", "a", slow.clone());
    let (mut b, _) = join(&server.url(), "slow", "b", slow);
    offer_nodes(&mut a, &[0, 1], 1);
    a.seeded().unwrap();
    let Next::Fetch(lease) = a.next_step().unwrap() else {
        panic!("a fetches first")
    };
    a.finish(&lease, Outcome::Answered, None).unwrap();
    match b.next_step().unwrap() {
        Next::Wait(wait) => assert!(wait > Duration::from_secs(50), "{wait:?}"),
        other => panic!("b must wait out the delay, got {other:?}"),
    }
}

#[test]
fn a_dead_workers_lease_expires_and_another_worker_fetches_the_url() {
    let server = LocalRedis::start(false).unwrap();
    let settings = Settings {
        lease_ms: 300,
        ..open_settings()
    };
    let (mut a, _) = join(&server.url(), "lease", "a", settings.clone());
    let (mut b, _) = join(&server.url(), "lease", "b", settings);
    offer_nodes(&mut a, &[5], 1);
    a.seeded().unwrap();
    let Next::Fetch(taken) = a.next_step().unwrap() else {
        panic!("a takes the URL")
    };
    // a "dies": it never finishes. b waits (the job is not done while the URL is leased)...
    let again = loop {
        match b.next_step().unwrap() {
            Next::Fetch(lease) => break lease,
            Next::Wait(wait) => std::thread::sleep(wait.min(Duration::from_millis(50))),
            other => panic!("b: unexpected {other:?}"),
        }
    };
    // ... until the lease expires and b gets the same URL under a new lease.
    assert_eq!(again.key, taken.key);
    assert_ne!(again.token, taken.token);
    assert_eq!(
        a.finish(&taken, Outcome::Answered, None).unwrap(),
        Finished::Stale,
        "the dead worker's late answer is refused"
    );
    b.finish(&again, Outcome::Answered, None).unwrap();
    assert_eq!(b.next_step().unwrap(), Next::Done);
    assert_eq!(b.status().unwrap().reclaimed, 1);
}

#[test]
fn failures_back_off_then_park_the_host_whose_queue_is_drained() {
    let server = LocalRedis::start(false).unwrap();
    let settings = Settings {
        max_consecutive_failures: 2,
        backoff_initial_ms: 1,
        backoff_max_ms: 1,
        ..open_settings()
    };
    let (mut a, _) = join(&server.url(), "park", "a", settings);
    offer_nodes(&mut a, &[0, 1, 2, 3], 1);
    a.seeded().unwrap();
    let mut parked = false;
    let mut drained = Vec::new();
    loop {
        match a.next_step().unwrap() {
            Next::Fetch(lease) => {
                let done = a.finish(&lease, Outcome::Failed, None).unwrap();
                parked |= done == Finished::Done { parked: true };
            }
            Next::Parked { host } => drained.extend(a.drain(&host, 100).unwrap()),
            Next::Wait(wait) => std::thread::sleep(wait.min(Duration::from_millis(20))),
            Next::Done => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(parked);
    assert_eq!(
        drained.len(),
        2,
        "two failures, then the other two URLs are drained"
    );
    let status = a.status().unwrap();
    assert_eq!((status.parked, status.queued), (1, 0));
}

#[test]
fn a_requeued_url_is_fetched_again_and_stop_ends_the_job_for_every_worker() {
    let server = LocalRedis::start(false).unwrap();
    let (mut a, _) = join(&server.url(), "stop", "a", open_settings());
    offer_nodes(&mut a, &[0], 1);
    a.seeded().unwrap();
    let Next::Fetch(first) = a.next_step().unwrap() else {
        panic!("lease")
    };
    a.finish(&first, Outcome::Failed, Some((0, b"retry")))
        .unwrap();
    let second = loop {
        match a.next_step().unwrap() {
            Next::Fetch(lease) => break lease,
            Next::Wait(wait) => std::thread::sleep(wait),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(
        (second.key.as_str(), second.entry.as_slice()),
        (first.key.as_str(), &b"retry"[..])
    );
    let mut redis = connect(&server.url());
    assert!(nearcrawl_redis_job::stop_job(&mut redis, &JobName::new("stop").unwrap()).unwrap());
    assert!(!nearcrawl_redis_job::stop_job(&mut redis, &JobName::new("nothing").unwrap()).unwrap());
    assert_eq!(a.next_step().unwrap(), Next::Stopped);
}

#[test]
fn a_worker_that_dies_while_seeding_is_replaced() {
    let server = LocalRedis::start(false).unwrap();
    let (_dead, role) = join(&server.url(), "seed", "dead", open_settings());
    assert_eq!(role, Role::Seed);
    // The seeding worker died before `seeded`; its seeding lease runs out (forced here).
    let mut redis = connect(&server.url());
    redis
        .run("test", |con| {
            redis::cmd("HSET")
                .arg("nc:{seed}:job")
                .arg("seed_until")
                .arg(0)
                .query::<()>(con)
        })
        .unwrap();
    let (mut b, role) = join(&server.url(), "seed", "b", open_settings());
    assert_eq!(role, Role::Seed, "b takes over the seeding");
    let fetched = Arc::new(Mutex::new(Vec::new()));
    offer_nodes(&mut b, &[0], 1);
    b.seeded().unwrap();
    while let Next::Fetch(lease) = b.next_step().unwrap() {
        fetched.lock().unwrap().push(entry_node(&lease));
        b.finish(&lease, Outcome::Answered, None).unwrap();
    }
    assert_eq!(*fetched.lock().unwrap(), vec![0]);
}

#[test]
fn a_restarted_server_loses_nothing_and_workers_reconnect() {
    let mut server = LocalRedis::start(true).unwrap();
    let url = server.url();
    let (mut a, _) = join(&url, "restart", "a", open_settings());
    offer_nodes(&mut a, &(0..20).collect::<Vec<_>>(), 3);
    a.seeded().unwrap();
    let Next::Fetch(lease) = a.next_step().unwrap() else {
        panic!("lease")
    };
    server.kill();
    // The server comes back from its append-only file while the worker is finishing.
    let restarter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        server.restart().unwrap();
        server
    });
    assert_eq!(
        a.finish(&lease, Outcome::Answered, None).unwrap(),
        Finished::Done { parked: false }
    );
    let _server = restarter.join().unwrap();
    let (retries, reconnects) = a.redis().faults().snapshot();
    assert!(retries > 0 && reconnects > 0, "{retries} {reconnects}");
    let mut fetched = vec![entry_node(&lease)];
    loop {
        match a.next_step().unwrap() {
            Next::Fetch(lease) => {
                fetched.push(entry_node(&lease));
                a.finish(&lease, Outcome::Answered, None).unwrap();
            }
            Next::Wait(wait) => std::thread::sleep(wait),
            Next::Done => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    fetched.sort_unstable();
    assert_eq!(fetched, (0..20).collect::<Vec<_>>());
}
