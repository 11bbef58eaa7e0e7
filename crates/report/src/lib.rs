//! A crawl's HTML report (`OUT/report.html`): one self-contained file, inline SVG and CSS, no
//! script and no network, so it opens anywhere and prints. What it shows:
//!
//! - the summary figures of `report.json`, and the what-if figures when `what-if.json` is
//!   there;
//! - pages and bytes over the crawl, cumulative, by verdict (unique, duplicate, other), and
//!   the outlinks duplicates' pages did not lead to;
//! - histograms of the duplicates' Hamming distance and LCS similarity, and of the dedup
//!   stage's time per page;
//! - a recrawl's cost against fetching the previous job's pages whole, its pages by how they
//!   came back, and the hosts that answered 304s (`report.json`'s `recrawl`);
//! - the last run's time per page by pipeline stage (`report.json`'s `run_stages`);
//! - the largest duplicate clusters with their URLs, a table of hosts (the server address
//!   each went to, pages, bytes, duplicates, robots refusals, errors) and one of server
//!   addresses (names, pages, bytes, failed or throttled requests, back-offs).
//!
//! [`render`] is pure (records in, HTML out); [`write`] reads a job's directory and writes
//! the file.
//!
//! ```
//! use nearcrawl_report::{Inputs, render};
//!
//! let html = render(&Inputs::default());
//! assert!(html.starts_with("<!DOCTYPE html>"));
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use nearcrawl_records::{Report, StageTime, WhatIf};

mod corpus;
mod svg;
mod tally;

use crate::corpus::{corpus_stages, corpus_summary, over_the_corpus};
use crate::tally::{Address, Cluster, Group, Host, Sample};
pub use crate::tally::{MAX_SAMPLES, Tally};

/// What the report is drawn from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// The job's report (`report.json`).
    pub report: Option<Report>,
    /// The records, tallied in decision order (`records.jsonl`).
    pub tally: Tally,
    /// The what-if of a baseline crawl (`what-if.json`), when there is one.
    pub what_if: Option<WhatIf>,
    /// A corpus dedup run's summary (`summary.json` of `nearcrawl dedup`): the records are
    /// a corpus's pages in corpus order, not a crawl's decisions.
    pub corpus: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Why a report could not be written.
