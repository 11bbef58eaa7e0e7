//! The near-duplicate index shared by a job's workers, in Redis.
//!
//! - **Fingerprints**, by the pigeonhole layout of the seed blog: a 64-bit simhash is cut into
//!   `k + 1` blocks (4 blocks of 16 bits for the default `k = 3`), and a page is listed under
//!   each of its blocks' values (`ix:b:BLOCK:VALUE`, packed 16-byte entries: fingerprint,
//!   id). Two fingerprints at most `k` bits apart agree on at least one whole block, so the
//!   lists of a page's `k + 1` blocks hold every kept page within `k` bits of it.
//! - **Sentence fingerprints**: one posting per fingerprint (`ix:s:HEX`), opaque here (the
//!   dedup stage's `SentencePosting` bytes).
//! - **Exact keys** (`ix:x:HEX` → id) and each kept **page** (`ix:p:ID`: fingerprint, URL,
//!   verification text, link keys, worker): what verification needs.
//!
//! **Check-and-insert.** A worker reads a page's keys ([`RedisIndex::query`], one `MGET`,
//! which also reads the index's version), judges the page, and if it is unique asks
//! [`RedisIndex::admit`] to insert it *as judged against that version*. One Lua script
//! checks that none of the page's keys was written since, and writes them all, or nothing.
//! If one was, another worker admitted a page that may be this one's original in the
//! meantime: the answer is [`Admitted::Conflict`], and the worker judges the page again. Of
//! two near-duplicates judged at the same moment exactly one is therefore the original.
//!
//! All index keys carry the job's hash tag: in a Redis Cluster the index lives on the node
//! of the job's slot, while the frontier spreads host by host.

use redis::{Script, Value};

use crate::connection::Redis;
use crate::error::{JobError, bad_reply};
use crate::keys::{JobName, Keys};

const PRELUDE: &str = include_str!("lua/prelude.lua");

/// The largest `k` the layout takes: 64 blocks of one bit.
pub const MAX_DISTANCE: u32 = 63;

/// Page ids a worker reserves at a time ([`RedisIndex::reserve`]).
pub const ID_BLOCK: u64 = 64;

/// A page as the index is asked about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageKeys {
    /// Its simhash.
    pub fingerprint: u64,
    /// Its exact-duplicate key, if it has one.
    pub exact: Option<Vec<u8>>,
    /// Its sentence fingerprints, sorted and distinct.
    pub sentences: Vec<u128>,
}

/// What the index held for a page when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The index's version then: admit the page as judged against it.
    pub version: u64,
    /// The kept page with the same exact key.
    pub exact: Option<u64>,
    /// Kept pages within `k` bits: (id, fingerprint, distance), nearest first, then by id.
    pub near: Vec<(u64, u64, u32)>,
    /// Per sentence fingerprint of the probe, in its order: the stored posting, if any.
    pub postings: Vec<Option<Vec<u8>>>,
}

/// A unique page to admit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission<'a> {
    /// Its id ([`RedisIndex::reserve`]).
    pub id: u64,
    /// Its simhash.
    pub fingerprint: u64,
    /// Its exact key.
    pub exact: Option<&'a [u8]>,
    /// Its URL.
    pub url: &'a str,
    /// Its verification text.
    pub text: &'a str,
    /// Its link keys, as the caller packs them.
    pub links: &'a [u8],
    /// The new posting of each sentence fingerprint of the probe (its old posting with this
    /// page added), in the probe's order.
    pub postings: &'a [Vec<u8>],
}

/// The answer to [`RedisIndex::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// Kept; the index's version is now this.
    Kept(u64),
    /// A page written since the snapshot shares one of this page's keys: judge it again.
    Conflict,
}

/// A kept page as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPage {
    /// Its simhash.
    pub fingerprint: u64,
    /// Its URL.
    pub url: String,
    /// Its verification text.
    pub text: String,
    /// Its link keys, packed as given.
    pub links: Vec<u8>,
    /// The worker that kept it.
    pub worker: String,
}

/// The job's near-duplicate index, as one worker reaches it.
pub struct RedisIndex {
    redis: Redis,
    keys: Keys,
    max_distance: u32,
    /// `(shift, width)` of each block, most significant first.
    blocks: Vec<(u32, u32)>,
    admit: Script,
    worker: String,
    /// Ids reserved and not used yet.
    ids: std::ops::Range<u64>,
}

impl std::fmt::Debug for RedisIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisIndex")
            .field("job", self.keys.job_name())
            .field("max_distance", &self.max_distance)
            .finish()
    }
}

/// The `k + 1` blocks of the pigeonhole layout: `(shift, width)`, widths differing by one
/// at most, most significant first.
pub fn blocks(max_distance: u32) -> Vec<(u32, u32)> {
    let count = max_distance.min(MAX_DISTANCE) + 1;
    let mut out = Vec::with_capacity(count as usize);
    let mut end = 64;
    for i in 0..count {
        let width = 64 / count + u32::from(i < 64 % count);
        end -= width;
        out.push((end, width));
    }
    out
}

