//! A job's shared scheduling settings ([`Settings`]), fixed by the worker that creates the
//! job, as the job's hash keeps them and as the host script takes them.

/// A job's shared scheduling settings, fixed by the worker that creates the job; the workers
/// that join it use the job's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How long a leased URL stays leased (ms); a worker that has not finished it by then is
    /// taken for dead and the URL goes back to its queue.
    pub lease_ms: u64,
    /// How long a picked host is hidden from other workers' picks (ms).
    pub claim_ms: u64,
    /// Requests in flight per host, across all workers.
    pub max_connections_per_host: u32,
    /// Between two requests to one host (ms), across all workers.
    pub per_host_delay_ms: u64,
    /// The longest robots.txt Crawl-delay obeyed (ms).
    pub max_crawl_delay_ms: u64,
    /// The first back-off after a failure (ms), doubled per failure in a row.
    pub backoff_initial_ms: u64,
    /// The longest back-off (ms).
    pub backoff_max_ms: u64,
    /// Failures in a row after which a host is given up.
    pub max_consecutive_failures: u32,
    /// Fetch robots.txt before a host's pages and obey it.
    pub obey_robots: bool,
    /// How long one worker has to fetch a host's robots.txt before another may (ms).
    pub robots_lease_ms: u64,
    /// How long robots.txt rules hold once read (ms).
    pub robots_ttl_ms: u64,
    /// Pages fetched from one host, across all workers (0: no limit): once the host's pages
    /// fetched and in flight reach it, its queue is handed out to be recorded, not fetched
    /// ([`Next::Spent`](super::Next::Spent)).
    pub max_pages_per_host: u64,
    /// Hosts are handed out by the priority of their next URL (a focused crawl: the best link
    /// first, across hosts), not by how long they have waited.
    pub by_priority: bool,
    /// Requests in flight to one server address at once, all its names together, across all
    /// workers (0: no limit).
    pub max_connections_per_address: u32,
    /// Between two requests to one server address (ms), across all workers.
    pub per_address_delay_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            lease_ms: 120_000,
            claim_ms: 50,
            max_connections_per_host: 1,
            per_host_delay_ms: 1_000,
            max_crawl_delay_ms: 30_000,
            backoff_initial_ms: 2_000,
            backoff_max_ms: 300_000,
            max_consecutive_failures: 5,
            obey_robots: true,
            robots_lease_ms: 60_000,
            robots_ttl_ms: 86_400_000,
            max_pages_per_host: 0,
            by_priority: false,
            max_connections_per_address: 0,
            per_address_delay_ms: 0,
        }
    }
}

impl Settings {
    pub(super) fn pairs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("lease_ms", self.lease_ms.to_string()),
            ("claim_ms", self.claim_ms.to_string()),
            (
                "max_connections_per_host",
                self.max_connections_per_host.to_string(),
            ),
            ("per_host_delay_ms", self.per_host_delay_ms.to_string()),
            ("max_crawl_delay_ms", self.max_crawl_delay_ms.to_string()),
            ("backoff_initial_ms", self.backoff_initial_ms.to_string()),
            ("backoff_max_ms", self.backoff_max_ms.to_string()),
            (
                "max_consecutive_failures",
                self.max_consecutive_failures.to_string(),
            ),
            ("obey_robots", u8::from(self.obey_robots).to_string()),
            ("robots_lease_ms", self.robots_lease_ms.to_string()),
            ("robots_ttl_ms", self.robots_ttl_ms.to_string()),
            ("max_pages_per_host", self.max_pages_per_host.to_string()),
            ("by_priority", u8::from(self.by_priority).to_string()),
            (
                "max_connections_per_address",
                self.max_connections_per_address.to_string(),
            ),
            (
                "per_address_delay_ms",
                self.per_address_delay_ms.to_string(),
            ),
        ]
    }

    /// Reads the pairs [`Settings::pairs`] wrote; a name missing or unreadable is an error.
    pub(super) fn from_pairs(pairs: &[(String, String)]) -> Result<Settings, String> {
        let get = |name: &str| -> Result<u64, String> {
            let value = pairs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("setting {name} missing"))?;
            value
                .parse()
                .map_err(|_| format!("setting {name} = {value:?} is not a number"))
        };
        let small = |name: &str| -> Result<u32, String> {
            u32::try_from(get(name)?).map_err(|_| format!("setting {name} is too large"))
        };
        Ok(Settings {
            lease_ms: get("lease_ms")?,
            claim_ms: get("claim_ms")?,
            max_connections_per_host: small("max_connections_per_host")?,
            per_host_delay_ms: get("per_host_delay_ms")?,
            max_crawl_delay_ms: get("max_crawl_delay_ms")?,
            backoff_initial_ms: get("backoff_initial_ms")?,
            backoff_max_ms: get("backoff_max_ms")?,
            max_consecutive_failures: small("max_consecutive_failures")?,
            obey_robots: get("obey_robots")? == 1,
            robots_lease_ms: get("robots_lease_ms")?,
            robots_ttl_ms: get("robots_ttl_ms")?,
            // A job created before the setting existed has no limit.
            max_pages_per_host: get("max_pages_per_host").unwrap_or(0),
            by_priority: get("by_priority").unwrap_or(0) == 1,
            // A job created before politeness per address has none.
            max_connections_per_address: small("max_connections_per_address").unwrap_or(0),
            per_address_delay_ms: get("per_address_delay_ms").unwrap_or(0),
        })
    }

    /// The first arguments of every host script (lua/host.lua's `S`).
    pub(super) fn host_args(&self) -> [String; 11] {
        [
            self.lease_ms.to_string(),
            self.max_connections_per_host.to_string(),
            self.per_host_delay_ms.to_string(),
            self.max_crawl_delay_ms.to_string(),
            self.backoff_initial_ms.to_string(),
            self.backoff_max_ms.to_string(),
            self.max_consecutive_failures.to_string(),
            u8::from(self.obey_robots).to_string(),
            self.robots_lease_ms.to_string(),
            self.robots_ttl_ms.to_string(),
            self.max_pages_per_host.to_string(),
        ]
    }
}
