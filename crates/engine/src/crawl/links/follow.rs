//! A page's links followed: each queued, parked, probed, predicted, refused or dropped, and
//! the page's record counting what became of them.

use super::super::predictions::{self, Predictions};
use super::super::*;
use super::LinkFollowing;
use nearcrawl_extract::Link;
use nearcrawl_link_policy::{Crawl, Found, FoundOn, PageFacts, Parked, Release, parking_answered};

/// What became of one page's links, for its record.
#[derive(Debug, Default)]
struct LinkCounts {
    enqueued: u32,
    /// Links a duplicate does not follow.
    dropped: u32,
    /// Links a trap rule stopped.
    trapped: u32,
    via_hub: u32,
    probed: u32,
    parked: u32,
    /// Queued URLs moved up (focused crawls).
    raised: u32,
    /// Hubs not fetched again for what they led to (`dedup.hub_min_yield`).
    declined: u32,
    /// Links queued that lead where the page's original does not.
    new_found: u32,
    mirrored: u32,
}

impl LinkCounts {
    /// The counts into the page's decision (`link_fates`).
    fn write_into(&self, decision: &mut Decision) {
        let fates = decision.fates_mut();
        fates.queued = self.enqueued;
        fates.dropped = self.dropped;
        fates.via_hub = self.via_hub;
        fates.hubs_declined = self.declined;
        fates.mirror_followed = self.mirrored;
        fates.parked = self.parked;
        fates.probed = self.probed;
        fates.raised = self.raised;
        fates.trapped = self.trapped;
    }
}

/// What following one page's links knows as it goes.
struct PageLinks<'a> {
    /// The URLs this decision queued or refused already.
    pending: HashSet<UrlKey>,
    /// The trap rules that fired, each named once (by the first link it stopped).
    fired: Vec<Trap>,
    counts: LinkCounts,
    /// The URL patterns on the path from a seed to this page.
    path: PatternPath,
    /// A baseline crawl (or one told to, `links.record`) keeps its whole in-scope link
    /// graph, for the exact what-if and audits: the links in order, and which are in it.
    graph: Option<(Vec<String>, HashSet<UrlKey>)>,
    /// What the link policy knows of the page, the same for each of its links.
    on: FoundOn<'a>,
}

impl PageLinks<'_> {
    fn note(&mut self, trap: Trap) {
        let kind = std::mem::discriminant(&trap);
        if !self.fired.iter().any(|t| std::mem::discriminant(t) == kind) {
            self.fired.push(trap);
        }
    }
}

impl Coordinator {
    /// Queues the links of a page that may be followed, records those refused by the scope
    /// or the URL rules, and counts those dropped: a duplicate's links not followed (`dropped`)
    /// and links the pattern-on-path rule stopped (`trapped`; the rules in `trap`).
    pub(in super::super) fn follow_links(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        links: Vec<(Link, Option<CanonicalUrl>)>,
        how: &LinkFollowing<'_>,
        decided: &mut Decided,
    ) -> Result<(), EngineError> {
        // A shared job: the rules other workers' pages taught since.
        self.predictions.catch_up(false)?;
        let mut page = self.page_links(entry, how)?;
        let follow_nofollow = self.job.config.links.follow_nofollow;
        for (link, url) in links {
            if link.nofollow && !follow_nofollow {
                continue;
            }
            // Not a URL the crawl can fetch.
            let Some(url) = url else {
                continue;
            };
            self.follow_link(entry, seq, (link, url), how, &mut page, decided)?;
        }
        self.close_links(entry, seq, how, page, decided);
        Ok(())
    }

