//! A crawl job's persistent state, behind the [`CrawlStore`] trait: the URL queues (one per
//! host, ordered by priority), the seen-URL set, host ids, the decision records, the
//! fingerprints, exact keys, texts and sentence-fingerprint postings of unique pages, and a
//! few counters.
//!
//! Every decision the engine takes about a URL is one [`Commit`], applied atomically: the URL
//! leaves its queue, its record is stored, a unique page's fingerprint is stored, and its new
//! outlinks are marked seen and queued, all or nothing. A process killed at any moment thus
//! restarts with every discovered URL either queued or decided; URLs that were being fetched
//! are still queued and are fetched again.
//!
//! [`FjallStore`] keeps the state on disk in a [fjall](https://docs.rs/fjall) database, so
//! memory stays flat however large the frontier grows (the seen set is on disk, 16-byte
//! hashes). [`MemoryStore`] keeps it in memory, for tests and throw-away jobs.
//!
//! ```
//! use nearcrawl_store::{Commit, CrawlStore, MemoryStore, QueuedUrl, QueueKey, url_key};
//!
//! let store = MemoryStore::default();
//! let host = store.host_id("example.com").unwrap();
//! let key = QueueKey { host, priority: 0, order: 1 };
//! let seed = QueuedUrl { url: "http://example.com/".into(), depth: 0, ..QueuedUrl::default() };
//! let mut commit = Commit::default();
//! commit.enqueue(key, url_key(&seed.url), seed);
//! store.commit(commit).unwrap();
//! assert!(store.is_seen(&url_key("http://example.com/")).unwrap());
//! assert_eq!(store.pending(host, None, 10).unwrap().len(), 1);
//! ```

mod behind;
mod fjall_store;
mod key_filter;
mod memory;

use std::borrow::Cow;
use std::fmt;

use nearcrawl_records::{Prediction, Probe};
use serde::{Deserialize, Serialize};

pub use crate::fjall_store::{DEFAULT_CACHE_BYTES, FjallStore};
pub use crate::key_filter::{INITIAL_FILTER_BITS, KeyFilter};
pub use crate::memory::MemoryStore;
/// An immutable byte string shared by counting references (the database's own value type):
/// what a commit hands over is kept by the writes not yet landed and by the caller without a
/// copy.
pub use fjall::Slice as Bytes;

/// A host's number in the store (hosts are numbered in order of discovery).
pub type HostId = u32;

/// Position of a URL in the queues: by host, then priority (lower first), then discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct QueueKey {
    /// The URL's host.
    pub host: HostId,
    /// Lower is fetched sooner (the depth for breadth-first crawls).
    pub priority: u32,
    /// Discovery order, unique within the job.
    pub order: u64,
}

impl QueueKey {
    /// The 16-byte big-endian encoding, which sorts like the key.
    pub fn to_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..4].copy_from_slice(&self.host.to_be_bytes());
        out[4..8].copy_from_slice(&self.priority.to_be_bytes());
        out[8..].copy_from_slice(&self.order.to_be_bytes());
        out
    }

    /// The first and last possible keys of `host`'s queue.
    pub fn host_bounds(host: HostId) -> (QueueKey, QueueKey) {
        (
            QueueKey {
                host,
                priority: 0,
                order: 0,
            },
            QueueKey {
                host,
                priority: u32::MAX,
                order: u64::MAX,
            },
        )
    }

    /// Decodes [`QueueKey::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Option<QueueKey> {
        if bytes.len() != 16 {
            return None;
        }
        let (host, rest) = bytes.split_at(4);
        let (priority, order) = rest.split_at(4);
        Some(QueueKey {
            host: u32::from_be_bytes(host.try_into().ok()?),
            priority: u32::from_be_bytes(priority.try_into().ok()?),
            order: u64::from_be_bytes(order.try_into().ok()?),
        })
    }
}

