//! The sentence-fingerprint postings of kept pages, in the crawl's store: read to find a
//! page's sentence candidates, updated when a unique page is kept. The store holds them all;
//! memory holds a bounded part: the postings changed since they were last written (written
//! together every [`FLUSH_POSTINGS`] postings, behind the coordinator once the decision of
//! the page that fills the batch has landed, or when the crawl stops; in parts, see
//! [`batch`]) and a filter of the keys the store has (a blocked Bloom filter, three bits
//! each in one word, grown with them up to 32 MiB: [`filter`]), so a fingerprint no page had
//! before (most of a new page's) costs no store read.
//!
//! The filter grows on a thread of its own ([`SentencePostings::grow`]): filling the grown
//! one reads every key in the store (4 million of them at about 130,000 pages), which held
//! the coordinator up for half a second and more; meanwhile the old one keeps answering, and
//! the keys added since are added to the new one before it takes over.
//!
//! A killed crawl loses the postings not yet written; the store's `sentences_through` counter
//! says which kept pages are in, and the next run indexes the others again from their stored
//! texts (minus what a batch cut short wrote of them, [`batch::WrittenPart`]).
//!
//! A page's postings are read where the page is analysed, on the blocking pool
//! ([`PostingsReader::prefetch`]), not on the coordinator: the store is shared, and so is the
//! key filter (its bits are atomic). The coordinator takes what was read
//! ([`SentencePostings::prefetched`]) only when no batch was written since
//! (the batch's [`generation`](SentencePostings::written_out)), for then the store holds the
//! same postings it did and everything changed since is among those it holds; else it reads
//! them again itself. Read on the coordinator, the postings of a long crawl's pages were
//! most of its CPU (docs/BENCHMARKS.md, "Stage times over a long crawl").

use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use nearcrawl_dedup::{IndexedSentences, UnitsCache, stage_sentence_cutoff};
use nearcrawl_store::{CrawlStore, INITIAL_FILTER_BITS, KeyFilter, StoreError, UniquePage};
use nearcrawl_verify::{SentencePosting, SiteHash, rank_candidates, sentence_key};
use url::Url;

use crate::error::EngineError;
use crate::runtime::Behind;

/// The store's counter: every kept page numbered below it has its postings in the store.
const SENTENCES_THROUGH: &str = "sentences_through";

/// Changed postings held before they are written in one batch (about 100 bytes each).
/// Batches of 16,384 took 21 MB off the text site's peak RSS but cost 6 to 8 % more CPU per
/// page (a hot sentence's posting is written again with every batch); a batch is written in
/// parts instead ([`batch`]), so that only its postings are held whole: docs/BENCHMARKS.md,
/// "Peak memory on the text site". Below [`DIRTY_CAPACITY`] by what a page or two adds, so
/// that the table holding them never doubles.
const FLUSH_POSTINGS: usize = 48 << 10;

/// The changed postings' table is made for this many: the most a table of 2^16 slots holds
/// (seven eighths of them), so a batch of [`FLUSH_POSTINGS`] fits without the table growing
/// to 2^17 slots. At 65,536 postings a batch, it had: 7.3 MB for the batch being written and
/// as much for the one filling (docs/BENCHMARKS.md, "Peak memory on the text site").
const DIRTY_CAPACITY: usize = 7 << 13;
const _: () = assert!(
    FLUSH_POSTINGS + 8_192 <= DIRTY_CAPACITY,
    "room for the pages that fill it"
);

/// The postings of the crawl's kept pages: the store's, the changed ones not yet written,
/// and the key filter.
pub(super) struct SentencePostings {
    /// (Seeded, as every table keyed by a hash of a page's text.)
    dirty: foldhash::HashMap<u64, SentencePosting>,
    written: Arc<KeyFilter>,
    /// What the blocking pool reads postings by: the filter, and how many batches were
    /// written.
    shared: Arc<Shared>,
    /// A grown filter being filled from the store's keys, when one is.
    growing: Option<Growth>,
    /// A batch of postings being written to the store, when one is.
    landing: Option<Landing>,
}

/// A batch of changed postings being written to the store on a thread of its own
/// ([`SentencePostings::write_out`]): until it has landed, reads find its postings here.
struct Landing {
    postings: Arc<foldhash::HashMap<u64, SentencePosting>>,
    writing: Behind<Result<(), StoreError>>,
}

/// A filter four times larger being filled from the store's keys on a thread of its own, and
/// the keys added since it started (the ones held then, changed or in a batch being
/// written, included): it takes over once they are added to it too, so it holds every key
/// the old one does.
struct Growth {
    added: Vec<u64>,
    filling: Behind<Result<KeyFilter, StoreError>>,
}

