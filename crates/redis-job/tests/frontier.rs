//! The shared frontier against a real redis-server (Debian's; `scripts/test.sh` installs it),
//! one server and a three-node Redis Cluster.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nearcrawl_redis_job::server::{LocalCluster, LocalRedis};
use nearcrawl_redis_job::{
    Finished, JobName, Lease, Next, Offer, Outcome, Parking, Patience, Redis, RedisTarget, Role,
    Settings, SharedFrontier, key_hex,
};

fn connect(url: &str) -> Redis {
    Redis::connect(
        RedisTarget::parse(url).unwrap(),
        Patience::default(),
        Arc::default(),
    )
    .unwrap()
}

fn open_settings() -> Settings {
    Settings {
        per_host_delay_ms: 0,
        max_connections_per_host: 4,
        obey_robots: false,
        ..Settings::default()
    }
}

fn join(url: &str, job: &str, worker: &str, settings: Settings) -> (SharedFrontier, Role) {
    let (frontier, role, _) =
        SharedFrontier::join(connect(url), JobName::new(job).unwrap(), worker, settings).unwrap();
    (frontier, role)
}

/// A URL of the test web: node `n` on host `n % hosts`.
fn node(n: u32, hosts: u32) -> (String, Offer) {
    let mut key = [0u8; 16];
    key[..4].copy_from_slice(&n.to_be_bytes());
    (
        format!("h{}.test", n % hosts),
        Offer {
            key,
            priority: 0,
            entry: n.to_be_bytes().to_vec(),
        },
    )
}

fn offer_nodes(frontier: &mut SharedFrontier, nodes: &[u32], hosts: u32) -> usize {
    let mut by_host: BTreeMap<String, Vec<Offer>> = BTreeMap::new();
    for &n in nodes {
        let (host, offer) = node(n, hosts);
        by_host.entry(host).or_default().push(offer);
    }
    let mut queued = 0;
    for (host, offers) in by_host {
        queued += frontier
            .offer(&host, &offers)
            .unwrap()
            .into_iter()
            .filter(|&q| q)
            .count();
    }
    queued
}

fn entry_node(lease: &Lease) -> u32 {
    u32::from_be_bytes(lease.entry.as_slice().try_into().unwrap())
}

/// The test web's links: node n links to 3n+1, 3n+2, 3n+3 and back to n/2, below `size`.
fn links(n: u32, size: u32) -> Vec<u32> {
    [3 * n + 1, 3 * n + 2, 3 * n + 3, n / 2]
        .into_iter()
        .filter(|&m| m < size)
        .collect()
}

/// Runs one worker over the test web until the job is done; returns the nodes it fetched.
fn work(url: &str, job: &str, worker: &str, size: u32, hosts: u32) -> Vec<u32> {
    let (mut frontier, role) = join(url, job, worker, open_settings());
    if role == Role::Seed {
        offer_nodes(&mut frontier, &[0], hosts);
        frontier.seeded().unwrap();
    }
    let mut fetched = Vec::new();
    loop {
        match frontier.next_step().unwrap() {
            Next::Fetch(lease) => {
                let n = entry_node(&lease);
                fetched.push(n);
                offer_nodes(&mut frontier, &links(n, size), hosts);
                assert_eq!(
                    frontier.finish(&lease, Outcome::Answered, None).unwrap(),
                    Finished::Done { parked: false }
                );
            }
            Next::Wait(wait) => std::thread::sleep(wait.min(Duration::from_millis(20))),
            Next::Seed => {
                offer_nodes(&mut frontier, &[0], hosts);
                frontier.seeded().unwrap();
            }
            Next::Done => return fetched,
            other => panic!("{worker}: unexpected {other:?}"),
        }
    }
}

