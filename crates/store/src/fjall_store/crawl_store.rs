//! What the crawl asks of the on-disk store, answered from its tables.

use std::ops::Bound;

use fjall::PersistMode;

use super::{
    ALL, BLOBS, COUNTERS, DROPPED, EXACT, FjallStore, HOSTS, HUB_YIELDS, HUBS, LENGTHS, LINK_KEYS,
    PARKED, QUEUE, RECORDS, SEEN, SENTENCES, TEXTS, UNDECIDED, UNIQUES, be_u64, writes,
};
use crate::behind;
use crate::{
    Commit, CrawlStore, Declared, HostId, HubYield, ParkedLink, QueueKey, QueuedUrl, StoreError,
    UniquePage, UrlKey, decode_queued,
};

impl CrawlStore for FjallStore {
    fn host_id(&self, authority: &str) -> Result<HostId, StoreError> {
        let _guard = self.host_lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(id) = self.tables[HOSTS]
            .get(authority)
            .map_err(|e| self.err_in(&self.tables[HOSTS], e))?
        {
            let id: [u8; 4] = (*id).try_into().map_err(|_| StoreError::Corrupt {
                table: "hosts",
                reason: format!("id of {authority} is not 4 bytes"),
            })?;
            return Ok(u32::from_be_bytes(id));
        }
        let next = self.tables[HOSTS]
            .len()
            .map_err(|e| self.err_in(&self.tables[HOSTS], e))? as HostId;
        self.tables[HOSTS]
            .insert(authority, next.to_be_bytes())
            .map_err(|e| self.err_in(&self.tables[HOSTS], e))?;
        Ok(next)
    }

    fn hosts(&self) -> Result<Vec<(HostId, String)>, StoreError> {
        let mut out = Vec::new();
        for item in self.tables[HOSTS].iter() {
            let (k, v) = item
                .into_inner()
                .map_err(|e| self.err_in(&self.tables[HOSTS], e))?;
            let id: [u8; 4] = (*v).try_into().map_err(|_| StoreError::Corrupt {
                table: "hosts",
                reason: "bad id".into(),
            })?;
            let name = String::from_utf8(k.to_vec()).map_err(|_| StoreError::Corrupt {
                table: "hosts",
                reason: "bad name".into(),
            })?;
            out.push((u32::from_be_bytes(id), name));
        }
        out.sort();
        Ok(out)
    }

