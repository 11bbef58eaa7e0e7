//! A page's links followed: each queued, parked, probed, predicted, refused or dropped, and
//! the page's record counting what became of them.

use super::super::predictions;
use super::super::{
    CanonicalUrl, CrawlStore, Decided, EngineError, Follow, Followed, Frontier, HashSet, HubYield,
    ParkedLink, PatternPath, Probe, QueuedUrl, Trap, Url, UrlKey, UrlPattern, Verdict, url_key,
};
use super::{Carry, LinkFollowing};
use nearcrawl_extract::Link;
use nearcrawl_frontier::SessionParams;
use nearcrawl_link_policy::{
    By, Crawl, Decider, Fate, FoundOn, Learned, PageFacts, Parked, Until, parking_answered,
};
use nearcrawl_records::LinkFates;

/// What following one page's links knows as it goes.
struct PageLinks<'a> {
    /// The URLs this decision queued or refused already.
    pending: HashSet<UrlKey>,
    /// The trap rules that fired, each named once (by the first link it stopped).
    fired: Vec<Trap>,
    /// What became of its links, for its record.
    fates: LinkFates,
    /// The URLs of links queued that lead where the page's original does not.
    added: Vec<String>,
    /// The URL patterns on the path from a seed to this page.
    path: PatternPath,
    /// A baseline crawl (or one told to, `links.record`) keeps its whole in-scope link
    /// graph, for the exact what-if and audits: the links in order, and which are in it.
    graph: Option<(Vec<String>, HashSet<UrlKey>)>,
    /// What the link policy knows of the page, the same for each of its links.
    on: FoundOn<'a>,
}

impl PageLinks<'_> {
    /// What following the links of the page at `entry` starts from.
    fn new<'h>(
        crawl: &Carry<'_>,
        entry: &QueuedUrl,
        how: &'h LinkFollowing<'_>,
    ) -> Result<PageLinks<'h>, EngineError> {
        let copy_of = how.base.zip(how.original.as_ref());
        let matched_by = match how.follow {
            Follow::NewLinks { by, .. } => Some(*by),
            _ => None,
        };
        // Where the original's server declares its pages' lengths. In a shared job the
        // original may be another worker's, not declared yet (it is declared with its
        // decision, after it was admitted to the job's index): its copy's links are probed,
        // and a probe waits for its counterpart's declaration as for its fetch.
        let original_declared = crawl.links.probes()
            && match &how.original {
                Some(original) => {
                    crawl.declarations.shared()
                        || crawl.declarations.length(original.as_str())?.is_some()
                }
                None => false,
            };
        let on = crawl.links.found_on(PageFacts {
            copy_of,
            matched_by,
            trapped: how.chain_trap.is_some(),
            original_declared,
            local: crawl.frontier.knows_undecided(),
            page: Some(url_key(&entry.url)),
        });
        Ok(PageLinks {
            pending: HashSet::new(),
            fired: how.chain_trap.iter().cloned().collect(),
            fates: LinkFates::default(),
            added: Vec::new(),
            path: PatternPath::from_pairs(entry.patterns.clone()),
            graph: crawl.config.records_links().then(Default::default),
            on,
        })
    }

    /// The page's links all followed: its record counts what became of them, a hub's size is
    /// noted, and a mirror's sample is settled.
    fn close(
        self,
        links: &mut Decider,
        entry: &QueuedUrl,
        seq: u64,
        how: &LinkFollowing<'_>,
        decided: &mut Decided,
    ) {
        let PageLinks {
            fates,
            added,
            graph,
            fired,
            ..
        } = self;
        if links.hubs().is_hub(fates.total("fetch")) {
            // Its own size is its record's, known when the decision is applied. Each link it
            // queued (fetched, checked, or moved up in a focused crawl) is decided in time.
            let yielded = HubYield::new(0, fates.queued() + fates.raised);
            decided.commit.hub = Some((url_key(&entry.url), seq, yielded));
        }
        if let Some((graph, _)) = graph {
            decided.decision.links = Some(graph);
        }
        // (What the page's analysis counted stays: links past the cap, how they matched.)
        let counted = decided.decision.fates_mut();
        *counted = LinkFates {
            over_cap: counted.over_cap,
            matched_by: counted.matched_by,
            ..fates
        };
        // A mirror's sample: it added a page when it was no copy at all, or when it links
        // where its original does not.
        if links.samples_pending() {
            let adds = match how.follow {
                Follow::All => true,
                Follow::NewLinks { .. } => !added.is_empty(),
                Follow::None => false,
            };
            links.links_followed(&url_key(&entry.url), adds);
        }
        if let Follow::NewLinks { .. } = how.follow {
            decided.added = Some(added);
        }
        if !fired.is_empty() {
            let named: Vec<String> = fired.iter().map(Trap::to_string).collect();
            decided.decision.trap = Some(named.join("; "));
        }
    }
    fn note(&mut self, trap: Trap) {
        let kind = std::mem::discriminant(&trap);
        if !self.fired.iter().any(|t| std::mem::discriminant(t) == kind) {
            self.fired.push(trap);
        }
    }
}