/// The part of [`SentencePostings`] the blocking pool reads.
struct Shared {
    /// The key filter as it stands (replaced when it grows).
    filter: RwLock<Arc<KeyFilter>>,
    /// Batches of postings written to the store so far (bumped once the batch has landed).
    generation: AtomicU64,
}

/// The postings read from the store while judging one page (absent ones too), so that
/// keeping it does not read them again.
#[derive(Debug, Default)]
pub(super) struct ReadPostings(RefCell<foldhash::HashMap<u64, Option<SentencePosting>>>);

/// The sentence matches a page's candidates were ranked from: for each candidate, the
/// sentences it shares with the page ([`crate::progress::Progress::sentence_matches`]).
#[derive(Default)]
pub(super) struct MatchCount(std::cell::Cell<u64>);

impl MatchCount {
    /// Counts the matches of `candidates` (as [`rank_candidates`] gives them).
    pub(super) fn add(&self, candidates: &[(u64, usize)]) {
        let matches: usize = candidates.iter().map(|(_, shared)| shared).sum();
        self.0.set(self.0.get() + matches as u64);
    }

    /// The matches counted.
    pub(super) fn get(&self) -> u64 {
        self.0.get()
    }
}

/// Reads a page's postings where the page is analysed ([`PostingsReader::prefetch`]), and
/// computes its likely candidates' verification units there.
#[derive(Clone)]
pub(super) struct PostingsReader {
    store: Arc<dyn CrawlStore>,
    shared: Arc<Shared>,
    /// The stage's cache of originals' units.
    units: UnitsCache,
    /// Sentence candidates verified per page at most (`dedup.max_candidates`).
    candidates: usize,
}

/// A page's postings as [`PostingsReader::prefetch`] read them: the store's (absent ones
/// too, per key), when the store had written `generation` batches.
#[derive(Debug)]
pub(super) struct Prefetched {
    generation: u64,
    read: foldhash::HashMap<u64, Option<SentencePosting>>,
    /// The kept pages its postings name most, most first, whose units were computed.
    pub(super) candidates: Vec<u64>,
}

impl PostingsReader {
    /// The postings the store may have of `fingerprints` (the key filter says which), read
    /// here rather than on the coordinator, and the verification units of the kept pages
    /// they name most (the candidates the page will be verified against, but for those of
    /// postings not written yet), computed into the stage's cache. `None` when a read
    /// failed: the coordinator reads again, and reports what fails.
    pub(super) fn prefetch(&self, fingerprints: &[u128]) -> Option<Prefetched> {
        // The generation first: a batch written after it makes the coordinator read again.
        let generation = self.shared.generation.load(Ordering::Acquire);
        let filter = Arc::clone(
            &*self
                .shared
                .filter
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut read = foldhash::HashMap::default();
        for &fingerprint in fingerprints {
            let key = sentence_key(fingerprint);
            if let Entry::Vacant(slot) = read.entry(key) {
                slot.insert(read_stored(&filter, self.store.as_ref(), key).ok()?);
            }
        }
        let lists = read.values().flatten().map(SentencePosting::documents);
        let mut candidates = Vec::new();
        for (seq, _) in rank_candidates(lists).into_iter().take(self.candidates) {
            let store = self.store.as_ref();
            self.units.warm(seq, || store.unique_text(seq)).ok()?;
            candidates.push(seq);
        }
        Some(Prefetched {
            generation,
            read,
            candidates,
        })
    }
}

/// An empty table of changed postings, made for [`DIRTY_CAPACITY`] of them.
fn changed_postings() -> foldhash::HashMap<u64, SentencePosting> {
    foldhash::HashMap::with_capacity_and_hasher(DIRTY_CAPACITY, Default::default())
}

/// The posting of `key` from the store, when the filter says it may be there.
fn read_stored(
    written: &KeyFilter,
    store: &dyn CrawlStore,
    key: u64,
) -> Result<Option<SentencePosting>, EngineError> {
    if !written.may_contain(key) {
        return Ok(None);
    }
    Ok(stored(store, key)?)
}

/// The posting stored under `key`.
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

impl SentencePostings {
    /// The postings of `store`: its keys go into the filter.
    pub(super) fn open(store: &dyn CrawlStore) -> Result<SentencePostings, EngineError> {
        SentencePostings::open_with(store, INITIAL_FILTER_BITS)
    }

    /// [`SentencePostings::open`] with a key filter of at least `2^bits` bits at first.
    fn open_with(store: &dyn CrawlStore, bits: u32) -> Result<SentencePostings, EngineError> {
        let mut keys = 0u64;
        store.for_each_sentence_key(&mut |_| keys += 1)?;
        let written = Arc::new(KeyFilter::for_keys(keys, bits));
        written.fill(store)?;
        Ok(SentencePostings {
            dirty: changed_postings(),
            shared: Arc::new(Shared {
                filter: RwLock::new(Arc::clone(&written)),
                generation: AtomicU64::new(0),
            }),
            written,
            growing: None,
            landing: None,
        })
    }

