//! A batch of changed postings written to the store in parts: sorted by key, at most
//! [`WRITE_PART`] postings a commit, so that only one part is ever held as bytes, in the
//! store's write batch and in its journal at a time (a batch of 65,536 written in one commit
//! was held several times over, 17 MB of the text site's peak heap: docs/BENCHMARKS.md, "Peak
//! memory on the text site").
//!
//! Only the last part moves the store's `sentences_through` counter. Every part before it
//! says how far the batch got ([`WrittenPart`]): a run killed between two parts leaves the
//! postings keyed up to the part's last key holding the batch's pages already, and the next
//! run, indexing those pages again from their texts, must not add them to those postings a
//! second time ([`SentencePosting::add`] counts and lists whatever it is given).

use nearcrawl_store::{Commit, CrawlStore, StoreError};
use nearcrawl_verify::SentencePosting;

use super::SENTENCES_THROUGH;

/// Postings written in one commit at most.
pub(super) const WRITE_PART: usize = 4_096;

/// The store's counters of a batch written in part: the `through` of the batch...
const PART_THROUGH: &str = "sentences_part_through";
/// ... and the last key of the part written last.
const PART_LAST_KEY: &str = "sentences_part_key";

/// Writes `batch` to `store` in parts of `part_len` postings, in key order (the store's
/// memtable takes sorted keys faster), the last with the counter saying that every kept page
/// numbered below `through` is in; `parts` of them at most (all when `None`: fewer only to
/// play a killed run in tests).
pub(super) fn write_batch(
    store: &dyn CrawlStore,
    batch: &foldhash::HashMap<u64, SentencePosting>,
    through: u64,
    part_len: usize,
    parts: Option<usize>,
) -> Result<(), StoreError> {
    let mut keys: Vec<u64> = batch.keys().copied().collect();
    keys.sort_unstable();
    let count = keys.len().div_ceil(part_len.max(1)).max(1);
    let mut chunks = keys.chunks(part_len.max(1));
    for n in 0..count.min(parts.unwrap_or(count)) {
        let part = chunks.next().unwrap_or_default();
        let mut commit = Commit {
            sentences: part
                .iter()
                .filter_map(|key| Some((*key, batch.get(key)?.to_bytes())))
                .collect(),
            ..Commit::default()
        };
        match (n + 1 == count, part.last()) {
            (false, Some(&last)) => commit
                .counters
                .extend([(PART_THROUGH.into(), through), (PART_LAST_KEY.into(), last)]),
            _ => commit.counters.push((SENTENCES_THROUGH.into(), through)),
        }
        store.commit(commit)?;
    }
    Ok(())
}

/// What a batch cut short wrote: the postings keyed up to `last_key` hold every kept page
/// numbered below `through`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct WrittenPart {
    through: u64,
    last_key: u64,
}

impl WrittenPart {
    /// The part of a batch `store` holds beyond its `sentences_through` counter `written`:
    /// `None` when the last batch was written whole.
    pub(super) fn read(store: &dyn CrawlStore, written: u64) -> Result<Option<Self>, StoreError> {
        let (Some(through), Some(last_key)) =
            (store.counter(PART_THROUGH)?, store.counter(PART_LAST_KEY)?)
        else {
            return Ok(None);
        };
        Ok((through > written).then_some(WrittenPart { through, last_key }))
    }

    /// Whether the stored posting of `key` holds kept page `seq` already.
    pub(super) fn holds(&self, seq: u64, key: u64) -> bool {
        seq < self.through && key <= self.last_key
    }
}
