//! Tests of `sentences`.

use super::*;
use std::collections::HashMap;

/// The index as the paper states it: every document of every fingerprint in a list,
/// the site set and count beside it.
#[derive(Default)]
struct Reference {
    postings: HashMap<u128, (Vec<u64>, Vec<u64>, usize, bool)>,
}

impl Reference {
    fn insert(&mut self, cutoff: FrequencyCutoff, id: u64, site: &str, fps: &[u128]) {
        for &fp in fps {
            let (docs, sites, count, dropped) = self.postings.entry(fp).or_default();
            *count += 1;
            let site = u64::from(SiteHash::of(site).0);
            if !sites.contains(&site) && sites.len() <= cutoff.few_sites {
                sites.push(site);
            }
            let concentrated = *count > cutoff.max_concentrated && sites.len() <= cutoff.few_sites;
            if *count > cutoff.max_documents || concentrated {
                *dropped = true;
                docs.clear();
            } else if !*dropped && docs.len() < cutoff.max_listed {
                docs.push(id);
            }
        }
    }

    fn candidates(&self, fps: &[u128]) -> Vec<(u64, usize)> {
        let mut shared: HashMap<u64, usize> = Default::default();
        for fp in fps {
            for &doc in self.postings.get(fp).map_or(&[][..], |p| p.0.as_slice()) {
                *shared.entry(doc).or_insert(0) += 1;
            }
        }
        let mut out: Vec<(u64, usize)> = shared.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

proptest::proptest! {
    /// The byte scanner cuts where splitting at the characters does, and counts the
    /// characters `chars` does, whatever shares the full-width ends' lead bytes.
    #[test]
    fn sentence_ends_are_split(text in "[ab .!?;\n\u{3002}\u{ff01}\u{ff1f}\u{ff1b}\u{3001}\u{3080}\u{ff02}\u{ff1c}\u{ff41}\u{e9}\u{4e00}]{0,30}") {
        let got: Vec<&str> = SentenceEnds { text: &text, from: 0 }.collect();
        let want: Vec<&str> = text.split(SENTENCE_ENDS).collect();
        proptest::prop_assert_eq!(got, want);
        proptest::prop_assert_eq!(char_count(&text), text.chars().count());
    }

    /// The compact index answers as the plain one does.
    #[test]
    fn the_compact_index_is_the_reference(
        docs in proptest::collection::vec(
            (0usize..4, proptest::collection::vec(0u128..40, 0..12)),
            0..40,
        ),
        query in proptest::collection::vec(0u128..40, 0..12),
        listed in 1usize..12,
    ) {
        let cutoff = FrequencyCutoff {
            max_documents: 9,
            max_concentrated: 4,
            few_sites: 1,
            max_listed: listed,
        };
        let mut index = CandidateIndex::new(cutoff);
        let mut reference = Reference::default();
        // As a store keeps them: each posting read back from its bytes, one document
        // added, written again.
        let mut stored: HashMap<u64, Vec<u8>> = HashMap::new();
        for (id, (site, fps)) in docs.iter().enumerate() {
            let site = format!("site{site}.test");
            index.insert(id as u64, &site, fps);
            reference.insert(cutoff, id as u64, &site, fps);
            for &fp in fps {
                let bytes = stored.entry(sentence_key(fp)).or_default();
                let mut posting = if bytes.is_empty() {
                    SentencePosting::default()
                } else {
                    SentencePosting::from_bytes(bytes).expect("a posting reads back")
                };
                posting.add(id as u64, SiteHash::of(&site), &cutoff);
                *bytes = posting.to_bytes();
                // Read back equal: one document held inline either way.
                let read_back = SentencePosting::from_bytes(bytes);
                proptest::prop_assert_eq!(read_back.as_ref(), Some(&posting));
            }
        }
        let expected = reference.candidates(&query);
        proptest::prop_assert_eq!(index.candidates(&query), expected.clone());
        let postings: Vec<SentencePosting> = query
            .iter()
            .filter_map(|fp| stored.get(&sentence_key(*fp)))
            .map(|bytes| SentencePosting::from_bytes(bytes).expect("a posting reads back"))
            .collect();
        proptest::prop_assert_eq!(
            rank_candidates(postings.iter().map(SentencePosting::documents)),
            expected
        );
        for fp in 0..40u128 {
            let dropped = reference.postings.get(&fp).is_some_and(|p| p.3);
            proptest::prop_assert_eq!(index.is_frequent(fp), dropped);
            let posting = stored.get(&sentence_key(fp)).and_then(|b| SentencePosting::from_bytes(b));
            proptest::prop_assert_eq!(posting.is_some_and(|p| p.is_frequent()), dropped);
        }
    }
}

#[test]
fn damaged_postings_do_not_decode() {
    let mut posting = SentencePosting::default();
    posting.add(7, SiteHash::of("a.test"), &FrequencyCutoff::default());
    posting.add(9, SiteHash::of("b.test"), &FrequencyCutoff::default());
    let bytes = posting.to_bytes();
    assert_eq!(SentencePosting::from_bytes(&bytes).as_ref(), Some(&posting));
    assert_eq!(
        SentencePosting::from_bytes(&bytes).unwrap().documents(),
        [7, 9]
    );
    for cut in 0..bytes.len() {
        let cut_bytes = &bytes[..cut];
        // Cut at a document boundary, a shorter list still decodes; anywhere else, not.
        let at_boundary = cut >= bytes.len() - 16 && (bytes.len() - cut) % 8 == 0;
        assert_eq!(
            SentencePosting::from_bytes(cut_bytes).is_some(),
            at_boundary,
            "cut at {cut}"
        );
    }
    let mut other_version = bytes.clone();
    other_version[0] = 2;
    assert_eq!(SentencePosting::from_bytes(&other_version), None);
}

fn article(seed: usize, sentences: usize) -> String {
    (0..sentences)
        .map(|i| {
            format!(
                "Sentence number {} of article {seed} talks about topic {} at length",
                i,
                i * 31 + seed
            )
        })
        .collect::<Vec<_>>()
        .join(". ")
}

#[test]
fn copies_share_fingerprints_and_strangers_do_not() {
    let config = SentenceConfig::default();
    let a = sentence_fingerprints(&article(1, 40), &config);
    assert!(a.len() > 50 && a.len() <= 112, "{}", a.len());
    // The copy lost a few sentences and gained a header.
    let copy = format!(
        "Breaking news from the wire service today! {}",
        article(1, 36)
    );
    let b = sentence_fingerprints(&copy, &config);
    let shared = a.iter().filter(|fp| b.binary_search(fp).is_ok()).count();
    assert!(shared > 10, "{shared}");
    let c = sentence_fingerprints(&article(2, 40), &config);
    assert_eq!(a.iter().filter(|fp| c.binary_search(fp).is_ok()).count(), 0);
    assert!(sentence_fingerprints("Too short. Tiny.", &config).is_empty());
}

#[test]
fn index_finds_candidates_and_cuts_template_fingerprints() {
    let config = SentenceConfig::default();
    let cutoff = FrequencyCutoff {
        max_documents: 50,
        max_concentrated: 5,
        few_sites: 1,
        max_listed: 50,
    };
    let mut index = CandidateIndex::new(cutoff);
    let original = sentence_fingerprints(&article(1, 40), &config);
    index.insert(1, "a.test", &original);
    index.insert(
        2,
        "b.test",
        &sentence_fingerprints(&article(2, 40), &config),
    );
    let found = index.candidates(&sentence_fingerprints(&article(1, 38), &config));
    assert_eq!(found.first().map(|c| c.0), Some(1));
    assert!(!found.iter().any(|c| c.0 == 2));

    // A boilerplate text repeated on many pages of one site is cut off.
    let boilerplate = sentence_fingerprints(&article(9, 20), &config);
    for id in 10..20 {
        index.insert(id, "shop.test", &boilerplate);
    }
    assert!(boilerplate.iter().all(|fp| index.is_frequent(*fp)));
    assert!(index.candidates(&boilerplate).is_empty());
    assert!(!original.iter().any(|fp| index.is_frequent(*fp)));
}
