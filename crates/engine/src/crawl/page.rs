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
        seq: u64,
    ) -> Result<Decided, EngineError> {
        let clock = Instant::now();
        let host = nearcrawl_frontier::authority(&page.url);
        let judgement = self
            .stage
            .judge_analysed(analysis, &StoreOriginals(self.store.as_ref()))?;
        let analysis = &judgement.analysis;
        let mut decided = Decided::new(Decision::new(Verdict::from(judgement.verdict)));
        let mut learned = None;
        decided.decision.simhash = Some(format!("{:016x}", analysis.simhash.bits()));
        let (header_noindex, header_nofollow) =
            page.x_robots_tag(self.job.config.fetch.robots_agent());
        let meta = analysis
            .facts
            .as_ref()
            .map(|f| f.robots)
            .unwrap_or_default();
        let nofollow = header_nofollow || meta.nofollow;
        if header_noindex || meta.noindex {
            decided.decision.robots.push("noindex".into());
        }
        if nofollow {
            decided.decision.robots.push("nofollow".into());
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
        decided.decision.relevance = relevance;

        // The original's record, read once: its URL and payload digest.
        let original = match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(seq)) => self.record_of(seq)?,
            _ => None,
        };
        match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(of)) => {
                decided.decision.duplicate_of = original.as_ref().map(|r| r.url.clone());
                decided.decision.cluster = Some(of);
            }
            Some(nearcrawl_dedup::Original::Shared(n)) => {
                decided.decision.duplicate_of = self.shared_urls.get(n as usize).cloned();
            }
            None => decided.decision.cluster = Some(seq),
        }
        if judgement.verdict == nearcrawl_dedup::Verdict::Unique {
            let admission = self.stage.admit(seq, &host, &judgement);
            if let Some((simhash, key)) = admission.fingerprint {
                decided.commit.unique = Some(UniquePage {
                    seq,
                    simhash: simhash.bits(),
                });
                decided.commit.exact_key = Some((key.0.to_be_bytes(), seq));
            }
            decided.commit.unique_text = admission.text.map(|text| (seq, text));
            decided.commit.unique_anchors = admission.anchors.map(|anchors| (seq, anchors));
        } else {
            decided.decision.distance = judgement.distance;
            decided.decision.similarity = judgement
                .similarity
                .map(|similarity| (similarity * 1000.0).round() / 1000.0);
            Progress::add(&self.progress.duplicates, 1);
            learned = self.learn_session_param(entry, decided.decision.duplicate_of.as_deref());
            debug!(url = %entry.url, original = ?decided.decision.duplicate_of, distance = ?decided.decision.distance, "duplicate");
        }
        decided.decision.dedup_us = Some((analysis_time + clock.elapsed()).as_micros() as u64);
        Progress::add(
            &self.progress.dedup_micros,
            decided.decision.dedup_us.unwrap_or(0),
        );

        // Outlinks: followed for unique pages; for duplicates only when configured or in the
        // `--no-dedup` baseline.
        let follow = &judgement.follow;
        // Duplicates in a row on the path of links that led here, this page included; past
        // the limit, the links a duplicate would follow are a trap (an endless calendar whose
        // day pages copy each other). Not for baseline crawls or "keep", which follow all.
        let chain = match judgement.verdict {
            nearcrawl_dedup::Verdict::Unique => 0,
            _ => u32::from(entry.duplicates) + 1,
        };
        let chain_trap = match follow {
            Follow::All => None,
            _ => self.traps.rules.check_chain(chain).err(),
        };
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
                decided.decision.canonical = Some(canonical.to_string());
                if self.job.config.links.follow_canonical {
                    links.push((canonical.into_url(), String::new(), false));
                }
            }
        }
        decided.decision.outlinks = Some(links.len() as u32);
        decided.decision.links_over_cap = analysis
            .facts
            .as_ref()
            .map(|f| f.links_over_cap)
            .filter(|n| *n > 0);
        decided.decision.text_cut_from = analysis.text_cut_from.map(|n| n as u64);
        let duplicate = judgement.verdict != nearcrawl_dedup::Verdict::Unique;
        let follow = LinkFollowing {
            follow,
            chain,
            chain_trap,
            duplicate_of_host: duplicate.then_some(host.as_str()),
            page_score: relevance.unwrap_or(0.0),
        };
        if !nofollow && expands {
            self.follow_links(entry, seq, links, &follow, &mut decided)?;
        } else {
            decided.decision.enqueued = Some(0);
            decided.decision.trap = follow.chain_trap.as_ref().map(|trap| trap.to_string());
        }
        if let Some(learned) = learned {
            let trap = decided.decision.trap.take().into_iter();
            decided.decision.trap = Some(trap.chain([learned]).collect::<Vec<_>>().join("; "));
        }
        if *follow.follow != Follow::All {
            let dropped = *decided.decision.dropped.get_or_insert(0);
            Progress::add(&self.progress.dropped_outlinks, u64::from(dropped));
        }
        if !self.job.config.dedup.enabled && decided.decision.links.is_none() {
            decided.decision.links = Some(Vec::new());
        }

        // The archive: a byte-identical exact duplicate is a revisit of its original.
        let digest = WarcWriter::digest(&page.wire_body);
        let revisit = original.as_ref().filter(|o| {
            decided.decision.verdict == Verdict::Exact
                && o.payload_digest.as_deref() == Some(digest.as_str())
        });
        let mut metadata = vec![
            (
                "simhash",
                decided.decision.simhash.clone().unwrap_or_default(),
            ),
            ("verdict", decided.decision.verdict.as_str().to_string()),
        ];
        if let Some(of) = &decided.decision.duplicate_of {
            metadata.push(("duplicate-of", of.clone()));
        }
        if let Some(d) = decided.decision.distance {
            metadata.push(("distance", d.to_string()));
        }
        let revisit = revisit.map(|o| (o.url.clone(), o.fetched_at.clone().unwrap_or_default()));
        self.archive.response(
            page,
            revisit.as_ref().map(|(url, date)| Original { url, date }),
            &metadata,
        )?;
        decided.decision.payload_digest = Some(digest);
        Ok(decided)
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