/// A URL waiting in a queue. Its rarer parts (a probe, a prediction, a recrawl's previous
/// capture) are boxed: a queued URL is moved from the store's queue to a host's buffer, to
/// its fetch and back with its result, and at 472 bytes whole these copies were felt.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueuedUrl {
    /// The canonical URL.
    pub url: String,
    /// Links followed from a seed.
    pub depth: u32,
    /// The record sequence number of the page that linked here (absent for seeds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u64>,
    /// Redirect hops that led here (0 unless this URL is a redirect target).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redirects: u8,
    /// A redirect target: the page whose link the first redirect answered. Its decision
    /// counts as that link's in what the page's links led to (a hub's yield), in place of the
    /// redirect's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_of: Option<u64>,
    /// Failed attempts so far (transient errors are retried with back-off).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u8,
    /// The URL is a sitemap (from robots.txt or a sitemap index), not a page.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sitemap: bool,
    /// Duplicate pages in a row on the path of links that led here (0: found on a unique
    /// page, or a seed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duplicates: u8,
    /// Focused crawls: off-topic pages in a row on the path of links that led here (0:
    /// found on an on-topic page, or a seed).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub off_topic: u8,
    /// Focused crawls: the potential the page that linked here passed on, in thousandths
    /// (absent for seeds and breadth-first crawls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub potential: Option<u16>,
    /// The URL patterns on the path of links that led here, this URL's included, with how
    /// many pages of each: (pattern key, pages), least recent first (the trap rules'
    /// `PatternPath`; empty for seeds and sitemap entries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<(u32, u16)>,
    /// A duplicate's link to where its original's leads: asked with HEAD first, and fetched
    /// only if the answer says it differs from its counterpart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Box<Probe>>,
    /// The page a URL rule says this one copies (the link policy, `dedup.predict`), checked
    /// once the page is decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted: Option<Box<Prediction>>,
    /// What decided this link's fate, when neither its being new nor a URL rule did (the
    /// link policy's `By` by name: `hub`, `mirror`, `original`, `sitemap`, ...), for its
    /// record's `fate`. Absent in a queue written before it was kept: such a URL's record
    /// says `new`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// A recrawl: this URL's capture in the previous job, asked again with its validators
    /// and compared with what comes back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<Box<Previous>>,
}

/// A page's capture in an earlier job, as a recrawl asks for it again.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Previous {
    /// Its `ETag` (sent as `If-None-Match`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// Its `Last-Modified` (sent as `If-Modified-Since`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// Its payload's digest (`sha1:BASE32`, as in the WARC files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_digest: Option<String>,
    /// Its simhash, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simhash: Option<String>,
    /// When it was fetched (RFC 3339): the date a revisit record refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<String>,
    /// Whether it had changed when it was captured (against the job before): a recrawl
    /// asks such pages first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub changed: bool,
    /// Its record's number in the previous job, whose store keeps its text if it was kept as
    /// unique (what a changed page's similarity is measured against).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The `WARC-Record-ID` of the record holding its payload (a revisit refers to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc_record_id: Option<String>,
}

/// What a fetched page's response declared, kept for the probes of its counterparts on other
/// sites: its `Content-Length`, the shingles of its text (a Bloom filter,
/// `nearcrawl_dedup::shingle_filter`) that a probe's sample is compared with, and the URLs
/// on its own site it was the first to name (path and query): a counterpart found unchanged
/// is fetched for its own links when it may be alone in naming their counterparts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Declared {
    /// The `Content-Length`; 0 for a redirect (whose target is then its one link).
    pub length: u64,
    /// The filter of the page's shingles (empty: none kept).
    pub shingles: Vec<u8>,
    /// The URLs on its own site its decision was the first to name (queued, probed or
    /// parked): path and query, each once.
    pub links: Vec<String>,
}

impl Declared {
    /// What a redirect declares: a length of 0, which no page's probe can match
    /// ([`Probe::unchanged`]), and its target, when on its site, as its one link.
    pub fn redirect(target: Vec<String>) -> Declared {
        Declared {
            length: 0,
            shingles: Vec::new(),
            links: target,
        }
    }

    /// Whether this is a redirect's ([`Declared::redirect`]), or an empty page's: neither is
    /// a page to compare with or to count as led to.
    pub fn is_redirect(&self) -> bool {
        self.length == 0
    }

    /// 8 bytes of length and 4 of the filter's length (big-endian), the filter, then the
    /// links, each ended by a newline (a URL holds none).
    pub fn encode(&self) -> Vec<u8> {
        let links: usize = self.links.iter().map(|l| l.len() + 1).sum();
        let mut bytes = Vec::with_capacity(12 + self.shingles.len() + links);
        bytes.extend_from_slice(&self.length.to_be_bytes());
        bytes.extend_from_slice(&(self.shingles.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&self.shingles);
        for link in &self.links {
            bytes.extend_from_slice(link.as_bytes());
            bytes.push(b'\n');
        }
        bytes
    }

    /// The inverse of [`Declared::encode`] (8 bytes alone: a length kept by an older version);
    /// `None` for anything else.
    pub fn decode(bytes: &[u8]) -> Option<Declared> {
        let (length, rest) = bytes.split_first_chunk::<8>()?;
        let length = u64::from_be_bytes(*length);
        if rest.is_empty() {
            return Some(Declared {
                length,
                ..Declared::default()
            });
        }
        let (filter, rest) = rest.split_first_chunk::<4>()?;
        let filter = u32::from_be_bytes(*filter) as usize;
        let shingles = rest.get(..filter)?.to_vec();
        let links = std::str::from_utf8(rest.get(filter..)?).ok()?;
        if !(links.is_empty() || links.ends_with('\n')) {
            return None;
        }
        Some(Declared {
            length,
            shingles,
            links: links.lines().map(str::to_owned).collect(),
        })
    }
}

/// What a hub led to (the link policy's credit of a hub, kept in the store).
pub use nearcrawl_link_policy::HubYield;

impl QueuedUrl {
    /// The potential the linking page passed on, 0..1 (stored in thousandths).
    pub fn potential(&self) -> Option<f32> {
        self.potential.map(|p| f32::from(p) / 1000.0)
    }

