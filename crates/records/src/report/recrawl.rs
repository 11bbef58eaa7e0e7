//! What a recrawl cost against fetching the previous job's pages whole again (`report.json`'s
//! `recrawl`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::kinds::Change;
use crate::record::Record;

/// What a recrawl cost against fetching the previous job's pages whole again (`report.json`'s
/// `recrawl`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecrawlFigures {
    /// The previous job's pages, all asked again.
    pub previous_pages: u64,
    /// Their bytes then: what fetching them whole again costs.
    pub previous_bytes: u64,
    /// Requests this recrawl made for them (each page once, retries counted in its record).
    pub asked: u64,
    /// Bytes this recrawl received for them.
    pub bytes: u64,
    /// Pages and bytes by how they came back (`other`: an answer that says nothing of the
    /// page, such as a server error).
    pub by_change: BTreeMap<String, ChangeFigures>,
    /// Pages new to this job (not the previous job's) that were fetched, and their bytes.
    pub new_pages: u64,
    /// See `new_pages`.
    pub new_bytes: u64,
    /// By host: the previous job's pages asked again, and the 304s among the answers (a host
    /// whose server honours validators answers 304 for what did not change).
    pub hosts: BTreeMap<String, HostRevisits>,
}

/// Pages and bytes of one class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeFigures {
    /// Pages.
    pub pages: u64,
    /// Bytes received for them.
    pub bytes: u64,
}

/// One host's revisits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRevisits {
    /// Pages of the previous job asked again.
    pub asked: u64,
    /// Answered 304.
    pub not_modified: u64,
}

impl RecrawlFigures {
    /// Counts one record of this job; `revisit`: its URL was the previous job's.
    pub fn add(&mut self, record: &Record, revisit: bool) {
        if record.status.is_none() {
            return;
        }
        if !revisit {
            self.new_pages += 1;
            self.new_bytes += record.bytes;
            return;
        }
        self.asked += 1;
        self.bytes += record.bytes;
        let class = record.change.map_or("other", Change::as_str);
        let figures = self.by_change.entry(class.to_string()).or_default();
        figures.pages += 1;
        figures.bytes += record.bytes;
        let host = url::Url::parse(&record.url)
            .map(|u| match (u.host_str(), u.port()) {
                (Some(host), Some(port)) => format!("{host}:{port}"),
                (host, _) => host.unwrap_or_default().to_string(),
            })
            .unwrap_or_default();
        let host = self.hosts.entry(host).or_default();
        host.asked += 1;
        host.not_modified += u64::from(record.change == Some(Change::NotModified));
    }

    /// The report's lines: cost against a full crawl, pages by class.
    pub fn summary(&self) -> String {
        let share = match self.previous_bytes {
            0 => 0.0,
            full => self.bytes as f64 * 100.0 / full as f64,
        };
        let classes: Vec<String> = Change::ALL
            .iter()
            .map(|c| c.as_str())
            .chain(["other"])
            .filter_map(|c| self.by_change.get(c).map(|f| format!("{c} {}", f.pages)))
            .collect();
        let honouring = self.hosts.values().filter(|h| h.not_modified > 0).count();
        format!(
            "recrawl: {} of the previous job's {} pages asked again, {} bytes received for them \
             ({share:.1} % of their {} bytes then); {}; {} new pages; {} of {} hosts answered 304s\n",
            self.asked,
            self.previous_pages,
            self.bytes,
            self.previous_bytes,
            classes.join(", "),
            self.new_pages,
            honouring,
            self.hosts.len()
        )
    }
}
