//! The two stores must agree, and the fjall one must keep its state across a reopen.

use super::*;

fn queued(url: &str, depth: u32) -> QueuedUrl {
    QueuedUrl {
        url: url.to_string(),
        depth,
        ..QueuedUrl::default()
    }
}

/// Runs the same job-like sequence of operations on a store and returns what it reads back.
fn exercise(store: &dyn CrawlStore) -> (Vec<(HostId, String)>, Vec<String>, Vec<UniquePage>) {
    let a = store.host_id("a.example").unwrap();
    let b = store.host_id("b.example:8080").unwrap();
    assert_eq!(store.host_id("a.example").unwrap(), a);
    let mut commit = Commit::default();
    for (i, (host, url, prio)) in [
        (a, "http://a.example/2", 2),
        (a, "http://a.example/1", 1),
        (b, "http://b.example:8080/", 0),
    ]
    .into_iter()
    .enumerate()
    {
        commit.enqueue(
            QueueKey {
                host,
                priority: prio,
                order: i as u64,
            },
            url_key(url),
            queued(url, prio),
        );
    }
    // A name given twice keeps the last value.
    commit.counters.push(("next_order".into(), 2));
    commit.counters.push(("next_order".into(), 3));
    store.commit(commit).unwrap();

    let pending = store.pending(a, None, 10).unwrap();
    let urls: Vec<&str> = pending.iter().map(|(_, u)| u.url.as_str()).collect();
    assert_eq!(
        urls,
        ["http://a.example/1", "http://a.example/2"],
        "priority order"
    );
    let after_first = store.pending(a, Some(pending[0].0), 10).unwrap();
    assert_eq!(after_first.len(), 1);

    // Decide the first: record, unique fingerprint, exact key, one new outlink.
    let mut commit = Commit::default();
    commit.taken.push(pending[0].0);
    commit.records.push((0, br#"{"seq":0}"#.into()));
    commit.unique = Some(UniquePage {
        seq: 0,
        simhash: 0xABCD,
    });
    commit.exact_key = Some(([7; 16], 0));
    commit.unique_text = Some((0, "main text".into()));
    commit.unique_links = Some((0, vec![1, u64::MAX]));
    commit.blobs = vec![("focus_df".into(), vec![1, 2, 3])];
    commit.sentences = vec![(7, vec![4, 5]), (u64::MAX, vec![6]), (7, vec![8])];
    commit.dropped = vec![
        url_key("http://a.example/3"),
        url_key("http://a.example/only-via-dup"),
    ];
    let declared = Declared {
        length: 4_321,
        shingles: vec![0b1010, 0xff],
        links: vec!["/a?b=1".into(), "/c".into()],
    };
    commit.length = vec![(url_key("http://a.example/1"), declared.clone())];
    let probed = QueuedUrl {
        probe: Some(Box::new(Probe {
            counterpart: "http://b.example:8080/3".into(),
            counterpart_length: Some(4_321),
            ..Probe::default()
        })),
        ..queued("http://a.example/3", 2)
    };
    commit.enqueue(
        QueueKey {
            host: a,
            priority: 2,
            order: 3,
        },
        url_key("http://a.example/3"),
        probed.clone(),
    );
    store.commit(commit).unwrap();
    let queued_probe = store.pending(a, None, 10).unwrap();
    assert!(
        queued_probe.iter().any(|(_, u)| *u == probed),
        "a probe is queued whole"
    );
    assert_eq!(
        store
            .declared_length(&url_key("http://a.example/1"))
            .unwrap(),
        Some(4_321)
    );
    assert_eq!(
        store.declared(&url_key("http://a.example/1")).unwrap(),
        Some(declared)
    );
    assert_eq!(
        store
            .declared_length(&url_key("http://a.example/2"))
            .unwrap(),
        None
    );

    assert!(store.is_seen(&url_key("http://a.example/3")).unwrap());
    assert!(
        store.is_seen(&url_key("http://a.example/1")).unwrap(),
        "decided URLs stay seen"
    );
    assert!(!store.is_seen(&url_key("http://a.example/4")).unwrap());
    assert_eq!(store.exact_original(&[7; 16]).unwrap(), Some(0));
    assert_eq!(store.exact_original(&[8; 16]).unwrap(), None);
    assert_eq!(
        store.record(0).unwrap().as_deref(),
        Some(&br#"{"seq":0}"#[..])
    );
    assert_eq!(store.counter("next_order").unwrap(), Some(3));
    assert_eq!(store.blob("focus_df").unwrap(), Some(vec![1, 2, 3]));
    assert_eq!(store.blob("other").unwrap(), None);
    assert_eq!(store.sentence_posting(7).unwrap(), Some(vec![8]));
    assert_eq!(store.sentence_posting(u64::MAX).unwrap(), Some(vec![6]));
    assert_eq!(store.sentence_posting(8).unwrap(), None);
    let mut keys = Vec::new();
    store
        .for_each_sentence_key(&mut |key| keys.push(key))
        .unwrap();
    keys.sort_unstable();
    assert_eq!(keys, [7, u64::MAX]);
    assert_eq!(store.unique_text(0).unwrap().as_deref(), Some("main text"));
    assert_eq!(store.link_keys(0).unwrap(), Some(vec![1, u64::MAX]));
    assert_eq!(
        store.dropped_unseen().unwrap(),
        1,
        "a.example/3 was queued another way"
    );
    let mut seqs = Vec::new();
    store
        .for_each_record(0, &mut |seq, _| seqs.push(seq))
        .unwrap();
    assert_eq!(seqs, [0]);

    let remaining: Vec<String> = store
        .hosts()
        .unwrap()
        .iter()
        .flat_map(|(id, _)| store.pending(*id, None, 100).unwrap())
        .map(|(_, u)| u.url)
        .collect();
    let uniques = store.unique_pages().unwrap();
    for page in &uniques {
        assert_eq!(store.unique_simhash(page.seq).unwrap(), Some(page.simhash));
    }
    assert_eq!(store.unique_simhash(u64::MAX).unwrap(), None);
    (store.hosts().unwrap(), remaining, uniques)
}

#[test]
fn memory_and_fjall_agree() {
    let dir = tempfile::tempdir().unwrap();
    let fjall = FjallStore::open(dir.path()).unwrap();
    let memory = MemoryStore::default();
    let from_fjall = exercise(&fjall);
    assert_eq!(from_fjall, exercise(&memory));
    assert_eq!(
        from_fjall.1,
        [
            "http://a.example/2",
            "http://a.example/3",
            "http://b.example:8080/"
        ]
    );
}

#[test]
fn fjall_state_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let store = FjallStore::open(dir.path()).unwrap();
        exercise(&store)
    };
    let store = FjallStore::open(dir.path()).unwrap();
    let hosts = store.hosts().unwrap();
    assert_eq!(hosts, before.0);
    let remaining: Vec<String> = hosts
        .iter()
        .flat_map(|(id, _)| store.pending(*id, None, 100).unwrap())
        .map(|(_, u)| u.url)
        .collect();
    assert_eq!(remaining, before.1);
    assert_eq!(store.unique_pages().unwrap(), before.2);
    assert!(store.is_seen(&url_key("http://a.example/3")).unwrap());
}

#[test]
fn queue_keys_sort_like_their_bytes() {
    use proptest::prelude::*;
    proptest!(|(a in any::<(u32, u32, u64)>(), b in any::<(u32, u32, u64)>())| {
        let ka = QueueKey { host: a.0, priority: a.1, order: a.2 };
        let kb = QueueKey { host: b.0, priority: b.1, order: b.2 };
        prop_assert_eq!(ka.cmp(&kb), ka.to_bytes().cmp(&kb.to_bytes()));
        prop_assert_eq!(QueueKey::from_bytes(&ka.to_bytes()), Some(ka));
    });
}

/// Queues two URLs, parks links on them, decides the first and releases its links: what the
/// store says of each after every step.
fn park_and_release(store: &dyn CrawlStore) {
    let host = store.host_id("a.example").unwrap();
    let (c1, c2) = (
        url_key("http://a.example/c1"),
        url_key("http://a.example/c2"),
    );
    let mut commit = Commit::default();
    for (order, url) in ["http://a.example/c1", "http://a.example/c2"]
        .into_iter()
        .enumerate()
    {
        let key = QueueKey {
            host,
            priority: 0,
            order: order as u64,
        };
        commit.enqueue(key, url_key(url), queued(url, 1));
    }
    store.commit(commit).unwrap();
    assert!(store.is_undecided(&c1).unwrap() && store.is_undecided(&c2).unwrap());
    assert!(
        !store
            .is_undecided(&url_key("http://a.example/other"))
            .unwrap()
    );

    let link = |url: &str| ParkedLink {
        entry: queued(url, 3),
        priority: 3,
        always: url.ends_with("l2"),
    };
    let (l1, l2, l3) = (
        url_key("http://b.example/l1"),
        url_key("http://b.example/l2"),
        url_key("http://b.example/l3"),
    );
    let commit = Commit {
        parked: vec![
            (c1, l1, link("http://b.example/l1")),
            (c1, l2, link("http://b.example/l2")),
            (c2, l3, link("http://b.example/l3")),
        ],
        ..Commit::default()
    };
    store.commit(commit).unwrap();
    assert_eq!(
        store.parked_link(&c1, &l2).unwrap(),
        Some(link("http://b.example/l2"))
    );
    assert_eq!(store.parked_link(&c2, &l1).unwrap(), None, "parked on c1");
    let mut targets = store.parked_targets().unwrap();
    targets.sort_unstable();
    let mut expected = vec![c1, c2];
    expected.sort_unstable();
    assert_eq!(targets, expected);
    let mut on_c1 = store.parked_on(&c1).unwrap();
    on_c1.sort_unstable_by_key(|(key, _)| *key);
    let mut expected = vec![
        (l1, link("http://b.example/l1")),
        (l2, link("http://b.example/l2")),
    ];
    expected.sort_unstable_by_key(|(key, _)| *key);
    assert_eq!(on_c1, expected);

    let commit = Commit {
        decided: vec![c1],
        unparked: vec![(c1, l1), (c1, l2)],
        ..Commit::default()
    };
    store.commit(commit).unwrap();
    assert!(!store.is_undecided(&c1).unwrap(), "decided");
    assert!(store.is_undecided(&c2).unwrap());
    assert!(store.is_seen(&c1).unwrap(), "a decided URL stays seen");
    assert_eq!(store.parked_on(&c1).unwrap(), []);
    assert_eq!(store.parked_targets().unwrap(), [c2]);
    assert_eq!(
        store.parked_on(&c2).unwrap(),
        [(l3, link("http://b.example/l3"))]
    );
}

#[test]
fn links_are_parked_until_their_url_is_decided_in_both_stores() {
    park_and_release(&MemoryStore::default());
    let dir = tempfile::tempdir().unwrap();
    park_and_release(&FjallStore::open(dir.path()).unwrap());
    let store = FjallStore::open(dir.path()).unwrap();
    let c2 = url_key("http://a.example/c2");
    assert!(store.is_undecided(&c2).unwrap(), "kept across a reopen");
    assert_eq!(store.parked_targets().unwrap(), [c2]);
}

#[test]
fn a_declared_length_reads_back_with_or_without_its_shingles_and_links() {
    for declared in [
        Declared {
            length: 17,
            ..Declared::default()
        },
        Declared {
            length: u64::MAX,
            shingles: vec![1, 2, b'\n'],
            links: vec!["/x.html".into(), "/y?q=1".into()],
        },
    ] {
        assert_eq!(Declared::decode(&declared.encode()), Some(declared));
    }
    // A length alone, as an older version kept it.
    assert_eq!(
        Declared::decode(&9u64.to_be_bytes()),
        Some(Declared {
            length: 9,
            ..Declared::default()
        })
    );
    assert_eq!(Declared::decode(&[0; 7]), None);
    let mut cut = Declared {
        length: 1,
        shingles: vec![1, 2, 3],
        links: vec!["/a".into()],
    }
    .encode();
    cut.pop();
    assert_eq!(Declared::decode(&cut), None, "a link cut short");
    assert_eq!(Declared::decode(&cut[..13]), None, "a filter cut short");
}

#[test]
fn a_journal_written_compressed_by_older_versions_is_recovered() {
    // Before 2026-11-26 the store's journal held large values LZ4-compressed (fjall's
    // default); a job started then and resumed now must read them back.
    let dir = tempfile::tempdir().unwrap();
    let text = "a sentence of the page's own text, long enough to be compressed. ".repeat(100);
    {
        let db = fjall::Database::builder(dir.path())
            .journal_compression(fjall::CompressionType::Lz4)
            .open()
            .unwrap();
        let texts = db
            .keyspace("texts", fjall::KeyspaceCreateOptions::default)
            .unwrap();
        texts.insert(7u64.to_be_bytes(), text.as_bytes()).unwrap();
        // Dropped unflushed: the value lives in the journal only.
    }
    let store = FjallStore::open(dir.path()).unwrap();
    assert_eq!(
        store.unique_text(7).unwrap().as_deref(),
        Some(text.as_str())
    );
}

/// A hub's yield: written with the hub, added to by its pages, read by URL key and by
/// sequence number.
fn hub_yields(store: &dyn CrawlStore) {
    let hub = url_key("http://a.example/toc");
    let commit = Commit {
        hub: Some((hub, 9, HubYield::new(40_000, 3))),
        ..Commit::default()
    };
    store.commit(commit).unwrap();
    assert!(store.is_hub(&hub).unwrap());
    assert_eq!(
        store.hub_yield(&hub).unwrap(),
        Some((9, HubYield::new(40_000, 3)))
    );
    let mut yielded = store.hub_yield_at(9).unwrap().unwrap();
    yielded.count(Some(5_000));
    yielded.count(None);
    let commit = Commit {
        hub_yields: vec![(9, yielded)],
        ..Commit::default()
    };
    store.commit(commit).unwrap();
    assert_eq!(store.hub_yield(&hub).unwrap(), Some((9, yielded)));
    assert_eq!(store.hub_yield_at(10).unwrap(), None);
    let other = url_key("http://a.example/other");
    assert_eq!(store.hub_yield(&other).unwrap(), None);
}

#[test]
fn hub_yields_read_back_in_both_stores_and_after_reopen() {
    hub_yields(&MemoryStore::default());
    let dir = tempfile::tempdir().unwrap();
    hub_yields(&FjallStore::open(dir.path()).unwrap());
    let store = FjallStore::open(dir.path()).unwrap();
    let yielded = store.hub_yield_at(9).unwrap().unwrap();
    assert_eq!((yielded.decided, yielded.pages), (2, 1));
}

#[test]
fn a_hub_is_worth_fetching_until_it_is_known_to_have_led_to_less_than_itself() {
    let mut hub = HubYield::new(10_000, 3);
    assert!(hub.worth_fetching(3, 1.0), "nothing decided yet");
    hub.count(Some(3_000));
    hub.count(Some(3_000));
    assert!(hub.worth_fetching(3, 1.0), "one page still undecided");
    hub.count(Some(3_000));
    assert!(hub.complete());
    assert!(
        !hub.worth_fetching(3, 1.0),
        "9,000 bytes of pages for 10,000"
    );
    assert!(hub.worth_fetching(3, 0.9));
    assert!(hub.worth_fetching(3, 0.0), "0: every hub");
    assert!(
        hub.worth_fetching(3, f64::NAN),
        "not a positive number: every hub"
    );
    assert!(
        !hub.worth_fetching(4, 0.5),
        "three new pages, four asked for"
    );
    let mut led_nowhere = HubYield::new(500, 3);
    (0..3).for_each(|_| led_nowhere.count(None));
    assert!(!led_nowhere.worth_fetching(3, 1.0), "errors are not pages");
    let mut redirected = HubYield::new(500, 2);
    redirected.count(None);
    redirected.count_redirect();
    assert!(redirected.complete() && redirected.worth_fetching(3, 1.0));
}

proptest::proptest! {
    #[test]
    fn a_hub_yield_reads_back(
        bytes: u64, links: u32, decided: u32, pages: u32, page_bytes: u64, unknown: bool,
    ) {
        let hub = HubYield { bytes, links, decided, pages, page_bytes, unknown };
        proptest::prop_assert_eq!(HubYield::decode(&hub.encode()).unwrap(), hub);
        proptest::prop_assert!(HubYield::decode(&hub.encode()[2..]).is_err());
        // The first version's 28 bytes, without `unknown`.
        let first = HubYield { unknown: false, ..hub };
        proptest::prop_assert_eq!(HubYield::decode(&hub.encode()[..28]).unwrap(), first);
    }
}

/// Tables written well past the block cache (filters pinned, indexes partitioned: see
/// `FjallStore::open_with_cache`) answer every point read, before and after a reopen. (About
/// 23 MB of texts: fjall writes them out in tables of 8 MiB memtables, three here.)
#[test]
fn a_store_many_times_its_cache_reads_back_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let pages = 12_000u64;
    let text = |seq: u64| format!("{seq:08} {}", "words of a page ".repeat(120));
    let key = |seq: u64| url_key(&format!("http://site.example/p/{seq}.html"));
    {
        let store = FjallStore::open_with_cache(dir.path(), 1 << 20).unwrap();
        for seq in 0..pages {
            store
                .commit(Commit {
                    unique_text: Some((seq, text(seq))),
                    seen: vec![key(seq)],
                    ..Commit::default()
                })
                .unwrap();
        }
        for seq in (0..pages).step_by(7) {
            assert_eq!(store.unique_text(seq).unwrap(), Some(text(seq)));
        }
    }
    let store = FjallStore::open_with_cache(dir.path(), 1 << 20).unwrap();
    for seq in 0..pages {
        assert_eq!(
            store.unique_text(seq).unwrap(),
            Some(text(seq)),
            "text {seq}"
        );
        assert!(store.is_seen(&key(seq)).unwrap(), "seen {seq}");
    }
    assert_eq!(store.unique_text(pages).unwrap(), None);
    assert!(!store.is_seen(&key(pages)).unwrap());
}

