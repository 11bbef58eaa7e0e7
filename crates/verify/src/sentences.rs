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

/// The characters a sentence ends at: sentence punctuation and line breaks (what
/// [`SentenceEnds`] finds byte by byte is tested against splitting at these).
#[cfg(test)]
const SENTENCE_ENDS: [char; 9] = ['.', '!', '?', ';', '\n', '。', '！', '？', '；'];

/// Sentences of `text`, split at sentence punctuation (`.!?;` and the full-width `。！？；`)
/// and line breaks, trimmed.
pub fn sentences(text: &str) -> impl Iterator<Item = &str> {
    SentenceEnds { text, from: 0 }
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The pieces of a text between sentence ends, as splitting at those characters gives them,
/// found a byte at a time: the ASCII ends are single bytes, and the full-width ones are three
/// bytes led by 0xE3 or 0xEF, so nothing else needs decoding.
struct SentenceEnds<'a> {
    text: &'a str,
    /// Where the next piece starts; past the end once the last piece is given.
    from: usize,
}

impl<'a> Iterator for SentenceEnds<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        if self.from > bytes.len() {
            return None;
        }
        // The bytes that can start an end: the ASCII ends and the full-width ends' lead bytes.
        const MAY_END: [bool; 256] = {
            let mut table = [false; 256];
            let mut i = 0;
            while i < 5 {
                table[b".!?;\n"[i] as usize] = true;
                i += 1;
            }
            table[0xE3] = true;
            table[0xEF] = true;
            table
        };
        let start = self.from;
        let mut at = start;
        while let Some(offset) = bytes[at..].iter().position(|&b| MAY_END[usize::from(b)]) {
            at += offset;
            let end_len = match bytes[at] {
                b'.' | b'!' | b'?' | b';' | b'\n' => 1,
                // 。 is E3 80 82; ！ ？ ； are EF BC 81, EF BC 9F, EF BC 9B.
                0xE3 if bytes[at + 1..].starts_with(&[0x80, 0x82]) => 3,
                0xEF if bytes[at + 1..].starts_with(&[0xBC])
                    && matches!(bytes.get(at + 2), Some(0x81 | 0x9F | 0x9B)) =>
                {
                    3
                }
                _ => 0,
            };
            if end_len > 0 {
                self.from = at + end_len;
                return Some(&self.text[start..at]);
            }
            at += 1;
        }
        self.from = bytes.len() + 1;
        Some(&self.text[start..])
    }
}

/// The characters of `s`: its bytes that do not continue a character.
fn char_count(s: &str) -> usize {
    s.bytes().filter(|&b| b & 0xC0 != 0x80).count()
}

/// The sentence fingerprints of a text (sorted, distinct).
pub fn sentence_fingerprints(text: &str, config: &SentenceConfig) -> Vec<u128> {
    let hashed: Vec<(u128, usize)> = sentences(text)
        .map(|s| (s, char_count(s)))
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
    /// A fingerprint lists its first this many documents only (its later ones are counted):
    /// one seen more often is boilerplate of several sites, and the documents that share it
    /// share rarer fingerprints too. Bounds what a stored posting rewrites per document.
    pub max_listed: usize,
}

impl Default for FrequencyCutoff {
    fn default() -> Self {
        FrequencyCutoff {
            max_documents: 10_000,
            max_concentrated: 400,
            few_sites: 3,
            max_listed: 400,
        }
    }
}

/// A site's name, hashed (FNV-1a, 32 bits: cheap and stable; a collision only merges two
/// sites' counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SiteHash(u32);

impl SiteHash {
    /// The hash of `site` (a host, or whatever the caller calls a site).
    pub fn of(site: &str) -> SiteHash {
        let hash = site.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        SiteHash(hash as u32)
    }
}

/// The key a fingerprint is indexed under: its low 64 bits (a collision only makes a
/// candidate that verification rejects).
pub fn sentence_key(fingerprint: u128) -> u64 {
    fingerprint as u64
}

/// How often a fingerprint was seen, from how many sites, and whether it is cut off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    /// Documents seen with this fingerprint (saturating).
    count: u32,
    /// Distinct sites seen, up to `few_sites + 1` ([`MAX_SITES`] at most).
    sites: [u32; MAX_SITES],
    site_count: u8,
    dropped: bool,
}

