//! The order parked links come back in: the same on every run, whatever the URLs' hashes.

use nearcrawl_store::MemoryStore;

use super::*;

#[test]
fn released_links_come_back_by_priority_then_url() {
    let store = Arc::new(MemoryStore::default());
    let config = FrontierConfig {
        politeness: nearcrawl_frontier::PolitenessConfig::default(),
        obey_robots: false,
        max_pages_per_host: None,
        by_priority: false,
        explore_every: 0,
    };
    let shared = Arc::clone(&store) as Arc<dyn CrawlStore>;
    let mut frontier = StoreFrontier::open(shared, config, 0, Instant::now()).unwrap();
    let on = url_key("http://a.test/original");
    // Parked in an order of their own; the store keeps them by their URLs' hashes.
    let parked = [
        ("http://b.test:9000/z", 2),
        ("http://b.test:9000/c", 1),
        ("http://a.test:8000/y", 2),
        ("http://b.test:9000/a", 2),
    ];
    let mut commit = Commit::default();
    for (url, priority) in parked {
        let url = CanonicalUrl::parse(url).unwrap();
        let link = ParkedLink {
            entry: QueuedUrl {
                url: url.to_string(),
                ..QueuedUrl::default()
            },
            priority,
            always: false,
        };
        let link_key = url_key(url.as_str());
        let parking = frontier.hub_or_park(&mut commit, &url, &on, link_key, link);
        assert!(matches!(parking, Ok(Parking::Parked)));
    }
    store.commit(commit).unwrap();
    let mut commit = Commit::default();
    let released: Vec<(String, u32)> = frontier
        .release(&mut commit, "http://a.test/original", &on, false)
        .unwrap()
        .into_iter()
        .map(|link| (link.entry.url, link.priority))
        .collect();
    let expected = [
        ("http://b.test:9000/c", 1),
        ("http://a.test:8000/y", 2),
        ("http://b.test:9000/a", 2),
        ("http://b.test:9000/z", 2),
    ];
    assert_eq!(released, expected.map(|(u, p)| (u.to_string(), p)));
    assert_eq!(
        commit.unparked.len(),
        4,
        "each unparked in the decision's commit"
    );
}
