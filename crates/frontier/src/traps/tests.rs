use super::*;

fn check(path: &str) -> Result<(), Trap> {
    let url = CanonicalUrl::parse(&format!("http://example.org{path}")).unwrap();
    TrapRules::new(TrapConfig::default()).check(&url)
}

#[test]
fn real_paths_pass() {
    for path in [
        "/",
        "/docs/3.11/library/os.path.html",
        "/manual/en/mod/mod_proxy_balancer.html",
        "/forum/thread/123456/page/2",
        "/a/a/b",                       // twice in a row is allowed
        "/cal/2026/11/23",              // the calendar is the pattern rules' business
        "/x/1/x/2/x/3",                 // similar, not repeated
        "/a/b/c/d/e/f/g/h/i/j/k/l/m/n", // deep but under 24
    ] {
        assert_eq!(check(path), Ok(()), "{path}");
    }
}

#[test]
fn traps_are_named_by_their_rule() {
    let table: [(&str, Trap); 4] = [
        (
            "/a/a/a/page.html",
            Trap::RepeatedSegments {
                block: "a".into(),
                times: 3,
            },
        ),
        (
            "/docs/en/x/en/x/en/x/en/x/index.html",
            Trap::RepeatedSegments {
                block: "en/x".into(),
                times: 4,
            },
        ),
        (
            "/p/images/images/images/images/",
            Trap::RepeatedSegments {
                block: "images".into(),
                times: 4,
            },
        ),
        (
            &"/d".repeat(20),
            Trap::RepeatedSegments {
                block: "d".into(),
                times: 20,
            },
        ),
    ];
    for (path, trap) in table {
        assert_eq!(check(path), Err(trap), "{path}");
    }
    let deep: String = (0..25).map(|i| format!("/s{i}")).collect();
    assert_eq!(
        check(&deep),
        Err(Trap::TooDeep {
            segments: 25,
            max: 24
        })
    );
    let rules = TrapRules::new(TrapConfig::default());
    assert_eq!(rules.check_chain(3), Ok(()));
    assert_eq!(
        rules.check_chain(4),
        Err(Trap::DuplicateChain { length: 4, max: 3 })
    );
    let off = TrapRules::new(TrapConfig {
        max_path_segments: 0,
        max_repeats: 0,
        max_duplicate_chain: 0,
        max_pattern_on_path: 0,
        max_pages_per_pattern: 0,
        pattern_growth: 0,
        max_duplicate_links: 0,
        max_same_text: 0,
    });
    assert_eq!(off.check_chain(1000), Ok(()));
    let month = pattern("/cal/2026/11");
    let mut path = PatternPath::default();
    for _ in 0..1000 {
        path = off.check_path(&path, &month).unwrap();
    }
    assert_eq!(off.check_pattern_budget(&month, 1 << 40, 0), Ok(()));
    assert_eq!(off.check_duplicate_links(1 << 40), Ok(()));
    let url = CanonicalUrl::parse("http://example.org/a/a/a/a/a").unwrap();
    assert_eq!(off.check(&url), Ok(()), "0 turns a rule off");
}

fn pattern(path: &str) -> UrlPattern {
    UrlPattern::of(&CanonicalUrl::parse(&format!("http://example.org{path}")).unwrap())
}

