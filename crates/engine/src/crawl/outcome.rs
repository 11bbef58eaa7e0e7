//! How each request ended, routed: a robots.txt answer to the frontier, a failure to a retry
//! or an error record, a response to a redirect, an error, a sitemap, or the dedup stage.

use nearcrawl_link_policy::{AfterHead, Head};

use super::{
    Analysed, Commit, Coordinator, Decided, Decision, Declared, Duration, EngineError,
    FetchFailure, Fetched, Frontier, HostId, HostOutcome, PreparedFetch, Probe, Progress, QueueKey,
    QueuedUrl, RobotsFetch, Sample, Verdict, debug, now, url_key, warn,
};

/// How a host's answer weighs on its politeness: a server error backs the host off like a
/// "slow down", since retrying at once only adds load.
fn host_outcome(page: &Fetched) -> HostOutcome {
    match page.status {
        429 | 500..=599 => HostOutcome::Throttled {
            retry_after: page.retry_after(),
        },
        _ => HostOutcome::Answered,
    }
}

/// Times a probe is asked again while its counterpart is not fetched yet, before its page
/// is fetched instead.
pub(super) const PROBE_WAITS: u8 = 3;

/// The URLs on the site of the page at `url` that its decision (`commit`) was the first to
/// name (queued, probed or parked by it), as path and query: what a copy of the page
/// elsewhere, not downloaded, may be alone in naming on its own site.
fn named_first(url: &str, commit: &Commit, elsewhere: &[String]) -> Vec<String> {
    // Canonical URLs, as queued: the same site is the same origin text (scheme, host, port
    // as written), and what follows it is the path and query. No URL is parsed again.
    let Some(origin) = url
        .find("://")
        .map(|i| i + 3)
        .map(|i| url[i..].find('/').map_or(url, |j| &url[..i + j]))
    else {
        return Vec::new();
    };
    let queued = commit.enqueued.iter().map(|(_, _, entry)| &entry.url);
    let parked = commit.parked.iter().map(|(_, _, link)| &link.entry.url);
    let mut links: Vec<String> = queued
        .chain(parked)
        .chain(elsewhere)
        .filter_map(|link| link.strip_prefix(origin))
        .filter(|rest| rest.starts_with('/'))
        .map(str::to_owned)
        .collect();
    links.sort_unstable();
    links.dedup();
    links
}

/// What the link policy knows of a check's HEAD from its `probe`, and of its counterpart,
/// which declared `counterpart` (empty when not fetched yet and waited for long enough).
fn head(probe: &Probe, counterpart: &Declared, static_text: bool) -> Head {
    Head {
        status: probe.status,
        length: probe.length,
        counterpart_length: probe.counterpart_length,
        window: probe.window,
        copies: probe.copies,
        counterpart_text: !counterpart.shingles.is_empty(),
        static_text,
    }
}

/// A probe's request (its HEAD or its sample) answered: the host's turn ends, the bytes
/// count. Whether the frontier parked the host, and the bytes received.
fn probe_answered(
    frontier: &mut dyn Frontier,
    progress: &Progress,
    id: HostId,
    key: QueueKey,
    result: &Result<Fetched, FetchFailure>,
) -> (bool, u64) {
    let (outcome, bytes) = match result {
        Ok(page) => (host_outcome(page), page.wire_bytes),
        Err(failure) => (HostOutcome::Failed, failure.wire_bytes),
    };
    let parked = frontier.finished(id, Some(key), outcome, now());
    Progress::add(&progress.bytes, bytes);
    (parked, bytes)
}

impl Coordinator {
    pub(super) fn handle_robots(
        &mut self,
        id: HostId,
        fetch: RobotsFetch,
    ) -> Result<(), EngineError> {
        let now = now();
        let bytes: u64 = fetch.responses.iter().map(|r| r.wire_bytes).sum();
        self.counters.fetched_robots(bytes);
        Progress::add(&self.progress.bytes, bytes);
        for response in &fetch.responses {
            self.archive
                .response(response, None, &[("robots-txt", "true".to_string())])?;
        }
        let ttl = Duration::from_secs(self.job.config.fetch.robots_ttl_secs);
        if fetch.rules.is_unavailable() {
            warn!(host = id, source = ?fetch.rules.source, "robots.txt unavailable; host waits");
            if self.frontier.robots_failed(id, now) {
                let reason = format!(
                    "host parked: robots.txt unavailable ({:?})",
                    fetch.rules.source
                );
                self.drain_host(id, Verdict::RobotsDisallowed, &reason)?;
            }
        } else {
            debug!(host = id, source = ?fetch.rules.source, delay = ?fetch.rules.crawl_delay, "robots.txt");
            let sitemaps = fetch.rules.sitemaps.clone();
            self.frontier.robots_read(id, fetch.rules, now, ttl);
            if self.job.config.links.sitemaps {
                let commit = self.carry().queue_sitemaps(&sitemaps)?;
                return self.apply(commit, Vec::new());
            }
        }
        // Stores the robots.txt byte count.
        self.apply(Commit::default(), Vec::new())
    }

