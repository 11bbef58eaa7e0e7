//! The shared near-duplicate index against a real redis-server: of two near-duplicate pages
//! judged at the same moment by two workers, exactly one is the original, in every
//! interleaving of their steps and under threads racing.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

use std::sync::Arc;

use nearcrawl_redis_job::server::{LocalCluster, LocalRedis};
use nearcrawl_redis_job::{
    Admission, Admitted, JobName, PageKeys, Patience, Redis, RedisIndex, RedisTarget, Snapshot,
};

fn index(url: &str, job: &str, worker: &str) -> RedisIndex {
    let redis = Redis::connect(
        RedisTarget::parse(url).unwrap(),
        Patience::default(),
        Arc::default(),
    )
    .unwrap();
    RedisIndex::open(redis, JobName::new(job).unwrap(), worker, 3).unwrap()
}

/// The test's judgement: a page is unique when the index holds nothing like it (a posting
/// here is the list of ids, 8 bytes each, that share the sentence).
fn is_unique(snapshot: &Snapshot) -> bool {
    snapshot.exact.is_none()
        && snapshot.near.is_empty()
        && snapshot.postings.iter().flatten().all(|p| p.is_empty())
}

fn postings_with(snapshot: &Snapshot, id: u64) -> Vec<Vec<u8>> {
    snapshot
        .postings
        .iter()
        .map(|p| {
            let mut p = p.clone().unwrap_or_default();
            p.extend_from_slice(&id.to_be_bytes());
            p
        })
        .collect()
}

/// One worker's handling of one page, a step at a time.
struct Worker {
    index: RedisIndex,
    probe: PageKeys,
    id: u64,
    snapshot: Option<Snapshot>,
    /// Some(true): kept as an original; Some(false): judged a duplicate.
    kept: Option<bool>,
    conflicts: u32,
}

impl Worker {
    fn new(mut index: RedisIndex, probe: PageKeys) -> Worker {
        let id = index.reserve().unwrap();
        Worker {
            index,
            probe,
            id,
            snapshot: None,
            kept: None,
            conflicts: 0,
        }
    }

    /// Reads the index and judges.
    fn query(&mut self) {
        let snapshot = self.index.query(&self.probe).unwrap();
        if !is_unique(&snapshot) {
            self.kept = Some(false);
        }
        self.snapshot = Some(snapshot);
    }

    /// Admits the page if judged unique; on a conflict, judges again and tries again.
    fn admit(&mut self) {
        while self.kept.is_none() {
            let snapshot = self.snapshot.take().expect("queried first");
            let postings = postings_with(&snapshot, self.id);
            let exact = self.probe.exact.clone();
            let page = Admission {
                id: self.id,
                fingerprint: self.probe.fingerprint,
                exact: exact.as_deref(),
                url: "http://x/",
                text: "text",
                links: &[],
                postings: &postings,
            };
            match self
                .index
                .admit(&self.probe, snapshot.version, &page)
                .unwrap()
            {
                Admitted::Kept(_) => self.kept = Some(true),
                Admitted::Conflict => {
                    self.conflicts += 1;
                    self.query();
                }
            }
        }
    }
}

fn probe(fingerprint: u64, exact: Option<&[u8]>, sentences: &[u128]) -> PageKeys {
    PageKeys {
        fingerprint,
        exact: exact.map(<[u8]>::to_vec),
        sentences: sentences.to_vec(),
    }
}

/// Every order of two workers' query and admit steps (each worker's own in order).
const INTERLEAVINGS: [&str; 6] = ["aAbB", "abAB", "abBA", "baAB", "baBA", "bBaA"];

fn run_interleavings(url: &str, case: &str, a: &PageKeys, b: &PageKeys, both_kept: bool) {
    for (n, order) in INTERLEAVINGS.iter().enumerate() {
        let job = format!("{case}-{n}");
        let mut wa = Worker::new(index(url, &job, "a"), a.clone());
        let mut wb = Worker::new(index(url, &job, "b"), b.clone());
        for step in order.chars() {
            match step {
                'a' => wa.query(),
                'A' => wa.admit(),
                'b' => wb.query(),
                'B' => wb.admit(),
                _ => unreachable!(),
            }
        }
        let kept = [wa.kept.unwrap(), wb.kept.unwrap()];
        let originals = kept.iter().filter(|&&k| k).count();
        if both_kept {
            assert_eq!(originals, 2, "{case} {order}: distinct pages are both kept");
            assert_eq!(
                wa.conflicts + wb.conflicts,
                0,
                "{case} {order}: no false conflict"
            );
        } else {
            assert_eq!(
                originals, 1,
                "{case} {order}: exactly one original ({kept:?})"
            );
        }
    }
}

fn two_near_duplicates_make_one_original(url: &str) {
    let base = 0x0123_4567_89ab_cdef_u64;
    // Near by simhash: 2 bits apart, nothing else shared.
    run_interleavings(
        url,
        "near",
        &probe(base, Some(b"a"), &[1]),
        &probe(base ^ 0b101, Some(b"b"), &[2]),
        false,
    );
    // Exact copies, fingerprints far apart (a key collision is what exact keys are for).
    run_interleavings(
        url,
        "exact",
        &probe(base, Some(b"same"), &[]),
        &probe(!base, Some(b"same"), &[]),
        false,
    );
    // A shared long sentence only.
    run_interleavings(
        url,
        "sentence",
        &probe(base, None, &[7, 8]),
        &probe(!base, None, &[8, 9]),
        false,
    );
    // Unrelated pages: both kept, and neither is made to judge again.
    run_interleavings(
        url,
        "distinct",
        &probe(base, Some(b"a"), &[1]),
        &probe(!base, Some(b"b"), &[2]),
        true,
    );
}

