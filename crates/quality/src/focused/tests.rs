//! Tests of `focused`.

use super::*;
use nearcrawl_records::Verdict;

fn fetched(url: &str, status: u16) -> Record {
    let mut r = Record::new(0, url.to_string(), 0, Verdict::Unique);
    r.status = Some(status);
    r
}

#[test]
fn harvest_counts_relevant_pages_once_among_responses() {
    let relevant: HashSet<String> = ["a", "b"].into_iter().map(String::from).collect();
    let records = vec![
        fetched("x", 200),
        fetched("a", 200),
        Record::new(2, "b".into(), 1, Verdict::OutOfScope),
        fetched("b", 404),
        fetched("b", 200),
    ];
    let h = Harvest::of(&records, &relevant);
    assert_eq!(h.found, vec![0, 1, 1, 2]);
    assert_eq!(h.pages_to_find(2), Some(4));
    assert_eq!(h.pages_to_find(3), None);
    assert!((h.rate_within(2) - 0.5).abs() < 1e-9);
    assert_eq!(h.found_within(100), 2);
}

#[test]
fn the_early_floor_is_twice_breadth_first_up_to_the_recall_target() {
    // Ten relevant pages: the target is ten (0.95 of them, rounded up).
    assert_eq!(early_required(3, 10), 6);
    // Twice six is more than there are: all ten, not twelve.
    assert_eq!(early_required(6, 10), 10);
    assert_eq!(early_required(10, 10), 10);
    assert_eq!(early_required(0, 10), 0);
}

#[test]
fn every_topic_pattern_compiles_and_names_are_unique() {
    let mut names = HashSet::new();
    for topic in TOPICS {
        Regex::new(topic.pattern).unwrap();
        for (_, pattern) in topic.also {
            Regex::new(pattern).unwrap();
        }
        assert!(names.insert(topic.name));
        assert!(!topic.examples.is_empty() && !topic.terms.is_empty());
    }
    assert!(TOPICS.iter().any(|t| t.tuning) && TOPICS.iter().any(|t| !t.tuning));
}
