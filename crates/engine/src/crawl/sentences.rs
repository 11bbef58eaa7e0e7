//! The sentence-fingerprint postings of kept pages, in the crawl's store: read to find a
//! page's sentence candidates, updated in the commit that keeps a unique page. Nothing of them
//! stays in memory, so the crawl's memory does not grow with them.

use std::collections::HashMap;

use nearcrawl_dedup::{IndexedSentences, stage_sentence_cutoff};
use nearcrawl_store::{Commit, CrawlStore, StoreError, UniquePage};
use nearcrawl_verify::{SentencePosting, SiteHash, rank_candidates, sentence_key};
use url::Url;

use super::Coordinator;
use crate::error::EngineError;

/// The store's counter set once its sentence postings hold every kept page's fingerprints
/// (jobs started before the postings were stored have them added on their first resume).
const SENTENCES_STORED: &str = "sentences_stored";

/// The posting stored for `fingerprint`.
fn stored(store: &dyn CrawlStore, key: u64) -> Result<Option<SentencePosting>, StoreError> {
    let Some(bytes) = store.sentence_posting(key)? else {
        return Ok(None);
    };
    SentencePosting::from_bytes(&bytes)
        .map(Some)
        .ok_or_else(|| StoreError::Corrupt {
            table: "sentences",
            reason: format!(
                "the posting of fingerprint key {key:016x} does not decode ({} bytes)",
                bytes.len()
            ),
        })
}

/// Kept pages sharing sentence fingerprints with `fingerprints`, most shared first.
pub(super) fn candidates(
    store: &dyn CrawlStore,
    fingerprints: &[u128],
) -> Result<Vec<(u64, usize)>, EngineError> {
    let mut postings = Vec::new();
    for &fingerprint in fingerprints {
        postings.extend(stored(store, sentence_key(fingerprint))?);
    }
    Ok(rank_candidates(
        postings.iter().map(SentencePosting::documents),
    ))
}

/// The postings to write when page `seq` is kept with these sentences: each read from the
/// store, the page added.
pub(super) fn postings(
    store: &dyn CrawlStore,
    seq: u64,
    sentences: &IndexedSentences,
) -> Result<Vec<(u64, Vec<u8>)>, EngineError> {
    let (site, cutoff) = (SiteHash::of(&sentences.site), stage_sentence_cutoff());
    let mut out = Vec::with_capacity(sentences.fingerprints.len());
    for &fingerprint in &sentences.fingerprints {
        let key = sentence_key(fingerprint);
        let mut posting = stored(store, key)?.unwrap_or_default();
        posting.add(seq, site, &cutoff);
        out.push((key, posting.to_bytes()));
    }
    Ok(out)
}

/// The postings of every kept page of `uniques`, from its stored text (sentence
/// fingerprints taken by `fingerprints`) and its record's URL (the site), in page order.
fn postings_from_texts(
    store: &dyn CrawlStore,
    uniques: &[UniquePage],
    fingerprints: impl Fn(&str) -> Vec<u128>,
) -> Result<Vec<(u64, Vec<u8>)>, EngineError> {
    /// What is read of a record: its URL.
    #[derive(serde::Deserialize)]
    struct Located {
        url: String,
    }
    let cutoff = stage_sentence_cutoff();
    let mut postings: HashMap<u64, SentencePosting> = HashMap::new();
    for page in uniques {
        let (Some(text), Some(record)) = (store.unique_text(page.seq)?, store.record(page.seq)?)
        else {
            continue;
        };
        let Some(url) = serde_json::from_slice::<Located>(&record)
            .ok()
            .and_then(|r| Url::parse(&r.url).ok())
        else {
            continue;
        };
        let site = SiteHash::of(&nearcrawl_frontier::authority(&url));
        for fingerprint in fingerprints(&text) {
            postings
                .entry(sentence_key(fingerprint))
                .or_default()
                .add(page.seq, site, &cutoff);
        }
    }
    Ok(postings
        .into_iter()
        .map(|(key, posting)| (key, posting.to_bytes()))
        .collect())
}

