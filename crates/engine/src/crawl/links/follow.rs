//! A page's links followed: each queued, parked, probed, predicted, refused or dropped, and
//! the page's record counting what became of them.

use super::super::mirrors::MirrorLink;
use super::super::predictions;
use super::super::*;
use super::LinkFollowing;
use nearcrawl_extract::Link;
use nearcrawl_link_policy::{HubWorth, Matched, MatchedLink};

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
    /// A mirror's copy (another site, links matched by anchor text): the page and its
    /// original. Its links whose text the original has are its mirror's to sample.
    mirror_of: Option<(&'a Url, &'a Url)>,
    /// Whether a duplicate's link may be followed as a hub's counterpart.
    hubs: bool,
    /// Whether a duplicate's link may be probed: where the original's server declares its
    /// pages' lengths.
    probing: bool,
}

impl PageLinks<'_> {
    fn note(&mut self, trap: Trap) {
        let kind = std::mem::discriminant(&trap);
        if !self.fired.iter().any(|t| std::mem::discriminant(t) == kind) {
            self.fired.push(trap);
        }
    }
}

/// How a link the page's rule does not follow as new may be followed still: as a hub's
/// counterpart, probed, parked until something is decided (a mirror's link, a candidate for
/// its samples).
#[derive(Default)]
struct Plan {
    follows: bool,
    by_hub: bool,
    probe: Option<Probe>,
    /// Parked on a key until the page there is decided: the page, the key, and whether it
    /// is followed then whatever it was (`ParkedLink::always`).
    park: Option<(CanonicalUrl, UrlKey, bool)>,
    mirror: Option<MirrorLink>,
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
        let samples = self.job.config.dedup.mirror_samples;
        let mirror_of = match (how.follow, how.base, &how.original) {
            (Follow::NewLinks { by, .. }, Some(base), Some(original))
                if *by == nearcrawl_link_policy::LinkMatch::Anchor
                    && samples > 0
                    && how.chain_trap.is_none()
                    && self.frontier.knows_undecided()
                    && !nearcrawl_dedup::same_site(base, original) =>
            {
                Some((base, original))
            }
            _ => None,
        };
        // Where the original's server declares its pages' lengths. In a shared job the
        // original may be another worker's, not declared yet (it is declared with its
        // decision, after it was admitted to the job's index): its copy's links are probed,
        // and a probe waits for its counterpart's declaration as for its fetch.
        let probing = self.job.config.dedup.probe_links
            && match &how.original {
                Some(original) => {
                    self.declarations.shared()
                        || self.declarations.length(original.as_str())?.is_some()
                }
                None => false,
            };
        Ok(PageLinks {
            pending: HashSet::new(),
            fired: how.chain_trap.iter().cloned().collect(),
            counts: LinkCounts::default(),
            path: PatternPath::from_pairs(entry.patterns.clone()),
            graph: self.job.config.records_links().then(Default::default),
            mirror_of,
            hubs: self.job.config.dedup.hub_min_links > 0,
            probing,
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
        let mut follows = followed != Followed::No;
        let url = match self.predictions.sessions().strip(&url) {
            Some(stripped) => stripped.url,
            None => url,
        };
        let ukey = url_key(url.as_str());
        // Followed for leading beyond the original's places for its text, on another site
        // than the original's: not when its counterpart there was crawled (a release's
        // copy judged against another page of the previous release), which then goes the
        // way of any matched link (hub, probe, park).
        if followed == Followed::Surplus
            && let (Some(base), Some(original)) = (how.base, &how.original)
            && !nearcrawl_dedup::same_site(base, original)
            && let Some(counterpart) = self.counterpart(base, original, url.as_url())
            && self.store.is_seen(&url_key(counterpart.as_str()))?
        {
            follows = false;
        }
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
            if follows
                && how.chain_trap.is_none()
                && self.focus.is_some()
                && !page.pending.contains(&ukey)
                && self.frontier.raisable(&ukey, 0)
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
        let plan = self.plan(&url, how, follows, page)?;
        let skip = how.chain_trap.is_some() || !plan.follows;
        let at = (depth, seq);
        match admitted.unwrap_or_else(|| self.admits(&url, depth)) {
            // A duplicate's links were never really discovered: no records for them.
            Err(_) if skip || plan.park.as_ref().is_some_and(|(_, _, always)| !always) => {}
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
                self.queue_link(entry, seq, link, words, how, plan, page, decided)?;
            }
        }
        Ok(())
    }

