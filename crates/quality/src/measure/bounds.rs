//! The bounds a crawl's bytes are judged against, on the `--no-dedup` crawl's own link
//! graph: the content-aware bound ([`content_bound`]) and the copy bound ([`copy_bound`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use nearcrawl_records::Record;

use super::{Labels, pages_and_bytes};

/// The bytes of the content-aware bound: a crawl that knew each URL's content before
/// fetching it. From the seeds (the baseline's records of depth 0 without a parent), each
/// scored content group the baseline reached is reached at its nearest page, nearness in
/// bytes fetched along the baseline's link graph (Dijkstra, a step costing the bytes of the
/// page it fetches); the bound fetches the union of those cheapest paths. (The least set
/// that reaches every group is a Steiner tree, hard to find; the union of shortest paths is
/// the usual bound's construction and a little above it.)
pub fn content_bound(baseline: &[Record], truth: &dyn Labels) -> u64 {
    let by_url: HashMap<&str, &Record> = baseline.iter().map(|r| (r.url.as_str(), r)).collect();
    // Groups with a scored page the baseline fetched, each reached through any page of it.
    let required: HashSet<u64> = baseline
        .iter()
        .filter_map(|r| truth.get(&r.url).filter(|t| t.scored && r.status.is_some()))
        .map(|t| t.group)
        .collect();
    let group = |r: &Record| {
        truth
            .get(&r.url)
            .filter(|t| r.status.is_some() && required.contains(&t.group))
            .map(|t| t.group)
    };
    let seeds: Vec<&Record> = baseline
        .iter()
        .filter(|r| r.depth == 0 && r.parent.is_none())
        .collect();
    let starts = seeds
        .iter()
        .map(|seed| (seed.url.as_str(), seed.bytes.max(1)));
    let (order, prev) = cheapest_paths(&by_url, starts);
    // Each group's nearest page.
    let mut nearest: HashMap<u64, &str> = HashMap::new();
    for url in order {
        if let Some(g) = group(by_url[url]) {
            nearest.entry(g).or_insert(url);
        }
    }
    let mut fetched: HashSet<&str> = HashSet::new();
    for &page in nearest.values() {
        let mut at = page;
        while fetched.insert(at) {
            match prev.get(at) {
                Some(&from) => at = from,
                None => break,
            }
        }
    }
    fetched.iter().map(|u| by_url[u].bytes).sum()
}

/// The bytes of the copy bound: a crawl that skips, at no cost, every page the truth calls a
/// copy and fetches every other page the `--no-dedup` crawl fetched. Of each scored content
/// group it fetches the smallest page, or none when the group holds a page the truth leaves
/// unscored: that page is fetched, as every unscored page is (partly translated, borderline,
/// a listing: it holds text no other page has), and the group's scored pages are its
/// copies. Links are not followed, so discovery costs nothing: this is what skipping copies
/// can save at most. The content-aware bound also skips unscored pages, which no group
/// requires.
pub fn copy_bound(baseline: &[Record], truth: &dyn Labels) -> u64 {
    let (_, total) = pages_and_bytes(baseline);
    // Group -> (bytes of its scored pages, its smallest scored page).
    let mut scored: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut with_unscored: HashSet<u64> = HashSet::new();
    for record in baseline.iter().filter(|r| r.fetched_page()) {
        match truth.get(&record.url) {
            Some(t) if t.scored => {
                let (sum, least) = scored.entry(t.group).or_insert((0, u64::MAX));
                *sum += record.bytes;
                *least = (*least).min(record.bytes);
            }
            Some(t) => {
                with_unscored.insert(t.group);
            }
            None => {}
        }
    }
    let skipped: u64 = scored
        .iter()
        .map(
            |(group, &(sum, least))| match with_unscored.contains(group) {
                true => sum,
                false => sum - least,
            },
        )
        .sum();
    total.saturating_sub(skipped)
}

/// Dijkstra over the baseline's link graph (`by_url`) from `starts` (URL, cost so far), a
/// step costing the bytes of the page it fetches: every page reached, cheapest first, and
/// the page each was reached from on its cheapest path.
pub(super) fn cheapest_paths<'a>(
    by_url: &HashMap<&'a str, &'a Record>,
    starts: impl IntoIterator<Item = (&'a str, u64)>,
) -> (Vec<&'a str>, HashMap<&'a str, &'a str>) {
    let mut dist: HashMap<&str, u64> = HashMap::new();
    let mut prev: HashMap<&str, &str> = HashMap::new();
    let mut heap: BinaryHeap<Reverse<(u64, &str)>> = BinaryHeap::new();
    for (url, cost) in starts {
        dist.insert(url, cost);
        heap.push(Reverse((cost, url)));
    }
    let mut settled: HashSet<&str> = HashSet::new();
    let mut order = Vec::new();
    while let Some(Reverse((d, url))) = heap.pop() {
        if dist.get(url).is_some_and(|&best| best < d) || !settled.insert(url) {
            continue;
        }
        order.push(url);
        for link in by_url[url].leads_to() {
            let Some(target) = by_url.get(link) else {
                continue;
            };
            let cost = d + target.bytes.max(1);
            if dist.get(link).is_none_or(|&best| cost < best) {
                dist.insert(target.url.as_str(), cost);
                prev.insert(target.url.as_str(), url);
                heap.push(Reverse((cost, target.url.as_str())));
            }
        }
    }
    (order, prev)
}
