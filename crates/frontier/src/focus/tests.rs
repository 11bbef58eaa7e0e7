//! Tests of `focus`.

use super::*;
use proptest::prelude::*;

fn config() -> FocusConfig {
    FocusConfig {
        terms: [
            ("river".to_string(), 2.0),
            ("valley".to_string(), 1.0),
            ("河流".to_string(), 2.0),
        ]
        .into_iter()
        .collect(),
        ..FocusConfig::default()
    }
}

fn relevance(config: &FocusConfig, examples: &[String]) -> Relevance {
    Relevance::new(config, examples).unwrap().unwrap()
}

fn url(s: &str) -> url::Url {
    url::Url::parse(s).unwrap()
}

#[test]
fn no_topic_means_breadth_first() {
    assert!(
        Relevance::new(&FocusConfig::default(), &[])
            .unwrap()
            .is_none()
    );
    let blank = FocusConfig {
        description: "  ".into(),
        ..FocusConfig::default()
    };
    assert!(Relevance::new(&blank, &[]).unwrap().is_none());
}

#[test]
fn scores_order_pages_and_links() {
    let mut r = relevance(&config(), &[]);
    let on_topic = r.observe(&TermCounts::of(
        "The river cut a valley. Rivers and the river bank: river, river.",
    ));
    let off_topic = r.observe(&TermCounts::of("Stock prices fell sharply on Monday."));
    assert!(on_topic > 0.3, "{on_topic}");
    assert_eq!(off_topic, 0.0);
    assert!(r.on_topic(on_topic) && !r.on_topic(off_topic));
    assert!(
        r.score("长江是中国最长的河流") > 0.0,
        "Chinese terms go through jieba"
    );
    let to = url("http://a.test/page");
    let good = r.link_priority(on_topic, "river valley guide", "", &to);
    let weak = r.link_priority(on_topic, "contact us", "", &to);
    let bad = r.link_priority(off_topic, "contact us", "", &to);
    assert!(good < weak && weak < bad, "{good} {weak} {bad}");
    let by_url = r.link_priority(off_topic, "more", "", &url("http://a.test/river_valley"));
    assert!(by_url < bad, "the URL's words count: {by_url} {bad}");
}

#[test]
fn the_tunnel_expands_off_topic_pages_a_few_in_a_row_at_a_lower_priority() {
    let r = relevance(&config(), &[]);
    let off = 0.01;
    let mut run = 0;
    for expected in 1..=3 {
        run = r.off_topic_run(off, run);
        assert_eq!(run, expected);
        assert!(r.expands(run, false), "within the tunnel of 3");
    }
    run = r.off_topic_run(off, run);
    assert!(
        !r.expands(run, false),
        "the fourth off-topic page in a row is not expanded"
    );
    assert!(r.expands(run, true), "a seed always is");
    assert_eq!(
        r.off_topic_run(0.9, run),
        0,
        "an on-topic page ends the run"
    );
    // What a page passes on: a seed at least the threshold, an on-topic page its
    // relevance, an off-topic one half of what it was passed or of its own relevance.
    assert_eq!(r.potential(0.0, None), 0.2);
    assert_eq!(r.potential(0.6, None), 0.6);
    assert_eq!(r.potential(0.4, Some(0.1)), 0.4);
    assert_eq!(r.potential(0.0, Some(0.4)), 0.2);
    assert_eq!(r.potential(0.1, Some(0.02)), 0.05);
    assert!(
        r.potential(0.1, Some(0.12)) < 0.1,
        "a near miss passes on less than its own relevance: its tunnel fades too"
    );
    let to = url("http://a.test/x");
    assert!(
        r.link_priority(0.2, "more", "", &to) < r.link_priority(0.1, "more", "", &to),
        "a fading tunnel lowers the priority"
    );
}

