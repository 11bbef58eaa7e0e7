//! Step 1: sentence fingerprints as a candidate generator, and an index of them with the
//! frequent-fingerprint cut-off.
//!
//! Sentences longer than X characters are hashed (xxh3-128 where the paper used MD5: any
//! well-mixed 128-bit hash serves, and this one costs a tenth) and grouped by hash mod m; in each
//! group the Y smallest hashes, when their sentences cover at least Z characters, are
//! combined into one 128-bit fingerprint. Rotating every hash by one byte changes which are
//! smallest, so 16 rotations give up to 16 × m fingerprints. Two documents sharing any
//! fingerprint share Y long sentences and become candidates.

use rustc_hash::FxHashMap;

use xxhash_rust::xxh3::xxh3_128;

/// The paper's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentenceConfig {
    /// X: sentences of at most this many characters are ignored.
    pub min_sentence_chars: usize,
    /// m: groups by hash modulo m.
    pub groups: u32,
    /// Y: hashes combined per fingerprint.
    pub per_fingerprint: usize,
    /// Z: characters the combined sentences must cover.
    pub min_cover_chars: usize,
    /// Byte rotations (at most 16).
    pub rotations: u32,
}

impl Default for SentenceConfig {
    fn default() -> Self {
        SentenceConfig {
            min_sentence_chars: 10,
            groups: 7,
            per_fingerprint: 4,
            min_cover_chars: 100,
            rotations: 16,
        }
    }
}

/// Sentences of `text`, split at sentence punctuation and line breaks, trimmed.
pub fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['.', '!', '?', ';', '\n', '。', '！', '？', '；'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The sentence fingerprints of a text (sorted, distinct).
pub fn sentence_fingerprints(text: &str, config: &SentenceConfig) -> Vec<u128> {
    let hashed: Vec<(u128, usize)> = sentences(text)
        .map(|s| (s, s.chars().count()))
        .filter(|(_, chars)| *chars > config.min_sentence_chars)
        .map(|(s, chars)| (xxh3_128(s.as_bytes()), chars))
        .collect();
    let mut fingerprints = Vec::new();
    let groups = config.groups.max(1);
    let mut by_group: Vec<Vec<(u128, usize)>> = vec![Vec::new(); groups as usize];
    // The rotation and up to 16 hashes: the bytes of one combined fingerprint.
    let mut combined: Vec<u8> = Vec::with_capacity(4 + 16 * config.per_fingerprint);
    for rotation in 0..config.rotations.min(16) {
        by_group.iter_mut().for_each(Vec::clear);
        for &(hash, chars) in &hashed {
            let rotated = hash.rotate_left(8 * rotation);
            by_group[(rotated % u128::from(groups)) as usize].push((rotated, chars));
        }
        for members in by_group.iter_mut().filter(|m| !m.is_empty()) {
            members.sort_unstable();
            members.dedup_by_key(|m| m.0);
            let chosen = &members[..members.len().min(config.per_fingerprint)];
            if chosen.iter().map(|m| m.1).sum::<usize>() < config.min_cover_chars {
                continue;
            }
            combined.clear();
            combined.extend_from_slice(&rotation.to_be_bytes());
            for (hash, _) in chosen {
                combined.extend_from_slice(&hash.to_be_bytes());
            }
            fingerprints.push(xxh3_128(&combined));
        }
    }
    fingerprints.sort_unstable();
    fingerprints.dedup();
    fingerprints
}

/// When a fingerprint is too common to mean anything (site templates, spam).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrequencyCutoff {
    /// Dropped when seen in more documents than this (paper: 10,000).
    pub max_documents: usize,
    /// ... or in more than this many (paper: 400) ...
    pub max_concentrated: usize,
    /// ... that come from at most this many sites.
    pub few_sites: usize,
}

impl Default for FrequencyCutoff {
    fn default() -> Self {
        FrequencyCutoff {
            max_documents: 10_000,
            max_concentrated: 400,
            few_sites: 3,
        }
    }
}

/// A fingerprint's documents, compact: most fingerprints belong to one document, kept inline;
/// the others' further documents live in [`CandidateIndex::more`].
#[derive(Clone, Debug)]
struct Posting {
    /// The first document ([`NO_DOCUMENT`]: dropped).
    first: u64,
    /// Where the further documents are in `more` ([`NO_MORE`]: none).
    more: u32,
    /// Documents seen with this fingerprint (saturating).
    count: u32,
    /// Distinct site hashes seen, up to `few_sites + 1` ([`MAX_SITES`] at most).
    sites: [u32; MAX_SITES],
    site_count: u8,
    dropped: bool,
}

const NO_DOCUMENT: u64 = u64::MAX;
const NO_MORE: u32 = u32::MAX;
/// Site hashes a posting keeps: `few_sites + 1` with the paper's few sites (3).
const MAX_SITES: usize = 4;

/// Documents by sentence fingerprint, for candidate lookup. About 56 bytes per distinct
/// fingerprint (keyed by its low 64 bits: a collision only makes a candidate that
/// verification rejects).
#[derive(Clone, Debug, Default)]
pub struct CandidateIndex {
    cutoff: FrequencyCutoff,
    postings: FxHashMap<u64, Posting>,
    /// Further documents of fingerprints shared by several.
    more: Vec<Vec<u64>>,
}

