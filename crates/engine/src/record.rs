//! The crawler's records (`nearcrawl_records::Record`): what a decision sets ([`Decision`]),
//! and the record made of it and the fetch's facts for a queued URL.

use nearcrawl_fetch::{FetchFailure, Fetched, Validators};
use nearcrawl_records::{LinkFates, Prediction, Record, UrlFate, Verdict, rfc3339};
use nearcrawl_store::QueuedUrl;

/// What was decided about a response beyond what the fetch itself says: the fields of its
/// record that a decision sets. Each step (redirect, sitemap, page) builds one, and the record
/// is made once from it and the response ([`Record::response`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    pub(crate) verdict: Verdict,
    pub(crate) error: Option<String>,
    pub(crate) final_url: Option<String>,
    pub(crate) duplicate_of: Option<String>,
    pub(crate) distance: Option<u32>,
    pub(crate) similarity: Option<f64>,
    pub(crate) cluster: Option<u64>,
    pub(crate) simhash: Option<String>,
    pub(crate) outlinks: Option<u32>,
    pub(crate) link_fates: Option<LinkFates>,
    pub(crate) text_cut_from: Option<u64>,
    pub(crate) little_text: Option<u64>,
    pub(crate) template_chars: Option<u64>,
    pub(crate) links: Option<Vec<String>>,
    pub(crate) canonical: Option<String>,
    pub(crate) robots: Vec<String>,
    pub(crate) relevance: Option<f32>,
    pub(crate) off_topic: Option<u32>,
    pub(crate) payload_digest: Option<String>,
    pub(crate) warc_record_id: Option<String>,
    pub(crate) dedup_us: Option<u64>,
    pub(crate) trap: Option<String>,
    pub(crate) prediction: Option<Prediction>,
    pub(crate) rendered: Option<nearcrawl_records::Rendered>,
}

impl Decision {
    /// A decision with this verdict and nothing else to say yet.
    pub(crate) fn new(verdict: Verdict) -> Decision {
        Decision {
            verdict,
            error: None,
            final_url: None,
            duplicate_of: None,
            distance: None,
            similarity: None,
            cluster: None,
            simhash: None,
            outlinks: None,
            link_fates: None,
            text_cut_from: None,
            little_text: None,
            template_chars: None,
            links: None,
            canonical: None,
            robots: Vec::new(),
            relevance: None,
            off_topic: None,
            payload_digest: None,
            warc_record_id: None,
            dedup_us: None,
            trap: None,
            prediction: None,
            rendered: None,
        }
    }

    /// What became of the page's links, counted from none: a decision that follows a page's
    /// links (or a redirect's target) writes them here.
    pub(crate) fn fates_mut(&mut self) -> &mut LinkFates {
        self.link_fates.get_or_insert_with(LinkFates::default)
    }

    /// A decision with this verdict, for this reason.
    pub(crate) fn because(verdict: Verdict, reason: String) -> Decision {
        Decision {
            error: Some(reason),
            ..Decision::new(verdict)
        }
    }
}

/// The address a response came from.
fn peer(page: &Fetched) -> Option<String> {
    page.remote_addr.map(|a| a.ip().to_string())
}

/// The record of a queued URL that got a response: the fetch's facts and the decision.
pub(crate) fn response(seq: u64, entry: &QueuedUrl, page: &Fetched, d: Decision) -> Record {
    let validators = Validators::of(page);
    Record {
        final_url: d.final_url,
        status: Some(page.status),
        bytes: page.wire_bytes + probe_bytes(entry),
        content_type: page.content_type().map(str::to_owned),
        duplicate_of: d.duplicate_of,
        distance: d.distance,
        similarity: d.similarity,
        cluster: d.cluster,
        simhash: d.simhash,
        outlinks: d.outlinks,
        link_fates: d.link_fates,
        released: None,
        fate: url_fate(entry, d.verdict, d.prediction),
        text_cut_from: d.text_cut_from,
        little_text: d.little_text,
        template_chars: d.template_chars,
        links: d.links,
        parent: entry.parent,
        link_of: entry.link_of,
        canonical: d.canonical,
        robots: d.robots,
        relevance: d.relevance,
        off_topic: d.off_topic,
        retries: retries(entry),
        truncated: page.truncated,
        rendered: d.rendered,
        fetched_at: Some(rfc3339(page.started)),
        address: peer(page),
        etag: validators.etag,
        last_modified: validators.last_modified,
        change: None,
        change_distance: None,
        change_similarity: None,
        payload_digest: d.payload_digest,
        warc_record_id: d.warc_record_id,
        dedup_us: d.dedup_us,
        trap: d.trap,
        error: d.error,
        ..Record::new(seq, entry.url.clone(), entry.depth, d.verdict)
    }
}