    /// How a new link to `url` not followed as new (`follows` false) may be followed still,
    /// by what the crawl knows of its counterpart on the original's site
    /// (`nearcrawl_link_policy::matched_link`); and whether a followed link of a site that
    /// copies another waits for its counterpart there, or is a mirror's sample.
    fn plan(
        &mut self,
        url: &CanonicalUrl,
        how: &LinkFollowing<'_>,
        follows: bool,
        page: &mut PageLinks<'_>,
    ) -> Result<Plan, EngineError> {
        let mut plan = Plan {
            follows,
            ..Plan::default()
        };
        // Where the original's link to the same place (relative to each site) led, for a
        // new link not followed as new, when a hub or a probe could still follow it.
        let counterpart = match (follows, how.base, &how.original) {
            (false, Some(base), Some(original)) if page.hubs || page.probing => {
                self.counterpart(base, original, url.as_url())
            }
            _ => None,
        };
        if let Some(counterpart) = counterpart {
            let key = url_key(counterpart.as_str());
            let hub = match page.hubs {
                true => self.frontier.counterpart_hub(&counterpart, &key)?,
                false => Some(false),
            };
            // What a hub led to is counted by the process that decided it (a shared job's
            // worker asks nothing: `matched_link` knows it cannot know).
            let yields = page.probing && self.frontier.knows_undecided();
            let (worth, hub_links) = match hub == Some(true) && yields {
                true => self.hub_worth(&key)?,
                false => (HubWorth::Worth, None),
            };
            // Seen by the job: a shared job's seen set is its frontier's, not this store's.
            let seen = page.probing
                && how.chain_trap.is_none()
                && self.frontier.is_seen(&counterpart, &key)?;
            let (fate, hub_declined) = nearcrawl_link_policy::matched_link(Matched {
                hub,
                worth,
                counterpart_seen: seen,
                probing: page.probing,
                trapped: how.chain_trap.is_some(),
                local: self.frontier.knows_undecided(),
            });
            page.counts.declined += u32::from(hub_declined);
            let probe = |yes: bool| {
                yes.then(|| Probe {
                    counterpart: counterpart.to_string(),
                    ..Probe::default()
                })
            };
            match fate {
                MatchedLink::FollowAsHub => plan.by_hub = true,
                MatchedLink::Probe => plan.probe = probe(true),
                MatchedLink::ParkOnCounterpart { probe: yes } => {
                    plan.probe = probe(yes);
                    plan.park = Some((counterpart, key, false));
                }
                MatchedLink::ParkOnHubLinks { probe: yes } => {
                    plan.probe = probe(yes);
                    plan.park = Some((counterpart, hub_links.unwrap_or(key), false));
                }
                MatchedLink::Drop => {}
            }
            plan.follows = plan.by_hub || plan.probe.is_some() || plan.park.is_some();
        } else if follows
            && how.chain_trap.is_none()
            && self.frontier.knows_undecided()
            && let Some(first) = self.copied_sites.copied(url.as_url()).and_then(|copied| {
                // Path for path: from the copying site's root to the copied one's.
                let mut root = url.as_url().clone();
                root.set_path("/");
                root.set_query(None);
                self.counterpart(&root, copied, url.as_url())
            })
        {
            let key = url_key(first.as_str());
            if self.frontier.counterpart_hub(&first, &key)?.is_none() {
                plan.park = Some((first, key, true));
            }
        }
        // A mirror's copy's link to its own site whose text the original has.
        if !plan.follows
            && plan.park.is_none()
            && let Some((base, original)) = page.mirror_of
            && nearcrawl_dedup::same_site(base, url.as_url())
        {
            match self.mirrors.link(base, original) {
                MirrorLink::Drop => {}
                fate => {
                    if let MirrorLink::Park { on, .. } = fate {
                        plan.park = Some((url.clone(), on, false));
                    }
                    plan.mirror = Some(fate);
                }
            }
            plan.follows = plan.park.is_some() || plan.mirror.is_some();
        }
        Ok(plan)
    }

