//! `records.jsonl`: one JSON object per URL decision, in decision order.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::RecordsError;
use crate::fates::{LinkFates, UrlFate};
use crate::kinds::{Change, Verdict};
use crate::probe::{Prediction, Probe};

/// One line of `records.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Decision order, from 0, dense.
    pub seq: u64,
    /// The canonical URL.
    pub url: String,
    /// The redirect target (for `redirect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_url: Option<String>,
    /// HTTP status; absent when nothing was fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Bytes received on the wire for this URL (headers and body, compressed size; a HEAD
    /// probe's included, see `probe`).
    pub bytes: u64,
    /// The `Content-Type` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Links followed from a seed.
    pub depth: u32,
    /// The decision.
    pub verdict: Verdict,
    /// The URL of the page this one duplicates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
    /// Simhash Hamming distance to `duplicate_of`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// Similarity to `duplicate_of` in 0..1: the LCS resemble rate when verified, else
    /// `1 - distance / 64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// The cluster: the `seq` of the first page of this content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<u64>,
    /// The page's 64-bit simhash, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simhash: Option<String>,
    /// Links found on the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outlinks: Option<u32>,
    /// What became of the page's links, each counted once under its fate and what decided
    /// it (absent when they were not followed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_fates: Option<LinkFates>,
    /// Links parked on this URL (counted under `wait` by the pages that named them), and what
    /// became of them when it was decided: fetched (it is a hub), checked, dropped, or parked
    /// again until a hub's links are decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released: Option<LinkFates>,
    /// Why this URL was requested as it was, or not at all: the one fate the link policy
    /// decided for it, what decided it (the URL rule's prediction, with its record and
    /// whether it was right), and the cheap check made before it was fetched (or instead,
    /// `unchanged`) with its answer (absent for a URL no link named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fate: Option<UrlFate>,
    /// A record written before 2026-12-07: its URL rule's prediction and its probe, as it
    /// had them, until [`Record::upgraded`] puts them in `fate`.
    #[serde(default, rename = "prediction", skip_serializing)]
    pub legacy_prediction: Option<Prediction>,
    /// See `legacy_prediction`.
    #[serde(default, rename = "probe", skip_serializing)]
    pub legacy_probe: Option<Probe>,
    /// The page's text was longer than `dedup.max_text_bytes`, this many bytes; only its
    /// first `max_text_bytes` were fingerprinted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_cut_from: Option<u64>,
    /// The page had too little text of its own to be compared (fewer than 100 characters
    /// once its host's template was removed, or fewer than 30 tokens): the characters it had.
    /// It was judged by exact key only, over its title, text and link targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub little_text: Option<u64>,
    /// Characters of the page's text removed as its host's template (blocks on most of the
    /// host's pages) before it was fingerprinted and judged: `nearcrawl compare`, which sees
    /// one page per host, keeps them, so its verdict on the same two pages may differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_chars: Option<u64>,
    /// Baseline (`--no-dedup`) crawls, and crawls with `links.record`: every in-scope URL the
    /// page links to and would follow, seen before or not; the link graph `nearcrawl
    /// what-if` replays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<String>>,
    /// The page that linked here (its `seq`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u64>,
    /// A redirect target: the page whose link the first redirect answered (its `seq`). This
    /// decision counts toward what that page's links led to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_of: Option<u64>,
    /// The page's `rel=canonical`, when it names another URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// Robots directives of the page itself (meta or X-Robots-Tag): `noindex`, `nofollow`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub robots: Vec<String>,
    /// Focused crawls: the page's relevance to the topic (0..1, the cosine of their tf-idf
    /// vectors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f32>,
    /// Focused crawls: off-topic pages in a row on the path here, this one included (0: on
    /// topic). Past `focus.tunnel` the page's links are not followed (seeds' always are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_topic: Option<u32>,
    /// Earlier attempts that failed transiently (timeouts, resets, 429, 5xx) before this
    /// outcome; each waited for the host's back-off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u8>,
    /// The body was cut at `max_body_bytes`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The page was rendered in a browser (`render.mode`), and judged and followed on what
    /// it showed (or, when the render failed, on its static HTML: `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendered: Option<Rendered>,
    /// When the response arrived (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<String>,
    /// The server address the request went to: the connection's peer when the server
    /// answered, else the address the host's name resolved to (politeness per address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The response's `ETag`, which a recrawl sends back (`If-None-Match`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The response's `Last-Modified`, which a recrawl sends back (`If-Modified-Since`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// A recrawl: how this page of the previous job came back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
    /// A recrawl, a changed page: the simhash distance to its previous capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_distance: Option<u32>,
    /// A recrawl, a changed page: its LCS resemble rate to its previous capture's text (when
    /// the previous job kept that text: it fetched the page whole and kept it as unique).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_similarity: Option<f64>,
    /// SHA-1 of the body as received (`sha1:BASE32`, as in the WARC files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_digest: Option<String>,
    /// The `WARC-Record-ID` of the record holding the page's payload: its response record,
    /// or for a revisit the record it refers to (when known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warc_record_id: Option<String>,
    /// The trap rules that stopped some of this page's links, `; `-separated (they count in
    /// `dropped` or `trapped`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trap: Option<String>,
    /// Microseconds the dedup stage took (analysis and index lookup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedup_us: Option<u64>,
    /// What went wrong, or why the URL is out of scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Record {
    /// Whether a page was fetched for this decision: a response, not a probe's head only
    /// (`unchanged`, whose bytes count but whose body was never asked for).
    pub fn fetched_page(&self) -> bool {
        self.status.is_some() && self.verdict != Verdict::Unchanged
    }

    /// A redirect whose target was queued with it (the target's record names the link it
    /// answered in `link_of`): the target.
    pub fn queued_redirect_target(&self) -> Option<&str> {
        (self.verdict == Verdict::Redirect && self.fates().count("fetch", "redirect") == 1)
            .then_some(self.final_url.as_deref())
            .flatten()
    }

    /// Where a baseline crawl's page leads: its in-scope links (`links`), then its redirect
    /// target (`final_url`).
    pub fn leads_to(&self) -> impl Iterator<Item = &str> {
        self.links
            .iter()
            .flatten()
            .map(String::as_str)
            .chain(self.final_url.as_deref())
    }

    /// The record as this version writes it: a record written before 2026-12-07 (its URL
    /// rule's `prediction` and its `probe` apart, its links counted as `queued`, `probed`,
    /// `parked`, `dropped`, `trapped`, `via_hub`, ...) with them in `fate` and counted by
    /// fate in `link_fates` and `released`, as near as the old counters tell (a link queued
    /// as new; `released` links fetched by `released`). A record of this version is returned
    /// as it is. [`read_records`] and a crawl's report read every record this way.
    pub fn upgraded(mut self) -> Record {
        let (prediction, probe) = (self.legacy_prediction.take(), self.legacy_probe.take());
        if self.fate.is_none() && (prediction.is_some() || probe.is_some()) {
            let how = |p: &Prediction| match p.fate.as_str() {
                "verify" => ("check", Some("verify")),
                "sample" => ("check", Some("sample")),
                "skip" => ("skip", None),
                _ => ("fetch", None),
            };
            let ((fate, how), by) = match &prediction {
                Some(p) => (how(p), "rule"),
                None => (("check", Some("length")), "original"),
            };
            self.fate = Some(UrlFate {
                fate: fate.to_owned(),
                by: by.to_owned(),
                how: how.map(str::to_owned),
                rule: prediction.map(|mut p| {
                    p.fate.clear();
                    p
                }),
                check: probe,
            });
        }
        let queued_by = match self.verdict {
            Verdict::Redirect => "redirect",
            Verdict::Sitemap => "sitemap",
            _ => "new",
        };
        if let Some(fates) = self.link_fates.take() {
            self.link_fates = Some(fates.upgraded(queued_by));
        }
        if let Some(released) = self.released.take() {
            self.released = Some(released.upgraded("released"));
        }
        self
    }

    /// What became of the page's links (none counted when they were not followed).
    pub fn fates(&self) -> &LinkFates {
        static NONE: LinkFates = LinkFates {
            fetch: std::collections::BTreeMap::new(),
            check: std::collections::BTreeMap::new(),
            wait: std::collections::BTreeMap::new(),
            skip: std::collections::BTreeMap::new(),
            drop: std::collections::BTreeMap::new(),
            over_cap: 0,
            raised: 0,
            matched_by: None,
            legacy: crate::fates::Legacy::NONE,
        };
        self.link_fates.as_ref().unwrap_or(&NONE)
    }

    /// The URL rule's prediction for this URL, if one named the page it copies.
    pub fn prediction(&self) -> Option<&Prediction> {
        self.fate.as_ref()?.rule.as_ref()
    }

    /// What its URL rule's prediction was used for ([`UrlFate::predicted`]: `check`,
    /// `verify`, `sample`, `skip`), if a rule predicted it.
    pub fn predicted(&self) -> Option<&'static str> {
        self.fate.as_ref()?.predicted()
    }

    /// The cheap check made before this URL was fetched (or instead), if one was asked.
    pub fn probe(&self) -> Option<&Probe> {
        self.fate.as_ref()?.check.as_ref()
    }

    /// A record with only the always-present fields set.
    pub fn new(seq: u64, url: String, depth: u32, verdict: Verdict) -> Record {
        Record {
            seq,
            url,
            final_url: None,
            status: None,
            bytes: 0,
            content_type: None,
            depth,
            verdict,
            duplicate_of: None,
            distance: None,
            similarity: None,
            cluster: None,
            simhash: None,
            outlinks: None,
            link_fates: None,
            released: None,
            fate: None,
            legacy_prediction: None,
            legacy_probe: None,
            text_cut_from: None,
            little_text: None,
            template_chars: None,
            links: None,
            parent: None,
            link_of: None,
            canonical: None,
            robots: Vec::new(),
            relevance: None,
            off_topic: None,
            retries: None,
            truncated: false,
            rendered: None,
            fetched_at: None,
            address: None,
            etag: None,
            last_modified: None,
            change: None,
            change_distance: None,
            change_similarity: None,
            warc_record_id: None,
            payload_digest: None,
            dedup_us: None,
            trap: None,
            error: None,
        }
    }
}