#[test]
fn patterns_mask_numbers_and_ids_only() {
    let same = [
        ("/cal/2026/11", "/cal/1999/1"),
        ("/list?page=2", "/list?page=30000"),
        ("/list?sort=a&page=2", "/list?page=9&sort=z"),
        ("/a01234.html", "/a99.html"),
        ("/s/0a1b2c3d4e5f/page", "/s/ffffffff00/page"),
        ("/v/x-2026-11-23.html", "/v/x-1-1-1.html"),
    ];
    for (a, b) in same {
        assert_eq!(pattern(a), pattern(b), "{a} {b}");
    }
    let different = [
        ("/library/os.html", "/library/sys.html"),
        ("/cal/2026/11", "/cal/2026/11/23"),
        ("/list?page=2", "/list?p=2"),
        ("/list?page=2", "/list"),
        ("/a1.html", "/b1.html"),
    ];
    for (a, b) in different {
        assert_ne!(pattern(a), pattern(b), "{a} {b}");
    }
    let other_host = UrlPattern::of(&CanonicalUrl::parse("http://example.net/cal/1/2").unwrap());
    assert_ne!(other_host, pattern("/cal/1/2"));
    assert!(pattern("/cal/2026/11").is_family() && pattern("/l?page=2").is_family());
    assert!(!pattern("/library/os.html").is_family());
}

#[test]
fn runs_budgets_and_duplicate_links_have_limits() {
    let rules = TrapRules::new(TrapConfig {
        max_pattern_on_path: 3,
        max_pages_per_pattern: 5,
        max_duplicate_links: 2,
        ..TrapConfig::default()
    });
    let (month, day) = (pattern("/cal/2026/11"), pattern("/cal/2026/11/23"));
    // Month and day views alternately: each pattern counted along the whole path.
    let mut path = PatternPath::default();
    for _ in 0..3 {
        path = rules.check_path(&path, &month).unwrap();
        path = rules.check_path(&path, &day).unwrap();
    }
    assert_eq!(
        rules.check_path(&path, &month),
        Err(Trap::PatternOnPath {
            pattern: month.clone(),
            max: 3
        })
    );
    // Past PATH_PATTERNS other patterns, the oldest is forgotten.
    for i in 0..PATH_PATTERNS {
        let other = pattern(&format!("/p{}", char::from(b'a' + i as u8)));
        path = rules.check_path(&path, &other).unwrap();
    }
    assert!(rules.check_path(&path, &month).is_ok());
    assert_eq!(rules.check_pattern_budget(&day, 4, 0), Ok(()));
    assert!(rules.check_pattern_budget(&day, 5, 0).is_err());
    // Each distinct page of the pattern earns it 16 more.
    assert_eq!(rules.check_pattern_budget(&day, 20, 1), Ok(()));
    assert_eq!(
        rules.check_pattern_budget(&day, 21, 1),
        Err(Trap::PatternBudget {
            pattern: day.clone(),
            max: 5,
            distinct: 1,
            budget: 21
        })
    );
    let fixed = TrapRules::new(TrapConfig {
        max_pages_per_pattern: 5,
        pattern_growth: 0,
        ..TrapConfig::default()
    });
    assert!(fixed.check_pattern_budget(&day, 5, 1_000).is_err());
    assert_eq!(rules.check_duplicate_links(1), Ok(()));
    assert_eq!(
        rules.check_duplicate_links(2),
        Err(Trap::DuplicateLinks { max: 2 })
    );
}

#[test]
fn the_repetition_search_agrees_with_a_plain_one() {
    // Plain: every (width, start), counting repeats one block at a time.
    fn plain(segments: &[&str], at_least: usize) -> bool {
        (1..=segments.len()).any(|w| {
            (0..segments.len()).any(|s| {
                let mut times = 0;
                while s + (times + 1) * w <= segments.len()
                    && segments[s + times * w..s + (times + 1) * w] == segments[s..s + w]
                {
                    times += 1;
                }
                times >= at_least
            })
        })
    }
    let alphabet = ["a", "b", "c"];
    for code in 0..3u32.pow(8) {
        let mut c = code;
        let segments: Vec<&str> = (0..8)
            .map(|_| {
                let s = alphabet[(c % 3) as usize];
                c /= 3;
                s
            })
            .collect();
        for at_least in 2..=4 {
            assert_eq!(
                longest_repetition(&segments, at_least).is_some(),
                plain(&segments, at_least),
                "{segments:?} {at_least}"
            );
        }
    }
}
