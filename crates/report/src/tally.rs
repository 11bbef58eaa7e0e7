//! What the report draws, gathered from the records one at a time in bounded memory: the
//! curves are sampled (at most [`MAX_SAMPLES`] points, the stride doubling as the crawl
//! grows), the histograms and the host table are counts, and each cluster keeps its size and
//! its first few duplicates' URLs.

use std::collections::{BTreeMap, HashMap};

use nearcrawl_records::{Record, Verdict};
use nearcrawl_url_rules::{Observation, Replay};

/// Points kept per curve, at most.
pub const MAX_SAMPLES: usize = 1024;
/// Duplicates' URLs kept per cluster.
const URLS_PER_CLUSTER: usize = 5;

/// The three groups the charts colour by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Unique,
    Duplicate,
    Other,
}

impl Group {
    pub const ALL: [Group; 3] = [Group::Unique, Group::Duplicate, Group::Other];

    fn of(record: &Record) -> Group {
        match record.verdict {
            Verdict::Unique => Group::Unique,
            v if v.is_duplicate() => Group::Duplicate,
            _ => Group::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Group::Unique => "unique",
            Group::Duplicate => "duplicate (exact or near)",
            Group::Other => "other (errors, refusals, redirects, not HTML)",
        }
    }

    pub fn colour(self) -> &'static str {
        match self {
            Group::Unique => "#2b7bb9",
            Group::Duplicate => "#d9822b",
            Group::Other => "#8a8a8a",
        }
    }
}

/// Running totals after some number of decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sample {
    /// Decisions so far.
    pub decisions: u64,
    /// Pages fetched, by group.
    pub pages: [u64; 3],
    /// Bytes fetched, by group.
    pub bytes: [u64; 3],
    /// Outlinks of duplicates not followed.
    pub dropped: u64,
    /// Focused crawls: pages scored against the topic, and those on topic.
    pub scored: u64,
    /// See `scored`.
    pub on_topic: u64,
}

/// One host's row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Host {
    pub pages: u64,
    pub bytes: u64,
    pub duplicates: u64,
    pub robots: u64,
    pub errors: u64,
    /// Its records by the server address they went to (politeness per address).
    pub addresses: BTreeMap<String, u64>,
}

impl Host {
    /// The address most of its requests went to, if any went anywhere.
    pub fn address(&self) -> Option<&str> {
        let (address, _) = self
            .addresses
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))?;
        Some(address)
    }
}

/// One server address's row: the hosts on it together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Address {
    /// Host names whose requests went to it.
    pub names: std::collections::BTreeSet<String>,
    pub pages: u64,
    pub bytes: u64,
    /// Requests that failed or were throttled (429, 5xx, network errors, retries included):
    /// what makes an address back off.
    pub failures: u64,
}

/// One cluster: its original's URL, how many duplicates, the first few of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cluster {
    pub original: Option<String>,
    pub size: u64,
    pub members: Vec<(String, &'static str)>,
}

/// Everything the report draws.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    now: Sample,
    stride: u64,
    pub(crate) samples: Vec<Sample>,
    pub(crate) distance: BTreeMap<u32, u64>,
    pub(crate) similarity: [u64; 10],
    pub(crate) dedup_time: [u64; 24],
    pub(crate) clusters: HashMap<u64, Cluster>,
    pub(crate) hosts: BTreeMap<String, Host>,
    /// By server address (an IPv4 address, an IPv6 /64).
    pub(crate) addresses: BTreeMap<String, Address>,
    /// The fetched pages replayed through a URL rule book: the rewrite rules the crawl's
    /// duplicates teach, each checked against the pages it predicted.
    pub(crate) rules: Replay,
}

