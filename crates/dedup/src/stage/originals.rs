//! What the stage reads of the pages it kept earlier, and those pages kept in memory.

use super::{
    Admission, CandidateIndex, ExactKey, Fingerprint, HashMap, Infallible, stage_sentence_cutoff,
};

/// What the stage reads of the pages it kept earlier. The crawl keeps them in its store; tests
/// and `nearcrawl compare` in a [`MemoryOriginals`].
pub trait Originals {
    /// Why a read failed.
    type Error;
    /// The text kept for page `seq` (its verification text), if any.
    fn text(&self, seq: u64) -> Result<Option<String>, Self::Error>;
    /// The kept page with this exact-duplicate key.
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, Self::Error>;
    /// The simhash of kept page `seq`.
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, Self::Error>;
    /// The link keys ([`link_keys`]) of kept page `seq`.
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, Self::Error>;
    /// Kept pages that share sentence fingerprints ([`Admission::sentences`]) with these
    /// (sorted, distinct), with how many, most shared first ([`CandidateIndex::candidates`],
    /// or [`nearcrawl_verify::rank_candidates`] over stored postings).
    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, Self::Error>;
    /// The page's resemblance to kept page `seq` when it was worked out before the page was
    /// judged, from the same units ([`Verifier::similarity`] of the page's
    /// [`Prepared::units`] and the original's): `Some` of that answer, and the stage takes it
    /// without verifying again; `None` (the default) when it was not.
    fn verified(&self, seq: u64) -> Option<Option<f64>> {
        let _ = seq;
        None
    }
}

/// Kept pages in memory.
#[derive(Clone, Debug)]
pub struct MemoryOriginals {
    texts: HashMap<u64, String>,
    exact: HashMap<u128, u64>,
    simhashes: HashMap<u64, Fingerprint>,
    links: HashMap<u64, Vec<u64>>,
    sentences: CandidateIndex,
}

impl Default for MemoryOriginals {
    fn default() -> Self {
        MemoryOriginals {
            texts: HashMap::new(),
            exact: HashMap::new(),
            simhashes: HashMap::new(),
            links: HashMap::new(),
            sentences: CandidateIndex::new(stage_sentence_cutoff()),
        }
    }
}

impl MemoryOriginals {
    /// Keeps what an admission says to keep.
    pub fn keep(&mut self, admission: Admission) {
        if let Some((simhash, key)) = admission.fingerprint {
            self.simhashes.insert(admission.seq, simhash);
            self.exact.entry(key.0).or_insert(admission.seq);
        }
        if let Some(text) = admission.text {
            self.texts.insert(admission.seq, text);
        }
        if let Some(links) = admission.links {
            self.links.insert(admission.seq, links);
        }
        if let Some(sentences) = admission.sentences {
            self.sentences
                .insert(admission.seq, &sentences.site, &sentences.fingerprints);
        }
    }
}

impl Originals for MemoryOriginals {
    type Error = Infallible;
    fn text(&self, seq: u64) -> Result<Option<String>, Infallible> {
        Ok(self.texts.get(&seq).cloned())
    }
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, Infallible> {
        Ok(self.exact.get(&key.0).copied())
    }
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, Infallible> {
        Ok(self.simhashes.get(&seq).copied())
    }
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, Infallible> {
        Ok(self.links.get(&seq).cloned())
    }
    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, Infallible> {
        Ok(self.sentences.candidates(fingerprints))
    }
}
