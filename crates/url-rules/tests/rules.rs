//! The rules the shapes of real duplicates teach, each as a table: a confirmed pair, the
//! rule learned, and what it predicts for other URLs. And the indexed lookup against the
//! scan of every rule.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use nearcrawl_url_rules::{Rule, RuleBook};
use proptest::prelude::*;
use url::Url;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

/// (copy, original, the rule, [(a URL, its predicted counterpart or None)]).
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, Option<&'static str>)],
);

const CASES: &[Case] = &[
    // A mirror under another URL scheme.
    (
        "http://m.example/story/17/",
        "http://o.example/a/17.html",
        "http://m.example/story/{1}/ -> http://o.example/a/{1}.html",
        &[
            (
                "http://m.example/story/42/",
                Some("http://o.example/a/42.html"),
            ),
            ("http://m.example/story/42", None),
            ("http://m.example/about/42/", None),
            ("http://o.example/story/42/", None),
        ],
    ),
    // A mirror's sections: a number only the copy has may be any.
    (
        "http://m.example/m/3/story.php?id=7",
        "http://o.example/article/7.html",
        "http://m.example/m/*/story.php?id={1} -> http://o.example/article/{1}.html",
        &[
            (
                "http://m.example/m/5/story.php?id=9",
                Some("http://o.example/article/9.html"),
            ),
            ("http://m.example/m/x/story.php?id=9", None),
        ],
    ),
    // A new release on a host of its own: every word carried over.
    (
        "http://new.example:8080/docs/LangRef.html",
        "http://old.example:8080/docs/LangRef.html",
        "http://new.example:8080/{1}/{2}.{3} -> http://old.example:8080/{1}/{2}.{3}",
        &[
            (
                "http://new.example:8080/docs/Passes.html",
                Some("http://old.example:8080/docs/Passes.html"),
            ),
            // Another shape: the prefix rule (the host) still gives it.
            (
                "http://new.example:8080/docs/sub/Passes.html",
                Some("http://old.example:8080/docs/sub/Passes.html"),
            ),
            ("http://other.example:8080/docs/Passes.html", None),
        ],
    ),
    // A language's untranslated page under its prefix.
    (
        "http://h.example/es/guide/install.html",
        "http://h.example/en/guide/install.html",
        "http://h.example/es/{1}/{2}.{3} -> http://h.example/en/{1}/{2}.{3}",
        &[(
            "http://h.example/es/guide/upgrade.html",
            Some("http://h.example/en/guide/upgrade.html"),
        )],
    ),
    // A session id: any value, dropped.
    (
        "http://shop.example/item?id=5&sid=a1b2",
        "http://shop.example/item?id=5",
        "http://shop.example/{1}?id={2}&sid=* -> http://shop.example/{1}?id={2}",
        &[
            (
                "http://shop.example/item?sid=zz&id=9",
                Some("http://shop.example/item?id=9"),
            ),
            ("http://shop.example/item?id=9", None),
        ],
    ),
    // A print view: a literal parameter value.
    (
        "http://n.example/a/17?print=1",
        "http://n.example/a/17",
        "http://n.example/{1}/{2}?print=* -> http://n.example/{1}/{2}",
        &[(
            "http://n.example/a/18?print=yes",
            Some("http://n.example/a/18"),
        )],
    ),
    // The id moved from the path to the query.
    (
        "http://n.example/story/17",
        "http://n.example/view?id=17",
        "http://n.example/story/{1} -> http://n.example/view?id={1}",
        &[(
            "http://n.example/story/99",
            Some("http://n.example/view?id=99"),
        )],
    ),
    // Another language's parameter value: kept literal on both sides.
    (
        "http://d.example/page?id=3&lang=fr",
        "http://d.example/page?id=3&lang=en",
        "http://d.example/{1}?id={2}&lang=fr -> http://d.example/{1}?id={2}&lang=en",
        &[
            (
                "http://d.example/page?id=4&lang=fr",
                Some("http://d.example/page?id=4&lang=en"),
            ),
            ("http://d.example/page?id=4&lang=de", None),
        ],
    ),
];

#[test]
fn each_shape_of_duplicate_teaches_its_rule() {
    for (copy, original, want, predictions) in CASES {
        let rule = Rule::learn(&url(copy), &url(original)).unwrap();
        assert_eq!(rule.to_string(), *want, "{copy} -> {original}");
        assert_eq!(
            rule.apply(&url(copy)).as_ref().map(Url::as_str),
            Some(*original),
            "a rule gives its own pair back"
        );
        let mut book = RuleBook::new();
        assert!(!book.learn(&url(copy), &url(original)).is_empty());
        for (at, counterpart) in *predictions {
            let got = book.predict(&url(at));
            assert_eq!(
                got.as_ref().map(|p| p.counterpart.as_str()),
                *counterpart,
                "{want}: {at}"
            );
        }
    }
}