impl Tally {
    /// The tally of these records.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Record>) -> Tally {
        let mut tally = Tally::default();
        for record in records {
            tally.add(record);
        }
        tally
    }

    /// Counts one more record (records come in decision order).
    pub fn add(&mut self, record: &Record) {
        let group = Group::ALL
            .iter()
            .position(|g| *g == Group::of(record))
            .unwrap_or(2);
        let now = &mut self.now;
        now.decisions += 1;
        if record.status.is_some() {
            now.pages[group] += 1;
            now.bytes[group] += record.bytes;
        }
        now.dropped += u64::from(record.fates().total("drop"));
        if record.relevance.is_some() {
            now.scored += 1;
            now.on_topic += u64::from(record.off_topic == Some(0));
        }
        self.sample();

        if record.verdict.is_duplicate() {
            if let Some(d) = record.distance {
                *self.distance.entry(d).or_insert(0) += 1;
            }
            if let Some(s) = record.similarity {
                self.similarity[((s * 10.0) as usize).min(9)] += 1;
            }
            if let Some(id) = record.cluster {
                let cluster = self.clusters.entry(id).or_default();
                cluster.size += 1;
                if cluster.original.is_none() {
                    cluster.original.clone_from(&record.duplicate_of);
                }
                if cluster.members.len() < URLS_PER_CLUSTER {
                    cluster
                        .members
                        .push((record.url.clone(), record.verdict.as_str()));
                }
            }
        }
        // Pages judged, and pages a probe found to have their counterpart's text.
        let judged = record.fetched_page()
            && (record.verdict == Verdict::Unique || record.verdict.is_duplicate());
        // Parsed once, for the rules and the host.
        let url = url::Url::parse(&record.url).ok();
        if (judged || record.verdict == Verdict::Unchanged)
            && let Some(url) = &url
        {
            let original = record
                .duplicate_of
                .as_deref()
                .and_then(|u| url::Url::parse(u).ok());
            self.rules.observe(Observation {
                url,
                bytes: record.bytes,
                duplicate_of: original.as_ref(),
                cluster: record.cluster,
            });
        }
        if let Some(us) = record.dedup_us {
            self.dedup_time[(63 - us.max(1).leading_zeros() as usize).min(23)] += 1;
        }
        let host = url
            .as_ref()
            .map(nearcrawl_frontier::authority)
            .unwrap_or_else(|| "(unparsable URL)".into());
        let h = match self.hosts.get_mut(&host) {
            Some(h) => h,
            None => self.hosts.entry(host.clone()).or_default(),
        };
        if record.status.is_some() {
            h.pages += 1;
            h.bytes += record.bytes;
        }
        h.duplicates += u64::from(record.verdict.is_duplicate());
        h.robots += u64::from(record.verdict == Verdict::RobotsDisallowed);
        h.errors += u64::from(record.verdict == Verdict::Error);
        let address = record
            .address
            .as_deref()
            .and_then(|a| a.parse::<std::net::IpAddr>().ok())
            .map(|ip| nearcrawl_frontier::AddressKey::of(ip).to_string());
        if let Some(address) = address {
            *h.addresses.entry(address.clone()).or_default() += 1;
            let a = self.addresses.entry(address).or_default();
            a.names.insert(host);
            if record.status.is_some() {
                a.pages += 1;
                a.bytes += record.bytes;
            }
            let throttled = record.status.is_some_and(|s| s == 429 || s >= 500);
            let failed = record.verdict == Verdict::Error && record.status.is_none();
            a.failures += u64::from(record.retries.unwrap_or(0)) + u64::from(throttled || failed);
        }
    }

    /// Keeps every `stride`-th running total; past [`MAX_SAMPLES`], every other sample goes
    /// and the stride doubles.
    fn sample(&mut self) {
        let stride = self.stride.max(1);
        if self.now.decisions.is_multiple_of(stride) {
            self.samples.push(self.now);
        }
        if self.samples.len() > MAX_SAMPLES {
            let kept: Vec<Sample> = self.samples.iter().copied().skip(1).step_by(2).collect();
            self.samples = kept;
            self.stride = stride * 2;
        }
    }

    /// The curves' points, the last running totals included.
    pub(crate) fn points(&self) -> Vec<Sample> {
        let mut points = self.samples.clone();
        if points.last() != Some(&self.now) && self.now.decisions > 0 {
            points.push(self.now);
        }
        points
    }

    /// Decisions counted.
    pub fn decisions(&self) -> u64 {
        self.now.decisions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64) -> Record {
        serde_json::from_value(serde_json::json!({
            "seq": seq, "url": "http://a.test/", "depth": 0, "verdict": "unique",
            "bytes": 10, "status": 200,
        }))
        .unwrap()
    }

    #[test]
    fn samples_stay_bounded_and_end_on_the_totals() {
        let records: Vec<Record> = (0..100_000).map(record).collect();
        let tally = Tally::of(&records);
        let points = tally.points();
        assert!(points.len() <= MAX_SAMPLES + 1, "{}", points.len());
        assert!(points.len() > MAX_SAMPLES / 2);
        let last = points.last().unwrap();
        assert_eq!(
            (last.decisions, last.pages[0], last.bytes[0]),
            (100_000, 100_000, 1_000_000)
        );
        assert!(points.windows(2).all(|w| w[0].decisions < w[1].decisions));
        // Evenly spread: every point is a multiple of the final stride.
        let stride = tally.stride.max(1);
        assert!(
            tally
                .samples
                .iter()
                .all(|s| s.decisions.is_multiple_of(stride))
        );
    }
}
