//! Links: which URLs a redirect, a sitemap or a page adds to the frontier, and the records
//! of those it may not.

use super::mirrors::MirrorLink;
use super::predictions;
use super::tasks::SeenLinks;
use super::*;
use nearcrawl_extract::Link;
use nearcrawl_link_policy::{HubWorth, Matched, MatchedLink};

impl Coordinator {
    /// Queues the `Sitemap:` URLs of a robots.txt (each once per job, scope permitting).
    pub(super) fn queue_sitemaps(&mut self, sitemaps: &[String]) -> Result<(), EngineError> {
        let mut commit = Commit::default();
        let mut pending = HashSet::new();
        for raw in sitemaps {
            let Ok(url) = CanonicalUrl::parse(raw) else {
                continue;
            };
            let ukey = url_key(url.as_str());
            if self.is_seen(&url, &ukey, &pending)? || self.admits(&url, 0).is_err() {
                continue;
            }
            let entry = QueuedUrl {
                url: url.to_string(),
                sitemap: true,
                ..QueuedUrl::default()
            };
            self.queue(&mut commit, &mut pending, &url, entry, 0)?;
        }
        self.apply(commit, Vec::new())
    }

    /// A fetched sitemap: its URLs are queued like seeds, a sitemap index's like sitemaps.
    pub(super) fn decide_sitemap(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        seq: u64,
    ) -> Result<Decided, EngineError> {
        let mut decided = Decided::new(Decision::new(Verdict::Sitemap));
        // `.xml.gz` files are usually served as gzip data, not with a Content-Encoding.
        let body = if page.body.starts_with(&[0x1f, 0x8b]) {
            match nearcrawl_extract::decode_content(
                Some("gzip"),
                &page.body,
                self.job.config.fetch.max_body_bytes,
            ) {
                Ok((body, _)) => body,
                Err(e) => {
                    decided.decision.verdict = Verdict::Error;
                    decided.decision.error = Some(format!("sitemap: {e}"));
                    return Ok(decided);
                }
            }
        } else {
            page.body.clone()
        };
        let Some(sitemap) = read_sitemap(&String::from_utf8_lossy(&body)) else {
            decided.decision.verdict = Verdict::Error;
            decided.decision.error = Some("not a sitemap (no urlset or sitemapindex)".into());
            return Ok(decided);
        };
        let (locs, nested) = match sitemap {
            Sitemap::Pages(locs) => (locs, false),
            Sitemap::Index(locs) => (locs, true),
        };
        decided.decision.outlinks = Some(locs.len() as u32);
        let mut pending = HashSet::new();
        let mut enqueued = 0;
        for loc in locs.iter().take(MAX_SITEMAP_URLS) {
            let Ok(url) = CanonicalUrl::parse(loc) else {
                continue;
            };
            let ukey = url_key(url.as_str());
            if self.is_seen(&url, &ukey, &pending)? || self.admits(&url, entry.depth).is_err() {
                continue;
            }
            let next = QueuedUrl {
                url: url.to_string(),
                depth: entry.depth,
                parent: Some(seq),
                sitemap: nested,
                ..QueuedUrl::default()
            };
            let priority = if nested || self.focus.is_some() {
                0
            } else {
                entry.depth
            };
            self.queue(&mut decided.commit, &mut pending, &url, next, priority)?;
            enqueued += 1;
        }
        decided.decision.enqueued = Some(enqueued);
        Ok(decided)
    }

