//! What fetched pages declared ([`Declared`]: their length, their text's shingles, the URLs
//! of their site they named first), which the probes of their counterparts and the link
//! policy's predictions are compared with: this process's store, and in a job shared through
//! Redis the job's declarations too, so that a worker compares with what any worker fetched.

use std::sync::{Arc, Mutex};

use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_link_policy::Held;
use nearcrawl_store::{Commit, CrawlStore, Declared, StoreError, url_key};
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

    /// A shared job's declarations, and `url` parsed (not parsed otherwise: the coordinator
    /// asks for every page).
    fn shared_with(&self, url: &str) -> Option<(&Mutex<nearcrawl_redis_job::Declarations>, Url)> {
        let shared = self.shared.as_ref()?;
        Some((shared, Url::parse(url).ok()?))
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
        // Parsed only for a shared job.
        let Some((shared, parsed)) = self.shared_with(url) else {
            return Ok(None);
        };
        let origin = crate::frontier::origin_of(&parsed);
        let Some(bytes) = lock(shared).get(&origin, &key).map_err(shared_error)? else {
            return Ok(None);
        };
        Declared::decode(&bytes).map(Some).ok_or_else(|| {
            EngineError::Store(StoreError::Corrupt {
                table: "the job's declarations",
                reason: format!("{url}: {} bytes that are no declaration", bytes.len()),
            })
        })
    }

    /// The length the page at `url` declared ([`Declarations::get`]).
    pub(super) fn length(&self, url: &str) -> Result<Option<u64>, EngineError> {
        Ok(self.get(url)?.map(|d| d.length))
    }

    /// Marks the page at `url` (a canonical URL) as held under another URL, a session
    /// parameter's: with `commit` in this process's store, and at once in a shared job's.
    pub(super) fn hold(&self, url: &str, commit: &mut Commit) -> Result<(), EngineError> {
        let marker = held_marker(url);
        self.share(&marker, &Declared::default())?;
        commit.length.push((url_key(&marker), Declared::default()));
        Ok(())
    }

    /// Whether the page at `url` is held under another URL ([`Declarations::hold`]), by
    /// this process or, in a shared job, by any worker.
    pub(super) fn held(&self, url: &str) -> Result<bool, EngineError> {
        Ok(self.get(&held_marker(url))?.is_some())
    }

    /// What the URL `there` led to, in bytes: the page's length, or the length of the page
    /// its redirect led to (one hop); `undecided` for a URL not decided yet; `None` when it
    /// led to no page (an error, a refusal, a redirect elsewhere). In a shared job, a URL no
    /// worker declared counts as undecided: this worker cannot tell another's undecided URL
    /// from one that led nowhere, and taking it for undecided fetches more, never less.
    pub(super) fn led_to(
        &self,
        there: &CanonicalUrl,
        undecided: u64,
    ) -> Result<Option<u64>, EngineError> {
        let key = url_key(there.as_str());
        if self.store.is_undecided(&key)? {
            return Ok(Some(undecided));
        }
        let Some(declared) = self.get(there.as_str())? else {
            // In a shared job, a page no worker declared may be another worker's, not
            // decided yet.
            return Ok(self.shared().then_some(undecided));
        };
        if !declared.is_redirect() {
            return Ok(Some(declared.length));
        }
        // A redirect: its target, when on its site.
        let Some(target) = declared
            .links
            .first()
            .and_then(|link| there.as_url().join(link).ok())
            .and_then(|url| CanonicalUrl::from_url(url).ok())
        else {
            return Ok(None);
        };
        let key = url_key(target.as_str());
        if self.store.is_undecided(&key)? {
            return Ok(Some(undecided));
        }
        Ok(match self.length(target.as_str())? {
            Some(length) => (length > 0).then_some(length),
            None => self.shared().then_some(undecided),
        })
    }

    /// What the crawl holds of the page at `counterpart`, when it was fetched whole and its
    /// length is known (what a probe of a link predicted to copy it is compared with): that
    /// length, and what a sample compared with its text would cost when its text's shingles
    /// were kept. (A store or a shared job's Redis that cannot answer: nothing held, so the
    /// link is fetched.)
    pub(super) fn counterpart(&self, counterpart: &Url) -> Option<Held> {
        let c = CanonicalUrl::from_url(counterpart.clone()).ok()?;
        let declared = self.get(c.as_str()).ok()??;
        (!declared.is_redirect()).then(|| Held {
            length: declared.length,
            sample_cost: (!declared.shingles.is_empty())
                .then(|| nearcrawl_dedup::sample_cost(declared.length)),
            head_cost: nearcrawl_dedup::HEAD_COST,
        })
    }

    /// In a shared job, makes what the page at `url` declared known to every worker (this
    /// process's store keeps it with the page's decision).
    pub(super) fn share(&self, url: &str, declared: &Declared) -> Result<(), EngineError> {
        let Some((shared, parsed)) = self.shared_with(url) else {
            return Ok(());
        };
        let origin = crate::frontier::origin_of(&parsed);
        lock(shared)
            .put(&origin, &url_key(url), &declared.encode())
            .map_err(shared_error)
    }
}

/// The key that marks the page at `url` as held under another URL
/// ([`Declarations::hold`]): the URL with a fragment, which no canonical URL has, so that it
/// is never a page's own declaration.
fn held_marker(url: &str) -> String {
    format!("{url}#nearcrawl-held")
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
        // Held under another URL: a mark of its own, not the page's declaration.
        let mut commit = Commit::default();
        declarations.hold("http://a.test/z", &mut commit).unwrap();
        assert!(
            !declarations.held("http://a.test/z").unwrap(),
            "with the commit"
        );
        store.commit(commit).unwrap();
        assert!(declarations.held("http://a.test/z").unwrap());
        assert_eq!(declarations.get("http://a.test/z").unwrap(), None);
        assert!(!declarations.held(url).unwrap(), "declared is not held");
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
        a.share(url, &declared).unwrap();
        assert_eq!(b.get(url).unwrap(), Some(declared.clone()));
        assert_eq!(b.length(url).unwrap(), Some(99));
        assert_eq!(b.get("http://b.test/x").unwrap(), None, "another host's");
        // Held by one worker: at once for the other.
        a.hold("http://a.test/held", &mut Commit::default())
            .unwrap();
        assert!(b.held("http://a.test/held").unwrap());
        assert!(!b.held(url).unwrap());
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
