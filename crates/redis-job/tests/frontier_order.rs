//! The shared frontier against a real redis-server (Debian's; `scripts/test.sh` installs it),
//! one server and a three-node Redis Cluster: links parked until a URL is decided, a host's
//! page budget, the order of work by priority and for the job's end.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::time::Duration;

use nearcrawl_redis_job::server::{LocalCluster, LocalRedis};
use nearcrawl_redis_job::{
    Finished, Lease, Next, Offer, Outcome, Parking, Settings, SharedFrontier, key_hex,
};

mod common;
use common::*;

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
