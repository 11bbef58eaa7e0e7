//! Every verdict path of the stage, and the stage against a brute-force judge that compares
//! a page with every kept page.

use std::cell::Cell;

use proptest::prelude::*;

use super::*;
use crate::AnalyzerConfig;

mod links;
mod prejudged;

const SHARED: u64 = 1 << 63;

fn stage_with(config: DedupStageConfig, analyzer: AnalyzerConfig) -> DedupStage {
    DedupStage::new(Arc::new(Analyzer::new(analyzer)), config, [], [], SHARED).unwrap()
}

fn stage() -> DedupStage {
    stage_with(DedupStageConfig::default(), AnalyzerConfig::default())
}

/// Deterministic prose: sentence `i` of document `doc`, made of words no other sentence has
/// in that order.
fn sentence(doc: u64, i: u64) -> String {
    const WORDS: [&str; 24] = [
        "river", "valley", "stone", "glacier", "forest", "harbour", "engine", "signal", "market",
        "window", "ladder", "garden", "copper", "lantern", "meadow", "violin", "compass",
        "thunder", "pepper", "canyon", "orchard", "marble", "falcon", "ribbon",
    ];
    let mut x = doc.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let mut words = Vec::new();
    for _ in 0..12 {
        x ^= x >> 31;
        x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
        words.push(WORDS[(x % WORDS.len() as u64) as usize]);
    }
    format!("{doc}x{i} {}.", words.join(" "))
}

fn document(doc: u64, sentences: u64) -> String {
    (0..sentences)
        .map(|i| sentence(doc, i))
        .collect::<Vec<_>>()
        .join(" ")
}

fn plain(text: &str) -> Extracted {
    Extracted::plain(text.to_string())
}

fn keep(stage: &mut DedupStage, kept: &mut MemoryOriginals, seq: u64, text: &str) -> Judgement {
    let Ok(judgement) = stage.judge("host", plain(text), kept);
    assert_eq!(judgement.verdict, Likeness::Unique, "{text}");
    kept.keep(stage.admit(seq, "host", &judgement));
    judgement
}

fn judge(stage: &mut DedupStage, kept: &MemoryOriginals, text: &str) -> Judgement {
    let Ok(judgement) = stage.judge("host", plain(text), kept);
    judgement
}

#[test]
fn a_token_identical_page_is_an_exact_copy_at_distance_zero() {
    let (mut stage, mut kept) = (stage(), MemoryOriginals::default());
    let original = document(1, 12);
    keep(&mut stage, &mut kept, 7, &original);
    let copy = judge(&mut stage, &kept, &original.to_uppercase());
    assert_eq!(copy.verdict, Likeness::Exact);
    assert_eq!(copy.original, Some(Original::Kept(7)));
    assert_eq!((copy.distance, copy.similarity), (Some(0), Some(1.0)));
}

#[test]
fn a_lightly_edited_copy_is_near_through_the_index() {
    let (mut stage, mut kept) = (stage(), MemoryOriginals::default());
    let original = document(2, 30);
    keep(&mut stage, &mut kept, 0, &original);
    let edited = original.replacen("river", "brook", 1);
    let near = judge(&mut stage, &kept, &edited);
    assert_eq!(near.verdict, Likeness::Near);
    assert_eq!(near.original, Some(Original::Kept(0)));
    assert!(near.distance.is_some_and(|d| d <= 3), "{:?}", near.distance);
    assert!(
        near.similarity.is_some_and(|r| r > 0.9),
        "{:?}",
        near.similarity
    );
}