    fn pending(
        &self,
        host: HostId,
        after: Option<QueueKey>,
        limit: usize,
    ) -> Result<Vec<(QueueKey, QueuedUrl)>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let (first, last) = QueueKey::host_bounds(host);
        let start = match after {
            Some(key) => std::ops::Bound::Excluded(key.to_bytes()),
            None => std::ops::Bound::Included(first.to_bytes()),
        };
        let end = std::ops::Bound::Included(last.to_bytes());
        let mut out = Vec::new();
        let range = (start.map(|k| k.to_vec()), end.map(|k| k.to_vec()));
        self.scan(QUEUE, range, &mut |k, v| {
            let key = QueueKey::from_bytes(k).ok_or(StoreError::Corrupt {
                table: "queue",
                reason: "bad key".into(),
            })?;
            out.push((key, decode_queued(v)?));
            Ok(out.len() < limit)
        })?;
        Ok(out)
    }

    fn is_seen(&self, key: &UrlKey) -> Result<bool, StoreError> {
        self.holds(SEEN, key)
    }

    fn is_hub(&self, key: &UrlKey) -> Result<bool, StoreError> {
        self.holds(HUBS, key)
    }

    fn hub_yield(&self, key: &UrlKey) -> Result<Option<(u64, HubYield)>, StoreError> {
        let seq = self.read(HUBS, key)?;
        // A hub marked by a version without yields has no sequence number.
        let Some(seq) = seq.as_deref().and_then(|v| <[u8; 8]>::try_from(v).ok()) else {
            return Ok(None);
        };
        let seq = u64::from_be_bytes(seq);
        Ok(self.hub_yield_at(seq)?.map(|yielded| (seq, yielded)))
    }

    fn hub_yield_at(&self, seq: u64) -> Result<Option<HubYield>, StoreError> {
        self.read(HUB_YIELDS, &seq.to_be_bytes())?
            .map(|v| {
                HubYield::decode(&v).map_err(|reason| StoreError::Corrupt {
                    table: "hub_yields",
                    reason,
                })
            })
            .transpose()
    }

    fn is_undecided(&self, key: &UrlKey) -> Result<bool, StoreError> {
        self.holds(UNDECIDED, key)
    }

    fn parked_on(&self, key: &UrlKey) -> Result<Vec<(UrlKey, ParkedLink)>, StoreError> {
        let mut out = Vec::new();
        self.scan(PARKED, behind::prefix_range(key), &mut |k, v| {
            let link: UrlKey = k[16..].try_into().map_err(|_| StoreError::Corrupt {
                table: "parked",
                reason: "bad key".into(),
            })?;
            out.push((link, ParkedLink::decode(v)?));
            Ok(true)
        })?;
        Ok(out)
    }

    fn parked_link(&self, key: &UrlKey, link: &UrlKey) -> Result<Option<ParkedLink>, StoreError> {
        self.read(PARKED, &[*key, *link].concat())?
            .map(|v| ParkedLink::decode(&v))
            .transpose()
    }

    fn parked_targets(&self) -> Result<Vec<UrlKey>, StoreError> {
        let mut out: Vec<UrlKey> = Vec::new();
        self.scan(PARKED, ALL, &mut |key, _| {
            let on: UrlKey = key[..16].try_into().map_err(|_| StoreError::Corrupt {
                table: "parked",
                reason: "bad key".into(),
            })?;
            if out.last() != Some(&on) {
                out.push(on);
            }
            Ok(true)
        })?;
        Ok(out)
    }

    fn declared(&self, key: &UrlKey) -> Result<Option<Declared>, StoreError> {
        match self.read(LENGTHS, key)? {
            Some(v) => Declared::decode(&v)
                .map(Some)
                .ok_or_else(|| StoreError::Corrupt {
                    table: "lengths",
                    reason: format!("{} bytes, want 8 or more", v.len()),
                }),
            None => Ok(None),
        }
    }

    fn exact_original(&self, key: &[u8; 16]) -> Result<Option<u64>, StoreError> {
        match self.read(EXACT, key)? {
            Some(v) => Ok(Some(be_u64(&v, "exact")?)),
            None => Ok(None),
        }
    }

    fn commit(&self, commit: Commit) -> Result<(), StoreError> {
        let ticket = self.push(writes(commit), true)?;
        self.behind.wait(ticket)
    }

    fn commit_behind(&self, commit: Commit) -> Result<u64, StoreError> {
        self.push(writes(commit), false)
    }

    fn landed(&self) -> Result<u64, StoreError> {
        self.behind.landed()
    }

    fn wait_landed(&self, ticket: u64) -> Result<(), StoreError> {
        self.behind.wait(ticket)
    }

    fn record(&self, seq: u64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.read(RECORDS, &seq.to_be_bytes())?.map(|v| v.to_vec()))
    }

    fn for_each_record(
        &self,
        from: u64,
        each: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), StoreError> {
        let range = (
            Bound::Included(from.to_be_bytes().to_vec()),
            Bound::Unbounded,
        );
        self.scan(RECORDS, range, &mut |k, v| {
            each(be_u64(k, "records")?, v);
            Ok(true)
        })
    }

    fn unique_text(&self, seq: u64) -> Result<Option<String>, StoreError> {
        match self.read(TEXTS, &seq.to_be_bytes())? {
            Some(v) => String::from_utf8(v.to_vec())
                .map(Some)
                .map_err(|_| StoreError::Corrupt {
                    table: "texts",
                    reason: format!("text of {seq} is not UTF-8"),
                }),
            None => Ok(None),
        }
    }

    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, StoreError> {
        Ok(self
            .read(LINK_KEYS, &seq.to_be_bytes())?
            .map(|v| crate::decode_keys(&v)))
    }

    fn dropped_unseen(&self) -> Result<u64, StoreError> {
        let mut unseen = 0;
        self.scan(DROPPED, ALL, &mut |key, _| {
            if !self.holds(SEEN, key)? {
                unseen += 1;
            }
            Ok(true)
        })?;
        Ok(unseen)
    }

    fn unique_simhash(&self, seq: u64) -> Result<Option<u64>, StoreError> {
        match self.read(UNIQUES, &seq.to_be_bytes())? {
            Some(v) => Ok(Some(be_u64(&v, "uniques")?)),
            None => Ok(None),
        }
    }

    fn unique_pages(&self) -> Result<Vec<UniquePage>, StoreError> {
        let mut out = Vec::new();
        self.scan(UNIQUES, ALL, &mut |k, v| {
            out.push(UniquePage {
                seq: be_u64(k, "uniques")?,
                simhash: be_u64(v, "uniques")?,
            });
            Ok(true)
        })?;
        Ok(out)
    }

    fn counter(&self, name: &str) -> Result<Option<u64>, StoreError> {
        match self.read(COUNTERS, name.as_bytes())? {
            Some(v) => Ok(Some(be_u64(&v, "counters")?)),
            None => Ok(None),
        }
    }

    fn sentence_posting(&self, key: u64) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .read(SENTENCES, &key.to_be_bytes())?
            .map(|v| v.to_vec()))
    }

    fn for_each_sentence_key(&self, each: &mut dyn FnMut(u64)) -> Result<(), StoreError> {
        self.scan(SENTENCES, ALL, &mut |key, _| {
            each(be_u64(key, "sentences")?);
            Ok(true)
        })
    }

    fn blob(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.read(BLOBS, name.as_bytes())?.map(|v| v.to_vec()))
    }

    fn sync(&self) -> Result<(), StoreError> {
        self.behind.wait(self.behind.last())?;
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| self.err(e))
    }
}
