//! A rule's fate: checked until trusted, sampled where its rate pays, explored, and without
//! probes only checked.

use super::*;
use nearcrawl_url_rules::RuleStats;

/// A rule's fate as a record names its prediction.
#[allow(non_upper_case_globals)]
mod names {
    pub const Check: &str = "check";
    pub const Verify: &str = "verify";
    pub const Sample: &str = "sample";
    pub const Skip: &str = "skip";
}

/// [`decide`] for a rule's record and what the crawl holds of its counterpart, as a record
/// names the prediction.
fn decided(stats: RuleStats, held: Held, config: &PolicyConfig, explore: bool) -> &'static str {
    let evidence = Evidence {
        rule: serde_json::from_str("0").unwrap_or_else(|e| panic!("{e}")),
        rule_text: "http://n.test/* -> http://o.test/*".to_owned(),
        counterpart: Url::parse("http://o.test/1").unwrap_or_else(|e| panic!("{e}")),
        held,
        stats,
    };
    let fate = decide(evidence, config, explore);
    fate.prediction().map_or("fetch", |(name, _)| name)
}

/// A rule's record: (support, checked, confirmed, copies of the same length and of
/// another, copies adding pages).
fn stats(
    (support, checked, confirmed, same, other, adding): (u32, u32, u32, u32, u32, u32),
) -> RuleStats {
    RuleStats {
        support,
        checked,
        confirmed,
        same_length: same,
        other_length: other,
        adding,
        // Copies 1 to 3 % longer than their originals.
        ratio_low: 1010,
        ratio_high: 1030,
    }
}

#[test]
fn a_rule_is_checked_until_trusted_then_used_as_configured() {
    use names::*;
    let config = |predict| PolicyConfig {
        predict,
        ..PolicyConfig::default()
    };
    // (the rule's record, predict, exploration turn, decision)
    let cases = [
        // Too few pairs, however right.
        ((2, 20, 20, 5, 0, 0), Predict::Verify, false, Check),
        // Too few predictions checked: 7 of 7 is a trust of 0.89.
        ((3, 7, 7, 5, 0, 0), Predict::Verify, false, Check),
        // 8 of 8: 0.9.
        ((3, 8, 8, 5, 0, 0), Predict::Verify, false, Verify),
        ((3, 8, 8, 5, 0, 0), Predict::Skip, false, Skip),
        ((3, 8, 8, 5, 0, 0), Predict::Check, false, Check),
        ((3, 8, 8, 5, 0, 0), Predict::Off, false, Check),
        // Its copies' lengths are not their originals': a length tells nothing, fetched
        // whole; skipping needs no check.
        ((3, 8, 8, 2, 2, 0), Predict::Verify, false, Check),
        ((3, 8, 8, 0, 0, 0), Predict::Verify, false, Check),
        ((3, 8, 8, 0, 5, 0), Predict::Skip, false, Skip),
        // A copy that added a page of its own: never trusted.
        ((3, 8, 8, 5, 0, 1), Predict::Skip, false, Check),
        ((30, 30, 30, 30, 0, 1), Predict::Verify, false, Check),
        // The exploration turn: checked.
        ((3, 8, 8, 5, 0, 0), Predict::Skip, true, Check),
        // One wrong in ten: 10/12 = 0.83, checked again until it earns its trust back.
        ((30, 10, 9, 5, 0, 0), Predict::Skip, false, Check),
        ((30, 30, 29, 5, 0, 0), Predict::Skip, false, Skip),
    ];
    // A counterpart too short to sample.
    let held = Held {
        length: 3_000,
        sample_cost: None,
        head_cost: 256,
    };
    for (record, predict, explore, want) in cases {
        let stats = stats(record);
        let got = decided(stats, held, &config(predict), explore);
        assert_eq!(got, want, "{stats:?} {predict:?} {explore}");
    }
}