#[derive(Debug)]
pub enum ReportError {
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// `report.json` or `what-if.json` does not parse.
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: serde_json::Error,
    },
    /// `records.jsonl` could not be read, or a line of it does not parse (the error names
    /// `file:line`).
    Records(nearcrawl_records::RecordsError),
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ReportError::Parse { path, source } => write!(f, "{}: {source}", path.display()),
            ReportError::Records(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ReportError {}

/// Reads a job's outputs in `dir` and writes `dir/report.html`; returns its path.
pub fn write(dir: &Path) -> Result<PathBuf, ReportError> {
    let inputs = read(dir)?;
    let path = dir.join("report.html");
    std::fs::write(&path, render(&inputs)).map_err(|source| ReportError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// A job's outputs: `records.jsonl` (required, read a line at a time: memory stays flat
/// whatever the crawl's size), `report.json` and `what-if.json` (if there).
pub fn read(dir: &Path) -> Result<Inputs, ReportError> {
    let mut tally = Tally::default();
    nearcrawl_records::read_records(&dir.join("records.jsonl"), &mut |r| tally.add(&r))
        .map_err(ReportError::Records)?;
    Ok(Inputs {
        report: read_json(&dir.join("report.json"))?,
        tally,
        what_if: read_json(&dir.join("what-if.json"))?,
        corpus: read_json(&dir.join("summary.json"))?,
    })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, ReportError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| ReportError::Parse {
                    path: path.to_path_buf(),
                    source,
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ReportError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The whole page.
pub fn render(inputs: &Inputs) -> String {
    let mut html = String::new();
    html.push_str(concat!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<title>nearcrawl report</title><style>",
        "body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222}",
        "h1,h2{font-weight:600}table{border-collapse:collapse;margin:1em 0}",
        "td,th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:right}",
        "td:first-child,th:first-child{text-align:left}svg{display:block;margin:1em 0}",
        ".url{font-family:monospace;font-size:12px;text-align:left;word-break:break-all}",
        "</style></head><body>\n",
    ));
    match &inputs.corpus {
        Some(corpus) => {
            html.push_str("<h1>nearcrawl dedup report</h1>\n");
            corpus_summary(&mut html, corpus);
            over_the_corpus(&mut html, &inputs.tally);
            duplicates(&mut html, &inputs.tally);
            stages(&mut html, &corpus_stages(corpus));
        }
        None => {
            html.push_str("<h1>nearcrawl report</h1>\n");
            summary(&mut html, inputs);
            over_the_crawl(&mut html, &inputs.tally);
            duplicates(&mut html, &inputs.tally);
            if let Some(report) = &inputs.report {
                if let Some(figures) = &report.recrawl {
                    recrawl(&mut html, figures);
                }
                stages(&mut html, &report.run_stages);
            }
        }
    }
    clusters(&mut html, &inputs.tally);
    url_rules(&mut html, &inputs.tally);
    hosts(&mut html, &inputs.tally);
    let report = inputs.report.as_ref();
    addresses(
        &mut html,
        &inputs.tally,
        report.map_or(&[], |r| &r.addresses),
    );
    html.push_str("</body></html>\n");
    html
}

fn summary(html: &mut String, inputs: &Inputs) {
    html.push_str("<h2>Summary</h2>\n<table>");
    let mut row = |name: &str, value: String| {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(name),
            escape(&value)
        );
    };
    match &inputs.report {
        Some(r) => {
            row("decisions", r.decisions.to_string());
            row("pages fetched", r.pages_fetched.to_string());
            row("bytes fetched", r.bytes_fetched.to_string());
            row("exact duplicates", r.exact_duplicates.to_string());
            row("near duplicates", r.near_duplicates.to_string());
            row("bytes spent on duplicates", r.duplicate_bytes.to_string());
            row(
                "outlinks dropped (never fetched)",
                r.dropped_never_fetched.to_string(),
            );
            row(
                "bandwidth saved, lower bound (pages beyond the dropped ones unknown)",
                format!("{} bytes", r.estimated_bytes_saved),
            );
            row(
                "dedup stage per page: median / p99",
                format!(
                    "{} / {} us",
                    r.dedup_timing.median_us, r.dedup_timing.p99_us
                ),
            );
            let index = &r.fingerprint_index;
            if index.entries > 0 {
                row(
                    "fingerprint index (held in memory per kept page)",
                    format!(
                        "{} fingerprints in {} tables, {} bytes ({:.0} each)",
                        index.entries, index.tables, index.heap_bytes, index.bytes_per_entry
                    ),
                );
            }
        }
        None => row("records", inputs.tally.decisions().to_string()),
    }
    if let Some(w) = &inputs.what_if {
        row(
            "what-if: baseline pages / bytes",
            format!("{} / {}", w.baseline_pages, w.baseline_bytes),
        );
        row(
            "what-if: pages / bytes saved (exact)",
            format!("{} / {}", w.pages_saved, w.bytes_saved),
        );
        row(
            "what-if: unique pages reachable only through duplicates",
            w.unique_pages_lost.to_string(),
        );
    }
    html.push_str("</table>\n");
}

fn pages(sample: &Sample, group: usize) -> u64 {
    sample.pages[group]
}

fn bytes(sample: &Sample, group: usize) -> u64 {
    sample.bytes[group]
}

/// A chart of what `value` counts (pages or bytes of a group), cumulative, by group.
fn cumulative(tally: &Tally, title: &str, label: &str, value: fn(&Sample, usize) -> u64) -> String {
    let points = tally.points();
    let x: Vec<f64> = points.iter().map(|p| p.decisions as f64).collect();
    let series: Vec<svg::Series> = Group::ALL
        .iter()
        .enumerate()
        .map(|(i, g)| svg::Series {
            name: g.name(),
            colour: g.colour(),
            values: points.iter().map(|p| value(p, i) as f64).collect(),
        })
        .collect();
    svg::lines(title, label, &x, &series)
}

/// Cumulative pages and bytes by group, over the decisions in order.
fn over_the_crawl(html: &mut String, tally: &Tally) {
    html.push_str("<h2>Over the crawl</h2>\n");
    let points = tally.points();
    let x: Vec<f64> = points.iter().map(|p| p.decisions as f64).collect();
    let label = format!("decisions in order (0 to {})", tally.decisions());
    html.push_str(&cumulative(
        tally,
        "Pages fetched, cumulative, by verdict",
        &label,
        pages,
    ));
    html.push_str(&cumulative(
        tally,
        "Bytes fetched, cumulative, by verdict",
        &label,
        bytes,
    ));
    html.push_str(&svg::lines(
        "Outlinks of duplicates not followed, cumulative (what dedup saved, in URLs)",
        &label,
        &x,
        &[svg::Series {
            name: "outlinks dropped",
            colour: Group::Duplicate.colour(),
            values: points.iter().map(|p| p.dropped as f64).collect(),
        }],
    ));
    if points.last().is_some_and(|p| p.scored > 0) {
        // A focused crawl: its own harvest curve, as far as its relevance tells.
        html.push_str(&svg::lines(
            "Focused crawl: pages scored against the topic and pages on topic (relevance at \
             least focus.threshold), cumulative",
            &label,
            &x,
            &[
                svg::Series {
                    name: "pages scored",
                    colour: Group::Unique.colour(),
                    values: points.iter().map(|p| p.scored as f64).collect(),
                },
                svg::Series {
                    name: "on topic",
                    colour: Group::Duplicate.colour(),
                    values: points.iter().map(|p| p.on_topic as f64).collect(),
                },
            ],
        ));
    }
}

/// Histograms of the duplicates' distance and similarity, and of dedup time.
fn duplicates(html: &mut String, tally: &Tally) {
    html.push_str("<h2>Duplicates</h2>\n");
    let max_distance = tally.distance.keys().next_back().copied().unwrap_or(0);
    let labels: Vec<String> = (0..=max_distance).map(|d| d.to_string()).collect();
    let counts: Vec<u64> = (0..=max_distance)
        .map(|d| tally.distance.get(&d).copied().unwrap_or(0))
        .collect();
    html.push_str(&svg::bars(
        "Hamming distance of near duplicates to their originals (bits of 64)",
        &labels,
        &counts,
    ));
    let labels: Vec<String> = (0..10).map(|i| format!("{:.1}", i as f64 / 10.0)).collect();
    html.push_str(&svg::bars(
        "LCS similarity of near duplicates to their originals",
        &labels,
        &tally.similarity,
    ));
    let last = tally.dedup_time.iter().rposition(|n| *n > 0).unwrap_or(0);
    let labels: Vec<String> = (0..=last).map(|i| format!("{}", 1u64 << i)).collect();
    html.push_str(&svg::bars(
        "Dedup stage time per page (microseconds, at least)",
        &labels,
        &tally.dedup_time[..=last],
    ));
}

/// The last run's time per page by stage, when the report has it.
fn stages(html: &mut String, stages: &[StageTime]) {
    if stages.is_empty() {
        return;
    }
    html.push_str("<h2>Where the time went</h2>\n");
    let labels: Vec<String> = stages.iter().map(|s| s.stage.clone()).collect();
    let micros: Vec<u64> = stages
        .iter()
        .map(|s| s.per_page_us.round() as u64)
        .collect();
    html.push_str(&svg::bars(
        "Time per page by stage in the last run (microseconds; fetch is wall time per request)",
        &labels,
        &micros,
    ));
}

/// The largest clusters: an original and the duplicates of it.
fn clusters(html: &mut String, tally: &Tally) {
    let mut largest: Vec<(&u64, &Cluster)> = tally.clusters.iter().collect();
    largest.sort_by(|a, b| b.1.size.cmp(&a.1.size).then(a.0.cmp(b.0)));
    html.push_str(
        "<h2>Largest duplicate clusters</h2>\n<table><tr><th>original</th><th>duplicates</th></tr>",
    );
    for (_, cluster) in largest.iter().take(10) {
        let original = cluster.original.as_deref().unwrap_or("(not recorded)");
        let _ = write!(
            html,
            "<tr><td class=\"url\">{}</td><td>{}</td></tr>",
            escape(original),
            cluster.size
        );
        for (url, verdict) in &cluster.members {
            let _ = write!(
                html,
                "<tr><td class=\"url\">&nbsp;&nbsp;{}</td><td>{verdict}</td></tr>",
                escape(url)
            );
        }
    }
    html.push_str("</table>\n");
}

/// Rules shown at most.
const RULES_SHOWN: usize = 20;

/// The URL rewrite rules the crawl's duplicates teach, replayed in decision order: each
/// page predicted by the rules learned before it, the prediction checked against its verdict.
fn url_rules(html: &mut String, tally: &Tally) {
    let rules = tally.rules.report();
    let (right, wrong): (u64, u64) = rules.iter().fold((0, 0), |(r, w), rule| {
        (r + rule.bytes_confirmed, w + rule.bytes_wrong)
    });
    let _ = write!(
        html,
        concat!(
            "<h2>URL rules learned</h2>\n<p>Rewrite rules from a duplicate's URL to its ",
            "original's, learned from the pairs this crawl judged (the words two URLs share ",
            "become variables; a parameter only the duplicate has may take any value), ",
            "replayed in decision order: each fetched page is predicted by the rules learned ",
            "before it, when they name a page fetched already, and the prediction checked ",
            "against its verdict. {} rules; pages predicted right {} bytes, wrong {} bytes ",
            "(what trusting every prediction would have saved, and lost).</p>\n",
            "<table><tr><th>rule</th><th>support</th><th>predicted</th><th>right</th>",
            "<th>bytes right</th><th>bytes wrong</th></tr>"
        ),
        rules.len(),
        right,
        wrong
    );
    for rule in rules.iter().take(RULES_SHOWN) {
        let _ = write!(
            html,
            "<tr><td class=\"url\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&rule.rule),
            rule.stats.support,
            rule.stats.checked,
            rule.stats.confirmed,
            rule.bytes_confirmed,
            rule.bytes_wrong
        );
    }
    html.push_str("</table>\n");
}

/// Pages, bytes, duplicates, robots refusals and errors per host, the costliest first, with
/// the server address its requests went to.
fn hosts(html: &mut String, tally: &Tally) {
    let mut rows: Vec<(&String, &Host)> = tally.hosts.iter().collect();
    rows.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(b.0)));
    html.push_str(concat!(
        "<h2>Hosts</h2>\n<table><tr><th>host</th><th>address</th><th>pages</th><th>bytes</th>",
        "<th>duplicates</th><th>robots refusals</th><th>errors</th></tr>"
    ));
    for (host, h) in rows {
        let address = match (h.address(), h.addresses.len()) {
            (None, _) => String::new(),
            (Some(address), 1) => address.to_string(),
            (Some(address), n) => format!("{address} (+{})", n - 1),
        };
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(host),
            escape(&address),
            h.pages,
            h.bytes,
            h.duplicates,
            h.robots,
            h.errors
        );
    }
    html.push_str("</table>\n");
}

