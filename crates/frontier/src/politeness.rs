//! Per-host politeness: connections, delays, `Crawl-delay`, back-off and parking. Pure: the
//! caller passes the time in, so the rules are tested without waiting.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The `[politeness]` section of a job configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolitenessConfig {
    /// Requests in flight to one host (`host:port`) at once.
    pub max_connections_per_host: u32,
    /// Minimum time between the end of one request to a host and the start of the next, in
    /// milliseconds. 0 is allowed (local tests, your own servers).
    pub per_host_delay_ms: u64,
    /// A robots.txt `Crawl-delay` longer than this is capped to it, in milliseconds.
    pub max_crawl_delay_ms: u64,
    /// Back-off after a 429, a 5xx or a transient error starts here and doubles per failure, in
    /// milliseconds ...
    pub backoff_initial_ms: u64,
    /// ... up to this, in milliseconds; a longer `Retry-After` is also capped to it.
    pub backoff_max_ms: u64,
    /// A host failing this many times in a row is parked: its queued URLs are recorded as
    /// errors instead of being retried forever.
    pub max_consecutive_failures: u32,
    /// All hosts together: requests per second, 0 for no global cap.
    pub global_requests_per_second: u32,
    /// Requests in flight to one server address at once, all its names together (an IPv4
    /// address, or an IPv6 /64: see [`crate::AddressKey`]); 0 for no limit. Unset: 4, or
    /// `max_connections_per_host` if more (an address is allowed what one name is).
    pub max_connections_per_address: Option<u32>,
    /// Minimum time between two requests to one server address (the start of one and the
    /// next, and the end of one and the start of the next), all its names together, in
    /// milliseconds; 0 for none. Unset: 250, or `per_host_delay_ms` if less.
    pub per_address_delay_ms: Option<u64>,
}

impl Default for PolitenessConfig {
    fn default() -> Self {
        PolitenessConfig {
            max_connections_per_host: 1,
            per_host_delay_ms: 1000,
            max_crawl_delay_ms: 30_000,
            backoff_initial_ms: 2_000,
            backoff_max_ms: 300_000,
            max_consecutive_failures: 5,
            global_requests_per_second: 0,
            max_connections_per_address: None,
            per_address_delay_ms: None,
        }
    }
}

/// `max_connections_per_address` when unset, unless one host is allowed more.
pub const ADDRESS_CONNECTIONS: u32 = 4;
/// `per_address_delay_ms` when unset, unless one host waits less.
pub const ADDRESS_DELAY_MS: u64 = 250;

impl PolitenessConfig {
    /// Requests in flight to one address at once (0: no limit): as set, or by default
    /// [`ADDRESS_CONNECTIONS`], or what one host is allowed if more.
    pub fn address_connections(&self) -> u32 {
        self.max_connections_per_address
            .unwrap_or(ADDRESS_CONNECTIONS.max(self.max_connections_per_host))
    }

    /// The delay between requests to one address: as set, or by default
    /// [`ADDRESS_DELAY_MS`], or what one host waits if less.
    pub fn address_delay(&self) -> Duration {
        let ms = self
            .per_address_delay_ms
            .unwrap_or(ADDRESS_DELAY_MS.min(self.per_host_delay_ms));
        Duration::from_millis(ms)
    }

    /// The back-off after `in_a_row` failures in a row (at least 1): `backoff_initial_ms`
    /// doubled per failure after the first, at most `backoff_max_ms`. A host's and an
    /// address's alike.
    pub fn backoff_after(&self, in_a_row: u32) -> Duration {
        let exp = in_a_row.saturating_sub(1).min(20);
        Duration::from_millis(self.backoff_initial_ms.saturating_mul(1 << exp))
            .min(Duration::from_millis(self.backoff_max_ms))
    }

    /// Whether requests are limited per server address at all (else names are not resolved
    /// ahead of their requests).
    pub fn limits_addresses(&self) -> bool {
        self.address_connections() > 0 || !self.address_delay().is_zero()
    }
}

/// How a request to a host ended, as far as politeness is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostOutcome {
    /// The host answered (any status but 429 and 503).
    Answered,
    /// 429 or 503, with the `Retry-After` if one was sent.
    Throttled {
        /// The server's `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// Connection refused or reset, timeout, DNS failure.
    Failed,
}

/// The politeness state of one host.
#[derive(Debug, Clone)]
pub struct HostPoliteness {
    /// Requests in flight.
    active: u32,
    /// No new request starts before this.
    not_before: Instant,
    /// The robots.txt `Crawl-delay`, capped.
    crawl_delay: Option<Duration>,
    /// Failures (throttling included) since the last answer.
    consecutive_failures: u32,
    /// Set once the host failed too often; nothing more is fetched from it.
    parked: bool,
}

impl HostPoliteness {
    /// A host seen for the first time at `now`.
    pub fn new(now: Instant) -> HostPoliteness {
        HostPoliteness {
            active: 0,
            not_before: now,
            crawl_delay: None,
            consecutive_failures: 0,
            parked: false,
        }
    }

    /// Applies a robots.txt `Crawl-delay` (capped by the configuration).
    pub fn set_crawl_delay(&mut self, delay: Option<Duration>, config: &PolitenessConfig) {
        self.crawl_delay = delay.map(|d| d.min(Duration::from_millis(config.max_crawl_delay_ms)));
    }

