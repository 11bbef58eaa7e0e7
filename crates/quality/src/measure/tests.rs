//! Tests of `measure`.

use super::*;
use nearcrawl_records::Verdict;

/// Groups by URL: `/a` and `/b` are one content, the rest each their own.
struct ByPath(HashMap<String, u64>);

impl Labels for ByPath {
    fn get(&self, url: &str) -> Option<PageTruth> {
        self.0
            .get(url)
            .map(|&group| PageTruth::scored(group, Kind::Unchanged))
    }
    fn copies(&self, copy: &str, original: &str) -> Option<bool> {
        Some(self.0.get(copy)? == self.0.get(original)?)
    }
}

fn page(seq: u64, url: &str, bytes: u64, links: &[&str]) -> Record {
    let mut record = Record::new(seq, url.into(), u32::from(seq > 0), Verdict::Unique);
    record.status = Some(200);
    record.bytes = bytes;
    record.parent = (seq > 0).then_some(0);
    record.links = Some(links.iter().map(|l| l.to_string()).collect());
    record
}

#[test]
fn the_oracle_follows_a_duplicates_link_only_to_what_nothing_else_reaches() {
    // The seed links to a and b, copies of each other; b (the duplicate, fetched second)
    // alone leads to c (new) and d (reached from a too), and to e via f, both new.
    let baseline = vec![
        page(0, "/seed", 10, &["/a", "/b"]),
        page(1, "/a", 100, &["/d"]),
        page(2, "/b", 100, &["/c", "/d", "/big"]),
        page(3, "/c", 50, &[]),
        page(4, "/d", 50, &[]),
        page(5, "/big", 1000, &["/c"]),
    ];
    let groups = [("/seed", 0), ("/a", 1), ("/b", 1), ("/c", 2), ("/d", 3)];
    let mut truth = ByPath(groups.iter().map(|&(u, g)| (u.to_string(), g)).collect());
    // The big page is a copy of the seed's content: never needed.
    truth.0.insert("/big".into(), 0);
    let oracle_duplicates: HashSet<&str> = ["/b", "/big"].into();
    let oracle = covering_oracle(&baseline, &truth, &oracle_duplicates);
    let urls: Vec<&str> = oracle.iter().map(|r| r.url.as_str()).collect();
    // c is reached through b (50 bytes), not through the big page; the big page is not
    // fetched at all.
    assert_eq!(urls, ["/seed", "/a", "/b", "/c", "/d"]);
    // The strict oracle loses c; the covering one does not.
    let strict = replay(&baseline, &|r: &Record| {
        oracle_duplicates.contains(r.url.as_str())
    });
    assert_eq!(strict.dedup_pages, 4);
    let m = measure(&baseline, &baseline, &truth);
    assert_eq!((m.oracle_pages, m.oracle_bytes), (5, 310));
    assert_eq!(m.strict_oracle_bytes, 260);
    // Knowing each URL's content: the seed, one page of the a/b group (a), c by b (the
    // cheapest path to it) and d from a; not the big page.
    assert_eq!(m.content_bound_bytes, 10 + 100 + 100 + 50 + 50);
    // Skipping copies at no cost: the big page (the seed's group) and one of a and b.
    assert_eq!(m.copy_bound_bytes, m.baseline_bytes - 1000 - 100);
}

/// A group whose scored page is a copy of a page the truth leaves unscored (a language's
/// copy of another's partly translated page): reached through either.
struct WithUnscored;

impl Labels for WithUnscored {
    fn get(&self, url: &str) -> Option<PageTruth> {
        match url {
            "/pt" => Some(PageTruth {
                scored: false,
                ..PageTruth::scored(1, Kind::Edited)
            }),
            "/pt-br" => Some(PageTruth::scored(1, Kind::Untranslated)),
            "/seed" => Some(PageTruth::scored(0, Kind::RealFirst)),
            _ => None,
        }
    }
    fn copies(&self, copy: &str, original: &str) -> Option<bool> {
        Some(self.get(copy)?.group == self.get(original)?.group)
    }
}

#[test]
fn a_group_is_reached_through_any_of_its_pages() {
    let baseline = vec![
        page(0, "/seed", 10, &["/pt", "/pt-br"]),
        page(1, "/pt", 100, &[]),
        page(2, "/pt-br", 100, &[]),
    ];
    // The copy found unchanged without a download: its group reached through /pt.
    let mut dedup = baseline[..2].to_vec();
    dedup.push(Record::new(2, "/pt-br".into(), 1, Verdict::Unchanged));
    let m = measure(&dedup, &baseline, &WithUnscored);
    assert_eq!((m.coverage, m.groups_lost), (1.0, 0));
    // Neither fetched: lost.
    let m = measure(&baseline[..1], &baseline, &WithUnscored);
    assert_eq!(m.groups_lost, 1);
    // Knowing each URL's content: the seed and one page of the group.
    assert_eq!(m.content_bound_bytes, 10 + 100);
    // Skipping copies: the unscored page is fetched, its copy skipped.
    assert_eq!(m.copy_bound_bytes, 10 + 100);
}

#[test]
fn a_request_for_a_url_nothing_named_is_counted() {
    let baseline = vec![
        page(0, "/seed", 10, &["/a", "/b"]),
        page(1, "/a", 100, &[]),
        page(2, "/b", 100, &[]),
    ];
    let mut dedup = baseline.clone();
    // A probe (a HEAD: a status, no page) of a URL no page links to, made up from another
    // site's paths; and a URL decided without a request.
    let mut probe = Record::new(3, "/made-up".into(), 1, Verdict::Unchanged);
    probe.status = Some(404);
    dedup.push(probe);
    dedup.push(Record::new(4, "/never-asked".into(), 1, Verdict::Trap));
    let truth = ByPath(HashMap::new());
    let m = measure(&dedup, &baseline, &truth);
    assert_eq!(m.unnamed_requests, 1);
    assert_eq!(m.unnamed_examples, [("/made-up".to_string(), 404)]);
    assert_eq!(measure(&baseline, &baseline, &truth).unnamed_requests, 0);
}

#[test]
fn a_request_for_a_url_only_the_dedup_crawls_own_pages_named_is_not_made_up() {
    let baseline = vec![page(0, "/seed", 10, &["/a"]), page(1, "/a", 100, &[])];
    // The dedup crawl fetched /a under another session's URL, which names /b; the
    // baseline never fetched that page, so only the dedup crawl's graph names /b.
    let mut dedup = vec![baseline[0].clone(), page(1, "/a?visit=2", 100, &["/b"])];
    dedup[0].links = Some(vec!["/a".into(), "/a?visit=2".into()]);
    dedup.push(page(2, "/b", 100, &[]));
    let truth = ByPath(HashMap::new());
    assert_eq!(measure(&dedup, &baseline, &truth).unnamed_requests, 0);
    // Without its graph (a crawl run without `links.record`), /a?visit=2 and /b count.
    for record in &mut dedup {
        record.links = None;
    }
    assert_eq!(measure(&dedup, &baseline, &truth).unnamed_requests, 2);
}
