//! Which URLs a job may fetch: host scope, include/exclude patterns, depth, and private
//! addresses.

use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;

use regex::Regex;
use serde::{Deserialize, Serialize};
use url::Host;

use crate::canonical::CanonicalUrl;
use crate::seeds::Seed;

/// Which hosts a job may leave its seeds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostScope {
    /// Only the seeds' hosts (host and port as in the seed URLs).
    #[default]
    SeedHosts,
    /// Any host under a seed's registrable domain (`www.example.co.uk` and
    /// `news.example.co.uk` share `example.co.uk`, by the public suffix list).
    SeedDomains,
    /// Any host.
    Any,
}

/// The `[scope]` section of a job configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScopeConfig {
    /// Which hosts may be crawled: `seed-hosts`, `seed-domains` or `any`.
    pub hosts: HostScope,
    /// Regular expressions; when any is given, a URL must match at least one.
    pub include: Vec<String>,
    /// Regular expressions; a URL matching any is out of scope.
    pub exclude: Vec<String>,
    /// Links followed from a seed (a seed has depth 0); `None` for no limit.
    pub max_depth: Option<u32>,
    /// Fetch loopback, private, link-local and unique-local addresses even when no seed is on
    /// them. Off by default, so a public page cannot steer the crawler into a private network.
    pub allow_private: bool,
}

impl Default for ScopeConfig {
    fn default() -> Self {
        ScopeConfig {
            hosts: HostScope::SeedHosts,
            include: Vec::new(),
            exclude: Vec::new(),
            max_depth: None,
            allow_private: false,
        }
    }
}

/// A pattern in the scope configuration that is not a valid regular expression.
#[derive(Debug)]
pub struct ScopeError {
    /// `include` or `exclude`.
    pub list: &'static str,
    /// The pattern as written.
    pub pattern: String,
    /// What the regex parser said.
    pub reason: String,
}

impl fmt::Display for ScopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scope.{} pattern {:?} is invalid: {}",
            self.list, self.pattern, self.reason
        )
    }
}

impl std::error::Error for ScopeError {}

/// Why a URL is not crawled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutOfScope {
    /// The host is not a seed host (or under a seed domain).
    Host,
    /// The URL matches an `exclude` pattern.
    Excluded(String),
    /// `include` patterns are set and the URL matches none.
    NotIncluded,
    /// The URL is deeper than `max_depth`.
    TooDeep,
    /// The host is a private or loopback address no seed is on.
    PrivateAddress,
}

impl fmt::Display for OutOfScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutOfScope::Host => f.write_str("host not in scope"),
            OutOfScope::Excluded(p) => write!(f, "matches exclude pattern {p:?}"),
            OutOfScope::NotIncluded => f.write_str("matches no include pattern"),
            OutOfScope::TooDeep => f.write_str("deeper than max_depth"),
            OutOfScope::PrivateAddress => f.write_str("private or loopback address"),
        }
    }
}

/// A job's scope, compiled.
#[derive(Debug, Clone)]
pub struct Scope {
    hosts: HostScope,
    seed_authorities: BTreeSet<String>,
    seed_domains: BTreeSet<String>,
    include: Vec<Regex>,
    exclude: Vec<Regex>,
    max_depth: Option<u32>,
    addresses: AddressPolicy,
}

