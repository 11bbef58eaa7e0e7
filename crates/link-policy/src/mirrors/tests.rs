//! A mirror's samples: the draw, the budget, and the state read back on resume.

use super::*;
use Cost::{Known, Unknown, Waiting};

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

#[test]
fn a_pair_samples_a_share_of_its_candidates() {
    // (candidates, cap, share) -> samples
    let cases = [
        (0, 8, 0.25, 0),
        (1, 8, 0.25, 1),
        (4, 8, 0.25, 1),
        (5, 8, 0.25, 2),
        (14, 8, 0.25, 4),
        (32, 8, 0.25, 8),
        (500, 8, 0.25, 8),
        (14, 2, 0.25, 2),
        (14, 0, 0.25, 0),
        (10, 100, 1.0, 10),
        (10, 100, 7.0, 10),
        (10, 8, -1.0, 0),
        (10, 8, f64::NAN, 0),
    ];
    for (candidates, cap, share, samples) in cases {
        let budget = Budget { cap, share };
        assert_eq!(budget.of(candidates), samples, "{candidates}, {budget:?}");
    }
}

#[test]
fn samples_are_drawn_cheapest_first_once_no_counterpart_is_waiting() {
    // (costs in the order found, needed, now) -> drawn
    let cases: [(&[Cost], usize, bool, &[usize]); 8] = [
        (&[Known(300), Known(11), Known(90)], 2, false, &[1, 2]),
        (&[Known(300), Waiting, Known(90)], 1, false, &[]),
        // Nothing else left: a waiting one counts as unknown.
        (&[Known(300), Waiting, Known(90)], 2, true, &[2, 0]),
        (&[Unknown, Known(300), Unknown], 2, false, &[1, 0]),
        (&[Unknown, Unknown, Unknown], 2, false, &[0, 1]),
        (&[Known(5), Known(5)], 1, false, &[0]),
        (&[Known(5)], 3, false, &[0]),
        (&[Known(5)], 0, true, &[]),
    ];
    for (costs, needed, now, drawn) in cases {
        assert_eq!(draw(costs, needed, now), drawn, "{costs:?} {needed} {now}");
    }
}

/// A mirror `m.test` of `o.test` (a copy at another path), and what its links get.
fn mirror() -> (Mirrors, Url, Url) {
    let (mirror, origin) = (url("http://m.test/a"), url("http://o.test/a"));
    let mut mirrors = Mirrors::default();
    mirrors.note_copy(&mirror, &url("http://o.test/b"));
    (mirrors, mirror, origin)
}

const EIGHT: Budget = Budget {
    cap: 8,
    share: 0.25,
};

fn keys(n: usize) -> Vec<Key> {
    (0..n).map(|i| crate::key(&format!("k{i}"))).collect()
}

#[test]
fn the_cheapest_candidate_is_sampled_then_the_mirror_followed_once_it_adds_a_page() {
    let (mut mirrors, mirror, origin) = mirror();
    let links = keys(5);
    for (i, link) in links.iter().enumerate() {
        let Fate::<Url>::Wait {
            until: Until::Samples { on, pair },
            ..
        } = mirrors.link(&mirror, &origin)
        else {
            panic!("parked as a candidate");
        };
        assert_eq!(on, crate::key("mirror http://m.test of http://o.test"));
        mirrors.candidate(pair, *link, &format!("http://m.test/c{i}"));
    }
    assert!(mirrors.wants_samples(EIGHT));
    // Five candidates: two samples, once every counterpart is decided.
    let lengths = [300, 40, 90, 7, 500];
    let waiting = |_: &str| Ok::<_, ()>(Waiting);
    assert_eq!(mirrors.draws(EIGHT, false, waiting), Ok(vec![]));
    let decided = |url: &str| {
        let at: usize = url.trim_start_matches("http://m.test/c").parse().unwrap();
        Ok::<_, ()>(Known(lengths[at]))
    };
    let drawn = mirrors.draws(EIGHT, false, decided).unwrap();
    let taken: Vec<Key> = drawn.iter().map(|d| d.link).collect();
    assert_eq!(taken, [links[3], links[1]], "7 and 40 bytes");
    assert_eq!(drawn[0].cost, Known(7));
    for d in &drawn {
        mirrors.sampled(d.pair, d.link);
    }
    assert!(!mirrors.wants_samples(EIGHT));
    assert!(mirrors.is_pending(&links[3]));
    assert_eq!(
        mirrors.decided(&links[3], EIGHT),
        None,
        "one of two, nothing added"
    );
    mirrors.added(&links[1]);
    let on = drawn[0].on;
    assert_eq!(mirrors.decided(&links[1], EIGHT), Some((on, true)));
    assert_eq!(
        mirrors.link(&mirror, &origin),
        Fate::<Url>::Fetch { by: By::Mirror }
    );
    assert_eq!(mirrors.decided(&links[0], EIGHT), None, "not a sample");
    assert!(!mirrors.wants_samples(EIGHT), "no candidates left");
}

