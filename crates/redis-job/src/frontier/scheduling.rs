//! Handing out work: hosts announced, picked by the server's clock, a URL taken and the
//! host scheduled again, a lease finished.

use std::time::Duration;

use redis::Value;

use crate::error::{JobError, bad_reply};

use super::addresses::{AddressOf, Place};
use super::answers::{Finished, Lease, Next, Outcome};
use super::{PICKS_PER_NEXT, SharedFrontier, at, bytes, int, parts, text};

impl SharedFrontier {
    /// Says that `hosts` have work from the given server time on (`None`: now).
    pub fn announce(&mut self, hosts: &[(&str, Option<u64>)]) -> Result<(), JobError> {
        if hosts.is_empty() {
            return Ok(());
        }
        let with_heads: Vec<(&str, Option<u64>, Option<i64>)> =
            hosts.iter().map(|(host, at)| (*host, *at, None)).collect();
        self.announce_heads(&with_heads)
    }

    /// [`SharedFrontier::announce`](super::SharedFrontier::announce), with the priority of each host's next URL when known
    /// (-1: none).
    pub(super) fn announce_heads(
        &mut self,
        hosts: &[(&str, Option<u64>, Option<i64>)],
    ) -> Result<(), JobError> {
        self.schedule_all(hosts, &[])
    }

    /// What this worker should do next.
    pub fn next_step(&mut self) -> Result<Next, JobError> {
        self.next_step_with(&mut |_| AddressOf::Known(None))
    }

    /// [`SharedFrontier::next_step`](super::SharedFrontier::next_step), each picked host's server address given by
    /// `address_of` (in a job limiting requests per address): a place in its budget is held
    /// before its URL is leased ([`Lease::address`]), or the host waits for it while other
    /// hosts are picked; an unresolved name is handed out to be resolved ([`Next::Resolve`]).
    ///
    /// A host picked may lease up to [`SharedFrontier::set_batch`] URLs at once (as many as
    /// its politeness and its address's allow now): the first is the step returned, the
    /// others the next steps', without asking the job again.
    pub fn next_step_with(
        &mut self,
        address_of: &mut dyn FnMut(&str) -> AddressOf,
    ) -> Result<Next, JobError> {
        if let Some(lease) = self.leased.pop_front() {
            return Ok(Next::Fetch(lease));
        }
        // A picked host that cannot give work now is rescheduled at its own time, so the next
        // pick finds another host, or says how long until the first one is ready.
        for _ in 0..PICKS_PER_NEXT {
            let (host, stamp) = match self.pick()? {
                Picked::Host { host, stamp } => (host, stamp),
                Picked::Wait(wait) => return Ok(Next::Wait(wait)),
                Picked::Other(next) => return Ok(next),
            };
            let mut holds = Vec::new();
            if self.limits_addresses() {
                match address_of(&host) {
                    // Picked again by anyone once its claim ends, resolved by then.
                    AddressOf::Unresolved => return Ok(Next::Resolve { host }),
                    AddressOf::Pending => continue,
                    AddressOf::Known(Some(address)) => {
                        match self.acquire_address(&address, &host, self.batch)? {
                            Place::Held(held) => holds = held,
                            Place::WaitUntil(at) => {
                                let hint = Hint { at, head: None };
                                self.schedule(&host, &stamp, hint)?;
                                continue;
                            }
                        }
                    }
                    AddressOf::Known(None) => {}
                }
            }
            let wanted = if holds.is_empty() {
                self.batch
            } else {
                holds.len()
            };
            let (taken, hint) = self.take(&host, &stamp, wanted)?;
            self.schedule(&host, &stamp, hint)?;
            let mut holds = holds.into_iter();
            let next = match taken {
                Some(Taken::Leases(leases)) => {
                    for lease in leases {
                        let address = holds.next();
                        self.leased.push_back(Lease { address, ..lease });
                    }
                    self.leased.pop_front().map(Next::Fetch)
                }
                Some(Taken::Other(Next::Robots { host, .. })) => Some(Next::Robots {
                    host,
                    address: holds.next(),
                }),
                Some(Taken::Other(other)) => Some(other),
                None => None,
            };
            // Places won for URLs the host did not give: the starts they reserved are freed.
            for hold in holds {
                self.release_address(&hold, Outcome::NotFetched)?;
            }
            if let Some(next) = next {
                return Ok(next);
            }
        }
        Ok(Next::Wait(Duration::from_millis(10)))
    }