fn block_value(fingerprint: u64, (shift, width): (u32, u32)) -> u64 {
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    (fingerprint >> shift) & mask
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl RedisIndex {
    /// The index of `job`, for pages within `max_distance` bits (the job's `k`; every worker
    /// of a job must use the same).
    pub fn open(
        redis: Redis,
        job: JobName,
        worker: &str,
        max_distance: u32,
    ) -> Result<RedisIndex, JobError> {
        if max_distance > MAX_DISTANCE {
            return Err(JobError::Settings {
                job: job.to_string(),
                detail: format!("max_distance {max_distance} is over {MAX_DISTANCE}"),
            });
        }
        Ok(RedisIndex {
            redis,
            keys: Keys::new(job),
            max_distance,
            blocks: blocks(max_distance),
            admit: Script::new(&format!("{PRELUDE}\n{}", include_str!("lua/admit.lua"))),
            worker: worker.to_string(),
            ids: 0..0,
        })
    }

    /// The same index on a connection of its own (to read it from another thread).
    pub fn reopen(&self) -> Result<RedisIndex, JobError> {
        Ok(RedisIndex {
            redis: self.redis.reopen()?,
            keys: self.keys.clone(),
            max_distance: self.max_distance,
            blocks: self.blocks.clone(),
            admit: self.admit.clone(),
            worker: self.worker.clone(),
            ids: 0..0,
        })
    }

    fn block_keys(&self, fingerprint: u64) -> Vec<String> {
        self.blocks
            .iter()
            .enumerate()
            .map(|(i, &block)| {
                self.keys
                    .job(&format!("ix:b:{i}:{:x}", block_value(fingerprint, block)))
            })
            .collect()
    }

    fn sentence_key(&self, sentence: u128) -> String {
        self.keys.job(&format!("ix:s:{sentence:032x}"))
    }

    fn exact_key(&self, exact: Option<&[u8]>) -> String {
        // A page without an exact key still passes a key (scripts take a fixed layout):
        // one no page is ever stored under.
        self.keys
            .job(&format!("ix:x:{}", exact.map_or("-".into(), hex)))
    }

    fn page_key(&self, id: u64) -> String {
        self.keys.job(&format!("ix:p:{id}"))
    }

    /// A new page id, unique in the job. Ids are reserved [`ID_BLOCK`] at a time, so most
    /// calls ask nothing of the server; the ids a worker reserved and did not use are
    /// never used.
    pub fn reserve(&mut self) -> Result<u64, JobError> {
        if let Some(id) = self.ids.next() {
            return Ok(id);
        }
        let key = self.keys.job("ix:ids");
        let last: u64 = self.redis.run("reserve", |con| {
            redis::cmd("INCRBY").arg(&key).arg(ID_BLOCK).query(con)
        })?;
        let first = last.saturating_sub(ID_BLOCK - 1).max(1);
        self.ids = first + 1..last + 1;
        Ok(first)
    }

    /// Reads what the index holds for `probe`, at one version.
    pub fn query(&mut self, probe: &PageKeys) -> Result<Snapshot, JobError> {
        let what = "index query";
        let mut keys = vec![
            self.keys.job("ix:seq"),
            self.exact_key(probe.exact.as_deref()),
        ];
        keys.extend(self.block_keys(probe.fingerprint));
        keys.extend(probe.sentences.iter().map(|&s| self.sentence_key(s)));
        let values: Vec<Option<Vec<u8>>> = self
            .redis
            .run(what, |con| redis::cmd("MGET").arg(&keys).query(con))?;
        if values.len() != keys.len() {
            return Err(bad_reply(what, format!("{} values", values.len())));
        }
        let number = |value: &Option<Vec<u8>>| -> Result<Option<u64>, JobError> {
            value
                .as_deref()
                .map(|v| {
                    std::str::from_utf8(v)
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .ok_or_else(|| bad_reply(what, "a counter that is not a number"))
                })
                .transpose()
        };
        let version = number(&values[0])?.unwrap_or(0);
        let exact = if probe.exact.is_some() {
            number(&values[1])?
        } else {
            None
        };
        let nb = self.blocks.len();
        let mut near: Vec<(u64, u64, u32)> = Vec::new();
        for value in values[2..2 + nb].iter().flatten() {
            let entries = value
                .get(8..)
                .filter(|e| e.len() % 16 == 0)
                .ok_or_else(|| bad_reply(what, "a fingerprint list of a broken length"))?;
            for entry in entries.chunks_exact(16) {
                let fingerprint = u64::from_be_bytes(entry[..8].try_into().expect("8 bytes"));
                let id = u64::from_be_bytes(entry[8..].try_into().expect("8 bytes"));
                let distance = (fingerprint ^ probe.fingerprint).count_ones();
                if distance <= self.max_distance {
                    near.push((id, fingerprint, distance));
                }
            }
        }
        near.sort_by_key(|&(id, _, distance)| (distance, id));
        near.dedup_by_key(|e| e.0);
        let mut postings = Vec::with_capacity(probe.sentences.len());
        for value in &values[2 + nb..] {
            postings.push(match value {
                Some(v) if v.len() >= 8 => Some(v[8..].to_vec()),
                Some(_) => return Err(bad_reply(what, "a posting shorter than its version")),
                None => None,
            });
        }
        Ok(Snapshot {
            version,
            exact,
            near,
            postings,
        })
    }

    /// Inserts unique page `page` (asked about as `probe`), judged against the index at
    /// `version`, unless a page sharing one of its keys was admitted since.
    pub fn admit(
        &mut self,
        probe: &PageKeys,
        version: u64,
        page: &Admission<'_>,
    ) -> Result<Admitted, JobError> {
        let what = "index admit";
        if page.postings.len() != probe.sentences.len() || page.fingerprint != probe.fingerprint {
            return Err(bad_reply(
                what,
                "the admission does not match its probe (postings or fingerprint)",
            ));
        }
        let mut keys = vec![
            self.keys.job("ix:seq"),
            self.page_key(page.id),
            self.exact_key(page.exact),
        ];
        let block_keys = self.block_keys(page.fingerprint);
        let nb = block_keys.len();
        keys.extend(block_keys);
        keys.extend(probe.sentences.iter().map(|&s| self.sentence_key(s)));
        let script = &self.admit;
        let worker = &self.worker;
        let reply: Value = self.redis.run(what, |con| {
            let mut call = script.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            call.arg(version)
                .arg(nb)
                .arg(page.id)
                .arg(&page.fingerprint.to_be_bytes()[..])
                .arg(if page.exact.is_some() { "1" } else { "0" })
                .arg(page.url)
                .arg(page.text)
                .arg(page.links)
                .arg(worker.as_str());
            for posting in page.postings {
                call.arg(posting.as_slice());
            }
            call.invoke(con)
        })?;
        let Value::Array(items) = reply else {
            return Err(bad_reply(what, format!("{reply:?}")));
        };
        match items.as_slice() {
            [Value::BulkString(tag), Value::Int(seq)] if tag == b"admitted" => {
                Ok(Admitted::Kept(*seq as u64))
            }
            [Value::BulkString(tag), _] if tag == b"conflict" => Ok(Admitted::Conflict),
            other => Err(bad_reply(what, format!("{other:?}"))),
        }
    }

    /// Kept page `id`, if it was admitted.
    pub fn page(&mut self, id: u64) -> Result<Option<StoredPage>, JobError> {
        let what = "index page";
        let key = self.page_key(id);
        let fields: Vec<Option<Vec<u8>>> = self.redis.run(what, |con| {
            redis::cmd("HMGET")
                .arg(&key)
                .arg(&["f", "u", "t", "l", "w"])
                .query(con)
        })?;
        let [Some(f), Some(u), Some(t), Some(l), Some(w)] =
            <[Option<Vec<u8>>; 5]>::try_from(fields)
                .map_err(|v| bad_reply(what, format!("{} fields", v.len())))?
        else {
            return Ok(None);
        };
        let utf8 = |b: Vec<u8>| {
            String::from_utf8(b).map_err(|_| bad_reply(what, format!("page {id}: not UTF-8")))
        };
        Ok(Some(StoredPage {
            fingerprint: u64::from_be_bytes(
                f.as_slice()
                    .try_into()
                    .map_err(|_| bad_reply(what, format!("page {id}: fingerprint length")))?,
            ),
            url: utf8(u)?,
            text: utf8(t)?,
            links: l,
            worker: utf8(w)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn blocks_cover_the_64_bits_once() {
        for k in 0..=MAX_DISTANCE {
            let blocks = blocks(k);
            assert_eq!(blocks.len() as u32, k + 1);
            assert_eq!(blocks.iter().map(|b| b.1).sum::<u32>(), 64);
            let mut covered = 0u64;
            for &block in &blocks {
                let ones = block_value(u64::MAX, block) << block.0;
                assert_eq!(covered & ones, 0);
                covered |= ones;
            }
            assert_eq!(covered, u64::MAX);
        }
        assert_eq!(blocks(3), vec![(48, 16), (32, 16), (16, 16), (0, 16)]);
    }

    proptest! {
        /// The pigeonhole: fingerprints at most k bits apart share a whole block.
        #[test]
        fn near_fingerprints_share_a_block(a: u64, flips: Vec<u8>, k in 0u32..8) {
            let mut b = a;
            for bit in flips.iter().take(k as usize) {
                b ^= 1 << (bit % 64);
            }
            prop_assume!((a ^ b).count_ones() <= k);
            let shared = blocks(k).into_iter().any(|blk| block_value(a, blk) == block_value(b, blk));
            prop_assert!(shared);
        }
    }
}
