//! Recrawls (`crawl --previous OLD`): every page the previous job fetched is asked again with
//! its validators (`If-None-Match`, `If-Modified-Since`), and what comes back is classed
//! against that capture ([`Change`], decided by [`change_of`]). The previous job's pages are
//! queued with the seeds, so a page the server holds unchanged needs no links of its own:
//! every page it linked to that the previous job fetched is asked again anyway, and the new
//! links of changed pages are followed as in any crawl.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_records::{Change, PREVIOUS_FILE, Record, RecrawlFigures, Verdict, read_records};
use nearcrawl_store::{CrawlStore, FjallStore, Previous, QueuedUrl};

use crate::error::EngineError;

/// The job the crawl in `out_dir` crawls again: `given` (noted in `out_dir`), else the one
/// noted when it started, if any.
pub(crate) fn previous_of(
    out_dir: &Path,
    given: Option<&Path>,
) -> Result<Option<PathBuf>, EngineError> {
    let note = out_dir.join(PREVIOUS_FILE);
    match given {
        Some(dir) => {
            let text = dir.to_string_lossy().into_owned();
            std::fs::write(&note, text).map_err(|e| EngineError::io(&note, e))?;
            Ok(Some(dir.to_path_buf()))
        }
        None => match std::fs::read_to_string(&note) {
            Ok(text) => Ok(Some(PathBuf::from(text.trim_end()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(EngineError::io(&note, e)),
        },
    }
}

/// How a page asked again came back: its class, and for a changed page the simhash distance
/// to its previous capture (when both have one). `None` for an answer that says nothing of
/// the page (a server error, a throttled request).
pub fn change_of(
    previous: &Previous,
    status: u16,
    payload_digest: Option<&str>,
    simhash: Option<&str>,
) -> Option<(Change, Option<u32>)> {
    match status {
        304 => Some((Change::NotModified, None)),
        200 if payload_digest.is_some() && payload_digest == previous.payload_digest.as_deref() => {
            Some((Change::Unchanged, None))
        }
        200 => {
            let distance = match (simhash, previous.simhash.as_deref()) {
                (Some(now), Some(then)) => {
                    let now = u64::from_str_radix(now, 16).ok();
                    let then = u64::from_str_radix(then, 16).ok();
                    now.zip(then).map(|(a, b)| (a ^ b).count_ones())
                }
                _ => None,
            };
            Some((Change::Changed, distance))
        }
        404 | 410 => Some((Change::Gone, None)),
        300..=399 => Some((Change::Moved, None)),
        _ => None,
    }
}

/// Marks `record`, the decision on a page asked again (`previous`), with how it came back.
/// A 304 keeps the previous capture's payload digest and simhash (the next recrawl compares
/// with them), and its validators when the 304 did not repeat them.
pub(crate) fn mark(record: &mut Record, previous: &Previous) {
    let Some(status) = record.status else {
        return;
    };
    let Some((change, distance)) = change_of(
        previous,
        status,
        record.payload_digest.as_deref(),
        record.simhash.as_deref(),
    ) else {
        return;
    };
    record.change = Some(change);
    record.change_distance = distance;
    if matches!(change, Change::NotModified | Change::Unchanged) {
        // The payload is the previous capture's: so is the record holding it.
        record.warc_record_id = previous
            .warc_record_id
            .clone()
            .or(record.warc_record_id.take());
    }
    if change == Change::NotModified {
        record.payload_digest = previous.payload_digest.clone();
        record.simhash = previous.simhash.clone();
        record.etag = record.etag.take().or_else(|| previous.etag.clone());
        record.last_modified = record
            .last_modified
            .take()
            .or_else(|| previous.last_modified.clone());
    }
}

/// A page of the previous job to ask again: its URL, depth, capture, and the bytes it cost.
pub(crate) struct Revisit {
    pub(crate) url: CanonicalUrl,
    pub(crate) depth: u32,
    pub(crate) previous: Previous,
    pub(crate) bytes: u64,
}

/// The pages the job in `dir` fetched (answered 200, or 304 to a recrawl), from its
/// `records.jsonl`, in decision order.
pub(crate) fn previous_pages(dir: &Path) -> Result<Vec<Revisit>, EngineError> {
    let path = dir.join("records.jsonl");
    let mut pages = Vec::new();
    read_records(&path, &mut |record| {
        let captured = record.status == Some(200) && record.verdict != Verdict::Sitemap
            || record.verdict == Verdict::NotModified;
        if !captured {
            return;
        }
        let Ok(url) = CanonicalUrl::parse(&record.url) else {
            return;
        };
        pages.push(Revisit {
            url,
            depth: record.depth,
            bytes: record.bytes,
            previous: Previous {
                etag: record.etag,
                last_modified: record.last_modified,
                payload_digest: record.payload_digest,
                simhash: record.simhash,
                fetched_at: record.fetched_at,
                changed: record.change == Some(Change::Changed),
                // Its text is in that job's store if it was kept there.
                seq: Some(record.seq),
                warc_record_id: record.warc_record_id,
            },
        });
    })?;
    Ok(pages)
}

/// What a job queues first, with each URL's priority: for a recrawl of the job in
/// `previous`, its pages (those that changed then first, a seed among them asked as a
/// revisit) and the URLs it had queued and not fetched; then the seeds not among them.
pub(crate) fn first_queue(
    previous: Option<&Path>,
    seeds: &[nearcrawl_frontier::Seed],
) -> Result<Vec<(CanonicalUrl, QueuedUrl, u32)>, EngineError> {
    let mut queue = Vec::new();
    let mut queued = std::collections::HashSet::new();
    let mut push = |url: CanonicalUrl, entry: QueuedUrl, priority: u32| {
        if queued.insert(url.as_str().to_string()) {
            queue.push((url, entry, priority));
        }
    };
    if let Some(dir) = previous {
        let revisits = previous_pages(dir)?;
        tracing::info!(pages = revisits.len(), previous = %dir.display(), "recrawl");
        for revisit in revisits {
            let priority = u32::from(!revisit.previous.changed);
            let entry = QueuedUrl {
                url: revisit.url.to_string(),
                depth: revisit.depth,
                previous: Some(Box::new(revisit.previous)),
                ..QueuedUrl::default()
            };
            push(revisit.url, entry, priority);
        }
        for (url, depth) in previous_queue(dir)? {
            let entry = QueuedUrl {
                url: url.to_string(),
                depth,
                ..QueuedUrl::default()
            };
            push(url, entry, 0);
        }
    }
    for seed in seeds {
        let entry = QueuedUrl {
            url: seed.url.to_string(),
            depth: 0,
            ..QueuedUrl::default()
        };
        push(seed.url.clone(), entry, 0);
    }
    Ok(queue)
}

/// The URLs the job in `dir` had queued and not fetched when it ended (it stopped at a limit
/// or was interrupted), with their depth: a recrawl queues them as new, so that it goes on
/// from where that job stopped.
pub(crate) fn previous_queue(dir: &Path) -> Result<Vec<(CanonicalUrl, u32)>, EngineError> {
    let state = dir.join("state");
    if !state.is_dir() {
        return Ok(Vec::new());
    }
    let store = FjallStore::open(&state)?;
    let mut queued = Vec::new();
    for (host, _) in store.hosts()? {
        for (_, entry) in store.pending(host, None, usize::MAX)? {
            if let Ok(url) = CanonicalUrl::parse(&entry.url) {
                queued.push((url, entry.depth));
            }
        }
    }
    Ok(queued)
}

/// The previous job's kept texts, opened at the first changed page: what a changed page is
/// compared with.
#[derive(Default)]
pub(crate) struct PreviousTexts {
    /// `None` until asked; then the previous job's store, or `None` when it has none.
    store: Option<Option<FjallStore>>,
}

impl PreviousTexts {
    /// The text the job in `dir` kept for `previous` (it fetched the page whole and kept it
    /// as unique, or kept a 304's previous text).
    pub(crate) fn text(
        &mut self,
        dir: &Path,
        previous: &Previous,
    ) -> Result<Option<String>, EngineError> {
        let Some(seq) = previous.seq else {
            return Ok(None);
        };
        if self.store.is_none() {
            let state = dir.join("state");
            let opened = match state.is_dir() {
                true => Some(FjallStore::open(&state)?),
                false => None,
            };
            self.store = Some(opened);
        }
        match &self.store {
            Some(Some(store)) => Ok(store.unique_text(seq)?),
            _ => Ok(None),
        }
    }

    /// The LCS resemble rate of `units` (a changed page's verification units) to its
    /// previous capture's text in the job in `dir`, when that job kept it.
    pub(crate) fn similarity(
        &mut self,
        dir: &Path,
        previous: &Previous,
        units: &[u64],
        units_of: impl Fn(&str) -> Vec<u64>,
    ) -> Result<Option<f64>, EngineError> {
        let Some(text) = self.text(dir, previous)? else {
            return Ok(None);
        };
        let verification =
            nearcrawl_verify::verify(&units_of(&text), units, &nearcrawl_dedup::verify_config());
        Ok(Some(verification.resemblance))
    }
}

/// The figures of the recrawl in `store` of the job in `previous` (its output directory).
pub(crate) fn figures(
    previous: &Path,
    store: &dyn CrawlStore,
) -> Result<RecrawlFigures, EngineError> {
    let mut figures = RecrawlFigures::default();
    let mut before: HashMap<String, u64> = HashMap::new();
    for revisit in previous_pages(previous)? {
        figures.previous_pages += 1;
        figures.previous_bytes += revisit.bytes;
        before.insert(revisit.url.to_string(), revisit.bytes);
    }
    crate::report::for_each_stored_record(store, &mut |record| {
        figures.add(&record, before.contains_key(&record.url))
    })?;
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn how_a_page_asked_again_came_back() {
        let previous = Previous {
            payload_digest: Some("sha1:AAAA".into()),
            simhash: Some("00000000000000ff".into()),
            ..Previous::default()
        };
        // Status, payload digest and simhash now, and the class and distance expected.
        type Case<'a> = (
            u16,
            Option<&'a str>,
            Option<&'a str>,
            Option<(Change, Option<u32>)>,
        );
        let cases: [Case<'_>; 9] = [
            (304, None, None, Some((Change::NotModified, None))),
            (
                200,
                Some("sha1:AAAA"),
                Some("00000000000000ff"),
                Some((Change::Unchanged, None)),
            ),
            (
                200,
                Some("sha1:BBBB"),
                Some("000000000000000f"),
                Some((Change::Changed, Some(4))),
            ),
            (200, Some("sha1:BBBB"), None, Some((Change::Changed, None))),
            (200, None, None, Some((Change::Changed, None))),
            (404, None, None, Some((Change::Gone, None))),
            (410, None, None, Some((Change::Gone, None))),
            (301, None, None, Some((Change::Moved, None))),
            (503, None, None, None),
        ];
        for (status, digest, simhash, expected) in cases {
            assert_eq!(
                change_of(&previous, status, digest, simhash),
                expected,
                "{status} {digest:?}"
            );
        }
    }
}