    pub(super) fn decide_redirect(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        seq: u64,
    ) -> Result<Decided, EngineError> {
        let mut decided = Decided::new(Decision::new(Verdict::Redirect));
        let target = match page.location() {
            None => {
                decided.decision.error = Some("redirect without Location".into());
                return Ok(decided);
            }
            Some(Err(e)) => {
                decided.decision.error = Some(e);
                return Ok(decided);
            }
            Some(Ok(target)) => target,
        };
        let target = match CanonicalUrl::from_url(target) {
            Ok(t) => t,
            Err(e) => {
                decided.decision.error = Some(format!("redirect target: {e}"));
                return Ok(decided);
            }
        };
        decided.decision.final_url = Some(target.to_string());
        decided.decision.enqueued = Some(0);
        if entry.redirects >= self.job.config.fetch.max_redirects {
            decided.decision.verdict = Verdict::Error;
            decided.decision.error = Some(format!(
                "more than {} redirects",
                self.job.config.fetch.max_redirects
            ));
            return Ok(decided);
        }
        let ukey = url_key(target.as_str());
        let mut pending = HashSet::new();
        if self.is_seen(&target, &ukey, &pending)? {
            // A loop, or a target reached another way: decided (or queued) once already.
            return Ok(decided);
        }
        let at = (entry.depth, seq);
        if let Err((verdict, reason)) = self.admits(&target, entry.depth) {
            self.record_refused_link(&target, ukey, at, verdict, reason, &mut decided)?;
            return Ok(decided);
        }
        let pattern = UrlPattern::of(&target);
        if let Err(trap) = self.traps.spend(&pattern, None, &mut decided.commit)? {
            let (verdict, reason) = (Verdict::Trap, trap.to_string());
            self.record_refused_link(&target, ukey, at, verdict, reason, &mut decided)?;
            return Ok(decided);
        }
        let next = QueuedUrl {
            url: target.to_string(),
            depth: entry.depth,
            parent: Some(seq),
            redirects: entry.redirects + 1,
            link_of: entry.link_of.or(entry.parent),
            duplicates: entry.duplicates,
            off_topic: entry.off_topic,
            potential: entry.potential,
            patterns: entry.patterns.clone(),
            ..QueuedUrl::default()
        };
        // Breadth-first: at its depth; focused: at once (the link that led here was chosen).
        let priority = match self.focus {
            Some(_) => 0,
            None => entry.depth + 1,
        };
        self.queue(&mut decided.commit, &mut pending, &target, next, priority)?;
        decided.decision.enqueued = Some(1);
        Ok(decided)
    }

    /// Whether a discovered URL, `depth` links from a seed, may be queued: the scope, then
    /// the trap rules. If not, the verdict and the reason to record.
    pub(super) fn admits(&self, url: &CanonicalUrl, depth: u32) -> Result<(), (Verdict, String)> {
        self.scope
            .check(url, depth)
            .map_err(|reason| (Verdict::OutOfScope, reason.to_string()))?;
        self.traps
            .rules
            .check(url)
            .map_err(|trap| (Verdict::Trap, trap.to_string()))
    }

    /// Decides a URL found by `decided` (at `depth`, on page `parent`) not to be queued: a
    /// record of its own, and marked seen so it is recorded once.
    pub(super) fn record_refused_link(
        &mut self,
        url: &CanonicalUrl,
        key: UrlKey,
        (depth, parent): (u32, u64),
        verdict: Verdict,
        reason: String,
        decided: &mut Decided,
    ) -> Result<(), EngineError> {
        decided.commit.seen.push(key);
        if !self.frontier.claim_refused(url, &key)? {
            // Another worker of a shared job recorded it.
            return Ok(());
        }
        let found = QueuedUrl {
            url: url.to_string(),
            depth,
            parent: Some(parent),
            ..QueuedUrl::default()
        };
        let record = self.refused(&found, verdict, reason);
        decided.extra.push(record);
        Ok(())
    }

    /// Notes the scope's answer to a link found on a page; warns (in the log) as soon as the
    /// first links show a scope that refuses nearly everything.
    pub(super) fn watch_scope(&mut self, refusal: Option<&str>) {
        if let Some(warning) = self.scope_watch.note(refusal) {
            warn!("{warning}");
        }
    }

    /// The queue priority of a link to `url` with anchor text `anchor` found on `parent`:
    /// its depth for breadth-first crawls, its relevance for focused ones.
    fn priority_of(
        &self,
        parent: &QueuedUrl,
        how: &LinkFollowing<'_>,
        (anchor, context): (&str, &str),
        url: &Url,
    ) -> u32 {
        match self.focus.as_ref().map(Focus::relevance) {
            Some(relevance) => relevance.link_priority(how.potential, anchor, context, url),
            None => parent.depth + 1,
        }
    }
}

/// How the links of one page are followed.
pub(super) struct LinkFollowing<'a> {
    /// The dedup stage's rule for this page's links.
    pub(super) follow: &'a Follow,
    /// The URL the page's links resolve against (its `<base href>` or its own).
    pub(super) base: Option<&'a Url>,
    /// The URL of the page this one duplicates, when it was kept by this crawl.
    pub(super) original: Option<Url>,
    /// Duplicates in a row on the path to this page, this one included.
    pub(super) chain: u32,
    /// The duplicate-chain rule, if it stops this page's links.
    pub(super) chain_trap: Option<Trap>,
    /// The host, when this page is a duplicate (its links spend the host's budget).
    pub(super) duplicate_of_host: Option<&'a str>,
    /// What the page passes on to its links in a focused crawl ([`Relevance::potential`]).
    pub(super) potential: f32,
    /// Off-topic pages in a row on the path to this page, itself included (focused crawls).
    pub(super) off_topic: u32,
    /// Its links the store had seen when the page was analysed (no read needed for those).
    pub(super) seen: Option<&'a SeenLinks>,
}