impl Carry<'_> {
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
        (self.links.catch_up(false)).map_err(EngineError::Shared)?;
        let mut page = PageLinks::new(self, entry, how)?;
        let follow_nofollow = self.config.links.follow_nofollow;
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
        page.close(self.links, entry, seq, how, decided);
        Ok(())
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
        let url = match self.links.learned().sessions().strip(&url) {
            Some(stripped) => stripped.url,
            None => url,
        };
        let ukey = url_key(url.as_str());
        // The scope's answer, asked once: before the seen check when the graph is kept (its
        // graph holds seen links too), after it otherwise (most links are seen).
        let depth = entry.depth + 1;
        let admitted = page
            .graph
            .is_some()
            .then(|| self.traps.admits(self.scope, &url, depth));
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
                    &Asked(&*self.frontier, self.store),
                    self.links.learned().sessions(),
                    &page.on,
                    &url,
                    followed,
                )?
            {
                let words = (link.text.as_str(), link.context.as_str());
                let priority = super::priority_of(self.focus, entry, how, words, url.as_url());
                if self.frontier.raisable(&ukey, priority)
                    && self.raise(entry, seq, how, &page.path, &url, ukey, priority, decided)?
                {
                    page.pending.insert(ukey);
                    page.fates.raised += 1;
                }
            }
            return Ok(());
        }
        page.pending.insert(ukey);
        let asked = Asked(&*self.frontier, self.store);
        let found = self.links.found(&asked, &page.on, &url, followed)?;
        let fate = match how.chain_trap {
            // The chain of duplicates stops the page's links.
            Some(_) => Fate::Drop { by: By::Trap },
            None => found,
        };
        let skip = matches!(fate, Fate::Drop { .. });
        let waits = matches!(fate, Fate::Wait { always: false, .. });
        let at = (depth, seq);
        match admitted.unwrap_or_else(|| self.traps.admits(self.scope, &url, depth)) {
            // A duplicate's links were never really discovered: no records for them.
            Err(_) if skip => page.fates.add(&fate),
            Err(_) if waits => page.fates.add_named("drop", "scope", 1),
            Err((verdict, reason)) => {
                if verdict == Verdict::OutOfScope {
                    self.scope_watch.watch(Some(&reason));
                }
                let by = match verdict {
                    Verdict::Trap => "trap",
                    _ => "scope",
                };
                page.fates.add_named("drop", by, 1);
                self.record_refused_link(&url, ukey, at, verdict, reason, decided)?
            }
            Ok(()) if skip => {
                decided.commit.dropped.push(ukey);
                page.fates.add(&fate);
            }
            Ok(()) => {
                self.scope_watch.watch(None);
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
        fate: Fate<CanonicalUrl>,
        page: &mut PageLinks<'_>,
        decided: &mut Decided,
    ) -> Result<(), EngineError> {
        let pattern = UrlPattern::of(&url);
        let patterns = match self.traps.rules.check_path(&page.path, &pattern) {
            Ok(patterns) => patterns,
            // Not marked seen: a shorter path may still lead there.
            Err(trap) => {
                page.note(trap);
                page.fates.add_named("drop", "trap", 1);
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
                page.fates.add_named("drop", "trap", 1);
                return Ok(());
            }
            // A spent budget: counted here, no record per URL (a page of a million links
            // would write a million).
            Err(trap) => {
                page.note(trap);
                page.fates.add_named("drop", "trap", 1);
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
        let priority = super::priority_of(self.focus, entry, how, words, url.as_url());
        // Only a link fetched as new is asked of the URL rules.
        let asks_rules = matches!(fate, Fate::Fetch { by: By::New });
        let fate = match fate {
            Fate::Wait {
                until,
                probe: probed,
                always,
            } => {
                // The page to wait for and the key to park on: else the link's own URL, which
                // no decision releases but the samples', a hub's links' or the crawl's end.
                let (waited, on, sample_of) = match &until {
                    Until::Page { page, on } => (page.clone(), *on, None),
                    Until::Samples { pair, on } => (url.clone(), *on, Some(*pair)),
                    Until::HubLinks { on } => (url.clone(), *on, None),
                    Until::End => (url.clone(), ukey, None),
                };
                next.probe = probed.clone().map(probe);
                let link = ParkedLink {
                    entry: next.clone(),
                    priority,
                    always,
                };
                let commit = &mut decided.commit;
                let answer = (self.frontier).hub_or_park(commit, &waited, &on, ukey, link)?;
                let parked = Parked {
                    always,
                    probe: probed,
                };
                let local = self.frontier.knows_undecided();
                match parking_answered(answer, parked, local) {
                    None => {
                        if let Some(pair) = sample_of {
                            self.links.candidate(pair, ukey, url.as_str());
                        }
                        page.fates.add_named("wait", until.name(always), 1);
                        return Ok(());
                    }
                    Some(answer) => answer,
                }
            }
            fate => fate,
        };
        match &fate {
            Fate::Drop { .. } | Fate::Skip { .. } | Fate::Wait { .. } => {
                decided.commit.dropped.push(ukey);
                page.fates.add(&fate);
                return Ok(());
            }
            Fate::Check { against, .. } => next.probe = Some(probe(against.clone())),
            Fate::Fetch { .. } => {}
        }
        // The link policy: the page a URL rule says this one copies, and what that is worth
        // (`dedup.predict`).
        let fate = match asks_rules {
            true => (self.links).rule_fate(url.as_url(), &predictions::held(self.declarations)),
            false => fate.map(CanonicalUrl::into_url),
        };
        if predictions::apply(fate.clone(), &mut next).is_some() {
            // Not requested: its record says which page it copies.
            decided.commit.seen.push(ukey);
            page.fates.add(&fate);
            let seq = self.counters.take_seq();
            decided.extra.push(crate::record::predicted(seq, &next));
            return Ok(());
        }
        super::carry_out(&fate, &mut next);
        page.fates.add(&fate);
        self.queue(&mut decided.commit, &mut page.pending, &url, next, priority)?;
        if followed != Followed::No
            && fate.may_add_page()
            && !leads_as_original(self.links.learned(), how, url.as_url())
        {
            // (Where its original leads too, taken to the original's site, a language's link
            // to its own copy of a section, it leads to no page its original does not.)
            page.added.push(url.to_string());
        }
        Ok(())
    }
}

/// Whether the original of the duplicate being decided (`how`) links to the counterpart of
/// its link to `target` ([`nearcrawl_link_policy::Learned::leads_as_original`]).
fn leads_as_original(learned: &Learned, how: &LinkFollowing<'_>, target: &Url) -> bool {
    let Some(original) = &how.original else {
        return false;
    };
    let links_to = |c: &Url| how.follow.original_links_to(original, c);
    learned.leads_as_original(how.base, original, target, links_to)
}

/// What the link policy asks of the crawl about a found link ([`Crawl`]): the frontier's
/// answers (the job's, in a shared job) and this process's store's.
struct Asked<'a>(&'a (dyn Frontier + Send), &'a dyn CrawlStore);

impl Crawl for Asked<'_> {
    type Url = CanonicalUrl;
    type Error = EngineError;

    fn url<'u>(&self, url: &'u CanonicalUrl) -> &'u Url {
        url.as_url()
    }

    fn counterpart(
        &self,
        sessions: &SessionParams,
        page: &Url,
        original: &Url,
        target: &Url,
    ) -> Option<CanonicalUrl> {
        nearcrawl_link_policy::carried(sessions, page, original, target)
    }

    fn hub(&self, url: &CanonicalUrl) -> Result<Option<bool>, EngineError> {
        self.0.counterpart_hub(url, &url_key(url.as_str()))
    }

    fn hub_yield(&self, url: &CanonicalUrl) -> Result<Option<(u64, HubYield)>, EngineError> {
        Ok(self.1.hub_yield(&url_key(url.as_str()))?)
    }

    fn seen(&self, url: &CanonicalUrl) -> Result<bool, EngineError> {
        self.0.is_seen(url, &url_key(url.as_str()))
    }

    fn seen_here(&self, url: &CanonicalUrl) -> Result<bool, EngineError> {
        Ok(self.1.is_seen(&url_key(url.as_str()))?)
    }

    fn canonical(&self, url: Url) -> Option<CanonicalUrl> {
        CanonicalUrl::from_url(url).ok()
    }
}
