//! Parked links released: when the URL, the hub's links or the mirror's samples a link
//! waited for are decided, as part of the decision that decided them; and at the crawl's
//! end, what is still parked.

use std::collections::HashSet;

use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_link_policy::{Cost, Credit, DecidedUrl, Drawn, Fate, Parked, Waited};
use nearcrawl_records::{LinkFates, Record, Verdict};
use nearcrawl_store::{Commit, ParkedLink, UrlKey, url_key};
use tracing::{debug, warn};

use super::links::{Carry, carry_out};
use super::{Coordinator, stored_url};
use crate::error::EngineError;

/// What a mirror's samples drawn are fetched by, as records name it.
const SAMPLE: &str = "sample";

/// The key a page waiting for the crawl's end is parked on (see
/// [`Coordinator::defer_to_end`]).
pub(super) fn end_of_crawl_key() -> UrlKey {
    url_key("the crawl's end")
}

impl Carry<'_> {
    /// The links parked on what `commit` decides, released as part of it: the link policy
    /// says which keys, in which order ([`nearcrawl_link_policy::Decider::decided`]: each URL decided, each hub whose
    /// links are all decided now, each mirror whose sample it settles; `records` with their
    /// keys, `queued`: `None` for a URL refused on discovery), and what becomes of each link
    /// ([`nearcrawl_link_policy::Decider::released`]); then a mirror's samples drawn. Each record counts what it
    /// released (`released`).
    pub(super) fn release(
        &mut self,
        commit: &mut Commit,
        records: &mut [Record],
        queued: &[Option<UrlKey>],
    ) -> Result<(), EngineError> {
        if self.frontier.knows_undecided() {
            // Only a frontier in this store marks URLs undecided.
            commit.decided.extend(queued.iter().flatten());
        }
        // A hub's own size is its record's.
        if let Some((_, seq, yielded)) = &mut commit.hub
            && let Some(record) = records.iter().find(|r| r.seq == *seq)
        {
            yielded.bytes = record.bytes;
        }
        let urls: Vec<DecidedUrl> = (records.iter().zip(queued))
            .map(|(record, key)| decided_url(record, *key))
            .collect();
        let hub = commit.hub.map(|(key, seq, _)| (key, seq));
        let store = self.store;
        let releases = (self.links).decided(&urls, hub, &mut commit.hub_yields, |seq| {
            store.hub_yield_at(seq)
        })?;
        for (index, on, waited) in releases {
            self.release_on(commit, &mut records[index], on, waited)?;
        }
        self.draw_mirror_samples(commit, records.last_mut(), false)?;
        Ok(())
    }

    /// The links parked on `on`, released as part of `commit` now that what they waited for
    /// is decided (`waited`, by `record`'s decision, which counts them in `released`).
    fn release_on(
        &mut self,
        commit: &mut Commit,
        record: &mut Record,
        on: UrlKey,
        waited: Waited,
    ) -> Result<(), EngineError> {
        let links = (self.frontier).release(commit, &record.url, &on, waited.followed())?;
        if links.is_empty() && !matches!(waited, Waited::Mirror { .. }) {
            return Ok(());
        }
        let released = self.release_links(commit, &record.url, links, waited)?;
        debug!(url = %record.url, ?waited, ?released, "parked links released");
        record.released = Some(record.released.take().unwrap_or_default().plus(&released));
        Ok(())
    }

    /// A mirror's samples drawn ([`nearcrawl_link_policy::Decider::draw`]), as part of
    /// `commit`, which `record`'s decision makes (it counts them in `released`, fetched by
    /// [`SAMPLE`]): taken out of their parking on their pair of sites and queued. `now`:
    /// nothing else is left to crawl, so no counterpart is waited for. Returns how many were
    /// drawn.
    pub(super) fn draw_mirror_samples(
        &mut self,
        commit: &mut Commit,
        record: Option<&mut Record>,
        now: bool,
    ) -> Result<u32, EngineError> {
        if !self.links.wants_samples() {
            return Ok(0);
        }
        let mut pending: HashSet<UrlKey> = commit.enqueued.iter().map(|(_, k, _)| *k).collect();
        let store = self.store;
        // What sampling a candidate costs: its counterpart's length, the counterpart as a URL
        // rule predicts it, once decided.
        let drawn = self.links.draw(now, |_, counterpart| {
            let counterpart = counterpart.and_then(|c| CanonicalUrl::from_url(c).ok());
            let Some(counterpart) = counterpart else {
                return Ok::<_, EngineError>(Cost::Unknown);
            };
            let key = url_key(counterpart.as_str());
            if pending.contains(&key) || store.is_undecided(&key)? {
                return Ok(Cost::Waiting);
            }
            Ok(match store.declared_length(&key)? {
                Some(length) => Cost::Known(length),
                None => Cost::Unknown,
            })
        })?;
        let mut sampled = 0;
        for Drawn {
            on,
            link,
            pair,
            cost,
        } in drawn
        {
            let Some(parked) = self.frontier.unpark(commit, &on, &link)? else {
                continue;
            };
            let url = stored_url(&parked.entry.url, "parked", "a mirror's sample")?;
            // Reached another way meanwhile: fetched all the same, its pair's candidate no
            // more.
            if self.is_seen(&url, &link, &pending)? {
                continue;
            }
            debug!(%url, ?cost, "a mirror's sample drawn");
            let mut entry = parked.entry;
            entry.by = Some(SAMPLE.to_owned());
            self.queue(commit, &mut pending, &url, entry, parked.priority)?;
            self.links.sampled(pair, link);
            sampled += 1;
        }
        if let Some(record) = record
            && sampled > 0
        {
            let mut drawn = LinkFates::default();
            drawn.add_named("fetch", SAMPLE, sampled);
            record.released = Some(record.released.take().unwrap_or_default().plus(&drawn));
        }
        Ok(sampled)
    }

    /// Links released from their parking (on `on`, a URL decided, for messages), as part of
    /// `commit`, once what each waited for is decided (`waited`): each queued, parked again
    /// or dropped as the link policy says ([`released_link`]), unless it was seen meanwhile
    /// (the links this decision queues already included).
    pub(super) fn release_links(
        &mut self,
        commit: &mut Commit,
        on: &str,
        links: Vec<ParkedLink>,
        waited: Waited,
    ) -> Result<LinkFates, EngineError> {
        let local = self.frontier.knows_undecided();
        let mut pending: HashSet<UrlKey> = commit.enqueued.iter().map(|(_, k, _)| *k).collect();
        let mut released = LinkFates::default();
        for mut parked in links {
            let url = stored_url(
                &parked.entry.url,
                "parked",
                &format!("a link parked on {on}"),
            )?;
            let link_key = url_key(url.as_str());
            if self.is_seen(&url, &link_key, &pending)? {
                continue;
            }
            let link = Parked {
                always: parked.always,
                probe: parked.entry.probe.as_ref().map(|_| ()),
            };
            let fate = self.links.released(waited, link, local);
            released.add(&fate);
            match fate {
                Fate::Fetch { .. } | Fate::Check { .. } => carry_out(&fate, &mut parked.entry),
                Fate::Drop { .. } | Fate::Skip { .. } => {
                    commit.dropped.push(link_key);
                    continue;
                }
                Fate::Wait { until, .. } => {
                    // Parked again until a hub's links are decided (on their key).
                    let on = until.on().unwrap_or(link_key);
                    pending.insert(link_key);
                    self.frontier
                        .hub_or_park(commit, &url, &on, link_key, parked)?;
                    continue;
                }
            }
            self.queue(commit, &mut pending, &url, parked.entry, parked.priority)?;
        }
        Ok(released)
    }
}