impl Coordinator {
    /// A duplicate at `entry` of the page at `original`: evidence for a session parameter.
    /// What to record when it is learned.
    pub(super) fn learn_session_param(
        &mut self,
        entry: &QueuedUrl,
        original: Option<&str>,
    ) -> Option<String> {
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

    /// Queues the links of a page that may be followed, records those refused by the scope
    /// or the URL rules, and counts those dropped: a duplicate's links not followed (`dropped`)
    /// and links the pattern-on-path rule stopped (`trapped`; the rules in `trap`).
    pub(super) fn follow_links(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        links: Vec<Link>,
        how: &LinkFollowing<'_>,
        decided: &mut Decided,
    ) -> Result<(), EngineError> {
        let (mut enqueued, mut dropped, mut trapped) = (0u32, 0u32, 0u32);
        let (mut via_hub, mut probed, mut parked, mut raised) = (0u32, 0u32, 0u32, 0u32);
        let mut declined = 0u32;
        let (mut new_found, mut sampled, mut mirrored) = (0u32, 0u32, 0u32);
        // A mirror's copy (another site, links matched by anchor text): its links whose text
        // the original has are its mirror's to sample (see `mirrors`).
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
        let hubs = self.job.config.dedup.hub_min_links > 0;
        // Probes only where the original's server declares its pages' lengths.
        let probing = self.job.config.dedup.probe_links
            && match &how.original {
                Some(original) => self
                    .store
                    .declared_length(&url_key(original.as_str()))?
                    .is_some(),
                None => false,
            };
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
        let mut in_graph: HashSet<UrlKey> = HashSet::new();
        let follow_nofollow = self.job.config.links.follow_nofollow;
        for Link {
            url: link,
            text: anchor,
            nofollow: link_nofollow,
            context,
        } in links
        {
            if link_nofollow && !follow_nofollow {
                continue;
            }
            let followed = match how.base {
                Some(base) => how.follow.followed(base, &link, &anchor),
                None => Followed::New,
            };
            let mut follows = followed != Followed::No;
            let Ok(url) = CanonicalUrl::from_url(link) else {
                continue;
            };
            let url = match self.sessions.strip(&url) {
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
            // The scope's answer, asked once: before the seen check in a baseline crawl (its
            // graph holds seen links too), after it otherwise (most links are seen).
            let admitted = baseline.then(|| self.admits(&url, entry.depth + 1));
            if let Some(Ok(())) = &admitted
                && in_graph.insert(ukey)
            {
                graph.push(url.to_string());
            }
            let seen_before = how.seen.is_some_and(|seen| seen.contains(&ukey));
            if seen_before || self.is_seen(&url, &ukey, &pending)? {
                // Moved up by the first of this page's links to it only.
                // (Scored only when still queued: most links lead to pages decided already.)
                if follows
                    && how.chain_trap.is_none()
                    && self.focus.is_some()
                    && !pending.contains(&ukey)
                    && self.frontier.raisable(&ukey, 0)
                {
                    let priority = self.priority_of(entry, how, (&anchor, &context), url.as_url());
                    if self.frontier.raisable(&ukey, priority)
                        && self.raise(entry, seq, how, &path, &url, ukey, priority, decided)?
                    {
                        pending.insert(ukey);
                        raised += 1;
                    }
                }
                continue;
            }
            pending.insert(ukey);
            let mut by_hub = false;
            let mut probe = None;
            // Not known yet whether the counterpart is a hub: parked until it is decided (and
            // then followed only if it is one), or a link of a copying site whose counterpart
            // is queued: parked until that is decided, then followed (`always`).
            let mut park: Option<(CanonicalUrl, UrlKey, bool)> = None;
            // Where the original's link to the same place (relative to each site) led, for a
            // new link not followed as new, when a hub or a probe could still follow it.
            let counterpart = match (follows, how.base, &how.original) {
                (false, Some(base), Some(original)) if hubs || probing => {
                    self.counterpart(base, original, url.as_url())
                }
                _ => None,
            };
            if let Some(counterpart) = &counterpart {
                // What the crawl knows of the counterpart decides the link
                // (`nearcrawl_link_policy::matched_link`).
                let key = url_key(counterpart.as_str());
                let hub = match hubs {
                    true => self.frontier.counterpart_hub(counterpart, &key)?,
                    false => Some(false),
                };
                let (worth, hub_links) = match hub == Some(true) && probing {
                    true => self.hub_worth(&key)?,
                    false => (HubWorth::Worth, None),
                };
                let seen = probing && how.chain_trap.is_none() && self.store.is_seen(&key)?;
                let (fate, hub_declined) = nearcrawl_link_policy::matched_link(Matched {
                    hub,
                    worth,
                    counterpart_seen: seen,
                    probing,
                    trapped: how.chain_trap.is_some(),
                    local: self.frontier.knows_undecided(),
                });
                declined += u32::from(hub_declined);
                let probe_it = |probe: &mut Option<Probe>, yes: bool| {
                    if yes {
                        *probe = Some(Probe {
                            counterpart: counterpart.to_string(),
                            ..Probe::default()
                        });
                    }
                };
                match fate {
                    MatchedLink::FollowAsHub => by_hub = true,
                    MatchedLink::Probe => probe_it(&mut probe, true),
                    MatchedLink::ParkOnCounterpart { probe: yes } => {
                        probe_it(&mut probe, yes);
                        park = Some((counterpart.clone(), key, false));
                    }
                    MatchedLink::ParkOnHubLinks { probe: yes } => {
                        probe_it(&mut probe, yes);
                        let on = hub_links.unwrap_or(key);
                        park = Some((counterpart.clone(), on, false));
                    }
                    MatchedLink::Drop => {}
                }
                follows = by_hub || probe.is_some() || park.is_some();
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
                    park = Some((first, key, true));
                }
            }
            // A mirror's copy's link to its own site whose text the original has.
            let mut mirror = None;
            if !follows
                && park.is_none()
                && let Some((base, original)) = mirror_of
                && nearcrawl_dedup::same_site(base, url.as_url())
            {
                match self.mirrors.link(base, original, samples) {
                    MirrorLink::Park(on) => park = Some((url.clone(), on, false)),
                    MirrorLink::Drop => {}
                    other => mirror = Some(other),
                }
                follows = park.is_some() || mirror.is_some();
            }
            let skip = how.chain_trap.is_some() || !follows;
            let at = (entry.depth + 1, seq);
            let admitted = admitted.unwrap_or_else(|| self.admits(&url, entry.depth + 1));
            match admitted {
                // A duplicate's links were never really discovered: no records for them.
                Err(_) if skip || park.as_ref().is_some_and(|(_, _, always)| !always) => {}
                Err((verdict, reason)) => {
                    if verdict == Verdict::OutOfScope {
                        self.watch_scope(Some(&reason));
                    }
                    self.record_refused_link(&url, ukey, at, verdict, reason, decided)?
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
                    let mut next = QueuedUrl {
                        url: url.to_string(),
                        depth: entry.depth + 1,
                        parent: Some(seq),
                        probe,
                        duplicates: u8::try_from(how.chain).unwrap_or(u8::MAX),
                        patterns: patterns.into_pairs(),
                        off_topic: u8::try_from(how.off_topic).unwrap_or(u8::MAX),
                        potential: self
                            .focus
                            .as_ref()
                            .map(|_| QueuedUrl::potential_thousandths(how.potential)),
                        ..QueuedUrl::default()
                    };
                    let priority = self.priority_of(entry, how, (&anchor, &context), url.as_url());
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
                            Parking::Hub => by_hub = !*always,
                            Parking::Parked => {
                                parked += 1;
                                continue;
                            }
                            Parking::Decided if *always || next.probe.is_some() => {}
                            Parking::Decided => {
                                decided.commit.dropped.push(ukey);
                                dropped += 1;
                                continue;
                            }
                        }
                    }
                    if by_hub {
                        via_hub += 1;
                        // A hub's counterpart starts a new chain: a new release's pages are
                        // duplicates all the way down to its new ones. Fetched, not probed.
                        next.duplicates = 0;
                        next.probe = None;
                    }
                    // The link policy: the page a URL rule says this one copies, and what
                    // that is worth (`dedup.predict`).
                    if next.probe.is_none() && !by_hub && park.is_none() && mirror.is_none() {
                        let probing = self.job.config.dedup.probe_links;
                        let store = self.store.as_ref();
                        let fate = self.predictions.for_url(store, url.as_url(), probing);
                        if fate.apply_to(&mut next).is_some() {
                            // Not requested: its record says which page it copies.
                            decided.commit.seen.push(ukey);
                            let seq = self.take_seq();
                            decided
                                .extra
                                .push(predictions::predicted_record(seq, &next));
                            continue;
                        }
                    }
                    if next.probe.is_some() {
                        probed += 1;
                    } else {
                        enqueued += 1;
                    }
                    self.queue(&mut decided.commit, &mut pending, &url, next, priority)?;
                    match mirror {
                        Some(MirrorLink::Sample(pair)) => {
                            self.mirrors.sampled(pair, ukey);
                            sampled += 1;
                        }
                        Some(MirrorLink::Follow) => mirrored += 1,
                        // Where its original leads too, taken to the original's site (a
                        // language's link to its own copy of a section): no page its
                        // original does not lead to.
                        _ if followed != Followed::No
                            && !self.leads_as_original(how, url.as_url()) =>
                        {
                            new_found += 1
                        }
                        _ => {}
                    }
                }
            }
        }
        decided.decision.enqueued = Some(enqueued);
        let hub_min = self.job.config.dedup.hub_min_links;
        if hub_min > 0 && enqueued >= hub_min {
            // Its own size is its record's, known when the decision is applied. Each link it
            // queued (fetched, probed, or moved up in a focused crawl) is decided in time.
            let yielded = HubYield::new(0, enqueued + probed + raised);
            decided.commit.hub = Some((url_key(&entry.url), seq, yielded));
        }
        if baseline {
            decided.decision.links = Some(graph);
        }
        if *how.follow != Follow::All {
            decided.decision.dropped = Some(dropped);
        }
        let decision = &mut decided.decision;
        for (field, n) in [
            (&mut decision.via_hub, via_hub),
            (&mut decision.hubs_declined, declined),
            (&mut decision.mirror_sampled, sampled),
            (&mut decision.mirror_followed, mirrored),
            (&mut decision.parked, parked),
            (&mut decision.probed, probed),
            (&mut decision.raised, raised),
            (&mut decision.trapped, trapped),
        ] {
            // Counts of none are left out of the record.
            if n > 0 {
                *field = Some(n);
            }
        }
        if let Follow::NewLinks { .. } = how.follow {
            decided.adds_pages = Some(new_found > 0);
        }
        // A mirror's sample: it added a page when it was no copy at all, or when it links
        // where its original does not.
        let key = self.mirrors.has_pending().then(|| url_key(&entry.url));
        if let Some(key) = key
            && self.mirrors.is_pending(&key)
        {
            let adds = match how.follow {
                Follow::All => true,
                Follow::NewLinks { .. } => new_found > 0,
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
        Ok(())
    }
}

impl Coordinator {
    /// A focused crawl: moves the queued URL `url` up to `priority`, reached now from the
    /// page `seq` (at `entry`), when the scope and the trap rules let this page's path lead
    /// there. Returns whether it moved.
    #[allow(clippy::too_many_arguments)]
    fn raise(
        &mut self,
        entry: &QueuedUrl,
        seq: u64,
        how: &LinkFollowing<'_>,
        path: &PatternPath,
        url: &CanonicalUrl,
        ukey: UrlKey,
        priority: u32,
        decided: &mut Decided,
    ) -> Result<bool, EngineError> {
        if self.admits(url, entry.depth + 1).is_err() {
            return Ok(false);
        }
        let Ok(patterns) = self.traps.rules.check_path(path, &UrlPattern::of(url)) else {
            return Ok(false);
        };
        let next = QueuedUrl {
            url: url.to_string(),
            depth: entry.depth + 1,
            parent: Some(seq),
            duplicates: u8::try_from(how.chain).unwrap_or(u8::MAX),
            patterns: patterns.into_pairs(),
            off_topic: u8::try_from(how.off_topic).unwrap_or(u8::MAX),
            potential: Some(QueuedUrl::potential_thousandths(how.potential)),
            ..QueuedUrl::default()
        };
        self.frontier
            .raise(&mut decided.commit, &ukey, next, priority)
    }

    /// Whether the hub at `key` is worth fetching again on another site ([`HubYield`]): not
    /// when its links are all decided and the new pages among them weigh less than
    /// `dedup.hub_min_yield` times itself; not known yet while they are not all decided
    /// (then also the key a link waits for them on).
    fn hub_worth(&self, key: &UrlKey) -> Result<(HubWorth, Option<UrlKey>), EngineError> {
        let dedup = &self.job.config.dedup;
        Ok(match self.store.hub_yield(key)? {
            // A hub marked before yields were kept: fetched, as then.
            None => (HubWorth::Worth, None),
            Some((seq, yielded)) if !yielded.complete() => {
                (HubWorth::Pending, Some(super::hub_yield_key(seq)))
            }
            Some((_, yielded)) => {
                match yielded.worth_fetching(dedup.hub_min_links, dedup.hub_min_yield) {
                    true => (HubWorth::Worth, None),
                    false => (HubWorth::Declined, None),
                }
            }
        })
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
        Some(match self.sessions.strip(&counterpart) {
            Some(stripped) => stripped.url,
            None => counterpart,
        })
    }
}