    /// The stored form of a potential in 0..1.
    pub fn potential_thousandths(potential: f32) -> u16 {
        (potential.clamp(0.0, 1.0) * 1000.0).round() as u16
    }
}

/// A duplicate's link parked until the page it corresponds to on the original's site (its
/// counterpart) is decided: followed then if that page led to new pages (a hub), dropped if
/// not. Without it, the link's fate would hang on which release a crawl happens to fetch
/// first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParkedLink {
    /// The link, as it is queued if followed.
    pub entry: QueuedUrl,
    /// Its priority in its host's queue.
    pub priority: u32,
    /// Queued once the page it waits for is decided, whatever that page is: a link of a site
    /// that copies another, fetched after its counterpart so that it is judged against it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always: bool,
}

impl ParkedLink {
    /// The stored form.
    pub fn encode(&self) -> Vec<u8> {
        // Serialising a struct of strings and integers cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads the stored form back.
    pub fn decode(bytes: &[u8]) -> Result<ParkedLink, StoreError> {
        serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
            table: "parked",
            reason: e.to_string(),
        })
    }
}

fn is_zero<N: Default + PartialEq>(n: &N) -> bool {
    *n == N::default()
}

/// The seen-set key of a canonical URL: the link policy's (128-bit xxh3, collision odds
/// negligible at any crawl size), so that the links it parks and the places they wait on are
/// the store's keys.
pub use nearcrawl_link_policy::{Key as UrlKey, key as url_key};

/// A unique page's entry in the fingerprint table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniquePage {
    /// The page's record sequence number.
    pub seq: u64,
    /// Its 64-bit simhash.
    pub simhash: u64,
}

