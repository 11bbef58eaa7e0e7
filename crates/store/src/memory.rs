//! The in-memory store: same semantics as the fjall one, nothing on disk.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use crate::{
    Commit, CrawlStore, Declared, HostId, HubYield, ParkedLink, QueueKey, QueuedUrl, StoreError,
    UniquePage, UrlKey,
};

/// A [`CrawlStore`] in memory: for tests and jobs that need no resume.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    hosts: Vec<String>,
    host_ids: HashMap<String, HostId>,
    queue: BTreeMap<QueueKey, QueuedUrl>,
    seen: HashSet<UrlKey>,
    exact: HashMap<[u8; 16], u64>,
    records: BTreeMap<u64, crate::Bytes>,
    uniques: BTreeMap<u64, u64>,
    texts: HashMap<u64, String>,
    link_keys: HashMap<u64, Vec<u64>>,
    dropped: HashSet<UrlKey>,
    hubs: HashMap<UrlKey, u64>,
    hub_yields: HashMap<u64, HubYield>,
    undecided: HashSet<UrlKey>,
    parked: BTreeMap<(UrlKey, UrlKey), ParkedLink>,
    lengths: HashMap<UrlKey, Declared>,
    counters: HashMap<String, u64>,
    blobs: HashMap<String, Vec<u8>>,
    sentences: HashMap<u64, Vec<u8>>,
}

impl MemoryStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data behind; keep using it.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl CrawlStore for MemoryStore {
    fn host_id(&self, authority: &str) -> Result<HostId, StoreError> {
        let mut inner = self.lock();
        if let Some(id) = inner.host_ids.get(authority) {
            return Ok(*id);
        }
        let id = inner.hosts.len() as HostId;
        inner.hosts.push(authority.to_string());
        inner.host_ids.insert(authority.to_string(), id);
        Ok(id)
    }

