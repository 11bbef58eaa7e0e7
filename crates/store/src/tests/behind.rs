//! Commits written behind the committer ([`CrawlStore::commit_behind`]): every read answers
//! as if each commit had landed when it returned, while the store's writer lands them at its
//! own pace; the same after a reopen.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// A commit over small sets of keys, so that commits write, remove and write again the same
/// ones: queue slots, URLs, parked links, records, counters and texts.
#[derive(Clone, Debug)]
struct Step {
    taken: Vec<u64>,
    enqueued: Vec<(u64, u8)>,
    seen: Vec<u8>,
    decided: Vec<u8>,
    parked: Vec<(u8, u8, u32)>,
    unparked: Vec<(u8, u8)>,
    record: Option<(u64, u8)>,
    counter: Option<(bool, u64)>,
    text: Option<(u64, u8)>,
}

fn step() -> impl Strategy<Value = Step> {
    (
        vec(0..24u64, 0..3),
        vec((0..24u64, 0..16u8), 0..4),
        vec(0..16u8, 0..2),
        vec(0..16u8, 0..3),
        vec((0..4u8, 0..6u8, 0..3u32), 0..3),
        vec((0..4u8, 0..6u8), 0..2),
        proptest::option::of((0..12u64, any::<u8>())),
        proptest::option::of((any::<bool>(), any::<u64>())),
        proptest::option::of((0..6u64, any::<u8>())),
    )
        .prop_map(
            |(taken, enqueued, seen, decided, parked, unparked, record, counter, text)| Step {
                taken,
                enqueued,
                seen,
                decided,
                parked,
                unparked,
                record,
                counter,
                text,
            },
        )
}

fn slot(slot: u64) -> QueueKey {
    QueueKey {
        host: (slot % 2) as HostId,
        priority: (slot / 2 % 3) as u32,
        order: slot,
    }
}

fn url(n: u8) -> String {
    format!("http://h{}.example/{n}", n % 2)
}

impl Step {
    fn commit(&self) -> Commit {
        let park = |on: u8, link: u8| (url_key(&url(on)), url_key(&url(link)));
        Commit {
            taken: self.taken.iter().map(|&s| slot(s)).collect(),
            enqueued: self
                .enqueued
                .iter()
                .map(|&(s, n)| (slot(s), url_key(&url(n)), queued(&url(n), u32::from(n))))
                .collect(),
            seen: self.seen.iter().map(|&n| url_key(&url(n))).collect(),
            decided: self.decided.iter().map(|&n| url_key(&url(n))).collect(),
            parked: self
                .parked
                .iter()
                .map(|&(on, link, priority)| {
                    let (on, key) = park(on, link);
                    let entry = queued(&url(link), priority);
                    let always = priority == 0;
                    (
                        on,
                        key,
                        ParkedLink {
                            entry,
                            priority,
                            always,
                        },
                    )
                })
                .collect(),
            unparked: self
                .unparked
                .iter()
                .map(|&(on, link)| park(on, link))
                .collect(),
            records: self
                .record
                .iter()
                .map(|&(seq, b)| (seq, vec![b; 3].into()))
                .collect(),
            counters: self
                .counter
                .iter()
                .map(|&(a, value)| (if a { "a" } else { "b" }.into(), value))
                .collect(),
            unique_text: self.text.map(|(seq, b)| (seq, format!("text {b}"))),
            ..Commit::default()
        }
    }
}

/// Everything the steps' keys read back as, each table by its own read.
fn read_all(store: &dyn CrawlStore) -> String {
    let mut out = String::new();
    for host in 0..2 {
        let all = store.pending(host, None, 100).unwrap();
        out += &format!("pending {host}: {all:?}\n");
        let after = all.first().map(|(key, _)| *key);
        out += &format!("after: {:?}\n", store.pending(host, after, 2).unwrap());
    }
    for n in 0..16 {
        let key = url_key(&url(n));
        out += &format!(
            "{n}: seen {} undecided {}\n",
            store.is_seen(&key).unwrap(),
            store.is_undecided(&key).unwrap()
        );
    }
    for on in 0..4 {
        let key = url_key(&url(on));
        out += &format!("parked on {on}: {:?}\n", store.parked_on(&key).unwrap());
        let link = url_key(&url(on + 1));
        out += &format!(
            "parked link: {:?}\n",
            store.parked_link(&key, &link).unwrap()
        );
    }
    out += &format!("parked targets: {:?}\n", store.parked_targets().unwrap());
    for seq in 0..12 {
        out += &format!(
            "{seq}: {:?} {:?}\n",
            store.record(seq).unwrap(),
            store.unique_text(seq).unwrap()
        );
    }
    let mut records = Vec::new();
    store
        .for_each_record(4, &mut |seq, bytes| records.push((seq, bytes.to_vec())))
        .unwrap();
    out += &format!("records from 4: {records:?}\n");
    out += &format!(
        "counters {:?} {:?}\n",
        store.counter("a").unwrap(),
        store.counter("b").unwrap()
    );
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// After every commit, landed or not, the fjall store reads back what the memory store,
    /// which applies each commit at once, does; and so after the commits have landed and the
    /// store is opened again.
    #[test]
    fn commits_written_behind_read_back_at_once(steps in vec(step(), 1..24)) {
        let dir = tempfile::tempdir().unwrap();
        let memory = MemoryStore::default();
        let mut last = 0;
        {
            let fjall = FjallStore::open(dir.path()).unwrap();
            for host in ["h0.example", "h1.example"] {
                prop_assert_eq!(fjall.host_id(host).unwrap(), memory.host_id(host).unwrap());
            }
            for step in &steps {
                memory.commit(step.commit()).unwrap();
                last = fjall.commit_behind(step.commit()).unwrap();
                prop_assert_eq!(read_all(&fjall), read_all(&memory));
            }
            fjall.wait_landed(last).unwrap();
            prop_assert!(fjall.landed().unwrap() >= last);
        }
        let fjall = FjallStore::open(dir.path()).unwrap();
        prop_assert_eq!(read_all(&fjall), read_all(&memory));
    }
}

/// A store dropped with commits not landed lands them first: nothing a commit returned for
/// is lost by closing the store.
#[test]
fn a_store_closed_with_commits_not_landed_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = FjallStore::open(dir.path()).unwrap();
        for seq in 0..500u64 {
            let commit = Commit {
                records: vec![(seq, seq.to_be_bytes().as_slice().into())],
                ..Commit::default()
            };
            store.commit_behind(commit).unwrap();
        }
    }
    let store = FjallStore::open(dir.path()).unwrap();
    let mut seqs = Vec::new();
    store
        .for_each_record(0, &mut |seq, _| seqs.push(seq))
        .unwrap();
    assert_eq!(seqs, (0..500).collect::<Vec<_>>());
}