/// One decision, applied atomically by [`CrawlStore::commit`].
#[derive(Debug, Clone, Default)]
pub struct Commit {
    /// The queue entry that was decided (removed).
    pub taken: Vec<QueueKey>,
    /// Decision records, by sequence number (the record's JSON line, without newline).
    pub records: Vec<(u64, Bytes)>,
    /// A unique page's fingerprint.
    pub unique: Option<UniquePage>,
    /// A unique page's exact-duplicate key and its sequence number.
    pub exact_key: Option<([u8; 16], u64)>,
    /// A unique page's fingerprinted text, kept so later candidates can be verified against it.
    pub unique_text: Option<(u64, String)>,
    /// Sentence-fingerprint postings to write (key, posting; see
    /// `nearcrawl_verify::SentencePosting`): the documents that share a long-sentence
    /// fingerprint, read back by [`CrawlStore::sentence_posting`]. A key given twice keeps the
    /// last posting.
    pub sentences: Vec<(u64, Vec<u8>)>,
    /// A unique page's link keys (where its links lead, see `nearcrawl_dedup::Follow`), so a
    /// later duplicate's links that lead somewhere new can be told apart.
    pub unique_links: Option<(u64, Vec<u64>)>,
    /// URLs a duplicate linked to that were neither seen nor queued: the outlinks skipping
    /// dropped. Counted at the end against what was reached another way.
    pub dropped: Vec<UrlKey>,
    /// The page decided, when it led to new pages (see [`CrawlStore::is_hub`]): its URL key,
    /// its sequence number and what it led to so far (its own size and the links it queued).
    pub hub: Option<(UrlKey, u64, HubYield)>,
    /// What hubs led to, updated by this decision's pages (see [`CrawlStore::hub_yield`]):
    /// (the hub's sequence number, its yield now).
    pub hub_yields: Vec<(u64, HubYield)>,
    /// URLs queued before and decided by this commit ([`CrawlStore::is_undecided`] no more).
    pub decided: Vec<UrlKey>,
    /// Links parked until a URL is decided: (that URL's key, the link's key, the link).
    pub parked: Vec<(UrlKey, UrlKey, ParkedLink)>,
    /// Parked links released (followed or dropped): (the URL's key, the link's key).
    pub unparked: Vec<(UrlKey, UrlKey)>,
    /// The page fetched, the `Content-Length` its response declared and where its text is
    /// kept (see [`CrawlStore::declared`]): under its URL's key, and under the key of the URL
    /// without a session parameter it was fetched under.
    pub length: Vec<(UrlKey, Declared)>,
    /// URLs to mark seen without queueing (decided on discovery, e.g. out of scope).
    pub seen: Vec<UrlKey>,
    /// URLs to mark seen and queue (and undecided, until a commit lists them in `decided`).
    pub enqueued: Vec<(QueueKey, UrlKey, QueuedUrl)>,
    /// Job counters to store (name, value): the job's own (`next_seq`, ...) and per-host
    /// budgets of the trap rules. A name given twice keeps the last value.
    pub counters: Vec<(Cow<'static, str>, u64)>,
    /// Named state of the job's own, stored whole (a focused crawl's document frequencies).
    pub blobs: Vec<(Cow<'static, str>, Vec<u8>)>,
}

impl Commit {
    /// Marks `url` seen and queues it at `key`.
    pub fn enqueue(&mut self, key: QueueKey, url_key: UrlKey, url: QueuedUrl) {
        self.enqueued.push((key, url_key, url));
    }
}

/// What the store could not do.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The database failed (I/O, corruption, lock held by another process).
    Database {
        /// Where the store lives.
        path: String,
        /// What failed.
        reason: String,
    },
    /// The store's files are damaged (a checksum mismatch, a cut or garbled file): the crawl
    /// cannot go on from them.
    Damaged {
        /// The state directory.
        path: String,
        /// The table being read, and its directory, when known.
        table: Option<String>,
        /// What the database said.
        reason: String,
    },
    /// A stored value does not decode.
    Corrupt {
        /// Which table.
        table: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Database { path, reason } => write!(f, "crawl store {path}: {reason}"),
            StoreError::Damaged {
                path,
                table,
                reason,
            } => {
                write!(f, "crawl store {path} is damaged: ")?;
                match table {
                    Some(table) => write!(f, "a file of table {table} does not read back")?,
                    None => write!(f, "a file under {path} does not read back")?,
                }
                write!(
                    f,
                    " ({reason}). Restore {path} from a copy, or run again with --restart to \
                     start over (the old outputs are moved into a previous-* directory, not \
                     deleted)"
                )
            }
            StoreError::Corrupt { table, reason } => {
                write!(f, "crawl store table {table} is corrupt: {reason}")
            }
        }
    }
}

impl std::error::Error for StoreError {}