    /// Queues (or parks, or predicts) a link the scope admits, as `plan` says, unless a trap
    /// rule stops it.
    #[allow(clippy::too_many_arguments)]
    fn queue_link(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        (url, ukey, followed): (CanonicalUrl, UrlKey, Followed),
        words: (&str, &str),
        how: &LinkFollowing<'_>,
        plan: Plan,
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
        let Plan {
            mut by_hub,
            probe,
            park,
            mirror,
            ..
        } = plan;
        let mut next = QueuedUrl {
            url: url.to_string(),
            depth: entry.depth + 1,
            parent: Some(seq),
            probe: probe.map(Box::new),
            duplicates: u8::try_from(how.chain).unwrap_or(u8::MAX),
            patterns: patterns.into_pairs(),
            off_topic: u8::try_from(how.off_topic).unwrap_or(u8::MAX),
            potential: self
                .focus
                .as_ref()
                .map(|_| QueuedUrl::potential_thousandths(how.potential)),
            ..QueuedUrl::default()
        };
        let priority = self.priority_of(entry, how, words, url.as_url());
        if let Some((counterpart, key, always)) = &park {
            let link = ParkedLink {
                entry: next.clone(),
                priority,
                always: *always,
            };
            let commit = &mut decided.commit;
            match self
                .frontier
                .hub_or_park(commit, counterpart, key, ukey, link)?
            {
                Parking::Hub => {
                    let local = self.frontier.knows_undecided();
                    by_hub =
                        !*always && nearcrawl_link_policy::follows_hub(local, next.probe.is_some())
                }
                Parking::Parked => {
                    if let Some(MirrorLink::Park { pair, .. }) = mirror {
                        self.mirrors.candidate(pair, ukey, url.as_str());
                    }
                    page.counts.parked += 1;
                    return Ok(());
                }
                Parking::Decided if *always || next.probe.is_some() => {}
                Parking::Decided => {
                    decided.commit.dropped.push(ukey);
                    page.counts.dropped += 1;
                    return Ok(());
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
        if next.probe.is_none() && !by_hub && park.is_none() && mirror.is_none() {
            let probing = self.job.config.dedup.probe_links;
            let fate = self
                .predictions
                .for_url(&self.declarations, url.as_url(), probing);
            if fate.apply_to(&mut next).is_some() {
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
        match mirror {
            Some(MirrorLink::Follow) => page.counts.mirrored += 1,
            // Where its original leads too, taken to the original's site (a language's link
            // to its own copy of a section): no page its original does not lead to.
            _ if followed != Followed::No && !self.leads_as_original(how, url.as_url()) => {
                page.counts.new_found += 1
            }
            _ => {}
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
        let hub_min = self.job.config.dedup.hub_min_links;
        if hub_min > 0 && counts.enqueued >= hub_min {
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
        let key = self.mirrors.has_pending().then(|| url_key(&entry.url));
        if let Some(key) = key
            && self.mirrors.is_pending(&key)
        {
            let adds = match how.follow {
                Follow::All => true,
                Follow::NewLinks { .. } => counts.new_found > 0,
                Follow::None => false,
            };
            if adds {
                self.mirrors.added(&key);
            }
        }
        if !fired.is_empty() {
            let named: Vec<String> = fired.iter().map(Trap::to_string).collect();
            decided.decision.trap = Some(named.join("; "));
        }
    }

    /// Whether the original of the duplicate being decided links to the counterpart of its
    /// link to `target`: the page a URL rule says `target` copies (a language's
    /// `ch02.pt-br.html` for `ch02.pt.html`), or the one the pair's paths say
    /// ([`Coordinator::counterpart`]).
    fn leads_as_original(&self, how: &LinkFollowing<'_>, target: &Url) -> bool {
        let Some(original) = &how.original else {
            return false;
        };
        let by_rule = self.predictions.counterpart_of(target);
        let by_pair = how
            .base
            .and_then(|base| self.counterpart(base, original, target))
            .map(CanonicalUrl::into_url);
        by_rule
            .into_iter()
            .chain(by_pair)
            .any(|c| how.follow.original_links_to(original, &c))
    }

    /// The counterpart of `target`, linked from the duplicate `page`, on the site of `page`'s
    /// `original`: its path and query under the original's scheme, host and port, the start
    /// of the path the two pages do not share swapped ([`nearcrawl_url_rules::carry`]). Only
    /// for a `target` on the duplicate's own site.
    fn counterpart(&self, page: &Url, original: &Url, target: &Url) -> Option<CanonicalUrl> {
        let counterpart = nearcrawl_url_rules::carry(target, page, original)?;
        let counterpart = CanonicalUrl::from_url(counterpart).ok()?;
        Some(match self.predictions.sessions().strip(&counterpart) {
            Some(stripped) => stripped.url,
            None => counterpart,
        })
    }
}
