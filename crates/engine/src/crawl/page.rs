//! A fetched HTML or text page: the dedup stage's judgement, the page's own robots
//! directives and relevance, its links, and its archive entry.

use super::links;
use super::{
    Analysed, CanonicalUrl, Commit, Coordinator, CrawlStore, Decided, Decision, Duration,
    EngineError, Fetched, Follow, Instant, Original, PreparedFetch, Progress, QueuedUrl, Stage,
    Url, Verdict, WarcWriter, debug, url_key,
};
use nearcrawl_extract::Link;
use nearcrawl_frontier::TermCounts;
use nearcrawl_link_policy::CopyFacts;

use super::sentences::ReadPostings;

/// What a duplicate's decision reads of its original's record: where it is and how it was
/// archived (its other fields are skipped, not parsed).
#[derive(serde::Deserialize)]
pub(super) struct OriginalRecord {
    url: String,
    fetched_at: Option<String>,
    payload_digest: Option<String>,
    warc_record_id: Option<String>,
}

impl OriginalRecord {
    /// What `store` holds of record `seq`'s (a decision's record never changes once
    /// committed).
    pub(super) fn read(store: &dyn CrawlStore, seq: u64) -> Result<Option<Self>, EngineError> {
        Ok(store
            .record(seq)?
            .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
    }

    /// The length the original declared when it was fetched (what a copy's length is
    /// compared with, [`super::declarations::Declarations::length`]), as `store` has it:
    /// `None` too when the read fails (the coordinator then reads it again, and reports).
    pub(super) fn declared_length(&self, store: &dyn CrawlStore) -> Option<u64> {
        store.declared_length(&url_key(&self.url)).ok().flatten()
    }
}

/// What was read of a duplicate's original where it was judged (by the judge on its
/// thread): its record and the length it declared, each when the store had it then (both
/// are written once, with the original's decision).
#[derive(Default)]
pub(super) struct OriginalRead {
    pub(super) record: Option<OriginalRecord>,
    pub(super) length: Option<u64>,
}

impl Coordinator {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decide_page(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        analysed: Box<Analysed>,
        warc: Option<PreparedFetch>,
        seq: u64,
    ) -> Result<Decided, EngineError> {
        let clock = Instant::now();
        let Analysed {
            analysis,
            took: analysis_time,
            terms,
            postings,
            prejudged,
            pattern,
            seen,
            canonical_links,
            judged,
            rendered,
            index_read,
            ..
        } = *analysed;
        let host = nearcrawl_frontier::authority(&page.url);
        let mut judge_time = Duration::ZERO;
        // What the judge on its thread read of a duplicate's original.
        let mut original_read = OriginalRead::default();
        // What keeping the page writes, when the judge on its thread kept it.
        let mut admission = None;
        // A shared job judges against the job's index (and admits there); otherwise the
        // kept pages are this crawl's, in its store: judged on the judge's thread (a unique
        // page kept there once it has its number), or here.
        let (mut judgement, read_postings, shared) = match (judged, self.shared_dedup.as_mut()) {
            (Some(mut away), _) => {
                Progress::add(&self.progress.sentence_matches, away.matches);
                judge_time = away.took;
                original_read = std::mem::take(&mut away.original_read);
                let (judgement, kept) = away.judgement(analysis);
                if let Some((ticket, kept)) = kept {
                    self.judge.keep_away(ticket, Some(seq));
                    admission = Some(kept);
                }
                (judgement, ReadPostings::default(), None)
            }
            (None, Some(dedup)) => {
                let stage = self.judge.local()?.stage_mut();
                let shared = dedup.judge(stage, analysis, (&entry.url, &host), index_read)?;
                Progress::add(&self.progress.sentence_matches, shared.matches);
                let judgement = shared.judgement;
                let outcome = (shared.kept, shared.original_url);
                (judgement, ReadPostings::default(), Some(outcome))
            }
            (None, None) => {
                let judged = self.judge.local()?.judge(analysis, postings, prejudged)?;
                Progress::add(&self.progress.sentence_matches, judged.matches);
                (judged.judgement, judged.postings, None)
            }
        };
        let analysis = &judgement.analysis;
        let mut decided = Decided::new(Decision::new(Verdict::from(judgement.verdict)));
        if let Some(static_text) = rendered.as_ref().and_then(|r| r.static_text) {
            (self.links.rendered(&entry.url, static_text)).map_err(EngineError::Shared)?;
        }
        decided.decision.rendered = rendered;
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
        // A focused crawl: how relevant the page is, and how deep into a tunnel of off-topic
        // pages it lies.
        let scoring = Instant::now();
        let focus = self.focus.as_mut().map(|focus| {
            let r = focus.relevance_mut();
            // Counted on the blocking pool; here only when the page came another way.
            let terms =
                terms.unwrap_or_else(|| TermCounts::of(&format!("{title}\n{}", analysis.text)));
            r.assess(
                &terms,
                u32::from(entry.off_topic),
                entry.potential(),
                entry.depth == 0,
            )
        });
        if focus.is_some() {
            self.progress.add_time(Stage::Focus, scoring.elapsed());
        }
        if let Some(focus) = focus {
            decided.decision.relevance = Some((focus.relevance * 1000.0).round() / 1000.0);
            decided.decision.off_topic = Some(focus.off_topic);
            if let Some(focus) = &mut self.focus {
                decided.commit.blobs.extend(focus.take_to_keep());
            }
        }

        // The original's record, read once: its URL and payload digest (in a shared job the
        // original may be another worker's: its URL is the index's).
        let original = match (judgement.original, &shared) {
            (Some(nearcrawl_dedup::Original::Kept(seq)), None) => match original_read.record {
                Some(record) => Some(record),
                None => OriginalRecord::read(self.store.as_ref(), seq)?,
            },
            _ => None,
        };
        match judgement.original {
            Some(nearcrawl_dedup::Original::Kept(of)) => {
                decided.decision.duplicate_of = match &shared {
                    Some((_, url)) => url.clone(),
                    None => original.as_ref().map(|r| r.url.clone()),
                };
                decided.decision.cluster = Some(of);
            }
            Some(nearcrawl_dedup::Original::Shared(n)) => {
                decided.decision.duplicate_of = self.shared.urls.get(n as usize).cloned();
            }
            // A shared job numbers clusters by the job's page ids.
            None => {
                decided.decision.cluster = Some(shared.as_ref().and_then(|s| s.0).unwrap_or(seq))
            }
        }
        // What a URL rule predicted for this page, checked; and the rule its verdict teaches.
        let duplicate_of = decided.decision.duplicate_of.clone();
        if let Some(prediction) = entry.predicted.clone() {
            let judged = duplicate_of
                .as_deref()
                .filter(|_| decided.decision.verdict.is_duplicate());
            // Its probe found it unchanged when it was fetched only for its links.
            let told = entry.probe.as_ref().is_some_and(|p| p.links_unknown > 0);
            let checked = super::predictions::check(&mut self.links, *prediction, judged, told)?;
            decided.decision.prediction = Some(checked);
        }
        // Learned once its links are read (below): whether it adds pages of its own.
        let duplicate = decided.decision.verdict.is_duplicate();
        let learn_from = match (&duplicate_of, duplicate && self.links.learned().enabled()) {
            (Some(original), true) => {
                let theirs = match original_read.length {
                    Some(length) => Some(length),
                    None => self.declarations.length(original)?,
                };
                let facts = self.links.copy_facts(page.content_length(), theirs);
                Some((original.clone(), facts))
            }
            _ => None,
        };
        self.progress.add_times(&analysis.times);
        if judgement.verdict == nearcrawl_dedup::Likeness::Unique && shared.is_some() {
            // Admitted to the job's index already.
        } else if let Some(mut kept) = admission {
            // Kept on the judge's thread: its writes go with the decision.
            kept.seq = seq;
            super::judge::commit_admission(kept, &mut decided.commit);
        } else if judgement.verdict == nearcrawl_dedup::Likeness::Unique {
            self.keep_unique(seq, &host, &judgement, read_postings, &mut decided.commit)?;
        } else {
            decided.decision.distance = judgement.distance;
            decided.decision.similarity = judgement
                .similarity
                .map(|similarity| (similarity * 1000.0).round() / 1000.0);
            Progress::add(&self.progress.duplicates, 1);
            learned = (self.links)
                .observe_session(&entry.url, decided.decision.duplicate_of.as_deref())
                .map_err(EngineError::Shared)?;
            if let Some(learned) = &learned {
                tracing::info!(url = %entry.url, "{learned}");
            }
            debug!(url = %entry.url, original = ?decided.decision.duplicate_of, distance = ?decided.decision.distance, "duplicate");
        }
        let dedup_time = analysis_time + judge_time + clock.elapsed();
        decided.decision.dedup_us = Some(dedup_time.as_micros() as u64);
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
        // A page whose probe found the text of a counterpart on another site, fetched only
        // for its own links, is not one more in the row: what it leads to is bounded by its
        // counterpart's site, crawled already, so a release's deep pages are reached whatever
        // their depth. A counterpart on its own site bounds nothing (a calendar's day that
        // copies its month, checked against it by a URL rule, links to the next day).
        let for_links = entry
            .probe
            .as_ref()
            .is_some_and(|p| p.links_unknown > 0 && host_of(&p.counterpart) != host_of(&entry.url));
        let chain = match judgement.verdict {
            nearcrawl_dedup::Likeness::Unique => 0,
            _ if for_links => u32::from(entry.duplicates),
            _ => u32::from(entry.duplicates) + 1,
        };
        let chain_trap = match follow {
            Follow::All => None,
            _ => self.traps.rules.check_chain(chain).err(),
        };
        // A page of too little text to judge, in a dedup crawl (a baseline follows all): its
        // links followed while few pages of its host said about the same (a path that
        // branches below every page, each the same few words).
        let little = judgement.analysis.little_text.is_some() && self.job.config.dedup.enabled;
        let chain_trap = match chain_trap {
            None if little => {
                let fingerprint = judgement.analysis.simhash.bits();
                self.traps.same_text(&host, fingerprint).err()
            }
            trap => trap,
        };
        let expands = focus.is_none_or(|f| f.expands);
        // The page's links, taken from its analysis (kept already, if unique), each with its
        // canonical URL as the pool worked it out (or here, when it did not).
        let mut links: Vec<(Link, Option<CanonicalUrl>)> = Vec::new();
        if let Some(facts) = judgement.analysis.facts.as_mut() {
            let found = std::mem::take(&mut facts.links);
            let canonical = match canonical_links {
                Some(canonical) if canonical.len() == found.len() => canonical,
                _ => found
                    .iter()
                    .map(|l| CanonicalUrl::from_url(l.url.clone()).ok())
                    .collect(),
            };
            links.extend(found.into_iter().zip(canonical));
        }
        let analysis = &judgement.analysis;
        if let Some(facts) = &analysis.facts
            && let Some(canonical) = facts
                .canonical
                .as_ref()
                .and_then(|c| CanonicalUrl::from_url(c.clone()).ok())
            && canonical.as_str() != entry.url
        {
            decided.decision.canonical = Some(canonical.to_string());
            if self.job.config.links.follow_canonical {
                let link = Link {
                    url: canonical.as_url().clone(),
                    text: String::new(),
                    nofollow: false,
                    context: String::new(),
                };
                links.push((link, Some(canonical)));
            }
        }
        decided.decision.outlinks = Some(links.len() as u32);
        if let Some(over) = analysis.facts.as_ref().map(|f| f.links_over_cap)
            && over > 0
        {
            decided.decision.fates_mut().over_cap = over;
        }
        decided.decision.text_cut_from = analysis.text_cut_from.map(|n| n as u64);
        decided.decision.little_text = analysis.little_text.map(|n| n as u64);
        decided.decision.template_chars = analysis.template_chars.map(|n| n as u64);
        if let Follow::NewLinks { by, .. } = &judgement.follow {
            decided.decision.fates_mut().matched_by = Some(*by);
        }
        let duplicate = judgement.verdict != nearcrawl_dedup::Likeness::Unique;
        // A distinct page (kept, with text of its own) earns its URL pattern more budget.
        // (The pattern of the URL requested, the entry's, worked out where it was analysed.)
        if !duplicate
            && analysis.little_text.is_none()
            && let Some(pattern) = pattern
        {
            self.traps.distinct(&pattern, &mut decided.commit)?;
        }
        let follow = links::LinkFollowing {
            follow,
            base: analysis.facts.as_ref().map(|f| &f.base),
            original: match judgement.original {
                Some(nearcrawl_dedup::Original::Kept(_)) => decided
                    .decision
                    .duplicate_of
                    .as_deref()
                    .and_then(|u| Url::parse(u).ok()),
                _ => None,
            },
            chain,
            chain_trap,
            duplicate_of_host: duplicate.then_some(host.as_str()),
            potential: focus.map_or(0.0, |f| f.potential),
            off_topic: focus.map_or(0, |f| f.off_topic),
            seen: seen.as_ref(),
        };
        if let Some(original) = &follow.original
            && let Ok(page) = Url::parse(&entry.url)
        {
            self.links.note_copy(&page, original);
        }
        if !nofollow && expands {
            let urls: Vec<&CanonicalUrl> = links.iter().filter_map(|(_, c)| c.as_ref()).collect();
            self.frontier.look_up_seen(&urls)?;
            (self.carry()).follow_links(entry, seq, links, &follow, &mut decided)?;
        } else {
            decided.decision.fates_mut();
            decided.decision.trap = follow.chain_trap.as_ref().map(|trap| trap.to_string());
        }
        if let Some((original, facts)) = learn_from {
            let facts = CopyFacts {
                adds_pages: decided.added.as_ref().map(|added| !added.is_empty()),
                ..facts
            };
            let added = decided.added.as_deref().unwrap_or_default();
            (self.links.learn(&entry.url, &original, facts, added)).map_err(EngineError::Shared)?;
        }
        if let Some(learned) = learned {
            let trap = decided.decision.trap.take().into_iter();
            decided.decision.trap = Some(trap.chain([learned]).collect::<Vec<_>>().join("; "));
        }
        if *follow.follow != Follow::All {
            let dropped = decided.decision.fates_mut().total("drop");
            Progress::add(&self.progress.dropped_outlinks, u64::from(dropped));
        }
        if self.job.config.records_links() && decided.decision.links.is_none() {
            decided.decision.links = Some(Vec::new());
        }

        // The archive: a byte-identical exact duplicate is a revisit of its original.
        let digest = match &warc {
            Some(prepared) => prepared.payload_digest.clone(),
            None => WarcWriter::digest(&page.wire_body),
        };
        let revisit = original.as_ref().filter(|o| {
            decided.decision.verdict == Verdict::Exact
                && o.payload_digest.as_deref() == Some(digest.as_str())
        });
        let revisit = revisit.map(|o| {
            let date = o.fetched_at.clone().unwrap_or_default();
            (o.url.clone(), date, o.warc_record_id.clone())
        });
        // A recrawl: a page whose payload is its previous capture's, byte for byte.
        let unchanged = entry
            .previous
            .as_ref()
            .filter(|p| p.payload_digest.as_deref() == Some(digest.as_str()));
        let revisit = match unchanged {
            Some(previous) => Some((
                entry.url.clone(),
                previous.fetched_at.clone().unwrap_or_default(),
                previous.warc_record_id.clone(),
            )),
            None => revisit,
        };
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
        let revisit = revisit
            .as_ref()
            .map(|(url, date, id)| Original::identical(url, date).in_record(id.as_deref()));
        let record_id = self
            .archive
            .response_prepared(page, warc, revisit, &metadata)?;
        decided.decision.warc_record_id = record_id;
        decided.decision.payload_digest = Some(digest);
        Ok(decided)
    }
}

impl Coordinator {
    /// Keeps page `seq` of `host`, judged unique ([`super::judge::Judge::keep`]), its time
    /// counted as the index stage's.
    pub(super) fn keep_unique(
        &mut self,
        seq: u64,
        host: &str,
        judgement: &nearcrawl_dedup::Judgement,
        read_postings: ReadPostings,
        commit: &mut Commit,
    ) -> Result<(), EngineError> {
        let admitting = Instant::now();
        self.judge
            .local()?
            .keep(seq, host, judgement, read_postings, commit)?;
        self.progress.add_time(Stage::Index, admitting.elapsed());
        Ok(())
    }
}

/// The authority (host and port) of a URL as stored (`None` when it does not parse).
fn host_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .map(|url| nearcrawl_frontier::authority(&url))
}