#[test]
fn two_near_duplicates_judged_at_once_make_one_original() {
    let server = LocalRedis::start(false).unwrap();
    two_near_duplicates_make_one_original(&server.url());
}

#[test]
fn two_near_duplicates_judged_at_once_make_one_original_on_a_cluster() {
    let cluster = LocalCluster::start(3).unwrap();
    two_near_duplicates_make_one_original(&cluster.url());
}

#[test]
fn racing_threads_keep_exactly_one_page_per_cluster_of_near_duplicates() {
    let server = LocalRedis::start(false).unwrap();
    // Ten clusters: each a base fingerprint and its 8 variants flipping subsets of the same 3
    // bits (any two variants at most 3 bits apart); bases at least 16 bits apart, so no
    // variant is near another cluster's.
    let mut bases: Vec<u64> = Vec::new();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    while bases.len() < 10 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        let candidate = state ^ (state >> 29);
        if bases.iter().all(|b| (b ^ candidate).count_ones() >= 16) {
            bases.push(candidate);
        }
    }
    let mut pages: Vec<(usize, u64)> = Vec::new();
    for (cluster, base) in bases.iter().enumerate() {
        for subset in 0..8u64 {
            let flips = (subset & 1) | ((subset & 2) << 9) | ((subset & 4) << 30);
            pages.push((cluster, base ^ flips));
        }
    }
    // Interleave clusters across threads: each thread gets pages of every cluster.
    let threads = 4;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let url = server.url();
            let mine: Vec<(usize, u64)> = pages.iter().copied().skip(t).step_by(threads).collect();
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                let mut conflicts = 0;
                for (cluster, fingerprint) in mine {
                    let mut worker = Worker::new(
                        index(&url, "race", &format!("t{t}")),
                        probe(fingerprint, None, &[]),
                    );
                    worker.query();
                    worker.admit();
                    conflicts += worker.conflicts;
                    if worker.kept == Some(true) {
                        kept.push(cluster);
                    }
                }
                (kept, conflicts)
            })
        })
        .collect();
    let mut per_cluster = [0usize; 10];
    for handle in handles {
        let (kept, _conflicts) = handle.join().unwrap();
        for cluster in kept {
            per_cluster[cluster] += 1;
        }
    }
    assert_eq!(per_cluster, [1; 10], "one original per cluster");
}

#[test]
fn an_admitted_page_is_read_back_and_a_repeated_admission_is_the_same_one() {
    let server = LocalRedis::start(false).unwrap();
    let mut idx = index(&server.url(), "pages", "w1");
    let probe = probe(42, Some(b"key"), &[5]);
    let id = idx.reserve().unwrap();
    let snapshot = idx.query(&probe).unwrap();
    assert_eq!(snapshot.version, 0);
    let postings = postings_with(&snapshot, id);
    let page = Admission {
        id,
        fingerprint: 42,
        exact: Some(b"key"),
        url: "http://example.test/a",
        text: "the verification text",
        links: &[1, 2, 3],
        postings: &postings,
    };
    let first = idx.admit(&probe, snapshot.version, &page).unwrap();
    assert_eq!(first, Admitted::Kept(1));
    // A step repeated after its reply was lost answers as the first time.
    assert_eq!(idx.admit(&probe, snapshot.version, &page).unwrap(), first);
    let stored = idx.page(id).unwrap().unwrap();
    assert_eq!(
        (
            stored.fingerprint,
            stored.url.as_str(),
            stored.text.as_str()
        ),
        (42, "http://example.test/a", "the verification text")
    );
    assert_eq!(
        (stored.links.as_slice(), stored.worker.as_str()),
        (&[1u8, 2, 3][..], "w1")
    );
    assert_eq!(idx.page(id + 100).unwrap(), None);
    let again = idx.query(&probe).unwrap();
    assert_eq!(again.version, 1);
    assert_eq!(again.exact, Some(id));
    assert_eq!(again.near, vec![(id, 42, 0)]);
    assert_eq!(again.postings, vec![Some(id.to_be_bytes().to_vec())]);
}

#[test]
fn a_page_of_thousands_of_sentences_is_admitted_whole_and_ids_differ_across_workers() {
    let server = LocalRedis::start(false).unwrap();
    let (mut a, mut b) = (
        index(&server.url(), "long", "a"),
        index(&server.url(), "long", "b"),
    );
    let mut ids: Vec<u64> = (0..100)
        .flat_map(|_| [a.reserve().unwrap(), b.reserve().unwrap()])
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 200, "every id reserved once");
    // More sentence keys than the script reads or writes in one call.
    let sentences: Vec<u128> = (1..=2_500).collect();
    let long = probe(7, None, &sentences);
    let mut first = Worker::new(a, long.clone());
    first.query();
    first.admit();
    assert_eq!(first.kept, Some(true));
    let snapshot = b.query(&long).unwrap();
    assert_eq!(snapshot.near, vec![(first.id, 7, 0)]);
    assert!(
        snapshot
            .postings
            .iter()
            .all(|p| p.as_deref() == Some(&first.id.to_be_bytes()[..])),
        "every sentence's posting names the page"
    );
    // A page sharing its last sentence only, judged against the index before the long one
    // was admitted, conflicts.
    let mut late = Worker::new(b, probe(1 << 40, None, &[2_500]));
    late.snapshot = Some(Snapshot {
        version: 0,
        exact: None,
        near: Vec::new(),
        postings: vec![None],
    });
    late.admit();
    assert_eq!((late.kept, late.conflicts), (Some(false), 1));
}