impl Coordinator {
    /// Nothing is queued or in flight, so nothing a link is parked on can be decided any
    /// more: links still parked (which should not happen: each waits for a URL, a hub's links
    /// or a mirror's samples, all decided by now) are followed rather than lost. Returns
    /// whether any was.
    pub(super) fn release_stranded(&mut self) -> Result<bool, EngineError> {
        if self.release_deferred()? {
            return Ok(true);
        }
        // A mirror's candidates whose counterparts never came: sampled now.
        let mut commit = Commit::default();
        if self.carry().draw_mirror_samples(&mut commit, None, true)? > 0 {
            self.apply(commit, Vec::new())?;
            return Ok(true);
        }
        let keys = self.frontier.parked_keys();
        if keys.is_empty() {
            return Ok(false);
        }
        let mut commit = Commit::default();
        let mut followed = 0;
        for key in keys {
            let links = self.frontier.release(&mut commit, "", &key, true)?;
            let (on, waited) = ("the crawl's end", Waited::CrawlEnd);
            let released = (self.carry()).release_links(&mut commit, on, links, waited)?;
            followed += released.total("fetch");
        }
        warn!(
            followed,
            "links still parked when nothing was left to crawl: followed"
        );
        self.apply(commit, Vec::new())?;
        Ok(followed > 0)
    }

    /// The crawl has nothing else to do: the pages that waited for its end
    /// ([`Coordinator::defer_to_end`]) go back to their hosts' queues, to be probed again
    /// and decided for good. Returns whether there were any.
    fn release_deferred(&mut self) -> Result<bool, EngineError> {
        let on = end_of_crawl_key();
        if !self.frontier.parked_keys().contains(&on) {
            return Ok(false);
        }
        let mut commit = Commit::default();
        let pages = self.frontier.release(&mut commit, "", &on, false)?;
        let mut pending = HashSet::new();
        for page in &pages {
            let url = stored_url(
                &page.entry.url,
                "parked",
                "a page waiting for the crawl's end",
            )?;
            self.carry().queue(
                &mut commit,
                &mut pending,
                &url,
                page.entry.clone(),
                page.priority,
            )?;
        }
        debug!(
            pages = pages.len(),
            "pages that waited for the crawl's end, queued again"
        );
        self.apply(commit, Vec::new())?;
        Ok(!pages.is_empty())
    }
}

/// What the link policy is told of a URL a decision decided (`record`, queued as `key`).
fn decided_url(record: &Record, key: Option<UrlKey>) -> DecidedUrl {
    let fetched = record.status.is_some_and(|s| (200..300).contains(&s));
    let credit = match record.verdict {
        Verdict::Redirect => Credit::Redirect,
        Verdict::Unique | Verdict::NotHtml if fetched => Credit::New(record.bytes),
        _ => Credit::Other,
    };
    let redirect =
        (record.verdict == Verdict::Redirect).then(|| record.queued_redirect_target().map(url_key));
    DecidedUrl {
        key,
        found_on: record.link_of.or(record.parent),
        credit,
        redirect,
    }
}
