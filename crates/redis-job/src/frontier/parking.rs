//! Links parked on a URL until it is decided: parked, released when it is decided, settled.

use crate::error::{JobError, bad_reply};

use super::{Parking, SharedFrontier, key_hex};

impl SharedFrontier {
    /// The keys of the parking of URL `key` of `host`: its host's entries, hubs and decided
    /// marks, and the links parked on it.
    pub(super) fn parking_keys(&self, host: &str, key: &str) -> [String; 4] {
        [
            self.keys.host(host, "e"),
            self.keys.host(host, "hubs"),
            self.keys.host(host, "decided"),
            self.keys.host(host, &format!("parked:{key}")),
        ]
    }

    /// Parks `link` (key `link_key`, in the caller's encoding) until URL `key` of `host` is
    /// decided ([`SharedFrontier::decide`](super::SharedFrontier::decide)); or, if it was decided (or never queued), says
    /// how. Atomic with `decide`: a link is never parked on a URL already decided.
    pub fn park(
        &mut self,
        host: &str,
        key: &[u8; 16],
        link_key: &[u8; 16],
        link: &[u8],
    ) -> Result<Parking, JobError> {
        let what = "park";
        let key = key_hex(key);
        let keys = self.parking_keys(host, &key);
        let script = &self.scripts.park;
        let reply: String = self.redis.run(what, |con| {
            let mut call = script.prepare_invoke();
            for k in &keys {
                call.key(k);
            }
            call.arg(&key).arg(key_hex(link_key)).arg(link).invoke(con)
        })?;
        match reply.as_str() {
            "hub" => Ok(Parking::Hub),
            "decided" => Ok(Parking::Decided),
            "parked" => Ok(Parking::Parked),
            other => Err(bad_reply(what, format!("{other:?}"))),
        }
    }

    /// URL `key` of `host` is decided (`hub`: it led to many new pages, the engine's
    /// `hub_min_links`): no link is parked on it from now on. Returns the links parked
    /// on it, which the caller follows (a hub) or drops, then settles with
    /// [`SharedFrontier::settle`](super::SharedFrontier::settle) once the URL's lease is finished; until then they stay, for
    /// a worker that decides the URL again after this one died.
    pub fn decide(
        &mut self,
        host: &str,
        key: &[u8; 16],
        hub: bool,
    ) -> Result<Vec<Vec<u8>>, JobError> {
        let key = key_hex(key);
        let [_, hubs, decided, parked] = self.parking_keys(host, &key);
        let script = &self.scripts.decide;
        self.redis.run("decide", |con| {
            script
                .key(&hubs)
                .key(&decided)
                .key(&parked)
                .arg(&key)
                .arg(if hub { "1" } else { "0" })
                .invoke(con)
        })
    }

    /// The links parked on URL `key` of `host` were followed or dropped, and its lease
    /// finished: its parking is removed.
    pub fn settle(&mut self, host: &str, key: &[u8; 16]) -> Result<(), JobError> {
        let key = key_hex(key);
        let [_, _, decided, parked] = self.parking_keys(host, &key);
        let script = &self.scripts.settle;
        self.redis.run("settle", |con| {
            script
                .key(&decided)
                .key(&parked)
                .arg(&key)
                .invoke::<i64>(con)
                .map(|_| ())
        })
    }
}
