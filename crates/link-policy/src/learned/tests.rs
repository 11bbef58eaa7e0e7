//! What a crawl learns: the book kept when a queued URL relies on a rule the store does not
//! hold, read back with the same numbers; session parameters kept once; a change read back
//! from a log making the same change.

use super::*;
use crate::evidence::{Held, Predict};
use crate::fate::By;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn checking() -> PolicyConfig {
    PolicyConfig {
        predict: Predict::Check,
        ..PolicyConfig::default()
    }
}

#[test]
fn the_book_is_kept_when_a_queued_url_relies_on_a_new_rule() {
    let mut learned = Learned::new(checking(), None).unwrap();
    assert_eq!(learned.take_to_keep(), None, "nothing to keep");
    let pair = ("http://n.example/a/1", "http://o.example/a/1");
    let event = learned.learned(pair.0, pair.1, CopyFacts::default());
    learned.apply(event.expect("rules on, URLs valid"));
    assert_eq!(learned.take_to_keep(), None, "no queued URL relies on it");
    let known = |_: &Url| Some(Held::default());
    let Fate::Fetch {
        by: By::Rule(evidence),
    } = learned.fate(&url("http://n.example/a/2"), &known)
    else {
        panic!("checked: not trusted yet");
    };
    let kept = learned.take_to_keep().expect("kept with the decision");
    assert_eq!(learned.take_to_keep(), None);

    // Read back, the rule has the number the queued URL names.
    let mut resumed = Learned::new(checking(), Some(&kept)).unwrap();
    let rule = (evidence.rule.number(), evidence.counterpart.as_str());
    let (right, event) = resumed.checked(rule, false, Some("http://o.example/a/2"), false);
    assert!(right);
    resumed.apply(event);
    let stats = resumed.book().stats(evidence.rule).unwrap();
    assert_eq!((stats.support, stats.checked, stats.confirmed), (1, 1, 1));
    assert!(Learned::new(checking(), Some(b"not json")).is_err());
}

#[test]
fn what_is_learned_is_a_change_only_when_it_can_count() {
    let off = Learned::new(
        PolicyConfig {
            predict: Predict::Off,
            ..PolicyConfig::default()
        },
        None,
    )
    .unwrap();
    let on = Learned::new(checking(), None).unwrap();
    let facts = CopyFacts::default();
    // (what it protects, the policy, copy, original, a change to make)
    let cases = [
        (
            "rules off: nothing learned",
            &off,
            "http://a.test/1",
            "http://b.test/1",
            false,
        ),
        (
            "a copy that is no URL",
            &on,
            "not a url",
            "http://b.test/1",
            false,
        ),
        (
            "an original that is no URL",
            &on,
            "http://a.test/1",
            "::",
            false,
        ),
        (
            "a pair of URLs",
            &on,
            "http://a.test/1",
            "http://b.test/1",
            true,
        ),
    ];
    for (what, learned, copy, original, learns) in cases {
        assert_eq!(
            learned.learned(copy, original, facts).is_some(),
            learns,
            "{what}"
        );
    }
    // A prediction right or wrong, and a verification by length that told.
    let rule = (0, "http://o.test/a/1?visit=1a2b3c4d5e");
    let (right, _) = on.checked(rule, true, Some("http://o.test/a/1?visit=1a2b3c4d5e"), true);
    assert!(right);
    let (wrong, event) = on.checked(rule, true, Some("http://o.test/a/2"), true);
    assert!(!wrong);
    assert_eq!(
        event,
        RuleEvent::Checked {
            rule: 0,
            right: false,
            verified: None
        }
    );
}

/// A session parameter learned is kept with the next decision, once (never in a shared job,
/// whose log keeps it), and one going on with what was kept strips it from the start.
#[test]
fn a_session_parameter_learned_is_kept_once() {
    let canonical = |u: &str| CanonicalUrl::parse(u).unwrap();
    let (one, two) = (
        canonical("http://s.example/p?visit=1a2b3c4d5e"),
        canonical("http://s.example/p?visit=6f7a8b9c0d"),
    );
    let mut learned = Learned::new(checking(), None).unwrap();
    learned.start(false);
    assert_eq!(learned.observe_session(&one, &two), None);
    assert_eq!(learned.sessions_to_keep(), None, "nothing learned yet");
    assert_eq!(learned.observe_session(&one, &two), Some("visit".into()));
    let kept = learned.sessions_to_keep().expect("learned: kept");
    assert_eq!(learned.sessions_to_keep(), None, "kept once");
    let mut resumed = Learned::new(checking(), None).unwrap();
    resumed.adopt_sessions(&kept).unwrap();
    let stripped = (resumed.sessions())
        .strip(&canonical("http://s.example/q?visit=77aa88bb99&page=2"))
        .unwrap();
    assert_eq!(stripped.url.as_str(), "http://s.example/q?page=2");
    assert!(resumed.adopt_sessions(b"not json").is_err());

    let mut shared = Learned::new(checking(), None).unwrap();
    shared.start(true);
    shared.observe_session(&one, &two);
    assert_eq!(shared.observe_session(&one, &two), Some("visit".into()));
    assert_eq!(shared.sessions_to_keep(), None, "the log keeps it");
    shared.apply(RuleEvent::Learned(CopyPair {
        copy: "http://n.example/a/1".into(),
        original: "http://o.example/a/1".into(),
        facts: CopyFacts::default(),
    }));
    assert_eq!(shared.take_to_keep(), None, "the log is the book");
}

