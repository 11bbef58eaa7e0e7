//! Politeness per server address: the names a crawl meets may share one machine (shared
//! hosting puts hundreds on one address), so beside each name's budget
//! ([`crate::HostPoliteness`]) the address has one of its own, and a request starts only when
//! both allow it. Pure, as the per-name rules: the caller passes the time in.
//!
//! The address of a name is its first resolved address; an IPv6 address counts as its /64
//! (one customer's network, as providers assign them).

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::time::{Duration, Instant};

use crate::politeness::{HostOutcome, PolitenessConfig};

/// Names failing at once (with no answer from the address between) that make the address,
/// not each name, back off: the server is overloaded, not one site on it.
pub const FAILING_NAMES: usize = 2;

/// The unit of per-address politeness: an IPv4 address, or an IPv6 address's /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddressKey {
    /// An IPv4 address (an IPv4-mapped IPv6 address counts as its IPv4 address).
    V4(std::net::Ipv4Addr),
    /// The first 64 bits of an IPv6 address.
    V6(u64),
}

impl AddressKey {
    /// The key `ip` is polite under.
    pub fn of(ip: IpAddr) -> AddressKey {
        match ip {
            IpAddr::V4(v4) => AddressKey::V4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddressKey::V4(v4),
                None => AddressKey::V6((u128::from(v6) >> 64) as u64),
            },
        }
    }
}

impl fmt::Display for AddressKey {
    /// `203.0.113.5`, or `2001:db8:1:2::/64`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddressKey::V4(v4) => write!(f, "{v4}"),
            AddressKey::V6(prefix) => {
                write!(f, "{}/64", Ipv6Addr::from(u128::from(*prefix) << 64))
            }
        }
    }
}

/// The politeness state of one address.
#[derive(Debug, Clone)]
pub struct AddressPoliteness {
    /// Requests in flight, all names.
    active: u32,
    /// No new request starts before this.
    not_before: Instant,
    /// Names (by the caller's id) that failed since the address last answered.
    failing: BTreeSet<u64>,
    /// Back-offs of the address in a row (each doubles the wait).
    backoffs_in_a_row: u32,
    /// Back-offs of the address in this run.
    backoffs: u64,
}

impl AddressPoliteness {
    /// An address seen for the first time at `now`.
    pub fn new(now: Instant) -> AddressPoliteness {
        AddressPoliteness {
            active: 0,
            not_before: now,
            failing: BTreeSet::new(),
            backoffs_in_a_row: 0,
            backoffs: 0,
        }
    }

    /// When the next request may start: `None` while the address is at its connection limit
    /// (it becomes ready when a request finishes).
    pub fn ready_at(&self, config: &PolitenessConfig) -> Option<Instant> {
        let limit = config.address_connections();
        if limit > 0 && self.active >= limit {
            None
        } else {
            Some(self.not_before)
        }
    }

    /// A request to a name on this address starts at `now`.
    pub fn start(&mut self, now: Instant, config: &PolitenessConfig) {
        self.active += 1;
        self.not_before = self.not_before.max(now + delay(config));
    }

    /// A request of name `name` ended at `now`. Returns whether the address now backs off
    /// (the second name failing with no answer between).
    pub fn finish(
        &mut self,
        now: Instant,
        name: u64,
        outcome: HostOutcome,
        config: &PolitenessConfig,
    ) -> bool {
        self.active = self.active.saturating_sub(1);
        let (wait, backs_off) = match outcome {
            HostOutcome::Answered => {
                self.failing.clear();
                self.backoffs_in_a_row = 0;
                (delay(config), false)
            }
            HostOutcome::Throttled { .. } | HostOutcome::Failed => {
                let retry_after = match outcome {
                    HostOutcome::Throttled { retry_after } => retry_after,
                    _ => None,
                };
                self.failing.insert(name);
                if self.failing.len() >= FAILING_NAMES {
                    self.failing.clear();
                    self.backoffs_in_a_row += 1;
                    self.backoffs += 1;
                    let max = Duration::from_millis(config.backoff_max_ms);
                    let backoff = config.backoff_after(self.backoffs_in_a_row);
                    let wait = retry_after.map_or(backoff, |r| r.min(max).max(backoff));
                    (wait.max(delay(config)), true)
                } else {
                    (delay(config), false)
                }
            }
        };
        self.not_before = self.not_before.max(now + wait);
        backs_off
    }

    /// Requests in flight.
    pub fn active(&self) -> u32 {
        self.active
    }

    /// Times the address backed off in this run.
    pub fn backoffs(&self) -> u64 {
        self.backoffs
    }
}