/// Reads a job's `records.jsonl` at `path` a line at a time, handing each record to `each`:
/// memory stays flat whatever the crawl's size. A line that does not parse is an error
/// naming `path:line`.
pub fn read_records(path: &Path, each: &mut dyn FnMut(Record)) -> Result<(), RecordsError> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| RecordsError::io(path, e))?;
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| RecordsError::io(path, e))?;
        let record: Record = serde_json::from_str(&line).map_err(|source| RecordsError::Line {
            path: path.to_path_buf(),
            line: i + 1,
            source,
        })?;
        each(record.upgraded());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_serialise_as_documented() {
        let mut r = Record::new(3, "http://a/".into(), 1, Verdict::RobotsDisallowed);
        r.error = Some("disallowed".into());
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"seq":3,"url":"http://a/","bytes":0,"depth":1,"verdict":"robots-disallowed","error":"disallowed"}"#
        );
        let back: Record = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn a_record_written_before_the_one_fate_reads_back_upgraded() {
        let old = r#"{"seq":5,"url":"http://m/x","bytes":9,"depth":2,"verdict":"near","link_fates":{"queued":3,"dropped":2,"over_cap":1},"released":{"followed":1,"dropped":0},"probe":{"counterpart":"http://o/x","bytes":0},"prediction":{"fate":"check","rule":"r","rule_id":0,"counterpart":"http://o/x","support":3,"checked":0,"confirmed":0}}"#;
        let record: Record = serde_json::from_str(old).unwrap();
        assert_eq!(record.fates().over_cap, 1);
        assert_eq!(
            (record.fates().queued(), record.fates().total("drop")),
            (0, 0)
        );
        assert_eq!(record.released.as_ref().map(|r| r.total("fetch")), Some(0));
        assert!(record.fate.is_none() && record.prediction().is_none());
    }
}

/// A page's render (`Record::rendered`): how long it took and what its requests besides its
/// document cost; every one was asked of the crawler under the crawl's rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rendered {
    /// Why it was rendered (`render.mode`: "always", or in `auto` what its HTML showed), or
    /// why a page `auto` would render was not (its host's renders added nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Milliseconds from opening its tab to reading its DOM.
    pub ms: u64,
    /// Requests it made besides its document, fetched or not.
    pub requests: u32,
    /// Of those, refused: by the crawl's rules (scope, the private-address policy), or past
    /// `render.max_subresources`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub refused: u32,
    /// Bytes of the responses the crawler fetched for it.
    pub bytes: u64,
    /// Whether its static response carried the text the browser showed (its script's data
    /// embedded in it). `false`: the text came by the script's own requests, so on its host
    /// a cheap check of a static response (its length, a sample) tells nothing of a page's
    /// text, and none decides a page there `unchanged`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_text: Option<bool>,
    /// Why it was not rendered (the page is judged on its static HTML then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
