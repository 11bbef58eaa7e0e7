//! The index shared across jobs (`--index DIR`): `DIR/fingerprints.idx` (the permuted-table
//! index file, payload = position) and `DIR/urls.txt` (line N+1 = the URL of position N).
//! Written when a job ends, each file atomically; a pair that does not match is an error
//! naming the directory, never a partial load.

use std::collections::HashSet;
use std::path::Path;

use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::HammingIndex;
use nearcrawl_store::CrawlStore;

use crate::error::EngineError;
use crate::record::Record;

const INDEX_FILE: &str = "fingerprints.idx";
const URLS_FILE: &str = "urls.txt";

/// A shared index in memory: `(fingerprint, position)` entries and the URL of each position.
pub type SharedIndex = (Vec<(Fingerprint, u64)>, Vec<String>);

/// The shared entries and URLs; empty when `dir` holds no index yet.
pub fn load(dir: &Path) -> Result<SharedIndex, EngineError> {
    let index_path = dir.join(INDEX_FILE);
    let urls_path = dir.join(URLS_FILE);
    if !index_path.exists() && !urls_path.exists() {
        return Ok((Vec::new(), Vec::new()));
    }
    let index = HammingIndex::load(&index_path).map_err(|source| EngineError::SharedIndex {
        path: index_path.clone(),
        source,
    })?;
    let urls: Vec<String> = std::fs::read_to_string(&urls_path)
        .map_err(|e| EngineError::io(&urls_path, e))?
        .lines()
        .map(str::to_owned)
        .collect();
    let entries: Vec<(Fingerprint, u64)> = index.entries().collect();
    if let Some((_, bad)) = entries.iter().find(|(_, n)| *n as usize >= urls.len()) {
        return Err(EngineError::SharedIndexUrls {
            dir: dir.to_path_buf(),
            entry: *bad,
            urls: urls.len(),
        });
    }
    Ok((entries, urls))
}

/// Writes the shared index: the entries it had plus this job's unique pages not in it yet.
pub fn save(
    dir: &Path,
    index: &HammingIndex,
    shared_urls: &[String],
    store: &dyn CrawlStore,
    shared_tag: u64,
) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir).map_err(|e| EngineError::io(dir, e))?;
    let mut urls: Vec<String> = shared_urls.to_vec();
    let mut known: HashSet<String> = urls.iter().cloned().collect();
    let mut entries: Vec<(Fingerprint, u64)> = index
        .entries()
        .filter(|(_, payload)| payload & shared_tag != 0)
        .map(|(fp, payload)| (fp, payload & !shared_tag))
        .collect();
    for page in store.unique_pages()? {
        let Some(bytes) = store.record(page.seq)? else {
            continue;
        };
        let Ok(record) = serde_json::from_slice::<Record>(&bytes) else {
            continue;
        };
        if known.insert(record.url.clone()) {
            entries.push((Fingerprint::new(page.simhash), urls.len() as u64));
            urls.push(record.url);
        }
    }
    // URLs first: an index whose entries outrun its URL list is refused at load.
    let urls_path = dir.join(URLS_FILE);
    let tmp = dir.join(format!("{URLS_FILE}.tmp"));
    let mut text = urls.join("\n");
    text.push('\n');
    std::fs::write(&tmp, text).map_err(|e| EngineError::io(&tmp, e))?;
    std::fs::rename(&tmp, &urls_path).map_err(|e| EngineError::io(&urls_path, e))?;
    let shared = HammingIndex::from_entries(index.params().clone(), entries);
    let index_path = dir.join(INDEX_FILE);
    shared
        .save(&index_path)
        .map_err(|source| EngineError::SharedIndex {
            path: index_path.clone(),
            source,
        })?;
    Ok(())
}