/// The tables together hold at most [`fjall_store::MEMTABLES_BUDGET_BYTES`] in memory once a
/// commit has landed, though each alone may hold 8 MiB: here three tables take 4 MiB each.
/// Everything reads back, before and after a reopen.
#[test]
fn the_tables_together_hold_no_more_than_the_budget_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let commits = 64u64;
    let value = |seq: u64| format!("{seq:08} {}", "x".repeat(64 << 10));
    let budget = crate::fjall_store::MEMTABLES_BUDGET_BYTES;
    {
        let store = FjallStore::open(dir.path()).unwrap();
        let mut most = 0;
        for seq in 0..commits {
            store
                .commit(Commit {
                    unique_text: Some((seq, value(seq))),
                    records: vec![(seq, value(seq).into_bytes().into())],
                    blobs: vec![(format!("blob {seq}").into(), value(seq).into_bytes())],
                    ..Commit::default()
                })
                .unwrap();
            most = most.max(store.memtable_bytes());
        }
        let one_commit = 3 * (value(0).len() as u64 + 64);
        assert!(most <= budget, "{most} bytes in memtables, budget {budget}");
        // Up to the budget: tables are not written out before it is reached.
        assert!(
            most > budget - one_commit,
            "{most} bytes in memtables, budget {budget}"
        );
    }
    let store = FjallStore::open(dir.path()).unwrap();
    for seq in 0..commits {
        assert_eq!(store.unique_text(seq).unwrap(), Some(value(seq)), "{seq}");
        assert_eq!(store.record(seq).unwrap(), Some(value(seq).into_bytes()));
    }
    assert_eq!(
        store.blob(&format!("blob {}", commits - 1)).unwrap(),
        Some(value(commits - 1).into_bytes())
    );
}

mod behind;