impl CandidateIndex {
    /// An empty index. `cutoff.few_sites` counts at most 3 sites (the paper's figure).
    pub fn new(cutoff: FrequencyCutoff) -> CandidateIndex {
        CandidateIndex {
            cutoff: FrequencyCutoff {
                few_sites: cutoff.few_sites.min(MAX_SITES - 1),
                ..cutoff
            },
            postings: FxHashMap::default(),
            more: Vec::new(),
        }
    }

    /// Adds document `id` of `site` with its fingerprints.
    pub fn insert(&mut self, id: u64, site: &str, fingerprints: &[u128]) {
        let site_hash = site_hash(site) as u32;
        for &fp in fingerprints {
            let posting = self.postings.entry(fp as u64).or_insert(Posting {
                first: NO_DOCUMENT,
                more: NO_MORE,
                count: 0,
                sites: [0; MAX_SITES],
                site_count: 0,
                dropped: false,
            });
            posting.count = posting.count.saturating_add(1);
            let sites = &posting.sites[..usize::from(posting.site_count)];
            if !sites.contains(&site_hash) && sites.len() <= self.cutoff.few_sites {
                posting.sites[sites.len()] = site_hash;
                posting.site_count += 1;
            }
            let count = posting.count as usize;
            let concentrated = count > self.cutoff.max_concentrated
                && usize::from(posting.site_count) <= self.cutoff.few_sites;
            if count > self.cutoff.max_documents || concentrated {
                posting.dropped = true;
                posting.first = NO_DOCUMENT;
                if posting.more != NO_MORE {
                    self.more[posting.more as usize] = Vec::new();
                }
            } else if !posting.dropped {
                if posting.first == NO_DOCUMENT {
                    posting.first = id;
                } else {
                    if posting.more == NO_MORE {
                        posting.more = u32::try_from(self.more.len()).unwrap_or(NO_MORE);
                        self.more.push(Vec::new());
                    }
                    if let Some(list) = self.more.get_mut(posting.more as usize) {
                        list.push(id);
                    }
                }
            }
        }
    }

    /// Whether `fp` was dropped as too frequent.
    pub fn is_frequent(&self, fp: u128) -> bool {
        self.postings.get(&(fp as u64)).is_some_and(|p| p.dropped)
    }

    /// Documents sharing at least one (not too frequent) fingerprint, with how many they
    /// share, most shared first.
    pub fn candidates(&self, fingerprints: &[u128]) -> Vec<(u64, usize)> {
        let mut shared: FxHashMap<u64, usize> = FxHashMap::default();
        for fp in fingerprints {
            let Some(posting) = self.postings.get(&(*fp as u64)) else {
                continue;
            };
            if posting.first == NO_DOCUMENT {
                continue;
            }
            let more = self
                .more
                .get(posting.more as usize)
                .map_or(&[][..], Vec::as_slice);
            for &doc in std::iter::once(&posting.first).chain(more) {
                *shared.entry(doc).or_insert(0) += 1;
            }
        }
        let mut out: Vec<(u64, usize)> = shared.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

/// FNV-1a of the site name: cheap and stable; a collision only merges two sites' counts.
fn site_hash(site: &str) -> u64 {
    site.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index as the paper states it: every document of every fingerprint in a list,
    /// the site set and count beside it.
    #[derive(Default)]
    struct Reference {
        postings: std::collections::HashMap<u128, (Vec<u64>, Vec<u64>, usize, bool)>,
    }

    impl Reference {
        fn insert(&mut self, cutoff: FrequencyCutoff, id: u64, site: &str, fps: &[u128]) {
            for &fp in fps {
                let (docs, sites, count, dropped) = self.postings.entry(fp).or_default();
                *count += 1;
                let site = site_hash(site) & 0xffff_ffff;
                if !sites.contains(&site) && sites.len() <= cutoff.few_sites {
                    sites.push(site);
                }
                let concentrated =
                    *count > cutoff.max_concentrated && sites.len() <= cutoff.few_sites;
                if *count > cutoff.max_documents || concentrated {
                    *dropped = true;
                    docs.clear();
                } else if !*dropped {
                    docs.push(id);
                }
            }
        }

        fn candidates(&self, fps: &[u128]) -> Vec<(u64, usize)> {
            let mut shared: std::collections::HashMap<u64, usize> = Default::default();
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
        /// The compact index answers as the plain one does.
        #[test]
        fn the_compact_index_is_the_reference(
            docs in proptest::collection::vec(
                (0usize..4, proptest::collection::vec(0u128..40, 0..12)),
                0..40,
            ),
            query in proptest::collection::vec(0u128..40, 0..12),
        ) {
            let cutoff = FrequencyCutoff { max_documents: 9, max_concentrated: 4, few_sites: 1 };
            let mut index = CandidateIndex::new(cutoff);
            let mut reference = Reference::default();
            for (id, (site, fps)) in docs.iter().enumerate() {
                let site = format!("site{site}.test");
                index.insert(id as u64, &site, fps);
                reference.insert(cutoff, id as u64, &site, fps);
            }
            proptest::prop_assert_eq!(index.candidates(&query), reference.candidates(&query));
            for fp in 0..40u128 {
                let dropped = reference.postings.get(&fp).is_some_and(|p| p.3);
                proptest::prop_assert_eq!(index.is_frequent(fp), dropped);
            }
        }
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
}