impl Coordinator {
    /// A duplicate at `entry` of the page at `original`: evidence for a session parameter.
    /// What to record when it is learned.
    fn learn_session_param(&mut self, entry: &QueuedUrl, original: Option<&str>) -> Option<String> {
        let this = CanonicalUrl::parse(&entry.url).ok()?;
        let original = CanonicalUrl::parse(original?).ok()?;
        let name = self.sessions.observe(&this, &original)?;
        info!(host = %this.authority(), param = %name, "learned a session parameter");
        Some(format!(
            "trap: session parameter {name} learned for this host ({} duplicates differ from \
             their originals only in its value); stripped from its URLs from now on",
            nearcrawl_frontier::EVIDENCE
        ))
    }
}

/// How the links of one page are followed.
struct LinkFollowing<'a> {
    /// The dedup stage's rule for this page's links.
    follow: &'a Follow,
    /// Duplicates in a row on the path to this page, this one included.
    chain: u32,
    /// The duplicate-chain rule, if it stops this page's links.
    chain_trap: Option<Trap>,
    /// The host, when this page is a duplicate (its links spend the host's budget).
    duplicate_of_host: Option<&'a str>,
    /// The page's relevance in a focused crawl.
    page_score: f32,
}

impl Coordinator {
    /// Queues the links of a page that may be followed, records those refused by the scope
    /// or the URL rules, and counts those dropped: a duplicate's links not followed (`dropped`)
    /// and links the pattern-on-path rule stopped (`trapped`; the rules in `trap`).
    fn follow_links(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        links: Vec<(Url, String, bool)>,
        how: &LinkFollowing<'_>,
        decided: &mut Decided,
    ) -> Result<(), EngineError> {
        let (mut enqueued, mut dropped, mut trapped) = (0u32, 0u32, 0u32);
        // The rules that fired, each named once (by the first link it stopped).
        let mut fired: Vec<Trap> = how.chain_trap.iter().cloned().collect();
        let mut note = |trap: Trap| {
            let kind = std::mem::discriminant(&trap);
            if !fired.iter().any(|t| std::mem::discriminant(t) == kind) {
                fired.push(trap);
            }
        };
        let path = PatternPath::from_pairs(entry.patterns.clone());
        let mut pending = HashSet::new();
        // A baseline crawl keeps its whole in-scope link graph, for the exact what-if.
        let baseline = !self.job.config.dedup.enabled;
        let mut graph: Vec<String> = Vec::new();
        let follow_nofollow = self.job.config.links.follow_nofollow;
        for (link, anchor, link_nofollow) in links {
            if link_nofollow && !follow_nofollow {
                continue;
            }
            let Ok(url) = CanonicalUrl::from_url(link) else {
                continue;
            };
            let url = match self.sessions.strip(&url) {
                Some(stripped) => stripped.url,
                None => url,
            };
            if baseline
                && self.admits(&url, entry.depth + 1).is_ok()
                && !graph.iter().any(|g| g == url.as_str())
            {
                graph.push(url.to_string());
            }
            let ukey = url_key(url.as_str());
            if self.is_seen(&ukey, &pending)? {
                continue;
            }
            pending.insert(ukey);
            let skip = how.chain_trap.is_some() || !how.follow.follows(&anchor);
            let at = (entry.depth + 1, seq);
            match self.admits(&url, entry.depth + 1) {
                // A duplicate's links were never really discovered: no records for them.
                Err(_) if skip => {}
                Err((verdict, reason)) => {
                    if verdict == Verdict::OutOfScope {
                        self.watch_scope(Some(&reason));
                    }
                    self.record_refused_link(&url, ukey, at, verdict, reason, decided)
                }
                Ok(()) if skip => {
                    decided.commit.dropped.push(ukey);
                    dropped += 1;
                }
                Ok(()) => {
                    self.watch_scope(None);
                    let pattern = UrlPattern::of(&url);
                    let patterns = match self.traps.rules.check_path(&path, &pattern) {
                        Ok(patterns) => patterns,
                        // Not marked seen: a shorter path may still lead there.
                        Err(trap) => {
                            note(trap);
                            trapped += 1;
                            continue;
                        }
                    };
                    let spent =
                        self.traps
                            .spend(&pattern, how.duplicate_of_host, &mut decided.commit)?;
                    match spent {
                        Ok(()) => {}
                        Err(trap @ Trap::DuplicateLinks { .. }) => {
                            note(trap);
                            decided.commit.dropped.push(ukey);
                            dropped += 1;
                            continue;
                        }
                        // A spent budget: counted here, no record per URL (a page of a
                        // million links would write a million).
                        Err(trap) => {
                            note(trap);
                            trapped += 1;
                            continue;
                        }
                    }
                    let next = QueuedUrl {
                        url: url.to_string(),
                        depth: entry.depth + 1,
                        parent: Some(seq),
                        duplicates: u8::try_from(how.chain).unwrap_or(u8::MAX),
                        patterns: patterns.into_pairs(),
                        ..QueuedUrl::default()
                    };
                    let priority = self.priority_of(entry, how.page_score, &anchor);
                    self.queue(&mut decided.commit, &mut pending, &url, next, priority)?;
                    enqueued += 1;
                }
            }
        }
        decided.decision.enqueued = Some(enqueued);
        if baseline {
            decided.decision.links = Some(graph);
        }
        if *how.follow != Follow::All {
            decided.decision.dropped = Some(dropped);
        }
        if trapped > 0 {
            decided.decision.trapped = Some(trapped);
        }
        if !fired.is_empty() {
            let named: Vec<String> = fired.iter().map(Trap::to_string).collect();
            decided.decision.trap = Some(named.join("; "));
        }
        Ok(())
    }
}