#[test]
fn while_no_page_reaches_the_threshold_the_best_found_end_tunnels() {
    // A threshold no page reaches, as a description's few words make for every page.
    let mut r = relevance(
        &FocusConfig {
            threshold: 0.95,
            ..config()
        },
        &[],
    );
    assert_eq!(r.bar(), 0.95, "nothing found yet: the threshold");
    let page = |text: &str| TermCounts::of(text);
    let best = r.assess(
        &page("river valley and the stock market"),
        3,
        Some(0.1),
        false,
    );
    assert!(best.relevance > 0.2 && best.relevance < 0.95, "{best:?}");
    assert_eq!(best.off_topic, 0, "the best page so far ends the tunnel");
    assert!(best.expands);
    assert!(
        !r.on_topic(best.relevance),
        "but is not on topic: it passes on a fading potential"
    );
    assert!(best.potential < best.relevance);
    assert!((r.bar() - 0.75 * best.relevance).abs() < 1e-6);
    let weak = r.assess(
        &page("river prices, stock markets, shares, bonds, funds, banks, trading"),
        3,
        Some(0.1),
        false,
    );
    assert!(weak.relevance > 0.0 && weak.relevance < r.bar(), "{weak:?}");
    assert_eq!(weak.off_topic, 4, "a weaker page goes on with the tunnel");
    assert!(!weak.expands);
    // A resumed crawl goes on from the best kept.
    let mut resumed = relevance(
        &FocusConfig {
            threshold: 0.95,
            ..config()
        },
        &[],
    );
    resumed.resume_best(r.best());
    assert_eq!(resumed.bar(), r.bar());
    resumed.resume_best(f32::NAN);
    assert_eq!(resumed.bar(), r.bar(), "nothing from a bad value");
    // With a threshold that pages reach, the bar is the threshold.
    let mut r = relevance(&config(), &[]);
    r.assess(&page("river river valley"), 0, None, false);
    assert_eq!(r.bar(), 0.2);
}

#[test]
fn a_topic_from_examples_and_a_description_finds_pages_like_them() {
    let examples = vec![
        "Asynchronous I/O: coroutines and tasks run on an event loop. An awaitable \
             coroutine schedules tasks; the event loop runs them concurrently."
            .to_string(),
    ];
    let config = FocusConfig {
        examples: vec!["file:async.txt".into()],
        description: "event loops, coroutines, tasks and futures".into(),
        ..FocusConfig::default()
    };
    let mut r = relevance(&config, &examples);
    let background = [
        "Regular expressions match patterns in strings with a compiled pattern object.",
        "The email package parses messages and headers into message objects.",
        "Sockets send and receive bytes over a network connection.",
    ];
    for text in background {
        r.observe(&TermCounts::of(text));
    }
    let like = r.observe(&TermCounts::of(
        "Tasks wrap coroutines so that the event loop runs them; await a task.",
    ));
    let unlike = r.observe(&TermCounts::of(
        "A pattern object compiled from a regular expression matches strings.",
    ));
    assert!(like > 0.3 && unlike < 0.05, "{like} {unlike}");
    let top: Vec<String> = r.top_terms(5).into_iter().map(|(w, _)| w).collect();
    assert!(top.iter().any(|w| w == "coroutines"), "{top:?}");
}

#[test]
fn examples_without_words_are_errors_that_name_them() {
    let config = FocusConfig {
        examples: vec!["empty.html".into()],
        ..FocusConfig::default()
    };
    let err = Relevance::new(&config, &["1 2 3 the of".into()]).unwrap_err();
    assert!(err.0.contains("empty.html"), "{err}");
    let stop = FocusConfig {
        terms: [("the".to_string(), 1.0)].into_iter().collect(),
        ..FocusConfig::default()
    };
    assert!(
        Relevance::new(&stop, &[])
            .unwrap_err()
            .0
            .contains("\"the\"")
    );
}

#[test]
fn frequencies_kept_and_resumed_score_as_before() {
    let pages = [
        "Rivers carve valleys and carry sediment to the sea.",
        "The delta of a river spreads its sediment in a fan.",
        "Compilers lower an intermediate representation to machine code.",
    ];
    let mut first = relevance(&config(), &[]);
    for page in pages {
        first.observe(&TermCounts::of(page));
    }
    let bytes = first.frequencies().to_bytes();
    let df = DocFrequencies::from_bytes(&bytes).unwrap();
    assert_eq!(df.documents(), 3);
    let mut resumed = relevance(&config(), &[]);
    resumed.resume_with(df);
    // The first run with its topic recomputed at the same point scores the next page as
    // the resumed one does: the bytes kept everything.
    let kept = first.frequencies().clone();
    first.resume_with(kept);
    let next = TermCounts::of("A river meanders across its floodplain to the sea.");
    assert_eq!(first.observe(&next), resumed.observe(&next));
    assert_eq!(resumed.frequencies().documents(), 4);
    assert!(DocFrequencies::from_bytes(&bytes[..100]).is_err());
    let mut other = bytes.clone();
    other[0] = b'X';
    assert!(DocFrequencies::from_bytes(&other).is_err());
}