/// (copy, original, the prefix rule or None).
const PREFIXES: &[(&str, &str, Option<&str>)] = &[
    (
        "http://new.example:8080/docs/LangRef.html",
        "http://old.example:8080/docs/LangRef.html",
        Some("http://new.example:8080/* -> http://old.example:8080/*"),
    ),
    (
        "http://h.example/es/guide/install.html",
        "http://h.example/en/guide/install.html",
        Some("http://h.example/es/* -> http://h.example/en/*"),
    ),
    (
        "http://h.example/v2/book/ch01.html",
        "http://h.example/book/ch01.html",
        Some("http://h.example/v2/* -> http://h.example/*"),
    ),
    // The same end within a segment only ("install.html" and "reinstall.html"): the
    // segment itself differs.
    (
        "http://h.example/es/reinstall.html",
        "http://h.example/en/install.html",
        None,
    ),
    // A mirror's section for another's.
    (
        "http://m.example/story/17/",
        "http://o.example/a/17/",
        Some("http://m.example/story/* -> http://o.example/a/*"),
    ),
    // Ends alike in no word.
    ("http://m.example/story/17/", "http://o.example/a/18/", None),
    ("http://m.example/a.html", "http://o.example/b.html", None),
    ("http://m.example/", "http://o.example/", None),
];

#[test]
fn a_pair_that_ends_alike_teaches_a_prefix() {
    for (copy, original, want) in PREFIXES {
        let rule = Rule::learn_prefix(&url(copy), &url(original));
        assert_eq!(
            rule.as_ref().map(Rule::to_string).as_deref(),
            *want,
            "{copy}"
        );
        if let Some(rule) = rule {
            assert_eq!(rule.apply(&url(copy)), Some(url(original)));
        }
    }
}

#[test]
fn a_pair_that_carries_nothing_teaches_no_rule() {
    for (copy, original) in [
        ("http://a.example/x", "http://a.example/x"),
        // A copy at another id: the rule would hold for this pair alone.
        ("http://a.example/p/5.html", "http://a.example/p/7.html"),
        ("http://a.example/cal/2026/5", "http://a.example/cal/2026/4"),
        ("http://a.example/about", "http://b.example/contact"),
        ("http://a.example/", "http://b.example/"),
    ] {
        assert_eq!(Rule::learn(&url(copy), &url(original)), None, "{copy}");
    }
}

#[test]
fn support_and_checks_decide_between_rules_that_match() {
    let mut book = RuleBook::new();
    // Two explanations of the mirror's URLs: by id (twice) and one that also keeps "story".
    let by_id = book.learn(
        &url("http://m.example/story/1/"),
        &url("http://o.example/a/1.html"),
    )[0];
    book.learn(
        &url("http://m.example/story/2/"),
        &url("http://o.example/a/2.html"),
    );
    let by_word = book.learn(
        &url("http://m.example/story/3/"),
        &url("http://o.example/story/3.html"),
    )[0];
    assert_ne!(by_id, by_word);
    assert_eq!(book.stats(by_id).unwrap().support, 2);
    let predict = |book: &RuleBook| book.predict(&url("http://m.example/story/4/")).unwrap();
    assert_eq!(predict(&book).rule, by_id, "the better supported");
    // Its predictions turn out wrong, the other's right: the other is trusted more.
    book.check(by_id, false);
    book.check(by_id, false);
    book.check(by_word, true);
    assert_eq!(predict(&book).rule, by_word);
    assert_eq!(
        predict(&book).counterpart.as_str(),
        "http://o.example/story/4.html"
    );
    let stats = book.stats(by_id).unwrap();
    assert_eq!(
        (stats.checked, stats.confirmed, stats.rate()),
        (2, 0, Some(0.0))
    );
}

/// URLs from a small alphabet, so that rules learned from some pairs match other URLs.
fn small_url() -> impl Strategy<Value = String> {
    let host = prop::sample::select(vec!["a.example", "b.example"]);
    let word = prop::sample::select(vec!["x", "y", "7", "doc", "es", "en"]);
    let sep = prop::sample::select(vec!["/", ".", "-"]);
    let segment = (word.clone(), prop::option::of((sep, word.clone())));
    let query = prop::option::of((prop::sample::select(vec!["id", "sid"]), word));
    (host, prop::collection::vec(segment, 0..4), query).prop_map(|(host, segments, query)| {
        let mut url = format!("http://{host}");
        for (word, rest) in segments {
            url.push('/');
            url.push_str(word);
            if let Some((sep, word)) = rest {
                url.push_str(sep);
                url.push_str(word);
            }
        }
        if url.ends_with(host) {
            url.push('/');
        }
        if let Some((name, value)) = query {
            url.push_str(&format!("?{name}={value}"));
        }
        url
    })
}

