//! The Lua scripts' politeness against the single-process rules they mirror
//! (`nearcrawl_frontier::HostPoliteness`): after any sequence of requests started and ended
//! (answered, throttled with or without Retry-After, failed), the shared host agrees with the
//! reference on requests in flight, failures in a row, whether it is given up, and whether a
//! request may start now.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::sync::Arc;
use std::time::{Duration, Instant};

use nearcrawl_frontier::{HostOutcome, HostPoliteness, PolitenessConfig};
use nearcrawl_redis_job::server::LocalRedis;
use nearcrawl_redis_job::{
    JobName, Lease, Next, Offer, Outcome, Patience, Redis, RedisTarget, Settings, SharedFrontier,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Start,
    End(HostOutcome),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Start),
        2 => Just(Op::End(HostOutcome::Answered)),
        1 => Just(Op::End(HostOutcome::Failed)),
        1 => Just(Op::End(HostOutcome::Throttled { retry_after: None })),
        1 => Just(Op::End(HostOutcome::Throttled { retry_after: Some(Duration::from_secs(40)) })),
    ]
}

/// Long waits (seconds) against steps of milliseconds: no step lands near a boundary.
fn config() -> PolitenessConfig {
    PolitenessConfig {
        max_connections_per_host: 6,
        per_host_delay_ms: 0,
        max_crawl_delay_ms: 30_000,
        backoff_initial_ms: 20_000,
        backoff_max_ms: 300_000,
        max_consecutive_failures: 3,
        global_requests_per_second: 0,
        max_connections_per_address: None,
        per_address_delay_ms: None,
    }
}

fn settings(c: &PolitenessConfig) -> Settings {
    Settings {
        max_connections_per_host: c.max_connections_per_host,
        per_host_delay_ms: c.per_host_delay_ms,
        max_crawl_delay_ms: c.max_crawl_delay_ms,
        backoff_initial_ms: c.backoff_initial_ms,
        backoff_max_ms: c.backoff_max_ms,
        max_consecutive_failures: c.max_consecutive_failures,
        obey_robots: false,
        ..Settings::default()
    }
}

fn field(redis: &mut Redis, job: &str, name: &str) -> u64 {
    let key = format!("nc:{{{job}/h.test}}:p");
    redis
        .run("test", |con| {
            redis::cmd("HGET")
                .arg(&key)
                .arg(name)
                .query::<Option<u64>>(con)
        })
        .unwrap()
        .unwrap_or(0)
}

fn check(server: &LocalRedis, case: usize, ops: &[Op]) {
    let c = config();
    let job = format!("p{case}");
    let connect = || {
        Redis::connect(
            RedisTarget::parse(&server.url()).unwrap(),
            Patience::default(),
            Arc::default(),
        )
        .unwrap()
    };
    let (mut shared, _, _) =
        SharedFrontier::join(connect(), JobName::new(&job).unwrap(), "w", settings(&c)).unwrap();
    let offers: Vec<Offer> = (0..ops.len() as u32)
        .map(|n| Offer {
            key: {
                let mut k = [0u8; 16];
                k[..4].copy_from_slice(&n.to_be_bytes());
                k
            },
            priority: 0,
            entry: Vec::new(),
        })
        .collect();
    shared.offer("h.test", &offers).unwrap();
    shared.seeded().unwrap();
    let mut redis = connect();
    let now = Instant::now();
    let mut reference = HostPoliteness::new(now);
    let mut leases: Vec<Lease> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let now = Instant::now();
        match op {
            Op::Start => {
                let may = reference.can_start(now, &c);
                match shared.next_step().unwrap() {
                    Next::Fetch(lease) => {
                        assert!(may, "step {i} {op:?}: started where the reference waits");
                        reference.start(now, &c);
                        leases.push(lease);
                    }
                    Next::Wait(_) | Next::Parked { .. } => {
                        assert!(!may, "step {i} {op:?}: waits where the reference starts");
                    }
                    other => panic!("step {i}: {other:?}"),
                }
            }
            Op::End(outcome) => {
                let Some(lease) = leases.pop() else { continue };
                let shared_outcome = match *outcome {
                    HostOutcome::Answered => Outcome::Answered,
                    HostOutcome::Failed => Outcome::Failed,
                    HostOutcome::Throttled { retry_after } => Outcome::Throttled { retry_after },
                };
                shared.finish(&lease, shared_outcome, None).unwrap();
                reference.finish(now, *outcome, &c);
            }
        }
        let state = (
            field(&mut redis, &job, "active"),
            field(&mut redis, &job, "fails"),
            field(&mut redis, &job, "parked") == 1,
        );
        let expected = (
            u64::from(reference.active()),
            u64::from(reference.consecutive_failures()),
            reference.is_parked(),
        );
        assert_eq!(state, expected, "after step {i} {op:?} of {ops:?}");
    }
}

#[test]
fn the_shared_politeness_agrees_with_the_single_process_rules() {
    let server = LocalRedis::start(false).unwrap();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 128,
        ..ProptestConfig::default()
    });
    let case = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&proptest::collection::vec(op(), 1..24), |ops| {
            let n = case.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            check(&server, n, &ops);
            Ok(())
        })
        .unwrap();
}

#[test]
fn failures_in_a_row_give_the_host_up_as_the_single_process_rules_do() {
    let server = LocalRedis::start(false).unwrap();
    let failed = Op::End(HostOutcome::Failed);
    let throttled = Op::End(HostOutcome::Throttled { retry_after: None });
    check(
        &server,
        1000,
        &[
            Op::Start,
            Op::Start,
            Op::Start,
            failed.clone(),
            throttled,
            failed,
            Op::Start,
        ],
    );
}
