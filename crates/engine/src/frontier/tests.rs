//! The frontier alone: an in-memory store, time passed in, no fetching.

use nearcrawl_fetch::RobotsSource;
use nearcrawl_frontier::PolitenessConfig;
use nearcrawl_store::MemoryStore;

use super::*;

fn config() -> FrontierConfig {
    FrontierConfig {
        politeness: PolitenessConfig {
            per_host_delay_ms: 1_000,
            backoff_initial_ms: 2_000,
            // Names are not resolved: the rules per host alone (per address: the test below).
            max_connections_per_address: Some(0),
            per_address_delay_ms: Some(0),
            ..PolitenessConfig::default()
        },
        obey_robots: true,
        max_pages_per_host: None,
        by_priority: false,
        explore_every: 0,
    }
}

fn frontier(config: FrontierConfig, t0: Instant) -> StoreFrontier {
    StoreFrontier::open(Arc::new(MemoryStore::default()), config, 0, t0).unwrap()
}

/// Queues `urls` (with priorities) in one commit, as a decision would.
fn enqueue(frontier: &mut StoreFrontier, urls: &[(&str, u32)]) -> Commit {
    let mut commit = Commit::default();
    for (url, priority) in urls {
        let url = CanonicalUrl::parse(url).unwrap();
        let entry = QueuedUrl {
            url: url.to_string(),
            ..QueuedUrl::default()
        };
        frontier
            .enqueue(&mut commit, &url, entry, *priority)
            .unwrap();
    }
    commit
}

fn commit(frontier: &StoreFrontier, commit: Commit) {
    frontier.store.commit(commit).unwrap();
}

fn no_gate() -> Option<Instant> {
    None
}

/// The steps of one round at `now`.
fn round(frontier: &mut StoreFrontier, now: Instant) -> Vec<Step> {
    frontier.begin_round(now);
    let mut steps = Vec::new();
    loop {
        let step = frontier.next(now, &mut no_gate, &mut |_, _| None).unwrap();
        let wait = matches!(step, Step::Wait(_));
        steps.push(step);
        if wait {
            return steps;
        }
    }
}

fn urls(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Resolve { name, .. } => Some(format!("resolve {name}")),
            Step::Robots { origin, .. } => Some(format!("robots {origin}")),
            Step::Fetch { entry, .. } => Some(entry.url.clone()),
            Step::Refuse { entry, reason, .. } => Some(format!("refuse {} ({reason})", entry.url)),
            Step::Wait(_) => None,
        })
        .collect()
}

fn allow_all() -> RobotsRules {
    RobotsRules::allow_all(RobotsSource::Missing(404))
}

#[test]
fn robots_txt_first_then_one_url_per_delay_in_priority_order() {
    let t0 = Instant::now();
    let mut f = frontier(config(), t0);
    let c = enqueue(
        &mut f,
        &[("http://a.example/low", 5), ("http://a.example/high", 1)],
    );
    commit(&f, c);
    let steps = round(&mut f, t0);
    assert_eq!(urls(&steps), ["robots http://a.example/"]);
    let Step::Robots { host, .. } = steps[0] else {
        unreachable!()
    };
    f.robots_read(host, allow_all(), t0, Duration::from_secs(3600));
    // One connection per host and a delay of 1 s from the robots.txt answer.
    let Step::Wait(Some(at)) = round(&mut f, t0).pop().unwrap() else {
        panic!()
    };
    assert_eq!(at, t0 + Duration::from_secs(1));
    let at = t0 + Duration::from_secs(1);
    let steps = round(&mut f, at);
    assert_eq!(urls(&steps), ["http://a.example/high"]);
    let Step::Fetch { key, .. } = steps[0] else {
        unreachable!()
    };
    assert!(
        f.queued().unwrap() == 2,
        "a leased URL stays queued until decided"
    );
    assert!(!f.finished(host, Some(key), HostOutcome::Answered, at));
    commit(
        &f,
        Commit {
            taken: vec![key],
            ..Commit::default()
        },
    );
    let steps = round(&mut f, at + Duration::from_secs(1));
    assert_eq!(urls(&steps), ["http://a.example/low"]);
}