/// What a log keeps reads back as the same event, which makes the same book.
#[test]
fn an_event_read_back_makes_the_same_change() {
    let events = [
        RuleEvent::Learned(CopyPair {
            copy: "http://m.example/s?id=1".into(),
            original: "http://o.example/a/1".into(),
            facts: CopyFacts {
                same_length: Some(true),
                adds_pages: Some(false),
                ratio: Some(1.01),
            },
        }),
        RuleEvent::Checked {
            rule: 0,
            right: true,
            verified: Some(true),
        },
        RuleEvent::Checked {
            rule: 0,
            right: false,
            verified: None,
        },
        RuleEvent::Session {
            host: "m.example".into(),
            name: "visit".into(),
        },
    ];
    let mut direct = Learned::new(checking(), None).unwrap();
    let mut replayed = Learned::new(checking(), None).unwrap();
    for event in events {
        let bytes = serde_json::to_vec(&event).unwrap();
        let read: RuleEvent = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(read, event);
        direct.apply(event);
        replayed.apply(read);
    }
    assert_eq!(direct.sessions().learned(), replayed.sessions().learned());
    assert_eq!(
        replayed.sessions().learned(),
        [("m.example".to_string(), "visit".to_string())]
    );
    let book = |l: &Learned| serde_json::to_string(l.book()).unwrap();
    assert_eq!(book(&direct), book(&replayed));
    let stats = direct.book().stats(RuleId::from_number(0)).unwrap();
    assert_eq!((stats.support, stats.checked, stats.confirmed), (1, 2, 1));
}

#[test]
fn a_duplicate_s_link_is_carried_to_its_original_s_site() {
    let learned = Learned::new(checking(), None).unwrap();
    let (page, original) = (
        url("http://new.test/v2/a.html"),
        url("http://old.test/v1/a.html"),
    );
    // (what it protects, the link) -> its counterpart on the original's site
    let cases = [
        (
            "a sibling: the path the pair does not share swapped",
            "http://new.test/v2/b.html",
            Some("http://old.test/v1/b.html"),
        ),
        (
            "a link to another site: none",
            "http://other.test/v2/b.html",
            None,
        ),
    ];
    for (what, target, carried) in cases {
        let got = learned.carried(&page, &original, &url(target));
        assert_eq!(got.as_ref().map(CanonicalUrl::as_str), carried, "{what}");
    }
    let old_b = url("http://old.test/v1/b.html");
    let links_to = |c: &Url| *c == old_b;
    let target = url("http://new.test/v2/b.html");
    assert!(learned.leads_as_original(Some(&page), &original, &target, links_to));
    assert!(
        !learned.leads_as_original(None, &original, &target, links_to),
        "no base, no rule"
    );
    let other = url("http://new.test/v2/c.html");
    assert!(!learned.leads_as_original(Some(&page), &original, &other, links_to));
}

/// A shared job's log written before keeps being read: an event's form is its tag and its
/// fields side by side.
#[test]
fn a_learned_pair_keeps_its_form_in_the_log() {
    let written = r#"{"event":"learned","copy":"http://n.example/a/1","original":"http://o.example/a/1","facts":{"same_length":true,"adds_pages":null,"ratio":null}}"#;
    let read: RuleEvent = serde_json::from_str(written).unwrap();
    let RuleEvent::Learned(pair) = &read else {
        panic!("{read:?}");
    };
    assert_eq!(pair.facts.same_length, Some(true));
    assert_eq!(serde_json::to_string(&read).unwrap(), written);
}

/// A table of a prediction's checks: the page predicted to copy `/a/1.html` of the origin was
/// judged a copy of the page in the second column; whether the prediction was right.
#[test]
fn a_prediction_is_right_when_the_page_has_its_counterpart_s_content() {
    let mut learned = Learned::new(checking(), None).unwrap();
    let (origin, news) = ("http://o.test/a/1.html", "http://n.test/news/1.html");
    // The syndication's page was fetched first: the origin's is a copy of it.
    let copy = learned.learned(origin, news, CopyFacts::default());
    learned.apply(copy.expect("rules on, URLs valid"));
    let cases = [
        ("a copy of the counterpart", Some(origin), true),
        ("a copy of the counterpart's own original", Some(news), true),
        (
            "a copy of another page",
            Some("http://n.test/news/2.html"),
            false,
        ),
        ("no copy", None, false),
    ];
    for (what, judged, right) in cases {
        let (was, event) = learned.checked((0, origin), false, judged, false);
        assert_eq!(was, right, "{what}");
        assert!(
            matches!(event, RuleEvent::Checked { right: r, .. } if r == right),
            "{what}"
        );
    }
}