#[test]
fn the_text_after_a_link_speaks_for_it_when_its_anchor_does_not() {
    let r = relevance(&config(), &[]);
    let to = url("http://a.test/m");
    let plain = r.link_priority(0.0, "mod_x", "", &to);
    let described = r.link_priority(0.0, "mod_x", "a guide to the river and its valley", &to);
    let other = r.link_priority(0.0, "mod_x", "stock prices", &to);
    assert!(described < plain, "{described} {plain}");
    assert_eq!(other, plain, "context only ever helps");
    let named = r.link_priority(0.0, "river valley", "", &to);
    assert_eq!(
        r.link_priority(0.0, "river valley", "stock prices, shares, bonds", &to),
        named,
        "a good anchor keeps its score"
    );
}

#[test]
fn a_link_word_run_together_from_a_topic_word_counts_as_it() {
    let topic = FocusConfig {
        terms: [("ssl".to_string(), 3.0), ("certificate".to_string(), 1.0)]
            .into_iter()
            .collect(),
        ..FocusConfig::default()
    };
    let r = relevance(&topic, &[]);
    let plain = url("http://h.test/contrib-spi.html");
    let sslinfo = url("http://h.test/sslinfo.html");
    assert!(
        r.link_priority(0.0, "F.42. sslinfo", "", &sslinfo)
            < r.link_priority(0.0, "F.41. spi", "", &plain),
        "sslinfo is about ssl"
    );
    assert_eq!(r.link_terms("sslinfo"), r.link_terms("ssl"));
    assert_eq!(
        r.link_terms("clientcertificate"),
        r.link_terms("certificate")
    );
    // Too short a rest, or no topic term at either end: the word stays itself.
    assert_ne!(r.link_terms("ssls"), r.link_terms("ssl"));
    assert_ne!(r.link_terms("certificates"), r.link_terms("certificate"));
    assert_ne!(r.link_terms("usslx"), r.link_terms("ssl"));
    // Cuts fall between characters only.
    assert_ne!(r.link_terms("sslé证书"), r.link_terms("anything"));
}

#[test]
fn url_words_leave_out_extensions_and_index() {
    let words = TermCounts::of_url(&url("http://h.test/library/asyncio-task.html?page=2"));
    assert_eq!(words, TermCounts::of("library asyncio task page"));
    assert!(TermCounts::of_url(&url("http://h.test/index.html")).is_empty());
}

proptest! {
    /// A text's terms, counted by sorting their hashes, are what a map from each hash to
    /// its occurrences holds, in the order of the hashes.
    #[test]
    fn term_counts_are_the_counts_of_the_hashes(hashes in prop::collection::vec(0u64..50, 0..200)) {
        let mut reference = std::collections::BTreeMap::<u64, u32>::new();
        for hash in &hashes {
            *reference.entry(*hash).or_default() += 1;
        }
        let counts = TermCounts::of_hashes(hashes);
        prop_assert_eq!(counts.iter().collect::<Vec<_>>(), reference.into_iter().collect::<Vec<_>>());
    }

    /// A link word counts as a topic term only when it starts or ends with that term and
    /// is at least three bytes longer; any text, any bytes, never panics.
    #[test]
    fn link_words_are_cut_only_at_a_topic_term(word in "[a-zé]{0,12}", term in "[a-z]{3,6}") {
        prop_assume!(term_hash(&term).is_some(), "a stop word is no topic term");
        let topic = FocusConfig {
            terms: [(term.clone(), 1.0)].into_iter().collect(),
            ..FocusConfig::default()
        };
        let r = relevance(&topic, &[]);
        let cut = term_hash(&word).is_some()
            && word != term
            && word.len() >= term.len() + MIN_PART
            && (word.starts_with(&term) || word.ends_with(&term));
        let expected = if cut || word == term {
            TermCounts::of(&term)
        } else {
            TermCounts::of(&word)
        };
        prop_assert_eq!(r.link_terms(&word), expected);
    }

    /// The sketch never counts a term below its true document frequency, and with few
    /// terms it counts exactly.
    #[test]
    fn sketch_frequencies_are_upper_bounds(docs in prop::collection::vec(
        prop::collection::btree_set(0u64..400, 0..30), 1..60)) {
        let mut df = DocFrequencies::default();
        let mut truth: FxHashMap<u64, u32> = FxHashMap::default();
        for doc in &docs {
            let counts = TermCounts::of_hashes(doc.iter().copied().collect());
            df.add(&counts);
            for t in doc {
                *truth.entry(*t).or_default() += 1;
            }
        }
        prop_assert_eq!(df.documents(), docs.len() as u64);
        for t in 0u64..400 {
            let exact = truth.get(&t).copied().unwrap_or(0);
            prop_assert_eq!(df.frequency(t), exact, "term {}", t);
        }
    }
}
