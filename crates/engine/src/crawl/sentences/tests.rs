//! The postings against an in-memory index: kept and written in batches, read back, read
//! off the coordinator, and a damaged one named.

use nearcrawl_store::{Commit, MemoryStore};
use nearcrawl_verify::CandidateIndex;

use super::*;

/// A key filter started small grows as pages are kept, rebuilt from the store's keys and
/// the held ones, and never loses one: the candidates stay the in-memory index's.
#[test]
fn a_growing_key_filter_loses_no_key() {
    let shared: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    let store = shared.as_ref();
    let mut postings = SentencePostings::open_with(store, 6).unwrap();
    let mut index = CandidateIndex::new(stage_sentence_cutoff());
    // Fingerprints spread over the whole key space (the filter takes a key's top bits),
    // a fifth of them shared by several pages.
    let fingerprint = |n: u64| u128::from(n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut queries = Vec::new();
    for seq in 1..=400u64 {
        let fingerprints: Vec<u128> = (0..6)
            .map(|i| match i {
                0 => fingerprint(seq % 50),
                _ => fingerprint(1000 + seq * 6 + i),
            })
            .collect();
        let site = format!("s{}.test", seq % 3);
        let read = ReadPostings::default();
        postings.candidates(store, &read, &fingerprints).unwrap();
        let indexed = IndexedSentences {
            site: site.clone(),
            fingerprints: fingerprints.clone(),
        };
        postings.keep(store, read, seq, &indexed).unwrap();
        // Grown on a thread of its own, put in place at a later page.
        postings.grow(&shared).unwrap();
        index.insert(seq, &site, &fingerprints);
        if seq % 37 == 0 {
            // Written behind: read from the batch until it has landed.
            postings.write_out(&shared, seq + 1).unwrap();
        }
        queries.push(fingerprints);
        if seq == 200 {
            // Once mid-way: every key there, the grown filter's or the old one's.
            for query in &queries {
                let read = ReadPostings::default();
                let found = postings.candidates(store, &read, query).unwrap();
                assert_eq!(found, index.candidates(query), "{query:?}");
            }
        }
    }
    postings.settle().unwrap();
    postings.land(true).unwrap();
    assert!(postings.written.bits > 6, "the filter grew");
    for query in &queries {
        let found = postings
            .candidates(store, &ReadPostings::default(), query)
            .unwrap();
        assert_eq!(found, index.candidates(query), "{query:?}");
    }
}

/// Pages kept one at a time, their postings held, written out in batches and read back,
/// give the candidates an in-memory index gives, before and after a write and on a store
/// opened again.
#[test]
fn stored_postings_answer_as_the_memory_index() {
    let shared: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    let store = shared.as_ref();
    let mut postings = SentencePostings::open(store).unwrap();
    let mut index = CandidateIndex::new(stage_sentence_cutoff());
    let pages: [(u64, &str, &[u128]); 5] = [
        (1, "a.test", &[1, 2, 3, 4]),
        (2, "b.test", &[3, 4, 5]),
        (4, "a.test", &[4, 5, 6]),
        (7, "c.test", &[9]),
        (8, "a.test", &[1, 6]),
    ];
    let queries = [&[4u128, 5][..], &[1, 9], &[8], &[], &[3, 4, 5, 6], &[1, 6]];
    for (n, (seq, site, fingerprints)) in pages.into_iter().enumerate() {
        // As a crawl does: the page judged (its postings read), then kept.
        let read = ReadPostings::default();
        postings.candidates(store, &read, fingerprints).unwrap();
        let indexed = IndexedSentences {
            site: site.into(),
            fingerprints: fingerprints.to_vec(),
        };
        postings.keep(store, read, seq, &indexed).unwrap();
        index.insert(seq, site, fingerprints);
        if n % 2 == 1 {
            // Written behind the coordinator: the queries below run before and after it
            // lands.
            postings.write_out(&shared, seq + 1).unwrap();
            assert!(postings.dirty.is_empty());
        }
        for query in queries {
            let found = postings
                .candidates(store, &ReadPostings::default(), query)
                .unwrap();
            assert_eq!(
                found,
                index.candidates(query),
                "after page {seq}: {query:?}"
            );
        }
    }
    postings.write_out(&shared, 9).unwrap();
    postings.land(true).unwrap();
    let reopened = SentencePostings::open(store).unwrap();
    for query in queries {
        let found = reopened
            .candidates(store, &ReadPostings::default(), query)
            .unwrap();
        assert_eq!(found, index.candidates(query), "reopened: {query:?}");
    }
    assert_eq!(store.counter(SENTENCES_THROUGH).unwrap(), Some(9));
}

/// Kept pages whose postings were not written (a killed run; a store from before the
/// postings) are indexed from their texts, and only those.
#[test]
fn unwritten_pages_are_indexed_from_their_texts() {
    let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    for (seq, text) in [(3, "a bb ccc"), (5, "dddd")] {
        let record = format!(r#"{{"url":"http://a.test/{seq}","verdict":"unique"}}"#);
        store
            .commit(Commit {
                records: vec![(seq, record.into_bytes().into())],
                unique: Some(UniquePage { seq, simhash: 1 }),
                unique_text: Some((seq, text.into())),
                ..Commit::default()
            })
            .unwrap();
    }
    // Words as fingerprints: their lengths.
    let words = |text: &str| -> Vec<u128> { text.split(' ').map(|w| w.len() as u128).collect() };
    let uniques = store.unique_pages().unwrap();
    let mut postings = SentencePostings::open(store.as_ref()).unwrap();
    postings.index_unwritten(&store, &uniques, words).unwrap();
    let found = |postings: &SentencePostings, fps: &[u128]| {
        postings
            .candidates(store.as_ref(), &ReadPostings::default(), fps)
            .unwrap()
    };
    assert_eq!(found(&postings, &[1, 3]), [(3, 2)]);
    assert_eq!(found(&postings, &[4]), [(5, 1)]);
    // Page 3 is in the store; page 5 is not (its posting was lost with a killed run).
    store
        .commit(Commit {
            sentences: vec![(sentence_key(1), {
                let mut p = SentencePosting::default();
                p.add(3, SiteHash::of("a.test"), &stage_sentence_cutoff());
                p.to_bytes()
            })],
            counters: vec![(SENTENCES_THROUGH.into(), 4)],
            ..Commit::default()
        })
        .unwrap();
    let mut postings = SentencePostings::open(store.as_ref()).unwrap();
    postings.index_unwritten(&store, &uniques, words).unwrap();
    assert_eq!(postings.dirty.len(), 1, "only page 5 indexed again");
    assert_eq!(found(&postings, &[1, 4]), [(3, 1), (5, 1)]);
}

/// A store holding kept pages 1 to 6 (their texts and records) and no postings.
fn kept_pages() -> Arc<dyn CrawlStore> {
    let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    let texts = [
        "a bb ccc",
        "bb dddd",
        "a ccc eeeee",
        "ffffff a",
        "bb ggggggg",
        "a bb",
    ];
    for (seq, text) in (1..).zip(texts) {
        let record = format!(
            r#"{{"url":"http://s{}.test/{seq}","verdict":"unique"}}"#,
            seq % 2
        );
        store
            .commit(Commit {
                records: vec![(seq, record.into_bytes().into())],
                unique: Some(UniquePage { seq, simhash: seq }),
                unique_text: Some((seq, text.into())),
                ..Commit::default()
            })
            .unwrap();
    }
    store
}

/// Every posting the store holds, as bytes, and its `sentences_through`.
fn stored(store: &dyn CrawlStore) -> (Vec<(u64, Vec<u8>)>, Option<u64>) {
    let mut keys = Vec::new();
    store
        .for_each_sentence_key(&mut |key| keys.push(key))
        .unwrap();
    keys.sort_unstable();
    let postings = keys
        .into_iter()
        .map(|key| (key, store.sentence_posting(key).unwrap().unwrap()))
        .collect();
    (postings, store.counter(SENTENCES_THROUGH).unwrap())
}

/// A batch written in parts holds what one commit would; one cut short after its first part
/// (a killed run) is completed by the next run, which indexes its pages again from their
/// texts without adding them a second time to the postings the part wrote.
#[test]
fn a_batch_cut_short_between_its_parts_is_completed_without_counting_twice() {
    // Words as fingerprints: their lengths.
    let words = |text: &str| -> Vec<u128> { text.split(' ').map(|w| w.len() as u128).collect() };
    let indexed = |store: &Arc<dyn CrawlStore>| {
        let mut postings = SentencePostings::open(store.as_ref()).unwrap();
        let uniques = store.unique_pages().unwrap();
        postings.index_unwritten(store, &uniques, words).unwrap();
        postings
    };
    let whole = kept_pages();
    batch::write_batch(whole.as_ref(), &indexed(&whole).dirty, 7, usize::MAX, None).unwrap();
    let (postings, through) = stored(whole.as_ref());
    assert_eq!((postings.len(), through), (7, Some(7)));

    let in_parts = kept_pages();
    batch::write_batch(in_parts.as_ref(), &indexed(&in_parts).dirty, 7, 2, None).unwrap();
    assert_eq!(stored(in_parts.as_ref()), (postings.clone(), through));

    let cut_short = kept_pages();
    batch::write_batch(
        cut_short.as_ref(),
        &indexed(&cut_short).dirty,
        7,
        3,
        Some(1),
    )
    .unwrap();
    assert_eq!(stored(cut_short.as_ref()).0.len(), 3, "one part written");
    assert_eq!(stored(cut_short.as_ref()).1, None);
    let mut again = indexed(&cut_short);
    assert_eq!(again.dirty.len(), 4, "the postings the part did not write");
    again.write_out(&cut_short, 7).unwrap();
    again.land(true).unwrap();
    assert_eq!(stored(cut_short.as_ref()), (postings, through));
}

/// Postings read where a page is analysed, off the coordinator, give the candidates the
/// coordinator's own reads give, and are not used once a batch was written after them.
#[test]
fn postings_read_off_the_coordinator_agree_until_a_batch_is_written() {
    let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    let mut postings = SentencePostings::open(store.as_ref()).unwrap();
    let analyzer = Arc::new(nearcrawl_dedup::Analyzer::new(Default::default()));
    let units = UnitsCache::new(analyzer, 1 << 20);
    let reader = postings.reader(Arc::clone(&store), units.clone(), 4);
    let mut index = CandidateIndex::new(stage_sentence_cutoff());
    let keep = |postings: &mut SentencePostings, index: &mut CandidateIndex, seq, fps: &[u128]| {
        let indexed = IndexedSentences {
            site: "a.test".into(),
            fingerprints: fps.to_vec(),
        };
        postings
            .keep(store.as_ref(), ReadPostings::default(), seq, &indexed)
            .unwrap();
        index.insert(seq, "a.test", fps);
        let text = format!("the text of page {seq}");
        store
            .commit(Commit {
                unique_text: Some((seq, text)),
                ..Commit::default()
            })
            .unwrap();
    };
    let write = |postings: &mut SentencePostings, through| {
        postings.write_out(&store, through).unwrap();
        postings.land(true).unwrap();
    };
    keep(&mut postings, &mut index, 1, &[1, 2, 3]);
    keep(&mut postings, &mut index, 2, &[3, 4]);
    write(&mut postings, 3);
    // Page 3 is kept but not written: held, not in the store.
    keep(&mut postings, &mut index, 3, &[4, 5]);
    let query = [3u128, 4, 5, 6];
    let read = postings.prefetched(reader.prefetch(&query));
    assert_eq!(
        read.0.borrow().len(),
        4,
        "every key of the query, present or not"
    );
    let found = postings.candidates(store.as_ref(), &read, &query).unwrap();
    assert_eq!(found, index.candidates(&query));

    // Read, then a batch written (page 4's postings moved to the store): not used.
    let stale = reader.prefetch(&query);
    keep(&mut postings, &mut index, 4, &[5, 6]);
    write(&mut postings, 5);
    let read = postings.prefetched(stale);
    assert!(read.0.borrow().is_empty(), "read again on the coordinator");
    let found = postings.candidates(store.as_ref(), &read, &query).unwrap();
    assert_eq!(found, index.candidates(&query));
    // Read after it: used, and right.
    let read = postings.prefetched(reader.prefetch(&query));
    assert_eq!(read.0.borrow().len(), 4);
    let found = postings.candidates(store.as_ref(), &read, &query).unwrap();
    assert_eq!(found, index.candidates(&query));
    // The candidates' units were computed where the postings were read.
    assert!((1..=4).all(|seq| units.get(seq).is_some()));
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
    let postings = SentencePostings::open(&store).unwrap();
    let error = postings
        .candidates(&store, &ReadPostings::default(), &[5])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("sentences") && error.contains("0000000000000005"),
        "{error}"
    );
}

/// The changed postings' table is made at the most its slots hold, so that it does not double
/// for a batch (and the page or two that fill it past [`FLUSH_POSTINGS`]).
#[test]
fn a_batch_fits_the_table_made_for_it() {
    let table = changed_postings();
    assert_eq!(
        table.capacity(),
        DIRTY_CAPACITY,
        "no more slots than asked for"
    );
}