#[test]
fn hosts_take_turns_and_a_busy_host_does_not_hold_the_others() {
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.obey_robots = false;
    let mut f = frontier(cfg, t0);
    let c = enqueue(
        &mut f,
        &[
            ("http://a.example/1", 0),
            ("http://a.example/2", 0),
            ("http://b.example/1", 0),
        ],
    );
    commit(&f, c);
    let steps = round(&mut f, t0);
    assert_eq!(urls(&steps), ["http://a.example/1", "http://b.example/1"]);
    // Both at their connection limit: nothing more until a request finishes.
    assert!(matches!(steps.last(), Some(Step::Wait(Some(_)))));
}

#[test]
fn refused_urls_name_their_rule() {
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.max_pages_per_host = Some(1);
    cfg.politeness.per_host_delay_ms = 0;
    let mut f = frontier(cfg, t0);
    let c = enqueue(
        &mut f,
        &[
            ("http://a.example/private/x", 0),
            ("http://a.example/1", 1),
            ("http://a.example/2", 2),
        ],
    );
    commit(&f, c);
    let Step::Robots { host, .. } = round(&mut f, t0).remove(0) else {
        panic!()
    };
    let rules =
        RobotsRules::from_response("nearcrawl", 200, b"User-agent: *\nDisallow: /private/\n");
    f.robots_read(host, rules, t0, Duration::from_secs(3600));
    let steps = round(&mut f, t0);
    assert_eq!(
        urls(&steps),
        [
            "refuse http://a.example/private/x (disallowed by robots.txt)",
            "http://a.example/1"
        ]
    );
    let Step::Fetch { key, .. } = steps[1] else {
        unreachable!()
    };
    f.finished(host, Some(key), HostOutcome::Answered, t0);
    let steps = round(&mut f, t0);
    assert_eq!(
        urls(&steps),
        ["refuse http://a.example/2 (max_pages_per_host (1) reached)"]
    );
}

#[test]
fn a_requeued_url_goes_to_the_back_and_failures_back_off_then_park() {
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.obey_robots = false;
    cfg.politeness.max_consecutive_failures = 2;
    let mut f = frontier(cfg, t0);
    let c = enqueue(
        &mut f,
        &[("http://a.example/1", 0), ("http://a.example/2", 0)],
    );
    commit(&f, c);
    let steps = round(&mut f, t0);
    let Step::Fetch {
        host,
        key,
        ref entry,
        ..
    } = steps[0]
    else {
        panic!()
    };
    let parked = f.finished(host, Some(key), HostOutcome::Failed, t0);
    assert!(!parked);
    let mut c = Commit::default();
    f.requeue(&mut c, key, entry.clone());
    commit(&f, c);
    // Back-off (2 s) instead of the delay, and /1 now after /2.
    let Step::Wait(Some(at)) = round(&mut f, t0).pop().unwrap() else {
        panic!()
    };
    assert_eq!(at, t0 + Duration::from_secs(2));
    let steps = round(&mut f, at);
    assert_eq!(urls(&steps), ["http://a.example/2"]);
    let Step::Fetch { key, .. } = steps[0] else {
        unreachable!()
    };
    assert!(
        f.finished(host, Some(key), HostOutcome::Failed, at),
        "second failure in a row parks"
    );
    let drained: Vec<String> = f
        .drain(host)
        .unwrap()
        .into_iter()
        .map(|(_, e)| e.url)
        .collect();
    assert_eq!(
        drained,
        ["http://a.example/1"],
        "the leased /2 is the caller's to record"
    );
    assert!(matches!(round(&mut f, at).as_slice(), [Step::Wait(None)]));
}

