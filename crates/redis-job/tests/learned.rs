//! What workers learn, shared through a real redis-server: the rule log read back in the order
//! appended by several workers, an append repeated by its session kept once, a restarted
//! worker's new session appending again; declarations kept per host and replaced.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::sync::Arc;

use nearcrawl_redis_job::server::LocalRedis;
use nearcrawl_redis_job::{Declarations, JobName, Patience, Redis, RedisTarget, RuleLog};

fn redis(url: &str) -> Redis {
    Redis::connect(
        RedisTarget::parse(url).unwrap(),
        Patience::default(),
        Arc::default(),
    )
    .unwrap()
}

#[test]
fn the_rule_log_reads_back_in_the_order_appended() {
    let server = LocalRedis::start(false).unwrap();
    let job = JobName::new("rules").unwrap();
    let mut a = RuleLog::open(redis(&server.url()), job.clone(), "a", 1);
    let mut b = RuleLog::open(redis(&server.url()), job.clone(), "b", 1);
    assert_eq!(a.read(0, 10).unwrap(), Vec::<Vec<u8>>::new());
    assert_eq!(a.append(b"a1").unwrap(), 1);
    assert_eq!(b.append(b"b1").unwrap(), 2);
    assert_eq!(a.append(b"a2").unwrap(), 3);
    let all: Vec<Vec<u8>> = vec![b"a1".to_vec(), b"b1".to_vec(), b"a2".to_vec()];
    assert_eq!(b.read(0, 10).unwrap(), all);
    assert_eq!(b.read(1, 1).unwrap(), all[1..2].to_vec());
    assert_eq!(b.read(3, 10).unwrap(), Vec::<Vec<u8>>::new());
    assert_eq!(b.read(0, 0).unwrap(), Vec::<Vec<u8>>::new());

    // Another job's log is its own.
    let mut other = RuleLog::open(redis(&server.url()), JobName::new("x").unwrap(), "a", 1);
    assert_eq!(other.read(0, 10).unwrap(), Vec::<Vec<u8>>::new());
}

#[test]
fn an_append_repeated_by_its_session_is_kept_once() {
    let server = LocalRedis::start(false).unwrap();
    let job = JobName::new("once").unwrap();
    let mut a = RuleLog::open(redis(&server.url()), job.clone(), "a", 7);
    assert_eq!(a.append(b"first").unwrap(), 1);
    // The same session and number again (its reply lost): nothing appended.
    let mut again = RuleLog::open(redis(&server.url()), job.clone(), "a", 7);
    assert_eq!(again.append(b"first").unwrap(), 1);
    assert_eq!(again.append(b"second").unwrap(), 2);
    // A restarted worker (a new session) numbers from 1 and is kept.
    let mut restarted = RuleLog::open(redis(&server.url()), job.clone(), "a", 8);
    assert_eq!(restarted.append(b"third").unwrap(), 3);
    assert_eq!(
        a.read(0, 10).unwrap(),
        vec![b"first".to_vec(), b"second".to_vec(), b"third".to_vec()]
    );
}

#[test]
fn declarations_are_kept_per_host_and_replaced() {
    let server = LocalRedis::start(false).unwrap();
    let job = JobName::new("decl").unwrap();
    let mut a = Declarations::open(redis(&server.url()), job.clone());
    let mut b = Declarations::open(redis(&server.url()), job);
    let key = [7u8; 16];
    assert_eq!(b.get("http://h.test/", &key).unwrap(), None);
    a.put("http://h.test/", &key, b"length 10").unwrap();
    assert_eq!(
        b.get("http://h.test/", &key).unwrap(),
        Some(b"length 10".to_vec())
    );
    assert_eq!(b.get("http://other.test/", &key).unwrap(), None);
    b.put("http://h.test/", &key, b"length 12").unwrap();
    assert_eq!(
        a.get("http://h.test/", &key).unwrap(),
        Some(b"length 12".to_vec())
    );
}
