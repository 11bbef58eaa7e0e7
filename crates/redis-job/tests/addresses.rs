//! Politeness per server address across a job's workers, against a real redis-server: the
//! hosts on one address share its connections and its delay whichever worker asks, an
//! unresolved host is handed out to be resolved, a place not used is given back, and two
//! names failing at once back the address off.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::sync::Arc;
use std::time::Duration;

use nearcrawl_redis_job::server::LocalRedis;
use nearcrawl_redis_job::{
    AddressOf, JobName, Lease, Next, Offer, Outcome, Patience, Redis, RedisTarget, Settings,
    SharedFrontier,
};

fn join(url: &str, job: &str, worker: &str, settings: Settings) -> SharedFrontier {
    let redis = Redis::connect(
        RedisTarget::parse(url).unwrap(),
        Patience::default(),
        Arc::default(),
    )
    .unwrap();
    SharedFrontier::join(redis, JobName::new(job).unwrap(), worker, settings)
        .unwrap()
        .0
}

/// Hosts `h0.test` .. `h{hosts-1}.test`, each with `per_host` URLs; `h0` and `h1` on
/// 192.0.2.1, the others on addresses of their own.
fn seed(frontier: &mut SharedFrontier, hosts: u8, per_host: u8) {
    for h in 0..hosts {
        let offers: Vec<Offer> = (0..per_host)
            .map(|n| Offer {
                key: [h, n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                priority: 0,
                entry: vec![h, n],
            })
            .collect();
        frontier.offer(&format!("h{h}.test"), &offers).unwrap();
    }
    frontier.seeded().unwrap();
}

fn address_of(host: &str) -> AddressOf {
    let address = match host {
        "h0.test" | "h1.test" => "192.0.2.1".to_string(),
        other => format!("198.51.100.{}", other.len()),
    };
    AddressOf::Known(Some(address))
}

/// No robots.txt, hosts open (4 connections, no delay), `connections` per address.
fn address_settings(connections: u32) -> Settings {
    Settings {
        obey_robots: false,
        max_connections_per_host: 4,
        per_host_delay_ms: 0,
        max_connections_per_address: connections,
        per_address_delay_ms: 0,
        ..Settings::default()
    }
}

/// The next lease, its request sent at once, waiting out anything else.
fn lease(worker: &mut SharedFrontier) -> Option<Lease> {
    for _ in 0..50 {
        match worker.next_step_with(&mut address_of).unwrap() {
            Next::Fetch(lease) => {
                worker.address_started(lease.address.as_ref()?).unwrap();
                return Some(lease);
            }
            Next::Wait(wait) => std::thread::sleep(wait.min(Duration::from_millis(20))),
            Next::Done => return None,
            other => panic!("unexpected {other:?}"),
        }
    }
    None
}

#[test]
fn hosts_on_one_address_share_its_budget_across_workers() {
    let server = LocalRedis::start(false).unwrap();
    let settings = address_settings(1);
    let mut workers: Vec<SharedFrontier> = (0..3)
        .map(|w| {
            join(
                &server.url(),
                "shared-address",
                &format!("w{w}"),
                settings.clone(),
            )
        })
        .collect();
    seed(&mut workers[0], 2, 3);
    let first = lease(&mut workers[0]).unwrap();
    assert_eq!(first.address.as_ref().unwrap().address, "192.0.2.1");
    // Until a place's request is sent, no other place is won (the delay runs from sends).
    // h0 and h1 allow four connections each, but their address one: the others wait.
    for worker in &mut workers[1..] {
        match worker.next_step_with(&mut address_of).unwrap() {
            Next::Wait(_) => {}
            other => panic!("the address is busy: {other:?}"),
        }
    }
    workers[0].finish(&first, Outcome::Answered, None).unwrap();
    let second = lease(&mut workers[1]).unwrap();
    assert!(
        matches!(
            workers[2].next_step_with(&mut address_of).unwrap(),
            Next::Wait(_)
        ),
        "one place, held by the second worker"
    );
    // A lease given back unused frees its place at once.
    workers[1]
        .finish(
            &second,
            Outcome::NotFetched,
            Some((0, second.entry.as_slice())),
        )
        .unwrap();
    assert!(lease(&mut workers[2]).is_some());
}

#[test]
fn a_place_whose_request_is_not_sent_yet_holds_the_others_back_a_moment() {
    let server = LocalRedis::start(false).unwrap();
    // A delay between the address's requests, over before the other worker asks: what
    // holds it back is the request not sent yet.
    let settings = Settings {
        per_address_delay_ms: 1,
        ..address_settings(4)
    };
    let mut a = join(&server.url(), "starting", "a", settings.clone());
    let mut b = join(&server.url(), "starting", "b", settings);
    seed(&mut a, 2, 3);
    let Next::Fetch(unsent) = a.next_step_with(&mut address_of).unwrap() else {
        panic!("a lease")
    };
    std::thread::sleep(Duration::from_millis(20));
    assert!(matches!(
        b.next_step_with(&mut address_of).unwrap(),
        Next::Wait(_)
    ));
    a.address_started(unsent.address.as_ref().unwrap()).unwrap();
    assert!(lease(&mut b).is_some(), "sent: the next place may be won");
}

#[test]
fn an_unresolved_host_is_resolved_first_and_two_failing_names_back_the_address_off() {
    let server = LocalRedis::start(false).unwrap();
    let settings = Settings {
        backoff_initial_ms: 60_000,
        ..address_settings(4)
    };
    let mut a = join(&server.url(), "failing", "a", settings);
    seed(&mut a, 2, 3);
    match a.next_step_with(&mut |_| AddressOf::Unresolved).unwrap() {
        Next::Resolve { host } => assert!(host.starts_with('h'), "{host}"),
        other => panic!("resolve first: {other:?}"),
    }
    std::thread::sleep(Duration::from_millis(60)); // the host's claim ends
    let one = lease(&mut a).unwrap();
    let two = loop {
        let next = lease(&mut a).unwrap();
        if next.host != one.host {
            break next;
        }
        a.finish(&next, Outcome::Answered, None).unwrap();
    };
    a.finish(&one, Outcome::Failed, None).unwrap();
    assert_eq!(
        a.address_backoffs("192.0.2.1").unwrap(),
        0,
        "one name failing"
    );
    a.finish(&two, Outcome::Throttled { retry_after: None }, None)
        .unwrap();
    assert_eq!(
        a.address_backoffs("192.0.2.1").unwrap(),
        1,
        "two names failing"
    );
    match a.next_step_with(&mut address_of).unwrap() {
        Next::Wait(wait) => assert!(wait > Duration::from_secs(50), "backed off: {wait:?}"),
        other => panic!("the address backs off: {other:?}"),
    }
}

#[test]
fn a_take_of_several_leases_within_the_addresss_places_and_frees_those_given_back() {
    let server = LocalRedis::start(false).unwrap();
    let mut a = join(&server.url(), "batch", "a", address_settings(2));
    let mut b = join(&server.url(), "batch", "b", address_settings(2));
    seed(&mut a, 2, 3); // h0 and h1 on 192.0.2.1
    a.set_batch(8);
    let Next::Fetch(first) = a.next_step_with(&mut address_of).unwrap() else {
        panic!("a lease")
    };
    assert!(a.has_leased(), "a second URL leased by the same take");
    let Next::Fetch(second) = a.next_step_with(&mut address_of).unwrap() else {
        panic!("the second lease")
    };
    assert_eq!(
        (
            first.address.as_ref(),
            second.address.as_ref().map(|h| &h.address)
        ),
        (first.address.as_ref(), Some(&"192.0.2.1".to_string()))
    );
    assert_ne!(first.address, second.address, "a place each");
    // The address's two places are a's.
    assert!(matches!(
        b.next_step_with(&mut address_of).unwrap(),
        Next::Wait(_)
    ));
    a.finish(&second, Outcome::NotFetched, Some((0, &second.entry)))
        .unwrap();
    assert!(lease(&mut b).is_some(), "the place given back is won");
}