    /// Whether URLs leased by a take of several wait to be handed out (the next step needs
    /// no exchange with the job).
    pub fn has_leased(&self) -> bool {
        !self.leased.is_empty()
    }

    /// How many URLs one take may lease from a host at most (at least one; one by default).
    /// More saves the job's round trips per page on hosts with no delay between requests,
    /// and holds leases this worker has not started yet: a worker sets it to what it can
    /// start at once.
    pub fn set_batch(&mut self, batch: usize) {
        self.batch = batch.max(1);
    }

    /// URLs leased but not handed out yet (by a take of several): given back to their
    /// queues, at their places, so that a worker that stops leaves none to wait for their
    /// leases' end.
    pub fn give_back(&mut self) -> Result<(), JobError> {
        let done: Vec<super::Done> = std::mem::take(&mut self.leased)
            .into_iter()
            .map(|lease| super::Done {
                requeue: Some((u64::from(lease.priority), lease.entry.clone())),
                lease,
                outcome: Outcome::NotFetched,
                settle: false,
            })
            .collect();
        if !done.is_empty() {
            self.commit(&[], &done, &[])?;
        }
        Ok(())
    }

    pub(super) fn pick(&mut self) -> Result<Picked, JobError> {
        let what = "pick";
        let keys =
            ["job", "ready", "stamps", "workers", "heads", "ending"].map(|s| self.keys.job(s));
        let script = &self.scripts.pick;
        let claim = self.settings.claim_ms;
        let by_priority = u8::from(self.settings.by_priority);
        let worker = &self.worker;
        let reply: Value = self.redis.run(what, |con| {
            let mut call = script.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            call.arg(claim)
                .arg(worker.as_str())
                .arg(by_priority)
                .invoke(con)
        })?;
        let items = parts(what, reply)?;
        let now = int(what, &at(what, &items, 1)?)?;
        Ok(match text(what, &at(what, &items, 0)?)?.as_str() {
            "host" => {
                self.ending = text(what, &at(what, &items, 4)?)? == "1";
                Picked::Host {
                    host: text(what, &at(what, &items, 2)?)?,
                    stamp: text(what, &at(what, &items, 3)?)?,
                }
            }
            "wait" => Picked::Wait(until(now, int(what, &at(what, &items, 2)?)?)),
            "seed" => Picked::Other(Next::Seed),
            "done" => Picked::Other(Next::Done),
            "stopped" => Picked::Other(Next::Stopped),
            other => return Err(bad_reply(what, format!("{other:?}"))),
        })
    }

    /// Asks `host` for up to `wanted` URLs; returns the step (if any) and when the host may
    /// next give work.
    pub(super) fn take(
        &mut self,
        host: &str,
        stamp: &str,
        wanted: usize,
    ) -> Result<(Option<Taken>, Hint), JobError> {
        let what = "take";
        let ending = vec![u8::from(self.ending) + b'0'];
        let wanted = wanted.max(1).to_string().into_bytes();
        let items = self.host_script(what, |s| &s.take, host, &[ending, wanted])?;
        let now = int(what, &at(what, &items, 1)?)?;
        let hint_at = |at: i64| Hint { at, head: None };
        let other = |next: Next| Some(Taken::Other(next));
        Ok(match text(what, &at(what, &items, 0)?)?.as_str() {
            "lease" => {
                let robots_version = u64::try_from(int(what, &at(what, &items, 6)?)?).unwrap_or(0);
                let lease = |at_key: usize, at_priority: usize| -> Result<Lease, JobError> {
                    Ok(Lease {
                        host: host.to_string(),
                        key: text(what, &at(what, &items, at_key)?)?,
                        token: u64::try_from(int(what, &at(what, &items, at_key + 1)?)?)
                            .map_err(|e| bad_reply(what, e))?,
                        entry: bytes(what, &at(what, &items, at_key + 2)?)?,
                        priority: u32::try_from(int(what, &at(what, &items, at_priority)?)?)
                            .unwrap_or(u32::MAX),
                        robots_version,
                        stamp: stamp.to_string(),
                        address: None,
                    })
                };
                let mut leases = vec![lease(2, 9)?];
                // Each further URL: key, token, entry, priority.
                for first in (10..items.len()).step_by(4) {
                    leases.push(lease(first, first + 3)?);
                }
                let hint = Hint {
                    head: Some(int(what, &at(what, &items, 8)?)?),
                    ..hint_at(int(what, &at(what, &items, 5)?)?)
                };
                (Some(Taken::Leases(leases)), hint)
            }
            "robots" => (
                other(Next::Robots {
                    host: host.to_string(),
                    address: None,
                }),
                hint_at(now + self.settings.robots_lease_ms as i64),
            ),
            "parked" => (
                other(Next::Parked {
                    host: host.to_string(),
                }),
                hint_at(now),
            ),
            "spent" => (
                other(Next::Spent {
                    host: host.to_string(),
                }),
                hint_at(now),
            ),
            "wait" => (None, hint_at(int(what, &at(what, &items, 2)?)?)),
            "empty" => (None, hint_at(-1)),
            other => return Err(bad_reply(what, format!("{other:?}"))),
        })
    }