#[test]
fn a_rule_not_trusted_is_sampled_where_its_rate_pays_for_the_sample() {
    use names::*;
    let config = |predict| PolicyConfig {
        predict,
        ..PolicyConfig::default()
    };
    // A sample of 3,700 bytes, a HEAD of 256.
    let held = |length| Held {
        length,
        sample_cost: Some(3_700),
        head_cost: 256,
    };
    // (the rule's record, predict, counterpart's length, exploration turn, decision)
    let cases = [
        // A language's host, four pages in five untranslated: 0.77 x (20 - 3.7 kB) >
        // 256 bytes.
        (
            (10, 20, 16, 5, 5, 0),
            Predict::Verify,
            20_000,
            false,
            Sample,
        ),
        ((10, 20, 16, 5, 5, 0), Predict::Skip, 20_000, false, Sample),
        // One in twenty: 1/22 x 16.3 kB = 741 bytes, still worth a HEAD; one in a
        // hundred is not, nor a page hardly larger than its sample.
        ((10, 20, 0, 5, 5, 0), Predict::Verify, 20_000, false, Sample),
        ((10, 100, 0, 5, 5, 0), Predict::Verify, 20_000, false, Check),
        ((10, 20, 16, 5, 5, 0), Predict::Verify, 4_000, false, Check),
        // Never checked (0.5 assumed), once it has its pairs: with one pair, sampled
        // predictions on the held-out languages wasted more than they saved (item 19).
        ((3, 0, 0, 0, 0, 0), Predict::Verify, 20_000, false, Sample),
        ((2, 0, 0, 0, 0, 0), Predict::Verify, 20_000, false, Check),
        // Trusted, its copies' lengths telling nothing (another template): sampled.
        ((3, 8, 8, 0, 5, 0), Predict::Verify, 20_000, false, Sample),
        // Trusted, and lengths tell: verified by length first; skipped with "skip".
        ((3, 8, 8, 5, 0, 0), Predict::Verify, 20_000, false, Verify),
        ((3, 8, 8, 5, 0, 0), Predict::Skip, 20_000, false, Skip),
        // Copies with pages of their own, the exploration turn, "check" and "off":
        // fetched whole.
        ((10, 20, 16, 5, 5, 1), Predict::Verify, 20_000, false, Check),
        ((10, 20, 16, 5, 5, 0), Predict::Verify, 20_000, true, Check),
        ((10, 20, 16, 5, 5, 0), Predict::Check, 20_000, false, Check),
        ((10, 20, 16, 5, 5, 0), Predict::Off, 20_000, false, Check),
    ];
    for (record, predict, length, explore, want) in cases {
        let stats = stats(record);
        let got = decided(stats, held(length), &config(predict), explore);
        assert_eq!(got, want, "{stats:?} {predict:?} {length} {explore}");
    }
    // No shingles kept of the counterpart: nothing to sample against.
    let unsampled = Held {
        length: 20_000,
        sample_cost: None,
        head_cost: 256,
    };
    let record = stats((10, 20, 16, 5, 5, 0));
    assert_eq!(
        decided(record, unsampled, &config(Predict::Verify), false),
        Check
    );
    // No copy's length known: no window to tell copies by.
    let unknown = RuleStats {
        ratio_low: 0,
        ratio_high: 0,
        ..record
    };
    assert_eq!(
        decided(unknown, held(20_000), &config(Predict::Verify), false),
        Check
    );
}

#[test]
fn one_trusted_prediction_in_explore_is_checked() {
    let config = PolicyConfig {
        predict: Predict::Skip,
        min_support: 1,
        min_trust: 0.5,
        explore: 4,
        probes: true,
    };
    let mut policy = LinkPolicy::new(config);
    let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    policy.learn(
        &url("http://n.example/1"),
        &url("http://o.example/1"),
        CopyFacts::default(),
    );
    let known = |_: &Url| Some(Held::default());
    let fates: Vec<bool> = (2..14)
        .map(|n| {
            let fate = policy.fate(&url(&format!("http://n.example/{n}")), &known);
            matches!(fate, Fate::Fetch { by: By::Rule(_) })
        })
        .collect();
    let checked: Vec<usize> = (0..fates.len()).filter(|&i| fates[i]).collect();
    assert_eq!(checked, [3, 7, 11]);
    // A counterpart the crawl does not hold: fetched, no evidence to act on.
    let nothing = |_: &Url| None;
    assert_eq!(
        policy.fate(&url("http://n.example/99"), &nothing),
        Fate::Fetch { by: By::New }
    );
}

