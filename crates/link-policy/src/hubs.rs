//! A hub's credit: what the pages a hub queued turned out to be, and whether it is worth
//! fetching again on another site ([`HubRule`]).

use serde::{Deserialize, Serialize};

use crate::keys::Key;
use crate::matched::HubWorth;
use crate::released::{WaitedFor, decided_hub};

/// The key a duplicate's link to a hub's counterpart is parked on while what the hub (record
/// `seq`) led to is not known yet: its links are not all decided.
pub fn hub_links_key(seq: u64) -> Key {
    crate::key(&format!("hub {seq}"))
}

/// When a page is a hub, and when a hub is worth fetching again (`hub_min_links`,
/// `hub_min_yield`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HubRule {
    /// A page whose links led to at least this many new pages is a hub (0: none is).
    pub min_links: u32,
    /// A hub that led to less than this many times itself is not fetched again (0: every
    /// hub is).
    pub min_yield: f64,
}

impl HubRule {
    /// Whether pages are counted as hubs at all.
    pub fn on(&self) -> bool {
        self.min_links > 0
    }

    /// Whether a page that queued `queued` links is a hub, to be credited with what they lead
    /// to.
    pub fn is_hub(&self, queued: u32) -> bool {
        self.on() && queued >= self.min_links
    }

    /// Whether a hub that led to less than itself is declined (not fetched again).
    pub fn declines(&self) -> bool {
        HubYield::rule_on(self.min_yield)
    }

    /// Whether the hub that led to `yielded` is worth fetching again on another site.
    pub fn worth_fetching(&self, yielded: &HubYield) -> bool {
        yielded.worth_fetching(self.min_links, self.min_yield)
    }

    /// What a link (carrying a probe, or not) parked on a page learns when the page is
    /// decided: a hub (record `hub`) or not. In this process, where hubs are declined, a
    /// link that would be probed waits for what the hub's links lead to, on the key returned
    /// ([`hub_links_key`]); a shared job's worker cannot know what another's hub led to
    /// ([`decided_hub`]).
    pub fn page_decided(
        &self,
        hub: Option<u64>,
        local: bool,
        probe: bool,
    ) -> (WaitedFor, Option<Key>) {
        match hub {
            None => (WaitedFor::Page, None),
            Some(seq) => {
                let wait_on = (local && self.declines()).then(|| hub_links_key(seq));
                (decided_hub(local, wait_on.is_some(), probe), wait_on)
            }
        }
    }

    /// What the hub (record `seq`) that led to `yielded` is worth: not known while its links
    /// are not all decided (then a link waits for them on [`hub_links_key`]); declined when
    /// they are, and the new pages among them weigh less than [`HubRule::min_yield`] times
    /// itself. A hub marked before yields were kept (`None`) is fetched, as then.
    pub fn worth(&self, hub: Option<(u64, HubYield)>) -> (HubWorth, Option<Key>) {
        match hub {
            None => (HubWorth::Worth, None),
            Some((seq, yielded)) if !yielded.complete() => {
                (HubWorth::Pending, Some(hub_links_key(seq)))
            }
            Some((_, yielded)) => match yielded.worth_fetching(self.min_links, self.min_yield) {
                true => (HubWorth::Worth, None),
                false => (HubWorth::Declined, None),
            },
        }
    }
}

/// What a URL a hub queued turned out to be, as the hub's credit counts it
/// ([`HubRule::credit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credit {
    /// A redirect whose target was not queued with it (seen already, refused, a redirect too
    /// many): where the link leads is another link's to tell, so what the hub led to is not
    /// known, and it is fetched again as before.
    Redirect,
    /// New content of these bytes: a page fetched that no other is a copy of, or a file that
    /// is no page (a table of downloads leads to its files).
    New(u64),
    /// Anything else: a duplicate, an error, a probe's `unchanged`.
    Other,
}

impl HubRule {
    /// Credits the hubs that queued the URLs a decision decided (`decided`: each one's
    /// position in the decision, the number of the hub's record, what it turned out to be)
    /// in `yields`, the hubs' yields the decision changes, each read from `stored` the first
    /// time (a hub not found there, or complete already, is credited no more). Returns the
    /// hubs whose links are all decided now: (the position that completed it, the hub's
    /// number, whether it is worth fetching again).
    pub fn credit<E>(
        &self,
        yields: &mut Vec<(u64, HubYield)>,
        decided: impl IntoIterator<Item = (usize, u64, Credit)>,
        mut stored: impl FnMut(u64) -> Result<Option<HubYield>, E>,
    ) -> Result<Vec<(usize, u64, bool)>, E> {
        let mut completed = Vec::new();
        if !self.on() {
            return Ok(completed);
        }
        for (index, hub, credit) in decided {
            let at = match yields.iter().position(|(seq, _)| *seq == hub) {
                Some(at) => at,
                None => match stored(hub)? {
                    Some(yielded) if !yielded.complete() => {
                        yields.push((hub, yielded));
                        yields.len() - 1
                    }
                    _ => continue,
                },
            };
            let yielded = &mut yields[at].1;
            if yielded.complete() {
                continue;
            }
            match credit {
                Credit::Redirect => yielded.count_redirect(),
                Credit::New(bytes) => yielded.count(Some(bytes)),
                Credit::Other => yielded.count(None),
            }
            if yielded.complete() {
                completed.push((index, hub, self.worth_fetching(yielded)));
            }
        }
        Ok(completed)
    }
}