/// What counting one more document made of a fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counted {
    /// Still meaningful: the document is listed (up to `max_listed`).
    Listed,
    /// Too frequent: its documents are no longer listed.
    Dropped,
}

impl Tally {
    fn add(&mut self, site: SiteHash, cutoff: &FrequencyCutoff) -> Counted {
        self.count = self.count.saturating_add(1);
        let sites = &self.sites[..usize::from(self.site_count)];
        if !sites.contains(&site.0) && sites.len() <= cutoff.few_sites {
            self.sites[sites.len()] = site.0;
            self.site_count += 1;
        }
        let count = self.count as usize;
        let concentrated =
            count > cutoff.max_concentrated && usize::from(self.site_count) <= cutoff.few_sites;
        if count > cutoff.max_documents || concentrated {
            self.dropped = true;
        }
        if self.dropped {
            Counted::Dropped
        } else {
            Counted::Listed
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
    tally: Tally,
}

const NO_DOCUMENT: u64 = u64::MAX;
const NO_MORE: u32 = u32::MAX;
/// Site hashes a posting keeps: `few_sites + 1` with the paper's few sites (3).
const MAX_SITES: usize = 4;

/// Documents by sentence fingerprint, in memory, for candidate lookup. About 48 bytes per
/// distinct fingerprint. [`SentencePosting`] is one fingerprint's entry as a store keeps it;
/// both answer alike.
#[derive(Clone, Debug, Default)]
pub struct CandidateIndex {
    cutoff: FrequencyCutoff,
    /// (Seeded: sentence keys come from the pages, which cannot be written to collide in it.)
    postings: foldhash::HashMap<u64, Posting>,
    /// Further documents of fingerprints shared by several.
    more: Vec<Vec<u64>>,
}

impl CandidateIndex {
    /// An empty index. `cutoff.few_sites` counts at most 3 sites (the paper's figure).
    pub fn new(cutoff: FrequencyCutoff) -> CandidateIndex {
        CandidateIndex {
            cutoff: bounded(cutoff),
            postings: foldhash::HashMap::default(),
            more: Vec::new(),
        }
    }

    /// Adds document `id` of `site` with its fingerprints.
    pub fn insert(&mut self, id: u64, site: &str, fingerprints: &[u128]) {
        let site = SiteHash::of(site);
        for &fp in fingerprints {
            let posting = self.postings.entry(sentence_key(fp)).or_insert(Posting {
                first: NO_DOCUMENT,
                more: NO_MORE,
                tally: Tally::default(),
            });
            let listed = if posting.first == NO_DOCUMENT {
                0
            } else {
                1 + self.more.get(posting.more as usize).map_or(0, Vec::len)
            };
            match posting.tally.add(site, &self.cutoff) {
                Counted::Dropped => {
                    posting.first = NO_DOCUMENT;
                    if posting.more != NO_MORE {
                        self.more[posting.more as usize] = Vec::new();
                    }
                }
                Counted::Listed if listed >= self.cutoff.max_listed => {}
                Counted::Listed if posting.first == NO_DOCUMENT => posting.first = id,
                Counted::Listed => {
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
        self.postings
            .get(&sentence_key(fp))
            .is_some_and(|p| p.tally.dropped)
    }

    /// Documents sharing at least one (not too frequent) fingerprint, with how many they
    /// share, most shared first.
    pub fn candidates(&self, fingerprints: &[u128]) -> Vec<(u64, usize)> {
        rank_candidates(fingerprints.iter().filter_map(|fp| {
            let posting = self.postings.get(&sentence_key(*fp))?;
            if posting.first == NO_DOCUMENT {
                return None;
            }
            let more = self
                .more
                .get(posting.more as usize)
                .map_or(&[][..], Vec::as_slice);
            Some(std::iter::once(&posting.first).chain(more))
        }))
    }
}

fn bounded(cutoff: FrequencyCutoff) -> FrequencyCutoff {
    FrequencyCutoff {
        few_sites: cutoff.few_sites.min(MAX_SITES - 1),
        ..cutoff
    }
}

/// Documents that share fingerprints with a page, from the document lists of its
/// fingerprints: each with how many lists it is in, most shared first (then by id).
pub fn rank_candidates<'a, L>(lists: impl IntoIterator<Item = L>) -> Vec<(u64, usize)>
where
    L: IntoIterator<Item = &'a u64>,
{
    let mut shared: FxHashMap<u64, usize> = FxHashMap::default();
    for doc in lists.into_iter().flatten() {
        *shared.entry(*doc).or_insert(0) += 1;
    }
    let mut out: Vec<(u64, usize)> = shared.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// One fingerprint's entry as a store keeps it (under [`sentence_key`]): its tally and the
/// documents it lists, in a few bytes ([`SentencePosting::to_bytes`]). Adding documents one
/// at a time to postings read back from the store gives the same candidates as a
/// [`CandidateIndex`] (property-tested).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SentencePosting {
    tally: Tally,
    documents: Documents,
}

/// A posting's documents: most list one, held inline rather than in a list of its own (a
/// 32-byte allocation a posting, about 1.5 MB of a batch of 49,152 changed ones). Never a
/// list of exactly one, so that equal postings are equal.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Documents {
    One(u64),
    Many(Vec<u64>),
}

impl Default for Documents {
    fn default() -> Documents {
        Documents::Many(Vec::new())
    }
}

impl Documents {
    fn as_slice(&self) -> &[u64] {
        match self {
            Documents::One(id) => std::slice::from_ref(id),
            Documents::Many(ids) => ids,
        }
    }

    fn push(&mut self, id: u64) {
        match self {
            Documents::Many(ids) if ids.is_empty() => *self = Documents::One(id),
            Documents::Many(ids) => ids.push(id),
            Documents::One(first) => *self = Documents::Many(vec![*first, id]),
        }
    }
}

impl From<Vec<u64>> for Documents {
    fn from(ids: Vec<u64>) -> Documents {
        match ids[..] {
            [id] => Documents::One(id),
            _ => Documents::Many(ids),
        }
    }
}

/// [`SentencePosting::to_bytes`]: the format's version.
const POSTING_VERSION: u8 = 1;

impl SentencePosting {
    /// Counts document `id` of `site`, and lists it unless the fingerprint is too frequent
    /// (or already lists `cutoff.max_listed` documents).
    pub fn add(&mut self, id: u64, site: SiteHash, cutoff: &FrequencyCutoff) {
        let cutoff = bounded(*cutoff);
        match self.tally.add(site, &cutoff) {
            Counted::Dropped => self.documents = Documents::default(),
            Counted::Listed if self.documents().len() >= cutoff.max_listed => {}
            Counted::Listed => self.documents.push(id),
        }
    }

    /// The documents listed (none once the fingerprint is too frequent).
    pub fn documents(&self) -> &[u64] {
        self.documents.as_slice()
    }

    /// Whether the fingerprint was dropped as too frequent.
    pub fn is_frequent(&self) -> bool {
        self.tally.dropped
    }

    /// Version, flags, site count, count, sites, documents; little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let sites = &self.tally.sites[..usize::from(self.tally.site_count)];
        let documents = self.documents();
        let mut out = Vec::with_capacity(7 + 4 * sites.len() + 8 * documents.len());
        out.push(POSTING_VERSION);
        out.push(u8::from(self.tally.dropped));
        out.push(self.tally.site_count);
        out.extend_from_slice(&self.tally.count.to_le_bytes());
        sites
            .iter()
            .for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
        documents
            .iter()
            .for_each(|d| out.extend_from_slice(&d.to_le_bytes()));
        out
    }

    /// Decodes [`SentencePosting::to_bytes`]; `None` when the bytes are not one.
    pub fn from_bytes(bytes: &[u8]) -> Option<SentencePosting> {
        let [POSTING_VERSION, dropped @ (0 | 1), site_count, rest @ ..] = bytes else {
            return None;
        };
        let site_count = usize::from(*site_count);
        if site_count > MAX_SITES || rest.len() < 4 + 4 * site_count {
            return None;
        }
        let (count, rest) = rest.split_at(4);
        let (sites, documents) = rest.split_at(4 * site_count);
        if documents.len() % 8 != 0 {
            return None;
        }
        let mut tally = Tally {
            count: u32::from_le_bytes(count.try_into().ok()?),
            sites: [0; MAX_SITES],
            site_count: site_count as u8,
            dropped: *dropped == 1,
        };
        for (slot, bytes) in tally.sites.iter_mut().zip(sites.chunks_exact(4)) {
            *slot = u32::from_le_bytes(bytes.try_into().ok()?);
        }
        let documents: Vec<u64> = documents
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        Some(SentencePosting {
            tally,
            documents: documents.into(),
        })
    }
}

#[cfg(test)]
mod tests;