#[test]
fn the_gate_holds_a_ready_request_without_losing_it() {
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.obey_robots = false;
    let mut f = frontier(cfg, t0);
    let c = enqueue(&mut f, &[("http://a.example/1", 0)]);
    commit(&f, c);
    f.begin_round(t0);
    let later = t0 + Duration::from_millis(250);
    let step = f.next(t0, &mut || Some(later), &mut |_, _| None).unwrap();
    assert!(matches!(step, Step::Wait(Some(at)) if at == later));
    assert_eq!(urls(&round(&mut f, later)), ["http://a.example/1"]);
}

#[test]
fn by_priority_the_best_url_of_any_ready_host_goes_first() {
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.obey_robots = false;
    cfg.politeness.per_host_delay_ms = 0;
    cfg.politeness.max_connections_per_host = 4;
    let queue = [
        ("http://a.example/1", 500),
        ("http://a.example/2", 600),
        ("http://b.example/1", 100),
        ("http://b.example/2", 700),
        ("http://c.example/1", 300),
    ];
    // In turn: each host's best, host after host. By priority: the best of all, whatever
    // its host.
    let mut f = frontier(cfg.clone(), t0);
    let c = enqueue(&mut f, &queue);
    commit(&f, c);
    assert_eq!(
        urls(&round(&mut f, t0)),
        [
            "http://a.example/1",
            "http://a.example/2",
            "http://b.example/1",
            "http://b.example/2",
            "http://c.example/1"
        ]
    );
    cfg.by_priority = true;
    let mut f = frontier(cfg, t0);
    let c = enqueue(&mut f, &queue);
    commit(&f, c);
    assert_eq!(
        urls(&round(&mut f, t0)),
        [
            "http://b.example/1",
            "http://c.example/1",
            "http://a.example/1",
            "http://a.example/2",
            "http://b.example/2"
        ]
    );
}

/// Ordering by priority, no robots.txt, no delay, `connections` per host.
fn by_priority(connections: u32) -> FrontierConfig {
    let mut cfg = config();
    cfg.obey_robots = false;
    cfg.politeness.per_host_delay_ms = 0;
    cfg.politeness.max_connections_per_host = connections;
    cfg.by_priority = true;
    cfg
}

/// Queues `urls` (with priorities) as links of page 1, in one commit.
fn enqueue_links(frontier: &mut StoreFrontier, urls: &[(&str, u32)]) -> Commit {
    let mut commit = Commit::default();
    for (url, priority) in urls {
        frontier
            .enqueue(
                &mut commit,
                &CanonicalUrl::parse(url).unwrap(),
                link(url, 1),
                *priority,
            )
            .unwrap();
    }
    commit
}

fn link(url: &str, parent: u64) -> QueuedUrl {
    QueuedUrl {
        url: CanonicalUrl::parse(url).unwrap().to_string(),
        depth: 1,
        parent: Some(parent),
        ..QueuedUrl::default()
    }
}

fn fetched(steps: &[Step]) -> Vec<(String, Option<u64>)> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Fetch { entry, .. } => Some((entry.url.clone(), entry.parent)),
            _ => None,
        })
        .collect()
}

/// The fetches of a round, each finished at once.
fn fetch_round(frontier: &mut StoreFrontier, now: Instant) -> Vec<(String, Option<u64>)> {
    let steps = round(frontier, now);
    for step in &steps {
        if let Step::Fetch { host, key, .. } = step {
            frontier.finished(*host, Some(*key), HostOutcome::Answered, now);
        }
    }
    fetched(&steps)
}