    /// When the next request may start: `None` while the host is parked or at its connection
    /// limit (it becomes ready when a request finishes).
    pub fn ready_at(&self, config: &PolitenessConfig) -> Option<Instant> {
        if self.parked || self.active >= config.max_connections_per_host.max(1) {
            None
        } else {
            Some(self.not_before)
        }
    }

    /// Whether a request may start at `now`.
    pub fn can_start(&self, now: Instant, config: &PolitenessConfig) -> bool {
        self.ready_at(config).is_some_and(|at| at <= now)
    }

    /// A request starts at `now`.
    pub fn start(&mut self, now: Instant, config: &PolitenessConfig) {
        self.active += 1;
        // With several connections per host, space the starts too.
        self.not_before = self.not_before.max(now + self.delay(config));
    }

    /// A request ended at `now`.
    pub fn finish(&mut self, now: Instant, outcome: HostOutcome, config: &PolitenessConfig) {
        self.active = self.active.saturating_sub(1);
        let wait = match outcome {
            HostOutcome::Answered => {
                self.consecutive_failures = 0;
                self.delay(config)
            }
            HostOutcome::Throttled { retry_after } => {
                self.consecutive_failures += 1;
                let backoff = self.backoff(config);
                let max = Duration::from_millis(config.backoff_max_ms);
                retry_after.map_or(backoff, |r| r.min(max).max(self.delay(config)))
            }
            HostOutcome::Failed => {
                self.consecutive_failures += 1;
                self.backoff(config)
            }
        };
        if self.consecutive_failures >= config.max_consecutive_failures.max(1) {
            self.parked = true;
        }
        self.not_before = self.not_before.max(now + wait);
    }

    /// Whether the host has been given up on.
    pub fn is_parked(&self) -> bool {
        self.parked
    }

    /// Requests in flight.
    pub fn active(&self) -> u32 {
        self.active
    }

    /// Failures since the last answer.
    pub fn consecutive_failures(&self) -> u32 {
        self.consecutive_failures
    }

    fn delay(&self, config: &PolitenessConfig) -> Duration {
        let base = Duration::from_millis(config.per_host_delay_ms);
        self.crawl_delay.map_or(base, |d| d.max(base))
    }

    fn backoff(&self, config: &PolitenessConfig) -> Duration {
        config
            .backoff_after(self.consecutive_failures)
            .max(self.delay(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn one_connection_and_a_delay() {
        let config = PolitenessConfig::default();
        let t0 = Instant::now();
        let mut host = HostPoliteness::new(t0);
        assert!(host.can_start(t0, &config));
        host.start(t0, &config);
        assert_eq!(host.ready_at(&config), None, "one connection per host");
        host.finish(t0 + ms(200), HostOutcome::Answered, &config);
        assert_eq!(host.ready_at(&config), Some(t0 + ms(1200)));
        assert!(!host.can_start(t0 + ms(1199), &config));
        assert!(host.can_start(t0 + ms(1200), &config));
    }

    #[test]
    fn crawl_delay_is_honoured_and_capped() {
        let config = PolitenessConfig {
            per_host_delay_ms: 0,
            ..PolitenessConfig::default()
        };
        let t0 = Instant::now();
        let mut host = HostPoliteness::new(t0);
        host.set_crawl_delay(Some(Duration::from_secs(5)), &config);
        host.start(t0, &config);
        host.finish(t0, HostOutcome::Answered, &config);
        assert_eq!(host.ready_at(&config), Some(t0 + Duration::from_secs(5)));
        host.set_crawl_delay(Some(Duration::from_secs(3600)), &config);
        host.start(t0 + Duration::from_secs(5), &config);
        host.finish(t0 + Duration::from_secs(5), HostOutcome::Answered, &config);
        assert_eq!(host.ready_at(&config), Some(t0 + Duration::from_secs(35)));
    }

    #[test]
    fn throttling_backs_off_with_retry_after_and_parks() {
        let config = PolitenessConfig {
            per_host_delay_ms: 0,
            ..PolitenessConfig::default()
        };
        let t0 = Instant::now();
        let mut host = HostPoliteness::new(t0);
        host.start(t0, &config);
        host.finish(
            t0,
            HostOutcome::Throttled {
                retry_after: Some(Duration::from_secs(7)),
            },
            &config,
        );
        assert_eq!(host.ready_at(&config), Some(t0 + Duration::from_secs(7)));
        let t1 = t0 + Duration::from_secs(7);
        host.start(t1, &config);
        host.finish(t1, HostOutcome::Throttled { retry_after: None }, &config);
        // Second failure in a row: 2 s doubled.
        assert_eq!(host.ready_at(&config), Some(t1 + Duration::from_secs(4)));
        let mut t = t1 + Duration::from_secs(4);
        for _ in 0..3 {
            host.start(t, &config);
            host.finish(t, HostOutcome::Failed, &config);
            t += Duration::from_secs(600);
        }
        assert!(host.is_parked());
        assert_eq!(host.ready_at(&config), None);
    }

    #[test]
    fn an_answer_resets_the_failures() {
        let config = PolitenessConfig {
            per_host_delay_ms: 0,
            ..PolitenessConfig::default()
        };
        let t0 = Instant::now();
        let mut host = HostPoliteness::new(t0);
        for _ in 0..4 {
            host.start(t0, &config);
            host.finish(t0, HostOutcome::Failed, &config);
        }
        host.start(t0, &config);
        host.finish(t0, HostOutcome::Answered, &config);
        assert_eq!(host.consecutive_failures(), 0);
        assert!(!host.is_parked());
    }
}