    /// What following the links of the page at `entry` starts from.
    fn page_links<'h>(
        &self,
        entry: &QueuedUrl,
        how: &'h LinkFollowing<'_>,
    ) -> Result<PageLinks<'h>, EngineError> {
        let copy_of = match (how.base, &how.original) {
            (Some(base), Some(original)) => Some((base, original)),
            _ => None,
        };
        let matched_by = match how.follow {
            Follow::NewLinks { by, .. } => Some(*by),
            _ => None,
        };
        // Where the original's server declares its pages' lengths. In a shared job the
        // original may be another worker's, not declared yet (it is declared with its
        // decision, after it was admitted to the job's index): its copy's links are probed,
        // and a probe waits for its counterpart's declaration as for its fetch.
        let original_declared = self.links.probes()
            && match &how.original {
                Some(original) => {
                    self.declarations.shared()
                        || self.declarations.length(original.as_str())?.is_some()
                }
                None => false,
            };
        let on = self.links.found_on(PageFacts {
            copy_of,
            matched_by,
            trapped: how.chain_trap.is_some(),
            original_declared,
            local: self.frontier.knows_undecided(),
        });
        Ok(PageLinks {
            pending: HashSet::new(),
            fired: how.chain_trap.iter().cloned().collect(),
            counts: LinkCounts::default(),
            path: PatternPath::from_pairs(entry.patterns.clone()),
            graph: self.job.config.records_links().then(Default::default),
            on,
        })
    }

    /// Follows one of the page's links, whose URL is `url` as a canonical URL.
    fn follow_link(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        (link, url): (Link, CanonicalUrl),
        how: &LinkFollowing<'_>,
        page: &mut PageLinks<'_>,
        decided: &mut Decided,
    ) -> Result<(), EngineError> {
        let followed = match how.base {
            Some(base) => how.follow.followed(base, &link.url, &link.text),
            None => Followed::New,
        };
        let url = match self.predictions.sessions().strip(&url) {
            Some(stripped) => stripped.url,
            None => url,
        };
        let ukey = url_key(url.as_str());
        // The scope's answer, asked once: before the seen check when the graph is kept (its
        // graph holds seen links too), after it otherwise (most links are seen).
        let depth = entry.depth + 1;
        let admitted = page.graph.is_some().then(|| self.admits(&url, depth));
        if let (Some(Ok(())), Some((graph, in_graph))) = (&admitted, &mut page.graph)
            && in_graph.insert(ukey)
        {
            graph.push(url.to_string());
        }
        let seen_before = how.seen.is_some_and(|seen| seen.contains(&ukey));
        if seen_before || self.is_seen(&url, &ukey, &page.pending)? {
            // Moved up by the first of this page's links to it only.
            // (Scored only when still queued: most links lead to pages decided already.)
            if followed != Followed::No
                && how.chain_trap.is_none()
                && self.focus.is_some()
                && !page.pending.contains(&ukey)
                && self.frontier.raisable(&ukey, 0)
                && nearcrawl_link_policy::follows(
                    &Asked::of(&*self.frontier, &*self.store, &self.predictions),
                    &page.on,
                    &url,
                    followed,
                )?
            {
                let words = (link.text.as_str(), link.context.as_str());
                let priority = self.priority_of(entry, how, words, url.as_url());
                if self.frontier.raisable(&ukey, priority)
                    && self.raise(entry, seq, how, &page.path, &url, ukey, priority, decided)?
                {
                    page.pending.insert(ukey);
                    page.counts.raised += 1;
                }
            }
            return Ok(());
        }
        page.pending.insert(ukey);
        let asked = Asked::of(&*self.frontier, &*self.store, &self.predictions);
        let found = self.links.found(&asked, &page.on, &url, followed)?;
        page.counts.declined += u32::from(found.hub_declined);
        let fate = found.fate;
        let skip = how.chain_trap.is_some() || matches!(fate, Found::Drop);
        let waits = matches!(fate, Found::Wait { always: false, .. });
        let at = (depth, seq);
        match admitted.unwrap_or_else(|| self.admits(&url, depth)) {
            // A duplicate's links were never really discovered: no records for them.
            Err(_) if skip || waits => {}
            Err((verdict, reason)) => {
                if verdict == Verdict::OutOfScope {
                    self.watch_scope(Some(&reason));
                }
                self.record_refused_link(&url, ukey, at, verdict, reason, decided)?
            }
            Ok(()) if skip => {
                decided.commit.dropped.push(ukey);
                page.counts.dropped += 1;
            }
            Ok(()) => {
                self.watch_scope(None);
                let words = (link.text.as_str(), link.context.as_str());
                let link = (url, ukey, followed);
                self.queue_link(entry, seq, link, words, how, fate, page, decided)?;
            }
        }
        Ok(())
    }

    /// Queues (or parks, or predicts) a link the scope admits, as its `fate` says, unless a trap
    /// rule stops it.
    #[allow(clippy::too_many_arguments)]
    fn queue_link(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        (url, ukey, followed): (CanonicalUrl, UrlKey, Followed),
        words: (&str, &str),
        how: &LinkFollowing<'_>,
        fate: Found<CanonicalUrl>,
        page: &mut PageLinks<'_>,
        decided: &mut Decided,
    ) -> Result<(), EngineError> {
        let pattern = UrlPattern::of(&url);
        let patterns = match self.traps.rules.check_path(&page.path, &pattern) {
            Ok(patterns) => patterns,
            // Not marked seen: a shorter path may still lead there.
            Err(trap) => {
                page.note(trap);
                page.counts.trapped += 1;
                return Ok(());
            }
        };
        let spent = self
            .traps
            .spend(&pattern, how.duplicate_of_host, &mut decided.commit)?;
        match spent {
            Ok(()) => {}
            Err(trap @ Trap::DuplicateLinks { .. }) => {
                page.note(trap);
                decided.commit.dropped.push(ukey);
                page.counts.dropped += 1;
                return Ok(());
            }
            // A spent budget: counted here, no record per URL (a page of a million links
            // would write a million).
            Err(trap) => {
                page.note(trap);
                page.counts.trapped += 1;
                return Ok(());
            }
        }
        let mut next = QueuedUrl {
            url: url.to_string(),
            depth: entry.depth + 1,
            parent: Some(seq),
            duplicates: u8::try_from(how.chain).unwrap_or(u8::MAX),
            patterns: patterns.into_pairs(),
            off_topic: u8::try_from(how.off_topic).unwrap_or(u8::MAX),
            potential: self
                .focus
                .as_ref()
                .map(|_| QueuedUrl::potential_thousandths(how.potential)),
            ..QueuedUrl::default()
        };
        let probe = |counterpart: CanonicalUrl| {
            Box::new(Probe {
                counterpart: counterpart.to_string(),
                ..Probe::default()
            })
        };
        let priority = self.priority_of(entry, how, words, url.as_url());
        // Only a link fetched as any other is asked of the URL rules.
        let asks_rules = matches!(fate, Found::Fetch);
        let mirrored = matches!(fate, Found::FetchMirror);
        let mut by_hub = false;
        match fate {
            Found::Drop | Found::Fetch | Found::FetchMirror => {}
            Found::FetchAsHub => by_hub = true,
            Found::Probe { counterpart } => next.probe = Some(probe(counterpart)),
            Found::Wait {
                page: waited,
                on,
                probe: probed,
                always,
                sample_of,
            } => {
                next.probe = probed.map(probe);
                let link = ParkedLink {
                    entry: next.clone(),
                    priority,
                    always,
                };
                let commit = &mut decided.commit;
                let answer = (self.frontier).hub_or_park(commit, &waited, &on, ukey, link)?;
                let parked = Parked {
                    always,
                    probe: next.probe.is_some(),
                };
                let local = self.frontier.knows_undecided();
                match parking_answered(answer, parked, local) {
                    None => {
                        if let Some(pair) = sample_of {
                            self.links.candidate(pair, ukey, url.as_str());
                        }
                        page.counts.parked += 1;
                        return Ok(());
                    }
                    Some(Release::Drop) => {
                        decided.commit.dropped.push(ukey);
                        page.counts.dropped += 1;
                        return Ok(());
                    }
                    Some(Release::Follow { new_chain: true }) => by_hub = true,
                    Some(_) => {}
                }
            }
        }
        if by_hub {
            page.counts.via_hub += 1;
            // A hub's counterpart starts a new chain: a new release's pages are duplicates
            // all the way down to its new ones. Fetched, not probed.
            next.duplicates = 0;
            next.probe = None;
        }
        // The link policy: the page a URL rule says this one copies, and what that is worth
        // (`dedup.predict`).
        if asks_rules {
            let fate = self.predictions.for_url(&self.declarations, url.as_url());
            if predictions::apply(fate, &mut next).is_some() {
                // Not requested: its record says which page it copies.
                decided.commit.seen.push(ukey);
                let seq = self.take_seq();
                decided
                    .extra
                    .push(predictions::predicted_record(seq, &next));
                return Ok(());
            }
        }
        if next.probe.is_some() {
            page.counts.probed += 1;
        } else {
            page.counts.enqueued += 1;
        }
        self.queue(&mut decided.commit, &mut page.pending, &url, next, priority)?;
        if mirrored {
            page.counts.mirrored += 1;
        } else if followed != Followed::No
            && !leads_as_original(&self.predictions, how, url.as_url())
        {
            // (Where its original leads too, taken to the original's site, a language's link
            // to its own copy of a section, it leads to no page its original does not.)
            page.counts.new_found += 1;
        }
        Ok(())
    }

    /// The page's links all followed: its record counts what became of them, a hub's size is
    /// noted, and a mirror's sample is settled.
    fn close_links(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        how: &LinkFollowing<'_>,
        page: PageLinks<'_>,
        decided: &mut Decided,
    ) {
        let PageLinks {
            counts,
            graph,
            fired,
            ..
        } = page;
        if self.links.hubs().is_hub(counts.enqueued) {
            // Its own size is its record's, known when the decision is applied. Each link it
            // queued (fetched, probed, or moved up in a focused crawl) is decided in time.
            let yielded = HubYield::new(0, counts.enqueued + counts.probed + counts.raised);
            decided.commit.hub = Some((url_key(&entry.url), seq, yielded));
        }
        if let Some((graph, _)) = graph {
            decided.decision.links = Some(graph);
        }
        counts.write_into(&mut decided.decision);
        if let Follow::NewLinks { .. } = how.follow {
            decided.adds_pages = Some(counts.new_found > 0);
        }
        // A mirror's sample: it added a page when it was no copy at all, or when it links
        // where its original does not.
        if self.links.samples_pending() {
            let adds = match how.follow {
                Follow::All => true,
                Follow::NewLinks { .. } => counts.new_found > 0,
                Follow::None => false,
            };
            self.links.links_followed(&url_key(&entry.url), adds);
        }
        if !fired.is_empty() {
            let named: Vec<String> = fired.iter().map(Trap::to_string).collect();
            decided.decision.trap = Some(named.join("; "));
        }
    }
}

