//! A fetched HTML or text page: the dedup stage's judgement, the page's own robots
//! directives and relevance, its links, and its archive entry.

use super::*;

impl Coordinator {
    /// The stored record of an earlier decision.
    pub(super) fn record_of(&self, seq: u64) -> Result<Option<Record>, EngineError> {
        Ok(self
            .store
            .record(seq)?
            .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn decide_page(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        analysis: PageAnalysis,
        analysis_time: Duration,
        record: &mut Record,
        commit: &mut Commit,
        extra: &mut Vec<Record>,
    ) -> Result<(), EngineError> {
        let clock = Instant::now();
        let seq = record.seq;
        let host = nearcrawl_frontier::authority(&page.url);
        let judgement = self
            .stage
            .judge_analysed(analysis, &StoreOriginals(self.store.as_ref()))?;
        let analysis = &judgement.analysis;
        record.simhash = Some(format!("{:016x}", analysis.simhash.bits()));
        let (header_noindex, header_nofollow) =
            page.x_robots_tag(self.job.config.fetch.robots_agent());
        let meta = analysis
            .facts
            .as_ref()
            .map(|f| f.robots)
            .unwrap_or_default();
        let nofollow = header_nofollow || meta.nofollow;
        if header_noindex || meta.noindex {
            record.robots.push("noindex".into());
        }
        if nofollow {
            record.robots.push("nofollow".into());
        }
        let title = analysis
            .facts
            .as_ref()
            .and_then(|f| f.title.clone())
            .unwrap_or_default();
        let relevance = self
            .relevance
            .as_ref()
            .map(|r| r.score(&format!("{title}\n{}", analysis.text)));
        record.relevance = relevance;

        // The original's record, read once: its URL and payload digest.
        let original = match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(seq)) => self.record_of(seq)?,
            _ => None,
        };
        record.verdict = Verdict::from(judgement.verdict);
        match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(of)) => {
                record.duplicate_of = original.as_ref().map(|r| r.url.clone());
                record.cluster = Some(of);
            }
            Some(nearcrawl_dedup::Original::Shared(n)) => {
                record.duplicate_of = self.shared_urls.get(n as usize).cloned();
            }
            None => record.cluster = Some(seq),
        }
        if judgement.verdict == nearcrawl_dedup::Verdict::Unique {
            let admission = self.stage.admit(seq, &host, &judgement);
            if let Some((simhash, key)) = admission.fingerprint {
                commit.unique = Some(UniquePage {
                    seq,
                    simhash: simhash.bits(),
                });
                commit.exact_key = Some((key.0.to_be_bytes(), seq));
            }
            commit.unique_text = admission.text.map(|text| (seq, text));
            commit.unique_anchors = admission.anchors.map(|anchors| (seq, anchors));
        } else {
            record.distance = judgement.distance;
            record.similarity = judgement
                .similarity
                .map(|similarity| (similarity * 1000.0).round() / 1000.0);
            Progress::add(&self.progress.duplicates, 1);
            debug!(url = %entry.url, original = ?record.duplicate_of, distance = ?record.distance, "duplicate");
        }
        record.dedup_us = Some((analysis_time + clock.elapsed()).as_micros() as u64);
        Progress::add(&self.progress.dedup_micros, record.dedup_us.unwrap_or(0));

        // Outlinks: followed for unique pages; for duplicates only when configured or in the
        // `--no-dedup` baseline.
        let follow = &judgement.follow;
        let expands = match (&self.relevance, relevance) {
            (Some(r), Some(score)) => r.expands(score),
            _ => true,
        };
        let mut links: Vec<(Url, String, bool)> = Vec::new();
        if let Some(facts) = &analysis.facts {
            links.extend(
                facts
                    .links
                    .iter()
                    .map(|l| (l.url.clone(), l.text.clone(), l.nofollow)),
            );
            if let Some(canonical) = facts
                .canonical
                .as_ref()
                .and_then(|c| CanonicalUrl::from_url(c.clone()).ok())
                && canonical.as_str() != entry.url
            {
                record.canonical = Some(canonical.to_string());
                if self.job.config.links.follow_canonical {
                    links.push((canonical.into_url(), String::new(), false));
                }
            }
        }
        record.outlinks = Some(links.len() as u32);
        let (mut enqueued, mut dropped) = (0u32, 0u32);
        let mut pending = HashSet::new();
        // A baseline crawl keeps its whole in-scope link graph, for the exact what-if.
        let baseline = !self.job.config.dedup.enabled;
        let mut graph: Vec<String> = Vec::new();
        if !nofollow && expands {
            let follow_nofollow = self.job.config.links.follow_nofollow;
            let page_score = relevance.unwrap_or(0.0);
            for (link, anchor, link_nofollow) in links {
                if link_nofollow && !follow_nofollow {
                    continue;
                }
                let Ok(url) = CanonicalUrl::from_url(link) else {
                    continue;
                };
                if baseline
                    && self.scope.check(&url, entry.depth + 1).is_ok()
                    && !graph.iter().any(|g| g == url.as_str())
                {
                    graph.push(url.to_string());
                }
                let ukey = url_key(url.as_str());
                if self.is_seen(&ukey, &pending)? {
                    continue;
                }
                pending.insert(ukey);
                let skip = !follow.follows(&anchor);
                match self.scope.check(&url, entry.depth + 1) {
                    // A duplicate's links were never really discovered: no records for them.
                    Err(_) if skip => {}
                    Err(reason) => self.record_out_of_scope(
                        &url,
                        ukey,
                        entry.depth + 1,
                        seq,
                        &reason,
                        commit,
                        extra,
                    ),
                    Ok(()) if skip => {
                        commit.dropped.push(ukey);
                        dropped += 1;
                    }
                    Ok(()) => {
                        let next = QueuedUrl {
                            url: url.to_string(),
                            depth: entry.depth + 1,
                            parent: Some(seq),
                            ..QueuedUrl::default()
                        };
                        let priority = self.priority_of(entry, page_score, &anchor);
                        self.queue(commit, &mut pending, &url, next, priority)?;
                        enqueued += 1;
                    }
                }
            }
        }
        record.enqueued = Some(enqueued);
        if baseline {
            record.links = Some(graph);
        }
        if *follow != Follow::All {
            record.dropped = Some(dropped);
            Progress::add(&self.progress.dropped_outlinks, u64::from(dropped));
        }

        // The archive: a byte-identical exact duplicate is a revisit of its original.
        let digest = WarcWriter::digest(&page.wire_body);
        let revisit = original.as_ref().filter(|o| {
            record.verdict == Verdict::Exact && o.payload_digest.as_deref() == Some(digest.as_str())
        });
        let mut metadata = vec![
            ("simhash", record.simhash.clone().unwrap_or_default()),
            ("verdict", record.verdict.as_str().to_string()),
        ];
        if let Some(of) = &record.duplicate_of {
            metadata.push(("duplicate-of", of.clone()));
        }
        if let Some(d) = record.distance {
            metadata.push(("distance", d.to_string()));
        }
        let revisit = revisit.map(|o| (o.url.clone(), o.fetched_at.clone().unwrap_or_default()));
        self.archive.response(
            page,
            revisit.as_ref().map(|(url, date)| Original { url, date }),
            &metadata,
        )?;
        record.payload_digest = Some(digest);
        Ok(())
    }
}

/// The crawl's store as the dedup stage reads it: the texts, exact keys, simhashes and
/// anchors of the unique pages it admitted.
struct StoreOriginals<'a>(&'a dyn CrawlStore);

impl Originals for StoreOriginals<'_> {
    type Error = EngineError;
    fn text(&self, seq: u64) -> Result<Option<String>, EngineError> {
        Ok(self.0.unique_text(seq)?)
    }
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, EngineError> {
        Ok(self.0.exact_original(&key.0.to_be_bytes())?)
    }
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, EngineError> {
        Ok(self.0.unique_simhash(seq)?.map(Fingerprint::new))
    }
    fn anchors(&self, seq: u64) -> Result<Option<Vec<u64>>, EngineError> {
        Ok(self.0.anchors(seq)?)
    }
}