#[test]
fn what_its_copies_were_decides_how_a_rule_is_used() {
    let config = PolicyConfig {
        predict: Predict::Verify,
        min_support: 1,
        min_trust: 0.5,
        explore: 0,
        probes: true,
    };
    let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    let (n1, o1) = (url("http://n.example/1"), url("http://o.example/1"));
    let known = |_: &Url| Some(Held::default());
    let fate = |policy: &mut LinkPolicy| policy.fate(&url("http://n.example/2"), &known);
    let facts = |same, adds| CopyFacts {
        same_length: Some(same),
        adds_pages: Some(adds),
        ratio: None,
    };

    let mut policy = LinkPolicy::new(config);
    let rule = policy.learn(&n1, &o1, facts(true, false))[0];
    assert!(
        matches!(
            fate(&mut policy),
            Fate::Check {
                how: How::Verify,
                ..
            }
        ),
        "the same length"
    );
    policy.verified(rule, false);
    assert!(
        matches!(fate(&mut policy), Fate::Fetch { by: By::Rule(_) }),
        "as often not"
    );
    policy.verified(rule, true);
    assert!(
        matches!(
            fate(&mut policy),
            Fate::Check {
                how: How::Verify,
                ..
            }
        ),
        "it told once more"
    );

    // A mirror's other template: its copies' lengths tell nothing.
    let mut policy = LinkPolicy::new(config);
    policy.learn(&n1, &o1, facts(false, false));
    assert!(matches!(fate(&mut policy), Fate::Fetch { by: By::Rule(_) }));

    // A copy with a page of its own: the rule's pages are fetched.
    let mut policy = LinkPolicy::new(config);
    policy.learn(&n1, &o1, facts(true, false));
    policy.learn(&n1, &o1, facts(true, true));
    assert!(matches!(fate(&mut policy), Fate::Fetch { by: By::Rule(_) }));
}

#[test]
fn without_probes_a_prediction_to_verify_or_sample_is_only_checked() {
    let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    let config = |probes| PolicyConfig {
        predict: Predict::Verify,
        min_support: 1,
        min_trust: 0.5,
        explore: 0,
        probes,
    };
    let same = CopyFacts {
        same_length: Some(true),
        adds_pages: Some(false),
        ratio: None,
    };
    let known = |_: &Url| Some(Held::default());
    for (probes, verified) in [(true, true), (false, false)] {
        let mut policy = LinkPolicy::new(config(probes));
        policy.learn(&url("http://n.example/1"), &url("http://o.example/1"), same);
        let fate = policy.fate(&url("http://n.example/2"), &known);
        assert_eq!(
            matches!(
                fate,
                Fate::Check {
                    how: How::Verify,
                    ..
                }
            ),
            verified,
            "probes {probes}"
        );
        assert_eq!(
            matches!(fate, Fate::Fetch { by: By::Rule(_) }),
            !verified,
            "probes {probes}"
        );
    }
}

#[test]
fn a_copy_s_length_says_whether_it_kept_its_original_s() {
    let facts = |copy, original| CopyFacts::of_lengths(copy, original, 0.02);
    let same = facts(Some(1_020), Some(1_000));
    assert_eq!((same.same_length, same.ratio), (Some(true), Some(1.02)));
    assert_eq!(facts(Some(1_021), Some(1_000)).same_length, Some(false));
    assert_eq!(facts(Some(1_000), None), CopyFacts::default());
    assert_eq!(facts(None, Some(1_000)), CopyFacts::default());
    // A redirect's original.
    assert_eq!(facts(Some(1_000), Some(0)), CopyFacts::default());
}