proptest! {
    /// The lookup by shape gives what trying every rule gives, whatever was learned and
    /// checked.
    #[test]
    fn the_indexed_prediction_agrees_with_the_scan(
        pairs in prop::collection::vec((small_url(), small_url()), 0..20),
        checks in prop::collection::vec((0usize..20, any::<bool>()), 0..20),
        asked in prop::collection::vec(small_url(), 1..20),
    ) {
        let mut book = RuleBook::new();
        let mut ids = Vec::new();
        for (copy, original) in &pairs {
            for id in book.learn(&url(copy), &url(original)) {
                ids.push(id);
                // A rule gives its own pair back.
                let rule = book.rule(id).unwrap();
                prop_assert_eq!(rule.apply(&url(copy)), Some(url(original)));
            }
        }
        for (n, confirmed) in checks {
            if let Some(id) = ids.get(n) {
                book.check(*id, confirmed);
            }
        }
        // Kept and read back, the book gives the same predictions by the same ids.
        let kept = serde_json::to_vec(&book).unwrap();
        let read: RuleBook = serde_json::from_slice(&kept).unwrap();
        for at in &asked {
            let predicted = book.predict(&url(at));
            prop_assert_eq!(&predicted, &book.predict_by_scan(&url(at)));
            prop_assert_eq!(&predicted, &read.predict(&url(at)));
            // Every counterpart once, the best rule's first, each by a rule that gives it.
            let ranked = book.ranked(&url(at));
            prop_assert_eq!(ranked.first(), predicted.as_ref());
            let distinct: std::collections::HashSet<_> =
                ranked.iter().map(|p| p.counterpart.clone()).collect();
            prop_assert_eq!(distinct.len(), ranked.len());
            for p in &ranked {
                let rule = book.rule(p.rule).unwrap();
                prop_assert_eq!(rule.apply(&url(at)), Some(p.counterpart.clone()));
            }
        }
    }
}

#[test]
fn a_full_book_learns_no_new_rule_but_still_counts_support() {
    let mut book = RuleBook::new();
    book.set_limit(1);
    let first = book.learn(
        &url("http://m.example/story/1/"),
        &url("http://o.example/a/1.html"),
    );
    assert_eq!(first.len(), 1);
    assert!(
        book.learn(&url("http://x.example/p/1"), &url("http://y.example/q/1"))
            .is_empty()
    );
    book.learn(
        &url("http://m.example/story/2/"),
        &url("http://o.example/a/2.html"),
    );
    assert_eq!(book.len(), 1);
    assert_eq!(book.stats(first[0]).unwrap().support, 2);
}

#[test]
fn a_rule_keeps_the_lengths_of_its_copies() {
    let mut book = RuleBook::new();
    let rule = book.learn(
        &url("http://h.example/cs/a.html"),
        &url("http://h.example/en/a.html"),
    )[0];
    assert_eq!(book.stats(rule).unwrap().length_window(20_000), None);
    // Untranslated pages, their menus translated: 1.5 % and 3 % longer.
    book.note_ratio(rule, 1.015);
    book.note_ratio(rule, 1.03);
    let stats = book.stats(rule).unwrap();
    assert_eq!((stats.ratio_low, stats.ratio_high), (1015, 1030));
    // Give or take a hundredth of the original's length.
    assert_eq!(stats.length_window(20_000), Some((20_100, 20_800)));
    // Kept with the book.
    let kept: RuleBook = serde_json::from_str(&serde_json::to_string(&book).unwrap()).unwrap();
    assert_eq!(kept.stats(rule).unwrap().ratio_high, 1030);
}