fn three_workers_fetch_every_page_once(url: &str) {
    let (size, hosts) = (400, 7);
    let handles: Vec<_> = (0..3)
        .map(|w| {
            let url = url.to_string();
            std::thread::spawn(move || work(&url, "web", &format!("w{w}"), size, hosts))
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
    three_workers_fetch_every_page_once(&server.url());
}

#[test]
fn three_workers_share_one_crawl_on_a_cluster() {
    let cluster = LocalCluster::start(3).unwrap();
    three_workers_fetch_every_page_once(&cluster.url());
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

/// A duplicate's link parked on a URL: returned when the URL is decided, never parked once it
/// is; kept until settled, so a worker deciding the URL again (the first died) gets it too.
#[test]
fn links_park_on_undecided_urls_until_they_are_decided() {
    let server = LocalRedis::start(false).unwrap();
    let (mut a, _) = join(&server.url(), "park", "a", open_settings());
    let (mut b, _) = join(&server.url(), "park", "b", open_settings());
    // Node 0 (a hub) and node 1 (not), both on h0.test; node 3 was never queued.
    assert_eq!(offer_nodes(&mut a, &[0, 1], 1), 2);
    a.seeded().unwrap();
    let (host, zero) = node(0, 1);
    let one = node(1, 1).1;
    let never = node(3, 1).1;
    let link = |n: u8| ([n; 16], vec![n]);
    let park = |f: &mut SharedFrontier, on: &Offer, n: u8| {
        let (key, bytes) = link(n);
        f.park(&host, &on.key, &key, &bytes).unwrap()
    };
    assert_eq!(park(&mut b, &zero, 10), Parking::Parked, "queued");
    assert_eq!(park(&mut b, &never, 11), Parking::Decided, "never queued");
    let Next::Fetch(lease) = a.next_step().unwrap() else {
        panic!("a should fetch node 0")
    };
    assert_eq!(lease.key, key_hex(&zero.key));
    assert_eq!(park(&mut b, &zero, 12), Parking::Parked, "leased");

    // a decides node 0 a hub: both links parked on it come back, and no more are parked.
    let mut parked = a.decide(&host, &zero.key, true).unwrap();
    parked.sort();
    assert_eq!(parked, [vec![10], vec![12]]);
    assert_eq!(park(&mut b, &zero, 13), Parking::Hub, "decided a hub");
    // Decided again (a died before settling): the same links again.
    assert_eq!(a.decide(&host, &zero.key, true).unwrap().len(), 2);
    assert_eq!(
        a.finish(&lease, Outcome::Answered, None).unwrap(),
        Finished::Done { parked: false }
    );
    a.settle(&host, &zero.key).unwrap();
    assert_eq!(park(&mut b, &zero, 14), Parking::Hub, "still a hub");
    assert!(
        a.decide(&host, &zero.key, true).unwrap().is_empty(),
        "settled"
    );

    // Node 1 is not a hub: decided, its link is dropped by the caller; after the lease is
    // finished and the parking settled, links are not parked on it either.
    assert_eq!(park(&mut b, &one, 20), Parking::Parked);
    let Next::Fetch(lease) = b.next_step().unwrap() else {
        panic!("b should fetch node 1")
    };
    assert_eq!(b.decide(&host, &one.key, false).unwrap(), [vec![20]]);
    assert_eq!(park(&mut a, &one, 21), Parking::Decided);
    // Finished and settled in one step: the parking is gone with the lease.
    b.finish_and_settle(&lease, Outcome::Answered).unwrap();
    assert!(
        b.decide(&host, &one.key, false).unwrap().is_empty(),
        "settled"
    );
    assert_eq!(park(&mut a, &one, 22), Parking::Decided);
}

/// With `max_pages_per_host`, a host whose pages fetched and in flight reach the limit hands
/// out its queue to be recorded (`Spent`), for every worker, also for URLs queued later.
#[test]
fn a_hosts_page_budget_is_the_jobs() {
    let server = LocalRedis::start(false).unwrap();
    let settings = Settings {
        max_pages_per_host: 2,
        ..open_settings()
    };
    let (mut a, _) = join(&server.url(), "budget", "a", settings);
    let (mut b, _) = join(&server.url(), "budget", "b", open_settings());
    assert_eq!(b.settings().max_pages_per_host, 2, "the job's setting");
    assert_eq!(offer_nodes(&mut a, &[0, 1, 2, 3, 4], 1), 5);
    a.seeded().unwrap();
    let Next::Fetch(first) = a.next_step().unwrap() else {
        panic!("a fetches")
    };
    let Next::Fetch(second) = b.next_step().unwrap() else {
        panic!("b fetches")
    };
    let spent = Next::Spent {
        host: "h0.test".into(),
    };
    assert_eq!(
        a.next_step().unwrap(),
        spent,
        "two in flight: the budget is spent"
    );
    assert_eq!(a.drain("h0.test", 10).unwrap().len(), 3);
    a.finish(&first, Outcome::Answered, None).unwrap();
    b.finish(&second, Outcome::Answered, None).unwrap();
    assert_eq!(offer_nodes(&mut b, &[5], 1), 1);
    assert_eq!(b.next_step().unwrap(), spent, "a URL queued later");
    assert_eq!(b.drain("h0.test", 10).unwrap().len(), 1);
    assert_eq!(a.next_step().unwrap(), Next::Done);
}

/// A focused crawl's job hands hosts out by the priority of their next URL (lower first),
/// whichever waited longest; other jobs by how long they waited.
#[test]
fn by_priority_the_best_next_url_comes_first_across_hosts() {
    let server = LocalRedis::start(false).unwrap();
    for (job, by_priority) in [("fifo", false), ("focused", true)] {
        let settings = Settings {
            by_priority,
            ..open_settings()
        };
        let (mut a, _) = join(&server.url(), job, "a", settings);
        let offer = |n: u8, priority: u32| Offer {
            key: [n; 16],
            priority,
            entry: vec![n],
        };
        // h0 is announced first, with a worse URL than h1's.
        a.offer("h0.test", &[offer(1, 50), offer(2, 60)]).unwrap();
        a.offer("h1.test", &[offer(3, 10), offer(4, 70)]).unwrap();
        a.seeded().unwrap();
        let mut order = Vec::new();
        while let Next::Fetch(lease) = a.next_step().unwrap() {
            order.push(lease.entry[0]);
            a.finish(&lease, Outcome::Answered, None).unwrap();
        }
        if by_priority {
            assert_eq!(order, [3, 1, 2, 4], "by priority across hosts");
        } else {
            assert_eq!(order[0], 1, "the host that waited longest: {order:?}");
            assert_eq!(order.len(), 4);
        }
    }
}

/// The next lease, waiting as told (10 s at most); `None` when the job is over.
fn next_lease(frontier: &mut SharedFrontier) -> Option<Lease> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        match frontier.next_step().unwrap() {
            Next::Fetch(lease) => return Some(lease),
            Next::Wait(wait) => std::thread::sleep(wait.min(Duration::from_millis(20))),
            Next::Done => return None,
            other => panic!("unexpected {other:?}"),
        }
    }
    panic!("no lease and no end in 10 s");
}

/// Asks for work for 100 ms: the answer is always to wait.
fn only_waits(frontier: &mut SharedFrontier) {
    for _ in 0..10 {
        match frontier.next_step().unwrap() {
            Next::Wait(_) => std::thread::sleep(Duration::from_millis(10)),
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn a_url_given_back_for_the_jobs_end_waits_for_everything_else(url: &str) {
    // No claim: a host picked by one worker is at once the other's to pick.
    let settings = Settings {
        claim_ms: 0,
        ..open_settings()
    };
    let (mut a, _) = join(url, "end", "a", settings.clone());
    let (mut b, _) = join(url, "end", "b", settings);
    // Node 0 on h0, node 1 on h1, both leased.
    offer_nodes(&mut a, &[0, 1], 2);
    a.seeded().unwrap();
    let mut leases = vec![next_lease(&mut a).unwrap(), next_lease(&mut a).unwrap()];
    leases.sort_by_key(entry_node);
    let (waiting, other) = (leases.remove(0), leases.remove(0));
    assert_eq!((entry_node(&waiting), entry_node(&other)), (0, 1));
    let back = nearcrawl_redis_job::JOB_END_PRIORITY;
    a.finish(&waiting, Outcome::Answered, Some((back, b"end")))
        .unwrap();
    // While node 1 is in flight, the other worker neither gets node 0 nor takes the job for
    // over.
    only_waits(&mut b);
    // Node 1 names node 2 (on h0): queued as usual, it comes before node 0 too.
    offer_nodes(&mut a, &[2], 2);
    a.finish(&other, Outcome::Answered, None).unwrap();
    let named = next_lease(&mut b).unwrap();
    assert_eq!(entry_node(&named), 2);
    only_waits(&mut a);
    b.finish(&named, Outcome::Answered, None).unwrap();
    // Nothing else is queued or in flight: the job's end. Node 0 comes back as given back.
    let again = next_lease(&mut b).unwrap();
    assert_eq!(
        (again.key.as_str(), again.entry.as_slice()),
        (waiting.key.as_str(), &b"end"[..])
    );
    only_waits(&mut a);
    b.finish(&again, Outcome::Answered, None).unwrap();
    assert!(next_lease(&mut a).is_none());
    assert!(next_lease(&mut b).is_none());
}

#[test]
fn a_url_given_back_for_the_jobs_end_waits_for_everything_else_on_one_server() {
    let server = LocalRedis::start(false).unwrap();
    a_url_given_back_for_the_jobs_end_waits_for_everything_else(&server.url());
}

#[test]
fn a_url_given_back_for_the_jobs_end_waits_for_everything_else_on_a_cluster() {
    let cluster = LocalCluster::start(3).unwrap();
    a_url_given_back_for_the_jobs_end_waits_for_everything_else(&cluster.url());
}