/// What a hub (a page whose decision queued at least `hub_min_links` new links) led
/// to: the pages it queued that turned out unique, and their size against its own. A next
/// release's copy of a hub is fetched for the new pages it may list; a hub that led to less
/// than itself (a 1.5 MB instruction table listing a hundred operand pages of 7 kB) is worth
/// a probe, not a fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HubYield {
    /// The hub's own size (bytes received).
    pub bytes: u64,
    /// Links it queued.
    pub links: u32,
    /// Of those, decided so far.
    pub decided: u32,
    /// Of those, fetched and new: unique pages, and files that are no pages.
    pub pages: u32,
    /// Their size (bytes received).
    pub page_bytes: u64,
    /// One of its links redirected: where it leads is another URL's to tell, so what the hub
    /// led to is not known (it is worth fetching).
    pub unknown: bool,
}

impl HubYield {
    /// Stored form: 29 bytes, big-endian, fields in order (28, without `unknown`, as the
    /// first version wrote it).
    const LEN: usize = 29;

    /// A hub of `bytes` that queued `links` links, none decided yet.
    pub fn new(bytes: u64, links: u32) -> HubYield {
        HubYield {
            bytes,
            links,
            ..HubYield::default()
        }
    }

    /// One of its links decided as a redirect: what the hub led to is [unknown](Self::unknown).
    pub fn count_redirect(&mut self) {
        self.decided = self.decided.saturating_add(1);
        self.unknown = true;
    }

    /// One of its links decided: a new page of `page_bytes` when `Some`, anything else
    /// (a duplicate, an error, a probe's `unchanged`) when `None`.
    pub fn count(&mut self, page_bytes: Option<u64>) {
        self.decided = self.decided.saturating_add(1);
        if let Some(bytes) = page_bytes {
            self.pages = self.pages.saturating_add(1);
            self.page_bytes = self.page_bytes.saturating_add(bytes);
        }
    }

    /// Whether every link it queued is decided.
    pub fn complete(&self) -> bool {
        self.decided >= self.links
    }

    /// Whether it is worth fetching again on another site: while its links are not all
    /// decided, or when one redirected, yes (what it leads to is not known); then when it led
    /// to at least
    /// `min_pages` new pages weighing at least `min_yield` times its own size. A `min_yield`
    /// of 0 (or not a finite positive number) keeps every hub.
    pub fn worth_fetching(&self, min_pages: u32, min_yield: f64) -> bool {
        if !self.complete() || self.unknown || !Self::rule_on(min_yield) {
            return true;
        }
        self.pages >= min_pages && self.page_bytes as f64 >= min_yield * self.bytes as f64
    }

    /// Whether a `min_yield` declines any hub: a finite positive number.
    pub fn rule_on(min_yield: f64) -> bool {
        min_yield.is_finite() && min_yield > 0.0
    }

