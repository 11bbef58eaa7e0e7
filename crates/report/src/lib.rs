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

mod svg;
mod tally;

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

/// A corpus run's figures: every number of its summary.
fn corpus_summary(html: &mut String, corpus: &serde_json::Map<String, serde_json::Value>) {
    html.push_str("<h2>Summary</h2>\n<table>");
    for (name, value) in corpus {
        let value = match value {
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(x) if n.is_f64() => format!("{x:.2}"),
                _ => n.to_string(),
            },
            serde_json::Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(", "),
            _ => continue,
        };
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(&name.replace('_', " ")),
            escape(&value)
        );
    }
    html.push_str("</table>\n");
}

/// A corpus run's time per page by stage, from its summary's `stage_nanos`.
fn corpus_stages(corpus: &serde_json::Map<String, serde_json::Value>) -> Vec<StageTime> {
    let pages = corpus
        .get("pages")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
        .max(1.0);
    corpus
        .get("stage_nanos")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(stage, nanos)| {
            let nanos = nanos.as_f64()?;
            Some(StageTime {
                stage: stage.clone(),
                total_ms: nanos / 1e6,
                per_page_us: nanos / 1e3 / pages,
            })
        })
        .collect()
}

/// Cumulative pages and bytes by verdict, over a corpus in order.
fn over_the_corpus(html: &mut String, tally: &Tally) {
    html.push_str("<h2>Over the corpus</h2>\n");
    let label = format!("pages in corpus order (0 to {})", tally.decisions());
    html.push_str(&cumulative(
        tally,
        "Pages, cumulative, by verdict",
        &label,
        pages,
    ));
    html.push_str(&cumulative(
        tally,
        "Bytes, cumulative, by verdict",
        &label,
        bytes,
    ));
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
mod tests {
    use super::*;
    use nearcrawl_records::{Record, Verdict};

    fn record(seq: u64, url: &str, verdict: Verdict) -> Record {
        let mut json = serde_json::json!({
            "seq": seq, "url": url, "depth": 1, "verdict": verdict.as_str(), "bytes": 1000,
            "status": 200, "dedup_us": 100 + seq * 50,
        });
        if verdict.is_duplicate() {
            json["cluster"] = 0.into();
            json["duplicate_of"] = "http://a.test/".into();
            json["distance"] = (seq % 4).into();
            json["similarity"] = serde_json::json!(0.9);
            json["dropped"] = 2.into();
        }
        serde_json::from_value(json).unwrap()
    }

    /// Four records; a.test and b.test on one server, the robots refusal went nowhere.
    fn crawl() -> Vec<Record> {
        let mut records = vec![
            record(0, "http://a.test/", Verdict::Unique),
            record(1, "http://a.test/copy?x=<b>", Verdict::Near),
            record(2, "http://b.test/copy", Verdict::Exact),
            record(3, "http://b.test/private", Verdict::RobotsDisallowed),
        ];
        for record in &mut records[..3] {
            record.address = Some("192.0.2.1".into());
        }
        records
    }

    #[test]
    fn the_url_rules_a_mirror_teaches_are_listed_with_what_they_predicted() {
        let mut records = Vec::new();
        for n in 0..4 {
            let mut page = record(n, &format!("http://a.test/a/{n}.html"), Verdict::Unique);
            page.cluster = Some(n);
            records.push(page);
        }
        for n in 0..4 {
            let mut copy = record(4 + n, &format!("http://m.test/story/{n}/"), Verdict::Near);
            copy.duplicate_of = Some(format!("http://a.test/a/{n}.html"));
            copy.cluster = Some(n);
            records.push(copy);
        }
        let html = render(&Inputs {
            tally: Tally::of(&records),
            ..Inputs::default()
        });
        let section = &html[html.find("<h2>URL rules learned</h2>").unwrap()..];
        assert!(
            section.contains("1 rules; pages predicted right 3000 bytes, wrong 0 bytes"),
            "{section}"
        );
        assert!(section.contains(concat!(
            "<tr><td class=\"url\">http://m.test/story/{1}/ -&gt; http://a.test/a/{1}.html</td>",
            "<td>4</td><td>3</td><td>3</td><td>3000</td><td>0</td></tr>"
        )));
    }

    #[test]
    fn a_focused_crawl_gets_its_harvest_curve() {
        let plain = render(&Inputs {
            tally: Tally::of(&crawl()),
            ..Inputs::default()
        });
        assert!(!plain.contains("Focused crawl"));
        let mut records = crawl();
        for (r, (relevance, run)) in records.iter_mut().zip([(0.4, 0), (0.05, 1), (0.3, 0)]) {
            r.relevance = Some(relevance);
            r.off_topic = Some(run);
        }
        let tally = Tally::of(&records);
        let last = tally.points().last().cloned().unwrap();
        assert_eq!((last.scored, last.on_topic), (3, 2));
        let html = render(&Inputs {
            tally,
            ..Inputs::default()
        });
        assert!(html.contains("Focused crawl: pages scored"));
        assert_eq!(html.matches("<svg role=\"img\"").count(), 7);
    }

    #[test]
    fn a_corpus_run_is_reported_as_a_corpus() {
        let summary = serde_json::json!({
            "inputs": ["a.warc.gz", "b.jsonl"],
            "pages": 4,
            "near": 1,
            "pages_per_second": 1234.5678,
            "stage_nanos": {"parse": 8000, "tokenize": 4000},
        });
        let html = render(&Inputs {
            tally: Tally::of(&crawl()),
            corpus: summary.as_object().cloned(),
            ..Inputs::default()
        });
        assert!(html.contains("<h1>nearcrawl dedup report</h1>"));
        assert!(html.contains("<h2>Over the corpus</h2>") && !html.contains("Over the crawl"));
        assert!(
            !html.contains("Outlinks of duplicates"),
            "a corpus has no links to follow"
        );
        assert!(html.contains("<tr><td>inputs</td><td>a.warc.gz, b.jsonl</td></tr>"));
        assert!(html.contains("<tr><td>pages per second</td><td>1234.57</td></tr>"));
        // Time per page by stage, from the summary's nanoseconds over its pages.
        assert!(html.contains("<h2>Where the time went</h2>"));
        assert!(
            html.contains(">parse<") && html.contains(">tokenize<"),
            "{html}"
        );
        assert!(html.contains("Largest duplicate clusters"));
    }

    #[test]
    fn every_section_and_chart_is_drawn_from_the_records() {
        let html = render(&Inputs {
            tally: Tally::of(&crawl()),
            ..Inputs::default()
        });
        for section in [
            "Summary",
            "Over the crawl",
            "Duplicates",
            "Largest duplicate clusters",
            "Hosts",
        ] {
            assert!(html.contains(&format!("<h2>{section}</h2>")), "{section}");
        }
        assert_eq!(html.matches("<svg role=\"img\"").count(), 6);
        assert_eq!(html.matches("class=\"series\"").count(), 3 + 3 + 1);
        assert!(html.matches("class=\"bar\"").count() >= 4 + 10);
        assert!(!html.contains("<script"), "no script");
        assert!(
            html.contains("http://a.test/copy?x=&lt;b&gt;"),
            "URLs escaped"
        );
        // The cluster of page 0: its original and both duplicates.
        let clusters = &html[html.find("Largest duplicate clusters").unwrap()..];
        assert!(clusters.contains("<td class=\"url\">http://a.test/</td><td>2</td>"));
        // Hosts: a.test has a near duplicate, b.test an exact one and a robots refusal.
        let hosts = &html[html.find("<h2>Hosts</h2>").unwrap()..];
        assert!(
            hosts.contains(
                "<tr><td>a.test</td><td>192.0.2.1</td><td>2</td><td>2000</td><td>1</td><td>0</td><td>0</td></tr>"
            ),
            "{hosts}"
        );
        assert!(
            hosts.contains(
                "<tr><td>b.test</td><td>192.0.2.1</td><td>2</td><td>2000</td><td>1</td><td>1</td><td>0</td></tr>"
            ),
            "{hosts}"
        );
    }

    #[test]
    fn addresses_gather_their_names_with_the_run_s_back_offs() {
        let mut records = crawl();
        let mut v6 = record(4, "http://c.test/", Verdict::Error);
        v6.status = None;
        v6.retries = Some(2);
        v6.address = Some("2001:db8:0:1::5".into());
        records.push(v6);
        let backoffs = [nearcrawl_records::AddressSummary {
            address: "2001:db8:0:1::/64".into(),
            names: 1,
            backoffs: 1,
        }];
        let mut html = String::new();
        addresses(&mut html, &Tally::of(&records), &backoffs);
        assert!(
            html.contains(
                "<tr><td>192.0.2.1</td><td>2</td><td>3</td><td>3000</td><td>0</td><td>0</td></tr>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<tr><td>2001:db8:0:1::/64</td><td>1</td><td>0</td><td>0</td><td>3</td><td>1</td></tr>"),
            "{html}"
        );
        let mut none = String::new();
        addresses(&mut none, &Tally::of(&records[3..4]), &[]);
        assert!(
            none.is_empty(),
            "no section when no record names an address"
        );
    }

    #[test]
    fn a_recrawl_s_cost_and_classes_are_drawn() {
        let mut figures = nearcrawl_records::RecrawlFigures {
            previous_pages: 20,
            previous_bytes: 200_000,
            asked: 20,
            bytes: 30_000,
            new_pages: 1,
            new_bytes: 9_000,
            ..Default::default()
        };
        let classes = [
            ("not-modified", 17, 3_000),
            ("changed", 2, 27_000),
            ("gone", 1, 0),
        ];
        for (class, pages, bytes) in classes {
            let f = nearcrawl_records::ChangeFigures { pages, bytes };
            figures.by_change.insert(class.to_string(), f);
        }
        let host = nearcrawl_records::HostRevisits {
            asked: 20,
            not_modified: 17,
        };
        figures.hosts.insert("docs.test".into(), host);
        let mut html = String::new();
        recrawl(&mut html, &figures);
        assert!(html.contains("15.0 % of the 200000 bytes"), "{html}");
        assert!(html.contains("<tr><td>changed</td><td>2</td><td>27000</td></tr>"));
        assert!(html.contains("<tr><td>docs.test</td><td>20</td><td>17</td></tr>"));
        let order: Vec<usize> = ["not-modified", "changed", "gone"]
            .iter()
            .map(|c| html.find(&format!("<td>{c}</td>")).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "in class order");
    }

    #[test]
    fn the_time_by_stage_is_drawn_when_the_report_has_it() {
        let mut html = String::new();
        stages(&mut html, &[]);
        assert!(html.is_empty(), "no section without figures");
        let times: Vec<StageTime> = ["fetch", "parse", "verify"]
            .iter()
            .zip([250.4, 12.0, 150.6])
            .map(|(stage, us)| StageTime {
                stage: stage.to_string(),
                total_ms: us,
                per_page_us: us,
            })
            .collect();
        stages(&mut html, &times);
        assert!(html.contains("<h2>Where the time went</h2>"));
        assert_eq!(html.matches("class=\"bar\"").count(), 3);
        assert!(html.contains("<title>verify: 151</title>"), "{html}");
    }

    #[test]
    fn a_job_directory_becomes_report_html_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let lines: Vec<String> = crawl()
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        std::fs::write(dir.path().join("records.jsonl"), lines.join("\n") + "\n").unwrap();
        let path = write(dir.path()).unwrap();
        let html = std::fs::read_to_string(&path).unwrap();
        assert!(html.contains("<td>records</td><td>4</td>"));
        std::fs::write(dir.path().join("records.jsonl"), "{\"seq\": 0}\nnot json\n").unwrap();
        let err = write(dir.path()).unwrap_err().to_string();
        assert!(err.contains("records.jsonl:1:"), "{err}");
    }
}