impl Scope {
    /// Compiles the configuration for a job with these seeds.
    pub fn new(config: &ScopeConfig, seeds: &[Seed]) -> Result<Scope, ScopeError> {
        let compile = |list: &'static str, patterns: &[String]| {
            patterns
                .iter()
                .map(|p| {
                    Regex::new(p).map_err(|e| ScopeError {
                        list,
                        pattern: p.clone(),
                        reason: e.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let seed_urls: Vec<&CanonicalUrl> = seeds.iter().map(|s| &s.url).collect();
        Ok(Scope {
            hosts: config.hosts,
            seed_authorities: seed_urls.iter().map(|u| u.authority()).collect(),
            seed_domains: seed_urls
                .iter()
                .filter_map(|u| u.as_url().host_str().map(registrable_domain))
                .collect(),
            include: compile("include", &config.include)?,
            exclude: compile("exclude", &config.exclude)?,
            max_depth: config.max_depth,
            addresses: AddressPolicy::new(config.allow_private, &seed_urls),
        })
    }

    /// Whether `url`, found at `depth` links from a seed, may be fetched.
    pub fn check(&self, url: &CanonicalUrl, depth: u32) -> Result<(), OutOfScope> {
        if self.max_depth.is_some_and(|max| depth > max) {
            return Err(OutOfScope::TooDeep);
        }
        let host = url.as_url().host_str().unwrap_or_default();
        let host_ok = match self.hosts {
            HostScope::SeedHosts => self.seed_authorities.contains(&url.authority()),
            HostScope::SeedDomains => self.seed_domains.contains(&registrable_domain(host)),
            HostScope::Any => true,
        };
        if !host_ok {
            return Err(OutOfScope::Host);
        }
        if let Some(host) = url.as_url().host()
            && !self.addresses.allows_host(&host)
        {
            return Err(OutOfScope::PrivateAddress);
        }
        if let Some(re) = self.exclude.iter().find(|re| re.is_match(url.as_str())) {
            return Err(OutOfScope::Excluded(re.as_str().to_string()));
        }
        if !self.include.is_empty() && !self.include.iter().any(|re| re.is_match(url.as_str())) {
            return Err(OutOfScope::NotIncluded);
        }
        Ok(())
    }

    /// The address policy, for the fetcher to apply to resolved addresses.
    pub fn addresses(&self) -> &AddressPolicy {
        &self.addresses
    }
}

/// The registrable domain of a host (`a.b.example.co.uk` -> `example.co.uk`); an IP address
/// or a name without a known suffix is its own domain.
pub fn registrable_domain(host: &str) -> String {
    if host.parse::<IpAddr>().is_ok() || host.starts_with('[') {
        return host.to_string();
    }
    match psl::domain_str(host) {
        Some(domain) => domain.to_string(),
        None => host.to_string(),
    }
}

/// Which non-public addresses may be connected to: those the seeds are on, or all of them
/// when the configuration allows private addresses.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    allow_all: bool,
    seed_ips: BTreeSet<IpAddr>,
    seed_names: BTreeSet<String>,
}

impl AddressPolicy {
    /// A policy for a job with these seeds.
    pub fn new(allow_private: bool, seeds: &[&CanonicalUrl]) -> AddressPolicy {
        let mut policy = AddressPolicy {
            allow_all: allow_private,
            ..AddressPolicy::default()
        };
        for url in seeds {
            match url.as_url().host() {
                Some(Host::Ipv4(ip)) => {
                    policy.seed_ips.insert(IpAddr::V4(ip));
                }
                Some(Host::Ipv6(ip)) => {
                    policy.seed_ips.insert(IpAddr::V6(ip));
                }
                Some(Host::Domain(name)) => {
                    policy.seed_names.insert(name.to_string());
                }
                None => {}
            }
        }
        policy
    }

    /// Whether a URL host may be fetched (before name resolution).
    pub fn allows_host(&self, host: &Host<&str>) -> bool {
        match host {
            Host::Ipv4(ip) => self.allows_ip(IpAddr::V4(*ip)),
            Host::Ipv6(ip) => self.allows_ip(IpAddr::V6(*ip)),
            Host::Domain(name) => {
                let local = *name == "localhost" || name.ends_with(".localhost");
                !local || self.allow_all || self.seed_names.contains(*name)
            }
        }
    }

    /// Whether a resolved address `ip` may be connected to for a URL on `host`.
    pub fn allows_resolved(&self, host: &str, ip: IpAddr) -> bool {
        self.allows_ip(ip) || self.seed_names.contains(host)
    }

    /// Whether `ip` may be connected to.
    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        self.allow_all || !is_non_public(ip) || self.seed_ips.contains(&ip)
    }
}

/// Loopback, private, link-local, unique-local, shared, unspecified and broadcast addresses.
pub fn is_non_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || (o[0] == 100 && (o[1] & 0xC0) == 64) // 100.64.0.0/10, carrier-grade NAT
                || o[0] == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_non_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xFE00) == 0xFC00 // fc00::/7 unique local
                || (first & 0xFFC0) == 0xFE80 // fe80::/10 link local
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scope(config: ScopeConfig, seeds: &str) -> Scope {
        let seeds = crate::seeds::parse_seeds(seeds, Path::new("seeds")).unwrap();
        Scope::new(&config, &seeds).unwrap()
    }