    /// The stored form.
    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut out = [0; Self::LEN];
        out[..8].copy_from_slice(&self.bytes.to_be_bytes());
        out[8..12].copy_from_slice(&self.links.to_be_bytes());
        out[12..16].copy_from_slice(&self.decided.to_be_bytes());
        out[16..20].copy_from_slice(&self.pages.to_be_bytes());
        out[20..28].copy_from_slice(&self.page_bytes.to_be_bytes());
        out[28] = u8::from(self.unknown);
        out
    }

    /// The inverse of [`HubYield::encode`]; what is wrong with `bytes` when they are not one.
    pub fn decode(bytes: &[u8]) -> Result<HubYield, String> {
        let corrupt = || format!("a yield of {} bytes, not {}", bytes.len(), Self::LEN);
        let unknown = match bytes.len() {
            28 => false,
            Self::LEN => match bytes[28] {
                0 => false,
                1 => true,
                _ => return Err(corrupt()),
            },
            _ => return Err(corrupt()),
        };
        let u64_at = |i: usize| u64::from_be_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
        let u32_at = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap_or_default());
        Ok(HubYield {
            bytes: u64_at(0),
            links: u32_at(8),
            decided: u32_at(12),
            pages: u32_at(16),
            page_bytes: u64_at(20),
            unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hub_is_worth_fetching_again_for_what_its_links_led_to() {
        let rule = HubRule {
            min_links: 3,
            min_yield: 1.0,
        };
        // A hub of 10 kB that queued three links.
        let hub = |decided, page_bytes, unknown| HubYield {
            decided,
            pages: decided,
            page_bytes,
            unknown,
            ..HubYield::new(10_000, 3)
        };
        // (what it protects, what the hub led to) -> its worth, and where links wait
        let cases = [
            (
                "a hub marked before yields were kept is fetched, as then",
                None,
                HubWorth::Worth,
                None,
            ),
            (
                "a hub whose links are not all decided: links wait for them",
                Some((7, hub(2, 30_000, false))),
                HubWorth::Pending,
                Some(hub_links_key(7)),
            ),
            (
                "a table of contents that led to more than itself",
                Some((7, hub(3, 30_000, false))),
                HubWorth::Worth,
                None,
            ),
            (
                "an instruction table that led to less than itself is declined",
                Some((7, hub(3, 9_999, false))),
                HubWorth::Declined,
                None,
            ),
            (
                "a hub one of whose links redirected led to what is not known: fetched",
                Some((7, hub(3, 0, true))),
                HubWorth::Worth,
                None,
            ),
        ];
        for (what, yielded, worth, waits_on) in cases {
            assert_eq!(rule.worth(yielded), (worth, waits_on), "{what}");
        }
        let every = HubRule {
            min_links: 3,
            min_yield: 0.0,
        };
        assert!(!every.declines() && every.worth_fetching(&hub(3, 0, false)));
        assert!(rule.declines() && !rule.worth_fetching(&hub(3, 0, false)));
    }

    #[test]
    fn a_parked_link_learns_what_its_page_was_decided() {
        let declines = HubRule {
            min_links: 3,
            min_yield: 1.0,
        };
        let keeps = HubRule {
            min_links: 3,
            min_yield: 0.0,
        };
        let hub = |links_pending| WaitedFor::Hub { links_pending };
        let on = Some(hub_links_key(7));
        // (what it protects, the rule, the page a hub (record 7) or not, local, probe)
        let cases = [
            (
                "a page, no hub",
                declines,
                None,
                true,
                true,
                (WaitedFor::Page, None),
            ),
            (
                "a hub whose worth is to be known: a probed link waits for its links",
                declines,
                Some(7),
                true,
                true,
                (hub(true), on),
            ),
            (
                "... an unprobed one learns it is a hub all the same (its links waited on)",
                declines,
                Some(7),
                true,
                false,
                (hub(true), on),
            ),
            (
                "every hub fetched again: nothing to wait for",
                keeps,
                Some(7),
                true,
                true,
                (hub(false), None),
            ),
            (
                "a shared job's worker cannot know what another's hub led to: it probes",
                declines,
                Some(7),
                false,
                true,
                (WaitedFor::HubLinks { worth: false }, None),
            ),
        ];
        for (what, rule, page, local, probe, want) in cases {
            assert_eq!(rule.page_decided(page, local, probe), want, "{what}");
        }
    }

    #[test]
    fn a_hub_is_credited_with_what_its_links_turned_out_to_be() {
        let rule = HubRule {
            min_links: 2,
            min_yield: 1.0,
        };
        // Hub 7 of 10 kB queued three links, one decided already; hub 8 is complete.
        let stored = |seq: u64| -> Result<Option<HubYield>, ()> {
            Ok(match seq {
                7 => Some(HubYield {
                    decided: 1,
                    ..HubYield::new(10_000, 3)
                }),
                8 => Some(HubYield {
                    decided: 2,
                    ..HubYield::new(10_000, 2)
                }),
                _ => None,
            })
        };
        // (what it protects, what the decision decided) -> hubs completed, hub 7's pages
        let cases = [
            (
                "two new pages that outweigh the hub: complete and worth fetching again",
                vec![(0, 7, Credit::New(6_000)), (1, 7, Credit::New(6_000))],
                vec![(1, 7, true)],
                2,
            ),
            (
                "a table of contents that led to less than itself: declined",
                vec![(0, 7, Credit::New(2_000)), (1, 7, Credit::Other)],
                vec![(1, 7, false)],
                1,
            ),
            (
                "a redirect: what it led to is not known, worth fetching",
                vec![(0, 7, Credit::Redirect), (1, 7, Credit::Other)],
                vec![(1, 7, true)],
                0,
            ),
            (
                "one link of three decided: not complete yet",
                vec![(0, 7, Credit::New(50_000))],
                vec![],
                1,
            ),
            (
                "a hub complete already, or never stored: credited no more",
                vec![(0, 8, Credit::New(50_000)), (1, 9, Credit::New(50_000))],
                vec![],
                0,
            ),
        ];
        for (what, decided, completed, pages) in cases {
            let mut yields = Vec::new();
            assert_eq!(
                rule.credit(&mut yields, decided, stored),
                Ok(completed),
                "{what}"
            );
            let seven = yields.iter().find(|(seq, _)| *seq == 7);
            assert_eq!(seven.map_or(0, |(_, y)| y.pages), pages, "{what}");
        }
        let off = HubRule::default();
        let decided = [(0, 7, Credit::New(1))];
        assert_eq!(off.credit(&mut Vec::new(), decided, stored), Ok(vec![]));
    }
}