    /// Records every queued URL of a parked host, so none is retried forever or lost silently.
    pub(super) fn drain_host(
        &mut self,
        id: HostId,
        verdict: Verdict,
        reason: &str,
    ) -> Result<(), EngineError> {
        let drained = self.frontier.drain(id)?;
        if drained.is_empty() {
            return Ok(());
        }
        let mut commit = Commit::default();
        let mut records = Vec::new();
        for (key, entry) in drained {
            commit.taken.push(key);
            records.push(self.refused(&entry, verdict, reason.to_string()));
        }
        self.apply(commit, records)
    }

    pub(super) fn handle_failure(
        &mut self,
        id: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        failure: FetchFailure,
    ) -> Result<(), EngineError> {
        let now = now();
        Progress::add(&self.progress.bytes, failure.wire_bytes);
        let parked = self
            .frontier
            .finished(id, Some(key), HostOutcome::Failed, now);
        if failure.kind.is_transient()
            && entry.attempts < self.job.config.fetch.max_retries
            && !parked
        {
            debug!(url = %entry.url, error = %failure.message, "transient failure, will retry");
            let attempts = entry.attempts + 1;
            return self.requeue(key, QueuedUrl { attempts, ..entry });
        }
        let address = self.frontier.address_of(id);
        let record = crate::record::failed(self.counters.take_seq(), &entry, &failure, address);
        self.apply_taken(key, record)?;
        if parked {
            let reason = format!(
                "host parked after repeated failures (last: {})",
                failure.message
            );
            self.drain_host(id, Verdict::Error, &reason)?;
        }
        Ok(())
    }

    /// Puts a URL back at the end of its host's queue, as `entry`.
    pub(super) fn requeue(&mut self, key: QueueKey, entry: QueuedUrl) -> Result<(), EngineError> {
        let mut commit = Commit::default();
        self.frontier.requeue(&mut commit, key, entry);
        self.apply(commit, Vec::new())
    }

    /// A HEAD probe's answer (see [`nearcrawl_records::Probe`]): the same length as its
    /// counterpart's, the URL is decided `unchanged` without a GET; anything else, it goes
    /// back to its host's queue to be fetched, the probe's answer kept for its record.
    pub(super) fn handle_probe(
        &mut self,
        id: HostId,
        key: QueueKey,
        mut entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
    ) -> Result<(), EngineError> {
        let (parked, bytes) = probe_answered(&mut *self.frontier, &self.progress, id, key, &result);
        let Some(probe) = entry.probe.as_mut() else {
            return Ok(());
        };
        probe.asked = true;
        probe.status = result.as_ref().ok().map(|page| page.status);
        probe.length = result.as_ref().ok().and_then(|page| page.content_length());
        probe.bytes += bytes;
        // The counterpart was queued as a canonical URL: its key is that of its text.
        let declared = self.declarations.get(&probe.counterpart)?;
        probe.counterpart_length = declared.as_ref().map(|d| d.length);
        if probe.counterpart_length.is_none()
            && probe.waits < PROBE_WAITS
            && probe.status == Some(200)
        {
            // The counterpart is not fetched yet: asked again once the host's queue comes
            // round to this URL again.
            probe.waits += 1;
            probe.asked = false;
            self.requeue(key, entry)?;
        } else {
            let counterpart = declared.unwrap_or_default();
            let static_text = self.links.static_text(&[&entry.url, &probe.counterpart]);
            match (
                self.links
                    .after_head(&head(probe, &counterpart, static_text)),
                result,
            ) {
                (AfterHead::Sample, Ok(_)) => {
                    probe.sample = Some(Sample::default());
                    self.requeue(key, entry)?;
                }
                (AfterHead::Unchanged, Ok(page)) => {
                    self.unchanged(key, entry, &page, &counterpart.links)?;
                }
                _ => {
                    debug!(url = %entry.url, probe = ?entry.probe, "probe: changed, will fetch");
                    self.requeue(key, entry)?;
                }
            }
        }
        self.drain_if(id, parked)
    }

