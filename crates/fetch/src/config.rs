//! The `[fetch]` section of a job configuration.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// How pages are fetched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FetchConfig {
    /// The `User-Agent` header, also the agent name matched in robots.txt groups (the part
    /// before the first `/`).
    pub user_agent: String,
    /// Time allowed to open a connection, in milliseconds.
    pub connect_timeout_ms: u64,
    /// Time allowed for a whole request, body included, in milliseconds.
    pub total_timeout_ms: u64,
    /// Bytes of body read from the wire; a longer body is cut there and the record says
    /// `truncated`.
    pub max_body_bytes: u64,
    /// Redirect hops followed from one URL before the chain is recorded as an error.
    pub max_redirects: u8,
    /// Retries of a transient failure (connection error, timeout, 5xx, 429) before the URL is
    /// recorded as an error. Retries wait for the host's back-off.
    pub max_retries: u8,
    /// robots.txt bodies longer than this are cut (RFC 9309 asks for at least 500 KiB).
    pub max_robots_bytes: u64,
    /// How long a robots.txt answer is trusted before it is fetched again, in seconds.
    pub robots_ttl_secs: u64,
    /// A body longer than this is large: at most `max_large_bodies` of them are read and
    /// analysed at once, the others wait, so memory follows the configuration, not the web.
    pub large_body_bytes: u64,
    /// Large bodies in flight at once (0: no limit).
    pub max_large_bodies: u32,
    /// The longest a name's resolved addresses are used before it is resolved again, in
    /// seconds: an answer is kept for its records' TTL as the name servers give it (at least
    /// 5 s), and this long when they cannot say (a name from `/etc/hosts`).
    pub dns_ttl_secs: u64,
    /// Name servers asked for the TTL of a name's records (the system resolver gives the
    /// addresses but not their TTL); `/etc/resolv.conf`'s when empty.
    pub name_servers: Vec<std::net::SocketAddr>,
    /// Names resolved to these addresses rather than by the system resolver (as curl's
    /// `--resolve`): a staging server under its public names, a shared host tried locally.
    /// The job's address policy applies to them as to any answer.
    pub hosts: BTreeMap<String, IpAddr>,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: concat!(
                "nearcrawl/",
                env!("CARGO_PKG_VERSION"),
                " (+https://github.com/nearcrawl/nearcrawl)"
            )
            .to_string(),
            connect_timeout_ms: 10_000,
            total_timeout_ms: 30_000,
            max_body_bytes: 8 << 20,
            max_redirects: 10,
            max_retries: 2,
            max_robots_bytes: 512 << 10,
            robots_ttl_secs: 24 * 3600,
            large_body_bytes: 256 << 10,
            max_large_bodies: 2,
            dns_ttl_secs: 300,
            name_servers: Vec::new(),
            hosts: BTreeMap::new(),
        }
    }
}

impl FetchConfig {
    /// The product token matched against robots.txt `User-agent` lines.
    pub fn robots_agent(&self) -> &str {
        self.user_agent
            .split(['/', ' '])
            .next()
            .unwrap_or("nearcrawl")
    }
}