    /// What the blocking pool reads a page's postings with, and computes its candidates'
    /// units into `units` with (at most `candidates` of them).
    pub(super) fn reader(
        &self,
        store: Arc<dyn CrawlStore>,
        units: UnitsCache,
        candidates: usize,
    ) -> PostingsReader {
        PostingsReader {
            store,
            shared: Arc::clone(&self.shared),
            units,
            candidates,
        }
    }

    /// The postings read for a page where it was analysed, as if read here: when no batch
    /// was written since (the store holds what it held then, and what changed since is
    /// held here), else none (read again as the page is judged).
    pub(super) fn prefetched(&self, prefetched: Option<Prefetched>) -> ReadPostings {
        match prefetched {
            Some(p) if p.generation == self.shared.generation.load(Ordering::Acquire) => {
                ReadPostings(RefCell::new(p.read))
            }
            _ => ReadPostings::default(),
        }
    }

    /// A batch of postings has landed in the store: postings read before it may be stale.
    pub(super) fn written_out(&self) {
        self.shared.generation.fetch_add(1, Ordering::Release);
    }

    /// Kept pages sharing sentence fingerprints with `fingerprints`, most shared first; the
    /// postings read from the store are kept in `read`.
    pub(super) fn candidates(
        &self,
        store: &dyn CrawlStore,
        read: &ReadPostings,
        fingerprints: &[u128],
    ) -> Result<Vec<(u64, usize)>, EngineError> {
        let mut read = read.0.borrow_mut();
        for &fingerprint in fingerprints {
            let key = sentence_key(fingerprint);
            if self.held(key).is_none()
                && let Entry::Vacant(slot) = read.entry(key)
            {
                slot.insert(read_stored(&self.written, store, key)?);
            }
        }
        Ok(rank_candidates(fingerprints.iter().filter_map(|fp| {
            let key = sentence_key(*fp);
            self.held(key)
                .or_else(|| read.get(&key).and_then(Option::as_ref))
                .map(SentencePosting::documents)
        })))
    }

    /// The posting of `key` held here: changed since the last batch, or in the batch being
    /// written.
    fn held(&self, key: u64) -> Option<&SentencePosting> {
        self.dirty.get(&key).or_else(|| {
            let landing = self.landing.as_ref()?;
            landing.postings.get(&key)
        })
    }

    /// Adds page `seq` to the postings of its sentences (each as held, as `read` while
    /// judging the page, or from the store).
    pub(super) fn keep(
        &mut self,
        store: &dyn CrawlStore,
        read: ReadPostings,
        seq: u64,
        sentences: &IndexedSentences,
    ) -> Result<(), EngineError> {
        self.keep_unless_written(store, read, seq, sentences, None)
    }

    /// [`SentencePostings::keep`], but for the postings that a batch cut short by a killed
    /// run (`written`) wrote with page `seq` in them already.
    fn keep_unless_written(
        &mut self,
        store: &dyn CrawlStore,
        read: ReadPostings,
        seq: u64,
        sentences: &IndexedSentences,
        written: Option<batch::WrittenPart>,
    ) -> Result<(), EngineError> {
        let (site, cutoff) = (SiteHash::of(&sentences.site), stage_sentence_cutoff());
        let mut read = read.0.into_inner();
        for &fingerprint in &sentences.fingerprints {
            let key = sentence_key(fingerprint);
            if written.is_some_and(|part| part.holds(seq, key)) {
                continue;
            }
            let posting = match self.dirty.entry(key) {
                // Changed already: its key is in the filter (and, while a filter grows,
                // among the keys it will take: held when it started, or added since).
                Entry::Occupied(held) => held.into_mut(),
                Entry::Vacant(slot) => {
                    let landing = self.landing.as_ref();
                    let posting = match landing.and_then(|l| l.postings.get(&key)) {
                        Some(posting) => Some(posting.clone()),
                        None => match read.remove(&key) {
                            Some(posting) => posting,
                            None => read_stored(&self.written, store, key)?,
                        },
                    };
                    self.written.insert(key);
                    if let Some(growth) = &mut self.growing {
                        growth.added.push(key);
                    }
                    slot.insert(posting.unwrap_or_default())
                }
            };
            posting.add(seq, site, &cutoff);
        }
        Ok(())
    }

