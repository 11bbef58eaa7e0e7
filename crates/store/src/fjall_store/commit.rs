//! A commit turned into the tables' writes.

use fjall::Slice;

use super::{
    BLOBS, COUNTERS, DROPPED, EXACT, HUB_YIELDS, HUBS, LENGTHS, LINK_KEYS, PARKED, QUEUE, RECORDS,
    SEEN, SENTENCES, TEXTS, UNDECIDED, UNIQUES,
};
use crate::behind::Write;
use crate::{Commit, encode_queued, unique_value};

/// A commit's writes, in the order a write batch took them (a key written twice keeps the
/// last).
pub(super) fn writes(commit: Commit) -> Vec<Write> {
    // Room for every write first: growing the vector as it fills was a quarter of this
    // function's time on the coordinator (a decision's commit holds tens of writes, three
    // for each link it queues).
    let c = &commit;
    let room = 6
        + c.taken.len()
        + c.records.len()
        + c.seen.len()
        + c.dropped.len()
        + c.hub_yields.len()
        + c.length.len()
        + c.decided.len()
        + c.parked.len()
        + c.unparked.len()
        + 3 * c.enqueued.len()
        + c.counters.len()
        + c.blobs.len()
        + c.sentences.len();
    let mut out = Vec::with_capacity(room);
    let mut put = |table: usize, key: Slice, value: Option<Slice>| {
        out.push(Write { table, key, value });
    };
    let key = |bytes: &[u8]| Slice::from(bytes);
    for taken in commit.taken {
        put(QUEUE, key(&taken.to_bytes()), None);
    }
    for (seq, record) in commit.records {
        put(RECORDS, key(&seq.to_be_bytes()), Some(record));
    }
    if let Some(page) = commit.unique {
        put(
            UNIQUES,
            key(&page.seq.to_be_bytes()),
            Some(key(&unique_value(&page))),
        );
    }
    if let Some((exact, seq)) = commit.exact_key {
        put(EXACT, key(&exact), Some(key(&seq.to_be_bytes())));
    }
    if let Some((seq, text)) = commit.unique_text {
        put(TEXTS, key(&seq.to_be_bytes()), Some(text.into()));
    }
    if let Some((seq, keys)) = commit.unique_links {
        put(
            LINK_KEYS,
            key(&seq.to_be_bytes()),
            Some(crate::encode_keys(&keys).into()),
        );
    }
    for seen in commit.seen {
        put(SEEN, key(&seen), Some(key(&[])));
    }
    for dropped in commit.dropped {
        put(DROPPED, key(&dropped), Some(key(&[])));
    }
    if let Some((hub, seq, yielded)) = commit.hub {
        put(HUBS, key(&hub), Some(key(&seq.to_be_bytes())));
        put(
            HUB_YIELDS,
            key(&seq.to_be_bytes()),
            Some(key(&yielded.encode())),
        );
    }
    for (seq, yielded) in commit.hub_yields {
        put(
            HUB_YIELDS,
            key(&seq.to_be_bytes()),
            Some(key(&yielded.encode())),
        );
    }
    for (url, declared) in commit.length {
        put(LENGTHS, key(&url), Some(declared.encode().into()));
    }
    for decided in commit.decided {
        put(UNDECIDED, key(&decided), None);
    }
    for (on, link, parked) in commit.parked {
        put(
            PARKED,
            key(&[on, link].concat()),
            Some(parked.encode().into()),
        );
    }
    for (on, link) in commit.unparked {
        put(PARKED, key(&[on, link].concat()), None);
    }
    for (queued, url_key, url) in commit.enqueued {
        put(SEEN, key(&url_key), Some(key(&[])));
        put(UNDECIDED, key(&url_key), Some(key(&[])));
        put(
            QUEUE,
            key(&queued.to_bytes()),
            Some(encode_queued(&url).into()),
        );
    }
    for (name, value) in commit.counters {
        put(
            COUNTERS,
            key(name.as_bytes()),
            Some(key(&value.to_be_bytes())),
        );
    }
    for (name, value) in commit.blobs {
        put(BLOBS, key(name.as_bytes()), Some(value.into()));
    }
    for (sentence, posting) in commit.sentences {
        put(
            SENTENCES,
            key(&sentence.to_be_bytes()),
            Some(posting.into()),
        );
    }
    debug_assert!(
        out.len() <= room,
        "{} writes for room for {room}",
        out.len()
    );
    out
}
