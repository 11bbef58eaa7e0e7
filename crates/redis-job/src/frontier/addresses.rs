//! Politeness per server address across a job's workers: the names on one server share its
//! budget (requests open at once, the delay between two, back-off when several of its names
//! fail at once), kept in Redis (lua/address.lua) under the address's own hash slot, as a
//! host's is under the host's. Each worker resolves the names itself; a host's address is
//! asked for before its next URL is leased ([`SharedFrontier::next_step_with`]), and the
//! place is given back with the request's outcome when the lease is finished (or the
//! robots.txt read). A worker that dies holds its places until their lease ends.

use redis::Value;

use super::{Outcome, SharedFrontier, at, int, parts, text};
use crate::error::{JobError, bad_reply};

/// A request's place in its server address's budget, held from its lease to its finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressHold {
    /// The address (`203.0.113.5`, `2001:db8::/64`).
    pub address: String,
    /// The host name the request is for (names failing together back the address off).
    pub(super) host: String,
    pub(super) token: u64,
}

/// What a worker knows of a host's server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressOf {
    /// Its name is to be resolved first ([`super::Next::Resolve`]).
    Unresolved,
    /// Its name is being resolved: the host waits a moment.
    Pending,
    /// Its address (as the worker's politeness names it), or `None`: polite per host only.
    Known(Option<String>),
}

/// What asking for a place found.
pub(super) enum Place {
    /// At least one place.
    Held(Vec<AddressHold>),
    /// Not before this instant of the server's clock (ms).
    WaitUntil(i64),
}

impl SharedFrontier {
    /// Whether the job limits requests per address at all.
    pub(super) fn limits_addresses(&self) -> bool {
        self.settings.max_connections_per_address > 0 || self.settings.per_address_delay_ms > 0
    }

    pub(super) fn address_keys(&self, address: &str) -> [String; 3] {
        ["a", "o", "f"].map(|suffix| self.keys.address(address, suffix))
    }

    /// The job's settings as lua/address.lua takes them, after its operation.
    pub(super) fn address_args(&self) -> [String; 5] {
        let settings = &self.settings;
        [
            settings.max_connections_per_address.to_string(),
            settings.per_address_delay_ms.to_string(),
            settings.lease_ms.to_string(),
            settings.backoff_initial_ms.to_string(),
            settings.backoff_max_ms.to_string(),
        ]
    }

    fn address_script(&mut self, address: &str, args: &[String]) -> Result<Vec<Value>, JobError> {
        let keys = self.address_keys(address);
        let fixed = self.address_args();
        let script = &self.scripts.address;
        let what = "address";
        let reply: Value = self.redis.run(what, |con| {
            let mut call = script.prepare_invoke();
            for key in &keys {
                call.key(key);
            }
            call.arg(&args[0]);
            for arg in fixed.iter().chain(&args[1..]) {
                call.arg(arg);
            }
            call.invoke(con)
        })?;
        parts(what, reply)
    }

    /// Asks for places for up to `wanted` requests of `host` to `address` (one when the
    /// address has a delay between requests).
    pub(super) fn acquire_address(
        &mut self,
        address: &str,
        host: &str,
        wanted: usize,
    ) -> Result<Place, JobError> {
        let what = "address";
        let args = ["acquire".to_string(), wanted.max(1).to_string()];
        let items = self.address_script(address, &args)?;
        let now = int(what, &at(what, &items, 1)?)?;
        match text(what, &at(what, &items, 0)?)?.as_str() {
            "ok" => {
                let mut held = Vec::new();
                for token in items.iter().skip(2) {
                    held.push(AddressHold {
                        address: address.to_string(),
                        host: host.to_string(),
                        token: u64::try_from(int(what, token)?).map_err(|e| bad_reply(what, e))?,
                    });
                }
                if held.is_empty() {
                    return Err(bad_reply(what, "no place"));
                }
                Ok(Place::Held(held))
            }
            "wait" => {
                let until = int(what, &at(what, &items, 2)?)?;
                // At its connection limit: a request ends soon, or its lease does.
                Ok(Place::WaitUntil(if until < 0 { now + 20 } else { until }))
            }
            other => Err(bad_reply(what, format!("{other:?}"))),
        }
    }

    /// The request `hold` was won for is being sent now: the address's delay runs from here,
    /// and other workers may win places again.
    /// With no delay between the address's requests there is nothing to do (and nothing is
    /// asked of the job).
    pub fn address_started(&mut self, hold: &AddressHold) -> Result<(), JobError> {
        if self.settings.per_address_delay_ms == 0 {
            return Ok(());
        }
        let args = ["started".to_string(), hold.token.to_string()];
        self.address_script(&hold.address, &args)?;
        Ok(())
    }

    /// Gives back the place `hold`, the request having ended with `outcome` (`NotFetched`: no
    /// request was made, the start it reserved is freed). Returns whether the address now
    /// backs off (the second of its names failing with no answer between).
    pub fn release_address(
        &mut self,
        hold: &AddressHold,
        outcome: Outcome,
    ) -> Result<bool, JobError> {
        let (outcome, retry_after) = outcome_args(outcome);
        let args = [
            "release".to_string(),
            hold.token.to_string(),
            hold.host.clone(),
            outcome.to_string(),
            retry_after.to_string(),
        ];
        let what = "address";
        let items = self.address_script(&hold.address, &args)?;
        Ok(int(what, &at(what, &items, 2)?)? == 1)
    }
}

impl SharedFrontier {
    /// How many times `address` backed off in this job, all workers together.
    pub fn address_backoffs(&mut self, address: &str) -> Result<u64, JobError> {
        let [state, _, _] = self.address_keys(address);
        let backoffs: Option<u64> = self.redis.run("address backoffs", |con| {
            redis::cmd("HGET").arg(&state).arg("backoffs").query(con)
        })?;
        Ok(backoffs.unwrap_or(0))
    }
}

/// An outcome as the scripts take it, and its Retry-After in ms (-1: none).
pub(super) fn outcome_args(outcome: Outcome) -> (&'static str, i64) {
    match outcome {
        Outcome::Answered => ("answered", -1),
        Outcome::Throttled { retry_after } => (
            "throttled",
            retry_after.map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        ),
        Outcome::Failed => ("failed", -1),
        Outcome::NotFetched => ("none", -1),
    }
}