/// A crawl job's persistent state. Implementations apply each [`Commit`] atomically.
pub trait CrawlStore: Send + Sync {
    /// The id of a host (`host:port`), assigned on first use.
    fn host_id(&self, authority: &str) -> Result<HostId, StoreError>;
    /// Every host with its id.
    fn hosts(&self) -> Result<Vec<(HostId, String)>, StoreError>;
    /// Up to `limit` queued URLs of `host` in queue order, strictly after `after` if given.
    fn pending(
        &self,
        host: HostId,
        after: Option<QueueKey>,
        limit: usize,
    ) -> Result<Vec<(QueueKey, QueuedUrl)>, StoreError>;
    /// Whether a URL has been seen (queued or decided).
    fn is_seen(&self, key: &UrlKey) -> Result<bool, StoreError>;
    /// Whether the page at this URL led to new pages when it was crawled (its decision
    /// queued at least the crawl's `hub_min_links` links no page had led to before):
    /// a duplicate's link to its counterpart on another site is followed, as that page may
    /// lead to new pages there too.
    fn is_hub(&self, key: &UrlKey) -> Result<bool, StoreError>;
    /// What the hub at this URL led to, as far as its pages are decided, with its record
    /// sequence number (`None`: not a hub, or one a version without yields marked).
    fn hub_yield(&self, key: &UrlKey) -> Result<Option<(u64, HubYield)>, StoreError>;
    /// [`CrawlStore::hub_yield`] of the hub with this record sequence number: what a page
    /// it queued adds to when it is decided.
    fn hub_yield_at(&self, seq: u64) -> Result<Option<HubYield>, StoreError>;
    /// Whether the URL was queued and is not decided yet (queued, in flight, or waiting to be
    /// retried): what a link parked on it waits for.
    fn is_undecided(&self, key: &UrlKey) -> Result<bool, StoreError>;
    /// The links parked until the URL with this key is decided ([`Commit::parked`]), by
    /// link key.
    fn parked_on(&self, key: &UrlKey) -> Result<Vec<(UrlKey, ParkedLink)>, StoreError>;
    /// The link with key `link` parked on the URL with key `key`, if it is.
    fn parked_link(&self, key: &UrlKey, link: &UrlKey) -> Result<Option<ParkedLink>, StoreError>;
    /// The keys of the URLs that links are parked on.
    fn parked_targets(&self) -> Result<Vec<UrlKey>, StoreError>;
    /// What the response for the URL with this key declared, when it was fetched with a
    /// `Content-Length` ([`Commit::length`]): what a probe of another URL is compared with.
    fn declared(&self, key: &UrlKey) -> Result<Option<Declared>, StoreError>;
    /// The `Content-Length` of [`CrawlStore::declared`].
    fn declared_length(&self, key: &UrlKey) -> Result<Option<u64>, StoreError> {
        Ok(self.declared(key)?.map(|declared| declared.length))
    }
    /// The sequence number of the unique page with this exact key.
    fn exact_original(&self, key: &[u8; 16]) -> Result<Option<u64>, StoreError>;
    /// Applies one decision atomically.
    fn commit(&self, commit: Commit) -> Result<(), StoreError>;
    /// Commits behind the caller where the store can ([`FjallStore`]: a thread of its own
    /// writes it): every read sees the commit at once, but it is durable (a killed process
    /// keeps it) only once [`CrawlStore::landed`] has reached the ticket returned. By
    /// default, [`CrawlStore::commit`], landed at once.
    fn commit_behind(&self, commit: Commit) -> Result<u64, StoreError> {
        self.commit(commit).map(|()| 0)
    }
    /// The last ticket of [`CrawlStore::commit_behind`] landed: every commit up to it is in.
    fn landed(&self) -> Result<u64, StoreError> {
        Ok(u64::MAX)
    }
    /// Waits until the commit of `ticket`, and every one before it, has landed.
    fn wait_landed(&self, ticket: u64) -> Result<(), StoreError> {
        let _ = ticket;
        Ok(())
    }
    /// The record with sequence number `seq`.
    fn record(&self, seq: u64) -> Result<Option<Vec<u8>>, StoreError>;
    /// Records with sequence numbers `>= from`, in order, passed to `each`.
    fn for_each_record(
        &self,
        from: u64,
        each: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), StoreError>;
    /// The fingerprinted text of unique page `seq`.
    fn unique_text(&self, seq: u64) -> Result<Option<String>, StoreError>;
    /// The link keys of unique page `seq` (see [`Commit::unique_links`]).
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, StoreError>;
    /// The sentence-fingerprint posting stored under `key` ([`Commit::sentences`]).
    fn sentence_posting(&self, key: u64) -> Result<Option<Vec<u8>>, StoreError>;
    /// Every key with a sentence-fingerprint posting, in no particular order.
    fn for_each_sentence_key(&self, each: &mut dyn FnMut(u64)) -> Result<(), StoreError>;
    /// How many dropped outlinks (see [`Commit::dropped`]) were never seen otherwise.
    fn dropped_unseen(&self) -> Result<u64, StoreError>;
    /// Every unique page's fingerprint, in sequence order.
    fn unique_pages(&self) -> Result<Vec<UniquePage>, StoreError>;
    /// The simhash of unique page `seq`.
    fn unique_simhash(&self, seq: u64) -> Result<Option<u64>, StoreError>;
    /// A stored counter.
    fn counter(&self, name: &str) -> Result<Option<u64>, StoreError>;
    /// A stored blob ([`Commit::blobs`]).
    fn blob(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Makes everything committed so far durable (fsync).
    fn sync(&self) -> Result<(), StoreError>;
}

pub(crate) fn decode_queued(bytes: &[u8]) -> Result<QueuedUrl, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        table: "queue",
        reason: e.to_string(),
    })
}

pub(crate) fn encode_queued(url: &QueuedUrl) -> Vec<u8> {
    // Serialising a struct of strings and integers cannot fail.
    serde_json::to_vec(url).unwrap_or_default()
}

/// Link keys as stored ([`Commit::unique_links`]): each key big-endian, one after another.
pub fn encode_keys(keys: &[u64]) -> Vec<u8> {
    keys.iter().flat_map(|a| a.to_be_bytes()).collect()
}

/// Reads [`encode_keys`]' bytes back (a cut last key is left out).
pub fn decode_keys(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap_or_default()))
        .collect()
}

pub(crate) fn unique_value(page: &UniquePage) -> [u8; 8] {
    page.simhash.to_be_bytes()
}

#[cfg(test)]
mod tests;