    pub(super) fn schedule(&mut self, host: &str, stamp: &str, hint: Hint) -> Result<(), JobError> {
        self.schedule_all(&[], &[(host, stamp, hint)])
    }

    /// `lease` is done with: `outcome` says how the request went, and `requeue` (priority,
    /// entry) puts the URL back in its queue to be fetched again later (a retry; from
    /// [`JOB_END_PRIORITY`](super::JOB_END_PRIORITY) on, once the job has nothing else to do). The host is announced
    /// again when it has work left.
    pub fn finish(
        &mut self,
        lease: &Lease,
        outcome: Outcome,
        requeue: Option<(u64, &[u8])>,
    ) -> Result<Finished, JobError> {
        self.finish_step(lease, outcome, requeue, false)
    }

    /// [`SharedFrontier::finish`](super::SharedFrontier::finish) and [`SharedFrontier::settle`](super::SharedFrontier::settle) of the leased URL, in one
    /// step: the URL was decided ([`SharedFrontier::decide`](super::SharedFrontier::decide)) and the links parked on it
    /// followed or dropped. The parking is settled even if the lease had expired (stale).
    pub fn finish_and_settle(
        &mut self,
        lease: &Lease,
        outcome: Outcome,
    ) -> Result<Finished, JobError> {
        self.finish_step(lease, outcome, None, true)
    }

    fn finish_step(
        &mut self,
        lease: &Lease,
        outcome: Outcome,
        requeue: Option<(u64, &[u8])>,
        settle: bool,
    ) -> Result<Finished, JobError> {
        let done = super::Done {
            lease: lease.clone(),
            outcome,
            requeue: requeue.map(|(priority, entry)| (priority, entry.to_vec())),
            settle,
        };
        let mut finished = self.commit(&[], &[done], &[])?;
        finished
            .pop()
            .ok_or_else(|| bad_reply("finish", "no answer"))
    }
}

/// What a take gave.
pub(super) enum Taken {
    /// URLs leased, at least one.
    Leases(Vec<Lease>),
    /// Another step for the host (robots.txt, given up, spent).
    Other(Next),
}

pub(super) enum Picked {
    Host { host: String, stamp: String },
    Wait(Duration),
    Other(Next),
}

/// When a host may next give work, by the server's clock: -1 when it has nothing queued or
/// leased, -2 when all it has queued waits for the job's end ([`JOB_END_PRIORITY`](super::JOB_END_PRIORITY)).
#[derive(Clone, Copy)]
pub(super) struct Hint {
    pub(super) at: i64,
    /// The priority of its next URL, when the step read it (-1: none).
    pub(super) head: Option<i64>,
}

/// The scripts' form of the priority of a host's next URL: `-1` (nothing queued) is `none`,
/// not known is empty.
pub(super) fn head_arg(head: Option<i64>) -> String {
    match head {
        Some(head) if head >= 0 => head.to_string(),
        Some(_) => "none".to_string(),
        None => String::new(),
    }
}

/// From server time `now` to `at` (both ms), never negative.
fn until(now: i64, at: i64) -> Duration {
    Duration::from_millis(u64::try_from(at.saturating_sub(now)).unwrap_or(0))
}