#[test]
fn a_correspondence_reads_both_ways_unless_one_side_takes_any_value() {
    // (what it protects, copy, original) -> the rule read the other way
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        (
            "a mirror under another scheme",
            "http://m.example/story/17/",
            "http://o.example/a/17.html",
            Some("http://o.example/a/{1}.html -> http://m.example/story/{1}/"),
        ),
        (
            "a language's page for another's",
            "http://h.example/de/guide.html",
            "http://h.example/en/guide.html",
            Some("http://h.example/en/{1}.{2} -> http://h.example/de/{1}.{2}"),
        ),
        (
            "a session parameter: any value on the copy's side, one on the original's",
            "http://s.example/p/14?colour=red",
            "http://s.example/p/14",
            None,
        ),
    ];
    for (what, copy, original, want) in cases {
        let rule = Rule::learn(&url(copy), &url(original)).unwrap();
        let reversed = rule.reversed();
        assert_eq!(
            reversed.as_ref().map(Rule::to_string).as_deref(),
            *want,
            "{what}: {rule}"
        );
        if let Some(reversed) = reversed {
            assert_eq!(reversed.apply(&url(original)), Some(url(copy)), "{what}");
            assert_eq!(reversed.reversed(), Some(rule), "{what}: twice is the rule");
        }
    }
    let prefix = Rule::learn_prefix(
        &url("http://new.example/docs/a.html"),
        &url("http://old.example/docs/a.html"),
    )
    .unwrap();
    assert_eq!(
        prefix.reversed().map(|r| r.to_string()).as_deref(),
        Some("http://old.example/* -> http://new.example/*")
    );
}

#[test]
fn a_pair_teaches_the_correspondence_read_the_other_way() {
    let mut book = RuleBook::new();
    let (copy, original) = (
        url("http://m.example/story/1/"),
        url("http://o.example/a/1.html"),
    );
    let learned = book.learn(&copy, &original);
    let reversed = book.learn_reversed(&learned);
    assert_eq!(reversed.len(), learned.len());
    // A pair found the other way round supports the same rules.
    let again = book.learn(
        &url("http://o.example/a/2.html"),
        &url("http://m.example/story/2/"),
    );
    assert_eq!(again, reversed);
    assert_eq!(book.learn_reversed(&again), learned);
    for id in learned.iter().chain(&reversed) {
        assert_eq!(book.stats(*id).unwrap().support, 2);
    }
    // Either side's page predicts the other's.
    let at = |s: &str| book.predict(&url(s)).map(|p| p.counterpart.to_string());
    assert_eq!(
        at("http://o.example/a/3.html").as_deref(),
        Some("http://m.example/story/3/")
    );
    assert_eq!(
        at("http://m.example/story/3/").as_deref(),
        Some("http://o.example/a/3.html")
    );
    // A full book learns no reversed rule.
    let mut full = RuleBook::new();
    full.set_limit(1);
    let one = full.learn(&copy, &original);
    assert!(full.learn_reversed(&one).is_empty());
}

/// Pairs that do not end alike, and the affix rule each teaches
/// ([`Rule::learn_affix`]), if any.
const AFFIXES: &[(&str, &str, Option<&str>)] = &[
    // A mirror under another URL scheme: one rule whatever the path's depth or words.
    (
        "http://m.example/story/mod/mod_auth_basic/",
        "http://o.example/en/mod/mod_auth_basic.html",
        Some("http://m.example/story/*/ -> http://o.example/en/*.html"),
    ),
    (
        "http://m.example/story/glossary/",
        "http://o.example/en/glossary.html",
        Some("http://m.example/story/*/ -> http://o.example/en/*.html"),
    ),
    // The shared run ends where a word ends on both sides, not inside one.
    (
        "http://m.example/s/abc/",
        "http://o.example/abcd.html",
        None,
    ),
    // Ending alike: a prefix rule's, or none.
    ("http://m.example/story/17/", "http://o.example/a/17/", None),
    (
        "http://h.example/ch07.pt-br.html",
        "http://h.example/ch07.pt.html",
        None,
    ),
    // Nothing shared that starts a segment on both sides.
    ("http://m.example/x-a/", "http://o.example/y-a.html", None),
];

#[test]
fn a_pair_that_does_not_end_alike_teaches_an_affix() {
    for (copy, original, want) in AFFIXES {
        let rule = Rule::learn_affix(&url(copy), &url(original));
        assert_eq!(
            rule.as_ref().map(Rule::to_string).as_deref(),
            *want,
            "{copy}"
        );
        if let Some(rule) = rule {
            assert_eq!(rule.apply(&url(copy)), Some(url(original)));
            let reversed = rule.reversed().unwrap_or_else(|| panic!("{rule}"));
            assert_eq!(reversed.apply(&url(original)), Some(url(copy)));
        }
    }
    // Another page of the mirror, any depth; not one outside its shape.
    let rule = Rule::learn_affix(
        &url("http://m.example/story/glossary/"),
        &url("http://o.example/en/glossary.html"),
    )
    .unwrap_or_else(|| panic!("an affix"));
    assert_eq!(
        rule.apply(&url("http://m.example/story/howto/ssi/")),
        Some(url("http://o.example/en/howto/ssi.html"))
    );
    assert_eq!(rule.apply(&url("http://m.example/story/")), None);
    assert_eq!(rule.apply(&url("http://m.example/other/a/")), None);
}
