//! Several decisions made known to the job at once: their new URLs offered, their leases
//! finished (with their places in their addresses' budgets given back and their parkings
//! settled), then their hosts scheduled, in two exchanges with the server whatever their
//! number ([`SharedFrontier::commit`]).

use redis::{ScriptInvocation, Value};

use crate::error::{JobError, bad_reply};

use super::addresses::outcome_args;
use super::answers::{Finished, Lease, Offer, Outcome};
use super::scheduling::{Hint, head_arg};
use super::{SharedFrontier, at, int, key_hex, offer_call, parts, text};

/// A lease to finish in a [`SharedFrontier::commit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The lease.
    pub lease: Lease,
    /// How its request went.
    pub outcome: Outcome,
    /// Its URL to queue again (priority, entry), as [`SharedFrontier::finish`] takes it.
    pub requeue: Option<(u64, Vec<u8>)>,
    /// Its URL was decided ([`SharedFrontier::decide`]): its parking is settled with it.
    pub settle: bool,
}

impl SharedFrontier {
    /// Makes decisions known to the job: first `offers` (new URLs, by host) are queued,
    /// then the leases of `done` finished, then the parkings of `settles` (host, URL key)
    /// removed, in that order and in one exchange on one server (a worker killed midway
    /// has queued a decision's links before it finishes its lease); then the hosts touched
    /// are announced or scheduled, in a second. Returns how each lease ended, in order.
    pub fn commit(
        &mut self,
        offers: &[(String, Vec<Offer>)],
        done: &[Done],
        settles: &[(String, [u8; 16])],
    ) -> Result<Vec<Finished>, JobError> {
        let what = "commit";
        let host_args = self.settings.host_args();
        let address_args = self.address_args();
        let scripts = &self.scripts;
        let finish_call = |keys: Vec<String>, extra: Vec<Vec<u8>>| {
            let mut call = scripts.finish.prepare_invoke();
            for key in keys {
                call.key(key);
            }
            for arg in &host_args {
                call.arg(arg);
            }
            for arg in extra {
                call.arg(arg);
            }
            call
        };
        let mut calls: Vec<ScriptInvocation<'_>> = Vec::new();
        for (host, offers) in offers.iter().filter(|(_, o)| !o.is_empty()) {
            calls.push(offer_call(&scripts.offer, self.host_keys(host), offers));
        }
        let offered = calls.len();
        // The places first: a finish that finds its lease stale still ends the request its
        // place was held for.
        for item in done {
            if let Some(hold) = &item.lease.address {
                let (outcome, retry_after) = outcome_args(item.outcome);
                let mut call = scripts.address.prepare_invoke();
                for key in self.address_keys(&hold.address) {
                    call.key(key);
                }
                call.arg("release");
                for arg in &address_args {
                    call.arg(arg);
                }
                call.arg(hold.token)
                    .arg(&hold.host)
                    .arg(outcome)
                    .arg(retry_after);
                calls.push(call);
            }
        }
        let finishes = calls.len();
        for item in done {
            let lease = &item.lease;
            let (outcome, retry_after) = outcome_args(item.outcome);
            let (priority, entry) = match &item.requeue {
                Some((priority, entry)) => (i64::try_from(*priority).unwrap_or(i64::MAX), entry),
                None => (-1, &Vec::new()),
            };
            let mut keys = self.host_keys(&lease.host).to_vec();
            if item.settle && item.requeue.is_none() {
                let [_, _, decided, parked] = self.parking_keys(&lease.host, &lease.key);
                keys.extend([decided, parked]);
            }
            let extra = vec![
                lease.key.as_bytes().to_vec(),
                lease.token.to_string().into_bytes(),
                outcome.as_bytes().to_vec(),
                retry_after.to_string().into_bytes(),
                priority.to_string().into_bytes(),
                entry.clone(),
            ];
            calls.push(finish_call(keys, extra));
        }
        for (host, key) in settles {
            let key = key_hex(key);
            let [_, _, decided, parked] = self.parking_keys(host, &key);
            let mut call = scripts.settle.prepare_invoke();
            call.key(decided).key(parked).arg(key);
            calls.push(call);
        }
        let replies = self.redis.run_scripts(what, &calls)?;
        drop(calls);
        if replies.len() < finishes + done.len() {
            return Err(bad_reply(what, format!("{} replies", replies.len())));
        }
        let mut heads: Vec<(&str, Option<u64>, Option<i64>)> = Vec::new();
        for ((host, _), reply) in offers
            .iter()
            .filter(|(_, o)| !o.is_empty())
            .zip(&replies[..offered])
        {
            let head = match reply {
                Value::Array(items) => items.last().map(|v| int(what, v)).transpose()?,
                other => return Err(bad_reply(what, format!("{other:?}"))),
            };
            heads.push((host, None, head));
        }
        let mut finished = Vec::with_capacity(done.len());
        let mut schedules = Vec::new();
        for (item, reply) in done.iter().zip(&replies[finishes..finishes + done.len()]) {
            let items = parts(what, reply.clone())?;
            match text(what, &at(what, &items, 0)?)?.as_str() {
                "stale" => {
                    let faults = self.redis.faults();
                    faults
                        .stale_leases
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    finished.push(Finished::Stale);
                }
                "ok" => {
                    let hint = int(what, &at(what, &items, 2)?)?;
                    let parked = int(what, &at(what, &items, 3)?)? == 1;
                    let host = item.lease.host.as_str();
                    if hint >= 0 {
                        let head = int(what, &at(what, &items, 4)?)?;
                        heads.push((host, Some(hint as u64), Some(head)));
                    } else {
                        // Nothing queued or leased (or only what waits for the job's end):
                        // the host leaves the ready set now.
                        let hint = Hint {
                            at: hint,
                            head: None,
                        };
                        schedules.push((host, item.lease.stamp.as_str(), hint));
                    }
                    finished.push(Finished::Done { parked });
                }
                other => return Err(bad_reply(what, format!("{other:?}"))),
            }
        }
        self.schedule_all(&heads, &schedules)?;
        Ok(finished)
    }

    /// Announces `heads` (host, time, priority of its next URL) and schedules `schedules`
    /// (host, its stamp when picked, hint), all in one exchange: all are the job's keys.
    pub(super) fn schedule_all(
        &mut self,
        heads: &[(&str, Option<u64>, Option<i64>)],
        schedules: &[(&str, &str, Hint)],
    ) -> Result<(), JobError> {
        let mut calls: Vec<ScriptInvocation<'_>> = Vec::new();
        if !heads.is_empty() {
            let mut call = self.scripts.announce.prepare_invoke();
            for key in ["ready", "stamps", "hosts", "heads"] {
                call.key(self.keys.job(key));
            }
            for (host, at, head) in heads {
                call.arg(*host);
                match at {
                    Some(at) => call.arg(*at),
                    None => call.arg("now"),
                };
                call.arg(head_arg(*head));
            }
            calls.push(call);
        }
        for (host, stamp, hint) in schedules {
            let mut call = self.scripts.schedule.prepare_invoke();
            for key in ["ready", "stamps", "heads", "job", "ending"] {
                call.key(self.keys.job(key));
            }
            call.arg(*host)
                .arg(*stamp)
                .arg(hint.at)
                .arg(head_arg(hint.head));
            calls.push(call);
        }
        self.redis.run_scripts("schedule", &calls)?;
        Ok(())
    }
}