#[test]
fn samples_that_add_nothing_drop_the_mirrors_links_and_the_state_reads_back() {
    let (mirror, origin) = (url("http://m.test/"), url("http://o.test/"));
    let mut mirrors = Mirrors::default();
    // A copy at the same path, then two at others: a mirror after all.
    mirrors.note_copy(&url("http://m.test/x"), &url("http://o.test/x"));
    assert_eq!(
        mirrors.link(&mirror, &origin),
        Fate::<Url>::Drop { by: By::Mirror },
        "a release"
    );
    mirrors.note_copy(&url("http://m.test/y"), &url("http://o.test/z"));
    mirrors.note_copy(&url("http://m.test/y?2"), &url("http://o.test/z"));
    let links = keys(6);
    for link in &links {
        let Fate::<Url>::Wait {
            until: Until::Samples { pair, .. },
            ..
        } = mirrors.link(&mirror, &origin)
        else {
            panic!("parked");
        };
        mirrors.candidate(pair, *link, "http://m.test/c");
    }
    // No counterpart predicted: drawn in the order found.
    let drawn = mirrors
        .draws(EIGHT, false, |_| Ok::<_, ()>(Unknown))
        .unwrap();
    assert_eq!(
        drawn.iter().map(|d| d.link).collect::<Vec<_>>(),
        &links[..2]
    );
    for d in &drawn {
        mirrors.sampled(d.pair, d.link);
    }
    assert!(mirrors.take_changed().is_some());
    assert!(mirrors.take_changed().is_none(), "unchanged since");
    assert_eq!(mirrors.decided(&links[0], EIGHT), None);
    // Kept and read back with one sample undecided: the crawl goes on from there.
    let bytes = mirrors.take_changed().unwrap();
    let mut resumed = Mirrors::from_bytes(&bytes).unwrap();
    assert!(resumed.is_pending(&links[1]) && !resumed.is_pending(&links[0]));
    let Fate::<Url>::Wait {
        until: Until::Samples { on, .. },
        ..
    } = resumed.link(&mirror, &origin)
    else {
        panic!("still parked");
    };
    assert!(
        !resumed.wants_samples(EIGHT),
        "its candidates not read back yet"
    );
    // The four links not drawn are still parked on the pair: candidates again, though
    // the pair takes no more samples (two of six).
    let parked: Vec<(Key, String)> = (links[2..].iter())
        .map(|link| (*link, "http://m.test/c".to_owned()))
        .collect();
    let listed = |key: &Key| Ok::<_, ()>(if *key == on { parked.clone() } else { vec![] });
    resumed.resume_candidates(listed).unwrap();
    assert!(!resumed.wants_samples(EIGHT), "two samples of six");
    let more = Budget { cap: 8, share: 0.5 };
    assert!(resumed.wants_samples(more), "three of six");
    let drawn = resumed
        .draws(more, false, |_| Ok::<_, ()>(Unknown))
        .unwrap();
    assert_eq!(
        drawn.iter().map(|d| d.link).collect::<Vec<_>>(),
        &links[2..3]
    );
    assert_eq!(resumed.decided(&links[1], EIGHT), Some((on, false)));
    assert_eq!(
        resumed.link(&mirror, &origin),
        Fate::<Url>::Drop { by: By::Mirror }
    );
    // Another pair of sites starts over.
    let elsewhere = url("http://n.test/");
    resumed.note_copy(&elsewhere, &url("http://o.test/other"));
    assert!(matches!(
        resumed.link(&elsewhere, &origin),
        Fate::<Url>::Wait {
            until: Until::Samples { pair: 1, .. },
            ..
        }
    ));
    assert!(Mirrors::from_bytes(b"{").is_err());
}