/// Server addresses (names sharing a server share its politeness budget): the host names on
/// each, pages, bytes, failed or throttled requests, and how often this run backed off the
/// address (`backoffs`, from `report.json`), the costliest first. Absent when no record names
/// an address.
fn addresses(html: &mut String, tally: &Tally, backoffs: &[nearcrawl_records::AddressSummary]) {
    if tally.addresses.is_empty() {
        return;
    }
    let mut rows: Vec<(&String, &Address)> = tally.addresses.iter().collect();
    rows.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(b.0)));
    html.push_str(concat!(
        "<h2>Addresses</h2>\n<table><tr><th>address</th><th>names</th><th>pages</th>",
        "<th>bytes</th><th>failed or throttled</th><th>back-offs</th></tr>"
    ));
    for (address, a) in rows {
        let backed_off = backoffs
            .iter()
            .find(|b| &b.address == address)
            .map_or(0, |b| b.backoffs);
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(address),
            a.names.len(),
            a.pages,
            a.bytes,
            a.failures,
            backed_off
        );
    }
    html.push_str("</table>\n");
}

/// A recrawl's cost against fetching the previous job's pages whole again, its pages by how
/// they came back, and which hosts answered conditional requests with 304s.
fn recrawl(html: &mut String, figures: &nearcrawl_records::RecrawlFigures) {
    let share = match figures.previous_bytes {
        0 => 0.0,
        full => figures.bytes as f64 * 100.0 / full as f64,
    };
    let _ = write!(
        html,
        "<h2>Recrawl</h2>\n<p>{} of the previous job's {} pages asked again with their \
         validators: {} bytes received for them, {share:.1} % of the {} bytes they cost then. \
         {} new pages fetched ({} bytes).</p>\n",
        figures.asked,
        figures.previous_pages,
        figures.bytes,
        figures.previous_bytes,
        figures.new_pages,
        figures.new_bytes
    );
    html.push_str("<table><tr><th>came back</th><th>pages</th><th>bytes</th></tr>");
    let classes = nearcrawl_records::Change::ALL.iter().map(|c| c.as_str());
    for class in classes.chain(["other"]) {
        if let Some(f) = figures.by_change.get(class) {
            let _ = write!(
                html,
                "<tr><td>{class}</td><td>{}</td><td>{}</td></tr>",
                f.pages, f.bytes
            );
        }
    }
    html.push_str(
        "</table>\n<table><tr><th>host</th><th>pages asked again</th><th>304 answers</th></tr>",
    );
    for (host, h) in &figures.hosts {
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(host),
            h.asked,
            h.not_modified
        );
    }
    html.push_str("</table>\n");
}

/// Text for HTML content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
