//! What fetched pages declared ([`Declared`]: their length, their text's shingles, the URLs
//! of their site they named first), which the probes of their counterparts and the link
//! policy's predictions are compared with: this process's store, and in a job shared through
//! Redis the job's declarations too, so that a worker compares with what any worker fetched.

use std::sync::{Arc, Mutex};

use nearcrawl_store::{CrawlStore, Declared, StoreError, url_key};
use url::Url;

use super::shared_dedup::shared_error;
use crate::error::EngineError;

/// This process's declarations, and the job's when it is shared.
pub(super) struct Declarations {
    store: Arc<dyn CrawlStore>,
    /// A shared job's: behind a lock so that a read asks through `&self`, as the store's do.
    shared: Option<Mutex<nearcrawl_redis_job::Declarations>>,
}

impl std::fmt::Debug for Declarations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Declarations")
            .field("shared", &self.shared.is_some())
            .finish()
    }
}

impl Declarations {
    /// The declarations `store` keeps, and `shared`'s.
    pub(super) fn new(
        store: Arc<dyn CrawlStore>,
        shared: Option<nearcrawl_redis_job::Declarations>,
    ) -> Declarations {
        Declarations {
            store,
            shared: shared.map(Mutex::new),
        }
    }

    /// Whether the job's declarations are shared: a page not declared here may have been
    /// fetched by another worker, or not be decided yet.
    pub(super) fn shared(&self) -> bool {
        self.shared.is_some()
    }

    /// What the page at `url` (canonical, as queued) declared, if it was fetched whole by
    /// this process or, in a shared job, by any worker.
    pub(super) fn get(&self, url: &str) -> Result<Option<Declared>, EngineError> {
        let key = url_key(url);
        if let Some(declared) = self.store.declared(&key)? {
            return Ok(Some(declared));
        }
        let (Some(shared), Ok(parsed)) = (&self.shared, Url::parse(url)) else {
            return Ok(None);
        };
        Ok(shared_get(shared, &parsed, url)?.map(|(declared, _)| declared))
    }

    /// Whether the page at `url` was declared by another worker of a shared job before its
    /// decision named its links ([`Declarations::share_early`]): a copy of it found
    /// unchanged cannot yet tell which of its links are new.
    pub(super) fn links_pending(&self, url: &str) -> Result<bool, EngineError> {
        if self.store.declared(&url_key(url))?.is_some() {
            return Ok(false);
        }
        let (Some(shared), Ok(parsed)) = (&self.shared, Url::parse(url)) else {
            return Ok(false);
        };
        Ok(shared_get(shared, &parsed, url)?.is_some_and(|(_, complete)| !complete))
    }

    /// The length the page at `url` declared ([`Declarations::get`]).
    pub(super) fn length(&self, url: &str) -> Result<Option<u64>, EngineError> {
        Ok(self.get(url)?.map(|d| d.length))
    }

    /// In a shared job, makes what the page at `url` declared known to every worker (this
    /// process's store keeps it with the page's decision).
    pub(super) fn share(&self, url: &str, declared: &Declared) -> Result<(), EngineError> {
        self.put(url, declared, FINAL)
    }

    /// In a shared job, makes what the page at `url` declared known to every worker before
    /// its decision names its links (they are [pending](Declarations::links_pending) until
    /// [`Declarations::share`]).
    pub(super) fn share_early(&self, url: &str, declared: &Declared) -> Result<(), EngineError> {
        self.put(url, declared, EARLY)
    }

    fn put(&self, url: &str, declared: &Declared, tag: u8) -> Result<(), EngineError> {
        let (Some(shared), Ok(parsed)) = (&self.shared, Url::parse(url)) else {
            return Ok(());
        };
        let origin = crate::frontier::origin_of(&parsed);
        let mut bytes = vec![tag];
        bytes.extend(declared.encode());
        lock(shared)
            .put(&origin, &url_key(url), &bytes)
            .map_err(shared_error)
    }
}

/// The first byte of a shared declaration: made with the page's decision, its links known ...
const FINAL: u8 = b'f';
/// ... or before it, its links not known yet.
const EARLY: u8 = b'e';

