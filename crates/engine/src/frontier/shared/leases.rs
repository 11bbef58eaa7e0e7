//! How [`RedisFrontier`] turns the job's answers into the coordinator's steps: a lease into a
//! fetch (or a refusal: robots.txt, an unreadable entry, the coordinator's veto), a given-up
//! host's queue into refusals, a robots.txt request's place in its address's budget given
//! back.

use nearcrawl_fetch::RobotsRules;
use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_records::Verdict;
use nearcrawl_redis_job::{Lease, Outcome};
use nearcrawl_store::{HostId, QueueKey, QueuedUrl, url_key};
use tracing::warn;

use super::{DRAIN_BATCH, Held, RedisFrontier, shared_error};
use crate::error::EngineError;
use crate::frontier::{Frontier, Step, Veto, refuse};

impl RedisFrontier {
    /// The job's robots.txt rules for `origin` at `version`, read back once per version.
    pub(super) fn allows(
        &mut self,
        origin: &str,
        version: u64,
        url: &str,
    ) -> Result<bool, EngineError> {
        if version == 0 {
            return Ok(true);
        }
        if self.robots.get(origin).is_none_or(|(v, _)| *v != version) {
            let bytes = self
                .shared()
                .robots_rules(origin)
                .map_err(shared_error)?
                .unwrap_or_default();
            let rules = RobotsRules::from_shared(&self.agent, &bytes);
            self.robots.insert(origin.to_string(), (version, rules));
        }
        Ok(self
            .robots
            .get(origin)
            .is_none_or(|(_, r)| r.allows_text(url)))
    }

    /// Gives back the place in its address's budget that `host`'s robots.txt request held.
    pub(super) fn release_robots_hold(&mut self, host: HostId, outcome: Outcome) {
        if let Some(hold) = self.robots_holds.remove(&host)
            && let Err(e) = self.shared().release_address(&hold, outcome)
        {
            // Its lease ends it: the place frees itself.
            warn!(address = %hold.address, error = %e, "an address's place not given back");
        }
    }

    /// A lease turned into the coordinator's step.
    /// Takes a batch of `host`'s queued URLs out, to be recorded as `verdict` for `reason`.
    pub(super) fn drain_refused(
        &mut self,
        host: &str,
        verdict: Verdict,
        reason: &str,
    ) -> Result<(), EngineError> {
        let id = self.host_id(host)?;
        let drained = self
            .shared()
            .drain(host, DRAIN_BATCH)
            .map_err(shared_error)?;
        for (n, (key_hex, bytes)) in drained.into_iter().enumerate() {
            let entry = serde_json::from_slice(&bytes).unwrap_or_else(|_| QueuedUrl {
                url: format!("{host}?unreadable-entry={key_hex}"),
                ..QueuedUrl::default()
            });
            // Not leased: a key no lease has (the store has nothing under it).
            let key = QueueKey {
                host: id,
                priority: u32::MAX,
                order: n as u64,
            };
            self.refusals
                .push_back((key, entry, verdict, reason.to_string()));
        }
        Ok(())
    }

    pub(super) fn step_for(
        &mut self,
        lease: Lease,
        veto: &mut Veto<'_>,
    ) -> Result<Step, EngineError> {
        let host = self.host_id(&lease.host)?;
        let key = QueueKey {
            host,
            priority: 0,
            order: lease.token,
        };
        let origin = lease.host.clone();
        let version = lease.robots_version;
        let entry: Result<QueuedUrl, String> =
            serde_json::from_slice(&lease.entry).map_err(|e| e.to_string());
        self.held.insert(
            key,
            Held {
                lease,
                outcome: None,
                requeue: None,
            },
        );
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let entry = QueuedUrl {
                    url: format!("{origin}?unreadable-entry"),
                    ..QueuedUrl::default()
                };
                let reason = format!("the job's queue entry does not parse: {e}");
                return Ok(refuse(key, entry, Verdict::Error, reason));
            }
        };
        if !self.allows(&origin, version, &entry.url)? {
            let reason = "disallowed by robots.txt".to_string();
            return Ok(refuse(key, entry, Verdict::RobotsDisallowed, reason));
        }
        let seen = |url: &CanonicalUrl| self.is_seen(url, &url_key(url.as_str()));
        if let Some((verdict, reason)) = veto(&entry, &seen) {
            return Ok(refuse(key, entry, verdict, reason));
        }
        let hold = self.held.get(&key).and_then(|h| h.lease.address.clone());
        if let Some(hold) = hold {
            self.shared().address_started(&hold).map_err(shared_error)?;
        }
        Ok(Step::Fetch { host, key, entry })
    }
}
