//! A page its probe found to have its counterpart's text: decided `unchanged` without a
//! download when everything it might be alone in naming is named here already (or weighs
//! less than itself), fetched whole for its links otherwise, or held back until the crawl's
//! end, when other pages of its site may have named them (`nearcrawl_link_policy::
//! unchanged_page` decides which).

use super::{
    CanonicalUrl, Commit, Coordinator, Decided, Decision, EngineError, Fetched, ParkedLink, Probe,
    QueueKey, QueuedUrl, Url, Verdict, debug, url_key,
};
use nearcrawl_link_policy::{By, Fate, Named};

impl Coordinator {
    /// A probed URL found to have its counterpart's text (`page`: the answer that said so).
    /// Its body was not downloaded, so it names no link: a crawler asks only for URLs a page,
    /// a seed, a sitemap or a redirect named, never for its counterpart's links taken to this
    /// site by path (a mirror's or a new release's paths are not the original's). So it is
    /// decided `unchanged` only when nothing it might name is new here, or when what it
    /// might name weighs less than itself (`probe.led_to_less`): every URL its
    /// counterpart was the first to name on its site (`links`), taken to this site, is one
    /// the crawl already knows (named by another page) or may not crawl. Otherwise its links
    /// may lead where nothing else does
    /// (a release's table of contents, a changed page below a run of unchanged ones): it is
    /// fetched whole, as a duplicate, and its own links go the way of any duplicate's; the
    /// probe's answer and the count of such links stay on its record.
    pub(super) fn unchanged(
        &mut self,
        key: QueueKey,
        mut entry: QueuedUrl,
        page: &Fetched,
        links: &[String],
    ) -> Result<(), EngineError> {
        let (unknown, fate) = NamedHere::ask(self, &entry, links)?;
        if let Some(probe) = entry.probe.as_mut() {
            probe.links_unknown = unknown;
            probe.led_to_less = fate.by() == Some(&By::LedToLess);
        }
        match fate {
            Fate::Fetch { .. } | Fate::Check { .. } => {
                debug!(url = %entry.url, unknown, "unchanged, fetched for its links");
                return self.requeue(key, entry);
            }
            Fate::Wait { .. } => {
                debug!(url = %entry.url, unknown, "unchanged, decided at the crawl's end");
                return self.defer_to_end(key, entry);
            }
            Fate::Skip { .. } | Fate::Drop { .. } => {}
        }
        let seq = self.counters.take_seq();
        let mut decided = Decided::new(Decision::new(Verdict::Unchanged));
        if let Some(probe) = &entry.probe {
            // Its probe found its counterpart's text: a pair to learn from, and a prediction
            // that named that counterpart right.
            let counterpart = probe.counterpart.as_str();
            if let Some(prediction) = entry.predicted.clone() {
                let links = &mut self.links;
                let checked =
                    super::predictions::check(links, *prediction, Some(counterpart), true)?;
                decided.decision.prediction = Some(checked);
            }
            // Found unchanged by its length, or by a sample; its links were not read.
            let facts = (self.links).copy_facts(probe.length, probe.counterpart_length);
            (self.links.learn(&entry.url, counterpart, facts, &[])).map_err(EngineError::Shared)?;
        }
        let (commit, records) = decided.taking(key, |decision| {
            crate::record::unchanged(seq, &entry, page, decision.prediction)
        });
        self.apply(commit, records)
    }