/// A shared job's declaration of the page at `url` (`parsed`), and whether it is final.
fn shared_get(
    shared: &Mutex<nearcrawl_redis_job::Declarations>,
    parsed: &Url,
    url: &str,
) -> Result<Option<(Declared, bool)>, EngineError> {
    let origin = crate::frontier::origin_of(parsed);
    let Some(bytes) = lock(shared)
        .get(&origin, &url_key(url))
        .map_err(shared_error)?
    else {
        return Ok(None);
    };
    let read = match bytes.split_first() {
        Some((&FINAL, rest)) => Declared::decode(rest).map(|d| (d, true)),
        Some((&EARLY, rest)) => Declared::decode(rest).map(|d| (d, false)),
        _ => None,
    };
    read.map(Some).ok_or_else(|| {
        EngineError::Store(StoreError::Corrupt {
            table: "the job's declarations",
            reason: format!("{url}: {} bytes that are no declaration", bytes.len()),
        })
    })
}

/// The lock, whether or not a holder panicked (the connection holds no state of ours).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_store::{Commit, MemoryStore};

    #[test]
    fn a_page_is_declared_by_the_store_alone_outside_a_shared_job() {
        let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
        let declared = Declared {
            length: 1234,
            shingles: vec![1, 2, 3],
            links: vec!["/a".into()],
        };
        let url = "http://a.test/x";
        store
            .commit(Commit {
                length: vec![(url_key(url), declared.clone())],
                ..Commit::default()
            })
            .unwrap();
        let declarations = Declarations::new(Arc::clone(&store), None);
        assert!(!declarations.shared());
        assert_eq!(declarations.get(url).unwrap(), Some(declared.clone()));
        assert_eq!(declarations.length(url).unwrap(), Some(1234));
        assert_eq!(declarations.get("http://a.test/y").unwrap(), None);
        // Nothing to share with.
        declarations.share("http://a.test/y", &declared).unwrap();
        assert_eq!(declarations.get("http://a.test/y").unwrap(), None);
    }

    /// Two workers of a shared job: what one fetched the other finds, its own store first.
    #[test]
    fn a_shared_job_s_pages_are_declared_to_every_worker() {
        use nearcrawl_redis_job::server::LocalRedis;
        use nearcrawl_redis_job::{JobName, Patience, Redis, RedisTarget};
        let server = LocalRedis::start(false).unwrap();
        let worker = || {
            let redis = Redis::connect(
                RedisTarget::parse(&server.url()).unwrap(),
                Patience::default(),
                Arc::default(),
            )
            .unwrap();
            let shared = nearcrawl_redis_job::Declarations::open(redis, JobName::new("d").unwrap());
            let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
            Declarations::new(store, Some(shared))
        };
        let (a, b) = (worker(), worker());
        assert!(a.shared());
        let url = "http://a.test/x";
        let declared = Declared {
            length: 99,
            shingles: vec![9; 8],
            links: vec!["/y".into(), "/z?q=1".into()],
        };
        assert_eq!(b.get(url).unwrap(), None);
        assert!(!b.links_pending(url).unwrap());
        let early = Declared {
            links: Vec::new(),
            ..declared.clone()
        };
        a.share_early(url, &early).unwrap();
        assert_eq!(b.get(url).unwrap(), Some(early));
        assert!(
            b.links_pending(url).unwrap(),
            "its links come with its decision"
        );
        a.share(url, &declared).unwrap();
        assert_eq!(b.get(url).unwrap(), Some(declared.clone()));
        assert!(!b.links_pending(url).unwrap());
        assert_eq!(b.length(url).unwrap(), Some(99));
        assert_eq!(b.get("http://b.test/x").unwrap(), None, "another host's");
        // Bytes that are no declaration name the URL.
        let redis = Redis::connect(
            RedisTarget::parse(&server.url()).unwrap(),
            Patience::default(),
            Arc::default(),
        )
        .unwrap();
        let mut raw = nearcrawl_redis_job::Declarations::open(redis, JobName::new("d").unwrap());
        raw.put("http://a.test/", &url_key(url), b"bad").unwrap();
        let err = b.get(url).unwrap_err().to_string();
        assert!(err.contains(url), "{err}");
    }
}