#[test]
fn a_heavily_edited_copy_is_found_through_its_shared_sentences() {
    let (mut stage, mut kept) = (stage(), MemoryOriginals::default());
    let original = document(3, 20);
    keep(&mut stage, &mut kept, 0, &original);
    // The last quarter rewritten: the simhash moves far, the other sentences stay.
    let edited: String = (0..20)
        .map(|i| {
            if i < 15 {
                sentence(3, i)
            } else {
                sentence(99, i)
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let analysed = stage.analyzer().analyze_text(&edited);
    let distance = analysed.simhash.distance(kept.simhash(0).unwrap().unwrap());
    assert!(
        distance > 3,
        "the test needs a copy the index misses: distance {distance}"
    );
    let near = judge(&mut stage, &kept, &edited);
    assert_eq!(near.verdict, Likeness::Near);
    assert_eq!(near.original, Some(Original::Kept(0)));
    assert_eq!(
        near.distance,
        Some(distance),
        "the distance comes from the kept simhash"
    );
}

#[test]
fn unrelated_pages_are_unique_and_pages_without_text_never_originals() {
    let (mut stage, mut kept) = (stage(), MemoryOriginals::default());
    keep(&mut stage, &mut kept, 0, &document(4, 12));
    keep(&mut stage, &mut kept, 1, &document(5, 12));
    let empty = judge(&mut stage, &kept, "   ");
    assert_eq!(empty.verdict, Likeness::Unique);
    let admission = stage.admit(2, "host", &empty);
    assert_eq!((&admission.fingerprint, &admission.text), (&None, &None));
    kept.keep(admission);
    assert_eq!(judge(&mut stage, &kept, "").verdict, Likeness::Unique);
    assert_eq!(stage.index().len(), 2);
}

#[test]
fn without_verification_the_distance_decides() {
    let analyzer = AnalyzerConfig {
        verify: false,
        ..AnalyzerConfig::default()
    };
    let mut stage = stage_with(DedupStageConfig::default(), analyzer);
    let mut kept = MemoryOriginals::default();
    let original = document(6, 30);
    let first = keep(&mut stage, &mut kept, 0, &original);
    assert_eq!(stage.admit(0, "host", &first).text, None, "no text kept");
    let near = judge(&mut stage, &kept, &original.replacen("stone", "pebble", 1));
    assert_eq!(near.verdict, Likeness::Near);
    let d = near.distance.unwrap();
    assert_eq!(near.similarity, Some(1.0 - f64::from(d) / 64.0));
}

#[test]
fn a_page_of_the_shared_index_is_judged_by_fingerprint_alone() {
    let analyzer = Arc::new(Analyzer::new(AnalyzerConfig::default()));
    let text = document(7, 12);
    let fp = analyzer.analyze_text(&text).simhash;
    let shared = [(fp, 41)];
    let mut stage =
        DedupStage::new(analyzer, DedupStageConfig::default(), [], shared, SHARED).unwrap();
    let copy = judge(&mut stage, &MemoryOriginals::default(), &text);
    assert_eq!(copy.verdict, Likeness::Near);
    assert_eq!(copy.original, Some(Original::Shared(41)));
    assert_eq!((copy.distance, copy.similarity), (Some(0), Some(1.0)));
    assert_eq!(
        copy.follow,
        Follow::None,
        "a shared page's links are unknown"
    );
}

#[test]
fn a_hosts_template_is_removed_before_fingerprinting() {
    let stage = stage();
    let url = url::Url::parse("http://example.org/").unwrap();
    let nav = "Site navigation: products, services, about us, careers, press, contact, \
               legal notice, privacy policy and the company newsletter archive.";
    let page = |doc: u64| {
        format!(
            "<html><body><article><p>{nav}</p><p>{}</p></article></body></html>",
            document(doc, 6)
        )
        .into_bytes()
    };
    let mut analyses = Vec::new();
    for doc in 0..4 {
        let extracted = stage.analyzer().extract_html(&page(doc), None, &url);
        assert!(extracted.text.contains("Site navigation"));
        analyses.push(stage.analyze("example.org", extracted));
    }
    assert!(
        analyses[0].text.contains("Site navigation"),
        "one page is no template"
    );
    assert_eq!(analyses[0].template_chars, None);
    assert!(
        !analyses[3].text.contains("Site navigation"),
        "{}",
        analyses[3].text
    );
    // What the template took is said, for the record.
    assert_eq!(analyses[3].template_chars, Some(nav.chars().count()));
    // Another host has its own model.
    let other = stage.analyzer().extract_html(&page(9), None, &url);
    assert!(
        stage
            .analyze("other.example", other)
            .text
            .contains("Site navigation")
    );
}

/// Counts the texts read: an original's units are computed once.
struct Counting<'a>(&'a MemoryOriginals, Cell<usize>);

impl Originals for Counting<'_> {
    type Error = Infallible;
    fn text(&self, seq: u64) -> Result<Option<String>, Infallible> {
        self.1.set(self.1.get() + 1);
        self.0.text(seq)
    }
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, Infallible> {
        self.0.exact(key)
    }
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, Infallible> {
        self.0.simhash(seq)
    }
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, Infallible> {
        self.0.link_keys(seq)
    }
    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, Infallible> {
        self.0.sentence_candidates(fingerprints)
    }
}

#[test]
fn an_originals_units_are_computed_once() {
    let (mut stage, mut kept) = (stage(), MemoryOriginals::default());
    let original = document(10, 30);
    keep(&mut stage, &mut kept, 0, &original);
    let counting = Counting(&kept, Cell::new(0));
    for word in ["glacier", "forest", "harbour", "engine"] {
        let edited = original.replacen(word, "zebra", 1);
        let Ok(judgement) = stage.judge("host", plain(&edited), &counting);
        assert_eq!(judgement.verdict, Likeness::Near);
    }
    assert_eq!(counting.1.get(), 1);
}

/// The reference: a page compared with every kept page. Exact when a kept page has its
/// exact key; near when some kept page passes the LCS verification and is a candidate at
/// all (within the distance, or sharing a sentence fingerprint); unique otherwise. The page's
/// units come first, as the stage verifies them (the trustable region is not symmetric).
fn brute_force(
    analyzer: &Analyzer,
    kept: &[(u64, PageAnalysis)],
    page: &PageAnalysis,
) -> (Likeness, Vec<u64>) {
    if page.tokens.is_empty() {
        return (Likeness::Unique, Vec::new());
    }
    if let Some((seq, _)) = kept.iter().find(|(_, k)| k.exact_key == page.exact_key) {
        return (Likeness::Exact, vec![*seq]);
    }
    let config = analyzer.config();
    let sentences = |text: &str| -> HashSet<u128> {
        sentence_fingerprints(text, &stage_sentence_config())
            .into_iter()
            .collect()
    };
    let mine = sentences(&page.text);
    let similar: Vec<u64> = kept
        .iter()
        .filter(|(_, k)| {
            let candidate = k.simhash.distance(page.simhash) <= config.max_distance
                || !sentences(&k.text).is_disjoint(&mine);
            candidate
                && nearcrawl_verify::verify(&page.units(), &k.units(), &config.verify_config)
                    .similar
        })
        .map(|(seq, _)| *seq)
        .collect();
    if similar.is_empty() {
        (Likeness::Unique, similar)
    } else {
        (Likeness::Near, similar)
    }
}

/// A page derived from one of a few base documents: a copy, an edit, a cut, a mix, or new.
fn derived(choice: u64) -> String {
    let base = choice % 4;
    let n = 8 + (choice >> 2) % 12;
    match (choice >> 8) % 6 {
        0 => document(base, n),
        1 => document(base, n)
            .replacen("river", "delta", 1)
            .replacen("stone", "slate", 2),
        2 => document(base, n / 2 + 1),
        3 => (0..n)
            .map(|i| sentence(if i % 3 == 0 { base } else { 100 + choice % 7 }, i))
            .collect::<Vec<_>>()
            .join(" "),
        4 => document(1000 + choice % 997, n),
        _ => document(base, n).to_lowercase(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_stage_agrees_with_a_brute_force_judge(choices in prop::collection::vec(any::<u64>(), 1..24)) {
        let config = DedupStageConfig { max_candidates: 1_000, ..DedupStageConfig::default() };
        let mut stage = stage_with(config, AnalyzerConfig::default());
        let analyzer = Analyzer::new(AnalyzerConfig::default());
        let mut originals = MemoryOriginals::default();
        let mut kept: Vec<(u64, PageAnalysis)> = Vec::new();
        for (seq, choice) in choices.into_iter().enumerate() {
            let text = derived(choice);
            let page = analyzer.analyze_text(&text);
            let (expected, similar) = brute_force(&analyzer, &kept, &page);
            let Ok(judgement) = stage.judge("host", plain(&text), &originals);
            prop_assert_eq!(judgement.verdict, expected, "page {}: {}", seq, text);
            match judgement.original {
                Some(Original::Kept(of)) => prop_assert!(similar.contains(&of)),
                Some(Original::Shared(_)) => prop_assert!(false, "no shared index here"),
                None => prop_assert_eq!(expected, Likeness::Unique),
            }
            if judgement.verdict == Likeness::Unique {
                originals.keep(stage.admit(seq as u64, "host", &judgement));
                kept.push((seq as u64, judgement.analysis));
            }
        }
    }
}

/// The originals' units cache holds at most its capacity in units, the most recently used
/// originals first out last; one original larger than the whole cache is verified against
/// but not kept.
#[test]
fn the_units_cache_is_bounded_in_units() {
    let mut stage = stage();
    stage.units = UnitsCache::new(Arc::clone(stage.analyzer()), 100);
    let mut kept = MemoryOriginals::default();
    for seq in 0..6 {
        keep(&mut stage, &mut kept, seq, &document(seq, 3));
    }
    keep(&mut stage, &mut kept, 6, &document(6, 20));
    // Another thread's handle on the same cache sees what the stage computed.
    let shared = stage.units_cache();
    for seq in 0..6 {
        let Ok(units) = stage.original_units(seq, &kept);
        let len = units.expect("a kept text").len();
        assert!((30..=50).contains(&len), "{len} units");
        assert_eq!(shared.held(), shared.counted());
        assert!(shared.held() <= 100, "{}", shared.held());
        assert!(shared.holds(seq));
    }
    assert!(!shared.holds(0), "the oldest went first");
    let Ok(large) = stage.original_units(6, &kept);
    assert!(large.expect("a kept text").len() > 100);
    assert!(!shared.holds(6));
    assert!(shared.holds(5), "nothing evicted for it");
    assert_eq!(shared.held(), shared.counted());
    // Computed elsewhere (as the threads that analyse pages do), the same units.
    let elsewhere = UnitsCache::new(Arc::clone(stage.analyzer()), 100);
    let Ok(computed) = elsewhere.get_or_compute(3, || kept.text(3));
    assert_eq!(computed, stage.original_units(3, &kept).unwrap_or(None));
}

#[test]
fn the_index_design_keeps_within_its_memory_per_page() {
    // k = 3: Manku et al.'s 4 tables, not the 10 of the paper's fastest queries.
    assert_eq!(
        index_design(3).unwrap(),
        nearcrawl_hamming_index::IndexParams::manku_4_tables()
    );
    let pages = 1 << 24;
    for k in 0..=7 {
        let design = index_design(k).unwrap();
        assert_eq!(design.k(), k);
        assert!(
            design.estimated_bytes(pages) <= INDEX_BYTES_PER_PAGE * pages,
            "k = {k}: {} tables",
            design.table_count()
        );
    }
    // No design fits: the one with the fewest tables, k + 1 blocks of which one leads.
    for k in [8, 12, 20] {
        assert_eq!(index_design(k).unwrap().table_count() as u32, k + 1);
    }
    // What the stage builds. (Every design finds the same matches: the index's own property
    // tests hold each against a brute-force reference.)
    assert_eq!(stage().index().params(), &index_design(3).unwrap());
}