fn delay(config: &PolitenessConfig) -> Duration {
    config.address_delay()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn config(connections: u32, delay_ms: u64) -> PolitenessConfig {
        PolitenessConfig {
            max_connections_per_address: Some(connections),
            per_address_delay_ms: Some(delay_ms),
            backoff_initial_ms: 1_000,
            backoff_max_ms: 8_000,
            ..PolitenessConfig::default()
        }
    }

    #[test]
    fn keys() {
        let cases: [(&str, &str); 5] = [
            ("203.0.113.5", "203.0.113.5"),
            ("::ffff:203.0.113.5", "203.0.113.5"),
            ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
            ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
            ("::1", "::/64"),
        ];
        for (ip, key) in cases {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(AddressKey::of(ip).to_string(), key, "{ip}");
        }
        let a = AddressKey::of("2001:db8:1:2::1".parse().unwrap());
        let b = AddressKey::of("2001:db8:1:3::1".parse().unwrap());
        assert_ne!(a, b, "another /64 is another address");
    }

    #[test]
    fn connections_and_spacing_across_names() {
        let config = config(2, 100);
        let t0 = Instant::now();
        let mut address = AddressPoliteness::new(t0);
        assert_eq!(address.ready_at(&config), Some(t0));
        address.start(t0, &config);
        assert_eq!(
            address.ready_at(&config),
            Some(t0 + ms(100)),
            "starts spaced"
        );
        address.start(t0 + ms(100), &config);
        assert_eq!(address.ready_at(&config), None, "two connections at most");
        address.finish(t0 + ms(150), 1, HostOutcome::Answered, &config);
        assert_eq!(address.ready_at(&config), Some(t0 + ms(250)));
        assert_eq!(address.active(), 1);
    }

    #[test]
    fn unset_limits_follow_the_host_limits_when_looser() {
        // Host connections and delay, address ones as set, the address ones that apply.
        type Case = (u32, u64, Option<u32>, Option<u64>, u32, u64);
        let cases: [Case; 5] = [
            (1, 1_000, None, None, 4, 250),
            (16, 0, None, None, 16, 0),
            (2, 100, None, None, 4, 100),
            (16, 0, Some(2), Some(500), 2, 500),
            (1, 1_000, Some(0), Some(0), 0, 0),
        ];
        for (host_connections, host_delay, connections, delay_ms, want_c, want_d) in cases {
            let config = PolitenessConfig {
                max_connections_per_host: host_connections,
                per_host_delay_ms: host_delay,
                max_connections_per_address: connections,
                per_address_delay_ms: delay_ms,
                ..PolitenessConfig::default()
            };
            assert_eq!(
                config.address_connections(),
                want_c,
                "{host_connections} {connections:?}"
            );
            assert_eq!(
                config.address_delay(),
                ms(want_d),
                "{host_delay} {delay_ms:?}"
            );
            assert_eq!(config.limits_addresses(), want_c > 0 || want_d > 0);
        }
    }

    #[test]
    fn zero_means_no_limit() {
        let config = config(0, 0);
        let t0 = Instant::now();
        let mut address = AddressPoliteness::new(t0);
        for _ in 0..1_000 {
            address.start(t0, &config);
        }
        assert_eq!(address.ready_at(&config), Some(t0));
    }

    /// Each case: the outcomes in turn (name, outcome), then whether the address backed off
    /// at the last one and how long it then waits from that instant.
    #[test]
    fn the_address_backs_off_when_several_names_fail_at_once() {
        let throttled = |s: Option<u64>| HostOutcome::Throttled {
            retry_after: s.map(Duration::from_secs),
        };
        let ok = HostOutcome::Answered;
        let failed = HostOutcome::Failed;
        type Case = (&'static str, Vec<(u64, HostOutcome)>, bool, u64);
        let cases: Vec<Case> = vec![
            (
                "one name failing: that name's business",
                vec![(1, failed)],
                false,
                100,
            ),
            (
                "the same name twice",
                vec![(1, failed), (1, failed)],
                false,
                100,
            ),
            (
                "two names",
                vec![(1, failed), (2, throttled(None))],
                true,
                1_000,
            ),
            (
                "an answer between clears",
                vec![(1, failed), (3, ok), (2, failed)],
                false,
                100,
            ),
            (
                "twice in a row doubles",
                vec![(1, failed), (2, failed), (3, failed), (4, failed)],
                true,
                2_000,
            ),
            (
                "Retry-After, when longer",
                vec![(1, failed), (2, throttled(Some(5)))],
                true,
                5_000,
            ),
            (
                "Retry-After capped",
                vec![(1, failed), (2, throttled(Some(3_600)))],
                true,
                8_000,
            ),
            (
                "an answer resets the doubling",
                vec![(1, failed), (2, failed), (3, ok), (1, failed), (2, failed)],
                true,
                1_000,
            ),
        ];
        let config = config(0, 100);
        for (name, outcomes, backs_off, wait) in cases {
            let t0 = Instant::now();
            let mut address = AddressPoliteness::new(t0);
            let mut last = false;
            for (n, outcome) in &outcomes {
                address.start(t0, &config);
                last = address.finish(t0, *n, *outcome, &config);
            }
            assert_eq!(last, backs_off, "{name}");
            assert_eq!(address.ready_at(&config), Some(t0 + ms(wait)), "{name}");
        }
    }
}