impl Coordinator {
    /// A job whose store predates the sentence postings (or whose earlier runs did not
    /// verify): its kept pages' fingerprints are indexed from their stored texts, once, in one
    /// commit.
    pub(super) fn store_sentences(&mut self, uniques: &[UniquePage]) -> Result<(), EngineError> {
        if !self.stage.analyzer().config().verify || self.store.counter(SENTENCES_STORED)?.is_some()
        {
            return Ok(());
        }
        let sentences = postings_from_texts(self.store.as_ref(), uniques, |text| {
            self.stage.sentence_fingerprints(text)
        })?;
        self.store.commit(Commit {
            sentences,
            counters: vec![(SENTENCES_STORED.into(), 1)],
            ..Commit::default()
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use nearcrawl_store::MemoryStore;
    use nearcrawl_verify::CandidateIndex;

    use super::*;

    /// Pages kept one commit at a time, their postings read back and updated through the
    /// store, give the candidates an in-memory index gives.
    #[test]
    fn stored_postings_answer_as_the_memory_index() {
        let store = MemoryStore::default();
        let mut index = CandidateIndex::new(stage_sentence_cutoff());
        let pages: [(u64, &str, &[u128]); 4] = [
            (1, "a.test", &[1, 2, 3, 4]),
            (2, "b.test", &[3, 4, 5]),
            (4, "a.test", &[4, 5, 6]),
            (7, "c.test", &[9]),
        ];
        for (seq, site, fingerprints) in pages {
            let indexed = IndexedSentences {
                site: site.into(),
                fingerprints: fingerprints.to_vec(),
            };
            let sentences = postings(&store, seq, &indexed).unwrap();
            store
                .commit(Commit {
                    sentences,
                    ..Commit::default()
                })
                .unwrap();
            index.insert(seq, site, fingerprints);
        }
        for query in [&[4u128, 5][..], &[1, 9], &[8], &[], &[3, 4, 5, 6]] {
            assert_eq!(
                candidates(&store, query).unwrap(),
                index.candidates(query),
                "{query:?}"
            );
        }
        assert_eq!(
            candidates(&store, &[4, 5]).unwrap(),
            [(2, 2), (4, 2), (1, 1)]
        );
    }

    #[test]
    fn a_damaged_posting_is_an_error_naming_its_key() {
        let store = MemoryStore::default();
        store
            .commit(Commit {
                sentences: vec![(sentence_key(5), vec![9, 9, 9])],
                ..Commit::default()
            })
            .unwrap();
        let error = candidates(&store, &[5]).unwrap_err().to_string();
        assert!(
            error.contains("sentences") && error.contains("0000000000000005"),
            "{error}"
        );
    }

    /// A store from before the postings: kept pages are indexed from their texts.
    #[test]
    fn kept_texts_are_indexed_once_for_an_older_store() {
        let store = MemoryStore::default();
        let text = "a bb ccc";
        store
            .commit(Commit {
                records: vec![(
                    3,
                    br#"{"url":"http://a.test/x","verdict":"unique"}"#.to_vec(),
                )],
                unique: Some(UniquePage { seq: 3, simhash: 1 }),
                unique_text: Some((3, text.into())),
                ..Commit::default()
            })
            .unwrap();
        let words =
            |text: &str| -> Vec<u128> { text.split(' ').map(|w| w.len() as u128).collect() };
        let sentences = postings_from_texts(&store, &store.unique_pages().unwrap(), words).unwrap();
        store
            .commit(Commit {
                sentences,
                ..Commit::default()
            })
            .unwrap();
        assert_eq!(candidates(&store, &[2]).unwrap(), [(3, 1)]);
        assert_eq!(candidates(&store, &[1, 3]).unwrap(), [(3, 2)]);
        assert_eq!(candidates(&store, &[4]).unwrap(), []);
    }
}
