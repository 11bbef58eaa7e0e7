//! What the shared frontier's tests share: connecting, joining, a web of nodes to crawl.

#![allow(dead_code)] // each test file uses some of it

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use nearcrawl_redis_job::{
    Done, Finished, JobName, Lease, Next, Offer, Outcome, Patience, Redis, RedisTarget, Role,
    Settings, SharedFrontier,
};

pub fn connect(url: &str) -> Redis {
    Redis::connect(
        RedisTarget::parse(url).unwrap(),
        Patience::default(),
        Arc::default(),
    )
    .unwrap()
}

pub fn open_settings() -> Settings {
    Settings {
        per_host_delay_ms: 0,
        max_connections_per_host: 4,
        obey_robots: false,
        ..Settings::default()
    }
}

pub fn join(url: &str, job: &str, worker: &str, settings: Settings) -> (SharedFrontier, Role) {
    let (frontier, role, _) =
        SharedFrontier::join(connect(url), JobName::new(job).unwrap(), worker, settings).unwrap();
    (frontier, role)
}

/// A URL of the test web: node `n` on host `n % hosts`.
pub fn node(n: u32, hosts: u32) -> (String, Offer) {
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

pub fn offer_nodes(frontier: &mut SharedFrontier, nodes: &[u32], hosts: u32) -> usize {
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

pub fn entry_node(lease: &Lease) -> u32 {
    u32::from_be_bytes(lease.entry.as_slice().try_into().unwrap())
}

/// The test web's links: node n links to 3n+1, 3n+2, 3n+3 and back to n/2, below `size`.
pub fn links(n: u32, size: u32) -> Vec<u32> {
    [3 * n + 1, 3 * n + 2, 3 * n + 3, n / 2]
        .into_iter()
        .filter(|&m| m < size)
        .collect()
}

/// Runs one worker over the test web until the job is done; returns the nodes it fetched.
pub fn work(url: &str, job: &str, worker: &str, size: u32, hosts: u32) -> Vec<u32> {
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

/// [`work`] as a worker that leases up to `batch` URLs of a host at once and makes its
/// decisions known in groups ([`SharedFrontier::commit`]): each fetched node's links are
/// offered and its lease finished together, once the URLs leased are all handed out.
pub fn work_batched(
    url: &str,
    job: &str,
    worker: &str,
    (size, hosts): (u32, u32),
    batch: usize,
) -> Vec<u32> {
    let (mut frontier, role) = join(url, job, worker, open_settings());
    frontier.set_batch(batch);
    if role == Role::Seed {
        offer_nodes(&mut frontier, &[0], hosts);
        frontier.seeded().unwrap();
    }
    let mut fetched = Vec::new();
    let mut offers: BTreeMap<String, Vec<Offer>> = BTreeMap::new();
    let mut done = Vec::new();
    loop {
        match frontier.next_step().unwrap() {
            Next::Fetch(lease) => {
                let n = entry_node(&lease);
                fetched.push(n);
                for m in links(n, size) {
                    let (host, offer) = node(m, hosts);
                    offers.entry(host).or_default().push(offer);
                }
                done.push(Done {
                    lease,
                    outcome: Outcome::Answered,
                    requeue: None,
                    settle: false,
                });
                if !frontier.has_leased() {
                    let offers: Vec<(String, Vec<Offer>)> =
                        std::mem::take(&mut offers).into_iter().collect();
                    let finished = frontier.commit(&offers, &done, &[]).unwrap();
                    assert_eq!(finished.len(), done.len());
                    assert!(
                        finished
                            .iter()
                            .all(|f| *f == Finished::Done { parked: false })
                    );
                    done.clear();
                }
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