    /// A page its probe found unchanged whose counterpart's links are not all named here
    /// yet ([`Fate::Wait`]): held back until the crawl has nothing else to do, then
    /// probed again and decided for good. Here it is taken out of its host's queue and
    /// parked ([`Coordinator::release_deferred`] brings it back). In a shared job, it goes
    /// back to its host's queue in Redis, to be handed out only once no worker has anything
    /// else queued or in flight ([`Frontier::requeue_at_end`]). Other pages of its site,
    /// still queued or in flight, may name those links meanwhile, and then it need not be
    /// downloaded for them. (Going behind its host's queue a few times first, deciding it
    /// "led to less" once what its counterpart's links weigh was known, lost a page linked
    /// only from its neighbours' next and previous links: docs/QUALITY.md item 25.)
    fn defer_to_end(&mut self, key: QueueKey, mut entry: QueuedUrl) -> Result<(), EngineError> {
        // Asked again from the start (its HEAD, and its sample if it takes one), with what
        // was spent so far; then it may not wait again.
        if let Some(probe) = entry.probe.take() {
            entry.probe = Some(Box::new(Probe {
                counterpart: probe.counterpart,
                bytes: probe.bytes,
                window: probe.window,
                copies: probe.copies,
                links_unknown: probe.links_unknown,
                deferred: true,
                ..Probe::default()
            }));
        }
        if !self.frontier.knows_undecided() {
            let mut commit = Commit::default();
            self.frontier.requeue_at_end(&mut commit, key, entry);
            return self.apply(commit, Vec::new());
        }
        let url = super::stored_url(&entry.url, "queue", "a queued URL")?;
        let mut commit = Commit {
            taken: vec![key],
            ..Commit::default()
        };
        let link = ParkedLink {
            entry,
            priority: key.priority,
            always: true,
        };
        let on = super::release::end_of_crawl_key();
        let link_key = url_key(url.as_str());
        self.frontier
            .hub_or_park(&mut commit, &url, &on, link_key, link)?;
        self.apply(commit, Vec::new())
    }
}

/// What the crawl knows of the pages an unchanged page's counterpart named first, for the
/// link policy ([`Named`]): links found at `depth`.
struct NamedHere<'a> {
    crawl: &'a Coordinator,
    depth: u32,
}

impl<'a> NamedHere<'a> {
    /// What a page with the counterpart's text at `entry` might be alone in naming, of the
    /// URLs its counterpart named first (`links`), and what it is worth fetching for
    /// ([`nearcrawl_link_policy::unchanged_links`]; a page not decided yet weighs as much as
    /// the page).
    fn ask(
        crawl: &'a Coordinator,
        entry: &QueuedUrl,
        links: &[String],
    ) -> Result<(u32, Fate<CanonicalUrl>), EngineError> {
        let (Ok(at), Some(probe)) = (Url::parse(&entry.url), entry.probe.as_ref()) else {
            return Ok((0, Fate::Skip { by: By::Unchanged }));
        };
        let Ok(counterpart) = Url::parse(&probe.counterpart) else {
            return Ok((0, Fate::Skip { by: By::Unchanged }));
        };
        let own = probe.length.or(probe.counterpart_length).unwrap_or(0);
        let here = NamedHere {
            crawl,
            depth: entry.depth + 1,
        };
        let rule = (crawl.links.hubs().min_yield, probe.deferred);
        nearcrawl_link_policy::unchanged_links(&here, &at, &counterpart, links, own, rule)
    }
}

impl Named for NamedHere<'_> {
    type Url = CanonicalUrl;
    type Error = EngineError;

    fn canonical(&self, url: Url) -> Option<CanonicalUrl> {
        CanonicalUrl::from_url(url).ok()
    }

    fn led_to(&self, there: &CanonicalUrl, undecided: u64) -> Result<Option<u64>, EngineError> {
        self.crawl.declarations.led_to(there, undecided)
    }

    fn unknown(&self, here: CanonicalUrl) -> Result<bool, EngineError> {
        let here = match self.crawl.links.learned().sessions().strip(&here) {
            Some(stripped) => stripped.url,
            None => here,
        };
        Ok(self
            .crawl
            .traps
            .admits(&self.crawl.scope, &here, self.depth)
            .is_ok()
            && !(self.crawl.frontier).is_seen(&here, &url_key(here.as_str()))?)
    }
}