    /// Grows the key filter when it is crowded: a filter of four times the bits (about a
    /// tenth of them set then) is filled from `store`'s keys on a thread of its own,
    /// and takes over at a later call, once filled, with the keys added meanwhile.
    pub(super) fn grow(&mut self, store: &Arc<dyn CrawlStore>) -> Result<(), EngineError> {
        match &self.growing {
            Some(growth) if growth.filling.is_finished() => self.settle(),
            Some(_) => Ok(()),
            None if self.written.crowded() => {
                let bits = self.written.bits + 2;
                let store = Arc::clone(store);
                let filling = Behind::start("nearcrawl-key-filter", move || {
                    let grown = KeyFilter::with_bits(bits);
                    grown.fill(store.as_ref())?;
                    Ok(grown)
                });
                // Held here, changed or in a batch being written: perhaps not in the store
                // when it is read.
                let landing = self.landing.iter().flat_map(|l| l.postings.keys());
                let added = self.dirty.keys().chain(landing).copied().collect();
                self.growing = Some(Growth { added, filling });
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Waits for a growing filter to be filled, and puts it in place.
    pub(super) fn settle(&mut self) -> Result<(), EngineError> {
        match self.growing.take() {
            Some(growth) => {
                let grown = growth.filling.join()?;
                self.install(grown, growth.added);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Puts a grown filter in place, with the keys `added` since it started filling.
    fn install(&mut self, grown: KeyFilter, added: Vec<u64>) {
        for key in added {
            grown.insert(key);
        }
        let grown = Arc::new(grown);
        *self
            .shared
            .filter
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::clone(&grown);
        self.written = grown;
    }

    /// Indexes the kept pages whose postings are not in the store (numbered from its
    /// counter on: a killed run's last ones, or every page of a store from before the
    /// postings) from their stored texts and records' URLs, their fingerprints taken by
    /// `fingerprints`.
    pub(super) fn index_unwritten(
        &mut self,
        store: &Arc<dyn CrawlStore>,
        uniques: &[UniquePage],
        fingerprints: impl Fn(&str) -> Vec<u128>,
    ) -> Result<(), EngineError> {
        /// What is read of a record: its URL.
        #[derive(serde::Deserialize)]
        struct Located {
            url: String,
        }
        let through = store.counter(SENTENCES_THROUGH)?.unwrap_or(0);
        let written = batch::WrittenPart::read(store.as_ref(), through)?;
        for page in uniques.iter().filter(|p| p.seq >= through) {
            let (Some(text), Some(record)) =
                (store.unique_text(page.seq)?, store.record(page.seq)?)
            else {
                continue;
            };
            let Some(url) = serde_json::from_slice::<Located>(&record)
                .ok()
                .and_then(|r| Url::parse(&r.url).ok())
            else {
                continue;
            };
            let sentences = IndexedSentences {
                site: nearcrawl_frontier::authority(&url),
                fingerprints: fingerprints(&text),
            };
            self.keep_unless_written(
                store.as_ref(),
                ReadPostings::default(),
                page.seq,
                &sentences,
                written,
            )?;
            self.grow(store)?;
        }
        Ok(())
    }

    /// Whether enough postings changed to write them out.
    pub(super) fn due(&self) -> bool {
        self.dirty.len() >= FLUSH_POSTINGS
    }

    /// Writes the changed postings to the store behind the coordinator: on a thread of
    /// their own, in a commit of their own, with the counter saying that every kept page
    /// numbered below `through` is in (so call it once those pages' decisions have landed).
    /// Its postings are held until it has landed ([`SentencePostings::land`]); the batch
    /// before lands first.
    pub(super) fn write_out(
        &mut self,
        store: &Arc<dyn CrawlStore>,
        through: u64,
    ) -> Result<(), EngineError> {
        self.land(true)?;
        let postings = Arc::new(std::mem::replace(&mut self.dirty, changed_postings()));
        let (batch, store) = (Arc::clone(&postings), Arc::clone(store));
        let writing = Behind::start("nearcrawl-postings", move || {
            batch::write_batch(store.as_ref(), &batch, through, batch::WRITE_PART, None)
        });
        self.landing = Some(Landing { postings, writing });
        Ok(())
    }

    /// The batch being written, once it has landed (`wait`: waiting for it): its postings
    /// are the store's, and those read before it may be stale ([`generation`]).
    ///
    /// [`generation`]: SentencePostings::written_out
    pub(super) fn land(&mut self, wait: bool) -> Result<(), EngineError> {
        match &self.landing {
            Some(landing) if wait || landing.writing.is_finished() => {}
            _ => return Ok(()),
        }
        if let Some(landing) = self.landing.take() {
            landing.writing.join()?;
            self.written_out();
        }
        Ok(())
    }
}

mod batch;
#[cfg(test)]
mod tests;
