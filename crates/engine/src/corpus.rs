//! A finished crawl's own pages as a corpus: the texts its dedup stage kept for its unique
//! pages (what it fingerprints: main text without the host's template), for learning an IDF
//! table from them.

use std::path::Path;

use nearcrawl_store::{CrawlStore, FjallStore};

use crate::error::EngineError;

/// Calls `each` with the kept text of every unique page of the crawl in `dir`, in crawl order,
/// and returns how many there were. Only pages fingerprinted with verification on keep their
/// text (the default).
pub fn for_each_kept_text(dir: &Path, mut each: impl FnMut(&str)) -> Result<u64, EngineError> {
    let state = dir.join("state");
    if !state.is_dir() {
        return Err(EngineError::NotACrawl {
            dir: dir.to_path_buf(),
            reason: "not a crawl output directory (no state/ in it)",
        });
    }
    let store = FjallStore::open(&state)?;
    let mut count = 0;
    for page in store.unique_pages()? {
        if let Some(text) = store.unique_text(page.seq)? {
            each(&text);
            count += 1;
        }
    }
    Ok(count)
}