#[test]
fn by_priority_a_better_link_moves_a_queued_url_up_once() {
    let t0 = Instant::now();
    let cfg = by_priority(1);
    let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    let mut f = StoreFrontier::open(store.clone(), cfg.clone(), 0, t0).unwrap();
    let queue = [
        ("http://a.example/1", 600),
        ("http://a.example/2", 500),
        ("http://a.example/3", 550),
        ("http://b.example/1", 400),
    ];
    let c = enqueue_links(&mut f, &queue);
    commit(&f, c);
    let a1 = url_key("http://a.example/1");
    assert!(!f.raisable(&a1, 600) && !f.raisable(&a1, 700), "not better");
    assert!(f.raisable(&a1, 100));
    assert!(!f.raisable(&url_key("http://a.example/9"), 0), "not queued");
    // A resumed frontier knows where its queued URLs are.
    let mut f = StoreFrontier::open(store, cfg, f.next_order(), t0).unwrap();
    assert!(f.raisable(&a1, 100));
    // One request per host at a time: the first round loads host a's queue and hands out
    // its best.
    let one = |url: &str, parent| vec![(url.to_string(), Some(parent))];
    let mut first = fetch_round(&mut f, t0);
    first.sort();
    assert_eq!(
        first,
        [one("http://a.example/2", 1), one("http://b.example/1", 1)].concat()
    );
    // Moved up from the loaded queue, before and after its decision reaches the store.
    let mut c = Commit::default();
    assert!(
        f.raise(&mut c, &a1, link("http://a.example/1", 7), 100)
            .unwrap()
    );
    assert!(!f.raisable(&a1, 100), "at 100 now");
    assert_eq!(c.taken.len(), 1);
    assert_eq!(c.enqueued.len(), 1);
    assert_eq!(
        fetch_round(&mut f, t0),
        one("http://a.example/1", 7),
        "reached through 7"
    );
    commit(&f, c);
    let mut c = Commit::default();
    assert!(
        !f.raise(&mut c, &a1, link("http://a.example/1", 8), 0)
            .unwrap(),
        "handed out: not moved again"
    );
    assert!(c.enqueued.is_empty() && c.taken.is_empty());
    assert_eq!(fetch_round(&mut f, t0), one("http://a.example/3", 1));
    assert_eq!(fetch_round(&mut f, t0), [], "each URL once");
    // The four handed out stay in the store until decided (no decision here); the old key
    // is gone.
    assert_eq!(f.queued().unwrap(), 4, "the old key is gone from the store");
}

#[test]
fn seeds_and_round_robin_crawls_never_move() {
    let t0 = Instant::now();
    let mut cfg = config();
    cfg.obey_robots = false;
    let mut f = frontier(cfg.clone(), t0);
    let c = enqueue_links(&mut f, &[("http://a.example/1", 5)]);
    commit(&f, c);
    assert!(
        !f.raisable(&url_key("http://a.example/1"), 1),
        "breadth-first"
    );
    cfg.by_priority = true;
    let mut f = frontier(cfg, t0);
    let c = enqueue(&mut f, &[("http://a.example/1", 5)]);
    commit(&f, c);
    assert!(!f.raisable(&url_key("http://a.example/1"), 1), "a seed");
}

#[test]
fn by_priority_one_fetch_in_n_goes_to_the_host_fetched_least() {
    let t0 = Instant::now();
    let cfg = by_priority(1);
    let queue = [
        ("http://a.example/1", 100),
        ("http://a.example/2", 110),
        ("http://a.example/3", 120),
        ("http://a.example/4", 130),
        ("http://b.example/1", 900),
    ];
    let order = |explore_every| {
        let mut f = frontier(
            FrontierConfig {
                explore_every,
                ..cfg.clone()
            },
            t0,
        );
        let c = enqueue_links(&mut f, &queue);
        commit(&f, c);
        let mut order = Vec::new();
        // One fetch at a time, each finished before the next.
        for _ in 0..queue.len() {
            f.begin_round(t0);
            let step = f.next(t0, &mut no_gate, &mut |_, _| None).unwrap();
            let Step::Fetch { host, key, entry } = step else {
                panic!("{step:?}")
            };
            f.finished(host, Some(key), HostOutcome::Answered, t0);
            order.push(entry.url);
        }
        order
    };
    assert_eq!(
        order(0),
        [
            "http://a.example/1",
            "http://a.example/2",
            "http://a.example/3",
            "http://a.example/4",
            "http://b.example/1"
        ],
        "by priority alone, host b waits for the end"
    );
    assert_eq!(
        order(2),
        [
            "http://a.example/1",
            "http://b.example/1",
            "http://a.example/2",
            "http://a.example/3",
            "http://a.example/4"
        ],
        "the second fetch explores host b, fetched least"
    );
}

