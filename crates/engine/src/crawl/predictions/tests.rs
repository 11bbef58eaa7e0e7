//! The link policy's shell: what the crawl learned kept in the store and resumed, or shared
//! by the workers of a job through its log.

use super::*;
use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_link_policy::{By, CopyFacts, Evidence, Held, How};

fn url(s: &str) -> Url {
    Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// A session parameter learned is kept with the next decision, once, and a resumed job
/// strips it from the start.
#[test]
fn a_session_parameter_learned_is_kept_for_a_resumed_job() {
    use nearcrawl_store::{Commit, MemoryStore};
    let dedup = DedupStageConfig::default();
    let store = MemoryStore::default();
    let open = |store: &MemoryStore| {
        let mut links = Decider::default();
        start(&mut links, &dedup, None, store).map(|()| links)
    };
    let mut predictions = open(&store).unwrap();
    let url = |u: &str| CanonicalUrl::parse(u).unwrap();
    let (one, two) = (
        "http://s.example/p?visit=1a2b3c4d5e",
        "http://s.example/p?visit=6f7a8b9c0d",
    );
    assert_eq!(predictions.observe_session(one, Some(two)).unwrap(), None);
    assert_eq!(
        predictions.learned_mut().sessions_to_keep(),
        None,
        "nothing learned yet"
    );
    let learned = predictions.observe_session(one, Some(two)).unwrap();
    assert!(learned.unwrap().contains("session parameter visit"));
    let kept = predictions
        .learned_mut()
        .sessions_to_keep()
        .expect("learned: kept");
    assert_eq!(
        predictions.learned_mut().sessions_to_keep(),
        None,
        "kept once"
    );
    let commit = Commit {
        blobs: vec![(SESSION_PARAMS.into(), kept)],
        ..Commit::default()
    };
    store.commit(commit).unwrap();
    let resumed = open(&store).unwrap();
    let stripped = resumed
        .learned()
        .sessions()
        .strip(&url("http://s.example/q?visit=77aa88bb99&page=2"));
    assert_eq!(stripped.unwrap().url.as_str(), "http://s.example/q?page=2");
    let corrupt = Commit {
        blobs: vec![(SESSION_PARAMS.into(), b"not json".to_vec())],
        ..Commit::default()
    };
    store.commit(corrupt).unwrap();
    let error = open(&store).unwrap_err().to_string();
    assert!(error.contains(SESSION_PARAMS), "{error}");
}

/// Two workers of a shared job: what one learns and checks is the other's too once it
/// catches up, under the same rule numbers; a worker that joins later replays it all.
#[test]
fn workers_of_a_shared_job_hold_one_book() {
    use nearcrawl_redis_job::server::LocalRedis;
    use nearcrawl_redis_job::{JobName, Patience, Redis, RedisTarget, RuleLog};
    let server = LocalRedis::start(false).unwrap();
    let dedup = DedupStageConfig {
        predict: Predict::Check,
        ..DedupStageConfig::default()
    };
    let store = nearcrawl_store::MemoryStore::default();
    let worker = |name: &str, session: u64| {
        let redis = Redis::connect(
            RedisTarget::parse(&server.url()).unwrap(),
            Patience::default(),
            std::sync::Arc::default(),
        )
        .unwrap();
        let log = RuleLog::open(redis, JobName::new("book").unwrap(), name, session);
        let mut links = Decider::default();
        start(&mut links, &dedup, Some(SharedRules::new(log)), &store).unwrap();
        links
    };
    let (mut a, mut b) = (worker("a", 1), worker("b", 1));
    a.learn(
        "http://n.example/x/1",
        "http://o.example/y/1",
        CopyFacts::default(),
        &[],
    )
    .unwrap();
    b.learn(
        "http://m.example/z/1.html",
        "http://o.example/y/1",
        CopyFacts::default(),
        &[],
    )
    .unwrap();
    // b replayed a's pair before its own: the rules are numbered in the log's order.
    let known = |_: &Url| Some(Held::default());
    let Fate::Fetch {
        by: By::Rule(evidence),
    } = b.learned_mut().fate(&url("http://n.example/x/2"), &known)
    else {
        panic!("b knows a's rule");
    };
    let prediction = Prediction::of("check", &evidence);
    let checked = check(&mut b, prediction, Some("http://o.example/y/2"), false).unwrap();
    assert_eq!(checked.right, Some(true));
    a.catch_up(true).unwrap();
    let book = |p: &Decider| serde_json::to_string(p.learned().book()).unwrap();
    assert_eq!(book(&a), book(&b));
    let stats = a.learned().book().stats(evidence.rule).unwrap();
    assert_eq!((stats.support, stats.checked, stats.confirmed), (1, 1, 1));
    // A worker joining later (or restarted: a new session) replays the whole log.
    let c = worker("a", 2);
    assert_eq!(book(&c), book(&a));
    // Nothing of a shared book is kept in the store: the log is the book.
    assert_eq!(a.learned_mut().take_to_keep(), None);
    // A session parameter one worker learns is every worker's, without evidence of its
    // own; a worker joining later has it too.
    let visit = |token: &str| CanonicalUrl::parse(&format!("http://s.example/p?visit={token}"));
    let (one, two) = (visit("1a2b3c4d5e").unwrap(), visit("6f7a8b9c0d").unwrap());
    let (one, two) = (one.as_str(), Some(two.as_str()));
    assert_eq!(a.observe_session(one, two).unwrap(), None);
    assert!(a.observe_session(one, two).unwrap().is_some());
    assert_eq!(a.learned_mut().sessions_to_keep(), None, "the log keeps it");
    b.catch_up(true).unwrap();
    let stripped = b
        .learned()
        .sessions()
        .strip(&visit("77aa88bb99").unwrap())
        .unwrap();
    assert_eq!(stripped.url.as_str(), "http://s.example/p");
    assert_eq!(
        worker("c", 1).learned().sessions().learned(),
        a.learned().sessions().learned()
    );
}

/// A rule's fate carried out on its queue entry: a verification's probe bounded by the
/// lengths the rule's copies have had, a sample's asked within them, a skip not requested.
#[test]
fn a_rule_s_fate_is_carried_out_on_its_entry() {
    let evidence = |ratios: (u32, u32)| Evidence {
        rule: nearcrawl_link_policy::RuleId::from_number(0),
        rule_text: "http://a/{1} -> http://b/{1}".into(),
        counterpart: url("http://b/x.html"),
        held: Held {
            length: 50_000,
            sample_cost: Some(3_000),
            head_cost: 300,
        },
        stats: nearcrawl_link_policy::RuleStats {
            support: 5,
            ratio_low: ratios.0,
            ratio_high: ratios.1,
            ..Default::default()
        },
    };
    let check = |how, ratios| Fate::Check {
        against: url("http://b/x.html"),
        how,
        by: By::Rule(Box::new(evidence(ratios))),
    };
    let window = Some((49_500, 55_500));
    // (what it protects, the fate) -> (not requested, the probe's window, its copies)
    let cases = [
        (
            "a verification: bounded by its copies' lengths, never a rule's sample",
            check(How::Verify, (1_000, 1_100)),
            (false, None, window),
        ),
        (
            "a verification of a rule whose copies' lengths are not known: unbounded",
            check(How::Verify, (0, 0)),
            (false, None, None),
        ),
        (
            "a rule's sample: asked within its copies' lengths",
            check(How::Sample, (1_000, 1_100)),
            (false, window, None),
        ),
        (
            "a skip: not requested, no probe",
            Fate::Skip {
                by: By::Rule(Box::new(evidence((1_000, 1_100)))),
            },
            (true, None, None),
        ),
    ];
    for (what, fate, (skipped, window, copies)) in cases {
        let mut entry = QueuedUrl::default();
        let prediction = apply(fate, &mut entry);
        assert_eq!(prediction.is_some(), skipped, "{what}");
        assert!(entry.predicted.is_some(), "{what}");
        let probe = entry.probe.as_deref();
        assert_eq!(probe.and_then(|p| p.window), window, "{what}");
        assert_eq!(probe.and_then(|p| p.copies), copies, "{what}");
        assert_eq!(probe.is_some(), !skipped, "{what}");
    }
}