/// A mirror crawled side by side with its origin, whose pages a syndication site rewrites:
/// the rule to the syndication site is the more trusted, but the crawl holds only the
/// origin's page; the origin's rule names it.
#[test]
fn the_most_trusted_rule_whose_counterpart_is_held_names_it() {
    let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{e}"));
    let config = PolicyConfig {
        predict: Predict::Check,
        ..PolicyConfig::default()
    };
    let mut policy = LinkPolicy::new(config);
    let facts = CopyFacts::default();
    for n in 1..=3 {
        let mirror = url(&format!("http://m.test/story/{n}/"));
        let to_origin = url(&format!("http://o.test/a/{n}.html"));
        let to_syndication = url(&format!("http://s.test/news/{n}"));
        policy.learn(&mirror, &to_syndication, facts);
        policy.learn(&mirror, &to_origin, facts);
    }
    let syndication = policy.book().predict(&url("http://m.test/story/9/"));
    let best = syndication.unwrap_or_else(|| panic!("a rule"));
    policy.checked(best.rule, true);
    // (what it protects, the hosts whose pages the crawl holds) -> the counterpart named
    let cases = [
        (
            "both held: the most trusted rule's",
            &["o.test", "s.test"][..],
            Some("http://s.test/news/9"),
        ),
        (
            "the third site's not fetched: the origin's",
            &["o.test"],
            Some("http://o.test/a/9.html"),
        ),
        ("neither held: fetched as new", &[], None),
    ];
    for (what, hosts, named) in cases {
        let known = |u: &Url| {
            let held = Held {
                length: 2_000,
                sample_cost: None,
                head_cost: 256,
            };
            hosts
                .contains(&u.host_str().unwrap_or_default())
                .then_some(held)
        };
        let fate = policy.clone().fate(&url("http://m.test/story/9/"), &known);
        let counterpart = fate.rule().map(|e| e.counterpart.to_string());
        assert_eq!(counterpart.as_deref(), named, "{what}");
    }
}

/// A mirror crawled side by side with its origin: pairs found with the mirror's page as the
/// copy teach the correspondence both ways, so a link to the origin whose mirror page the
/// crawl holds is predicted too, with the lengths read the other way and without the pages
/// the mirror's copies added (its "related" links: the origin's pages add none).
#[test]
fn a_pair_teaches_its_correspondence_both_ways() {
    let url = |s: &str| Url::parse(s).unwrap_or_else(|e| panic!("{e}"));
    let mut policy = LinkPolicy::new(PolicyConfig {
        predict: Predict::Check,
        ..PolicyConfig::default()
    });
    let facts = CopyFacts {
        same_length: Some(false),
        adds_pages: Some(true),
        ratio: Some(1.25),
    };
    for n in 1..=3 {
        let (mirror, origin) = (
            url(&format!("http://m.test/story/{n}/")),
            url(&format!("http://o.test/a/{n}.html")),
        );
        policy.learn(&mirror, &origin, facts);
    }
    let book = policy.book();
    let ahead = book.predict(&url("http://m.test/story/9/"));
    let ahead = ahead.unwrap_or_else(|| panic!("the mirror's rule"));
    assert_eq!(ahead.counterpart.as_str(), "http://o.test/a/9.html");
    let behind = book.predict(&url("http://o.test/a/9.html"));
    let behind = behind.unwrap_or_else(|| panic!("the rule read the other way"));
    assert_eq!(behind.counterpart.as_str(), "http://m.test/story/9/");
    let (ahead, behind) = (book.stats(ahead.rule), book.stats(behind.rule));
    let (ahead, behind) = (ahead.unwrap_or_default(), behind.unwrap_or_default());
    assert_eq!((ahead.support, behind.support), (3, 3));
    assert_eq!((ahead.adding, behind.adding), (3, 0));
    assert_eq!((ahead.other_length, behind.other_length), (3, 3));
    assert_eq!((ahead.ratio_low, behind.ratio_low), (1250, 800));
}