/// Whether the original of the duplicate being decided (`how`) links to the counterpart of
/// its link to `target`: the page a URL rule says `target` copies (a language's
/// `ch02.pt-br.html` for `ch02.pt.html`), or the one the pair's paths say ([`counterpart`]).
fn leads_as_original(predictions: &Predictions, how: &LinkFollowing<'_>, target: &Url) -> bool {
    let Some(original) = &how.original else {
        return false;
    };
    let by_rule = predictions.counterpart_of(target);
    let by_pair = how
        .base
        .and_then(|base| counterpart(predictions.sessions(), base, original, target))
        .map(CanonicalUrl::into_url);
    by_rule
        .into_iter()
        .chain(by_pair)
        .any(|c| how.follow.original_links_to(original, &c))
}

/// The counterpart of `target`, linked from the duplicate `page`, on the site of `page`'s
/// `original`: its path and query under the original's scheme, host and port, the start of
/// the path the two pages do not share swapped ([`nearcrawl_url_rules::carry`]), without the
/// session parameters learned on its host. Only for a `target` on the duplicate's own site.
fn counterpart(
    sessions: &SessionParams,
    page: &Url,
    original: &Url,
    target: &Url,
) -> Option<CanonicalUrl> {
    let counterpart = nearcrawl_url_rules::carry(target, page, original)?;
    let counterpart = CanonicalUrl::from_url(counterpart).ok()?;
    Some(match sessions.strip(&counterpart) {
        Some(stripped) => stripped.url,
        None => counterpart,
    })
}