#[test]
fn a_url_queued_and_moved_by_one_decision_is_queued_once() {
    let t0 = Instant::now();
    let cfg = by_priority(8);
    let mut f = frontier(cfg, t0);
    let mut c = enqueue_links(&mut f, &[("http://a.example/1", 600)]);
    let a1 = url_key("http://a.example/1");
    assert!(
        f.raise(&mut c, &a1, link("http://a.example/1", 2), 300)
            .unwrap()
    );
    assert!(
        f.raise(&mut c, &a1, link("http://a.example/1", 3), 100)
            .unwrap()
    );
    assert!(c.taken.is_empty());
    assert_eq!(c.enqueued.len(), 1);
    assert_eq!(c.enqueued[0].0.priority, 100);
    commit(&f, c);
    assert_eq!(f.queued().unwrap(), 1);
    let one = |url: &str, parent| vec![(url.to_string(), Some(parent))];
    assert_eq!(fetch_round(&mut f, t0), one("http://a.example/1", 3));
    assert_eq!(fetch_round(&mut f, t0), []);
}

#[test]
fn a_resumed_frontier_knows_where_a_long_queue_is() {
    let t0 = Instant::now();
    let cfg = by_priority(1);
    let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    let mut f = StoreFrontier::open(store.clone(), cfg.clone(), 0, t0).unwrap();
    let urls: Vec<String> = (0..3 * HOST_BUFFER + 5)
        .map(|i| format!("http://a.example/{i}"))
        .collect();
    let queue: Vec<(&str, u32)> = urls.iter().map(|u| (u.as_str(), 900)).collect();
    let c = enqueue_links(&mut f, &queue);
    commit(&f, c);
    let f = StoreFrontier::open(store, cfg, f.next_order(), t0).unwrap();
    assert!(urls.iter().all(|u| f.raisable(&url_key(u), 100)));
}

#[test]
fn names_on_one_address_share_its_budget_after_being_resolved() {
    let t0 = Instant::now();
    let mut config = config();
    config.obey_robots = false;
    config.politeness.per_host_delay_ms = 0;
    config.politeness.max_connections_per_address = Some(1);
    config.politeness.per_address_delay_ms = Some(500);
    let mut f = frontier(config, t0);
    let names = ["http://a.test/1", "http://b.test/1", "http://c.test/1"];
    let c = enqueue(&mut f, &names.map(|url| (url, 0)));
    commit(&f, c);
    let steps = round(&mut f, t0);
    assert_eq!(
        urls(&steps),
        ["resolve a.test", "resolve b.test", "resolve c.test"]
    );
    let shared: IpAddr = "192.0.2.1".parse().unwrap();
    let ttl = Duration::from_secs(60);
    for (host, ip) in [(0, shared), (1, shared), (2, "192.0.2.2".parse().unwrap())] {
        f.resolved(host, Some(ip), t0, ttl);
    }
    let mut fetched = urls(&round(&mut f, t0));
    fetched.sort();
    let (first, other) = match fetched[0].as_str() {
        "http://a.test/1" => (0, "http://b.test/1"),
        _ => (1, "http://a.test/1"),
    };
    assert_eq!(
        fetched.len(),
        2,
        "a.test and b.test share one connection: {fetched:?}"
    );
    assert_eq!(fetched[1], "http://c.test/1");
    assert_eq!(f.address_of(1), Some(shared));
    let answered = t0 + Duration::from_millis(100);
    f.finished(first, None, HostOutcome::Answered, answered);
    let at = Duration::from_millis(599);
    assert!(
        urls(&round(&mut f, t0 + at)).is_empty(),
        "the address's delay"
    );
    assert_eq!(
        urls(&round(&mut f, t0 + Duration::from_millis(600))),
        [other]
    );
    let names: Vec<(String, usize)> = f
        .addresses()
        .into_iter()
        .map(|a| (a.address, a.names))
        .collect();
    assert_eq!(
        names,
        [("192.0.2.1".to_string(), 2), ("192.0.2.2".to_string(), 1)]
    );
}
