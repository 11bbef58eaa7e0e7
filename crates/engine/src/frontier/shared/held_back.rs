//! What [`RedisFrontier`] holds back and asks at once: committed decisions made known to the
//! job together ([`SharedFrontier::commit`](nearcrawl_redis_job::SharedFrontier::commit)),
//! and a page's links looked up in the job's seen sets in one exchange.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_redis_job::{Done, Finished, Offer, key_hex};
use nearcrawl_store::{QueueKey, UrlKey};
use tracing::warn;

use super::{RedisFrontier, Requeue, lock, origin_of, outcome, shared_error};
use crate::error::EngineError;

/// Decisions committed locally and not yet made known to the job are sent together
/// ([`SharedFrontier::commit`](nearcrawl_redis_job::SharedFrontier::commit)) when the job is
/// next asked for work, or once this many wait, or once the first has waited [`HOLD_BACK`].
const HOLD_BACK_DECISIONS: usize = 32;
const HOLD_BACK: Duration = Duration::from_millis(50);

impl RedisFrontier {
    /// [`Frontier::committed`](crate::frontier::Frontier::committed): the decision's leases
    /// join those held back, sent when the job is next asked for work or once enough wait.
    pub(super) fn hold_back(&mut self, taken: &[QueueKey]) -> Result<(), EngineError> {
        self.named.clear();
        lock(&self.known_new).clear();
        for key in taken {
            let Some(held) = self.held.remove(key) else {
                continue;
            };
            let requeue = match &held.requeue {
                Some((entry, place)) => {
                    let bytes = serde_json::to_vec(entry).map_err(|e| {
                        EngineError::Shared(format!("queue entry of {}: {e}", entry.url))
                    })?;
                    let priority = u64::from(held.lease.priority);
                    let priority = match place {
                        Requeue::InPlace => priority,
                        Requeue::AtJobEnd => nearcrawl_redis_job::JOB_END_PRIORITY + priority,
                    };
                    Some((priority, bytes))
                }
                None => None,
            };
            // A decided URL's parking is settled with its lease, in the same step.
            let settled = self.settling.iter().position(|(origin, key)| {
                *origin == held.lease.host && key_hex(key) == held.lease.key
            });
            let settle = match settled {
                Some(at) if requeue.is_none() => {
                    self.settling.swap_remove(at);
                    true
                }
                _ => false,
            };
            self.finishing.push(Done {
                lease: held.lease,
                outcome: outcome(held.outcome),
                requeue,
                settle,
            });
        }
        self.settles.append(&mut self.settling);
        let since = *self.held_back_since.get_or_insert_with(Instant::now);
        if self.finishing.len() >= HOLD_BACK_DECISIONS || since.elapsed() >= HOLD_BACK {
            self.send_held_back()?;
        }
        Ok(())
    }

    /// [`Frontier::look_up_seen`](crate::frontier::Frontier::look_up_seen): the URLs this
    /// worker does not know to be seen, asked of the job at once.
    pub(super) fn look_up(&self, urls: &[&CanonicalUrl]) -> Result<(), EngineError> {
        let mut by_origin: BTreeMap<String, Vec<UrlKey>> = BTreeMap::new();
        {
            let known = lock(&self.known_seen);
            for url in urls {
                let key = nearcrawl_store::url_key(url.as_str());
                if !known.contains(&key) && !self.store.is_seen(&key)? {
                    by_origin
                        .entry(origin_of(url.as_url()))
                        .or_default()
                        .push(key);
                }
            }
        }
        if by_origin.is_empty() {
            return Ok(());
        }
        let asked: Vec<(String, Vec<UrlKey>)> = by_origin.into_iter().collect();
        let answers = lock(&self.shared).are_seen(&asked).map_err(shared_error)?;
        let mut new = lock(&self.known_new);
        for ((_, keys), seen) in asked.iter().zip(answers) {
            for (key, seen) in keys.iter().zip(seen) {
                match seen {
                    true => self.remember_seen(*key),
                    false => {
                        new.insert(*key);
                    }
                }
            }
        }
        Ok(())
    }

    /// Makes the decisions committed here known to the job, in one exchange: their new URLs
    /// queued, then their leases finished and their parkings settled.
    pub(super) fn send_held_back(&mut self) -> Result<(), EngineError> {
        self.held_back_since = None;
        if self.offers.is_empty() && self.finishing.is_empty() && self.settles.is_empty() {
            return Ok(());
        }
        let offers: Vec<(String, Vec<Offer>)> =
            std::mem::take(&mut self.offers).into_iter().collect();
        let done = std::mem::take(&mut self.finishing);
        let settles = std::mem::take(&mut self.settles);
        let finished = self
            .shared()
            .commit(&offers, &done, &settles)
            .map_err(shared_error)?;
        for offer in offers.iter().flat_map(|(_, offers)| offers) {
            self.remember_seen(offer.key);
        }
        for (done, finished) in done.iter().zip(finished) {
            if finished == Finished::Stale {
                // Counted in the connection's faults (the report's `shared_job`).
                warn!(
                    host = %done.lease.host,
                    key = %done.lease.key,
                    "lease expired before its decision: another worker may fetch the URL too"
                );
            }
        }
        Ok(())
    }
}