/// What the link policy asks of the crawl about a found link ([`Crawl`]): the frontier's
/// answers (the job's, in a shared job), this process's store's, and the session
/// parameters learned.
struct Asked<'a> {
    frontier: &'a (dyn Frontier + Send),
    store: &'a dyn CrawlStore,
    sessions: &'a SessionParams,
}

impl<'a> Asked<'a> {
    fn of(
        frontier: &'a (dyn Frontier + Send),
        store: &'a dyn CrawlStore,
        predictions: &'a Predictions,
    ) -> Asked<'a> {
        Asked {
            frontier,
            store,
            sessions: predictions.sessions(),
        }
    }
}

impl Crawl for Asked<'_> {
    type Url = CanonicalUrl;
    type Error = EngineError;

    fn url<'u>(&self, url: &'u CanonicalUrl) -> &'u Url {
        url.as_url()
    }

    fn key(&self, url: &CanonicalUrl) -> UrlKey {
        url_key(url.as_str())
    }

    fn counterpart(&self, page: &Url, original: &Url, target: &Url) -> Option<CanonicalUrl> {
        counterpart(self.sessions, page, original, target)
    }

    fn hub(&self, url: &CanonicalUrl) -> Result<Option<bool>, EngineError> {
        self.frontier.counterpart_hub(url, &url_key(url.as_str()))
    }

    fn hub_yield(&self, url: &CanonicalUrl) -> Result<Option<(u64, HubYield)>, EngineError> {
        Ok(self.store.hub_yield(&url_key(url.as_str()))?)
    }

    fn seen(&self, url: &CanonicalUrl) -> Result<bool, EngineError> {
        self.frontier.is_seen(url, &url_key(url.as_str()))
    }

    fn seen_here(&self, url: &CanonicalUrl) -> Result<bool, EngineError> {
        Ok(self.store.is_seen(&url_key(url.as_str()))?)
    }
}
