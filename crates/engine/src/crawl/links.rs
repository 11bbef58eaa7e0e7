//! Links: which URLs a redirect, a sitemap or a page adds to the frontier, and the records
//! of those it may not.

use super::budgets::Traps;
use super::counters::JobCounters;
use super::declarations::Declarations;
use super::scope_watch::ScopeWatch;
use super::tasks::SeenLinks;
use super::{
    CanonicalUrl, Commit, CrawlConfig, CrawlStore, Decided, Decision, EngineError, Fetched, Focus,
    Follow, Frontier, HashSet, MAX_SITEMAP_URLS, PatternPath, QueuedUrl, Scope, Sitemap, Trap, Url,
    UrlKey, UrlPattern, Verdict, url_key,
};
use nearcrawl_link_policy::{By, Decider, Fate};

mod follow;

/// The parts of the crawl a link's fate is carried out with, borrowed from the coordinator
/// for one step: the frontier and the store it asks, the link policy (its [`Decider`], its
/// rules), the scope and the trap rules with their budgets, what pages declared, the record
/// numbers, a focused crawl's topic and the job's configuration. The links a redirect, a
/// sitemap, a page (`links/follow.rs`) or a decision (`release.rs`) adds are queued, parked,
/// predicted, refused or dropped through it, never through the rest of the crawl.
pub(super) struct Carry<'c> {
    pub(super) frontier: &'c mut (dyn Frontier + Send),
    pub(super) store: &'c dyn CrawlStore,
    pub(super) links: &'c mut Decider,
    pub(super) traps: &'c mut Traps,
    pub(super) scope: &'c Scope,
    pub(super) scope_watch: &'c mut ScopeWatch,
    pub(super) declarations: &'c Declarations,
    pub(super) counters: &'c mut JobCounters,
    pub(super) focus: Option<&'c Focus>,
    pub(super) config: &'c CrawlConfig,
}

impl Carry<'_> {
    /// Adds `url` to `commit` as queued at `priority`, and to this decision's `pending` URLs.
    pub(super) fn queue(
        &mut self,
        commit: &mut Commit,
        pending: &mut HashSet<UrlKey>,
        url: &CanonicalUrl,
        entry: QueuedUrl,
        priority: u32,
    ) -> Result<(), EngineError> {
        pending.insert(url_key(url.as_str()));
        self.frontier.enqueue(commit, url, entry, priority)
    }

    pub(super) fn is_seen(
        &self,
        url: &CanonicalUrl,
        key: &UrlKey,
        pending: &HashSet<UrlKey>,
    ) -> Result<bool, EngineError> {
        Ok(pending.contains(key) || self.frontier.is_seen(url, key)?)
    }

    /// Queues the `Sitemap:` URLs of a robots.txt (each once per job, scope permitting), as
    /// the commit returned.
    pub(super) fn queue_sitemaps(&mut self, sitemaps: &[String]) -> Result<Commit, EngineError> {
        let mut commit = Commit::default();
        let mut pending = HashSet::new();
        for raw in sitemaps {
            let Ok(url) = CanonicalUrl::parse(raw) else {
                continue;
            };
            let ukey = url_key(url.as_str());
            if self.is_seen(&url, &ukey, &pending)?
                || self.traps.admits(self.scope, &url, 0).is_err()
            {
                continue;
            }
            let entry = QueuedUrl {
                url: url.to_string(),
                sitemap: true,
                ..QueuedUrl::default()
            };
            self.queue(&mut commit, &mut pending, &url, entry, 0)?;
        }
        Ok(commit)
    }

    /// A fetched sitemap: its URLs are queued like seeds, a sitemap index's like sitemaps.
    pub(super) fn decide_sitemap(
        &mut self,
        page: &Fetched,
        entry: &QueuedUrl,
        seq: u64,
    ) -> Result<Decided, EngineError> {
        let mut decided = Decided::new(Decision::new(Verdict::Sitemap));
        let limit = self.config.fetch.max_body_bytes;
        let sitemap = match nearcrawl_extract::read_sitemap_file(&page.body, limit) {
            Ok(sitemap) => sitemap,
            Err(e) => {
                decided.decision.verdict = Verdict::Error;
                decided.decision.error = Some(e);
                return Ok(decided);
            }
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
            if self.is_seen(&url, &ukey, &pending)?
                || self.traps.admits(self.scope, &url, entry.depth).is_err()
            {
                continue;
            }
            let next = QueuedUrl {
                url: url.to_string(),
                depth: entry.depth,
                parent: Some(seq),
                sitemap: nested,
                by: Some(By::Sitemap.name().to_owned()),
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
        (decided.decision.fates_mut()).add_named("fetch", By::Sitemap.name(), enqueued);
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
        decided.decision.fates_mut();
        if entry.redirects >= self.config.fetch.max_redirects {
            decided.decision.verdict = Verdict::Error;
            decided.decision.error = Some(format!(
                "more than {} redirects",
                self.config.fetch.max_redirects
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
        if let Err((verdict, reason)) = self.traps.admits(self.scope, &target, entry.depth) {
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
        (decided.decision.fates_mut()).add::<Url>(&Fate::Fetch { by: By::Redirect });
        Ok(decided)
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
        let record = crate::record::refused(self.counters.take_seq(), &found, verdict, reason);
        decided.extra.push(record);
        Ok(())
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
    /// The trap that stops this page's links: a duplicate chain, or too many saying the same.
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

impl Carry<'_> {
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
        if self.traps.admits(self.scope, url, entry.depth + 1).is_err() {
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
}

/// Carries a fetched or checked link's fate out on its queue entry: a hub's counterpart
/// starts a new chain (a new release's pages are duplicates all the way down to its new
/// ones), fetched, not probed; the mechanism that has it fetched is named on it (not for a
/// link fetched as new or by a URL rule, whose prediction says so).
pub(super) fn carry_out<U>(fate: &Fate<U>, entry: &mut QueuedUrl) {
    if let Fate::Fetch { by: By::Hub } = fate {
        entry.duplicates = 0;
        entry.probe = None;
    }
    if let Some(by) = fate.by().filter(|by| !matches!(by, By::New | By::Rule(_))) {
        entry.by = Some(by.name().to_owned());
    }
}

/// The queue priority of a link to `url` with anchor text `anchor` found on `parent`: its
/// depth for breadth-first crawls, its relevance for focused ones (`focus`).
pub(super) fn priority_of(
    focus: Option<&Focus>,
    parent: &QueuedUrl,
    how: &LinkFollowing<'_>,
    (anchor, context): (&str, &str),
    url: &Url,
) -> u32 {
    match focus.map(Focus::relevance) {
        Some(relevance) => relevance.link_priority(how.potential, anchor, context, url),
        None => parent.depth + 1,
    }
}