    /// A probe's sample answered (see [`nearcrawl_dedup::check_sample`]): its parts have the
    /// counterpart's text (every part of them, for a URL rule's sample) and the page is
    /// about its counterpart's length (its HEAD's, or the answer's `Content-Range`), the URL
    /// is decided `unchanged`; anything else (another text, too little text, a length not
    /// comparable, an answer without parts, a failure), it goes back to be fetched.
    pub(super) fn handle_sample(
        &mut self,
        id: HostId,
        key: QueueKey,
        mut entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
    ) -> Result<(), EngineError> {
        let (parked, bytes) = probe_answered(&mut *self.frontier, &self.progress, id, key, &result);
        let Some(probe) = entry.probe.as_mut() else {
            return Ok(());
        };
        probe.bytes += bytes;
        let comparable = head(probe, &Declared::default(), true).comparable();
        let Some(sample) = probe.sample.as_mut() else {
            return Ok(());
        };
        sample.asked = true;
        sample.status = result.as_ref().ok().map(|page| page.status);
        let parts = match &result {
            Ok(page) => nearcrawl_fetch::byte_ranges(page).ok(),
            Err(_) => None,
        };
        let parts = parts.filter(|_| comparable);
        let counterpart = match &parts {
            Some(_) => self.declarations.get(&probe.counterpart)?,
            None => None,
        };
        if let (Some(parts), Some(counterpart)) = (parts, counterpart) {
            let bytes: Vec<Vec<u8>> = parts.parts.into_iter().map(|(_, b)| b).collect();
            let check = nearcrawl_dedup::check_sample(&bytes, &counterpart.shingles);
            sample.parts = check.parts;
            sample.informative = check.informative;
            sample.matched = check.matched;
            // A URL rule's sample (a window) has nothing but the rule to go on besides.
            let unchanged = match probe.window {
                Some(_) => check.unchanged_strictly(),
                None => check.unchanged(),
            };
            if unchanged && let Ok(page) = &result {
                self.unchanged(key, entry, page, &counterpart.links)?;
                return self.drain_if(id, parked);
            }
        }
        debug!(url = %entry.url, probe = ?entry.probe, "sample: changed, will fetch");
        self.requeue(key, entry)?;
        self.drain_if(id, parked)
    }

    /// Drains a host the frontier just parked after repeated failures.
    fn drain_if(&mut self, id: HostId, parked: bool) -> Result<(), EngineError> {
        if parked {
            self.drain_host(id, Verdict::Error, "host parked after repeated failures")?;
        }
        Ok(())
    }