/// The record of a queued URL its probe found unchanged (`page`, the answer that said so:
/// the HEAD's, or the sample's; both in its `probe`): decided without a GET, so it names no
/// link; `prediction`: the link policy's, checked.
pub(crate) fn unchanged(
    seq: u64,
    entry: &QueuedUrl,
    page: &Fetched,
    prediction: Option<Prediction>,
) -> Record {
    Record {
        status: Some(page.status),
        bytes: entry.probe.as_ref().map_or(page.wire_bytes, |p| p.bytes),
        content_type: page.content_type().map(str::to_owned),
        duplicate_of: entry.probe.as_ref().map(|probe| probe.counterpart.clone()),
        parent: entry.parent,
        link_of: entry.link_of,
        retries: retries(entry),
        fetched_at: Some(rfc3339(page.started)),
        address: peer(page),
        fate: url_fate(entry, Verdict::Unchanged, prediction),
        ..Record::new(seq, entry.url.clone(), entry.depth, Verdict::Unchanged)
    }
}

/// The record of a queued URL whose request produced no response (`address`: where its
/// host's name resolved to, if the frontier resolved it).
pub(crate) fn failed(
    seq: u64,
    entry: &QueuedUrl,
    failure: &FetchFailure,
    address: Option<std::net::IpAddr>,
) -> Record {
    Record {
        bytes: failure.wire_bytes + probe_bytes(entry),
        fetched_at: Some(rfc3339(std::time::SystemTime::now())),
        address: address.map(|ip| ip.to_string()),
        ..refused(
            seq,
            entry,
            Verdict::Error,
            format!("{:?}: {}", failure.kind, failure.message),
        )
    }
}

/// The record of a queued URL decided without a request: `verdict`, for `reason`.
pub(crate) fn refused(seq: u64, entry: &QueuedUrl, verdict: Verdict, reason: String) -> Record {
    Record {
        parent: entry.parent,
        link_of: entry.link_of,
        retries: retries(entry),
        fate: url_fate(entry, verdict, None),
        error: Some(reason),
        ..Record::new(seq, entry.url.clone(), entry.depth, verdict)
    }
}

/// The record of `entry`, decided without a request as a duplicate of the page its
/// prediction names (verdict `predicted`, `duplicate_of` that page, the rule in
/// `prediction`).
pub(crate) fn predicted(seq: u64, entry: &QueuedUrl) -> Record {
    Record {
        duplicate_of: entry.predicted.as_ref().map(|p| p.counterpart.clone()),
        error: None,
        ..refused(seq, entry, Verdict::Predicted, String::new())
    }
}

/// The record's `fate` of a queued URL decided `verdict`, whose prediction (if it had one)
/// was `checked` by its decision: the fate the link policy decided for it (a URL refused by
/// the scope or a trap rule dropped; one a URL rule predicted a duplicate skipped; one that
/// carries a probe checked, by length, or by its rule's verification or sample; any other
/// fetched), what decided it (its rule, a redirect, or what the queue entry names, else
/// `new`), and the check made with its answer. None for a URL no link named (a seed, a
/// recrawl's URL).
fn url_fate(entry: &QueuedUrl, verdict: Verdict, checked: Option<Prediction>) -> Option<UrlFate> {
    if entry.parent.is_none() || entry.previous.is_some() {
        return None;
    }
    let mut rule = checked.or_else(|| entry.predicted.as_deref().cloned());
    let predicted = rule.as_ref().map(|r| r.fate.as_str());
    let probe = entry.probe.as_deref();
    let (fate, how) = match (verdict, predicted, probe) {
        (Verdict::OutOfScope | Verdict::Trap, ..) => ("drop", None),
        (Verdict::Predicted, ..) | (_, Some("skip"), _) => ("skip", None),
        (_, Some("verify"), Some(_)) => ("check", Some("verify")),
        (_, _, Some(p)) if p.window.is_some() => ("check", Some("sample")),
        (_, _, Some(_)) => ("check", Some("length")),
        _ => ("fetch", None),
    };
    let by = match verdict {
        Verdict::OutOfScope => "scope",
        Verdict::Trap => "trap",
        _ if rule.is_some() => "rule",
        _ if entry.redirects > 0 => "redirect",
        _ => entry.by.as_deref().unwrap_or("new"),
    };
    if let Some(rule) = &mut rule {
        // The record's `fate` and `how` say what it was used for.
        rule.fate.clear();
    }
    Some(UrlFate {
        fate: fate.to_owned(),
        by: by.to_owned(),
        how: how.map(str::to_owned),
        rule,
        check: probe.filter(|probe| probe.asked).cloned(),
    })
}

/// Bytes a queued URL's probe received before its request.
fn probe_bytes(entry: &QueuedUrl) -> u64 {
    entry.probe.as_ref().map_or(0, |probe| probe.bytes)
}

/// Earlier attempts of a queued URL, when there were any.
fn retries(entry: &QueuedUrl) -> Option<u8> {
    (entry.attempts > 0).then_some(entry.attempts)
}