    fn url(s: &str) -> CanonicalUrl {
        CanonicalUrl::parse(s).unwrap()
    }

    #[test]
    fn seed_hosts_only_by_default() {
        let s = scope(
            ScopeConfig::default(),
            "http://www.example.com/\nhttp://127.0.0.1:8080/\n",
        );
        assert_eq!(s.check(&url("http://www.example.com/a"), 3), Ok(()));
        assert_eq!(
            s.check(&url("http://news.example.com/a"), 1),
            Err(OutOfScope::Host)
        );
        assert_eq!(s.check(&url("http://127.0.0.1:8080/x"), 1), Ok(()));
        assert_eq!(
            s.check(&url("http://127.0.0.1:8081/x"), 1),
            Err(OutOfScope::Host)
        );
    }

    #[test]
    fn seed_domains_use_the_public_suffix_list() {
        let config = ScopeConfig {
            hosts: HostScope::SeedDomains,
            ..ScopeConfig::default()
        };
        let s = scope(config, "http://www.example.co.uk/\n");
        assert_eq!(s.check(&url("http://news.example.co.uk/"), 0), Ok(()));
        assert_eq!(
            s.check(&url("http://other.co.uk/"), 0),
            Err(OutOfScope::Host)
        );
        assert_eq!(registrable_domain("a.b.example.co.uk"), "example.co.uk");
    }

    #[test]
    fn include_exclude_depth() {
        let config = ScopeConfig {
            hosts: HostScope::Any,
            include: vec!["/docs/".into()],
            exclude: vec![r"\.pdf$".into()],
            max_depth: Some(2),
            ..ScopeConfig::default()
        };
        let s = scope(config, "http://example.com/docs/\n");
        assert_eq!(s.check(&url("http://other.org/docs/a"), 2), Ok(()));
        assert_eq!(
            s.check(&url("http://other.org/docs/a"), 3),
            Err(OutOfScope::TooDeep)
        );
        assert_eq!(
            s.check(&url("http://other.org/blog/a"), 1),
            Err(OutOfScope::NotIncluded)
        );
        assert_eq!(
            s.check(&url("http://other.org/docs/a.pdf"), 1),
            Err(OutOfScope::Excluded(r"\.pdf$".into()))
        );
    }

    #[test]
    fn bad_pattern_is_named() {
        let config = ScopeConfig {
            exclude: vec!["(".into()],
            ..ScopeConfig::default()
        };
        let seeds = crate::seeds::parse_seeds("http://a.example/", Path::new("s")).unwrap();
        let err = Scope::new(&config, &seeds).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("scope.exclude pattern \"(\" is invalid"),
            "{err}"
        );
    }

    #[test]
    fn private_addresses_need_a_seed_or_permission() {
        let any = ScopeConfig {
            hosts: HostScope::Any,
            ..ScopeConfig::default()
        };
        let s = scope(any.clone(), "http://public.example/\n");
        for private in [
            "http://127.0.0.1/",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://localhost:8080/",
            "http://[::ffff:10.0.0.1]/",
        ] {
            assert_eq!(
                s.check(&url(private), 1),
                Err(OutOfScope::PrivateAddress),
                "{private}"
            );
        }
        assert_eq!(s.check(&url("http://93.184.216.34/"), 1), Ok(()));
        // A seed on loopback allows that address, not the whole private range.
        let s = scope(any.clone(), "http://127.0.0.1:9000/\n");
        assert_eq!(s.check(&url("http://127.0.0.1:9001/"), 1), Ok(()));
        assert_eq!(
            s.check(&url("http://10.0.0.1/"), 1),
            Err(OutOfScope::PrivateAddress)
        );
        // A public name that resolves to a private address is refused at connect time.
        let s = scope(any.clone(), "http://public.example/\n");
        assert!(
            !s.addresses()
                .allows_resolved("evil.example", "10.0.0.1".parse().unwrap())
        );
        assert!(
            s.addresses()
                .allows_resolved("evil.example", "93.184.216.34".parse().unwrap())
        );
        let allow = ScopeConfig {
            allow_private: true,
            ..any
        };
        let s = scope(allow, "http://public.example/\n");
        assert_eq!(s.check(&url("http://10.0.0.1/"), 1), Ok(()));
        assert!(
            s.addresses()
                .allows_resolved("evil.example", "10.0.0.1".parse().unwrap())
        );
    }
}
