//! How each request ended, routed: a robots.txt answer to the frontier, a failure to a retry
//! or an error record, a response to a redirect, an error, a sitemap, or the dedup stage.

use super::*;

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
const PROBE_WAITS: u8 = 3;

impl Coordinator {
    pub(super) fn handle_robots(
        &mut self,
        id: HostId,
        fetch: RobotsFetch,
    ) -> Result<(), EngineError> {
        let now = now();
        let bytes: u64 = fetch.responses.iter().map(|r| r.wire_bytes).sum();
        self.robots_bytes += bytes;
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
                return self.queue_sitemaps(&sitemaps);
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
            return self.retry(key, entry);
        }
        let record = Record::failed(self.take_seq(), &entry, &failure);
        self.apply(
            Commit {
                taken: vec![key],
                ..Commit::default()
            },
            vec![record],
        )?;
        if parked {
            let reason = format!(
                "host parked after repeated failures (last: {})",
                failure.message
            );
            self.drain_host(id, Verdict::Error, &reason)?;
        }
        Ok(())
    }

    /// Puts a URL back at the end of its host's queue for another attempt.
    fn retry(&mut self, key: QueueKey, mut entry: QueuedUrl) -> Result<(), EngineError> {
        entry.attempts += 1;
        self.requeue(key, entry)
    }

    /// Puts a URL back at the end of its host's queue, as `entry`.
    fn requeue(&mut self, key: QueueKey, entry: QueuedUrl) -> Result<(), EngineError> {
        let mut commit = Commit::default();
        self.frontier.requeue(&mut commit, key, entry);
        self.apply(commit, Vec::new())
    }

    /// A HEAD probe's answer (see [`nearcrawl_store::Probe`]): the same length as its
    /// counterpart's, the URL is decided `unchanged` without a GET; anything else, it goes
    /// back to its host's queue to be fetched, the probe's answer kept for its record.
    pub(super) fn handle_probe(
        &mut self,
        id: HostId,
        key: QueueKey,
        mut entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
    ) -> Result<(), EngineError> {
        let (parked, bytes) = self.probe_answered(id, key, &result);
        let Some(probe) = entry.probe.as_mut() else {
            return Ok(());
        };
        probe.asked = true;
        probe.status = result.as_ref().ok().map(|page| page.status);
        probe.length = result.as_ref().ok().and_then(|page| page.content_length());
        probe.bytes += bytes;
        // The counterpart was queued as a canonical URL: its key is that of its text.
        let declared = self.store.declared(&url_key(&probe.counterpart))?;
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
            self.decide_probe(key, entry, result, declared.unwrap_or_default())?;
        }
        self.drain_if(id, parked)
    }

    /// A probe answered, its counterpart's length known (or waited for long enough; then
    /// `counterpart` is empty).
    fn decide_probe(
        &mut self,
        key: QueueKey,
        mut entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
        counterpart: Declared,
    ) -> Result<(), EngineError> {
        let tolerance = self.job.config.dedup.probe_tolerance;
        let sampling = self.job.config.dedup.probe_samples;
        let Some(probe) = entry.probe.as_mut() else {
            return self.requeue(key, entry);
        };
        // A large page: some of its text is asked before all of it, whatever its length (a
        // rewritten page can keep its length).
        let sample = sampling
            && !counterpart.shingles.is_empty()
            && probe.status == Some(200)
            && match (probe.length, probe.counterpart_length) {
                (Some(length), Some(counterpart)) => {
                    nearcrawl_dedup::worth_sampling(length, counterpart)
                }
                _ => false,
            };
        match result {
            Ok(_) if sample => {
                probe.sample = Some(Sample::default());
                self.requeue(key, entry)
            }
            Ok(page) if probe.unchanged(tolerance) => {
                self.unchanged(key, &entry, &page, &counterpart.links)
            }
            _ => {
                debug!(url = %entry.url, probe = ?entry.probe, "probe: changed, will fetch");
                self.requeue(key, entry)
            }
        }
    }

    /// Decides a probed URL `unchanged` (`page`: the answer that said so). It is taken to be
    /// its counterpart, so its links are the counterpart's (`links`, on the counterpart's
    /// site, taken to this one's), each followed, probed or dropped as a duplicate's links to
    /// where its original's lead: a changed page below an unchanged one is still found.
    fn unchanged(
        &mut self,
        key: QueueKey,
        entry: &QueuedUrl,
        page: &Fetched,
        links: &[String],
    ) -> Result<(), EngineError> {
        let seq = self.take_seq();
        let mut decided = Decided::new(Decision::new(Verdict::Unchanged));
        let at = Url::parse(&entry.url).ok();
        let counterpart = entry
            .probe
            .as_ref()
            .and_then(|probe| Url::parse(&probe.counterpart).ok());
        if let (Some(at), Some(counterpart)) = (&at, counterpart)
            && !links.is_empty()
        {
            let links: Vec<nearcrawl_extract::Link> = links
                .iter()
                .filter_map(|link| at.join(link).ok())
                .map(|url| nearcrawl_extract::Link {
                    url,
                    text: String::new(),
                    nofollow: false,
                    context: String::new(),
                })
                .collect();
            // Every link leads where the counterpart's do: none is new, each goes the way of
            // a duplicate's link to where its original's leads.
            let follow = Follow::None;
            // Not one more duplicate in a row: what an unchanged page leads to is bounded by
            // its counterpart's site, crawled already (no calendar runs on through probes),
            // so a release's deep pages are probed whatever their depth.
            let chain = u32::from(entry.duplicates);
            let host = nearcrawl_frontier::authority(at);
            let how = links::LinkFollowing {
                follow: &follow,
                base: Some(at),
                original: Some(counterpart),
                chain,
                chain_trap: self.traps.rules.check_chain(chain).err(),
                duplicate_of_host: Some(&host),
                potential: 0.0,
                off_topic: 0,
            };
            decided.decision.outlinks = Some(links.len() as u32);
            self.follow_links(entry, seq, links, &how, &mut decided)?;
        }
        let (commit, records) = decided.taking(key, |decision| {
            Record::unchanged(seq, entry, page, decision)
        });
        self.apply(commit, records)
    }

    /// A probe's sample answered (see [`nearcrawl_dedup::check_sample`]): its parts have the
    /// counterpart's text, the URL is decided `unchanged`; anything else (another text, too
    /// little text, an answer without parts, a failure), it goes back to be fetched.
    pub(super) fn handle_sample(
        &mut self,
        id: HostId,
        key: QueueKey,
        mut entry: QueuedUrl,
        result: Result<Fetched, FetchFailure>,
    ) -> Result<(), EngineError> {
        let (parked, bytes) = self.probe_answered(id, key, &result);
        let Some(probe) = entry.probe.as_mut() else {
            return Ok(());
        };
        probe.bytes += bytes;
        let Some(sample) = probe.sample.as_mut() else {
            return Ok(());
        };
        sample.asked = true;
        sample.status = result.as_ref().ok().map(|page| page.status);
        let parts = match &result {
            Ok(page) => nearcrawl_fetch::byte_ranges(page).ok(),
            Err(_) => None,
        };
        let counterpart = match &parts {
            Some(_) => self.store.declared(&url_key(&probe.counterpart))?,
            None => None,
        };
        if let (Some(parts), Some(counterpart)) = (parts, counterpart) {
            let bytes: Vec<Vec<u8>> = parts.parts.into_iter().map(|(_, b)| b).collect();
            let check = nearcrawl_dedup::check_sample(&bytes, &counterpart.shingles);
            sample.parts = check.parts;
            sample.informative = check.informative;
            sample.matched = check.matched;
            if check.unchanged()
                && let Ok(page) = &result
            {
                self.unchanged(key, &entry, page, &counterpart.links)?;
                return self.drain_if(id, parked);
            }
        }
        debug!(url = %entry.url, probe = ?entry.probe, "sample: changed, will fetch");
        self.requeue(key, entry)?;
        self.drain_if(id, parked)
    }

    /// A probe's request (its HEAD or its sample) answered: the host's turn ends, the bytes
    /// count. Whether the frontier parked the host, and the bytes received.
    fn probe_answered(
        &mut self,
        id: HostId,
        key: QueueKey,
        result: &Result<Fetched, FetchFailure>,
    ) -> (bool, u64) {
        let (outcome, bytes) = match result {
            Ok(page) => (host_outcome(page), page.wire_bytes),
            Err(failure) => (HostOutcome::Failed, failure.wire_bytes),
        };
        let parked = self.frontier.finished(id, Some(key), outcome, now());
        Progress::add(&self.progress.bytes, bytes);
        (parked, bytes)
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
        mut analysis: Option<Result<Analysed, String>>,
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
        self.pages_fetched += 1;
        Progress::add(&self.progress.pages, 1);
        Progress::add(&self.progress.bytes, page.wire_bytes);

        let retryable = matches!(page.status, 429 | 500 | 502 | 503 | 504);
        if retryable && entry.attempts < self.job.config.fetch.max_retries && !parked {
            self.archive.response(&page, None, &[])?;
            debug!(url = %entry.url, status = page.status, "server asked to wait, will retry");
            return self.retry(key, entry);
        }

        let seq = self.take_seq();
        let decided = if (300..400).contains(&page.status) && page.status != 304 {
            let decided = self.decide_redirect(&page, &entry, seq)?;
            self.archive
                .response(&page, None, &[("verdict", "redirect".into())])?;
            decided
        } else if page.status != 200 {
            self.archive
                .response(&page, None, &[("verdict", "error".into())])?;
            let reason = format!("HTTP {}", page.status);
            Decided::new(Decision::because(Verdict::Error, reason))
        } else if entry.sitemap {
            let decided = self.decide_sitemap(&page, &entry, seq)?;
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
        let (mut commit, records) = decided.taking(key, |decision| {
            Record::response(seq, &entry, &page, decision)
        });
        // What a later duplicate's link to this page's counterpart is probed against.
        let dedup = &self.job.config.dedup;
        if dedup.enabled && dedup.probe_links && page.status == 200 && !page.truncated {
            commit.length = page.content_length().map(|length| {
                let declared = Declared {
                    length,
                    ..declared.unwrap_or_default()
                };
                (url_key(&entry.url), declared)
            });
        }
        // Fetched under a learned session parameter: the URL without it is taken too.
        if let Some(stripped) = self.sessions.strip_str(&entry.url) {
            commit.seen.push(url_key(stripped.url.as_str()));
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