    pub(super) fn handle_page(
        &mut self,
        id: HostId,
        key: QueueKey,
        entry: QueuedUrl,
        page: Fetched,
        mut analysis: Option<Result<Box<Analysed>, String>>,
        warc: Option<PreparedFetch>,
    ) -> Result<(), EngineError> {
        let now = now();
        let parked = self
            .frontier
            .finished(id, Some(key), host_outcome(&page), now);
        // What a probe of this page's counterparts elsewhere will be compared with.
        let declared = analysis
            .as_mut()
            .and_then(|a| a.as_mut().ok())
            .and_then(|a| a.declared.take());
        self.counters.fetched_page();
        Progress::add(&self.progress.pages, 1);
        Progress::add(&self.progress.bytes, page.wire_bytes);

        let retryable = matches!(page.status, 429 | 500 | 502 | 503 | 504);
        if retryable && entry.attempts < self.job.config.fetch.max_retries && !parked {
            self.archive.response(&page, None, &[])?;
            debug!(url = %entry.url, status = page.status, "server asked to wait, will retry");
            let attempts = entry.attempts + 1;
            return self.requeue(key, QueuedUrl { attempts, ..entry });
        }
        let seq = self.counters.take_seq();
        let decided = if (300..400).contains(&page.status) && page.status != 304 {
            let decided = self.carry().decide_redirect(&page, &entry, seq)?;
            self.archive
                .response(&page, None, &[("verdict", "redirect".into())])?;
            decided
        } else if let (304, Some(previous)) = (page.status, &entry.previous) {
            self.decide_not_modified(&page, &entry.url, previous)?
        } else if page.status != 200 {
            self.archive
                .response(&page, None, &[("verdict", "error".into())])?;
            let reason = format!("HTTP {}", page.status);
            Decided::new(Decision::because(Verdict::Error, reason))
        } else if entry.sitemap {
            let decided = self.carry().decide_sitemap(&page, &entry, seq)?;
            let verdict = decided.decision.verdict.as_str();
            self.archive
                .response(&page, None, &[("verdict", verdict.into())])?;
            decided
        } else if let Some(Err(panic)) = analysis {
            self.archive
                .response(&page, None, &[("verdict", "error".into())])?;
            let reason = format!("page analysis panicked: {panic}");
            Decided::new(Decision::because(Verdict::Error, reason))
        } else if let Some(Ok(analysed)) = analysis {
            self.decide_page(&page, &entry, analysed, warc, seq)?
        } else {
            self.archive
                .response(&page, None, &[("verdict", "not-html".into())])?;
            Decided::new(Decision::new(Verdict::NotHtml))
        };
        let (mut commit, mut records) = decided.taking(key, |decision| {
            crate::record::response(seq, &entry, &page, decision)
        });
        if let (Some(previous), Some(record)) = (&entry.previous, records.first_mut()) {
            self.compare_with_previous(record, previous, &mut commit)?;
        }
        // Fetched under a learned session parameter: the URL without it. Otherwise
        // remembered, for one learned later.
        let stripped = self.links.learned().sessions().strip_str(&entry.url);
        if stripped.is_none() && page.status == 200 {
            self.links.learned_mut().fetched(&entry.url);
        }
        // What a later duplicate's link to this page's counterpart is probed against, and
        // the URLs of its site it named first; a redirect's target too
        // ([`Declared::redirect`]), so that what a page's links led to counts the pages its
        // redirecting links led to.
        if self.job.config.dedup.enabled && self.links.probes() && !page.truncated {
            let kept = match page.status {
                200 => page.content_length().map(|length| Declared {
                    length,
                    links: named_first(&entry.url, &commit, self.frontier.named_by_decision()),
                    ..declared.unwrap_or_default()
                }),
                301 | 302 | 303 | 307 | 308 => Some(Declared::redirect(named_first(
                    &entry.url,
                    &commit,
                    self.frontier.named_by_decision(),
                ))),
                _ => None,
            };
            if let Some(kept) = kept {
                // What a URL rule predicts (the URL without the session parameter) finds it
                // too. Known to the job's other workers before the decision is: a probe that
                // finds the decision finds this too.
                if let Some(stripped) = &stripped {
                    self.declarations.share(stripped.url.as_str(), &kept)?;
                    commit
                        .length
                        .push((url_key(stripped.url.as_str()), kept.clone()));
                }
                self.declarations.share(&entry.url, &kept)?;
                commit.length.push((url_key(&entry.url), kept));
            }
        }
        // The URL without the session parameter is taken too.
        if let Some(stripped) = stripped {
            self.held_without_session(&mut commit, &stripped.url)?;
        }
        self.apply(commit, records)?;
        if parked {
            self.drain_host(
                id,
                Verdict::Error,
                "host parked after repeated 429 and 5xx answers",
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_names_first_the_urls_of_its_own_site_its_decision_queued() {
        let queued = |n: u64, url: &str| {
            let key = QueueKey {
                host: 1,
                priority: 0,
                order: n,
            };
            let entry = QueuedUrl {
                url: url.into(),
                ..QueuedUrl::default()
            };
            (key, url_key(url), entry)
        };
        let commit = Commit {
            enqueued: vec![
                queued(1, "http://h.test:8080/b?x=1"),
                queued(2, "http://h.test:8080/a/c"),
                // Another port that starts with the same digits, another host, another
                // scheme: other sites.
                queued(3, "http://h.test:80801/d"),
                queued(4, "http://other.test/e"),
                queued(5, "https://h.test:8080/f"),
                queued(6, "http://h.test:8080/a/c"),
            ],
            ..Commit::default()
        };
        assert_eq!(
            named_first("http://h.test:8080/a", &commit, &[]),
            ["/a/c", "/b?x=1"]
        );
        assert!(named_first("not a url", &commit, &[]).is_empty());
        // A shared job's frontier keeps what the decision queued out of its commit.
        let elsewhere = ["http://h.test:8080/z".to_string(), "http://o.test/y".into()];
        assert_eq!(
            named_first("http://h.test:8080/a", &Commit::default(), &elsewhere),
            ["/z"]
        );
    }
}