    fn hosts(&self) -> Result<Vec<(HostId, String)>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (i as HostId, h.clone()))
            .collect())
    }

    fn pending(
        &self,
        host: HostId,
        after: Option<QueueKey>,
        limit: usize,
    ) -> Result<Vec<(QueueKey, QueuedUrl)>, StoreError> {
        let inner = self.lock();
        let (start, end) = QueueKey::host_bounds(host);
        Ok(inner
            .queue
            .range(start..=end)
            .filter(|(k, _)| after.is_none_or(|a| **k > a))
            .take(limit)
            .map(|(k, v)| (*k, v.clone()))
            .collect())
    }

    fn is_seen(&self, key: &UrlKey) -> Result<bool, StoreError> {
        Ok(self.lock().seen.contains(key))
    }

    fn is_hub(&self, key: &UrlKey) -> Result<bool, StoreError> {
        Ok(self.lock().hubs.contains_key(key))
    }

    fn hub_yield(&self, key: &UrlKey) -> Result<Option<(u64, HubYield)>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .hubs
            .get(key)
            .and_then(|seq| Some((*seq, *inner.hub_yields.get(seq)?))))
    }

    fn hub_yield_at(&self, seq: u64) -> Result<Option<HubYield>, StoreError> {
        Ok(self.lock().hub_yields.get(&seq).copied())
    }

    fn is_undecided(&self, key: &UrlKey) -> Result<bool, StoreError> {
        Ok(self.lock().undecided.contains(key))
    }

    fn parked_on(&self, key: &UrlKey) -> Result<Vec<(UrlKey, ParkedLink)>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .parked
            .range((*key, [0; 16])..=(*key, [0xff; 16]))
            .map(|((_, link), parked)| (*link, parked.clone()))
            .collect())
    }

    fn parked_link(&self, key: &UrlKey, link: &UrlKey) -> Result<Option<ParkedLink>, StoreError> {
        Ok(self.lock().parked.get(&(*key, *link)).cloned())
    }

    fn parked_targets(&self) -> Result<Vec<UrlKey>, StoreError> {
        let mut targets: Vec<UrlKey> = self.lock().parked.keys().map(|(on, _)| *on).collect();
        targets.dedup();
        Ok(targets)
    }

    fn declared(&self, key: &UrlKey) -> Result<Option<Declared>, StoreError> {
        Ok(self.lock().lengths.get(key).cloned())
    }

    fn exact_original(&self, key: &[u8; 16]) -> Result<Option<u64>, StoreError> {
        Ok(self.lock().exact.get(key).copied())
    }

    fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        let mut inner = self.lock();
        for key in commit.taken {
            inner.queue.remove(&key);
        }
        for (seq, record) in commit.records {
            inner.records.insert(seq, record);
        }
        if let Some(page) = commit.unique {
            inner.uniques.insert(page.seq, page.simhash);
        }
        if let Some((key, seq)) = commit.exact_key {
            inner.exact.insert(key, seq);
        }
        if let Some((seq, text)) = commit.unique_text {
            inner.texts.insert(seq, text);
        }
        if let Some((seq, keys)) = commit.unique_links {
            inner.link_keys.insert(seq, keys);
        }
        inner.dropped.extend(commit.dropped);
        if let Some((key, seq, yielded)) = commit.hub {
            inner.hubs.insert(key, seq);
            inner.hub_yields.insert(seq, yielded);
        }
        inner.hub_yields.extend(commit.hub_yields);
        inner.lengths.extend(commit.length);
        inner.seen.extend(commit.seen);
        for key in &commit.decided {
            inner.undecided.remove(key);
        }
        for (on, link, parked) in commit.parked {
            inner.parked.insert((on, link), parked);
        }
        for key in &commit.unparked {
            inner.parked.remove(key);
        }
        for (key, url_key, url) in commit.enqueued {
            inner.seen.insert(url_key);
            inner.undecided.insert(url_key);
            inner.queue.insert(key, url);
        }
        for (name, value) in commit.counters {
            inner.counters.insert(name.into_owned(), value);
        }
        for (name, value) in commit.blobs {
            inner.blobs.insert(name.into_owned(), value);
        }
        inner.sentences.extend(commit.sentences);
        Ok(())
    }

    fn record(&self, seq: u64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.lock().records.get(&seq).map(|r| r.to_vec()))
    }

    fn for_each_record(
        &self,
        from: u64,
        each: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), StoreError> {
        let inner = self.lock();
        for (seq, record) in inner.records.range(from..) {
            each(*seq, record);
        }
        Ok(())
    }

    fn unique_text(&self, seq: u64) -> Result<Option<String>, StoreError> {
        Ok(self.lock().texts.get(&seq).cloned())
    }

    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, StoreError> {
        Ok(self.lock().link_keys.get(&seq).cloned())
    }

    fn dropped_unseen(&self) -> Result<u64, StoreError> {
        let inner = self.lock();
        Ok(inner
            .dropped
            .iter()
            .filter(|k| !inner.seen.contains(*k))
            .count() as u64)
    }

    fn unique_simhash(&self, seq: u64) -> Result<Option<u64>, StoreError> {
        Ok(self.lock().uniques.get(&seq).copied())
    }

    fn unique_pages(&self) -> Result<Vec<UniquePage>, StoreError> {
        let inner = self.lock();
        Ok(inner
            .uniques
            .iter()
            .map(|(&seq, &simhash)| UniquePage { seq, simhash })
            .collect())
    }

    fn counter(&self, name: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.lock().counters.get(name).copied())
    }

    fn sentence_posting(&self, key: u64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.lock().sentences.get(&key).cloned())
    }

    fn for_each_sentence_key(&self, each: &mut dyn FnMut(u64)) -> Result<(), StoreError> {
        self.lock().sentences.keys().for_each(|&key| each(key));
        Ok(())
    }

    fn blob(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.lock().blobs.get(name).cloned())
    }

    fn sync(&self) -> Result<(), StoreError> {
        Ok(())
    }
}
