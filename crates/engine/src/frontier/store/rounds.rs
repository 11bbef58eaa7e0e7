//! How [`StoreFrontier`] hands out work: rounds over the hosts (or, for a focused crawl, the
//! best URL of any ready host), each host's next step when its politeness, its address's
//! and robots.txt allow one.

use std::time::Instant;

use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_records::Verdict;
use nearcrawl_store::{HostId, url_key};
use url::Url;

use super::{IDLE, RobotsState, StoreFrontier, forget};
use crate::error::EngineError;
use crate::frontier::addresses::Gate;
use crate::frontier::{Step, Veto, refuse};

impl StoreFrontier {
    /// The host's next step (robots.txt first), or `None` when it has to wait.
    pub(super) fn take(&mut self, id: HostId, now: Instant, veto: &mut Veto<'_>) -> Option<Step> {
        let obey = self.config.obey_robots;
        let host = self.hosts.get_mut(&id)?;
        let politeness = &self.config.politeness;
        let active = host.politeness.active();
        match self
            .addresses
            .gate(id, host.origin.as_ref(), active, now, politeness)
        {
            Gate::Resolve(name) => {
                self.addresses.resolving(id);
                return Some(Step::Resolve { host: id, name });
            }
            Gate::Resolving => return None,
            Gate::At(_) | Gate::Free => {}
        }
        if obey && host.robots_ready(now).is_none() {
            if matches!(host.robots, RobotsState::Fetching) {
                return None;
            }
            let Some(origin) = host.origin.clone() else {
                // None of the host's queued URLs loaded so far parses (see `refill`): the
                // first is recorded as an error, never requested, and the next are loaded.
                let (key, entry) = host.buffer.pop_first()?;
                forget(&mut self.queued_at, key, &entry);
                let reason = match Url::parse(&entry.url) {
                    Err(e) => format!("stored URL does not parse: {e}"),
                    Ok(_) => "stored URL names no origin".to_string(),
                };
                return Some(refuse(key, entry, Verdict::Error, reason));
            };
            host.robots = RobotsState::Fetching;
            host.politeness.start(now, politeness);
            self.addresses.start(id, now, politeness);
            return Some(Step::Robots { host: id, origin });
        }
        let (key, entry) = host.buffer.pop_first()?;
        forget(&mut self.queued_at, key, &entry);
        if let Some(max) = self.config.max_pages_per_host
            && host.fetched >= max
        {
            let reason = format!("max_pages_per_host ({max}) reached");
            return Some(refuse(key, entry, Verdict::OutOfScope, reason));
        }
        if obey
            && !host
                .robots_ready(now)
                .is_none_or(|rules| rules.allows_text(&entry.url))
        {
            let reason = "disallowed by robots.txt".to_string();
            return Some(refuse(key, entry, Verdict::RobotsDisallowed, reason));
        }
        let store = &self.store;
        let seen = |url: &CanonicalUrl| Ok(store.is_seen(&url_key(url.as_str()))?);
        if let Some((verdict, reason)) = veto(&entry, &seen) {
            return Some(refuse(key, entry, verdict, reason));
        }
        host.politeness.start(now, &self.config.politeness);
        self.addresses.start(id, now, &self.config.politeness);
        host.in_flight_keys.insert(key);
        Some(Step::Fetch {
            host: id,
            key,
            entry,
        })
    }

    /// Whether host `id` may start a request now (its queue loaded from the store when its
    /// buffer ran dry); if it may later, the round notes when.
    pub(super) fn ready(&mut self, id: HostId, now: Instant) -> Result<bool, EngineError> {
        self.refill(id)?;
        let Some(host) = self.hosts.get(&id) else {
            return Ok(false);
        };
        if !host.has_work() || host.politeness.is_parked() {
            return Ok(false);
        }
        let Some(ready_at) = host.politeness.ready_at(&self.config.politeness) else {
            // At its connection limit: it wakes the loop when a request finishes.
            self.round_wake = Some(self.round_wake.unwrap_or(now + IDLE));
            return Ok(false);
        };
        if ready_at > now {
            self.round_wake = Some(self.round_wake.map_or(ready_at, |w| w.min(ready_at)));
            return Ok(false);
        }
        let active = host.politeness.active();
        let politeness = &self.config.politeness;
        match self
            .addresses
            .gate(id, host.origin.as_ref(), active, now, politeness)
        {
            Gate::Resolve(_) | Gate::Free => Ok(true),
            // The answer wakes the loop.
            Gate::Resolving => Ok(false),
            Gate::At(None) => {
                // At its address's connection limit: a request ending wakes the loop.
                self.round_wake = Some(self.round_wake.unwrap_or(now + IDLE));
                Ok(false)
            }
            Gate::At(Some(at)) if at > now => {
                self.round_wake = Some(self.round_wake.map_or(at, |w| w.min(at)));
                Ok(false)
            }
            Gate::At(Some(_)) => Ok(true),
        }
    }

    /// The priority of a host's next step: 0 for its robots.txt, else its first queued URL's.
    fn head_priority(&self, id: HostId, now: Instant) -> u32 {
        let Some(host) = self.hosts.get(&id) else {
            return u32::MAX;
        };
        if self.config.obey_robots && host.robots_ready(now).is_none() {
            return 0;
        }
        host.buffer
            .first_key_value()
            .map_or(u32::MAX, |(key, _)| key.priority)
    }

    /// [`Frontier::next`] across hosts by priority: of the hosts ready now, the one whose
    /// next URL has the lowest priority (the earliest host on ties); hosts that are not ready
    /// leave the round.
    pub(super) fn next_by_priority(
        &mut self,
        now: Instant,
        gate: &mut dyn FnMut() -> Option<Instant>,
        veto: &mut Veto<'_>,
    ) -> Result<Step, EngineError> {
        loop {
            let mut ready = Vec::with_capacity(self.round.len());
            for id in std::mem::take(&mut self.round) {
                if self.ready(id, now)? {
                    ready.push(id);
                }
            }
            self.round = ready;
            // Exploring: the host fetched least from first, then by priority.
            let every = u64::from(self.config.explore_every);
            let explore = every > 0 && self.takes % every == every - 1;
            let Some((pos, &id)) = self.round.iter().enumerate().min_by_key(|(pos, id)| {
                let fetched = if explore {
                    self.hosts.get(id).map_or(0, |h| h.fetched)
                } else {
                    0
                };
                (fetched, self.head_priority(**id, now), *pos)
            }) else {
                return Ok(self.end_round());
            };
            if let Some(at) = gate() {
                return Ok(self.gated(at));
            }
            match self.take(id, now, veto) {
                Some(step) => {
                    if matches!(step, Step::Fetch { .. }) {
                        self.takes += 1;
                    }
                    return Ok(step);
                }
                None => {
                    self.round.remove(pos);
                }
            }
        }
    }

    /// The gate holds every request until `at`: wait until then, or until a host of the
    /// round is ready sooner.
    pub(super) fn gated(&self, at: Instant) -> Step {
        Step::Wait(Some(self.round_wake.map_or(at, |w| w.min(at))))
    }

    /// The round is over: the next one starts one host further on.
    pub(super) fn end_round(&mut self) -> Step {
        self.next_host = self.next_host.wrapping_add(1) % (self.hosts.len().max(1) as HostId);
        Step::Wait(self.round_wake.take())
    }
}
